/* Stub of Apple's <mach-o/dyld.h> for scripts/darwin-syntax (README.md). */
#ifndef CF_STUB_MACHO_DYLD_H
#define CF_STUB_MACHO_DYLD_H

#include <stdint.h>

extern int _NSGetExecutablePath(char *buf, uint32_t *bufsize);

#endif
