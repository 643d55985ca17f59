/* A denial explains itself (issue 24): a dynamic program refused a secret or
 * a write outside the writable locations gets one line on its own stderr,
 * once per path per process, naming the row and the option that would allow
 * it; a successful read gets none; --quiet-denials none; a static program
 * none (the documented absence). The secret's content and a secret
 * variable's value never appear. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "paths.h"
#include "secrets.h"
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

TestSuite(shim_denials, .init = setup, .fini = teardown, .timeout = 240 * CF_TIMEOUT_SCALE);

#define NOTICE "credfence: denied "
#define FAKE_TOKEN "ghp_CFDENIALSFAKEVALUE0123456789abcdef"

/* `credfence run` of SCRIPT under sh, with OPTS before "--". */
static void run_sh(struct cf_fx_out *o, const char *const *opts, const char *script,
		   const char *const *env_extra)
{
	const char *args[32];
	size_t n = 0;
	for (size_t i = 0; opts && opts[i]; i++)
		args[n++] = opts[i];
	args[n++] = "--";
	args[n++] = "/bin/sh";
	args[n++] = "-c";
	args[n++] = script;
	args[n] = NULL;
	const char *extra[16];
	size_t k = 0;
	char keyv[PATH_MAX + 16], allowv[PATH_MAX + 64], probev[PATH_MAX + 32];
	snprintf(keyv, sizeof keyv, "CF_T_KEY=%s", t.key);
	snprintf(allowv, sizeof allowv, "CF_T_ALLOWED=%s", t.allowed);
	snprintf(probev, sizeof probev, "CF_T_DENYPROBE=%s", st_build("tests/shim/cf-denyprobe"));
	extra[k++] = keyv;
	extra[k++] = allowv;
	extra[k++] = probev;
	extra[k++] = "GITHUB_TOKEN=" FAKE_TOKEN;
	for (size_t i = 0; env_extra && env_extra[i]; i++)
		extra[k++] = env_extra[i];
	extra[k] = NULL;
	cf_fx_credfence(o, &t.fx, "run", extra, (char *const *)args);
}

/* KEY (a path under the fake home) as the notice shows it: ~/... */
static const char *tilde(const char *key)
{
	static char b[PATH_MAX + 2];
	size_t n = strlen(t.fx.home);
	cr_assert(strncmp(key, t.fx.home, n) == 0);
	snprintf(b, sizeof b, "~%s", key + n);
	return b;
}

/* The notice lines of O's stderr about KEY. */
static size_t notices_of(const struct cf_fx_out *o, const char *key)
{
	char want[PATH_MAX + 64];
	snprintf(want, sizeof want, "read of %s (", tilde(key));
	size_t n = 0;
	for (const char *p = o->err; (p = strstr(p, NOTICE)); p++) {
		const char *eol = strchr(p, '\n');
		const char *w = strstr(p, want);
		if (w && (!eol || w < eol))
			n++;
	}
	return n;
}

static void assert_clean(const struct cf_fx_out *o)
{
	cf_fx_assert_no_marker(&t.fx, o);
	cr_expect_null(strstr(o->out, FAKE_TOKEN), "a secret variable's value in stdout");
	cr_expect_null(strstr(o->err, FAKE_TOKEN), "a secret variable's value in stderr");
}

Test(shim_denials, each_row_from_cat)
{
	char script[64 * 1024];
	size_t n = 0;
	for (size_t i = 0; i < t.fx.n; i++)
		n += (size_t)snprintf(script + n, sizeof script - n, "cat '%s' >/dev/null\n",
				      t.fx.s[i].key);
	snprintf(script + n, sizeof script - n, "cat \"$CF_T_ALLOWED\"\n");
	struct cf_fx_out o;
	run_sh(&o, (const char *[]){"--log", t.log, NULL}, script, NULL);
	st_dump("cat of every row", &o);
	/* And one denied line a row in the log, the supervisor's. */
	char *log = cf_fx_slurp(t.log);
	cr_assert(log, "no log");
	cr_expect_eq(st_count(log, "\"event\":\"denied\""), t.fx.n, "one denied line a row:\n%s", log);
	for (size_t i = 0; i < t.fx.n; i++) {
		char want[PATH_MAX + 64];
		snprintf(want, sizeof want, "\"path\":\"%s\",\"access\":\"read\"", t.fx.s[i].key);
		cr_expect_eq(st_count(log, want), 1, "row %s: no denied line", t.fx.s[i].rel);
		cr_expect_null(strstr(log, t.fx.s[i].marker), "a marker in the log");
	}
	free(log);
	cr_expect(strstr(o.out, ST_ALLOWED_TEXT), "the allowed read failed");
	for (size_t i = 0; i < t.fx.n; i++) {
		const char *key = t.fx.s[i].key;
		cr_expect_eq(notices_of(&o, key), 1, "row %s: %zu notices for %s", t.fx.s[i].rel,
			     notices_of(&o, key), key);
		/* The row's words: some table row holding the key. */
		bool named = false;
		for (size_t r = 0; r < cf_secret_count && !named; r++) {
			char rowpath[PATH_MAX * 2], line[PATH_MAX * 3];
			snprintf(rowpath, sizeof rowpath, "%s/%s", t.fx.home, cf_secret_table[r].rel);
			if (!cf_path_within(key, rowpath))
				continue;
			snprintf(line, sizeof line, "read of %s (%s); to allow: --allow-read %s, or see: "
				 "credfence check %s\n", tilde(key), cf_secret_table[r].holds,
				 tilde(key), tilde(key));
			named = strstr(o.err, line) != NULL;
		}
		cr_expect(named, "row %s: no notice naming its row and --allow-read", t.fx.s[i].rel);
	}
	cr_expect_eq(st_count(o.err, NOTICE), t.fx.n, "one notice a row, none for the allowed file");
	assert_clean(&o);
	cf_fx_out_free(&o);
}

/* One notice for the key (else WHY_KEY), one for OTHER (else WHY_OTHER),
 * nothing else, and nothing secret in the output. */
static void expect_two_notices(const struct cf_fx_out *o, const struct cf_fx_secret *other,
			       const char *why_key, const char *why_other)
{
	cr_expect_eq(notices_of(o, t.key), 1, "%s", why_key);
	cr_expect_eq(notices_of(o, other->key), 1, "%s", why_other);
	cr_expect_eq(st_count(o->err, NOTICE), 2, "nothing else");
	assert_clean(o);
}

