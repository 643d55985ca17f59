/* The write protection as the credfence command shows it (issue 23): what
 * `credfence check` answers for the rows of common/protected.h, how
 * --allow-write-protected changes the answer, and the options it refuses.
 * The enforcement (the read-only mounts) is tested beside it. */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()

TestSuite(write_protect, .init = cf_suite_setup, .fini = cf_suite_teardown, .timeout = 60 * CF_TIMEOUT_SCALE);

/* A repository in the workspace: .git/hooks with a hook, .git/config, a
 * .vscode with settings; no .envrc. */
static void repo(void)
{
	cf_fx_write(cf_fx_at(fx.ws, ".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
	cf_fx_write(cf_fx_at(fx.ws, ".git/config"), "[core]\n\tbare = false\n");
	cf_fx_write(cf_fx_at(fx.ws, ".vscode/settings.json"), "{}\n");
	cf_fx_write(cf_fx_at(fx.ws, "src/main.c"), "int main(void) { return 0; }\n");
}

Test(write_protect, check_names_the_tool_that_runs_it)
{
	cf_test_require_landlock();
	repo();
	cf_fx_credfence(&o, &fx, "check", NULL,
			CF_ARGV(".git/hooks/pre-commit", ".git/config", ".git/hooks",
				".git/hooks/post-checkout", ".vscode/tasks.json", "src/main.c",
				".envrc", "sub/.git/config"));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".git/hooks/pre-commit: file; read: allowed; write: denied (runs "
				  "unfenced later: git hooks)"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".git/config: file; read: allowed; write: denied (runs unfenced "
				  "later: git config (core.fsmonitor, core.hooksPath, aliases))"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".git/hooks: directory; list: allowed; create inside: denied "
				  "(runs unfenced later: git hooks)"),
		  OUT_FMT, OUT_ARGS(o));
	/* Absent, under a location that exists: its creation is refused. */
	cr_expect(has_line(o.out, ".git/hooks/post-checkout: does not exist (ENOENT); create: "
				  "denied (runs unfenced later: git hooks)"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".vscode/tasks.json: does not exist (ENOENT); create: denied "
				  "(runs unfenced later: VS Code tasks and settings)"),
		  OUT_FMT, OUT_ARGS(o));
	/* The rest of the workspace stays writable. */
	cr_expect(has_line(o.out, "src/main.c: file; read: allowed; write: allowed"), OUT_FMT,
		  OUT_ARGS(o));
	/* A file row that does not exist gets no placeholder: said so. */
	cr_expect(has_line(o.out, ".envrc: does not exist (ENOENT); create: allowed (not "
				  "write-protected while it does not exist)"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "sub/.git/config: does not exist (ENOENT); create: allowed (not "
				  "write-protected while it does not exist)"),
		  OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
	/* check created nothing. */
	struct stat st;
	cr_expect(lstat(cf_fx_at(fx.ws, ".git/hooks/post-checkout"), &st) != 0);
	cr_expect(lstat(cf_fx_at(fx.ws, ".envrc"), &st) != 0);
}

Test(write_protect, check_outside_writable_locations_says_landlock)
{
	cf_test_require_landlock();
	char outside[PATH_MAX];
	cf_fx_fmt(outside, sizeof outside, "%s/elsewhere/.git/config", fx.root);
	cf_fx_write(outside, "[core]\n");
	cf_fx_credfence(&o, &fx, "check", NULL, CF_ARGV(outside));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "%s: file; read: allowed; write: denied (EACCES)", outside),
		  OUT_FMT, OUT_ARGS(o));
}

