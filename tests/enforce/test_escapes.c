/* Issue 8 (red-team findings 2, 5, 8, 9, 10), each as the attack a fenced
 * command or a model would make: a writable location or the log swapped for
 * a symlink, the workspace picked with cd, a relative --deny taken from
 * wherever the harness stands, LD_PRELOAD holding the shim's path as a
 * substring, a harness the shim can not load into. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()

/* A directory of this test's own in /tmp (a writable location of every
 * policy), canonical; removed with the fixture. */
static char tmp[PATH_MAX];
static char keys_file[PATH_MAX + 32]; /* fake ~/.ssh/authorized_keys */
#define KEYS_TEXT "ssh-ed25519 AAAAFAKE fake-key-for-tests\n"
#define WRITE_MARK "ESCAPED-WRITE-MARK"

static void setup(void)
{
	cf_suite_setup();
	char t[] = "/tmp/cf-esc-XXXXXX";
	cr_assert(mkdtemp(t), "mkdtemp: %s", strerror(errno));
	cr_assert(realpath(t, tmp));
	snprintf(keys_file, sizeof keys_file, "%s/.ssh/authorized_keys", fx.home);
	cf_fx_write(keys_file, KEYS_TEXT);
	cf_fx_mkdirs(cf_fx_at(fx.home, ".config/autostart"));
}

static void teardown(void)
{
	if (tmp[0])
		cf_fx_rmtree(tmp);
	tmp[0] = '\0';
	cf_suite_teardown();
}

TestSuite(escapes, .init = setup, .fini = teardown, .timeout = 90 * CF_TIMEOUT_SCALE);

static const char *shim(void)
{
	static char s[PATH_MAX];
	const char *b = getenv("CREDFENCE_BUILD");
	cr_assert(b && *b, "CREDFENCE_BUILD is not set; run with meson test");
	cf_fx_fmt(s, sizeof s, "%s/shim/libcredfence.so", b);
	return s;
}

/* FILE holds exactly TEXT (NULL: FILE does not exist). */
static void expect_file(const char *file, const char *text)
{
	char *c = cf_fx_slurp(file);
	if (!text) {
		cr_expect_null(c, "%s was created: %s", file, c ? c : "");
	} else {
		cr_expect(c && strcmp(c, text) == 0, "%s changed: %s", file, c ? c : "(gone)");
		cr_expect(!c || (!strstr(c, WRITE_MARK) && !strstr(c, "sandbox_status")));
	}
	free(c);
}

static void expect_no_write_mark(void)
{
	cr_expect(!strstr(o.out, WRITE_MARK) && !strstr(o.err, WRITE_MARK), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

/* The first launch is fenced and makes the swap itself, as a fenced command
 * could: LOC (a directory in /tmp) moved away, a symlink to TARGET in its
 * place. */
static void fenced_swap(char *const opts[], const char *const *env, const char *loc,
			const char *target)
{
	char script[PATH_MAX * 3];
	cf_fx_fmt(script, sizeof script, "mv '%s' '%s.old' && ln -s '%s' '%s' && echo swapped", loc,
		  loc, target, loc);
	/* In the mount namespace of the fenced tree a writable location is a
	 * mount point, and the swap fails with EBUSY (test_fenced_ns.c); made
	 * here as it can be where user namespaces are off. */
	cf_test_require_userns_switch();
	const char *with[16] = {"CF_TEST_NO_USERNS=1"};
	for (size_t i = 0; env && env[i] && i < 14; i++)
		with[i + 1] = env[i];
	fenced(&o, &fx, with, opts, CF_ARGV("/bin/sh", "-c", script));
	cr_assert_eq(o.status, 0, "the swap, fenced: " OUT_FMT, OUT_ARGS(o));
	cr_assert(has_line(o.out, "swapped"));
	cf_fx_out_free(&o);
}

static void expect_link_refusal(const char *loc)
{
	char want[PATH_MAX * 3];
	cf_fx_fmt(want, sizeof want,
		  "credfence: read isolation is not effective: writable location %s is reached "
		  "through symlink %s, which lies in writable location ",
		  loc, loc);
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strncmp(o.err, want, strlen(want)) == 0, "want: %s\n" OUT_FMT, want, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Nothing was run."), "%s", o.err);
	cr_expect(all_lines_credfence(o.err), "%s", o.err);
	cr_expect(!has_line(o.out, "ran"), "the command ran");
	expect_no_write_mark();
}

/* OPT LOC (a directory made in /tmp) swapped by a fenced command for a
 * symlink to TARGET; then a launch with the same option that writes the
 * mark to FILE with REDIRECT (">" or ">>"), through the link. */
static void swap_then_write(const char *opt, const char *loc, const char *target,
			    const char *redirect, const char *file)
{
	cf_fx_mkdirs(loc);
	fenced_swap(CF_ARGV((char *)opt, (char *)loc), NULL, loc, target);
	char script[PATH_MAX * 2];
	cf_fx_fmt(script, sizeof script, "echo ran; echo " WRITE_MARK " %s '%s'", redirect, file);
	fenced(&o, &fx, NULL, CF_ARGV((char *)opt, (char *)loc), CF_ARGV("/bin/sh", "-c", script));
}

/* Finding 2: --workspace /tmp/X/proj, swapped for a symlink to ~/.bashrc. */
Test(escapes, workspace_swapped_for_a_symlink_is_refused)
{
	cf_test_require_landlock();
	const char *proj = cf_fx_at(tmp, "proj");
	const char *bashrc = cf_fx_at(fx.home, ".bashrc");
	swap_then_write("--workspace", proj, bashrc, ">>", proj);
	/* A workspace that is no directory is refused before its links are judged. */
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "is not a directory") && strstr(o.err, "Nothing was run."), OUT_FMT,
		  OUT_ARGS(o));
	cr_expect(!has_line(o.out, "ran"), "the command ran");
	expect_no_write_mark();
	expect_file(bashrc, "# fake bashrc\n");
}

