/* posix_spawn and friends. In the harness, the launch is the shim's own
 * (launch.c), so that the child fences itself in a domain of its own; file
 * actions, attributes, the signal mask and the return value are posix_spawn's.
 * Before the constructor (cf_shim_early_gate), only a fenced process may spawn. */
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>

#include "launch.h"
#include "real.h"
#include "shim.h"

/* The real NAME, or the early refusal, or ENOSYS when the C library has none;
 * returns from the wrapper unless the call is the harness's to make. */
#define PASS_UNLESS_HARNESS(name, program, ...)                                \
	do {                                                                   \
		int early_ = cf_shim_early() ? cf_shim_early_gate(program) : 0; \
		if (early_)                                                    \
			return -early_;                                        \
		if (cf_shim.role != CF_ROLE_HARNESS) {                         \
			__typeof__(cf_real_launch.name) real_ =                \
				CF_REAL(cf_real_launch, name, CF_RESOLVE);     \
			return real_ ? real_(__VA_ARGS__) : ENOSYS;            \
		}                                                              \
	} while (0)

CF_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	PASS_UNLESS_HARNESS(posix_spawn, path, pid, path, fa, attr, argv, envp);
	return cf_shim_launch(pid, NULL, path, false, fa, attr, argv, envp);
}

CF_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	PASS_UNLESS_HARNESS(posix_spawnp, file, pid, file, fa, attr, argv, envp);
	return cf_shim_launch(pid, NULL, file, true, fa, attr, argv, envp);
}

#ifdef CF_HAVE_PIDFD_SPAWN
CF_EXPORT int pidfd_spawn(int *pidfd, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	PASS_UNLESS_HARNESS(pidfd_spawn, path, pidfd, path, fa, attr, argv, envp);
	return cf_shim_launch(NULL, pidfd, path, false, fa, attr, argv, envp);
}

CF_EXPORT int pidfd_spawnp(int *pidfd, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	PASS_UNLESS_HARNESS(pidfd_spawnp, file, pidfd, file, fa, attr, argv, envp);
	return cf_shim_launch(NULL, pidfd, file, true, fa, attr, argv, envp);
}
#endif
