/* Secrets in the environment (issue 20), on each way in: credfence run, self
 * mode, and a harness's children on every launch path (a C harness: fork,
 * vfork, posix_spawn and execvpe with an environment built by hand,
 * posix_spawnp, execle, syscall(SYS_execve), fexecve, execveat, system,
 * popen, a pipeline; a
 * Python harness: subprocess with env=, os.fork + os.execve, posix_spawn,
 * os.system, a shell pipeline, a child whose KUBECONFIG moves a secret and
 * so goes through credfence run; a Node harness: child_process with env).
 *
 * Each child prints its environment, its /proc/self/environ and its
 * parent's. The fake value of each known name, each name pattern (as written
 * and in lower case) and each token prefix under an innocent name must be in
 * none of them, nor on stderr, nor in the log; every ordinary variable must
 * be there unchanged; a variable the child sets itself passes on; the
 * harness keeps its own. Without credfence the same children print the
 * values: the test can fail. */
#include <errno.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envcases.h"
#include "shimtest.h"

static struct st t;
static struct cf_envcase *cases, *passing;
static size_t n_cases, n_passing;
static char upper_hex[32]; /* the tag's hex in upper case: the AWS key ids hold it */

static void setup(void)
{
	st_setup(&t);
	cases = cf_envcases_secrets(t.fx.tag, &n_cases);
	passing = cf_envcases_passing(t.fx.tag, false, &n_passing);
	const char *hex = t.fx.tag + strlen("CFMARK-");
	size_t i = 0;
	for (; hex[i]; i++)
		upper_hex[i] = hex[i] >= 'a' && hex[i] <= 'f' ? (char)(hex[i] - 'a' + 'A') : hex[i];
	upper_hex[i] = '\0';
}

static void teardown(void)
{
	cf_envcases_free(cases, n_cases);
	cf_envcases_free(passing, n_passing);
	st_teardown(&t);
}

TestSuite(shim_envsecrets, .init = setup, .fini = teardown, .timeout = 240 * CF_TIMEOUT_SCALE);

/* $0 is the way in. cat opens its own /proc/self/environ (a redirection
 * would open the shell's forked child's, whose memory is gone after the
 * exec). The child's own variable passes on (OWN): it is its value, not
 * the user's. (Its value is made at run time, "$(...)": the script itself,
 * in CF_T_CHILD, holds no TOKEN=value parameter, which would withhold it.) */
static const char child_script[] =
	"echo \"BEGIN $0\"; env; echo \"SELF $0\"; cat /proc/self/environ | tr '\\0' '\\n'; echo;"
	" echo \"PARENT $0\"; cat /proc/$PPID/environ | tr '\\0' '\\n'; echo;"
	" GITHUB_TOKEN=$(echo own-value-$0) sh -c 'echo \"OWN $GITHUB_TOKEN\"'; echo \"END $0\"";

/* Whether the corpus's developer machine environment sets NAME: its value
 * then stands for the ordinary variable's. */
static bool in_passing(const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < n_passing; i++)
		if (strncmp(passing[i].entry, name, n) == 0 && passing[i].entry[n] == '=')
			return true;
	return false;
}

/* The fixture's environment, every fake secret, every safe ordinary
 * variable and the corpus's developer machine environment, the child
 * script, and MORE. */
static char **make_env(const char *const *more)
{
	size_t n_more = 0;
	while (more && more[n_more])
		n_more++;
	const char **all = calloc(n_cases + n_passing + cf_env_ordinary_count + n_more + 2, sizeof *all);
	char **owned = calloc(cf_env_ordinary_count + 1, sizeof *owned);
	cr_assert(all && owned);
	size_t k = 0, o = 0;
	for (size_t i = 0; i < n_cases; i++)
		all[k++] = cases[i].entry;
	for (size_t i = 0; i < cf_env_ordinary_count; i++)
		if (cf_env_ordinary[i].safe && !in_passing(cf_env_ordinary[i].name))
			all[k++] = owned[o++] = strdup(cf_env_ordinary_entry(cf_env_ordinary[i].name));
	for (size_t i = 0; i < n_passing; i++)
		all[k++] = passing[i].entry;
	char script[sizeof child_script + 16];
	snprintf(script, sizeof script, "CF_T_CHILD=%s", child_script);
	all[k++] = script;
	for (size_t i = 0; i < n_more; i++)
		all[k++] = more[i];
	char **env = st_env(&t, all);
	for (size_t i = 0; i < o; i++)
		free(owned[i]);
	free(owned);
	free(all);
	return env;
}

