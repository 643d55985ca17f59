/* The credfence command: status, exit codes, check, the log. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "enforce_test.h"

#define PY "/usr/bin/python3"
#define ROOT_WARNING(sub) "credfence: warning: " sub ": running as root, which SECURITY.md puts out of scope"

CF_SUITE_STATE()

TestSuite(cli, .init = cf_suite_setup, .fini = cf_suite_teardown, .timeout = 60 * CF_TIMEOUT_SCALE);

/* Run /usr/bin/python3 -c CODE with INPUT on stdin; its stdout (malloc'd). */
static char *python(const char *code, const char *input)
{
	struct cf_fx_out p;
	cf_test_require_tool(PY);
	cf_fx_run(&p, NULL, NULL, input, CF_ARGV(PY, "-c", (char *)code));
	cr_assert_eq(p.status, 0, "python: %s\ninput:\n%s", p.err, input);
	free(p.err);
	return p.out;
}

Test(cli, status_json_parses_and_says_applied)
{
	cf_test_require_landlock();
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--json"));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	char *r = python("import json, sys\n"
			 "d = json.load(sys.stdin)\n"
			 "print(d['status'])\n"
			 "print(d['verdict'])\n"
			 "print('abi', d['abi'] > 0)\n"
			 "print('home', d['home'])\n"
			 "print('holds', all(x['holds'] for x in d['denied']))\n"
			 "print('denied', ' '.join(x['path'] for x in d['denied']))\n"
			 "print('writable', ' '.join(d['writable']))\n"
			 "print('rules', d['rules'] > 0)\n",
			 o.out);
	cr_expect(has_line(r, "read isolation applied"), "%s", r);
	cr_expect(has_line(r, "applied"));
	cr_expect(has_line(r, "abi True"));
	cr_expect(has_line(r, "home %s", fx.home), "%s", r);
	cr_expect(has_line(r, "holds True"));
	cr_expect(has_line(r, "rules True"));
	cr_expect(strstr(r, cf_fx_secret(&fx, ".ssh")->path), "denied lists the fake .ssh");
	cr_expect(strstr(r, fx.ws), "writable lists the workspace");
	free(r);
	cf_fx_assert_no_marker(&fx, &o);
}

/* Below ABI 5 (here by the test build's switch, or the kernel's own ABI in
 * the VM) status and run say in one line what the ABI can not express and
 * what holds it instead (README.md, "Older kernels"); from ABI 5 on nothing. */
Test(cli, an_older_abi_is_said_in_one_line)
{
	cf_test_require_landlock();
	const char *abi2[] = {"CF_TEST_LANDLOCK_ABI=2", NULL};
	cf_fx_credfence(&o, &fx, "status", abi2, NULL);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	if (!strstr(o.out, " abi=2\n"))
		cf_test_unavailable("credfence does not take CF_TEST_LANDLOCK_ABI=2 and the kernel's "
				    "ABI is not 2: a build without -Dtest_abi_switch=true");
	cr_expect(strstr(o.out, "\nolder ABI:    Landlock ABI 2: truncate() outside the writable "
				"locations is refused by the read-only mounts alone"),
		  OUT_FMT, OUT_ARGS(o));
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "run", abi2, CF_ARGV("--", "/bin/true"));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: note: Landlock ABI 2: truncate()"), OUT_FMT, OUT_ARGS(o));
	cf_fx_out_free(&o);
	const char *abi5[] = {"CF_TEST_LANDLOCK_ABI=5", NULL};
	cf_fx_credfence(&o, &fx, "status", abi5, NULL);
	if (strstr(o.out, " abi=5\n")) /* not on a kernel below 5 (the VM's 6.1) */
		cr_expect(!strstr(o.out, "older ABI:"), OUT_FMT, OUT_ARGS(o));
}

Test(cli, status_text_has_the_ci_line_and_the_verdict)
{
	cf_test_require_landlock();
	struct utsname u;
	cr_assert(uname(&u) == 0);
	cf_fx_credfence(&o, &fx, "status", NULL, NULL);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	char want[512];
	cf_fx_fmt(want, sizeof want, "credfence landlock read: kernel=%s abi=", u.release);
	cr_expect(strstr(o.out, want), "%s", o.out);
	cr_expect(has_line(o.out, "read isolation applied"), "%s", o.out);
	cr_expect(strstr(o.out, "SSH private keys"), "what .ssh holds is shown");
	cr_expect(strstr(o.out, fx.ws));
}

