/* The moment before exec, in a child of the harness, on macOS. The child is a
 * fork child (vfork is fork here, and posix_spawn forks first, see spawn.c):
 * it owns its memory, and libSystem's fork handlers leave malloc usable, so
 * it may compile and apply a profile, and even prepare a fresh one. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "environ.h"
#include "event.h"
#include "shim.h"

int cf_shim_options(struct cf_options *o);

/* The harness's fence when it still holds, else one prepared here from the
 * environment (a symlink on the way to a secret changed: the old profile
 * would deny the old target). Returns the fence to use; *MINE is set when it
 * was prepared here. NULL when preparing failed. */
static struct cf_fence *fence_for_child(struct cf_fence **own, bool *mine)
{
	struct cf_fence *f = cf_shim.fence;
	struct cf_options o;
	*mine = false;
	/* Not ready (best effort without isolation): a fresh one would say the same. */
	if (!cf_fence_ready(f) || cf_fence_current(f))
		return f;
	if (cf_shim_options(&o))
		return NULL;
	*own = cf_fence_new();
	int rc = *own ? cf_fence_prepare(*own, &o, environ, NULL) : -ENOMEM;
	cf_options_free(&o);
	if (rc) {
		cf_fence_destroy(*own);
		*own = NULL;
		return NULL;
	}
	*mine = true;
	return *own;
}

bool cf_shim_harness_child(void)
{
	return cf_shim.role == CF_ROLE_HARNESS && getpid() != cf_shim.harness_pid;
}

int cf_shim_env_too_big(void)
{
	fputs("credfence: this child's environment has more than 4096 variables; credfence can not "
	      "withhold the secret ones among them. Nothing was run.\n", stderr);
	return -E2BIG;
}

/* The child about to get ENVP (NULL: environ). */
static char *const *child_envp;

int cf_shim_child_enter(const char *program)
{
	if (cf_shim.role != CF_ROLE_HARNESS)
		return 0;
	/* The harness replacing its own image stays the harness. */
	if (getpid() == cf_shim.harness_pid)
		return 0;
	/* Sandboxed already (a second exec attempt, or sandboxed by a parent). */
	if (cf_fence_fenced())
		return 1;

	struct cf_fence *fresh = NULL, *f;
	struct cf_expand_result res = {0};
	bool mine;
	char buf[8192], reason[1024 + PATH_MAX];
	int rc;
	if (!(f = fence_for_child(&fresh, &mine))) {
		cf_why_words(&(struct cf_why){.id = CF_WHY_CHILD_NOMEM}, reason, sizeof reason);
		rc = -ENOMEM;
		f = cf_shim.fence; /* for the mode and the log */
	} else if ((rc = cf_fence_enter(f, buf, sizeof buf, &res))) {
		cf_fence_words(f, rc, &res, reason, sizeof reason);
	} else {
		cf_fence_reason(f, reason, sizeof reason); /* applied, or inherited */
	}
	int logfd = cf_fence_log_open(f);
	cf_fence_log(f, logfd, getpid(), program, rc == 0, reason, rc == 0 ? res.rules : 0, buf,
		     sizeof buf);
	if (rc == 0 || cf_fence_policy(f)->mode == CF_MODE_BEST_EFFORT)
		(void)cf_event_env_write(logfd, getpid(), program, child_envp ? child_envp : environ,
					 cf_env_rules(), buf, sizeof buf);
	if (logfd >= 0)
		close(logfd);
	enum cf_mode mode = cf_fence_policy(f)->mode;
	if (mine)
		cf_fence_destroy(fresh);
	if (rc == 0)
		return 1;
	if (mode == CF_MODE_BEST_EFFORT)
		return 0;
	fprintf(stderr, "credfence: %s. Nothing was run.\n", reason);
	return -EPERM;
}

int cf_shim_child_call(const char *program, char *const envp[], cf_child_call_fn call,
		       const void *arg)
{
	child_envp = envp;
	int fenced = cf_shim_child_enter(program);
	if (fenced < 0) {
		errno = EPERM;
		return -1;
	}
	unsigned drop = (fenced ? CF_ENV_DROP_SHIM : 0) |
			(cf_shim_harness_child() ? CF_ENV_DROP_SECRETS : 0);
	size_t envn = drop ? cf_env_count(envp) + 1 : 1;
	if (envn > CF_CHILD_ENV_MAX && (drop & CF_ENV_DROP_SECRETS)) {
		errno = -cf_shim_env_too_big();
		return -1;
	}
	if (envn > CF_CHILD_ENV_MAX)
		envn = 1;
	char *envbuf[envn];
	char ldbuf[fenced ? 4096 : 1];
	char *const *env = envn > 1 ? cf_env_for_child(envp, drop, envbuf, envn, ldbuf, sizeof ldbuf)
				    : envp;
	return call(env, arg);
}
