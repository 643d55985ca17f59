/* Apple's <stdlib.h> for scripts/darwin-syntax (README.md): glibc's, plus
 * getprogname (BSD; glibc has program_invocation_name instead). */
#include_next <stdlib.h>

#ifndef CF_STUB_STDLIB_H
#define CF_STUB_STDLIB_H

const char *getprogname(void);

#endif
