/* The harness's own posix_spawn (launch.c): the child fences itself. */
#ifndef CF_SHIM_LAUNCH_H
#define CF_SHIM_LAUNCH_H

#include <spawn.h>
#include <stdbool.h>
#include <sys/types.h>

/* posix_spawn (SEARCH false) or posix_spawnp (SEARCH true) with the same
 * arguments and results; the child is fenced before its file actions run
 * and before it execs. With PIDFD, a pidfd of the child is stored there
 * instead of its pid (pidfd_spawn). Returns 0 or an errno value: EPERM when
 * the fence could not be applied in required mode (the reason is on stderr
 * and in the log), ENOTSUP for a file action this shim does not know. */
int cf_shim_launch(pid_t *pid, int *pidfd, const char *file, bool search,
		   const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		   char *const argv[], char *const envp[]);

#endif
