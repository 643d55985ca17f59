/* What a free harness writes and then loads must not be writable by fenced
 * programs (issue 11): `credfence harness` gives the harness a private
 * TMPDIR, outside every writable location, removed at its end, and each
 * fenced child the user's TMPDIR back. The fake harness
 * (scripts/tmpdir_harness.sh) writes a library there as opencode's Bun does
 * and loads it; its fenced children race it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

TestSuite(shim_tmpdir, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

static const char *const attacks[] = {"CHILD-PLANTED",     "CHILD-LINKED",   "CHILD-MOVED",
				      "CHILD-MADE-BESIDE", "CHILD-REPLACED", "CHILD-REMOVED",
				      "CHILD-WROTE-BGPIDS"};

/* Each notice of a denied write in the private directory says that it is
 * credfence's own and names no option (issue 36: Gemini CLI's shell was
 * told to allow it with --writable DIR), one line a path. */
static void expect_own_notices(const char *out, const char *priv)
{
	char rel[PATH_MAX + 2], want[PATH_MAX + 64];
	const char *home = t.fx.home;
	size_t hn = strlen(home);
	snprintf(rel, sizeof rel, "%s%s", strncmp(priv, home, hn) == 0 ? "~" : "",
		 strncmp(priv, home, hn) == 0 ? priv + hn : priv);
	snprintf(want, sizeof want, "credfence: denied write of %s/", rel);
	size_t seen = 0;
	for (const char *p = out; (p = strstr(p, "credfence: denied write of ")); p++) {
		size_t k = strcspn(p, "\n");
		cr_expect(!memmem(p, k, "to allow", 8) && !memmem(p, k, "--writable", 10),
			  "a notice names an option: %.*s", (int)k, p);
		if (strncmp(p, want, strlen(want)) != 0)
			continue;
		seen++;
		static const char own[] = "(the harness's own temporary directory, made by "
					  "credfence); no fenced command may write there, and no "
					  "option changes that";
		cr_expect(memmem(p, k, own, sizeof own - 1), "not said to be credfence's own: %.*s",
			  (int)k, p);
	}
	cr_expect(seen >= 2, "%zu notices of denied writes in %s", seen, rel);
	snprintf(want, sizeof want, "/bgpids.tmp (the harness's own temporary directory");
	cr_expect(st_count(out, want) == 1, "Gemini's bgpids.tmp: %zu notices", st_count(out, want));
}

/* The value of "NAME=..." on a line of OUT, into V. */
static bool line_value(const char *out, const char *name, char *v, size_t n)
{
	const char *p = strstr(out, name);
	if (!p)
		return false;
	p += strlen(name);
	size_t k = strcspn(p, "\n");
	snprintf(v, n, "%.*s", (int)(k < n ? k : n - 1), p);
	return true;
}

static void run_race(const char *const *extra, const char *want_under, const char *child_tmp)
{
	struct cf_fx_out o;
	char **env = st_env(&t, extra);
	st_harness(&o, &t, env, NULL, CF_ARGV("/bin/bash", (char *)st_src("scripts/tmpdir_harness.sh")));
	cf_fx_env_free(env);
	st_dump("tmpdir harness", &o);
	cr_assert_eq(o.status, 0, "the fake harness ended with %d", o.status);
	char priv[PATH_MAX], v[PATH_MAX];
	cr_assert(line_value(o.out, "HARNESS-TMPDIR=", priv, sizeof priv));
	cr_expect(strncmp(priv, want_under, strlen(want_under)) == 0,
		  "the harness's TMPDIR %s is not under %s", priv, want_under);
	cr_expect(strstr(o.out, "HARNESS-MODE=700\n"), "the private directory is not mode 0700");
	for (size_t i = 0; i < sizeof attacks / sizeof *attacks; i++)
		cr_expect(!strstr(o.out, attacks[i]), "a fenced child got through: %s", attacks[i]);
	cr_expect(strstr(o.out, "LOADED=HARNESS-LIB\n"), "the harness did not load its own file");
	expect_own_notices(o.out, priv);
	cr_expect(st_count_denied(o.out) >= 4, "the children's attempts were not denied");
	/* The children keep the user's TMPDIR, and may write there. */
	cr_assert(line_value(o.out, "CHILD-TMPDIR=", v, sizeof v));
	cr_expect_str_eq(v, child_tmp);
	cr_expect(strstr(o.out, "CHILD-TMP-WRITABLE"), "a child could not write its own TMPDIR");
	cr_assert(line_value(o.out, "HARNESS-CLAUDE=", v, sizeof v));
	cr_expect_str_eq(v, strcmp(child_tmp, "unset") ? child_tmp : "/tmp");
	/* Removed when the harness ended (the waiter above it did). */
	struct stat st;
	cr_expect(stat(priv, &st) != 0, "the private directory %s is still there", priv);
	cf_fx_out_free(&o);
}