/* The same, swapped for a symlink to a directory (~/.config/autostart). */
Test(escapes, workspace_swapped_for_a_symlink_to_a_directory_is_refused)
{
	cf_test_require_landlock();
	const char *proj = cf_fx_at(tmp, "proj");
	const char *autostart = cf_fx_at(fx.home, ".config/autostart");
	cf_fx_mkdirs(autostart);
	swap_then_write("--workspace", proj, autostart, ">", cf_fx_at(proj, "evil.desktop"));
	expect_link_refusal(proj);
	cr_expect_neq(access(cf_fx_at(autostart, "evil.desktop"), F_OK), 0, "autostart was written");
}

/* Finding 2: TMPDIR=/tmp/X/t, swapped for a symlink to ~/.config/autostart. */
Test(escapes, tmpdir_swapped_for_a_symlink_is_refused)
{
	cf_test_require_landlock();
	const char *t = cf_fx_at(tmp, "t");
	const char *autostart = cf_fx_at(fx.home, ".config/autostart");
	char env[PATH_MAX + 16];
	cf_fx_fmt(env, sizeof env, "TMPDIR=%s", t);
	const char *extra[] = {env, NULL};
	cf_fx_mkdirs(t);
	fenced_swap(NULL, extra, t, autostart);
	fenced(&o, &fx, extra, NULL,
	       CF_ARGV("/bin/sh", "-c", "echo ran; echo " WRITE_MARK " > \"$TMPDIR/evil.desktop\""));
	expect_link_refusal(t);
	expect_file(cf_fx_at(autostart, "evil.desktop"), NULL);
}

/* Finding 2: --writable /tmp/X/w, the same. */
Test(escapes, writable_swapped_for_a_symlink_is_refused)
{
	cf_test_require_landlock();
	const char *w = cf_fx_at(tmp, "w");
	const char *autostart = cf_fx_at(fx.home, ".config/autostart");
	swap_then_write("--writable", w, autostart, ">", cf_fx_at(w, "evil.desktop"));
	expect_link_refusal(w);
	expect_file(cf_fx_at(autostart, "evil.desktop"), NULL);

	/* status says it too, and fails. */
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--writable", (char *)w));
	cr_expect_eq(o.status, 1, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "is reached through symlink"), OUT_FMT, OUT_ARGS(o));
}

/* Finding 9: a log in a writable location is refused before anything runs,
 * so there is nothing to swap; a swapped one too. */
