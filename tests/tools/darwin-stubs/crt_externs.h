/* Stub of Apple's <crt_externs.h> for scripts/darwin-syntax (README.md). */
#ifndef CF_STUB_CRT_EXTERNS_H
#define CF_STUB_CRT_EXTERNS_H

extern char ***_NSGetEnviron(void);

#endif
