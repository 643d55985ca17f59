/* The harness role follows the harness (issue 11): an interpreted harness
 * that relaunches itself (same interpreter, same script) is the harness
 * again, and so is a program named with --harness-program; every other child
 * is fenced, and a fenced process that starts either stays fenced. A static
 * harness program is refused unless accepted with --static-harness. */
#include <criterion/criterion.h>
#include <fcntl.h>
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

TestSuite(shim_follow, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

static void copy_file(const char *src, const char *out)
{
	int in = open(src, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	cr_assert(in >= 0 && o >= 0, "copy %s to %s", src, out);
	char buf[65536];
	ssize_t k;
	while ((k = read(in, buf, sizeof buf)) > 0)
		cr_assert_eq(write(o, buf, (size_t)k), k);
	close(in);
	close(o);
}

/* SRC copied to root/NAME with mode 0755: outside every writable location
 * (a checkout may lie in /tmp, which is one). */
static void install(char *out, size_t n, const char *src, const char *name)
{
	cf_fx_fmt(out, n, "%s/%s", t.fx.root, name);
	copy_file(src, out);
}

static bool exists(const char *rel)
{
	char p[PATH_MAX + 64];
	cf_fx_fmt(p, sizeof p, "%s/%s", t.fx.home, rel);
	return access(p, F_OK) == 0;
}

/* A Python harness that relaunches itself, as Gemini CLI does with node:
 * the relaunch (through subprocess, whose child calls execve, and through
 * os.posix_spawn, the shim's own launch) writes its state in the home, which
 * no fenced program may; its own children are fenced. The same interpreter
 * without the script, with another script, and the relaunch started by a
 * fenced shell are all fenced. */
static const char harness_py[] =
	"import errno, os, subprocess, sys\n"
	"def write(p):\n"
	"    try:\n"
	"        open(p, 'w').close(); return 'ok'\n"
	"    except OSError as e: return errno.errorcode[e.errno]\n"
	"home, me = os.environ['HOME'], os.path.abspath(__file__)\n"
	"if sys.argv[1:2] == ['relaunched']:\n"
	"    m = os.environ.get('CREDFENCE_HARNESS', ':').split(':')[0]\n"
	"    print('RELAUNCHED %s write=%s marker=%s' % (sys.argv[2], write(home + '/.state-' + sys.argv[2]),\n"
	"          'self' if m == str(os.getpid()) else 'other'), flush=True)\n"
	"    d = os.system('cat \"$CF_T_KEY\"') >> 8\n"
	"    l = os.system('cat \"$CF_T_ALLOWED\"') >> 8\n"
	"    print('CASE relaunched-%s-child deny=%d legit=%d' % (sys.argv[2], d, l), flush=True)\n"
	"    sys.exit(0)\n"
	"print('TOP write=%s' % write(home + '/.state-top'), flush=True)\n"
	"subprocess.run([sys.executable, '-u', me, 'relaunched', 'subprocess'], check=True)\n"
	"os.waitpid(os.posix_spawn(sys.executable, [sys.executable, me, 'relaunched', 'spawn'], os.environ), 0)\n"
	"subprocess.run([sys.executable, '-c', 'import os, errno\\n'\n"
	"    'try:\\n    open(os.environ[\"HOME\"] + \"/.state-other\", \"w\"); print(\"OTHER ok\")\\n'\n"
	"    'except OSError as e: print(\"OTHER\", errno.errorcode[e.errno])'])\n"
	"subprocess.run([sys.executable, os.environ['CF_T_OTHER_PY']])\n"
	"os.system('\"%s\" \"%s\" relaunched fenced' % (sys.executable, me))\n";

static const char other_py[] =
	"import errno, os\n"
	"try:\n"
	"    open(os.environ['HOME'] + '/.state-other-script', 'w'); print('OTHER-SCRIPT ok')\n"
	"except OSError as e: print('OTHER-SCRIPT', errno.errorcode[e.errno])\n";

/* harness_py written in DIR/fakeharness.py (its path in SCRIPT), other_py
 * in the root, and the environment that names the latter. */
static char **python_harness(char *script, size_t n, const char *dir)
{
	char other[PATH_MAX + 32], ov[PATH_MAX + 64];
	cf_fx_fmt(script, n, "%s/fakeharness.py", dir);
	cf_fx_fmt(other, sizeof other, "%s/other.py", t.fx.root);
	cf_fx_write(script, harness_py);
	cf_fx_write(other, other_py);
	cf_fx_fmt(ov, sizeof ov, "CF_T_OTHER_PY=%s", other);
	return st_env(&t, (const char *[]){ov, NULL});
}

Test(shim_follow, an_interpreted_harness_relaunching_itself_stays_the_harness)
{
	char script[PATH_MAX + 32];
	char **env = python_harness(script, sizeof script, t.fx.root);
	struct cf_fx_out o;
	st_harness(&o, &t, env, (const char *[]){"--log", t.log, NULL},
		   CF_ARGV("/usr/bin/python3", script));
	st_dump("python harness relaunching itself", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.out, "TOP write=ok\n"), "the harness could not write its state");
	cr_expect(strstr(o.out, "RELAUNCHED subprocess write=ok marker=self\n"),
		  "the relaunch through subprocess was not the harness");
	cr_expect(strstr(o.out, "RELAUNCHED spawn write=ok marker=self\n"),
		  "the relaunch through posix_spawn was not the harness");
	/* EROFS: a harness child is in the mount namespace of the fenced
	 * tree, where the home outside the writable locations is read-only. */
	cr_expect(strstr(o.out, "RELAUNCHED fenced write=EACCES marker=other\n") ||
			  strstr(o.out, "RELAUNCHED fenced write=EROFS marker=other\n"),
		  "the relaunch started by a fenced shell was not fenced");
	/* Python's subprocess children keep the namespace since the shim closes
	 * around its descriptors (fdkeep.c): EROFS there too. */
	cr_expect(strstr(o.out, "OTHER EACCES\n") || strstr(o.out, "OTHER EROFS\n"),
		  "python -c was not fenced");
	cr_expect(strstr(o.out, "OTHER-SCRIPT EACCES\n") || strstr(o.out, "OTHER-SCRIPT EROFS\n"),
		  "another script was not fenced");
	cr_expect(exists(".state-top") && exists(".state-subprocess") && exists(".state-spawn"));
	cr_expect(!exists(".state-fenced") && !exists(".state-other") && !exists(".state-other-script"));
	/* Each relaunch's children are fenced, as the first harness's are. */
	st_assert_cases(&t, &o, 3, 3, false);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* The script lies in the workspace, where a fenced program could change it:
 * its relaunch is fenced, with a warning. */
Test(shim_follow, a_script_in_a_writable_location_is_not_followed)
{
	char script[PATH_MAX + 32];
	char **env = python_harness(script, sizeof script, t.fx.ws);
	struct cf_fx_out o;
	st_harness(&o, &t, env, NULL, CF_ARGV("/usr/bin/python3", script));
	st_dump("python harness in the workspace", &o);
	cr_expect(strstr(o.err, "credfence: warning: the harness's script "), "no warning: %s", o.err);
	cr_expect(strstr(o.err, "a relaunch of the harness"), "%s", o.err);
	cr_expect(strstr(o.out, "TOP write=ok\n"));
	cr_expect(!strstr(o.out, "RELAUNCHED subprocess write=ok"), "a relaunch was followed");
	cr_expect(!exists(".state-subprocess") && !exists(".state-spawn"));
	cf_fx_assert_no_marker(&t.fx, &o);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* --harness-program: that program, started by the free harness, is the
 * harness (it writes in the home, it has a marker of its own, its children
 * are fenced); an unrelated program is fenced; a fenced shell that starts the
 * same program, even naming itself in the marker, gets it fenced (EACCES on
 * the key, no marker in any output). */
Test(shim_follow, a_harness_program_is_the_harness_and_only_when_the_harness_starts_it)
{
	char role[PATH_MAX + 32], rv[PATH_MAX + 64];
	install(role, sizeof role, st_build("tests/shim/cf-role"), "cf-role");
	cf_fx_fmt(rv, sizeof rv, "CF_T_ROLE=%s", role);
	char **env = st_env(&t, (const char *[]){rv, NULL});
	struct cf_fx_out o;
	st_harness(&o, &t, env, (const char *[]){"--harness-program", role, "--log", t.log, NULL},
		   CF_ARGV("/bin/bash", "-c",
			   "\"$CF_T_ROLE\" write \"$HOME/.state-program\" marker - system "
			   "'cat \"$CF_T_KEY\"; d=$?; cat \"$CF_T_ALLOWED\"; "
			   "echo \"CASE program-child deny=$d legit=$?\"'\n"
			   "/usr/bin/touch \"$HOME/.state-touch\"; echo \"TOUCH $?\"\n"
			   "bash -c 'export CREDFENCE_HARNESS=\"$$:$(cut -d\" \" -f22 /proc/$$/stat)\"; "
			   "exec \"$CF_T_ROLE\" write \"$HOME/.state-fenced\" read \"$CF_T_KEY\" marker -'\n"
			   "echo done\n"));
	st_dump("--harness-program", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.out, "ROLE write ok\nROLE marker self\n"),
		  "the harness program was not the harness");
	cr_expect(strstr(o.out, "TOUCH 1\n"), "an unrelated program was not fenced");
	cr_expect(strstr(o.out, "ROLE write EACCES\nROLE read EACCES\nROLE marker self\n") ||
			  strstr(o.out, "ROLE write EROFS\nROLE read EACCES\nROLE marker self\n"),
		  "the harness program started by a fenced shell was not fenced");
	cr_expect(exists(".state-program"));
	cr_expect(!exists(".state-touch") && !exists(".state-fenced"));
	st_assert_cases(&t, &o, 1, 1, false);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* What credfence harness refuses as a harness program, before anything runs. */
Test(shim_follow, harness_programs_that_are_refused)
{
	char inws[PATH_MAX + 32], missing[PATH_MAX + 32], ran[PATH_MAX + 32];
	cf_fx_fmt(inws, sizeof inws, "%s/cf-role", t.fx.ws);
	cf_fx_fmt(missing, sizeof missing, "%s/no-such-program", t.fx.root);
	cf_fx_fmt(ran, sizeof ran, "%s/ran", t.fx.ws);
	copy_file(st_build("tests/shim/cf-role"), inws);
	static const struct {
		const char *prog, *says;
	} cases[] = {
		{"/bin/bash", "runs whatever it is given"},
		{"/usr/bin/python3", "runs whatever it is given"},
		{NULL /* missing */, "is not an executable file"},
		{NULL /* in the workspace */, "lies in writable location"},
		{"/etc/passwd", "is not an executable file"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *prog = cases[i].prog ? cases[i].prog : i == 2 ? missing : inws;
		struct cf_fx_out o;
		st_harness(&o, &t, NULL, (const char *[]){"--harness-program", prog, NULL},
			   CF_ARGV("/usr/bin/touch", ran));
		cr_expect_eq(o.status, 125, "case %zu (%s): status %d: %s", i, prog, o.status, o.err);
		cr_expect(strncmp(o.err, "credfence: harness: --harness-program ", 38) == 0,
			  "case %zu: %s", i, o.err);
		cr_expect(strstr(o.err, cases[i].says), "case %zu: %s", i, o.err);
		cr_expect(strstr(o.err, "Nothing was run."), "case %zu: %s", i, o.err);
		cr_expect(access(ran, F_OK) != 0, "case %zu: the command ran", i);
		cf_fx_out_free(&o);
	}
	/* An option of credfence harness only. */
	struct cf_fx_out o;
	char *const run[] = {(char *)cf_fx_bin(), "run", "--harness-program", "/bin/true", "--",
			     "/bin/true", NULL};
	char **env = st_env(&t, NULL);
	cf_fx_run(&o, t.fx.ws, env, NULL, run);
	cr_expect_eq(o.status, 125);
	cr_expect(strstr(o.err, "credfence: run: --harness-program is an option of credfence "
				"harness only"), "%s", o.err);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* busybox (static) as root/fakecodex: a harness program that loads no shim. */
static void install_fakecodex(char *bb, size_t n)
{
	cf_test_require_tool("/bin/busybox");
	install(bb, n, "/bin/busybox", "fakecodex");
}

/* The environment with CF_T_BB naming BB, and ALSO when not NULL. */
static char **fakecodex_env(const char *bb, const char *also)
{
	char bv[PATH_MAX + 64];
	cf_fx_fmt(bv, sizeof bv, "CF_T_BB=%s", bb);
	return st_env(&t, (const char *[]){bv, also, NULL});
}

/* A static harness program (here busybox under another name) loads no shim:
 * refused in required mode with what then fences its children and the
 * setting for Codex; accepted with --static-harness (and its twin), when a
 * dynamic program it starts with the preload kept fences itself. */
Test(shim_follow, a_static_harness_program_is_refused_unless_accepted)
{
	char bb[PATH_MAX + 32];
	install_fakecodex(bb, sizeof bb);
	char **env = fakecodex_env(bb, NULL);
	/* argv[0] sh: busybox runs its shell, which execs /usr/bin/cat. */
	char *cmd[] = {"/bin/bash", "-c",
		       "(exec -a sh \"$CF_T_BB\" -c '/usr/bin/cat \"$CF_T_KEY\"; d=$?; "
		       "/usr/bin/cat \"$CF_T_ALLOWED\"; echo \"CASE static-child deny=$d legit=$?\"; "
		       "/usr/bin/grep CapEff /proc/self/status; true')\n"
		       "echo done\n",
		       NULL};
	struct cf_fx_out o;
	st_harness(&o, &t, env, (const char *[]){"--harness-program", bb, NULL}, cmd);
	st_dump("a static harness program, required", &o);
	cr_expect_eq(o.status, 125);
	char want[PATH_MAX + 64];
	cf_fx_fmt(want, sizeof want, "credfence: harness: %s is statically linked", bb);
	cr_expect(strncmp(o.err, want, strlen(want)) == 0, "want: %s\n%s", want, o.err);
	cr_expect(strstr(o.err, "--static-harness (CREDFENCE_STATIC_HARNESS=1)"), "%s", o.err);
	cr_expect(strstr(o.err, "[shell_environment_policy] set = { LD_PRELOAD = "), "%s", o.err);
	cr_expect(strstr(o.err, "Nothing was run."), "%s", o.err);
	cr_expect(!strstr(o.out, "done"));
	cf_fx_out_free(&o);

	st_harness(&o, &t, env, (const char *[]){"--harness-program", bb, "--static-harness", NULL},
		   cmd);
	st_dump("a static harness program, --static-harness", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.err, "accepted with --static-harness"), "%s", o.err);
	st_assert_cases(&t, &o, 1, 1, false);
	/* The child fences itself inside the harness's Landlock domain, which
	 * refuses it the mounts of write protection: the user namespace it made
	 * for them gives it no capability to go on with (issue 36: they saw
	 * through the guard's mode-000 covers, so the key was missing instead
	 * of denied). Root makes no user namespace. */
	cr_expect(geteuid() == 0 || strstr(o.out, "CapEff:\t0000000000000000"),
		  "a fenced child kept capabilities: %s", o.out);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);

	/* The twin. */
	env = fakecodex_env(bb, "CREDFENCE_STATIC_HARNESS=1");
	st_harness(&o, &t, env, (const char *[]){"--harness-program", bb, NULL}, cmd);
	cr_expect_eq(o.status, 0, "%s", o.err);
	st_assert_cases(&t, &o, 1, 1, false);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* The harness replacing its own image with a static program (bash's last
 * command, Codex's wrapper with Node's process.execve) would keep the role in
 * a process that fences nothing: refused in required mode (the exec fails
 * with EPERM, nothing runs), accepted with --static-harness. */
Test(shim_follow, the_harness_replacing_itself_with_a_static_program)
{
	char bb[PATH_MAX + 32];
	install_fakecodex(bb, sizeof bb);
	char **env = fakecodex_env(bb, NULL);
	struct cf_fx_out o;
	st_harness(&o, &t, env, NULL,
		   CF_ARGV("/bin/bash", "-c", "echo start; exec -a cat \"$CF_T_BB\" \"$CF_T_KEY\""));
	st_dump("harness execs a static program in place", &o);
	cr_expect(strstr(o.out, "start\n"));
	cr_expect_neq(o.status, 0);
	cr_expect(strstr(o.err, "credfence: the harness replaces itself with "), "%s", o.err);
	cr_expect(strstr(o.err, "which loads no shim (statically linked"), "%s", o.err);
	cr_expect(strstr(o.err, "Operation not permitted"), "bash saw no EPERM: %s", o.err);
	cf_fx_assert_no_marker(&t.fx, &o);
	cf_fx_out_free(&o);

	st_harness(&o, &t, env, (const char *[]){"--static-harness", NULL},
		   CF_ARGV("/bin/bash", "-c", "echo start; exec -a echo \"$CF_T_BB\" ran"));
	cr_expect_eq(o.status, 0, "%s", o.err);
	cr_expect(strstr(o.out, "start\nran\n"), "%s", o.out);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}
