/* Real, unmodified harnesses under `credfence harness`: each starts
 * `bash -c 'cat "$CF_T_KEY"'` (denied: status 1, EACCES, no marker) and a
 * legit `cat` of the workspace (works) on every spawn path it has, and can
 * still read the key itself. Plus a vfork C harness, and a stress run. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shimtest.h"

static struct st t;

static void setup(void)
{
	st_setup(&t);
}

static void teardown(void)
{
	st_teardown(&t);
}

static void harness_script(const char *tool, const char *script, size_t n, size_t n_allowed,
			   struct cf_fx_out *o)
{
	const char *bin = cf_test_require_tool(tool);
	st_harness(o, &t, NULL, NULL, CF_ARGV((char *)bin, (char *)st_src(script)));
	st_dump(script, o);
	cr_expect_eq(o->status, 0, "%s %s ended with %d", tool, script, o->status);
	st_assert_cases(&t, o, n, n_allowed, true);
}

TestSuite(shim_harness, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

Test(shim_harness, python3)
{
	struct cf_fx_out o;
	harness_script("/usr/bin/python3", "scripts/harness.py", 7, 7, &o);
	cr_expect(strstr(o.out, "POSIX_SPAWN_PATH True"), "CPython does not take its posix_spawn path");
	cr_expect_eq(st_count(o.out, "HARNESS_READ ok"), 2);
	cf_fx_out_free(&o);
}

Test(shim_harness, perl)
{
	struct cf_fx_out o;
	harness_script("perl", "scripts/harness.pl", 5, 5, &o);
	cf_fx_out_free(&o);
}

Test(shim_harness, node)
{
	struct cf_fx_out o;
	harness_script("node", "scripts/harness.js", 6, 6, &o);
	cf_fx_out_free(&o);
}

Test(shim_harness, bash_script)
{
	struct cf_fx_out o;
	harness_script("bash", "scripts/harness.sh", 5, 5, &o);
	cf_fx_out_free(&o);
}

Test(shim_harness, make)
{
	struct cf_fx_out o;
	const char *make = cf_test_require_tool("make");
	st_harness(&o, &t, NULL, NULL,
		   CF_ARGV((char *)make, "-s", "-f", (char *)st_src("scripts/Makefile")));
	st_dump("make", &o);
	cr_expect_eq(o.status, 0, "make ended with %d", o.status);
	/* recipe and $(shell) give CASE lines; the shell-less recipe line adds a
	 * denied read and a legit one of its own. */
	st_assert_cases(&t, &o, 2, 3, true);
	cr_expect_geq(st_count_denied(o.err), 3);
	cf_fx_out_free(&o);
}

Test(shim_harness, git_alias_and_hook)
{
	const char *git = cf_test_require_tool("git");
	char repo[PATH_MAX + 16], hook[PATH_MAX + 64];
	snprintf(repo, sizeof repo, "%s/repo", t.fx.ws);
	const char *extra[] = {"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=cf", "GIT_AUTHOR_EMAIL=cf@invalid",
			       "GIT_COMMITTER_NAME=cf", "GIT_COMMITTER_EMAIL=cf@invalid", NULL};
	char **env = st_env(&t, extra);
	struct cf_fx_out o;
	cf_fx_run(&o, t.fx.ws, env, NULL, CF_ARGV((char *)git, "init", "-q", repo));
	cr_assert_eq(o.status, 0, "git init: %s", o.err);
	cf_fx_out_free(&o);
	snprintf(hook, sizeof hook, "%s/.git/hooks/pre-commit", repo);
	cf_fx_write(hook, "#!/bin/sh\n"
			  "bash -c 'cat \"$CF_T_KEY\"'; d=$?\n"
			  "cat \"$CF_T_ALLOWED\"; echo \"CASE git-hook deny=$d legit=$?\"\n"
			  "exit 0\n");
	chmod(hook, 0755);
	/* What git itself reads of the key, without and with the harness. */
	struct cf_fx_out plain;
	cf_fx_run(&plain, t.fx.ws, env, NULL, CF_ARGV((char *)git, "hash-object", (char *)t.key));
	cr_assert_eq(plain.status, 0);

	st_harness(&o, &t, env, NULL,
		   CF_ARGV((char *)git, "-C", repo, "-c",
			   "alias.leak=!bash -c 'cat \"$CF_T_KEY\"'; d=$?; cat \"$CF_T_ALLOWED\"; "
			   "echo \"CASE git-alias deny=$d legit=$?\"",
			   "leak"));
	st_dump("git alias", &o);
	cr_expect_eq(o.status, 0);
	st_assert_cases(&t, &o, 1, 1, false);
	cf_fx_out_free(&o);

	st_harness(&o, &t, env, NULL,
		   CF_ARGV((char *)git, "-C", repo, "commit", "-q", "--allow-empty", "-m", "cf test"));
	st_dump("git hook", &o);
	cr_expect_eq(o.status, 0);
	st_assert_cases(&t, &o, 1, 1, false);
	cf_fx_out_free(&o);

	/* git itself, the harness, is not fenced, but reads no secret
	 * (enforce/linux/mountns/harness_guard.h); its own login it reads. */
	st_harness(&o, &t, env, NULL, CF_ARGV((char *)git, "hash-object", (char *)t.key));
	cr_expect_neq(o.status, 0, "git hash-object of the key under the harness: %s", o.out);
	cr_expect(strstr(o.err, "Permission denied"), "%s", o.err);
	cf_fx_assert_no_marker(&t.fx, &o);
	cf_fx_out_free(&o);
	const char *own = cf_fx_secret(&t.fx, ".claude/.credentials.json")->key;
	cf_fx_out_free(&plain);
	cf_fx_run(&plain, t.fx.ws, env, NULL, CF_ARGV((char *)git, "hash-object", (char *)own));
	cr_assert_eq(plain.status, 0);
	st_harness(&o, &t, env, NULL, CF_ARGV((char *)git, "hash-object", (char *)own));
	cr_expect_eq(o.status, 0, "git hash-object of its own login under the harness: %s", o.err);
	cr_expect_str_eq(o.out, plain.out, "the harness git could not read its own login");
	cf_fx_out_free(&o);
	cf_fx_out_free(&plain);
	cf_fx_env_free(env);
}

