/* The constructor on macOS: decide this process's role, as shim/init.c does on
 * Linux. The real functions need no lookup here (interpose.h). */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "environ.h"
#include "proc.h"
#include "seatbelt.h"
#include "shim.h"

struct cf_shim cf_shim;

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

/* Once sandboxed, children need no shim: the kernel carries the sandbox. The
 * entry is edited in place in environ (see shim/init.c for why). */
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
	size_t i = 0;
	for (; out[i]; i++)
		environ[i] = out[i];
	environ[i] = NULL;
}

/* Self and descendant roles, and a process that runs in a sandbox already
 * (whether it covers the policy is checked by cf_fence_prepare): sandbox this
 * process before main, or refuse. */
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
	if (f.inherited) {
		/* Covered by the sandbox in force: nothing to add, nothing to log. */
		cf_fence_free(&f);
		cf_options_free(&o);
		return;
	}
	int logfd = cf_fence_log_open(&f);
	bool applied = f.ready && cf_fence_apply(&f) == 0;
	cf_fence_log(&f, logfd, getpid(), getprogname(), applied, f.pol.reason,
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
	cf_options_free(&o);
	cf_shim.harness_pid = getpid();
	cf_shim.fence = f;
	cf_shim.role = CF_ROLE_HARNESS;
}

__attribute__((constructor)) static void cf_shim_init(void)
{
	cf_shim.role = CF_ROLE_PASS;
	/* Resolve the sandbox calls now, before any fork: dlsym takes dyld's lock. */
	(void)cf_sb_probe();
	/* Sandboxed already: descendants are covered by inheritance. Unlike
	 * Landlock's answer on Linux, sandbox_check says yes for any sandbox
	 * (an app's, someone's sandbox-exec), so fence_self() checks that the
	 * one in force denies every secret, and refuses when it does not. */
	if (cf_sb_active() == 1) {
		fence_self();
		return;
	}
	const char *marker = getenv("CREDFENCE_HARNESS");
	if (marker && cf_harness_marker_is_self(marker)) {
		become_harness();
		return;
	}
	fence_self();
}