Test(shim_tmpdir, race_in_state_home)
{
	char under[PATH_MAX + 64];
	snprintf(under, sizeof under, "%s/.local/state/credfence/harness-tmp.", t.fx.home);
	run_race((const char *const[]){"TMPDIR=/var/tmp", NULL}, under, "/var/tmp");
}

Test(shim_tmpdir, race_in_runtime_dir)
{
	char run[PATH_MAX + 16], env[PATH_MAX + 32], under[PATH_MAX + 32];
	snprintf(run, sizeof run, "%s/run", t.fx.root);
	cr_assert_eq(mkdir(run, 0700), 0);
	snprintf(env, sizeof env, "XDG_RUNTIME_DIR=%s", run);
	snprintf(under, sizeof under, "%s/harness-tmp.", run);
	run_race((const char *const[]){env, NULL}, under, "unset");
}

/* The places it may use are all writable to the children: it refuses, and
 * runs nothing. In best-effort mode it says so and runs. */
Test(shim_tmpdir, no_place_refused)
{
	char state[PATH_MAX + 32], flag[PATH_MAX + 32];
	snprintf(state, sizeof state, "XDG_STATE_HOME=%s/st", t.fx.ws);
	snprintf(flag, sizeof flag, "%s/harness-tmpdir", t.fx.root);
	struct cf_fx_out o;
	char **env = st_env(&t, (const char *const[]){state, "XDG_RUNTIME_DIR=/tmp", NULL});
	st_harness(&o, &t, env, NULL, CF_ARGV("/bin/bash", (char *)st_src("scripts/tmpdir_harness.sh")));
	st_dump("no place", &o);
	cr_expect_eq(o.status, 125);
	cr_expect(strstr(o.err, "credfence: harness: no place for the harness's private temporary "
				"directory"));
	cr_expect(strstr(o.err, "/tmp lies in writable location /tmp"));
	cr_expect(strstr(o.err, "Nothing was run."));
	cr_expect(access(flag, F_OK) != 0, "the harness ran");
	cf_fx_out_free(&o);

	st_harness(&o, &t, env, (const char *const[]){"--best-effort", NULL},
		   CF_ARGV("/bin/bash", (char *)st_src("scripts/tmpdir_harness.sh")));
	cf_fx_env_free(env);
	st_dump("no place, best effort", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.err, "it shares TMPDIR with the programs it starts"));
	cr_expect(access(flag, F_OK) == 0, "the harness did not run");
	cf_fx_out_free(&o);
}

/* A process that was not fenced at its launch (a static harness's child, which
 * fences itself in its constructor) takes the user's TMPDIR back for itself
 * and its children: its TMPDIR in the private directory could not be written. */
Test(shim_tmpdir, self_fenced_child_takes_tmpdir_back)
{
	char priv[PATH_MAX + 32], pre[PATH_MAX + 48], ws[PATH_MAX + 48], e1[PATH_MAX + 64],
		e2[PATH_MAX + 48];
	snprintf(priv, sizeof priv, "%s/run/harness-tmp.T", t.fx.root);
	cf_fx_mkdirs(priv);
	snprintf(pre, sizeof pre, "LD_PRELOAD=%s", st_shim());
	snprintf(ws, sizeof ws, "CREDFENCE_WORKSPACE=%s", t.fx.ws);
	snprintf(e1, sizeof e1, "CREDFENCE_HARNESS_TMPDIR=%s", priv);
	snprintf(e2, sizeof e2, "TMPDIR=%s", priv);
	char **env = st_env(&t, (const char *const[]){pre, ws, e1, e2, "CREDFENCE_CHILD_TMPDIR=/var/tmp",
						      NULL});
	struct cf_fx_out o;
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV("/bin/bash", "-c",
			  "echo \"SELF-TMPDIR=$TMPDIR\"; bash -c 'echo \"CHILD-TMPDIR=$TMPDIR\"'; "
			  "echo x > \"$CREDFENCE_HARNESS_TMPDIR/x\" && echo CHILD-WROTE-PRIVATE; "
			  "f=$(mktemp) && echo MKTEMP-OK && rm -f \"$f\""));
	cf_fx_env_free(env);
	st_dump("self-fenced", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.out, "SELF-TMPDIR=/var/tmp\n"));
	cr_expect(strstr(o.out, "CHILD-TMPDIR=/var/tmp\n"));
	cr_expect(strstr(o.out, "MKTEMP-OK"));
	cr_expect(!strstr(o.out, "CHILD-WROTE-PRIVATE"));
	cf_fx_out_free(&o);
}