Test(shim_harness, c_vfork_execve)
{
	struct cf_fx_out o;
	st_harness(&o, &t, NULL, NULL, CF_ARGV((char *)st_build("tests/shim/cf-vfork"), "20"));
	st_dump("cf-vfork", &o);
	cr_expect_eq(o.status, 0);
	st_assert_cases(&t, &o, 20, 20, false);
	cr_expect_eq(st_count(o.out, " probe=0"), 20, "cf-probe was not fenced after vfork");
	cf_fx_out_free(&o);
}

/* 16 threads, each 200 launches alternating posix_spawn and fork+execve: no
 * deadlock (alarm), no crash, no fd or thread left, every child fenced, every
 * caller free, and one log line a launch. The log lies outside every writable
 * location, as credfence requires. */
Test(shim_harness, threads_stress, .timeout = 180 * CF_TIMEOUT_SCALE)
{
	struct cf_fx_out o;
	char log[PATH_MAX + 32];
	snprintf(log, sizeof log, "%s/stress.jsonl", t.fx.root);
	st_harness(&o, &t, NULL, (const char *[]){"--log", log, NULL},
		   CF_ARGV((char *)st_build("tests/shim/cf-stress"), "16", "200"));
	st_dump("cf-stress 16 200", &o);
	cf_fx_assert_no_marker(&t.fx, &o);
	cr_expect_eq(o.status, 0, "cf-stress ended with %d (142: deadlock, killed by SIGALRM after 120 s)",
		     o.status);
	cr_expect(strstr(o.out, "STRESS launched=3200 bad=0"), "not every launch went right");
	if (o.status != 0) {
		cf_fx_out_free(&o);
		return; /* the log of a killed run says nothing more */
	}
	char *text = cf_fx_slurp(log);
	cr_assert(text, "no log");
	cr_expect_eq(st_count(text, "\"event\":\"sandbox_status\""), 3200);
	cr_expect_eq(st_count(text, "\"verdict\":\"applied\""), 3200);
	cr_expect_eq(st_count(text, "\"event\":\"harness_guard\""), 1);
	/* 3201 lines: the guard's, then one a launch. */
	cr_expect_eq(st_count(text, "}\n{"), 3200, "log lines are interleaved");
	free(text);
	cf_fx_out_free(&o);
}

/* The harness process under valgrind. Valgrind 3.19 does not know the
 * Landlock syscalls (ENOSYS), so the run is best-effort: the shim's harness
 * paths (plan checks, helper threads, spawn, fork+exec) run; the fence itself
 * is covered by the tests above. */
Test(shim_harness, valgrind_clean, .timeout = 180 * CF_TIMEOUT_SCALE)
{
	const char *vg = cf_test_require_tool("valgrind");
	struct cf_fx_out o;
	char **env = st_env(&t, (const char *[]){"CF_T_ANY=1", NULL});
	st_harness(&o, &t, env, (const char *[]){"--best-effort", NULL},
		   CF_ARGV((char *)vg, "-q", "--error-exitcode=1", "--leak-check=full",
			   "--errors-for-leak-kinds=definite,possible", "--track-fds=no",
			   (char *)st_build("tests/shim/cf-stress"), "2", "20"));
	st_dump("valgrind cf-stress 2 20", &o);
	cr_expect_eq(o.status, 0, "valgrind found errors or leaks in the harness process");
	cr_expect(strstr(o.out, "STRESS launched=40 bad=0"));
	cr_expect(!strstr(o.err, "=="), "valgrind reported something");
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}
