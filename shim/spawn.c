/* posix_spawn and friends: the real call, made from a freshly fenced thread,
 * so that the child it creates starts fenced. File actions, attributes, the
 * signal mask and the return value are those of the real call. */
#include <errno.h>
#include <spawn.h>

#include "landlock.h"
#include "shim.h"

struct spawn_call {
	int (*fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
		  const posix_spawnattr_t *, char *const[], char *const[]);
	pid_t *pid;
	const char *path;
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
	char *const *argv, *const *envp;
	int rc;
};

/* Runs on the fenced thread: the child gets the environment less the shim. */
static void call(void *p)
{
	struct spawn_call *c = p;
	char *const *env = c->envp;
	size_t n = cf_ll_fenced() ? cf_env_count(env) + 1 : 1;
	if (n > CF_CHILD_ENV_MAX)
		n = 1;
	char *buf[n];
	char ld[4096];
	if (n > 1)
		env = cf_env_without_shim(env, buf, n, ld, sizeof ld);
	c->rc = c->fn(c->pid, c->path, c->fa, c->attr, c->argv, env);
}

static int spawn_fenced(struct spawn_call *c)
{
	if (cf_shim.role != CF_ROLE_HARNESS)
		return c->fn(c->pid, c->path, c->fa, c->attr, c->argv, c->envp);
	int rc = cf_shim_on_fenced_thread(call, c, c->path);
	return rc ? -rc : c->rc;
}

CF_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct spawn_call c = {cf_shim.real.posix_spawn, pid, path, fa, attr, argv, envp, 0};
	return spawn_fenced(&c);
}

CF_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct spawn_call c = {cf_shim.real.posix_spawnp, pid, file, fa, attr, argv, envp, 0};
	return spawn_fenced(&c);
}

#ifdef CF_HAVE_PIDFD_SPAWN
/* pidfd_spawn writes an int (a pidfd) where posix_spawn writes a pid_t; both are int. */
CF_EXPORT int pidfd_spawn(int *pidfd, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct spawn_call c = {(void *)cf_shim.real.pidfd_spawn, pidfd, path, fa, attr, argv, envp, 0};
	return spawn_fenced(&c);
}

CF_EXPORT int pidfd_spawnp(int *pidfd, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct spawn_call c = {(void *)cf_shim.real.pidfd_spawnp, pidfd, file, fa, attr, argv, envp, 0};
	return spawn_fenced(&c);
}
#endif