static const char *value_of(const char *entry)
{
	return strchr(entry, '=') + 1;
}

static bool named(const char *entry, const char *name)
{
	size_t n = strlen(name);
	return name && strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* The outcome for the ways WAYS: each ran to its end; no fake value
 * anywhere but KEEP's (NULL: none), which each way's env shows; each safe
 * ordinary variable unchanged in each env dump; each child's own variable
 * passed on. */
static void expect_withheld(const struct cf_fx_out *o, const char *const *ways, const char *keep)
{
	size_t n_ways = 0;
	while (ways[n_ways])
		n_ways++;
	if (!keep)
		cf_fx_assert_no_marker(&t.fx, o);
	/* The AWS-style key ids hold the tag's hex in upper case. A hex of
	 * digits only (one fixture in about 280) is the tag's own, which a kept
	 * variable's value holds by right (--keep-env): the per-case values
	 * below still catch each id whole. */
	if (strpbrk(upper_hex, "ABCDEF"))
		cr_expect_null(strstr(o->out, upper_hex), "an AWS key id leaked");
	for (size_t i = 0; i < n_cases; i++) {
		const char *v = value_of(cases[i].entry);
		if (keep && named(cases[i].entry, keep)) {
			cr_expect_geq(st_count(o->out, cases[i].entry), n_ways,
				      "--keep-env %s: not passed to each child", keep);
			continue;
		}
		cr_expect_null(strstr(o->out, v), "leaked (%s): %.*s", cases[i].why,
			       (int)(strchr(cases[i].entry, '=') - cases[i].entry), cases[i].entry);
		cr_expect_null(strstr(o->err, v), "leaked on stderr (%s)", cases[i].why);
	}
	char line[512];
	for (size_t w = 0; w < n_ways; w++) {
		snprintf(line, sizeof line, "BEGIN %s\n", ways[w]);
		cr_expect(strstr(o->out, line), "the child by %s did not run", ways[w]);
		snprintf(line, sizeof line, "END %s\n", ways[w]);
		cr_expect(strstr(o->out, line), "the child by %s did not finish", ways[w]);
		snprintf(line, sizeof line, "OWN own-value-%s\n", ways[w]);
		cr_expect(strstr(o->out, line), "the child by %s lost the variable it set itself",
			  ways[w]);
	}
	for (size_t i = 0; i < cf_env_ordinary_count; i++) {
		if (!cf_env_ordinary[i].safe || in_passing(cf_env_ordinary[i].name))
			continue;
		snprintf(line, sizeof line, "\n%s\n", cf_env_ordinary_entry(cf_env_ordinary[i].name));
		cr_expect_geq(st_count(o->out, line), 2 * n_ways, "%s did not pass unchanged",
			      cf_env_ordinary[i].name);
	}
	/* The corpus's developer machine environment, each variable unchanged
	 * in each way's env (no false positive on any way in). */
	for (size_t i = 0; i < n_passing; i++) {
		char *want;
		cr_assert(asprintf(&want, "\n%s\n", passing[i].entry) > 0);
		cr_expect_geq(st_count(o->out, want), 2 * n_ways, "did not pass unchanged: %s",
			      passing[i].entry);
		free(want);
	}
	char home[PATH_MAX + 16];
	snprintf(home, sizeof home, "\nHOME=%s\n", t.fx.home);
	cr_expect_geq(st_count(o->out, home), 2 * n_ways, "HOME did not pass unchanged");
}

/* The log: one env_withheld line for each launch, names, no value. */
static void expect_log(size_t launches)
{
	char *log = cf_fx_slurp(t.log);
	cr_assert(log, "no log");
	cr_expect_null(strstr(log, t.fx.tag + strlen("CFMARK-")), "a value in the log");
	cr_expect_null(strstr(log, upper_hex), "a value in the log");
	cr_expect_geq(st_count(log, "\"event\":\"env_withheld\""), launches, "%s", log);
	cr_expect_geq(st_count(log, "\"ANTHROPIC_API_KEY\""), launches);
	cr_expect_geq(st_count(log, "\"MY_VAR_0\""), launches);
	free(log);
}

static const char *kv(char *buf, size_t n, const char *k, const char *v)
{
	snprintf(buf, n, "%s=%s", k, v);
	return buf;
}

Test(shim_envsecrets, credfence_run)
{
	struct cf_fx_out o;
	char **env = make_env(NULL);
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV((char *)cf_fx_bin(), "run", "--home", t.fx.home, "--workspace", t.fx.ws,
			  "--log", t.log, "--", "/bin/sh", "-c", (char *)child_script, "run"));
	st_dump("credfence run", &o);
	cr_expect_eq(o.status, 0);
	expect_withheld(&o, (const char *[]){"run", NULL}, NULL);
	expect_log(1);
	cf_fx_out_free(&o);

	/* Free, the same child prints every value: the test can fail. */
	cf_fx_run(&o, t.fx.ws, env, NULL, CF_ARGV("/bin/sh", "-c", (char *)child_script, "free"));
	for (size_t i = 0; i < n_cases; i++)
		cr_expect(strstr(o.out, value_of(cases[i].entry)), "free: %s not shown", cases[i].entry);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* --keep-env passes exactly the one named; --deny-env adds a pattern. */
Test(shim_envsecrets, keep_and_deny)
{
	struct cf_fx_out o;
	char user[128];
	snprintf(user, sizeof user, "MYCO_THING=fake-%s-user", t.fx.tag);
	char **env = make_env((const char *[]){user, NULL});
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV((char *)cf_fx_bin(), "run", "--home", t.fx.home, "--workspace", t.fx.ws,
			  "--keep-env", "GH_TOKEN", "--deny-env", "myco_*", "--", "/bin/sh", "-c",
			  (char *)child_script, "run-keep"));
	st_dump("credfence run --keep-env GH_TOKEN --deny-env myco_*", &o);
	cr_expect_eq(o.status, 0);
	expect_withheld(&o, (const char *[]){"run-keep", NULL}, "GH_TOKEN");
	cr_expect_null(strstr(o.out, user + strlen("MYCO_THING=")), "--deny-env myco_* passed it");
	cf_fx_out_free(&o);
	/* Without --deny-env the made-up name passes: the option did it. */
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV((char *)cf_fx_bin(), "run", "--home", t.fx.home, "--workspace", t.fx.ws,
			  "--", "/bin/sh", "-c", "env", "x"));
	cr_expect(strstr(o.out, user), "MYCO_THING withheld without --deny-env");
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