Test(cli, overlapping_writable_gives_the_overlap_verdict_and_125)
{
	const char *ssh = cf_fx_secret(&fx, ".ssh")->path;
	fenced(&o, &fx, NULL, CF_ARGV("--writable", (char *)ssh), CF_ARGV("sh", "-c", "echo cmd-ran"));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "cmd-ran"), "nothing may run");
	char want[PATH_MAX * 3];
	cf_fx_fmt(want, sizeof want,
		  "read isolation is not effective: writable location %s overlaps secret %s", ssh, ssh);
	cr_expect(strstr(o.err, want), "want: %s\n" OUT_FMT, want, OUT_ARGS(o));
	cr_expect(all_lines_credfence(o.err), "%s", o.err);

	/* The other direction: a writable location holding secrets. */
	cf_fx_out_free(&o);
	fenced(&o, &fx, NULL, CF_ARGV("--writable", fx.home), CF_ARGV("true"));
	cr_expect_eq(o.status, 125);
	cf_fx_fmt(want, sizeof want,
		  "read isolation is not effective: writable location %s overlaps secret %s/.aws",
		  fx.home, fx.home);
	cr_expect(strstr(o.err, want), "want: %s\n" OUT_FMT, want, OUT_ARGS(o));

	/* status says the same, and fails. */
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--writable", fx.home));
	cr_expect_neq(o.status, 0);
	cr_expect(has_line(o.out, "%s", want), OUT_FMT, OUT_ARGS(o));
}

Test(cli, bad_option_is_125_with_one_credfence_line)
{
	fenced(&o, &fx, NULL, CF_ARGV("--no-such-option"), CF_ARGV("true"));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(all_lines_credfence(o.err), "%s", o.err);
	cr_expect_eq(strchr(o.err, '\n'), o.err + strlen(o.err) - 1, "one line: %s", o.err);

	struct cf_fx_out u;
	cf_fx_run(&u, fx.ws, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), "frobnicate"));
	cr_expect_eq(u.status, 125);
	cr_expect(all_lines_credfence(u.err), "%s", u.err);
	cf_fx_out_free(&u);

	cf_fx_run(&u, fx.ws, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), "run", "--home", fx.home));
	cr_expect_eq(u.status, 125, "no command");
	cr_expect(all_lines_credfence(u.err), "%s", u.err);
	cf_fx_out_free(&u);

	const char *extra[] = {"CREDFENCE_MODE=sometimes", NULL};
	cf_fx_out_free(&o);
	fenced(&o, &fx, extra, NULL, CF_ARGV("true"));
	cr_expect_eq(o.status, 125, "a bad twin value");
	cr_expect(all_lines_credfence(o.err), "%s", o.err);
}

Test(cli, command_not_found_is_127)
{
	cf_test_require_landlock();
	fenced(&o, &fx, NULL, NULL, CF_ARGV("cf-no-such-command"));
	cr_expect_eq(o.status, 127, OUT_FMT, OUT_ARGS(o));
	cr_expect(all_lines_credfence(o.err), "%s", o.err);
	cf_fx_out_free(&o);
	fenced(&o, &fx, NULL, NULL, CF_ARGV("/no/such/dir/cmd"));
	cr_expect_eq(o.status, 127, OUT_FMT, OUT_ARGS(o));
}

Test(cli, not_executable_is_126)
{
	cf_test_require_landlock();
	const char *f = cf_fx_at(fx.ws, "script.sh");
	cf_fx_write(f, "#!/bin/sh\necho should-not-run\n");
	chmod(f, 0644);
	fenced(&o, &fx, NULL, NULL, CF_ARGV((char *)f));
	cr_expect_eq(o.status, 126, OUT_FMT, OUT_ARGS(o));
	cr_expect(all_lines_credfence(o.err), "%s", o.err);
	cr_expect(!strstr(o.out, "should-not-run"));
}

Test(cli, command_status_passes_through)
{
	cf_test_require_landlock();
	fenced(&o, &fx, NULL, NULL, CF_ARGV("sh", "-c", "exit 42"));
	cr_expect_eq(o.status, 42, OUT_FMT, OUT_ARGS(o));
	cf_fx_out_free(&o);
	fenced(&o, &fx, NULL, NULL, CF_ARGV("true"));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	/* Root gets its one warning line (see root_gets_one_warning_line). */
	const char *err = o.err;
	if (geteuid() == 0 && strncmp(err, ROOT_WARNING("run"), strlen(ROOT_WARNING("run"))) == 0)
		err += strcspn(err, "\n") + 1;
	/* And below Landlock ABI 5 its one note (an_older_abi_is_said_in_one_line). */
	if (strncmp(err, "credfence: note: Landlock ABI ", 30) == 0)
		err += strcspn(err, "\n") + 1;
	cr_expect_str_eq(err, "", "nothing said when all is well");
}

Test(cli, best_effort_runs_the_command_and_says_why)
{
	const char *ssh = cf_fx_secret(&fx, ".ssh")->path;
	fenced(&o, &fx, NULL, CF_ARGV("--best-effort", "--writable", (char *)ssh),
	       CF_ARGV("sh", "-c", "echo cmd-ran"));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "cmd-ran"));
	cr_expect(strstr(o.err, "read isolation is not effective: writable location"), "%s", o.err);
	cr_expect(all_lines_credfence(o.err), "%s", o.err);

	const char *extra[] = {"CREDFENCE_MODE=best-effort", NULL};
	cf_fx_out_free(&o);
	fenced(&o, &fx, extra, CF_ARGV("--writable", (char *)ssh), CF_ARGV("sh", "-c", "echo cmd-ran"));
	cr_expect_eq(o.status, 0, "the twin: " OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "cmd-ran"));
}

static void stamp(const char *path, struct stat *st)
{
	cr_assert(lstat(path, st) == 0, "%s: %s", path, strerror(errno));
}

