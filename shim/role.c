/* The roles of a process that loads the shim, for both systems: the options
 * from the environment, fencing this process (self and descendant roles), and
 * becoming the harness. Called from the constructor (init.c, darwin/init.c). */
#include <errno.h>
#include <stdbool.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event.h"
#include "secret_env.h"
#include "shim.h"
#include "vars.h"

#define CF_PIN_WORKSPACE "export CREDFENCE_WORKSPACE=/path/to/project"

#ifdef __APPLE__
#include "environ.h"
#define CF_PROGNAME getprogname()
#else
extern char **environ;
#define CF_PROGNAME program_invocation_name
#endif

int cf_shim_options(struct cf_options *o)
{
	const char *bad = NULL;

	cf_options_init(o);
	int rc = cf_options_from_env(o, environ, &bad);
	if (rc == -EINVAL) {
		fprintf(stderr, "credfence: %s='%s' is not valid; fix or unset it. Nothing was run.\n",
			bad, getenv(bad));
		return rc;
	}
	if (rc)
		return rc;
	char why[4096 + 256];
	if (cf_options_check(o, why, sizeof why)) {
		fprintf(stderr, "credfence: %s. Nothing was run.\n", why);
		cf_options_free(o);
		return -EINVAL;
	}
	o->account_home = cf_account_home();
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
	/* OUT is ENVIRON with the preload entry replaced or removed. */
	size_t i = 0;
	for (; out[i]; i++)
		environ[i] = out[i];
	environ[i] = NULL;
}

/* A process that fences itself loses the secret variables before main, as a
 * child of the harness loses them at its launch: taken out of environ in
 * place (see drop_shim_from_environ) and overwritten where /proc/PID/environ
 * shows them. Logged first, by name. */
static void drop_secrets_from_environ(const struct cf_options *o, int logfd)
{
	struct cf_env_rules r;
	unsigned long lo, hi;
	char buf[8192];
	cf_options_env_rules(o, &r);
	(void)cf_event_env_write(logfd, getpid(), CF_PROGNAME, environ, &r, buf, sizeof buf);
	(void)cf_proc_self_env_area(&lo, &hi);
	(void)cf_env_drop_secrets(environ, &r, lo, hi);
}

/* The harness keeps its whole environment, but not where /proc/PID/environ
 * shows it: a secret's string is copied out of the first environment, and
 * overwritten there. (Its children can not open that file unless they hold
 * CAP_SYS_PTRACE, as root does.) Fails closed: no copy, no harness. */
static void hide_secrets_of_harness(void)
{
	unsigned long lo, hi;
	if (cf_proc_self_env_area(&lo, &hi) == 0 && cf_env_move_secrets(environ, cf_env_rules(), cf_env_memo_current(), lo, hi)) {
		fputs("credfence: out of memory while moving the harness's secret variables. "
		      "Nothing was run.\n", stderr);
		_exit(125);
	}
}

/* Without CREDFENCE_WORKSPACE the workspace would be this process's current
 * directory, and the command picks that with cd (cd ~/.config/autostart):
 * in required mode, self mode takes no workspace it was not given. Best
 * effort keeps the fence, with the current directory, and says so. */
static void judge_unpinned_workspace(const struct cf_options *o, struct cf_fence *f)
{
	const struct cf_policy *pol = cf_fence_policy(f);
	if (!cf_fence_ready(f))
		return;
	if (o->workspace && *o->workspace && o->workspace[0] != '/') {
		/* Relative: taken from each process's own directory again. */
		cf_fence_refuse(f, &(struct cf_why){.id = CF_WHY_WORKSPACE_RELATIVE, .arg = {o->workspace}});
		return;
	}
	if (o->workspace && *o->workspace)
		return;
	const char *ws = pol->workspace ? pol->workspace : "(none)";
	if (pol->mode == CF_MODE_BEST_EFFORT) {
		fprintf(stderr,
			"credfence: CREDFENCE_WORKSPACE is not set, so the workspace is the current "
			"directory %s (best-effort); add `" CF_PIN_WORKSPACE "` where LD_PRELOAD is set\n",
			ws);
		return;
	}
	cf_fence_refuse(f, &(struct cf_why){.id = CF_WHY_WORKSPACE_UNSET, .arg = {ws}});
}

