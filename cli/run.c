#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "harness_kinds.h"
#include "machinery.h"
#include "vars.h"
#ifdef __linux__
#endif

/* ARG as the shell reads it back: as is when it holds only plain
 * characters, else in single quotes. */
static size_t put_quoted(char *out, const char *arg)
{
	size_t n = 0;
	bool plain = *arg != '\0';
	for (const char *p = arg; *p; p++)
		plain = plain && (strchr("_-./=:,@%+", *p) || (*p >= '0' && *p <= '9') ||
				  (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'));
	if (plain) {
		memcpy(out, arg, strlen(arg));
		return strlen(arg);
	}
	out[n++] = '\'';
	for (const char *p = arg; *p; p++) {
		if (*p == '\'') {
			memcpy(out + n, "'\\''", 4);
			n += 4;
		} else {
			out[n++] = *p;
		}
	}
	out[n++] = '\'';
	return n;
}

/* A known agent harness under run would be fenced itself, and refused its
 * own state and login (they lie among the secrets): it belongs under
 * credfence harness. 0 to go on, or CF_EXIT_FAIL after one line with the
 * command to type, the same options and CMD. */
static int refuse_harness(const struct cf_cli *c, int argc, char **argv)
{
	const struct cf_harness_kind *k = cf_harness_kind(c->cmd[0]);
	if (!k)
		return 0;
	const char *product = k->name;
	size_t cap = 1;
	for (int i = 0; i < argc; i++)
		cap += 4 * strlen(argv[i]) + 3;
	char *line = malloc(cap);
	size_t n = 0;
	for (int i = 0; line && i < argc; i++) {
		line[n++] = ' ';
		n += put_quoted(line + n, argv[i]);
	}
	if (line)
		line[n] = '\0';
	cf_err("%s is %s, an agent harness: under credfence run it would be fenced itself and "
	       "refused its own state and login; run it as `credfence harness%s`. Nothing was run.",
	       c->cmd[0], product, line ? line : " -- ...");
	free(line);
	return CF_EXIT_FAIL;
}

/* Refuse (required) or warn and go on (best effort). Returns 0 to go on. */
static int not_effective(const struct cf_fence *f, int logfd, const char *program)
{
	const struct cf_policy *pol = cf_fence_policy(f);
	cf_cli_log(f, logfd, program, false);
	if (pol->mode == CF_MODE_REQUIRED || cf_why_refuses_always(pol->why.id)) {
		cf_err("%s; %s. Nothing was run.", cf_cli_reason(f), cf_cli_hint(pol->verdict));
		return CF_EXIT_FAIL;
	}
	cf_err("%s; running without isolation (best-effort mode)", cf_cli_reason(f));
	return 0;
}

/* A shim built with AddressSanitizer (scripts/test-asan) loads only into a
 * sanitized program: in CMD it would kill every other one (ld.so: undefined
 * symbol __asan_...). Such a build leaves it out, and its notices with it. */
static bool shim_is_sanitized(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return true;
#else
	return false;
#endif
#else
	return false;
#endif
}

#ifdef __linux__
/* The mount namespace of the fenced tree (write protection, metadata by
 * read-only mounts), made in the process that execs CMD. 0 to go on, with a
 * warning when user namespaces are off (the read fence still holds), or
 * CF_EXIT_FAIL: --write-protect=require, or a namespace left half-made. */
static int protect(struct cf_fence *f, int logfd, const char *program)
{
	char why[1536];
	bool changed;
	if (!cf_fence_protect(f, &changed, why, sizeof why)) {
		if (why[0])
			cf_err("warning: %s", why);
		return 0;
	}
	if (changed) {
		cf_err("the mount namespace of the fenced tree failed half-way: %s. Nothing was run.",
		       why);
		return CF_EXIT_FAIL;
	}
	if (cf_fence_write_protect(f) == CF_WRITE_PROTECT_REQUIRE) {
		cf_err("write protection can not be made: %s; run with --write-protect=warn to run "
		       "with the read fence alone. Nothing was run.", why);
		return CF_EXIT_FAIL;
	}
	if (cf_fence_protect_owed(f) && cf_fence_write_protect(f) != CF_WRITE_PROTECT_WARN) {
		/* Below a harness (relaunched by its shim): its namespace or
		 * nothing, unless the user chose the fallback. */
		char reason[sizeof why + 256], buf[8192];
		snprintf(reason, sizeof reason, "%s%s", CF_WP_OWED_WORDS, why);
		cf_fence_log(f, logfd, getpid(), program, false, reason, 0, buf, sizeof buf);
		cf_fence_tell_user(f, program, reason);
		cf_err("%s%s. Nothing was run.", reason, CF_WP_OWED_HINT);
		return CF_EXIT_FAIL;
	}
	cf_err("write protection is off: %s; the files that your own tools run later "
	       "(.git/hooks, .git/config, ...) stay writable to the command, and metadata "
	       "changes go through the supervisor%s", why,
	       cf_fence_abi(f) > 0 && cf_fence_abi(f) < 3
		       ? "; and with this Landlock ABI, truncate() of your files outside the "
			 "writable locations is not refused"
		       : "");
	return 0;
}
#endif

int cf_cmd_run(int argc, char **argv)
{
	struct cf_cli c;
	struct cf_fence *f = NULL;
	int rc = cf_cli_parse(&c, "run", argc, argv, true, false);
	if (rc || (rc = cf_cli_finish(&c)) || (rc = refuse_harness(&c, argc, argv)))
		return rc;
	if (!(f = cf_fence_new()) || cf_fence_prepare(f, &c.opts, environ, NULL)) {
		cf_err("out of memory while building the policy");
		return CF_EXIT_FAIL;
	}
	const struct cf_policy *pol = cf_fence_policy(f);
	if ((rc = cf_cli_check_machinery(pol, NULL)))
		return rc;
	if ((rc = cf_cli_check_config(&c, f, NULL)) || (rc = cf_cli_check_log(f)) ||
	    (rc = cf_cli_judge_lifts(&c, f, NULL)) || (rc = cf_cli_check_allow_read(f, "run")))
		return rc;
	cf_cli_judge_workspace(&c, f);
#ifdef __linux__
	if (cf_fence_protect_prepare(f, &c.opts, NULL)) {
		cf_err("out of memory while planning the write protection");
		return CF_EXIT_FAIL;
	}
	/* Relaunched by a harness's shim (a child whose environment moves a
	 * secret): the harness's namespace, which this process can not make
	 * inside the harness's guard. The command gets neither the descriptors
	 * nor their numbers. */
	const char *ns_var = cf_var_name(CF_VAR_FENCED_NS);
	cf_fence_protect_join(f, getenv(ns_var));
	unsetenv(ns_var);
#endif
	int logfd = cf_fence_log_open(f);
	if (pol->log && logfd < 0) {
		cf_err("can not open the log %s; choose a file you can write", pol->log);
		return CF_EXIT_FAIL;
	}
	/* The secrets leave this process before a supervisor or a waiter is
	 * forked from it, once CMD is going to run. */
	if (!cf_fence_ready(f)) {
		if ((rc = not_effective(f, logfd, c.cmd[0])))
			return rc;
		cf_cli_withhold_env(&c.opts, logfd, c.cmd[0]);
	} else {
		cf_cli_withhold_env(&c.opts, logfd, c.cmd[0]);
		cf_cli_warn_container("run", f);
#ifdef __linux__
		/* In best-effort mode a failed restrict must leave nothing behind
		 * (no_new_privs would stay), so ask a probe child first. */
		if (pol->mode == CF_MODE_BEST_EFFORT && !cf_fence_inherited(f) && cf_fence_probe(f)) {
			/* the verdict says why */
		} else if (cf_fence_needs_supervisor(f) &&
			   cf_fence_start_supervisor(f, getpid(), logfd, true)) {
			/* the verdict says why */
		} else if ((rc = protect(f, logfd, c.cmd[0]))) {
			return rc;
		} else if (cf_fence_apply(f) == 0) {
			cf_cli_log(f, logfd, c.cmd[0], true);
			/* What this kernel's Landlock can not say, and what holds it. */
			if (!cf_fence_inherited(f) && cf_fence_abi_note(f))
				cf_err("note: %s", cf_fence_abi_note(f));
		}
#else
		/* A sandbox the kernel refuses leaves nothing behind: no probe. */
		if (cf_fence_apply(f) == 0)
			cf_cli_log(f, logfd, c.cmd[0], true);
#endif
		if (!cf_fence_ready(f) && (rc = not_effective(f, logfd, c.cmd[0])))
			return rc;
	}
	if (logfd >= 0)
		close(logfd);
	/* The shim in CMD, fenced, explains each denial CMD meets: the library
	 * made for fenced programs beside it (libcredfence-fenced.so), whose
	 * load costs a nested launch little. Without a fence it stays out. */
	/* Its judge builds the policy from the environment: the options given
	 * here (on the command line, in a policy file) go with it as twins, so
	 * that a --deny X is explained in CMD too. */
	const char *shim = cf_fence_ready(f) && !shim_is_sanitized()
				   ? cf_cli_fenced_shim(cf_cli_find_shim())
				   : NULL;
	char cwd[PATH_MAX];
	if (shim && (cf_cli_preload(shim) ||
		     cf_cli_export_options(&c, pol, getcwd(cwd, sizeof cwd) ? cwd : NULL,
					   CF_SET_RUN))) {
		cf_err("out of memory while setting the environment. Nothing was run.");
		return CF_EXIT_FAIL;
	}
	cf_cli_warn_root("run");
	cf_cli_exec(c.cmd);
}