static bool same_times(const struct stat *a, const struct stat *b)
{
	return a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec &&
	       a->st_nlink == b->st_nlink && a->st_size == b->st_size;
}

Test(cli, check_reports_and_leaves_no_trace)
{
	cf_test_require_landlock();
	const char *key = cf_fx_secret(&fx, ".ssh")->key;
	const char *ssh = cf_fx_secret(&fx, ".ssh")->path;
	const char *file = cf_fx_at(fx.ws, "file.txt");
	char missing[PATH_MAX];
	cf_fx_write(file, "workspace file\n");
	cf_fx_fmt(missing, sizeof missing, "%s/not-yet", fx.ws);
	const char *watch[] = {fx.ws, ssh, fx.home, key, file};
	struct stat before[5], after[5];
	sleep(0); /* times are nanoseconds; any change shows */
	for (int i = 0; i < 5; i++)
		stamp(watch[i], &before[i]);
	cf_fx_credfence(&o, &fx, "check", NULL,
			CF_ARGV((char *)key, (char *)file, (char *)ssh, missing));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "%s: file; read: denied (EACCES); write: denied (EACCES)", key),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "%s: file; read: allowed; write: allowed", file), OUT_FMT,
		  OUT_ARGS(o));
	cr_expect(strstr(o.out, ssh) && strstr(o.out, "list: denied (EACCES)"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "does not exist") && strstr(o.out, "create: allowed"), OUT_FMT,
		  OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
	for (int i = 0; i < 5; i++) {
		stamp(watch[i], &after[i]);
		cr_expect(same_times(&before[i], &after[i]), "check changed %s", watch[i]);
	}
	struct stat st;
	cr_expect(lstat(missing, &st) != 0, "check created %s", missing);
	char *c = cf_fx_slurp(file);
	cr_expect_str_eq(c, "workspace file\n");
	free(c);
}

Test(cli, log_gets_one_sandbox_status_line)
{
	cf_test_require_landlock();
	char log[PATH_MAX];
	cf_fx_fmt(log, sizeof log, "%s/log.jsonl", fx.root);
	fenced(&o, &fx, NULL, CF_ARGV("--log", log), CF_ARGV("true"));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	char *text = cf_fx_slurp(log);
	cr_assert(text, "no log written");
	cr_expect_eq(strchr(text, '\n'), text + strlen(text) - 1, "one line: %s", text);
	char *r = python("import json, sys\n"
			 "d = json.loads(sys.stdin.read())\n"
			 "for k in ('event', 'program', 'backend', 'verdict', 'reason'):\n"
			 "    print(k, d[k])\n"
			 "print('pid', type(d['pid']) is int and d['pid'] > 0)\n"
			 "print('abi', type(d['abi']) is int and d['abi'] > 0)\n"
			 "print('rules', type(d['rules']) is int and d['rules'] > 0)\n"
			 "print('denied', ' '.join(d['denied']))\n"
			 "print('writable', ' '.join(d['writable']))\n",
			 text);
	cr_expect(has_line(r, "event sandbox_status"), "%s", r);
	cr_expect(has_line(r, "program true"), "%s", r);
	cr_expect(has_line(r, "backend landlock"));
	cr_expect(has_line(r, "verdict applied"));
	cr_expect(has_line(r, "reason read isolation applied"));
	cr_expect(has_line(r, "pid True"));
	cr_expect(has_line(r, "abi True"));
	cr_expect(has_line(r, "rules True"));
	cr_expect(strstr(r, cf_fx_secret(&fx, ".ssh")->path), "%s", r);
	cr_expect(strstr(r, fx.ws));
	free(r);
	free(text);

	/* A refusal is logged too, with its reason. */
	cf_fx_out_free(&o);
	unlink(log);
	fenced(&o, &fx, NULL, CF_ARGV("--log", log, "--writable", fx.home), CF_ARGV("true"));
	cr_expect_eq(o.status, 125);
	text = cf_fx_slurp(log);
	cr_assert(text, "no log written for the refusal");
	r = python("import json, sys\n"
		   "d = json.loads(sys.stdin.read())\n"
		   "print(d['event'], '|', d['verdict'], '|', d['reason'])\n",
		   text);
	cr_expect(strstr(r, "sandbox_status | not effective | read isolation is not effective: "
			    "writable location"),
		  "%s", r);
	free(r);
	free(text);
}

Test(cli, too_many_entries_is_its_own_verdict)
{
	cf_test_require_landlock();
	/* "/" is the first ancestor and has more than three entries. */
	fenced(&o, &fx, NULL, CF_ARGV("--max-entries", "3"), CF_ARGV("sh", "-c", "echo cmd-ran"));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "cmd-ran"));
	cr_expect(strstr(o.err, "read isolation is not effective: too many entries under / (") &&
			  strstr(o.err, " > 3)"),
		  OUT_FMT, OUT_ARGS(o));
	const char *extra[] = {"CREDFENCE_MAX_ENTRIES=3", NULL};
	cf_fx_out_free(&o);
	fenced(&o, &fx, extra, CF_ARGV("--best-effort"), CF_ARGV("sh", "-c", "echo cmd-ran"));
	cr_expect_eq(o.status, 0, "the twin, best effort: " OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "cmd-ran"));
	cr_expect(strstr(o.err, " > 3)"), "%s", o.err);
}