Test(escapes, log_in_a_writable_location_is_refused_by_run)
{
	const char *log = cf_fx_at(tmp, "cf.log");
	fenced(&o, &fx, NULL, CF_ARGV("--log", (char *)log), CF_ARGV("/bin/sh", "-c", "echo ran"));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	char want[PATH_MAX * 3];
	cf_fx_fmt(want, sizeof want, "credfence: the log %s lies in writable location /tmp; ", log);
	cr_expect(strncmp(o.err, want, strlen(want)) == 0, "want: %s\n" OUT_FMT, want, OUT_ARGS(o));
	cr_expect(all_lines_credfence(o.err), "%s", o.err);
	cr_expect(!has_line(o.out, "ran"));
	expect_file(log, NULL);

	/* Swapped already (a fenced command did ln -s ~/.ssh/authorized_keys). */
	cf_fx_out_free(&o);
	cr_assert(symlink(keys_file, log) == 0);
	fenced(&o, &fx, NULL, CF_ARGV("--log", (char *)log), CF_ARGV("/bin/sh", "-c", "echo ran"));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(!has_line(o.out, "ran"));
	expect_file(keys_file, KEYS_TEXT);

	/* A directory on the way swapped for a symlink (to a directory outside). */
	cf_fx_out_free(&o);
	cf_fx_mkdirs(cf_fx_at(fx.root, "logs"));
	const char *dir = cf_fx_at(tmp, "logs");
	cr_assert(symlink(cf_fx_at(fx.root, "logs"), dir) == 0);
	char via[PATH_MAX];
	cf_fx_fmt(via, sizeof via, "%s/x.log", dir);
	fenced(&o, &fx, NULL, CF_ARGV("--log", via), CF_ARGV("true"));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cf_fx_fmt(want, sizeof want, "credfence: the log %s is reached through symlink %s, which lies "
		  "in writable location /tmp; ", via, dir);
	cr_expect(strncmp(o.err, want, strlen(want)) == 0, "want: %s\n" OUT_FMT, want, OUT_ARGS(o));
	expect_file(cf_fx_at(fx.root, "logs/x.log"), NULL);
}

/* Finding 9, the harness: a child swaps the log for a symlink to
 * authorized_keys; the next launch would append its JSON line there. */
Test(escapes, log_swap_in_the_harness_is_refused)
{
	const char *log = cf_fx_at(tmp, "h.log");
	char script[PATH_MAX * 3];
	cf_fx_fmt(script, sizeof script,
		  "echo ran; ln -sf '%s' '%s'; /bin/true; /bin/true; echo done",
		  keys_file, log);
	cf_fx_credfence(&o, &fx, "harness", NULL,
			CF_ARGV("--log", (char *)log, "--", "/bin/sh", "-c", script));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "lies in writable location /tmp"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!has_line(o.out, "ran"), "the harness ran");
	expect_file(keys_file, KEYS_TEXT);
	cf_fx_assert_no_marker(&fx, &o);
}

/* Self mode with ENV_EXTRA, in DIR, running SCRIPT. */
static void self_mode(const char *dir, const char *const *env_extra, const char *script)
{
	char pre[PATH_MAX + 16], home[PATH_MAX + 32];
	cf_fx_fmt(pre, sizeof pre, "LD_PRELOAD=%s", shim());
	cf_fx_fmt(home, sizeof home, "CREDFENCE_HOME=%s", fx.home);
	const char *extra[8] = {pre, home};
	for (size_t i = 0; env_extra && env_extra[i]; i++)
		extra[2 + i] = env_extra[i];
	char **env = cf_fx_env(&fx, extra);
	cf_fx_run(&o, dir, env, NULL, CF_ARGV("/bin/sh", "-c", (char *)script));
	cf_fx_env_free(env);
}

/* Finding 9, self mode: CREDFENCE_LOG in a writable location. */
Test(escapes, log_in_a_writable_location_is_refused_in_self_mode)
{
	char ws[PATH_MAX + 32], log[PATH_MAX + 32];
	cf_fx_fmt(ws, sizeof ws, "CREDFENCE_WORKSPACE=%s", fx.ws);
	cf_fx_fmt(log, sizeof log, "CREDFENCE_LOG=%s/self.log", tmp);
	self_mode(fx.ws, (const char *[]){ws, log, NULL}, "echo ran");
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: the log ") && strstr(o.err, "CREDFENCE_LOG"), OUT_FMT,
		  OUT_ARGS(o));
	cr_expect(!has_line(o.out, "ran"));
	expect_file(cf_fx_at(tmp, "self.log"), NULL);
}

