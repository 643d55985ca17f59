/* Apple's <unistd.h> for scripts/darwin-syntax (README.md): glibc's, plus the
 * two exec forms only Darwin has. */
#include_next <unistd.h>

#ifndef CF_STUB_UNISTD_H
#define CF_STUB_UNISTD_H

int exect(const char *, char *const *, char *const *);
int execvP(const char *__file, const char *__searchpath, char *const *__argv);

#endif