/* Input that can only be a mistake is refused before anything runs (issue
 * 12, items 2 and 4): exit 125, one line naming the option and its twin. */
Test(cli, mistaken_input_is_refused_before_anything_runs)
{
	char file[PATH_MAX + 16], ran[PATH_MAX + 16], cmd[PATH_MAX * 2], longp[PATH_MAX + 64];
	cf_fx_fmt(file, sizeof file, "%s/a-file", fx.ws);
	cf_fx_write(file, "x\n");
	cf_fx_fmt(ran, sizeof ran, "%s/ran", fx.ws);
	cf_fx_fmt(cmd, sizeof cmd, "echo ran > '%s'", ran);
	memset(longp, 'a', sizeof longp - 1);
	longp[0] = '/';
	longp[sizeof longp - 1] = '\0';
	struct {
		const char *opt, *val, *env, *says;
	} cases[] = {
		{"--home", "/nonexistent-cf/hom", NULL, "--home (CREDFENCE_HOME) '/nonexistent-cf/hom' does not exist"},
		{"--home", "", NULL, "--home (CREDFENCE_HOME) is empty"},
		{"--home", "relative/home", NULL, "is relative; give an absolute path"},
		{"--home", longp, NULL, "longer than PATH_MAX (ENAMETOOLONG)"},
		{NULL, NULL, "CREDFENCE_HOME=/nonexistent-cf/hom", "--home (CREDFENCE_HOME) '/nonexistent-cf/hom'"},
		{"--workspace", file, NULL, "is not a directory"},
		{"--workspace", "/nonexistent-cf/ws", NULL, "does not exist"},
		{"--deny", "", NULL, "--deny (CREDFENCE_DENY) has an empty entry"},
		{"--writable", "/nonexistent-cf/w", NULL, "--writable (CREDFENCE_WRITABLE) '/nonexistent-cf/w' does not exist (No such file or directory)"},
		{NULL, NULL, "CREDFENCE_WRITABLE=/nonexistent-cf/w2", "--writable (CREDFENCE_WRITABLE) '/nonexistent-cf/w2' does not exist"},
		{"--log", "", NULL, "--log (CREDFENCE_LOG) is empty"},
		{"--max-entries", "99999999999999999999", NULL, "--max-entries takes a positive number"},
		{NULL, NULL, "CREDFENCE_MAX_ENTRIES= 10", "CREDFENCE_MAX_ENTRIES=' 10' is not valid"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *av[16];
		size_t n = 0;
		av[n++] = (char *)cf_fx_bin();
		av[n++] = "run";
		if (cases[i].opt) {
			av[n++] = (char *)cases[i].opt;
			av[n++] = (char *)cases[i].val;
		}
		const char *opt = cases[i].opt ? cases[i].opt : cases[i].env;
		if (strncmp(opt, "--home", 6) != 0 && strncmp(opt, "CREDFENCE_HOME", 14) != 0) {
			av[n++] = "--home";
			av[n++] = fx.home;
		}
		if (strncmp(opt, "--workspace", 11) != 0) {
			av[n++] = "--workspace";
			av[n++] = fx.ws;
		}
		av[n++] = "--";
		av[n++] = "/bin/sh";
		av[n++] = "-c";
		av[n++] = cmd;
		av[n] = NULL;
		char **env = cf_fx_env(&fx, (const char *[]){cases[i].env, NULL});
		cf_fx_out_free(&o);
		unlink(ran);
		cf_fx_run(&o, fx.ws, env, NULL, av);
		cf_fx_env_free(env);
		cr_expect_eq(o.status, 125, "case %zu (%s): exit %d\n%s", i, cases[i].says, o.status,
			     o.err);
		cr_expect(strstr(o.err, cases[i].says), "case %zu: want '%s' in:\n%s", i, cases[i].says,
			  o.err);
		cr_expect(strncmp(o.err, "credfence: ", 11) == 0, "case %zu: %s", i, o.err);
		cr_expect_neq(access(ran, F_OK), 0, "case %zu: the command ran", i);
	}
}

/* Each command has its own usage (issue 12, item 8); an unknown topic is an
 * error. */
Test(cli, per_command_help)
{
	const char *names[] = {"run", "harness", "status", "check"};
	for (size_t i = 0; i < 4; i++) {
		char want[64];
		cf_fx_fmt(want, sizeof want, "usage: credfence %s ", names[i]);
		cf_fx_out_free(&o);
		cf_fx_run(&o, fx.ws, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), "help", (char *)names[i]));
		cr_expect_eq(o.status, 0, "help %s: %d %s", names[i], o.status, o.err);
		cr_expect(strncmp(o.out, want, strlen(want)) == 0, "help %s:\n%s", names[i], o.out);
		cr_expect(strstr(o.out, "--workspace DIR"), "help %s has no options", names[i]);
		cf_fx_out_free(&o);
		cf_fx_run(&o, fx.ws, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), (char *)names[i], "--help"));
		cr_expect_eq(o.status, 0);
		cr_expect(strncmp(o.out, want, strlen(want)) == 0, "%s --help:\n%s", names[i], o.out);
	}
	cf_fx_out_free(&o);
	cf_fx_run(&o, fx.ws, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), "help", "frob"));
	cr_expect_eq(o.status, 125);
	cr_expect(strstr(o.err, "credfence: no help for 'frob'"), "%s", o.err);
	cr_expect_eq(o.out[0], '\0', "stdout: %s", o.out);
}

