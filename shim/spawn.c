/* posix_spawn and friends. In the harness, the launch is the shim's own
 * (launch.c), so that the child fences itself in a domain of its own; file
 * actions, attributes, the signal mask and the return value are posix_spawn's. */
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>

#include "launch.h"
#include "shim.h"

CF_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (cf_shim.role != CF_ROLE_HARNESS)
		return cf_shim.real.posix_spawn(pid, path, fa, attr, argv, envp);
	return cf_shim_launch(pid, NULL, path, false, fa, attr, argv, envp);
}

CF_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (cf_shim.role != CF_ROLE_HARNESS)
		return cf_shim.real.posix_spawnp(pid, file, fa, attr, argv, envp);
	return cf_shim_launch(pid, NULL, file, true, fa, attr, argv, envp);
}

#ifdef CF_HAVE_PIDFD_SPAWN
CF_EXPORT int pidfd_spawn(int *pidfd, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (cf_shim.role != CF_ROLE_HARNESS)
		return cf_shim.real.pidfd_spawn(pidfd, path, fa, attr, argv, envp);
	return cf_shim_launch(NULL, pidfd, path, false, fa, attr, argv, envp);
}

CF_EXPORT int pidfd_spawnp(int *pidfd, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (cf_shim.role != CF_ROLE_HARNESS)
		return cf_shim.real.pidfd_spawnp(pidfd, file, fa, attr, argv, envp);
	return cf_shim_launch(NULL, pidfd, file, true, fa, attr, argv, envp);
}
#endif