/* A log outside every writable location works, and takes one line. */
Test(escapes, log_outside_the_writable_locations_works)
{
	cf_test_require_landlock();
	cf_fx_mkdirs(cf_fx_at(fx.root, "logs"));
	const char *log = cf_fx_at(fx.root, "logs/ok.log");
	fenced(&o, &fx, NULL, CF_ARGV("--log", (char *)log), CF_ARGV("true"));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	char *c = cf_fx_slurp(log);
	cr_expect(c && strstr(c, "\"verdict\":\"applied\""), "%s", c ? c : "(no log)");
	free(c);
}

/* What a fenced command run in ~/.config/autostart would plant there. */
#define PLANT_AUTOSTART "echo ran; echo " WRITE_MARK " > evil.desktop"

/* The launch in AUTOSTART was refused with exactly WANT, and planted nothing. */
static void expect_plant_refused(const char *autostart, const char *want)
{
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect_str_eq(o.err, want);
	cr_expect(!has_line(o.out, "ran"));
	expect_file(cf_fx_at(autostart, "evil.desktop"), NULL);
}

/* Finding 5: the model does cd ~/.config/autostart, and the next shell that
 * loads the shim without CREDFENCE_WORKSPACE would make it the workspace. */
Test(escapes, self_mode_without_a_workspace_refuses)
{
	cf_test_require_landlock();
	const char *autostart = cf_fx_at(fx.home, ".config/autostart");
	self_mode(autostart, NULL, PLANT_AUTOSTART);
	char want[PATH_MAX * 2];
	cf_fx_fmt(want, sizeof want,
		  "credfence: read isolation is not effective: CREDFENCE_WORKSPACE is not set, so the "
		  "workspace would be the current directory %s; add `export "
		  "CREDFENCE_WORKSPACE=/path/to/project` where LD_PRELOAD is set. Nothing was run.\n",
		  autostart);
	expect_plant_refused(autostart, want);
	expect_no_write_mark();
}

/* Best effort: the fence still goes up (with the current directory), and
 * the reason is said. */
Test(escapes, self_mode_without_a_workspace_best_effort_fences_and_says_why)
{
	cf_test_require_landlock();
	const char *key = cf_fx_secret(&fx, ".ssh")->key;
	char script[PATH_MAX * 2];
	cf_fx_fmt(script, sizeof script, "cat '%s'; echo \"rc=$?\"", key);
	self_mode(fx.ws, (const char *[]){"CREDFENCE_MODE=best-effort", NULL}, script);
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "rc=1"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Permission denied"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: CREDFENCE_WORKSPACE is not set, so the workspace is the "
			      "current directory "), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);

	/* With CREDFENCE_WORKSPACE set, a dot-directory as cwd is no matter. */
	cf_fx_out_free(&o);
	char ws[PATH_MAX + 32];
	cf_fx_fmt(ws, sizeof ws, "CREDFENCE_WORKSPACE=%s", fx.ws);
	cf_fx_fmt(script, sizeof script, "echo ok > '%s/made'; cat '%s'; echo \"rc=$?\"", fx.ws, key);
	self_mode(cf_fx_at(fx.home, ".config/autostart"), (const char *[]){ws, NULL}, script);
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "rc=1") && strstr(o.err, "Permission denied"), OUT_FMT,
		  OUT_ARGS(o));
	/* cat's own line, after the shim's notice of the denial (issue 24). */
	const char *rest = o.err;
	if (strncmp(rest, "credfence: denied read of ~/.ssh/", 33) == 0)
		rest += strcspn(rest, "\n") + 1;
	cr_expect_str_eq(rest + strcspn(rest, "\n") + 1, "", "one line: %s", o.err);
	expect_file(cf_fx_at(fx.ws, "made"), "ok\n");
	cf_fx_assert_no_marker(&fx, &o);
}

/* `credfence VERB --home H [OPTS...] -- CMD...` in DIR (no --workspace
 * unless OPTS has one: cf_fx_credfence would add it), with ENV_EXTRA. */