/* `credfence harness` with OPTS, then "--" and CMD, in the workspace. */
static void harness(char *const opts[], char *const cmd[])
{
	static struct argvb b;
	b.n = 0;
	for (int i = 0; opts && opts[i]; i++)
		argvb_add(&b, "%s", opts[i]);
	argvb_add(&b, "--");
	for (int i = 0; cmd[i]; i++)
		argvb_add(&b, "%s", cmd[i]);
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "harness", NULL, b.v);
}

/* Issue 12, item 6: a shell given -c runs as the free harness (its own
 * redirections and the command it execs in place are not fenced): the
 * harness starts it, and says so with what to do instead. */
Test(cli, harness_warns_about_a_shell_given_c)
{
	cf_test_require_landlock();
	char *const with_c[][6] = {
		{"sh", "-c", "echo ran", NULL},
		{"/bin/sh", "-c", "echo ran", NULL},
		{"bash", "-ec", "echo ran", NULL},
		{"bash", "--norc", "-o", "pipefail", "-c", "echo ran"},
		{"dash", "-e", "-c", "echo ran", NULL},
	};
	for (size_t i = 0; i < sizeof with_c / sizeof *with_c; i++) {
		if (with_c[i][0][0] != '/' && strcmp(with_c[i][0], "sh") != 0)
			cf_test_require_tool(with_c[i][0]);
		harness(NULL, with_c[i]);
		cr_expect_eq(o.status, 0, "case %zu: " OUT_FMT, i, OUT_ARGS(o));
		cr_expect(has_line(o.out, "ran"), "case %zu: " OUT_FMT, i, OUT_ARGS(o));
		char want[256];
		cf_fx_fmt(want, sizeof want,
			  "credfence: warning: harness: %s is a shell given -c: the shell itself is "
			  "the free harness",
			  with_c[i][0]);
		cr_expect(strstr(o.err, want), "case %zu: want '%s' in:\n%s", i, want, o.err);
		cr_expect(strstr(o.err, "credfence run -- "), "case %zu: no advice: %s", i, o.err);
		cr_expect(all_lines_credfence(o.err), "%s", o.err);
	}
	/* A script, or a program that is not a shell, gets no such warning. */
	const char *script = cf_fx_at(fx.ws, "agent.sh");
	cf_fx_write(script, "echo ran\n");
	char *const without_c[][4] = {
		{"sh", (char *)script, NULL},
		{"sh", "-e", (char *)script, NULL},
		{"sh", (char *)script, "-c", NULL},
		{"/bin/echo", "-c", NULL},
	};
	for (size_t i = 0; i < sizeof without_c / sizeof *without_c; i++) {
		harness(NULL, without_c[i]);
		cr_expect_eq(o.status, 0, "case %zu: " OUT_FMT, i, OUT_ARGS(o));
		cr_expect(!strstr(o.err, "is a shell given -c"), "case %zu: %s", i, o.err);
	}
}

/* A static CMD loads no shim: required mode refuses it (test_escapes), and
 * best-effort mode starts it with a warning line. */
Test(cli, harness_warns_about_a_static_cmd_in_best_effort_mode)
{
	const char *bb = cf_test_require_tool("/bin/busybox");
	harness(CF_ARGV("--best-effort"), CF_ARGV((char *)bb, "echo", "ran"));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "ran"), OUT_FMT, OUT_ARGS(o));
	char want[PATH_MAX + 64];
	cf_fx_fmt(want, sizeof want, "credfence: warning: harness: %s is statically linked", bb);
	cr_expect(strncmp(o.err, want, strlen(want)) == 0, "want: %s\n" OUT_FMT, want, OUT_ARGS(o));
	cr_expect(strstr(o.err, "its children are not fenced unless they load the shim"), "%s",
		  o.err);
}

/* SECURITY.md puts root out of scope: run and harness say so in one line
 * when they run as root, and say nothing of it otherwise. */
Test(cli, root_gets_one_warning_line)
{
	cf_test_require_landlock();
	fenced(&o, &fx, NULL, NULL, CF_ARGV("true"));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	if (geteuid() == 0)
		cr_expect(has_line(o.err,
				   ROOT_WARNING("run") ": credfence guards an ordinary user's "
						       "secrets; root reads /etc/shadow and every "
						       "user's files inside the fence; run it as "
						       "your own user"),
			  OUT_FMT, OUT_ARGS(o));
	else
		cr_expect(!strstr(o.err, "running as root"), "%s", o.err);
	harness(NULL, CF_ARGV("true"));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	if (geteuid() == 0)
		cr_expect(strstr(o.err, ROOT_WARNING("harness")), OUT_FMT, OUT_ARGS(o));
	else
		cr_expect(!strstr(o.err, "running as root"), "%s", o.err);
	/* Refusals stay one line: the warning is said only when CMD starts. */
	cf_fx_out_free(&o);
	fenced(&o, &fx, NULL, CF_ARGV("--writable", fx.home), CF_ARGV("true"));
	cr_expect_eq(o.status, 125);
	cr_expect(!strstr(o.err, "running as root"), "%s", o.err);
}

