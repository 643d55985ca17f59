/* Apple's <spawn.h> for scripts/darwin-syntax (README.md): glibc's, plus the
 * Darwin-only flag the shim uses (exec in place, posix_spawn as execve). */
#include_next <spawn.h>

#ifndef POSIX_SPAWN_SETEXEC
#define POSIX_SPAWN_SETEXEC 0x0040
#endif