static void credfence_in(const char *verb, const char *dir, const char *const *env_extra,
			 char *const opts[], char *const cmd[])
{
	static struct argvb b;
	b.n = 0;
	argvb_add(&b, "%s", cf_fx_bin());
	argvb_add(&b, "%s", verb);
	argvb_add(&b, "--home");
	argvb_add(&b, "%s", fx.home);
	for (int i = 0; opts && opts[i]; i++)
		argvb_add(&b, "%s", opts[i]);
	argvb_add(&b, "--");
	for (int i = 0; cmd[i]; i++)
		argvb_add(&b, "%s", cmd[i]);
	char **env = cf_fx_env(&fx, env_extra);
	cf_fx_run(&o, dir, env, NULL, b.v);
	cf_fx_env_free(env);
}

/* `credfence run` in DIR without --workspace. */
static void run_in(const char *dir, char *const opts[], const char *script)
{
	credfence_in("run", dir, NULL, opts, CF_ARGV("/bin/sh", "-c", (char *)script));
}

/* Finding 5: `credfence run` from a home dot-directory. */
Test(escapes, run_from_a_home_dot_directory_refuses)
{
	cf_test_require_landlock();
	const char *autostart = cf_fx_at(fx.home, ".config/autostart");
	run_in(autostart, NULL, PLANT_AUTOSTART);
	char want[PATH_MAX * 3];
	cf_fx_fmt(want, sizeof want,
		  "credfence: read isolation is not effective: the workspace %s is the current "
		  "directory and lies in the home dot-directory %s/.config; cd to your project "
		  "directory, or pass --workspace DIR. Nothing was run.\n",
		  autostart, fx.home);
	expect_plant_refused(autostart, want);

	/* ~/.config itself holds secrets: refused as an overlap. */
	cf_fx_out_free(&o);
	run_in(cf_fx_at(fx.home, ".config"), NULL, "echo ran");
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "overlaps secret"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!has_line(o.out, "ran"));

	/* So does the home. */
	cf_fx_out_free(&o);
	run_in(fx.home, NULL, "echo ran");
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(!has_line(o.out, "ran"));

	/* An explicit --workspace is the user's choice. */
	cf_fx_out_free(&o);
	run_in(autostart, CF_ARGV("--workspace", "."), "echo ran");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "ran"));
}

/* `credfence harness` in DIR with OPTS, running SCRIPT with SHELL, with ENV_EXTRA. */
static void harness_in(const char *shell, const char *dir, const char *const *env_extra,
		       char *const opts[], const char *script)
{
	credfence_in("harness", dir, env_extra, opts, CF_ARGV((char *)shell, "-c", (char *)script));
}

/* Finding 8: a relative --deny is made absolute once, at start. The harness
 * then changes directory and touches its home, so that its next fork
 * rebuilds the plan: a relative path would be taken from "/" then. */
Test(escapes, relative_paths_are_exported_absolute_by_the_harness)
{
	cf_test_require_landlock();
	char key[PATH_MAX], text[256];
	cf_fx_fmt(key, sizeof key, "%s/keys/prod.key", fx.root);
	cf_fx_fmt(text, sizeof text, "%s-prod-key\n", fx.tag);
	cf_fx_write(key, text);
	cf_fx_mkdirs(cf_fx_at(fx.root, "logs"));
	cf_fx_mkdirs(cf_fx_at(fx.root, "extra"));
	char script[PATH_MAX * 3];
	cf_fx_fmt(script, sizeof script,
		  "echo \"DENY=$CREDFENCE_DENY\"; echo \"WRITABLE=$CREDFENCE_WRITABLE\"; "
		  "echo \"WS=$CREDFENCE_WORKSPACE\"; echo \"LOG=$CREDFENCE_LOG\"; "
		  "cd /; : > \"$HOME/harness-was-here\"; cat '%s'; echo \"rc=$?\"; echo done",
		  key);
	/* bash forks (dash would vfork, and a vfork child keeps the plan). */
	harness_in("/bin/bash", fx.ws, NULL,
		   CF_ARGV("--workspace", ".", "--deny", "../keys/prod.key", "--writable", "../extra",
			   "--log", "../logs/h.log"),
		   script);
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "DENY=%s/../keys/prod.key", fx.ws), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "WRITABLE=%s/../extra", fx.ws), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "WS=%s", fx.ws), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "LOG=%s/logs/h.log", fx.root), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "rc=1"), "the key was read: " OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Permission denied"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "done"));
	cf_fx_assert_no_marker(&fx, &o);
}