/* The mount namespace of the fenced tree (enforce/fence.h), planned; below
 * a harness (a static harness's child, such as Codex's shell; a launch its
 * shim did not see), the one the harness made for its children, found
 * before this process starts a supervisor of its own. */
static void plan_protect(struct cf_fence *f, const struct cf_options *o)
{
#ifdef __linux__
	if (!cf_fence_ready(f) || cf_fence_inherited(f))
		return;
	if (cf_fence_protect_prepare(f, o, NULL)) {
		fputs("credfence: out of memory while planning the write protection. Nothing was "
		      "run.\n", stderr);
		_exit(125);
	}
	/* By its descriptors, or from its supervisor (issue 31). */
	cf_fence_protect_join(f, getenv(cf_var_name(CF_VAR_FENCED_NS)));
#else
	(void)f, (void)o;
#endif
}

/* Made (or entered) in this process, which is about to go on fenced, as
 * credfence run makes it. A process of more than one thread is refused a
 * user namespace by the kernel: then, as without user namespaces, a
 * warning and the read fence alone, or nothing run under
 * --write-protect=require; below a harness that has the namespace, nothing
 * run unless --write-protect=warn. */
static void protect_self(struct cf_fence *f, const struct cf_options *o, int logfd)
{
#ifdef __linux__
	char why[1536];
	bool changed;
	if (!cf_fence_ready(f) || cf_fence_inherited(f))
		return;
	if (!cf_fence_protect(f, &changed, why, sizeof why)) {
		if (why[0])
			fprintf(stderr, "credfence: warning: %s\n", why);
		return;
	}
	if (changed) {
		fprintf(stderr, "credfence: the mount namespace of the fenced tree failed half-way: "
			"%s. Nothing was run.\n", why);
		_exit(125);
	}
	if (o->write_protect == CF_WRITE_PROTECT_REQUIRE) {
		fprintf(stderr, "credfence: write protection can not be made: %s. Nothing was run.\n",
			why);
		_exit(125);
	}
	if (cf_fence_protect_owed(f) && o->write_protect != CF_WRITE_PROTECT_WARN) {
		/* The harness's namespace or nothing, unless the user chose the
		 * fallback; said where the user sees it too. */
		char reason[sizeof why + 256], buf[8192];
		snprintf(reason, sizeof reason, "%s%s", CF_WP_OWED_WORDS, why);
		cf_fence_log(f, logfd, getpid(), CF_PROGNAME, false, reason, 0, buf, sizeof buf);
		cf_fence_tell_user(f, CF_PROGNAME, reason);
		fprintf(stderr, "credfence: %s%s. Nothing was run.\n", reason, CF_WP_OWED_HINT);
		_exit(125);
	}
	fprintf(stderr, "credfence: write protection is off: %s; the files that your own tools "
		"run later (.git/hooks, .git/config, ...) stay writable to the command, and "
		"metadata changes go through the supervisor\n", why);
#else
	(void)f, (void)o, (void)logfd; /* no mount namespace on macOS */
#endif
}

