/* The fence never covers its own machinery (issue 8, finding 6): run and
 * harness refuse, exit 125 with the fix, when the credfence command or the
 * shim a harness would load lies in a writable location of the fence; status
 * shows where each lies, the launcher script too. A launcher script in the
 * workspace is not refused (issue 19): the refusal came after the script had
 * run, and a rewritten one would not call credfence; scripts/credfence tells
 * the user to call the installed copy instead. */
#include <sys/stat.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()
TestSuite(machinery, .init = cf_suite_setup, .fini = cf_suite_teardown, .timeout = 60 * CF_TIMEOUT_SCALE);

/* A copy of the credfence under test (and its shim) at DIR/bin and DIR/lib. */
static const char *install_at(const char *dir)
{
	static char bin[PATH_MAX + 32];
	char cmd[4 * PATH_MAX];
	cf_fx_fmt(cmd, sizeof cmd, "mkdir -p '%s/bin' '%s/lib' && cp '%s' '%s/bin/' && cp '%s/lib/'* '%s/lib/'",
		  dir, dir, cf_fx_bin(), dir, fx.root, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cf_fx_fmt(bin, sizeof bin, "%s/bin/credfence", dir);
	return bin;
}

static void run_as(const char *bin, const char *sub, const char *const *opts, const char *script)
{
	struct argvb b = {.n = 0};
	char ran[PATH_MAX + 16], extra[PATH_MAX + 32];
	argvb_add(&b, "%s", bin);
	argvb_add(&b, "%s", sub);
	argvb_add(&b, "--home");
	argvb_add(&b, "%s", fx.home);
	argvb_add(&b, "--workspace");
	argvb_add(&b, "%s", fx.ws);
	for (size_t i = 0; opts && opts[i]; i++)
		argvb_add(&b, "%s", opts[i]);
	argvb_add(&b, "--");
	argvb_add(&b, "/bin/sh");
	argvb_add(&b, "-c");
	cf_fx_fmt(ran, sizeof ran, "%s/ran", fx.ws);
	argvb_add(&b, "cat '%s'; echo ran > '%s'", cf_fx_secret(&fx, ".ssh")->key, ran);
	cf_fx_fmt(extra, sizeof extra, "CREDFENCE_SCRIPT=%s", script ? script : "");
	char **env = cf_fx_env(&fx, (const char *[]){extra, NULL});
	cf_fx_run(&o, fx.ws, env, NULL, b.v);
	cf_fx_env_free(env);
}

static void assert_refused(const char *part)
{
	cf_fx_assert_no_marker(&fx, &o);
	cr_expect_eq(o.status, 125, "exit %d, expected 125; stderr: %s", o.status, o.err);
	cr_expect(strstr(o.err, part), "the message does not name %s: %s", part, o.err);
	cr_expect(strstr(o.err, "lies in the writable location"), "%s", o.err);
	cr_expect(strstr(o.err, "Nothing was run."), "%s", o.err);
	cr_expect_neq(access(cf_fx_at(fx.ws, "ran"), F_OK), 0, "the command ran");
}

Test(machinery, command_in_the_workspace_is_refused)
{
	const char *bin = install_at(cf_fx_at(fx.ws, "tool"));
	run_as(bin, "run", NULL, NULL);
	assert_refused("the credfence command");
	cf_fx_out_free(&o);
	run_as(bin, "harness", NULL, NULL);
	assert_refused("the credfence command");
}

Test(machinery, shim_in_a_writable_location_is_refused_by_harness)
{
	char lib[PATH_MAX + 16];
	const char *bin = install_at(cf_fx_at(fx.root, "alt"));
	cf_fx_fmt(lib, sizeof lib, "%s/alt/lib", fx.root);
	run_as(bin, "harness", (const char *[]){"--writable", lib, NULL}, NULL);
	assert_refused("the shim");
}

/* The launcher script is not refused (issue 19 item 4): it ran already, and
 * one that a fenced command rewrote would not call credfence at all. The
 * command runs fenced, and the variable does not reach it. */
Test(machinery, launcher_script_in_the_workspace_runs)
{
	const char *script = cf_fx_at(fx.ws, "credfence-launcher");
	cf_fx_write(script, "#!/bin/sh\n");
	run_as(cf_fx_bin(), "run", NULL, script);
	cf_fx_assert_no_marker(&fx, &o);
	cr_expect_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect_eq(access(cf_fx_at(fx.ws, "ran"), F_OK), 0, "the command did not run");
	cr_expect(strstr(o.err, "Permission denied"), "the key was not refused: %s", o.err);
}

/* The symlink the user calls credfence by (scripts/credfence makes
 * ~/.local/bin/credfence) is machinery too: in a writable location a fenced
 * command could replace it. Refused when called by its path and when found
 * in PATH; status warns. */
static void run_via(const char *argv0, const char *path_dir)
{
	struct argvb b = {.n = 0};
	char ran[PATH_MAX + 16], pathvar[2 * PATH_MAX + 16];
	if (!strchr(argv0, '/')) {
		/* A shell searches PATH and passes the bare name as argv[0]. */
		argvb_add(&b, "/bin/sh");
		argvb_add(&b, "-c");
		argvb_add(&b, "exec %s \"$@\"", argv0);
		argvb_add(&b, "sh");
	} else {
		argvb_add(&b, "%s", argv0);
	}
	argvb_add(&b, "run");
	argvb_add(&b, "--home");
	argvb_add(&b, "%s", fx.home);
	argvb_add(&b, "--workspace");
	argvb_add(&b, "%s", fx.ws);
	argvb_add(&b, "--");
	argvb_add(&b, "/bin/sh");
	argvb_add(&b, "-c");
	cf_fx_fmt(ran, sizeof ran, "%s/ran", fx.ws);
	argvb_add(&b, "cat '%s'; echo ran > '%s'", cf_fx_secret(&fx, ".ssh")->key, ran);
	cf_fx_fmt(pathvar, sizeof pathvar, "PATH=%s:%s", path_dir, getenv("PATH"));
	char **env = cf_fx_env(&fx, (const char *[]){pathvar, NULL});
	cf_fx_run(&o, fx.ws, env, NULL, b.v);
	cf_fx_env_free(env);
}

Test(machinery, link_in_the_workspace_is_refused)
{
	const char *dir = cf_fx_at(fx.ws, "bin");
	const char *link = cf_fx_at(dir, "credfence");
	cf_fx_mkdirs(dir);
	cr_assert_eq(symlink(cf_fx_bin(), link), 0);
	run_via(link, "/nonexistent");
	assert_refused("the link");
	cr_expect(strstr(o.err, link), "the link is not named: %s", o.err);
	cf_fx_out_free(&o);
	run_via("credfence", dir); /* as a shell finds it in PATH */
	assert_refused("the link");
	cf_fx_out_free(&o);
	/* Outside every writable location the same link runs fenced. */
	const char *out_dir = cf_fx_at(fx.root, "bin2");
	cf_fx_mkdirs(out_dir);
	cr_assert_eq(symlink(cf_fx_bin(), cf_fx_at(out_dir, "credfence")), 0);
	run_via("credfence", out_dir);
	cf_fx_assert_no_marker(&fx, &o);
	cr_expect_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect(strstr(o.err, "Permission denied"), "the key was not refused: %s", o.err);
	cr_expect_eq(access(cf_fx_at(fx.ws, "ran"), F_OK), 0, "the command did not run");
}

/* The same parts outside every writable location: the command runs fenced. */
Test(machinery, parts_outside_run)
{
	const char *script = cf_fx_at(fx.root, "credfence-launcher");
	cf_fx_write(script, "#!/bin/sh\n");
	run_as(cf_fx_bin(), "run", NULL, script);
	cf_fx_assert_no_marker(&fx, &o);
	cr_expect_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect_eq(access(cf_fx_at(fx.ws, "ran"), F_OK), 0, "the command did not run");
}

Test(machinery, status_names_the_parts)
{
	const char *bin = install_at(cf_fx_at(fx.ws, "tool"));
	struct argvb b = {.n = 0};
	argvb_add(&b, "%s", bin);
	argvb_add(&b, "status");
	argvb_add(&b, "--home");
	argvb_add(&b, "%s", fx.home);
	argvb_add(&b, "--workspace");
	argvb_add(&b, "%s", fx.ws);
	char **env = cf_fx_env(&fx, NULL);
	cf_fx_run(&o, fx.ws, env, NULL, b.v);
	cf_fx_env_free(env);
	cr_expect(has_line(o.out, "command:      %s", bin), "%s", o.out);
	cr_expect(strstr(o.out, "warning: the credfence command lies in the writable location"), "%s",
		  o.out);
}