Test(write_protect, a_lift_changes_the_answer)
{
	cf_test_require_landlock();
	repo();
	cf_fx_credfence(&o, &fx, "check", NULL,
			CF_ARGV("--allow-write-protected", ".vscode/settings.json",
				".vscode/settings.json", ".vscode/tasks.json"));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".vscode/settings.json: file; read: allowed; write: allowed "
				  "(--allow-write-protected)"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".vscode/tasks.json: does not exist (ENOENT); create: denied "
				  "(runs unfenced later: VS Code tasks and settings)"),
		  OUT_FMT, OUT_ARGS(o));

	/* The twin, absolute, lifting the whole row. */
	char twin[PATH_MAX + 64];
	cf_fx_fmt(twin, sizeof twin, "CREDFENCE_ALLOW_WRITE_PROTECTED=%s/.git/hooks", fx.ws);
	const char *env[] = {twin, NULL};
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "check", env, CF_ARGV(".git/hooks/pre-commit", ".git/config"));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".git/hooks/pre-commit: file; read: allowed; write: allowed "
				  "(--allow-write-protected)"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, ".git/config: file; read: allowed; write: denied (runs unfenced"),
		  OUT_FMT, OUT_ARGS(o));
}

/* Refused with 125 and nothing run: a path no row covers, a secret. */
Test(write_protect, lifts_that_are_refused)
{
	cf_test_require_landlock();
	repo();
	const char *ran = cf_fx_at(fx.ws, "ran");
	char cmd[PATH_MAX + 16];
	cf_fx_fmt(cmd, sizeof cmd, "touch %s", ran);
	cf_fx_credfence(&o, &fx, "run", NULL,
			CF_ARGV("--allow-write-protected", "src", "--", "sh", "-c", cmd));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: --allow-write-protected (CREDFENCE_ALLOW_WRITE_PROTECTED) "
				"'") &&
			  strstr(o.err, "/src' is not covered by write protection") &&
			  strstr(o.err, "Nothing was run."),
		  OUT_FMT, OUT_ARGS(o));
	struct stat st;
	cr_expect(lstat(ran, &st) != 0, "the command ran");

	const char *ssh = cf_fx_secret(&fx, ".ssh")->path;
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "run", NULL,
			CF_ARGV("--allow-write-protected", (char *)ssh, "--", "sh", "-c", cmd));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "is the secret location") && strstr(o.err, "which is never lifted"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(lstat(ran, &st) != 0, "the command ran");
	cf_fx_assert_no_marker(&fx, &o);

	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "check", NULL, CF_ARGV("--allow-write-protected", ".", "src"));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(o.out[0] == '\0', "check answered although its options were refused: %s", o.out);
}

Test(write_protect, write_protect_takes_warn_or_require)
{
	cf_fx_credfence(&o, &fx, "check", NULL, CF_ARGV("--write-protect=maybe", "."));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: check: --write-protect takes 'warn' or 'require', not "
				"'maybe'"),
		  OUT_FMT, OUT_ARGS(o));
	const char *env[] = {"CREDFENCE_WRITE_PROTECT=sometimes", NULL};
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "check", env, CF_ARGV("."));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: CREDFENCE_WRITE_PROTECT='sometimes' is not valid; use "
				"'warn' or 'require'"),
		  OUT_FMT, OUT_ARGS(o));
	const char *ok[] = {"CREDFENCE_WRITE_PROTECT=warn", NULL};
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "check", ok, CF_ARGV("--write-protect", "require", "."));
	cr_expect_neq(o.status, 125, OUT_FMT, OUT_ARGS(o));
}

/* credfence harness exports the options as twins for the shim. */
Test(write_protect, harness_exports_the_twins)
{
	cf_test_require_landlock();
	repo();
	cf_fx_credfence(&o, &fx, "harness", NULL,
			CF_ARGV("--allow-write-protected", ".vscode", "--write-protect", "require",
				"--", "/usr/bin/env"));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "CREDFENCE_ALLOW_WRITE_PROTECTED=%s/.vscode", fx.ws), OUT_FMT,
		  OUT_ARGS(o));
	cr_expect(has_line(o.out, "CREDFENCE_WRITE_PROTECT=require"), OUT_FMT, OUT_ARGS(o));
}