/* Finding 10: LD_PRELOAD holds the shim's path as a substring only. */
Test(escapes, preload_holding_the_shim_path_as_a_substring_still_gets_the_shim)
{
	cf_test_require_landlock();
	char pre[PATH_MAX + 32];
	cf_fx_fmt(pre, sizeof pre, "LD_PRELOAD=%s.old", shim());
	const char *key = cf_fx_secret(&fx, ".ssh")->key;
	char script[PATH_MAX * 2];
	cf_fx_fmt(script, sizeof script, "echo \"LD=$LD_PRELOAD\"; cat '%s'; echo \"rc=$?\"; echo done",
		  key);
	harness_in("/bin/sh", fx.ws, (const char *[]){pre, NULL}, CF_ARGV("--workspace", fx.ws), script);
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	/* The harness puts the shim beside the credfence under test first. */
	cr_expect(has_line(o.out, "LD=%s/lib/libcredfence.so:%s.old", fx.root, shim()), OUT_FMT,
		  OUT_ARGS(o));
	cr_expect(has_line(o.out, "rc=1"), "the child was not fenced: " OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Permission denied"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

/* Finding 10: a static harness loads no shim; its children would run
 * unfenced. Required mode refuses to start it. */
Test(escapes, static_harness_is_refused)
{
	const char *bb = cf_test_require_tool("/bin/busybox");
	const char *key = cf_fx_secret(&fx, ".ssh")->key;
	char script[PATH_MAX * 2];
	cf_fx_fmt(script, sizeof script, "echo ran; %s cat '%s'; echo done", bb, key);
	credfence_in("harness", fx.ws, NULL, CF_ARGV("--workspace", fx.ws),
		     CF_ARGV((char *)bb, "sh", "-c", script));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	char want[PATH_MAX * 2];
	cf_fx_fmt(want, sizeof want, "credfence: harness: %s is statically linked", bb);
	cr_expect(strncmp(o.err, want, strlen(want)) == 0, "want: %s\n" OUT_FMT, want, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Nothing was run."), "%s", o.err);
	cr_expect(!has_line(o.out, "ran"));
	cf_fx_assert_no_marker(&fx, &o);
}

/* The current directory reached through a symlink that lies in a writable
 * location: the shell's $PWD shows it, and run refuses, so a fenced program
 * that retargeted the symlink can not choose what the next run makes
 * writable. */
Test(escapes, run_from_a_symlinked_current_directory_is_refused)
{
	cf_test_require_landlock();
	char target[PATH_MAX + 16], link[PATH_MAX + 16], pwd[PATH_MAX + 16];
	cf_fx_fmt(target, sizeof target, "%s/elsewhere", fx.root);
	cf_fx_mkdirs(target);
	/* In /tmp, a writable location of every fence (a fixture's own
	 * directories are not, unless named). */
	cf_fx_fmt(link, sizeof link, "/tmp/cf-link-%s", fx.tag);
	cr_assert_eq(symlink(target, link), 0, "symlink %s: %s", link, strerror(errno));
	cf_fx_fmt(pwd, sizeof pwd, "PWD=%s", link);
	char **env = cf_fx_env(&fx, (const char *[]){pwd, NULL});
	cf_fx_run(&o, link, env, NULL,
		  CF_ARGV((char *)cf_fx_bin(), "run", "--home", fx.home, "--", "/bin/sh", "-c",
			  "echo planted > planted.txt"));
	cf_fx_env_free(env);
	unlink(link);
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "is reached through symlink"), OUT_FMT, OUT_ARGS(o));
	cr_expect_neq(access(cf_fx_at(target, "planted.txt"), F_OK), 0, "the target was written");
}

/* A relative CREDFENCE_WORKSPACE would be taken from each process's own
 * directory: self mode refuses it. */
Test(escapes, self_mode_refuses_a_relative_workspace)
{
	cf_test_require_landlock();
	self_mode(fx.ws, (const char *[]){"CREDFENCE_WORKSPACE=.", NULL}, "echo ran");
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "CREDFENCE_WORKSPACE='.' is relative"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "ran"), OUT_FMT, OUT_ARGS(o));
}
