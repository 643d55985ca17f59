/* The constructor: resolve the real calls, then decide this process's role. */
#include <dlfcn.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "landlock.h"
#include "proc.h"
#include "shim.h"

extern char **environ;

void cf_shim_thread_init(void);

struct cf_shim cf_shim;

#define LOOKUP_REAL(name) (cf_shim.real.name = (__typeof__(cf_shim.real.name))dlsym(RTLD_NEXT, #name))

static void resolve_real(void)
{
	LOOKUP_REAL(execve);
	LOOKUP_REAL(execv);
	LOOKUP_REAL(execvp);
	LOOKUP_REAL(execvpe);
	LOOKUP_REAL(fexecve);
	LOOKUP_REAL(execveat);
	LOOKUP_REAL(posix_spawn);
	LOOKUP_REAL(posix_spawnp);
	LOOKUP_REAL(pidfd_spawn);
	LOOKUP_REAL(pidfd_spawnp);
	LOOKUP_REAL(system);
	LOOKUP_REAL(popen);
	LOOKUP_REAL(syscall);
}

/* Options from the environment, and the account's home. */
int cf_shim_options(struct cf_options *o)
{
	static char acct[4096];
	const char *bad = NULL;
	struct passwd pw, *res = NULL;
	char buf[4096];

	cf_options_init(o);
	int rc = cf_options_from_env(o, environ, &bad);
	if (rc == -EINVAL) {
		fprintf(stderr, "credfence: %s='%s' is not valid; fix or unset it. Nothing was run.\n",
			bad, getenv(bad));
		return rc;
	}
	if (rc)
		return rc;
	if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res && res->pw_dir) {
		snprintf(acct, sizeof acct, "%s", res->pw_dir);
		o->account_home = acct;
	}
	return 0;
}

/* Once fenced, children need no shim: the kernel carries the fence. The
 * entry is edited in place in environ, the array main() gets as its envp too:
 * programs such as bash replace setenv/unsetenv with their own, which do not
 * work before main. */
static void drop_shim_from_environ(void)
{
	static char ld[4096];
	size_t n = cf_env_count(environ);
	if (n + 1 > CF_CHILD_ENV_MAX)
		return;
	char *out[n + 1];
	char *const *env = cf_env_without_shim(environ, out, n + 1, ld, sizeof ld);
	if (env == environ)
		return;
	/* OUT is ENVIRON with the LD_PRELOAD entry replaced or removed. */
	size_t i = 0;
	for (; out[i]; i++)
		environ[i] = out[i];
	environ[i] = NULL;
}

/* Self and descendant roles: fence this process before main. */
static void fence_self(void)
{
	struct cf_options o;
	struct cf_fence f;
	char buf[8192];

	if (cf_shim_options(&o))
		_exit(125);
	if (cf_fence_prepare(&f, &o, environ, NULL)) {
		fputs("credfence: out of memory while building the policy. Nothing was run.\n", stderr);
		_exit(125);
	}
	int logfd = cf_fence_log_open(&f);
	bool applied = f.ready && cf_fence_apply(&f) == 0;
	cf_fence_log(&f, logfd, getpid(), program_invocation_name, applied, f.pol.reason,
		     applied ? f.res.rules : 0, buf, sizeof buf);
	if (logfd >= 0)
		close(logfd);
	if (!applied) {
		if (f.pol.mode == CF_MODE_REQUIRED) {
			fprintf(stderr, "credfence: %s. Nothing was run.\n", f.pol.reason);
			_exit(125);
		}
		if (!f.pol.log)
			fprintf(stderr, "credfence: %s; running without isolation (best-effort)\n",
				f.pol.reason);
	}
	cf_fence_free(&f);
	cf_options_free(&o);
	if (applied)
		drop_shim_from_environ();
}

static void become_harness(void)
{
	struct cf_options o;
	struct cf_fence *f = calloc(1, sizeof *f);
	if (!f || cf_shim_options(&o) || cf_fence_prepare(f, &o, environ, NULL)) {
		fputs("credfence: the harness could not prepare its fence. Nothing was run.\n", stderr);
		_exit(125);
	}
	/* The policy keeps its own copies; the options are no longer needed. */
	cf_options_free(&o);
	cf_shim.harness_pid = getpid();
	cf_shim_thread_init();
	cf_shim.fence = f;
	cf_shim.role = CF_ROLE_HARNESS;
}

__attribute__((constructor)) static void cf_shim_init(void)
{
	resolve_real();
	cf_shim.role = CF_ROLE_PASS;
	/* Fenced already: descendants are covered by inheritance, add no layer. */
	if (cf_ll_fenced(NULL))
		return;
	const char *marker = getenv("CREDFENCE_HARNESS");
	if (marker && cf_harness_marker_is_self(marker)) {
		become_harness();
		return;
	}
	fence_self();
}