/* A writable location that does not exist would get no rule, yet status would
 * list it as writable: status refuses it like run (issue 12, item 4). */
Test(cli, status_refuses_a_writable_location_that_does_not_exist)
{
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--writable", "/nonexistent-cf/w"));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "/nonexistent-cf/w"), "listed: %s", o.out);
	cr_expect(strstr(o.err, "credfence: --writable (CREDFENCE_WRITABLE) '/nonexistent-cf/w' "
				"does not exist"),
		  "%s", o.err);
}

/* A path with a colon (or a backslash) in the colon-list twins: the harness
 * escapes it (backslash-colon) when it exports CREDFENCE_DENY and
 * CREDFENCE_WRITABLE, and every reader unescapes it. Before, the child split
 * "/x/a:b" into "/x/a" and a relative "b", and every launch failed closed
 * with an overlap (issue 12, item 4). */
Test(cli, a_path_with_a_colon_survives_the_twins)
{
	cf_test_require_landlock();
	char key[PATH_MAX], text[256], extra[PATH_MAX], script[PATH_MAX * 4];
	cf_fx_fmt(key, sizeof key, "%s/keys/a:b\\c", fx.root);
	cf_fx_fmt(text, sizeof text, "%s-colon-key\n", fx.tag);
	cf_fx_write(key, text);
	cf_fx_fmt(extra, sizeof extra, "%s/out:put", fx.root);
	cf_fx_mkdirs(extra);
	cf_fx_fmt(script,
		  sizeof script,
		  "printf 'DENY=%%s\\n' \"$CREDFENCE_DENY\"; printf 'WRITABLE=%%s\\n' "
		  "\"$CREDFENCE_WRITABLE\"; cat '%s'; echo \"rc=$?\"; echo hi > '%s/f' && echo wrote",
		  key, extra);
	harness(CF_ARGV("--deny", key, "--writable", extra), CF_ARGV("/bin/bash", "-c", script));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "DENY=%s/keys/a\\:b\\\\c", fx.root), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "WRITABLE=%s/out\\:put", fx.root), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "rc=1"), "the key was read: " OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Permission denied"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "wrote"), "the writable location: " OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.err, "not effective"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);

	/* The twins, escaped by hand, for run and status. */
	char deny[PATH_MAX * 2];
	cf_fx_fmt(deny, sizeof deny, "CREDFENCE_DENY=%s/keys/a\\:b\\\\c", fx.root);
	const char *env[] = {deny, NULL};
	cf_fx_out_free(&o);
	fenced(&o, &fx, env, NULL, CF_ARGV("cat", key));
	cr_expect_eq(o.status, 1, OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", env, NULL);
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	char shown[PATH_MAX + 8]; /* status prints a backslash doubled */
	cf_fx_fmt(shown, sizeof shown, "%s/keys/a:b\\\\c", fx.root);
	cr_expect(strstr(o.out, shown), "the denied list has %s:\n%s", shown, o.out);
}

/* check exits 0 only when every path was probed; a device, a path longer
 * than PATH_MAX or one that can not be looked up gets a "not probed: WHY"
 * line and exit 1; an empty PATH is refused (issue 12, item 9). */
Test(cli, check_exits_0_only_when_every_path_was_probed)
{
	cf_test_require_landlock();
	const char *file = cf_fx_at(fx.ws, "file.txt");
	cf_fx_write(file, "x\n");
	cf_fx_credfence(&o, &fx, "check", NULL, CF_ARGV((char *)file, fx.ws));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));

	static char longp[PATH_MAX + 64];
	memset(longp, 'a', sizeof longp - 1);
	longp[0] = '/';
	longp[sizeof longp - 1] = '\0';
	char under_file[PATH_MAX];
	cf_fx_fmt(under_file, sizeof under_file, "%s/below", file);
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "check", NULL,
			CF_ARGV((char *)file, "/dev/null", longp, under_file, fx.ws));
	cr_expect_eq(o.status, 1, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "%s: file; read: allowed; write: allowed", file), OUT_FMT,
		  OUT_ARGS(o));
	cr_expect(has_line(o.out, "/dev/null: not probed: a device, socket or fifo (opening it "
				  "could act on it)"),
		  OUT_FMT, OUT_ARGS(o));
	char want[sizeof longp + 64];
	cf_fx_fmt(want, sizeof want, "%s: not probed: longer than PATH_MAX (ENAMETOOLONG)", longp);
	cr_expect(has_line(o.out, "%s", want), "no ENAMETOOLONG line:\n%.300s", o.out);
	cr_expect(has_line(o.out, "%s: not probed: it can not be looked up (ENOTDIR)", under_file),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "does not exist"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, fx.ws), "the last path is reported too");

	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "check", NULL, CF_ARGV((char *)file, ""));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect_str_eq(o.out, "", "nothing is probed");
	cr_expect(strstr(o.err, "credfence: check: an empty PATH names no file"), "%s", o.err);
}