Test(shim_denials, c_open_twice_fopen_stat_and_a_successful_read)
{
	const struct cf_fx_secret *other = cf_fx_secret(&t.fx, ".aws/credentials");
	char script[PATH_MAX * 3];
	snprintf(script, sizeof script, "\"$CF_T_DENYPROBE\" \"$CF_T_KEY\" '%s' \"$CF_T_ALLOWED\"",
		 other->key);
	struct cf_fx_out o;
	run_sh(&o, NULL, script, NULL);
	st_dump("C probe", &o);
	/* errno as the real call left it. */
	cr_expect(strstr(o.out, "open EACCES\n"), "open");
	cr_expect(strstr(o.out, "openat-again EACCES\n"), "openat");
	cr_expect(strstr(o.out, "fopen EACCES\n"), "fopen");
	cr_expect(strstr(o.out, "open-allowed OK\n"), "the allowed open");
	expect_two_notices(&o, other, "two opens of one path: one notice", "fopen: one notice");
	cf_fx_out_free(&o);
}

/* What the shim of a fenced program leaves to the first call (the policy
 * of a denial's notice, the real spawn calls) works when that call comes
 * first from a fork child or a thread: each first denial explains itself
 * once, and system, posix_spawnp and popen run (issue 22). */
Test(shim_denials, first_calls_from_a_fork_child_and_a_thread)
{
	const struct cf_fx_secret *other = cf_fx_secret(&t.fx, ".aws/credentials");
	char script[PATH_MAX * 3];
	snprintf(script, sizeof script, "\"$CF_T_DENYPROBE\" late \"$CF_T_KEY\" '%s'", other->key);
	struct cf_fx_out o;
	run_sh(&o, NULL, script, NULL);
	st_dump("late probe", &o);
	cr_expect_eq(o.status, 0, "the probe failed");
	cr_expect(strstr(o.out, "fork-open EACCES\n"), "the fork child's open");
	cr_expect(strstr(o.out, "fork-system 7\n"), "system() in a fork child");
	cr_expect(strstr(o.out, "thread-open EACCES\n"), "the thread's open");
	cr_expect(strstr(o.out, "thread-spawn 5\n"), "posix_spawnp from a thread");
	cr_expect(strstr(o.out, "thread-popen popened 0\n"), "popen from a thread");
	expect_two_notices(&o, other, "the fork child's denial: one notice",
			   "the thread's denial: one notice");
	cf_fx_out_free(&o);
}

Test(shim_denials, python_node_and_git)
{
	/* The tool's path is in a static buffer: each is copied. */
	char py[PATH_MAX], node[PATH_MAX], git[PATH_MAX];
	snprintf(py, sizeof py, "%s", cf_test_require_tool("/usr/bin/python3"));
	snprintf(node, sizeof node, "%s", cf_test_require_tool("node"));
	snprintf(git, sizeof git, "%s", cf_test_require_tool("git"));
	const struct cf_fx_secret *npmrc = cf_fx_secret(&t.fx, ".npmrc");
	const struct cf_fx_secret *gitc = cf_fx_secret(&t.fx, ".git-credentials");
	char script[PATH_MAX * 6];
	snprintf(script, sizeof script,
		 "'%s' -c 'import sys; open(sys.argv[1])' \"$CF_T_KEY\"; echo py=$?\n"
		 "'%s' -e 'require(\"fs\").readFileSync(process.argv[1])' '%s'; "
		 "echo node=$?\n"
		 "'%s' config -f '%s' --list; echo git=$?\n",
		 py, node, npmrc->key, git, gitc->key);
	struct cf_fx_out o;
	run_sh(&o, NULL, script, NULL);
	st_dump("python, node, git", &o);
	cr_expect(strstr(o.out, "py=1"), "python read the key");
	cr_expect(strstr(o.out, "node=1"), "node read .npmrc");
	cr_expect(!strstr(o.out, "git=0"), "git read .git-credentials");
	cr_expect_eq(notices_of(&o, t.key), 1, "python: one notice");
	cr_expect_eq(notices_of(&o, npmrc->key), 1, "node: one notice");
	cr_expect_eq(notices_of(&o, gitc->key), 1, "git: one notice");
	assert_clean(&o);
	cf_fx_out_free(&o);
}

Test(shim_denials, a_write_outside_names_writable)
{
	char script[PATH_MAX * 2], target[PATH_MAX + 32];
	snprintf(target, sizeof target, "%s/outside.txt", t.fx.root);
	snprintf(script, sizeof script, "echo x > '%s'; echo rc=$?; echo y > ok.txt", target);
	struct cf_fx_out o;
	run_sh(&o, NULL, script, NULL);
	st_dump("a write outside", &o);
	cr_expect(strstr(o.out, "rc=") && !strstr(o.out, "rc=0"), "the write outside succeeded");
	char want[PATH_MAX + 128];
	snprintf(want, sizeof want, NOTICE "write of %s (outside every writable location); to "
		 "allow: --writable DIR", target);
	cr_expect_eq(st_count(o.err, want), 1, "one notice for the write outside");
	cr_expect_eq(st_count(o.err, NOTICE), 1, "none for the write in the workspace");
	cf_fx_out_free(&o);
}

/* credfence's state directory follows an absolute XDG_STATE_HOME (as
 * cli/tmpdir.c places it): a denied write there is said to be credfence's
 * own, with no option to allow it, and one in ~/.local/state/credfence,
 * which is then not credfence's, is an ordinary write outside. */
Test(shim_denials, a_write_in_the_state_dir_of_xdg_state_home_is_credfences_own)
{
	char state[PATH_MAX + 8], env[PATH_MAX + 32];
	snprintf(state, sizeof state, "%s/state", t.fx.root);
	cf_fx_mkdirs(cf_fx_at(state, "credfence"));
	cf_fx_mkdirs(cf_fx_at(t.fx.home, ".local/state/credfence"));
	snprintf(env, sizeof env, "XDG_STATE_HOME=%s", state);
	const char *script = "echo x > \"$XDG_STATE_HOME/credfence/planted\"; echo state=$?; "
			     "echo x > ~/.local/state/credfence/planted; echo home=$?";
	struct cf_fx_out o;
	run_sh(&o, NULL, script, (const char *[]){env, NULL});
	st_dump("writes in the state directories", &o);
	cr_expect(strstr(o.out, "state=") && !strstr(o.out, "state=0"), "the state write succeeded");
	cr_expect(strstr(o.out, "home=") && !strstr(o.out, "home=0"), "the home write succeeded");
	char want[PATH_MAX + 256];
	snprintf(want, sizeof want, NOTICE "write of %s/credfence/planted (credfence's own state); "
		 "no fenced command may write there, and no option changes that\n", state);
	cr_expect_eq(st_count(o.err, want), 1, "one notice saying it is credfence's own:\n%s", o.err);
	snprintf(want, sizeof want, NOTICE "write of ~/.local/state/credfence/planted (outside "
		 "every writable location); to allow: --writable DIR");
	cr_expect_eq(st_count(o.err, want), 1, "one notice naming --writable:\n%s", o.err);
	cr_expect_eq(st_count(o.err, NOTICE), 2, "two notices in all:\n%s", o.err);
	cf_fx_out_free(&o);
}

