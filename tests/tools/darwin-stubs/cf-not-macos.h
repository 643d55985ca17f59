/* Included first in every file scripts/darwin-syntax checks (README.md):
 * names that glibc declares and macOS's libSystem lacks. A function is marked
 * unavailable, so a call outside #ifdef __linux__ fails as it would fail on
 * a Mac (there: undeclared); a flag is taken away, so #ifdef sees what a Mac
 * sees. Struct members of the same name stay usable. */
#ifndef CF_STUB_NOT_MACOS_H
#define CF_STUB_NOT_MACOS_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CF_NOT_MACOS(name) \
	extern __typeof__(name) name __attribute__((unavailable("not in macOS's libSystem")))

CF_NOT_MACOS(pipe2);
CF_NOT_MACOS(dup3);
CF_NOT_MACOS(execvpe);
CF_NOT_MACOS(gettid);
CF_NOT_MACOS(close_range);
CF_NOT_MACOS(syncfs);
CF_NOT_MACOS(get_current_dir_name);
CF_NOT_MACOS(strerrorname_np);
CF_NOT_MACOS(strerrordesc_np);
CF_NOT_MACOS(strchrnul);
CF_NOT_MACOS(mempcpy);
CF_NOT_MACOS(secure_getenv);
CF_NOT_MACOS(canonicalize_file_name);
CF_NOT_MACOS(clearenv);
CF_NOT_MACOS(program_invocation_name);
CF_NOT_MACOS(program_invocation_short_name);

#undef CF_NOT_MACOS

#undef O_TMPFILE
#undef O_PATH
#undef O_NOATIME
#undef AT_EMPTY_PATH

#endif