/* A file name with a newline or another control character is printed
 * escaped by check and status, so that it can not forge a result or a
 * verdict line (issue 12, item 9). */
Test(cli, names_with_control_characters_are_printed_escaped)
{
	cf_test_require_landlock();
	const char *key = cf_fx_secret(&fx, ".ssh")->key;
	char forged[PATH_MAX * 2];
	cf_fx_fmt(forged, sizeof forged, "%s/x\n%s: file; read: allowed; write: allowed", fx.ws, key);
	cf_fx_write(forged, "x\n");
	cf_fx_credfence(&o, &fx, "check", NULL, CF_ARGV(forged));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(!has_line(o.out, "%s: file; read: allowed; write: allowed", key), "forged:\n%s",
		  o.out);
	cr_expect(has_line(o.out, "%s/x\\n%s: file; read: allowed; write: allowed: file; read: "
				  "allowed; write: allowed",
			   fx.ws, key),
		  OUT_FMT, OUT_ARGS(o));

	char tab[PATH_MAX];
	cf_fx_fmt(tab, sizeof tab, "%s/t\tb\x1b[0m\\", fx.ws);
	cf_fx_write(tab, "x\n");
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "check", NULL, CF_ARGV(tab));
	cr_expect(has_line(o.out, "%s/t\\tb\\x1b[0m\\\\: file; read: allowed; write: allowed", fx.ws),
		  OUT_FMT, OUT_ARGS(o));

	/* status: a writable location named like a verdict, in a policy that is
	 * not effective, must not print that verdict as a line of its own. */
	char dir[PATH_MAX];
	cf_fx_fmt(dir, sizeof dir, "%s/w\nread isolation applied", fx.root);
	cf_fx_mkdirs(dir);
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--writable", dir, "--max-entries", "3"));
	cr_expect_eq(o.status, 1, OUT_FMT, OUT_ARGS(o));
	cr_expect(!has_line(o.out, "read isolation applied"), "forged verdict:\n%s", o.out);
	cr_expect(has_line(o.out, "  %s/w\\nread isolation applied", fx.root), OUT_FMT, OUT_ARGS(o));
}

/* SRC/REL (malloc'd, asserts it can be read). */
static char *source_file(const char *rel)
{
	const char *src = getenv("CREDFENCE_SOURCE");
	cr_assert(src && *src, "CREDFENCE_SOURCE is not set; run the tests with meson test");
	char path[PATH_MAX];
	cf_fx_fmt(path, sizeof path, "%s/%s", src, rel);
	char *text = cf_fx_slurp(path);
	cr_assert(text, "can not read %s", path);
	return text;
}

/* Every option that `credfence --help` and each command's help name
 * (--home, --json, ...) is in the man page credfence.1 and in the command
 * reference, in both languages; every command has its own entry in the man
 * page. The docs are compared against the binary, not against themselves. */
Test(cli, every_option_of_help_is_in_the_man_page_and_the_reference)
{
	char *man = source_file("docs/credfence.1");
	char *ref = source_file("docs/cli-reference.md");
	char *ja = source_file("docs/cli-reference.ja.md");
	/* roff writes a hyphen as \- */
	for (char *r = man, *w = man;; r++) {
		if (r[0] == '\\' && r[1] == '-')
			r++;
		if (!(*w++ = *r))
			break;
	}
	const char *topics[] = {NULL, "run", "harness", "status", "check"};
	size_t seen = 0;
	for (size_t t = 0; t < sizeof topics / sizeof *topics; t++) {
		cf_fx_out_free(&o);
		if (topics[t])
			cf_fx_run(&o, fx.ws, NULL, NULL,
				  CF_ARGV((char *)cf_fx_bin(), "help", (char *)topics[t]));
		else
			cf_fx_run(&o, fx.ws, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), "--help"));
		cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
		if (!topics[t]) /* the usage points at the man page, which meson installs */
			cr_expect(strstr(o.out, "See man credfence."), "%s", o.out);
		for (const char *p = o.out; (p = strstr(p, "--"));) {
			size_t n = 2 + strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");
			if (n == 2 || p[n] == '-' || (p > o.out && p[-1] != ' ' && p[-1] != '[')) {
				p += n;
				continue; /* "--" alone (before CMD), or inside a word */
			}
			char opt[64], ticked[80];
			cf_fx_fmt(opt, sizeof opt, "%.*s", (int)n, p);
			cf_fx_fmt(ticked, sizeof ticked, "`%s", opt);
			cr_expect(strstr(man, opt), "%s (help %s) is not in docs/credfence.1", opt,
				  topics[t] ? topics[t] : "");
			cr_expect(strstr(ref, ticked), "%s is not in docs/cli-reference.md", opt);
			cr_expect(strstr(ja, ticked), "%s is not in docs/cli-reference.ja.md", opt);
			seen++;
			p += n;
		}
		if (topics[t]) {
			char entry[64];
			cf_fx_fmt(entry, sizeof entry, ".TP\n.B %s\n", topics[t]);
			cr_expect(strstr(man, entry), "docs/credfence.1 has no entry for %s",
				  topics[t]);
			cf_fx_fmt(entry, sizeof entry, "## credfence %s\n", topics[t]);
			cr_expect(strstr(ref, entry), "docs/cli-reference.md has no section %s",
				  topics[t]);
		}
	}
	cr_expect_geq(seen, 10, "only %zu options found in the help texts", seen);
	free(man);
	free(ref);
	free(ja);
}