/* A terminal under /dev/pts that the command does not hold: --writable can
 * not open it (no writable location lies in /dev/pts); --allow-ptys does. */
Test(shim_denials, a_write_to_a_pty_names_allow_ptys)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC); /* held here only */
	cr_assert(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0, "no pty: %s", strerror(errno));
	char pts[64], script[160];
	cr_assert(ptsname_r(m, pts, sizeof pts) == 0);
	snprintf(script, sizeof script, "echo x > '%s'; echo rc=$?", pts);
	struct cf_fx_out o;
	run_sh(&o, NULL, script, NULL);
	st_dump("a write to a pty", &o);
	cr_expect(strstr(o.out, "rc=") && !strstr(o.out, "rc=0"), "the write to %s succeeded", pts);
	char want[512];
	snprintf(want, sizeof want, NOTICE "write of %s (a terminal under /dev/pts that the command "
		 "did not open); to allow: --allow-ptys, or see: credfence check %s\n", pts, pts);
	cr_expect_eq(st_count(o.err, want), 1, "one notice naming --allow-ptys:\n%s", o.err);
	cr_expect_null(strstr(o.err, "--writable"), "the notice names --writable");
	cf_fx_out_free(&o);
	close(m);
}

Test(shim_denials, quiet_denials_option_and_twin)
{
	struct cf_fx_out o;
	run_sh(&o, (const char *[]){"--quiet-denials", NULL}, "cat \"$CF_T_KEY\"; echo rc=$?", NULL);
	st_dump("--quiet-denials", &o);
	cr_expect(strstr(o.out, "rc=1"), "the key was read");
	cr_expect(strstr(o.err, "Permission denied"), "cat's own message is there");
	cr_expect_null(strstr(o.err, NOTICE), "--quiet-denials still wrote a notice");
	cf_fx_out_free(&o);

	run_sh(&o, NULL, "cat \"$CF_T_KEY\"; echo rc=$?",
	       (const char *[]){"CREDFENCE_QUIET_DENIALS=1", NULL});
	cr_expect(strstr(o.out, "rc=1"), "the key was read");
	cr_expect_null(strstr(o.err, NOTICE), "CREDFENCE_QUIET_DENIALS=1 still wrote a notice");
	cf_fx_out_free(&o);
}

Test(shim_denials, a_static_program_gets_no_notice)
{
	const char *bb = cf_test_require_tool("/bin/busybox");
	char script[PATH_MAX * 2];
	snprintf(script, sizeof script, "'%s' cat \"$CF_T_KEY\"; echo rc=$?", bb);
	struct cf_fx_out o;
	run_sh(&o, NULL, script, NULL);
	st_dump("static busybox", &o);
	cr_expect(strstr(o.out, "rc=1"), "busybox read the key");
	/* The documented absence (SECURITY.md): no shim in a static program. */
	cr_expect_null(strstr(o.err, NOTICE), "a static program wrote a notice");
	assert_clean(&o);
	cf_fx_out_free(&o);
}

Test(shim_denials, under_the_harness_children_explain_the_harness_does_not)
{
	struct cf_fx_out o;
	char **env = st_env(&t, NULL);
	st_harness(&o, &t, env, NULL,
		   CF_ARGV("/bin/bash", "-c",
			   "cat \"$CF_T_KEY\"; echo child=$?\n"
			   "k=$(< \"$CF_T_KEY\") && echo harness=0 || echo harness=1\n"));
	cf_fx_env_free(env);
	st_dump("harness", &o);
	cr_expect(strstr(o.out, "child=1"), "the child read the key");
	cr_expect(strstr(o.out, "harness=1"), "the harness read the key");
	cr_expect_eq(notices_of(&o, t.key), 1, "the child's notice, and none from the harness");
	assert_clean(&o);
	cf_fx_out_free(&o);

	/* credfence harness exports --quiet-denials to the children. */
	env = st_env(&t, NULL);
	st_harness(&o, &t, env, (const char *[]){"--quiet-denials", NULL},
		   CF_ARGV("/bin/bash", "-c", "cat \"$CF_T_KEY\"; echo child=$?; true"));
	cf_fx_env_free(env);
	cr_expect(strstr(o.out, "child=1"), "the child read the key");
	cr_expect_null(strstr(o.err, NOTICE), "--quiet-denials under the harness:\n%s", o.err);
	cf_fx_out_free(&o);
}

