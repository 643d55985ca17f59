/* Write protection that nothing routes around (issue 31), driven as a user
 * would (credfence run --home FAKE --workspace WS, and a child of credfence
 * harness): the project roots directly below the workspace hold their
 * placeholders; every file git reads to decide what to run (the list in
 * common/protected.c, each row citing git's source) is held, so that a plant
 * from inside changes nothing the user's own git, run afterwards outside
 * the fence, does; the legit git flows keep working inside. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()
/* A child of credfence harness instead of credfence run: a way of
 * cf-nsharness (fork, spawn, ...). */
static const char *harness_way;

static void setup(void)
{
	cf_suite_setup();
	harness_way = NULL;
}

TestSuite(write_holds, .init = setup, .fini = cf_suite_teardown, .timeout = 120);

/* Run SCRIPT with sh -c in the workspace, fenced: credfence run, or a child
 * of credfence harness started the way harness_way says. */
static void sh_fenced(const char *const *env, const char *script)
{
	cf_fx_out_free(&o);
	if (!harness_way) {
		fenced(&o, &fx, env, NULL, CF_ARGV("/bin/sh", "-c", (char *)script));
		return;
	}
	static struct argvb b;
	b.n = 0;
	argvb_add(&b, "--");
	argvb_add(&b, "%s", CF_NSHARNESS);
	argvb_add(&b, "%s", harness_way);
	argvb_add(&b, "%s", script);
	cf_fx_credfence(&o, &fx, "harness", env, b.v);
}

/* The user's own shell, outside the fence, in the workspace. */
static void sh_plain(struct cf_fx_out *out, const char *script)
{
	char **env = cf_fx_env(&fx, (const char *[]){"GIT_CONFIG_NOSYSTEM=1", NULL});
	cf_fx_run(out, fx.ws, env, NULL, CF_ARGV("/bin/sh", "-c", (char *)script));
	cf_fx_env_free(env);
}

static void plain_ok(const char *script)
{
	struct cf_fx_out p = {0};
	sh_plain(&p, script);
	cr_assert_eq(p.status, 0, OUT_FMT, OUT_ARGS(p));
	cf_fx_out_free(&p);
}

/* ---- project roots directly below the workspace ---- */

static void sub_roots(void)
{
	cf_test_require_tool("git");
	/* sub: a repository of a workspace of several; plain: a directory
	 * such as build/ that a fenced command must still remove. */
	plain_ok("set -e; git init -q sub && mkdir -p plain/deep && echo x > plain/deep/f");
	sh_fenced(NULL, "for d in .vscode .claude .cursor .zed; do\n"
			"  mkdir -p sub/$d 2>/dev/null; echo x > sub/$d/tasks.json 2>/dev/null && "
			"echo ESCAPED $d/tasks.json\n"
			"  echo x > sub/$d/settings.json 2>/dev/null && echo ESCAPED $d/settings.json\n"
			"done\n"
			"rm -rf plain && echo plain removed\n"
			"echo done\n");
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "done"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "ESCAPED"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "plain removed"), OUT_FMT, OUT_ARGS(o));
	struct stat st;
	cr_expect(lstat(cf_fx_at(fx.ws, "sub/.vscode/tasks.json"), &st) != 0);
	cr_expect(lstat(cf_fx_at(fx.ws, "sub/.claude/settings.json"), &st) != 0);
	/* No placeholder was made in the plain directory (it is gone). */
	cr_expect(lstat(cf_fx_at(fx.ws, "plain"), &st) != 0);
	cf_fx_assert_no_marker(&fx, &o);
}

Test(write_holds, a_repository_below_the_workspace_holds_its_placeholders_from_run)
{
	cf_test_require_landlock();
	sub_roots();
}

Test(write_holds, a_repository_below_the_workspace_holds_its_placeholders_in_a_harness_child)
{
	cf_test_require_landlock();
	harness_way = "spawn";
	sub_roots();
}