Test(shim_envsecrets, bad_rules_are_refused)
{
	struct cf_fx_out o;
	char **env = make_env(NULL);
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV((char *)cf_fx_bin(), "run", "--home", t.fx.home, "--workspace", t.fx.ws,
			  "--keep-env", "GH_*", "--", "/bin/echo", "RAN"));
	cr_expect_eq(o.status, 125);
	cr_expect(strncmp(o.err, "credfence: ", 11) == 0 && strstr(o.err, "--keep-env"), "%s", o.err);
	cr_expect_null(strstr(o.out, "RAN"));
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
	env = make_env((const char *[]){"CREDFENCE_DENY_ENV=A=B", NULL});
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV((char *)cf_fx_bin(), "run", "--home", t.fx.home, "--workspace", t.fx.ws,
			  "--", "/bin/echo", "RAN"));
	cr_expect_eq(o.status, 125);
	cr_expect(strncmp(o.err, "credfence: ", 11) == 0 && strstr(o.err, "CREDFENCE_DENY_ENV"), "%s",
		  o.err);
	cr_expect_null(strstr(o.out, "RAN"));
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* A shell fenced by the shim in its own constructor (no harness). Its own
 * /proc/PID/environ is what its children read as /proc/PPID/environ. */
Test(shim_envsecrets, self_mode)
{
	char pre[PATH_MAX + 64], home[PATH_MAX + 64], ws[PATH_MAX + 64], log[PATH_MAX + 64];
	char **env = make_env((const char *[]){kv(pre, sizeof pre, "LD_PRELOAD", st_shim()),
					       kv(home, sizeof home, "CREDFENCE_HOME", t.fx.home),
					       kv(ws, sizeof ws, "CREDFENCE_WORKSPACE", t.fx.ws),
					       kv(log, sizeof log, "CREDFENCE_LOG", t.log), NULL});
	struct cf_fx_out o;
	cf_fx_run(&o, t.fx.ws, env, NULL, CF_ARGV("/bin/bash", "-c", (char *)child_script, "self"));
	st_dump("self mode", &o);
	cr_expect_eq(o.status, 0);
	expect_withheld(&o, (const char *[]){"self", NULL}, NULL);
	expect_log(1);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

static const char *const c_ways[] = {"c-fork-execve", "c-vfork-execve", "c-posix_spawn",
				     "c-posix_spawnp", "c-execvpe", "c-execle", "c-syscall",
				     "c-fexecve", "c-execveat", "c-system", "c-pipeline",
				     "c-popen", NULL};

/* The harness keeps its whole environment (HARNESS-HAS), yet its
 * /proc/PID/environ shows none of it (a root child could read that file). */
static void expect_harness_kept(const struct cf_fx_out *o)
{
	char line[64];
	size_t tagged = 0;
	for (size_t i = 0; i < n_cases; i++)
		tagged += strstr(value_of(cases[i].entry), t.fx.tag) || strstr(value_of(cases[i].entry), upper_hex);
	snprintf(line, sizeof line, "HARNESS-HAS %zu\n", tagged);
	cr_expect(strstr(o->out, line), "the harness lost some of its own variables (want %s)", line);
	cr_expect(strstr(o->out, "HARNESS-PROC-HAS 0\n"),
		  "the harness's /proc/self/environ still shows its secrets");
}

Test(shim_envsecrets, c_harness_every_launch_path)
{
	struct cf_fx_out o;
	char **env = make_env(NULL);
	st_harness(&o, &t, env, (const char *[]){"--log", t.log, NULL},
		   CF_ARGV((char *)st_build("tests/shim/cf-envharness"), t.fx.tag, upper_hex));
	st_dump("cf-envharness under credfence harness", &o);
	cr_expect_eq(o.status, 0);
	expect_withheld(&o, c_ways, NULL);
	expect_harness_kept(&o);
	cr_expect(strstr(o.out, "ABOVE-HAS 0\n"),
		  "the supervisor or the waiter above the harness shows its secrets in /proc");
	expect_log(12);
	cf_fx_out_free(&o);

	/* Free, the harness's children see every value (and the harness its
	 * /proc/self/environ): the test can fail. */
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV((char *)st_build("tests/shim/cf-envharness"), t.fx.tag, upper_hex));
	cr_expect_geq(st_count(o.out, value_of(cases[0].entry)), 12 * 2, "free: too few leaks");
	cr_expect_null(strstr(o.out, "HARNESS-PROC-HAS 0\n"));
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* CREDFENCE_KEEP_ENV, the twin, through a harness: each child gets GH_TOKEN. */
Test(shim_envsecrets, c_harness_keep_env_twin)
{
	struct cf_fx_out o;
	char **env = make_env((const char *[]){"CREDFENCE_KEEP_ENV=GH_TOKEN", NULL});
	st_harness(&o, &t, env, NULL,
		   CF_ARGV((char *)st_build("tests/shim/cf-envharness"), t.fx.tag, upper_hex));
	st_dump("cf-envharness, CREDFENCE_KEEP_ENV=GH_TOKEN", &o);
	cr_expect_eq(o.status, 0);
	expect_withheld(&o, c_ways, "GH_TOKEN");
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

static const char py_harness[] =
	"import os, subprocess, sys\n"
	"tag, up = sys.argv[1], sys.argv[2]\n"
	"c = os.environ['CF_T_CHILD']\n"
	"def sh(way): return ['/bin/sh', '-c', c, way]\n"
	"subprocess.run(sh('py-subprocess-env'), env=dict(os.environ, CF_T_HANDBUILT='1'))\n"
	"pid = os.fork()\n"
	"if pid == 0:\n"
	"    os.execve('/bin/sh', sh('py-fork-execve'), dict(os.environ))\n"
	"os.waitpid(pid, 0)\n"
	"pid = os.posix_spawn('/bin/sh', sh('py-posix_spawn'), dict(os.environ))\n"
	"os.waitpid(pid, 0)\n"
	"sys.stdout.flush()\n"
	"os.system('sh -c \"$CF_T_CHILD\" py-system')\n"
	"subprocess.run('sh -c \"$CF_T_CHILD\" py-pipeline | cat', shell=True,\n"
	"               env={k: v for k, v in os.environ.items()})\n"
	/* KUBECONFIG moves a secret: the child goes through credfence run. */
	"subprocess.run(sh('py-relaunch'),\n"
	"               env=dict(os.environ, KUBECONFIG=os.environ['CF_T_ROOT'] + '/moved-kube'))\n"
	"n = sum(1 for v in os.environ.values() if tag in v or up in v)\n"
	"print('HARNESS-HAS', n, flush=True)\n"
	"p = open('/proc/self/environ', 'rb').read().decode('latin-1')\n"
	"print('HARNESS-PROC-HAS', p.count(tag) + p.count(up), flush=True)\n";

Test(shim_envsecrets, python_harness)
{
	struct cf_fx_out o;
	char **env = make_env(NULL);
	st_harness(&o, &t, env, NULL,
		   CF_ARGV("/usr/bin/python3", "-c", (char *)py_harness, t.fx.tag, upper_hex));
	st_dump("python3 harness", &o);
	cr_expect_eq(o.status, 0);
	expect_withheld(&o,
			(const char *[]){"py-subprocess-env", "py-fork-execve", "py-posix_spawn",
					 "py-system", "py-pipeline", "py-relaunch", NULL},
			NULL);
	expect_harness_kept(&o);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* A harness that widens CREDFENCE_KEEP_ENV in its own environment later
 * changes nothing: its children, the one handed to credfence run included,
 * are filtered by the rules read at its start. */
static const char py_widen[] =
	"import os, subprocess, sys\n"
	"os.environ['CREDFENCE_KEEP_ENV'] = 'ANTHROPIC_API_KEY:GITHUB_TOKEN'\n"
	/* A move of its own makes the harness rebuild its fence, and take its
	 * environment's CREDFENCE_* options anew for what it hands to credfence run. */
	"os.environ['GNUPGHOME'] = os.environ['CF_T_ROOT'] + '/moved-gnupg'\n"
	"c = os.environ['CF_T_CHILD']\n"
	/* posix_spawn rebuilds the fence first (the GNUPGHOME move). */
	"pid = os.posix_spawn('/bin/sh', ['sh', '-c', c, 'widen-spawn'], dict(os.environ))\n"
	"os.waitpid(pid, 0)\n"
	"subprocess.run(['/bin/sh', '-c', c, 'widen-fork'])\n"
	"subprocess.run(['/bin/sh', '-c', c, 'widen-relaunch'],\n"
	"               env=dict(os.environ, KUBECONFIG=os.environ['CF_T_ROOT'] + '/moved-kube'))\n";

Test(shim_envsecrets, later_keep_env_of_the_harness_changes_nothing)
{
	struct cf_fx_out o;
	char **env = make_env(NULL);
	st_harness(&o, &t, env, (const char *[]){"--log", t.log, NULL},
		   CF_ARGV("/usr/bin/python3", "-c", (char *)py_widen));
	st_dump("python3 harness widening CREDFENCE_KEEP_ENV", &o);
	cr_expect_eq(o.status, 0);
	expect_withheld(&o, (const char *[]){"widen-fork", "widen-relaunch", "widen-spawn", NULL},
			NULL);
	expect_log(3);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* The harness's environment is judged once, at its start (common/env_memo.h);
 * a variable the harness changes later is judged again at each launch. Its
 * new value has the old one's length and first and last 16 bytes (where the
 * memo looks first), a GitHub token in the middle: the child must not get
 * it. The old value reached the first child unchanged. */
#define MEMO_ENDS "aaaaaaaaaaaaaaaa/"
#define MEMO_TAIL "/bbbbbbbbbbbbbbbb"
#define MEMO_KEPT "CF_T_NOTE=" MEMO_ENDS "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" MEMO_TAIL
#define MEMO_TOKEN "ghp_MemoTest0123456789abcdefghijklmnopqr"
static const char py_memo[] =
	"import os, subprocess\n"
	"c = os.environ['CF_T_CHILD']\n"
	"subprocess.run(['/bin/sh', '-c', c, 'memo-same'])\n"
	"os.environ['CF_T_NOTE'] = os.environ['CF_T_NOTE'].replace('x' * 40, '" MEMO_TOKEN "')\n"
	"os.environ['DB_PASS'] = os.environ['DB_PASS'][::-1]\n"
	"subprocess.run(['/bin/sh', '-c', c, 'memo-changed'])\n"
	"print('HARNESS-NOTE', os.environ['CF_T_NOTE'].count('" MEMO_TOKEN "'), flush=True)\n";

Test(shim_envsecrets, a_variable_the_harness_changes_is_judged_again)
{
	struct cf_fx_out o;
	char pass[128];
	snprintf(pass, sizeof pass, "DB_PASS=%s-memo-password", t.fx.tag);
	char **env = make_env((const char *[]){MEMO_KEPT, pass, NULL});
	st_harness(&o, &t, env, NULL, CF_ARGV("/usr/bin/python3", "-c", (char *)py_memo));
	st_dump("python3 harness changing its variables", &o);
	cr_expect_eq(o.status, 0);
	expect_withheld(&o, (const char *[]){"memo-same", "memo-changed", NULL}, NULL);
	cr_expect(strstr(o.out, "HARNESS-NOTE 1\n"), "the harness did not hold the token");
	cr_expect_eq(st_count(o.out, MEMO_TOKEN), 0, "the changed variable reached a child");
	cr_expect_eq(st_count(o.err, MEMO_TOKEN), 0);
	/* memo-same's env and /proc/self/environ; memo-changed's neither. */
	cr_expect_geq(st_count(o.out, "\n" MEMO_KEPT "\n"), 2, "%s", o.out);
	const char *from = strstr(o.out, "BEGIN memo-changed\n"), *to = strstr(o.out, "PARENT memo-changed\n");
	cr_assert(from && to && from < to, "memo-changed did not run");
	const char *note = strstr(from, "\nCF_T_NOTE=");
	cr_expect(!note || note > to, "the changed variable was not withheld");
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

static const char node_harness[] =
	"const cp = require('child_process');\n"
	"const [tag, up] = process.argv.slice(1);\n"
	"const c = process.env.CF_T_CHILD;\n"
	"cp.spawnSync('/bin/sh', ['-c', c, 'node-spawn-env'],\n"
	"  {env: Object.assign({}, process.env, {CF_T_HANDBUILT: '1'}), stdio: 'inherit'});\n"
	"process.stdout.write(cp.execSync('sh -c \"$CF_T_CHILD\" node-exec', {env: {...process.env}}));\n"
	"const n = Object.values(process.env).filter(v => v.includes(tag) || v.includes(up)).length;\n"
	"console.log('HARNESS-HAS ' + n);\n"
	"const p = require('fs').readFileSync('/proc/self/environ', 'latin1');\n"
	"console.log('HARNESS-PROC-HAS ' + (p.split(tag).length - 1 + p.split(up).length - 1));\n";

Test(shim_envsecrets, node_harness)
{
	const char *node = cf_test_require_tool("node");
	struct cf_fx_out o;
	char **env = make_env(NULL);
	st_harness(&o, &t, env, NULL,
		   CF_ARGV((char *)node, "-e", (char *)node_harness, t.fx.tag, upper_hex));
	st_dump("node harness", &o);
	cr_expect_eq(o.status, 0);
	expect_withheld(&o, (const char *[]){"node-spawn-env", "node-exec", NULL}, NULL);
	expect_harness_kept(&o);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* tests/corpus/env.txt: the environment's attack forms, each under credfence
 * run and from a Python harness; no fake value in anything they print. */
static const char py_forms[] =
	"import subprocess, sys\n"
	"for i, form in enumerate(open(sys.argv[1]).read().split('\\n')):\n"
	"    if not form or form.startswith('#'): continue\n"
	"    print('CF-FORM-START', i, flush=True)\n"
	"    subprocess.run('{ ' + form + '; } 2>&1; echo \"CF-FORM-DONE $?\"', shell=True)\n";

Test(shim_envsecrets, corpus_forms)
{
	char file[PATH_MAX];
	const char *src = getenv("CREDFENCE_SOURCE");
	cr_assert(src, "CREDFENCE_SOURCE is not set; run with meson test");
	cf_fx_fmt(file, sizeof file, "%s/tests/corpus/env.txt", src);
	char *forms = cf_fx_slurp(file);
	cr_assert(forms, "can not read %s", file);
	size_t n_forms = 0;
	for (char *l = forms; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		n_forms += *l != '#' && *l != '\n';
	free(forms);
	cr_assert_geq(n_forms, 20);
	char **env = make_env(NULL);
	struct cf_fx_out o;
	for (int way = 0; way < 2; way++) {
		if (way == 0)
			cf_fx_run(&o, t.fx.ws, env, NULL,
				  CF_ARGV((char *)cf_fx_bin(), "run", "--home", t.fx.home, "--workspace",
					  t.fx.ws, "--", "/usr/bin/python3", "-c", (char *)py_forms, file));
		else
			st_harness(&o, &t, env, NULL,
				   CF_ARGV("/usr/bin/python3", "-c", (char *)py_forms, file));
		st_dump(way ? "env corpus from a harness" : "env corpus under credfence run", &o);
		cr_expect_eq(o.status, 0);
		cr_expect_eq(st_count(o.out, "CF-FORM-START "), n_forms, "not every form ran");
		cr_expect_eq(st_count(o.out, "CF-FORM-DONE "), n_forms, "not every form ended");
		cf_fx_assert_no_marker(&t.fx, &o);
		cr_expect_null(strstr(o.out, upper_hex), "an AWS key id leaked");
		for (size_t i = 0; i < n_cases; i++)
			cr_expect_null(strstr(o.out, value_of(cases[i].entry)), "leaked (%s)", cases[i].why);
		/* An ordinary variable is there: the forms did read the environment. */
		cr_expect(strstr(o.out, "TOKENIZERS_PARALLELISM=false"), "the forms printed no env");
		cf_fx_out_free(&o);
	}
	/* Free, every form shows the values: the forms can fail. */
	cf_fx_run(&o, t.fx.ws, env, NULL, CF_ARGV("/usr/bin/python3", "-c", (char *)py_forms, file));
	cr_expect_geq(st_count(o.out, value_of(cases[0].entry)), n_forms - 3,
		      "free, too few forms show %s", cases[0].entry);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* status and check --env name what would be withheld, never a value. */
Test(shim_envsecrets, status_and_check_list_names_only)
{
	struct cf_fx_out o;
	char **env = make_env(NULL);
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV((char *)cf_fx_bin(), "check", "--home", t.fx.home, "--workspace", t.fx.ws,
			  "--env"));
	cr_expect_eq(o.status, 0, "%s", o.err);
	cf_fx_assert_no_marker(&t.fx, &o);
	cr_expect_null(strstr(o.out, upper_hex));
	for (size_t i = 0; i < n_cases; i++) {
		char want[256];
		snprintf(want, sizeof want, "env: %.*s ",
			 (int)(strchr(cases[i].entry, '=') - cases[i].entry), cases[i].entry);
		cr_expect(strstr(o.out, want), "check --env does not list %s", want);
	}
	cr_expect_null(strstr(o.out, "TOKENIZERS_PARALLELISM"));
	/* Why, in the rule's words: a known name, a name rule, a value shape. */
	cr_expect(strstr(o.out, "withheld (known name: Anthropic API key)\n"), "%s", o.out);
	cr_expect(strstr(o.out, "withheld (name rule: a password)\n"), "%s", o.out);
	cr_expect(strstr(o.out, "withheld (value shape: PEM private key)\n"), "%s", o.out);
	cr_expect(strstr(o.out, "withheld (value holds a secret: a URL with a password)\n"), "%s", o.out);
	cf_fx_out_free(&o);
	const char *forms[] = {NULL, "--json"};
	for (size_t f = 0; f < 2; f++) {
		cf_fx_run(&o, t.fx.ws, env, NULL,
			  CF_ARGV((char *)cf_fx_bin(), "status", "--home", t.fx.home, "--workspace",
				  t.fx.ws, (char *)forms[f]));
		cf_fx_assert_no_marker(&t.fx, &o);
		cr_expect_null(strstr(o.out, upper_hex));
		cr_expect(strstr(o.out, "ANTHROPIC_API_KEY") && strstr(o.out, "MY_VAR_0"), "%s", o.out);
		cr_expect(strstr(o.out, f ? "\"env_withheld\":[" : "environment withheld ("), "%s",
			  o.out);
		cr_expect(strstr(o.out, f ? "\"rule\":\"name rule\",\"holds\":\"a password\"}"
					  : " withheld (name rule: a password)\n"),
			  "%s", o.out);
		cf_fx_out_free(&o);
	}
	cf_fx_env_free(env);
}

/* A child whose environment moves a secret goes through credfence run; an
 * execve with a null path must fail with EFAULT there as the kernel's
 * would, not crash the child in the relaunch (it once read *NULL). */
static const char py_null_path[] =
	"import ctypes, os, sys\n"
	"libc = ctypes.CDLL(None, use_errno=True)\n"
	"env = dict(os.environ, KUBECONFIG=os.environ['CF_T_ROOT'] + '/moved-kube')\n"
	"envp = (ctypes.c_char_p * (len(env) + 1))(*[f'{k}={v}'.encode() for k, v in env.items()], None)\n"
	"argv = (ctypes.c_char_p * 2)(b'sh', None)\n"
	"for way in ('execve', 'syscall'):\n"
	"    pid = os.fork()\n"
	"    if pid == 0:\n"
	"        if way == 'execve':\n"
	"            r = libc.execve(None, argv, envp)\n"
	"        else:\n"
	"            libc.syscall.restype = ctypes.c_long\n"
	"            r = libc.syscall(ctypes.c_long(59), None, argv, envp)\n"
	"        os.write(1, f'NULL-PATH {way} {r} {ctypes.get_errno()}\\n'.encode())\n"
	"        os._exit(7)\n"
	"    _, st = os.waitpid(pid, 0)\n"
	"    print('CHILD', way, os.waitstatus_to_exitcode(st), flush=True)\n";

Test(shim_envsecrets, relaunch_with_a_null_path_fails_with_efault)
{
	struct cf_fx_out o;
	char **env = make_env(NULL);
	st_harness(&o, &t, env, NULL, CF_ARGV("/usr/bin/python3", "-c", (char *)py_null_path));
	st_dump("python3 harness, execve(NULL)", &o);
	cr_expect_eq(o.status, 0);
	char want[64];
	snprintf(want, sizeof want, "NULL-PATH execve -1 %d\n", EFAULT);
	cr_expect(strstr(o.out, want), "execve(NULL) did not fail with EFAULT");
	snprintf(want, sizeof want, "NULL-PATH syscall -1 %d\n", EFAULT);
	cr_expect(strstr(o.out, want), "syscall(SYS_execve, NULL) did not fail with EFAULT");
	cr_expect(strstr(o.out, "CHILD execve 7\n") && strstr(o.out, "CHILD syscall 7\n"),
		  "a child did not end on its own");
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}
