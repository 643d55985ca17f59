/* Programs the shim can not load into (static busybox, a static musl program,
 * a Go program), started by a hooked process: each is fenced by inheritance,
 * and so is everything it starts. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

TestSuite(shim_static, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

/* Run SCRIPT with bash as the harness. */
static void under_bash_harness(struct cf_fx_out *o, const char *script, const char *const *extra)
{
	char **env = st_env(&t, extra);
	st_harness(o, &t, env, NULL, CF_ARGV("/bin/bash", "-c", (char *)script));
	cf_fx_env_free(env);
}

Test(shim_static, busybox)
{
	const char *bb = cf_test_require_tool("/bin/busybox");
	struct cf_fx_out o;
	(void)bb;
	under_bash_harness(&o,
			   "/bin/busybox cat \"$CF_T_KEY\"; d=$?; /bin/busybox cat \"$CF_T_ALLOWED\"; "
			   "echo \"CASE busybox deny=$d legit=$?\"\n"
			   /* busybox starting busybox: nothing of ours in either. */
			   "/bin/busybox sh -c '/bin/busybox cat \"$CF_T_KEY\"; d=$?; "
			   "/bin/busybox cat \"$CF_T_ALLOWED\"; echo \"CASE busybox-sh deny=$d legit=$?\"'\n"
			   "k=$(< \"$CF_T_OWN\"); [[ $k == CFMARK-* ]] && echo 'HARNESS_READ ok'\n"
			   "k=$(< \"$CF_T_KEY\") && echo 'HARNESS_DENIED bad' || echo 'HARNESS_DENIED ok'\n",
			   NULL);
	st_dump("busybox", &o);
	cr_expect_eq(o.status, 0);
	st_assert_cases(&t, &o, 2, 2, true);
	cf_fx_out_free(&o);

	/* Started by a process that fenced itself (self mode), too. */
	char pre[PATH_MAX + 16], home[PATH_MAX + 32], ws[PATH_MAX + 32];
	snprintf(pre, sizeof pre, "LD_PRELOAD=%s", st_shim());
	snprintf(home, sizeof home, "CREDFENCE_HOME=%s", t.fx.home);
	snprintf(ws, sizeof ws, "CREDFENCE_WORKSPACE=%s", t.fx.ws);
	char **env = st_env(&t, (const char *[]){pre, home, ws, NULL});
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV("/bin/bash", "-c",
			  "/bin/busybox cat \"$CF_T_KEY\"; d=$?; /bin/busybox cat \"$CF_T_ALLOWED\"; "
			  "echo \"CASE busybox-self deny=$d legit=$?\""));
	st_dump("busybox from a self-fenced bash", &o);
	st_assert_cases(&t, &o, 1, 1, false);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

Test(shim_static, musl_static)
{
	const char *musl = cf_test_require_tool("musl-gcc");
	char out[PATH_MAX + 32];
	snprintf(out, sizeof out, "%s/musl-probe", t.fx.root);
	struct cf_fx_out o;
	cf_fx_run(&o, NULL, NULL, NULL,
		  CF_ARGV((char *)musl, "-static", "-O2", "-o", out, (char *)st_src("scripts/musl_probe.c")));
	cr_assert_eq(o.status, 0, "musl-gcc failed: %s", o.err);
	cf_fx_out_free(&o);
	char prog[PATH_MAX + 64];
	snprintf(prog, sizeof prog, "CF_T_PROG=%s", out);
	/* Not the only command: bash would exec it in place, and it would be the harness. */
	under_bash_harness(&o, "\"$CF_T_PROG\"; exit $?", (const char *[]){prog, NULL});
	st_dump("musl program", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.out, "MUSL_OPEN EACCES"), "the musl program's own open was not denied");
	st_assert_cases(&t, &o, 1, 1, false);
	cf_fx_out_free(&o);
}

Test(shim_static, go_program, .timeout = 240 * CF_TIMEOUT_SCALE)
{
	const char *go = cf_test_require_tool("go");
	char out[PATH_MAX + 32], cache[PATH_MAX + 32], gopath[PATH_MAX + 32];
	snprintf(out, sizeof out, "%s/goprobe", t.fx.root);
	/* A build cache that outlives the test keeps later runs fast; it lies in
	 * the build tree, a writable place of its own. */
	snprintf(cache, sizeof cache, "GOCACHE=%s", st_build("tests/shim/go-cache"));
	snprintf(gopath, sizeof gopath, "GOPATH=%s", st_build("tests/shim/go-path"));
	char **benv = cf_fx_env(&t.fx, (const char *[]){cache, gopath, "CGO_ENABLED=0", "GOTOOLCHAIN=local",
							 "GOPROXY=off", "GOFLAGS=", "GO111MODULE=off", NULL});
	struct cf_fx_out o;
	cf_fx_run(&o, t.fx.root, benv, NULL,
		  CF_ARGV((char *)go, "build", "-o", out, (char *)st_src("scripts/goprobe/main.go")));
	cr_assert_eq(o.status, 0, "go build failed: %s", o.err);
	cf_fx_out_free(&o);
	cf_fx_env_free(benv);

	char prog[PATH_MAX + 64];
	snprintf(prog, sizeof prog, "CF_T_PROG=%s", out);
	/* Not the only command: bash would exec it in place, and it would be the harness. */
	under_bash_harness(&o, "\"$CF_T_PROG\"; exit $?", (const char *[]){prog, NULL});
	st_dump("Go program", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.out, "GO_OPEN EACCES"), "the Go program's own read was not denied");
	st_assert_cases(&t, &o, 1, 1, false);
	cf_fx_out_free(&o);
}