void cf_shim_fence_self(void)
{
	struct cf_options o;
	struct cf_fence *f = NULL;
	char buf[8192], reason[CF_REASON_MAX];

	if (cf_shim_options(&o))
		_exit(125);
	if (!(f = cf_fence_new()) || cf_fence_prepare(f, &o, environ, NULL)) {
		fputs("credfence: out of memory while building the policy. Nothing was run.\n", stderr);
		_exit(125);
	}
	const struct cf_policy *pol = cf_fence_policy(f);
	if (cf_fence_inherited(f)) {
		/* Covered by the fence in force: nothing to add, nothing to log. */
		cf_fence_destroy(f);
		cf_options_free(&o);
		return;
	}
	if (pol->log_refused) {
		/* Like a variable that is not valid: refused in either mode. */
		fprintf(stderr,
			"credfence: %s; set CREDFENCE_LOG to a file outside every writable location. "
			"Nothing was run.\n",
			pol->log_refused);
		_exit(125);
	}
	if (pol->allow_read_refused) {
		fprintf(stderr, "credfence: %s. Nothing was run.\n", pol->allow_read_refused);
		_exit(125);
	}
	judge_unpinned_workspace(&o, f);
	int logfd = cf_fence_log_open(f);
	drop_secrets_from_environ(&o, logfd);
	plan_protect(f, &o);
	/* Its own supervisor, for this process and all it starts, above them as
	 * for credfence run: this process stays as the waiter (exit status and
	 * signals passed through) and the program goes on in its grandchild, so
	 * that Yama's ptrace_scope 1 lets the supervisor reach it. */
	if (cf_fence_needs_supervisor(f))
		(void)cf_fence_start_supervisor(f, getpid(), logfd, true);
	protect_self(f, &o, logfd);
	bool applied = cf_fence_ready(f) && cf_fence_apply(f) == 0;
	/* Worded only for someone to read it: this runs in every program. */
	if (logfd >= 0 || !applied)
		cf_fence_reason(f, reason, sizeof reason);
	if (logfd >= 0) {
		cf_fence_log(f, logfd, getpid(), CF_PROGNAME, applied, reason,
			     applied ? cf_fence_rules(f) : 0, buf, sizeof buf);
		close(logfd);
	}
	if (!applied) {
		const char *hint = pol->verdict == CF_VERDICT_WORKSPACE
					   ? "; add `" CF_PIN_WORKSPACE "` where LD_PRELOAD is set"
					   : "";
		if (pol->mode == CF_MODE_REQUIRED || cf_why_refuses_always(pol->why.id)) {
			fprintf(stderr, "credfence: %s%s. Nothing was run.\n", reason, hint);
			_exit(125);
		}
		if (!pol->log)
			fprintf(stderr, "credfence: %s; running without isolation (best-effort)\n",
				reason);
	}
	cf_fence_destroy(f);
	cf_options_free(&o);
	if (applied)
		drop_shim_from_environ();
}

/* The harness's options, read once at its start and kept: a harness that
 * later changes or unsets its CREDFENCE_* variables (CREDFENCE_WORKSPACE, and
 * the workspace would be its current directory) does not change how its
 * children are fenced. Relocations still come from its live environment. */
static struct cf_options harness_opts;

const struct cf_options *cf_shim_harness_options(void)
{
	return &harness_opts;
}

static bool keep(const char **s)
{
	return !*s || (*s = strdup(*s)) != NULL;
}

void cf_shim_become_harness(void)
{
	struct cf_fence *f = cf_fence_new();
	struct cf_options *o = &harness_opts;
	if (!f || cf_shim_options(o) || !keep(&o->home) || !keep(&o->workspace) ||
	    !keep(&o->log) || !keep(&o->account_home) || !keep(&o->supervisor) ||
	    cf_fence_prepare(f, o, environ, NULL)) {
		fputs("credfence: the harness could not prepare its fence. Nothing was run.\n", stderr);
		_exit(125);
	}
	cf_env_rules_init(o);
#ifndef __APPLE__
	/* Its descriptors moved out of the harness's way; the variable then
	 * names them where they are now, for the harness's own exec, written
	 * in place: a shell exports the environment main() got, which a
	 * setenv here would not change. */
	static char ns_value[600];
	const char *ns_var = cf_var_name(CF_VAR_FENCED_NS);
	const char *given = getenv(ns_var);
	/* Started without them (a relaunch that closed them, or that dropped
	 * the variable), it takes them from the supervisor (issue 31). */
	const char *v = cf_fence_harness_ns_adopt(f, given, o->write_protect, ns_value,
						  sizeof ns_value);
	char *now = getenv(ns_var);
	if (v == ns_value && now && strlen(now) == strlen(v))
		memcpy(now, v, strlen(v));
#endif
	/* Judged once, as the harness's children will get it: after the
	 * rewrite above, or each launch judges that variable again (the memo
	 * holds an entry's bytes). The memo's verdicts also say what to move. */
	cf_env_memo_init(environ);
	hide_secrets_of_harness();
#ifndef __APPLE__
	/* What the guard bound, for each child to check that it still is:
	 * out of memory, nothing is checked. */
	char here[PATH_MAX];
	if (getcwd(here, sizeof here))
		(void)cf_fence_harness_ns_plan(f, &o->allow_write_protected, here);
#endif
	cf_shim.harness_pid = getpid();
	cf_shim.fence = f;
	cf_shim.role = CF_ROLE_HARNESS;
}