/* Lines of the log at LOG holding NEEDLE, and every "denied" line. */
static size_t log_count(const char *log, const char *needle)
{
	FILE *f = fopen(log, "r");
	if (!f)
		return 0;
	char line[16384];
	size_t n = 0;
	while (fgets(line, sizeof line, f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

Test(shim_denials, one_log_line_a_path_judged_by_the_supervisor)
{
	struct cf_fx_out o;
	run_sh(&o, (const char *[]){"--log", t.log, "--quiet-denials", NULL},
	       "cat \"$CF_T_KEY\"; cat \"$CF_T_KEY\"; \"$CF_T_DENYPROBE\" \"$CF_T_KEY\" \"$CF_T_KEY\" "
	       "\"$CF_T_ALLOWED\"", NULL);
	st_dump("log", &o);
	cr_expect_null(strstr(o.err, NOTICE), "--quiet-denials wrote a notice");
	char *log = cf_fx_slurp(t.log);
	cr_assert(log, "no log");
	char want[PATH_MAX * 3];
	snprintf(want, sizeof want, "\"path\":\"%s\",\"access\":\"read\",\"row\":"
		 "\"SSH private keys, known hosts and config\",\"allow\":\"--allow-read %s\"}",
		 t.key, t.key);
	cr_expect_eq(st_count(log, "\"event\":\"denied\""), 1,
		     "one denied line for one path, whoever read it, quiet or not:\n%s", log);
	cr_expect_eq(st_count(log, want), 1, "the line names the row and the option:\n%s", log);
	cr_expect(strstr(log, "\"program\":\"/usr/bin/cat\""), "the program:\n%s", log);
	cr_expect_null(strstr(log, FAKE_TOKEN));
	for (size_t i = 0; i < t.fx.n; i++)
		cr_expect_null(strstr(log, t.fx.s[i].marker), "a marker in the log");
	free(log);
	cf_fx_out_free(&o);
}

Test(shim_denials, a_forged_report_logs_nothing)
{
	struct cf_fx_out o;
	char script[PATH_MAX * 4];
	/* Not denied by the fence: a readable system file, a file of its own
	 * made unreadable, a write in the workspace, and a secret reached
	 * through "..", which the supervisor does not judge. */
	snprintf(script, sizeof script,
		 "echo x > own.txt; chmod 000 own.txt\n"
		 "\"$CF_T_DENYPROBE\" forge read /etc/hostname \"$PWD/own.txt\" '%s/../home/.ssh'\n"
		 "\"$CF_T_DENYPROBE\" forge write \"$PWD/own.txt\" \"$PWD/new.txt\"\n",
		 t.fx.ws);
	run_sh(&o, (const char *[]){"--log", t.log, NULL}, script, NULL);
	st_dump("forged", &o);
	cr_expect_eq(st_count(o.out, "forge EPERM\n"), 5, "the supervisor answers every report");
	cr_expect_eq(log_count(t.log, "\"event\":\"denied\""), 0, "a forged report was logged");
	cr_expect_eq(log_count(t.log, "sandbox_status"), 1, "the run was not logged");
	cf_fx_out_free(&o);
}

/* A fenced process forging reports by the thousand (more than the 1 023
 * paths that used to fill the run's table) does not silence the real
 * denial of another process that comes after: each process has a budget
 * of its own (issue 31), the forger's excess is dropped with one line. */
Test(shim_denials, a_flood_of_forged_reports_does_not_silence_a_later_real_denial)
{
	struct cf_fx_out o;
	run_sh(&o, (const char *[]){"--log", t.log, NULL},
	       "set -- ; i=0; while [ $i -lt 1100 ]; do set -- \"$@\" \"$HOME/.aws/flood-$i\"; "
	       "i=$((i+1)); done\n"
	       "\"$CF_T_DENYPROBE\" forge read \"$@\" | sort | uniq -c\n"
	       "cat \"$CF_T_KEY\"; echo cat=$?\n",
	       NULL);
	st_dump("flood, then a real denial", &o);
	cr_expect(strstr(o.out, "cat=1"), "the read was not refused");
	cr_expect_eq(notices_of(&o, t.key), 1, "the real denial was not explained:\n%s", o.err);
	char *log = cf_fx_slurp(t.log);
	cr_assert(log, "no log");
	char want[PATH_MAX * 2];
	snprintf(want, sizeof want, "\"program\":\"/usr/bin/cat\",\"path\":\"%s\",\"access\":\"read\"",
		 t.key);
	cr_expect_eq(st_count(log, want), 1, "the real denial was not logged:\n%.3000s", log);
	cr_expect_eq(st_count(log, "\"event\":\"denials_dropped\""), 1, "the drop was not said");
	cr_expect_eq(st_count(log, "\"event\":\"denied\""), 128 + 1,
		     "one budget of forged lines, and the real one");
	cr_expect_null(strstr(log, t.fx.tag), "a marker in the log");
	assert_clean(&o);
	free(log);
	cf_fx_out_free(&o);
}

/* A run says a path once, not once a process: npm reads ~/.npmrc at every
 * start, and a notice at each would bury the output. The supervisor keeps
 * the count (with or without a log); each process still says it when the
 * supervisor answers that it is the first. */
Test(shim_denials, a_run_says_a_path_once_whoever_reads_it)
{
	struct cf_fx_out o;
	run_sh(&o, NULL,
	       "cat \"$CF_T_KEY\"; cat \"$CF_T_KEY\"; /bin/sh -c 'cat \"$CF_T_KEY\"'; "
	       "/usr/bin/python3 -c 'import os; open(os.environ[\"CF_T_KEY\"])'", NULL);
	st_dump("four processes read one key", &o);
	cr_expect_eq(notices_of(&o, t.key), 1, "%zu notices for one path in one run",
		     notices_of(&o, t.key));
	cr_expect(strstr(o.err, "Permission denied"), "the reads were not refused");
	assert_clean(&o);
	cf_fx_out_free(&o);
}

/* ---- write protection (issue 23): a refused write of a protected path ---- */

/* A git repository in DIR, made outside the fence. */
static void git_init_in(const char *dir)
{
	char home[PATH_MAX + 8];
	snprintf(home, sizeof home, "HOME=%s", t.fx.home);
	struct cf_fx_out o;
	cf_fx_run(&o, dir, (char *const[]){home, "PATH=/usr/bin:/bin", NULL}, NULL,
		  CF_ARGV("git", "init", "-q", "."));
	cr_assert_eq(o.status, 0, "git init: %s", o.err);
	cf_fx_out_free(&o);
}

/* A git repository in the workspace. */
static void git_repo(void)
{
	git_init_in(t.fx.ws);
}

/* The notice of a refused write of DIR/FILE, a protected path of ROW that
 * --allow-write-protected DIR/ALLOW would allow (a static buffer). */
static const char *protected_notice(const char *dir, const char *file, const char *row,
				    const char *allow)
{
	static char b[3 * PATH_MAX + 256];
	snprintf(b, sizeof b,
		 NOTICE "write of %s/%s (runs unfenced later: %s); to allow: "
		 "--allow-write-protected %s/%s, or see: credfence check %s/%s\n",
		 dir, file, row, dir, allow, dir, file);
	return b;
}

#define GIT_CONFIG_ROW "git config (core.fsmonitor, core.hooksPath, aliases)"

Test(shim_denials, a_protected_write_names_the_row_and_logs_once)
{
	git_repo();
	char *before = cf_fx_slurp(cf_fx_at(t.fx.ws, ".git/config"));
	cr_assert(before);
	struct cf_fx_out o;
	run_sh(&o, (const char *[]){"--log", t.log, NULL},
	       "git config user.name x; echo git=$?\n"
	       "sh -c 'echo x > .git/hooks/pre-commit'; echo hook=$?\n"
	       "git config user.name y; echo again=$?\n"
	       "chmod 777 .git/config; echo x > src.txt; echo src=$?\n",
	       NULL);
	st_dump("protected writes", &o);
	cr_expect(strstr(o.out, "git=") && !strstr(o.out, "git=0\n"), "git config wrote");
	cr_expect(strstr(o.out, "hook=") && !strstr(o.out, "hook=0\n"), "the hook was written");
	cr_expect(strstr(o.out, "src=0\n"), "a workspace file was refused");
	char want[3 * PATH_MAX + 256];
	cr_expect_eq(st_count(o.err, protected_notice(t.fx.ws, ".git/config", GIT_CONFIG_ROW,
						      ".git/config")),
		     1, "one notice for .git/config:\n%s", o.err);
	cr_expect_eq(st_count(o.err, protected_notice(t.fx.ws, ".git/hooks/pre-commit", "git hooks",
						      ".git/hooks")),
		     1, "one notice for the hook:\n%s", o.err);
	cr_expect_eq(st_count(o.err, NOTICE), 2, "two notices in all:\n%s", o.err);
	cr_expect(strstr(o.err, "Device or resource busy"), "git's own EBUSY is there");
	/* Nothing changed. */
	char *after = cf_fx_slurp(cf_fx_at(t.fx.ws, ".git/config"));
	cr_expect(after && strcmp(before, after) == 0, ".git/config changed");
	struct stat st;
	cr_expect(lstat(cf_fx_at(t.fx.ws, ".git/hooks/pre-commit"), &st) != 0, "a hook was made");
	char *log = cf_fx_slurp(t.log);
	cr_assert(log, "no log");
	cr_expect_eq(st_count(log, "\"event\":\"write_protected\""), 2, "two lines:\n%s", log);
	snprintf(want, sizeof want,
		 "\"program\":\"/usr/bin/git\",\"path\":\"%s/.git/config\",\"row\":\"" GIT_CONFIG_ROW
		 "\",\"allow\":\"--allow-write-protected %s/.git/config\"}\n", t.fx.ws, t.fx.ws);
	cr_expect_eq(st_count(log, want), 1, "the .git/config line:\n%s", log);
	snprintf(want, sizeof want,
		 "\"path\":\"%s/.git/hooks/pre-commit\",\"row\":\"git hooks\",\"allow\":"
		 "\"--allow-write-protected %s/.git/hooks\"}\n", t.fx.ws, t.fx.ws);
	cr_expect_eq(st_count(log, want), 1, "the hook's line:\n%s", log);
	cr_expect_eq(st_count(log, "\"event\":\"denied\""), 0, "a denied line:\n%s", log);
	free(log);
	free(before);
	free(after);
	assert_clean(&o);
	cf_fx_out_free(&o);
}

/* A project two levels below the workspace is a project root only because
 * the run started in it (on the way to the working directory,
 * common/project_root.c): the supervisor judges a refused write there by
 * the run's working directory, which reaches it in the blob beside the
 * home and the account's home (this fixture's HOME is never the account's
 * own), and logs it as the hook it is. */
Test(shim_denials, a_protected_write_in_a_project_below_the_workspace_is_logged)
{
	char proj[PATH_MAX + 8];
	snprintf(proj, sizeof proj, "%s/a/b", t.fx.ws);
	cf_fx_mkdirs(proj);
	git_init_in(proj);
	struct cf_fx_out o;
	char **env = st_env(&t, NULL);
	cf_fx_run(&o, proj, env, NULL,
		  CF_ARGV((char *)cf_fx_bin(), "run", "--home", t.fx.home, "--workspace", t.fx.ws,
			  "--log", t.log, "--", "/bin/sh", "-c",
			  "sh -c 'echo x > .git/hooks/pre-commit'; echo hook=$?"));
	cf_fx_env_free(env);
	st_dump("a protected write below the workspace", &o);
	cr_expect(strstr(o.out, "hook=") && !strstr(o.out, "hook=0\n"), "the hook was written");
	struct stat st;
	cr_expect(lstat(cf_fx_at(proj, ".git/hooks/pre-commit"), &st) != 0, "a hook was made");
	cr_expect_eq(st_count(o.err, protected_notice(proj, ".git/hooks/pre-commit", "git hooks",
						      ".git/hooks")),
		     1, "one notice for the hook:\n%s", o.err);
	char want[3 * PATH_MAX + 256];
	char *log = cf_fx_slurp(t.log);
	cr_assert(log, "no log");
	snprintf(want, sizeof want,
		 "\"path\":\"%s/.git/hooks/pre-commit\",\"row\":\"git hooks\",\"allow\":"
		 "\"--allow-write-protected %s/.git/hooks\"}\n", proj, proj);
	cr_expect_eq(st_count(log, "\"event\":\"write_protected\""), 1, "one line:\n%s", log);
	cr_expect_eq(st_count(log, want), 1, "the hook's line:\n%s", log);
	free(log);
	assert_clean(&o);
	cf_fx_out_free(&o);
}

/* A metadata change alone of a protected path (chmod, chown: EROFS from the
 * read-only mount) is explained as its write would be, once, and the path
 * keeps its mode. Above, a write comes first and says the path. */
Test(shim_denials, a_protected_metadata_change_alone_is_explained)
{
	git_repo();
	struct stat before, after;
	cr_assert_eq(stat(cf_fx_at(t.fx.ws, ".git/config"), &before), 0);
	struct cf_fx_out o;
	run_sh(&o, NULL,
	       "chmod 777 .git/config; echo chmod=$?\n"
	       "chown 0:0 .git/config; echo chown=$?\n",
	       NULL);
	st_dump("a protected chmod", &o);
	cr_expect(strstr(o.out, "chmod=1\n") && strstr(o.out, "chown=1\n"),
		  "a metadata change was not refused:\n%s", o.out);
	cr_expect_eq(st_count(o.err, "Read-only file system"), 2, "not the read-only mount:\n%s",
		     o.err);
	cr_expect_eq(st_count(o.err, protected_notice(t.fx.ws, ".git/config", GIT_CONFIG_ROW,
						      ".git/config")),
		     1, "one notice for .git/config:\n%s", o.err);
	cr_expect_eq(st_count(o.err, NOTICE), 1, "one notice in all:\n%s", o.err);
	cr_assert_eq(stat(cf_fx_at(t.fx.ws, ".git/config"), &after), 0);
	cr_expect_eq(after.st_mode, before.st_mode, "the mode changed");
	assert_clean(&o);
	cf_fx_out_free(&o);
}

/* Files PREFIX1..PREFIXn in the workspace's .git/hooks, which the
 * read-only mount holds. */
static void make_hooks(char prefix, int n)
{
	for (int i = 1; i <= n; i++) {
		char p[PATH_MAX + 32];
		snprintf(p, sizeof p, "%s/.git/hooks/%c%d", t.fx.ws, prefix, i);
		cf_fx_write(p, "#!/bin/sh\n");
	}
}

/* PY, fenced in the workspace, makes each of CALLS (Python: a list of
 * (name, call) over libc, AT and h, the hooks directory) and prints its
 * result and errno. */
static void run_libc_calls(struct cf_fx_out *o, const char *py, const char *calls)
{
	char script[PATH_MAX + 1024];
	snprintf(script, sizeof script,
		 "%s - <<'EOF'\n"
		 "import ctypes\n"
		 "libc = ctypes.CDLL(None, use_errno=True)\n"
		 "AT = -100\n"
		 "h = b'.git/hooks/'\n"
		 "%s"
		 "for name, call in calls:\n"
		 "    print(name, call(), ctypes.get_errno())\n"
		 "EOF\n",
		 py, calls);
	run_sh(o, NULL, script, NULL);
}

/* CALL was refused with EROFS, and the hook FILE it named explained once. */
static void expect_hook_refused(const struct cf_fx_out *o, const char *call, const char *file)
{
	char want[64], path[32];
	snprintf(want, sizeof want, "%s -1 %d\n", call, EROFS);
	cr_expect(strstr(o->out, want), "%s was not refused with EROFS:\n%s", call, o->out);
	snprintf(path, sizeof path, ".git/hooks/%s", file);
	cr_expect_eq(st_count(o->err, protected_notice(t.fx.ws, path, "git hooks", ".git/hooks")), 1,
		     "one notice for %s:\n%s", call, o->err);
}

/* A rename inside a protected directory (EROFS: one read-only mount; from
 * outside it the kernel says EXDEV and mv copies instead) is explained
 * whichever of the three calls makes it (rename, renameat, renameat2), both
 * paths once. */
Test(shim_denials, a_protected_rename_by_each_call_is_explained)
{
	const char *py = cf_test_require_tool("/usr/bin/python3");
	git_repo();
	make_hooks('s', 3);
	struct cf_fx_out o;
	run_libc_calls(&o, py,
		       "calls = [('rename', lambda: libc.rename(h + b's1', h + b'h1')),\n"
		       "         ('renameat', lambda: libc.renameat(AT, h + b's2', AT, h + b'h2')),\n"
		       "         ('renameat2', lambda: libc.renameat2(AT, h + b's3', AT, h + b'h3', 0))]\n");
	st_dump("protected renames", &o);
	expect_hook_refused(&o, "rename", "h1");
	expect_hook_refused(&o, "renameat", "h2");
	expect_hook_refused(&o, "renameat2", "h3");
	cr_expect_eq(st_count(o.err, NOTICE), 6, "both sides of each, once:\n%s", o.err);
	assert_clean(&o);
	cf_fx_out_free(&o);
}

/* A change of a protected file's times (EROFS: the read-only mount) is
 * explained by each call that makes one by path (utimes, utime; touch
 * uses utimensat), once (seed 41's denied.c:771: the explanation after
 * utimes removed). */
Test(shim_denials, a_protected_times_change_by_each_call_is_explained)
{
	const char *py = cf_test_require_tool("/usr/bin/python3");
	git_repo();
	make_hooks('t', 2);
	struct cf_fx_out o;
	run_libc_calls(&o, py,
		       "calls = [('utimes', lambda: libc.utimes(h + b't1', None)),\n"
		       "         ('utime', lambda: libc.utime(h + b't2', None))]\n");
	st_dump("protected times", &o);
	expect_hook_refused(&o, "utimes", "t1");
	expect_hook_refused(&o, "utime", "t2");
	cr_expect_eq(st_count(o.err, NOTICE), 2, "one notice each:\n%s", o.err);
	assert_clean(&o);
	cf_fx_out_free(&o);
}

/* A submodule sm in the workspace (a git repository): its git directory
 * .git/modules/sm, which no name of the table covers; the plan finds its
 * config and hooks from .git (common/git_layout.h). */
static void git_submodule(void)
{
	git_repo();
	char home[PATH_MAX + 8];
	snprintf(home, sizeof home, "HOME=%s", t.fx.home);
	struct cf_fx_out o;
	cf_fx_run(&o, t.fx.ws, (char *const[]){home, "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", NULL},
		  NULL,
		  CF_ARGV("/bin/sh", "-c",
			  "set -e; g='git -c user.name=u -c user.email=u@x -c protocol.file.allow=always'; "
			  "$g init -q ../sm-src && $g -C ../sm-src commit -q --allow-empty -m s && "
			  "$g submodule -q add ../sm-src sm && test -f .git/modules/sm/config"));
	cr_assert_eq(o.status, 0, "the submodule: %s", o.err);
	cf_fx_out_free(&o);
}

/* A file the plan found, not a name of the table (a submodule's config and
 * hooks): its refused write is explained and logged as a table row's is,
 * with the row the plan gave it; a git config that writes the bytes the
 * file has goes through without a word (shim/linux/denied.c). */
Test(shim_denials, a_protected_write_of_a_file_git_names_is_explained)
{
	git_submodule();
	struct cf_fx_out o;
	run_sh(&o, (const char *[]){"--log", t.log, NULL},
	       "c=.git/modules/sm/config\n"
	       "git config -f $c core.worktree ../../../elsewhere; echo git=$?\n"
	       "sh -c 'echo x > .git/modules/sm/hooks/pre-commit'; echo hook=$?\n"
	       "git config -f $c core.worktree \"$(git config -f $c core.worktree)\"; echo same=$?\n",
	       NULL);
	st_dump("protected writes of found files", &o);
	cr_expect(strstr(o.out, "git=") && !strstr(o.out, "git=0\n"), "git config wrote");
	cr_expect(strstr(o.out, "hook=") && !strstr(o.out, "hook=0\n"), "the hook was written");
	cr_expect(strstr(o.out, "same=0\n"), "the same bytes were refused:\n%s", o.err);
	char want[3 * PATH_MAX + 256];
	cr_expect_eq(st_count(o.err, protected_notice(t.fx.ws, ".git/modules/sm/config",
						      GIT_CONFIG_ROW, ".git/modules/sm/config")),
		     1, "one notice for the config:\n%s", o.err);
	cr_expect_eq(st_count(o.err, protected_notice(t.fx.ws, ".git/modules/sm/hooks/pre-commit",
						      "git hooks", ".git/modules/sm/hooks")),
		     1, "one notice for the hook:\n%s", o.err);
	cr_expect_eq(st_count(o.err, NOTICE), 2, "two notices in all:\n%s", o.err);
	char *log = cf_fx_slurp(t.log);
	cr_assert(log);
	snprintf(want, sizeof want,
		 "\"path\":\"%s/.git/modules/sm/config\",\"row\":\"" GIT_CONFIG_ROW "\"", t.fx.ws);
	cr_expect_eq(st_count(log, want), 1, "%s", log);
	snprintf(want, sizeof want,
		 "\"path\":\"%s/.git/modules/sm/hooks/pre-commit\",\"row\":\"git hooks\","
		 "\"allow\":\"--allow-write-protected %s/.git/modules/sm/hooks\"",
		 t.fx.ws, t.fx.ws);
	cr_expect_eq(st_count(log, want), 1, "%s", log);
	cr_expect_eq(st_count(log, "\"event\":\"write_protected\""), 2, "%s", log);
	free(log);
	assert_clean(&o);
	cf_fx_out_free(&o);
}

/* The supervisor answered each of N forged reports with EPERM, judged the
 * one after "next" (WHICH) as real, and logged that one alone: one line
 * ending in LOGGED, no denied line. */
static void expect_forged_then_real(const struct cf_fx_out *o, size_t n, const char *which,
				    const char *logged)
{
	cr_expect_eq(st_count(o->out, "forge EPERM\n"), n, "the supervisor answers each:\n%s", o->out);
	cr_expect(strstr(o->out, "next\nforge OK\n"), "%s is judged so:\n%s", which, o->out);
	char *log = cf_fx_slurp(t.log);
	cr_assert(log);
	cr_expect_eq(st_count(log, "\"event\":\"write_protected\""), 1, "%s", log);
	cr_expect_eq(st_count(log, logged), 1, "%s", log);
	cr_expect_eq(st_count(log, "\"event\":\"denied\""), 0, "%s", log);
	free(log);
}

/* The supervisor believes a report's row only for a path it sees held by a
 * read-only mount in the caller's namespace: a forged one for a file of the
 * submodule's git directory that is not held, for the workspace, outside
 * it, or with a row number past the table, logs nothing; one for a held
 * file is logged (it says no more than a real write would). */
Test(shim_denials, a_forged_row_of_a_file_not_held_logs_nothing)
{
	git_submodule();
	struct cf_fx_out o;
	run_sh(&o, (const char *[]){"--log", t.log, NULL},
	       "\"$CF_T_DENYPROBE\" forge write-row 1 \"$PWD/.git/modules/sm/HEAD\" "
	       "\"$PWD/.git/modules/sm/objects/x\" \"$PWD/new.txt\" \"$PWD/sm/new.txt\"\n"
	       "\"$CF_T_DENYPROBE\" forge write-row 100000 \"$PWD/.git/modules/sm/hooks/a\"\n"
	       "\"$CF_T_DENYPROBE\" forge write-row 0 \"$PWD/.git/modules/sm/hooks/b\"\n"
	       "echo next\n"
	       "\"$CF_T_DENYPROBE\" forge write-row 1 \"$PWD/.git/modules/sm/hooks/forged\"\n",
	       NULL);
	st_dump("forged rows", &o);
	expect_forged_then_real(&o, 6, "a held path", "/.git/modules/sm/hooks/forged\"");
	cf_fx_out_free(&o);
}

/* The supervisor judges by the table, not the caller's word: a forged report
 * of a path inside the workspace that no row covers logs nothing; one that a
 * row covers is logged (it says no more than a real write would). */
Test(shim_denials, a_forged_write_report_of_no_protected_path_logs_nothing)
{
	git_repo();
	struct cf_fx_out o;
	run_sh(&o, (const char *[]){"--log", t.log, NULL},
	       "mkdir -p deep/er/.git\n"
	       "\"$CF_T_DENYPROBE\" forge write \"$PWD/deep/er/.git/config\" \"$PWD/.git/configx\" "
	       "\"$PWD/.gitx/hooks/a\" \"$PWD/.git/objects/x\" \"$PWD/.git/../.git/config\"\n"
	       "echo next\n"
	       "\"$CF_T_DENYPROBE\" forge write \"$PWD/.git/hooks/forged\"\n",
	       NULL);
	st_dump("forged writes", &o);
	expect_forged_then_real(&o, 5, "a protected path", "/.git/hooks/forged\"");
	cf_fx_out_free(&o);
}

/* An option given on credfence run's command line alone reaches the shim's
 * judge in CMD (as twins): a --deny X read is explained too. */
Test(shim_denials, a_deny_given_to_run_is_explained)
{
	char dir[PATH_MAX + 16], file[PATH_MAX + 32], script[PATH_MAX + 64];
	snprintf(dir, sizeof dir, "%s/private", t.fx.root);
	snprintf(file, sizeof file, "%s/notes.txt", dir);
	cf_fx_write(file, "CF-PRIVATE-MARKER\n");
	snprintf(script, sizeof script, "cat '%s'; echo rc=$?", file);
	struct cf_fx_out o;
	run_sh(&o, (const char *[]){"--deny", dir, NULL}, script, NULL);
	st_dump("--deny", &o);
	cr_expect(strstr(o.out, "rc=1"), "the denied file was read");
	cr_expect_null(strstr(o.out, "CF-PRIVATE-MARKER"), "its content came out");
	char want[3 * PATH_MAX];
	snprintf(want, sizeof want, NOTICE "read of %s (", file);
	cr_expect_eq(st_count(o.err, want), 1, "one notice for the --deny path:\n%s", o.err);
	snprintf(want, sizeof want, "to allow: --allow-read %s, or see: credfence check %s\n", file,
		 file);
	cr_expect_eq(st_count(o.err, want), 1, "naming --allow-read:\n%s", o.err);
	assert_clean(&o);
	cf_fx_out_free(&o);
}

/* A refused connect to gpg-agent's socket names --allow-socket with its
 * path (issue 36); one to another socket outside gets no line (programs try
 * nscd's and D-Bus's sockets and do without); with --allow-socket the
 * connect works and nothing is said. The sockets listen in the fixture's
 * root, outside every writable location. */
Test(shim_denials, a_refused_gpg_agent_socket_names_allow_socket)
{
	cf_test_require_tool("python3");
	char gpg[PATH_MAX + 32], other[PATH_MAX + 32], script[4 * PATH_MAX];
	cf_fx_fmt(gpg, sizeof gpg, "%s/gnupg/S.gpg-agent", t.fx.root);
	cf_fx_fmt(other, sizeof other, "%s/gnupg/other.sock", t.fx.root);
	cf_fx_mkdirs(cf_fx_at(t.fx.root, "gnupg"));
	int s[2];
	for (int i = 0; i < 2; i++) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		const char *p = i ? other : gpg;
		cr_assert(strlen(p) < sizeof a.sun_path, "%s: too long for a socket's name", p);
		memcpy(a.sun_path, p, strlen(p) + 1);
		s[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		cr_assert(s[i] >= 0 && bind(s[i], (struct sockaddr *)&a, sizeof a) == 0 &&
				  listen(s[i], 8) == 0,
			  "%s: %s", a.sun_path, strerror(errno));
	}
	cf_fx_fmt(script, sizeof script,
		  "python3 -c 'import socket, sys\n"
		  "for p in sys.argv[1:]:\n"
		  "    s = socket.socket(socket.AF_UNIX)\n"
		  "    try:\n"
		  "        s.connect(p); print(\"connected\", p)\n"
		  "    except OSError as e:\n"
		  "        print(\"refused\", p, e.errno)' '%s' '%s'",
		  gpg, other);
	struct cf_fx_out o;
	run_sh(&o, NULL, script, NULL);
	st_dump("connect, no option", &o);
	char want[3 * PATH_MAX];
	cf_fx_fmt(want, sizeof want, "credfence: denied connect to %s (gpg-agent); to allow: "
		  "--allow-socket %s\n", gpg, gpg);
	cr_expect(strstr(o.out, "refused") && !strstr(o.out, "connected"), "%s", o.out);
	cr_expect_eq(st_count(o.err, want), 1, "want once: %s\n%s", want, o.err);
	cr_expect_eq(st_count(o.err, NOTICE), 1, "a line for the other socket: %s", o.err);
	cf_fx_out_free(&o);
	run_sh(&o, (const char *[]){"--allow-socket", gpg, NULL}, script, NULL);
	st_dump("connect, --allow-socket", &o);
	cr_expect(strstr(o.out, "connected"), "%s", o.out);
	cr_expect(!strstr(o.err, NOTICE), "%s", o.err);
	cf_fx_out_free(&o);
	close(s[0]);
	close(s[1]);
}

/* Issue 36: a fenced program loads libcredfence-fenced.so (only what
 * explains a denial), not libcredfence.so, on each way in: CMD of
 * credfence run and what it starts, a harness's child, a self-mode
 * process's child; a denial two launches down is still explained. The
 * probe ($CF_T_MAPS) prints the libcredfence files mapped into its grep. */
static void expect_fenced_library(const struct cf_fx_out *o, const char *how)
{
	cr_expect(strstr(o->out, "CMD-MAPS: libcredfence-fenced.so \n") &&
			  strstr(o->out, "NESTED-MAPS: libcredfence-fenced.so \n"),
		  "%s: a fenced program did not load the fenced library alone:\n%s", how, o->out);
	cr_expect(strstr(o->out, "nested-cat=1"), "%s: the key was read: %s", how, o->out);
	cr_expect_eq(notices_of(o, t.key), 1, "%s: the nested denial is not explained:\n%s", how,
		     o->err);
	assert_clean(o);
}

Test(shim_denials, fenced_programs_load_the_library_made_for_them)
{
	static const char script[] =
		"sh \"$CF_T_MAPS\" CMD-MAPS; "
		"sh -c 'sh \"$CF_T_MAPS\" NESTED-MAPS; cat \"$CF_T_KEY\"; echo nested-cat=$?'; true";
	char maps[PATH_MAX + 16], mapsv[PATH_MAX + 32];
	cf_fx_fmt(maps, sizeof maps, "%s/maps.sh", t.fx.root);
	cf_fx_write(maps, "echo \"$1: $(grep -o 'libcredfence[-a-z]*[.]so' /proc/self/maps | sort -u "
			  "| tr '\\n' ' ')\"\n");
	cf_fx_fmt(mapsv, sizeof mapsv, "CF_T_MAPS=%s", maps);
	struct cf_fx_out o;
	run_sh(&o, NULL, script, (const char *[]){mapsv, NULL});
	st_dump("credfence run", &o);
	expect_fenced_library(&o, "credfence run");
	cf_fx_out_free(&o);

	char **env = st_env(&t, (const char *[]){mapsv, NULL});
	st_harness(&o, &t, env, NULL, CF_ARGV("/bin/bash", "-c", "/bin/sh -c \"$1\"; true", "bash",
					      (char *)script));
	cf_fx_env_free(env);
	st_dump("harness child", &o);
	expect_fenced_library(&o, "a harness child");
	cf_fx_out_free(&o);

	/* Self mode: this shell holds libcredfence.so (it fenced itself with
	 * it); what it starts gets the fenced library. */
	char pre[PATH_MAX + 16], ws[PATH_MAX + 32], home[PATH_MAX + 16];
	cf_fx_fmt(pre, sizeof pre, "LD_PRELOAD=%s", st_shim());
	cf_fx_fmt(ws, sizeof ws, "CREDFENCE_WORKSPACE=%s", t.fx.ws);
	cf_fx_fmt(home, sizeof home, "CREDFENCE_HOME=%s", t.fx.home);
	env = st_env(&t, (const char *[]){pre, ws, home, mapsv, NULL});
	cf_fx_run(&o, t.fx.ws, env, NULL, CF_ARGV("/bin/sh", "-c", (char *)script));
	cf_fx_env_free(env);
	st_dump("self mode", &o);
	expect_fenced_library(&o, "self mode");
	cf_fx_out_free(&o);
}

/* The judge (libcredfence-judge.so) is loaded at a fenced program's first
 * denial, not at its start (issue 36: what a start pays for is the fenced
 * library alone): a shell that met none maps the fenced library only; the
 * same shell after a refused read maps the judge too, and said the
 * denial. */
Test(shim_denials, the_judge_is_loaded_at_the_first_denial_only)
{
	static const char script[] =
		"m() { grep -o 'libcredfence[-a-z]*[.]so' /proc/$$/maps | sort -u | tr '\\n' ' '; }\n"
		"echo \"BEFORE: $(m)\"\n"
		"true < \"$CF_T_KEY\"; echo read=$?\n"
		"echo \"AFTER: $(m)\"\n";
	struct cf_fx_out o;
	run_sh(&o, NULL, script, NULL);
	st_dump("the judge's load", &o);
	cr_expect(strstr(o.out, "BEFORE: libcredfence-fenced.so \n"), "%s", o.out);
	cr_expect(strstr(o.out, "read=2\n") || strstr(o.out, "read=1\n"), "the read: %s", o.out);
	cr_expect(strstr(o.out, "AFTER: libcredfence-fenced.so libcredfence-judge.so \n"), "%s",
		  o.out);
	cr_expect_eq(notices_of(&o, t.key), 1, "the denial was not explained:\n%s", o.err);
	assert_clean(&o);
	cf_fx_out_free(&o);
}

/* Installed without the judge beside it (a partial copy), fenced programs
 * load libcredfence.so itself, which has the judge linked in: denials are
 * still explained, never silently dropped. */
Test(shim_denials, without_the_judge_fenced_programs_load_the_whole_shim)
{
	char judge[PATH_MAX];
	cf_fx_fmt(judge, sizeof judge, "%s/lib/libcredfence-judge.so", t.fx.root);
	cr_assert(access(judge, R_OK) == 0, "the fixture has no judge at %s", judge);
	cr_assert(unlink(judge) == 0);
	static const char script[] =
		"echo \"MAPS: $(grep -o 'libcredfence[-a-z]*[.]so' /proc/self/maps | sort -u | "
		"tr '\\n' ' ')\"\n"
		"cat \"$CF_T_KEY\"; echo cat=$?\n";
	struct cf_fx_out o;
	run_sh(&o, NULL, script, NULL);
	st_dump("no judge installed", &o);
	cr_expect(strstr(o.out, "MAPS: libcredfence.so \n"), "%s", o.out);
	cr_expect(strstr(o.out, "cat=1\n"), "%s", o.out);
	cr_expect_eq(notices_of(&o, t.key), 1, "the denial was not explained:\n%s", o.err);
	assert_clean(&o);
	cf_fx_out_free(&o);
}