/* The man page as text: font escapes dropped, \- and \e as - and \, the
 * arguments of a font macro joined as roff joins them (.B and .I with spaces,
 * the alternating ones .BI, .BR, ... without), one output line a source line. */
static char *man_text(const char *man)
{
	size_t n = strlen(man);
	char *out = malloc(n + 1), *w = out;
	cr_assert(out);
	for (const char *line = man; *line;) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		const char *p = line;
		bool macro = *p == '.', spaced = false;
		if (macro) {
			size_t m = strcspn(p, " \n");
			bool font = (m == 2 && strchr("BI", p[1])) ||
				    (m == 3 && strchr("BIR", p[1]) && strchr("BIR", p[2]));
			spaced = m == 2;
			p = font ? p + m : end; /* other requests are line breaks */
		}
		bool quoted = false, first = true;
		for (; p < end; p++) {
			if (macro && *p == '"') {
				quoted = !quoted;
				continue;
			}
			if (macro && *p == ' ' && !quoted) {
				if (spaced && !first)
					*w++ = ' ';
				continue;
			}
			if (p[0] == '\\' && p[1] == 'f' && p + 2 < end) {
				p += 2;
				continue;
			}
			if (p[0] == '\\' && (p[1] == '-' || p[1] == 'e')) {
				*w++ = p[1] == '-' ? '-' : '\\';
				p++;
				continue;
			}
			*w++ = *p;
			first = false;
		}
		*w++ = '\n';
		line = *end ? end + 1 : end;
	}
	*w = '\0';
	return out;
}

/* Every status line of the reference's Verdicts tables is in the man page
 * (issue 12: the man page covers every verdict) and, the same text, in the
 * Japanese reference. */
Test(cli, every_verdict_of_the_reference_is_in_the_man_page)
{
	char *src = source_file("docs/credfence.1");
	char *man = man_text(src);
	char *ref = source_file("docs/cli-reference.md");
	char *ja = source_file("docs/cli-reference.ja.md");
	size_t seen = 0;
	for (const char *p = ref; (p = strstr(p, "\n| `read isolation "));) {
		p += 4; /* past "\n| `": the verdict starts here */
		const char *end = strchr(p, '`');
		cr_assert(end);
		char verdict[512], ticked[520];
		cf_fx_fmt(verdict, sizeof verdict, "%.*s", (int)(end - p), p);
		cr_assert(strncmp(verdict, "read isolation ", 15) == 0, "parsed '%s'", verdict);
		cf_fx_fmt(ticked, sizeof ticked, "`%s`", verdict);
		char line[600];
		cf_fx_fmt(line, sizeof line, "\n%s\n", verdict);
		cr_expect(strstr(man, line), "docs/credfence.1 lacks the verdict line '%s'", verdict);
		cr_expect(strstr(ja, ticked), "docs/cli-reference.ja.md lacks the verdict '%s'", verdict);
		seen++;
		p = end;
	}
	cr_expect_geq(seen, 14, "only %zu verdicts found in docs/cli-reference.md", seen);
	free(src);
	free(man);
	free(ref);
	free(ja);
}

/* --allow-read as status and check tell it (issue 24): status lists the
 * allowed read with the location it lies in, check words the read, and the
 * key beside it stays denied. */
Test(cli, status_and_check_name_the_allowed_read)
{
	cf_test_require_landlock();
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	char kh[PATH_MAX];
	cf_fx_fmt(kh, sizeof kh, "%s/known_hosts", ssh->path);
	cf_fx_write(kh, "host line\n");
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--allow-read", kh));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "allowed reads (1):"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, kh) && strstr(o.out, "whose other entries stay denied"), OUT_FMT,
		  OUT_ARGS(o));
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--json", "--allow-read", kh));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	char want[PATH_MAX + 64];
	cf_fx_fmt(want, sizeof want, "\"allowed_reads\":[\"%s\"],\"allow_read_refused\":null", kh);
	cr_expect(strstr(o.out, want), OUT_FMT, OUT_ARGS(o));
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "check", NULL, CF_ARGV("--allow-read", kh, kh, (char *)ssh->key));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "%s: file; read: allowed (--allow-read); write: denied (EACCES)", kh),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "%s: file; read: denied (EACCES); write: denied (EACCES)",
			   ssh->key),
		  OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
	/* A path in no secret location: check refuses it like run. */
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "check", NULL,
			CF_ARGV("--allow-read", (char *)cf_fx_at(fx.home, "notes.txt"), kh));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: check: --allow-read") &&
			  strstr(o.err, "lies in no secret location"),
		  OUT_FMT, OUT_ARGS(o));
}
