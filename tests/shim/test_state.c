/* --harness-state DIR (issue 11): a harness's own state directory that its
 * fenced children write (Claude Code's Bash tool writes its shell snapshot in
 * ~/.claude/shell-snapshots) is made writable for them, and only such a one:
 * a directory that holds or lies in a secret (~/.claude holds
 * .credentials.json) or a file the free harness trusts (its settings, hooks,
 * plugins) is refused, and nothing runs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shimtest.h"

static struct st t;
static char claude[PATH_MAX + 16], cred_marker[64];

static void setup(void)
{
	st_setup(&t);
	snprintf(claude, sizeof claude, "%s/.claude", t.fx.home);
	cf_fx_mkdirs(cf_fx_at(claude, "shell-snapshots"));
	snprintf(cred_marker, sizeof cred_marker, "%s-claude-token", t.fx.tag);
	char text[128];
	snprintf(text, sizeof text, "{\"token\": \"%s\"}\n", cred_marker);
	cf_fx_write(cf_fx_at(claude, ".credentials.json"), text);
	cf_fx_write(cf_fx_at(claude, "settings.json"), "{}\n");
}

static void teardown(void)
{
	st_teardown(&t);
}

TestSuite(shim_state, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

static void run(struct cf_fx_out *o, const char *const *extra, const char *const *opts)
{
	char **env = st_env(&t, extra);
	st_harness(o, &t, env, opts, CF_ARGV("/bin/bash", (char *)st_src("scripts/state_harness.sh")));
	cf_fx_env_free(env);
	st_dump("state harness", o);
}

static void assert_state_writable(const struct cf_fx_out *o)
{
	cr_expect_eq(o->status, 0);
	cr_expect(strstr(o->out, "STATE-WRITE-OK"), "the child could not write the shell snapshot");
	struct stat st;
	cr_expect(stat(cf_fx_at(claude, "shell-snapshots/snapshot-bash-1.sh"), &st) == 0);
	cr_expect(!strstr(o->out, "SETTINGS-WRITE-OK"), "a child rewrote the harness's settings");
	cr_expect(!strstr(o->out, "CRED-READ-OK"), "a child read the harness's login token");
	cr_expect(!strstr(o->out, cred_marker) && !strstr(o->err, cred_marker));
	cr_expect(st_count_denied(o->out) >= 2);
	char *s = cf_fx_slurp(cf_fx_at(claude, "settings.json"));
	cr_expect_str_eq(s, "{}\n");
	free(s);
}

/* Without it, the snapshot is denied (the test can fail). */
Test(shim_state, snapshot_denied_without)
{
	struct cf_fx_out o;
	run(&o, NULL, NULL);
	cr_expect_eq(o.status, 0);
	cr_expect(!strstr(o.out, "STATE-WRITE-OK"), "the snapshot was writable without --harness-state");
	cr_expect(strstr(o.out, "HARNESS-RAN"));
	cf_fx_out_free(&o);
}

Test(shim_state, snapshot_dir_option)
{
	struct cf_fx_out o;
	run(&o, NULL, (const char *const[]){"--harness-state", cf_fx_at(claude, "shell-snapshots"), NULL});
	assert_state_writable(&o);
	cf_fx_out_free(&o);
}

Test(shim_state, snapshot_dir_twin)
{
	char twin[PATH_MAX + 64];
	snprintf(twin, sizeof twin, "CREDFENCE_HARNESS_STATE=%s/shell-snapshots", claude);
	struct cf_fx_out o;
	run(&o, (const char *const[]){twin, NULL}, NULL);
	assert_state_writable(&o);
	cf_fx_out_free(&o);
}

static void assert_refused(const char *const *extra, const char *dir, const char *words)
{
	struct cf_fx_out o;
	run(&o, extra, (const char *const[]){"--harness-state", dir, NULL});
	cr_expect_eq(o.status, 125, "--harness-state %s: exit %d", dir, o.status);
	cr_expect(strstr(o.err, "credfence: "), "no credfence message");
	cr_expect(strstr(o.err, words), "the message does not say '%s'", words);
	cr_expect(strstr(o.err, "Nothing was run."));
	cr_expect(!strstr(o.out, "HARNESS-RAN"), "the harness ran");
	cf_fx_out_free(&o);
}

/* ~/.claude holds the login token. */
Test(shim_state, holds_secret)
{
	assert_refused(NULL, claude, "holds secret");
}

/* Claude Code's settings hold hooks and the environment the free harness
 * gives itself; opencode runs the plugins of its configuration directory. */
Test(shim_state, trusted_files)
{
	cf_fx_mkdirs(cf_fx_at(claude, "plugins/x"));
	assert_refused(NULL, cf_fx_at(claude, "plugins/x"), "lies in");
	assert_refused(NULL, cf_fx_at(claude, "plugins"), "is ");
	assert_refused(NULL, cf_fx_at(claude, "plugins"), "which Claude Code trusts");
	char oc[PATH_MAX + 32];
	snprintf(oc, sizeof oc, "%s/.config/opencode", t.fx.home);
	cf_fx_mkdirs(oc);
	assert_refused(NULL, oc, "which opencode trusts");
	char gem[PATH_MAX + 32];
	snprintf(gem, sizeof gem, "%s/.gemini", t.fx.home);
	cf_fx_mkdirs(gem);
	assert_refused(NULL, gem, "holds");
}

/* Where CLAUDE_CONFIG_DIR moves it, the same. */
Test(shim_state, moved_config_dir)
{
	char moved[PATH_MAX + 32], env[PATH_MAX + 64];
	snprintf(moved, sizeof moved, "%s/cc", t.fx.home);
	cf_fx_mkdirs(cf_fx_at(moved, "state"));
	snprintf(env, sizeof env, "CLAUDE_CONFIG_DIR=%s", moved);
	assert_refused((const char *const[]){env, NULL}, moved, "holds secret");
	cf_fx_write(cf_fx_at(moved, "settings.json"), "{}\n");
	/* cc/state holds neither, cc does */
	struct cf_fx_out o;
	run(&o, (const char *const[]){env, NULL},
	    (const char *const[]){"--harness-state", cf_fx_at(moved, "state"), NULL});
	cr_expect_eq(o.status, 0);
	cf_fx_out_free(&o);
}

Test(shim_state, missing_dir)
{
	assert_refused(NULL, cf_fx_at(claude, "session-env"), "does not exist");
}
