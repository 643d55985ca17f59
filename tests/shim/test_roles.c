/* The roles: self mode (a shell's own redirections and builtins), depth (20
 * nested bash -c, one layer), a fenced descendant that tries to pass for the
 * harness, and the failure modes (required refuses, best-effort logs). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

TestSuite(shim_roles, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

static const char *kv(char *buf, size_t n, const char *k, const char *v)
{
	snprintf(buf, n, "%s=%s", k, v);
	return buf;
}

/* Self mode: the shim preloaded, no harness marker, the fence's places and
 * the log given by the environment. */
static char **self_mode_env(void)
{
	char pre[PATH_MAX + 64], home[PATH_MAX + 64], ws[PATH_MAX + 64], log[PATH_MAX + 64];
	return st_env(&t, (const char *[]){kv(pre, sizeof pre, "LD_PRELOAD", st_shim()),
					   kv(home, sizeof home, "CREDFENCE_HOME", t.fx.home),
					   kv(ws, sizeof ws, "CREDFENCE_WORKSPACE", t.fx.ws),
					   kv(log, sizeof log, "CREDFENCE_LOG", t.log), NULL});
}

/* One application of the fence: the process that loaded the shim. */
static void expect_applied_once(void)
{
	size_t n = st_log_lines(&t, "\"verdict\":\"applied\"");
	cr_expect_eq(n, 1, "%zu applied lines", n);
}

Test(shim_roles, self_mode_shell_builtins)
{
	char **env = self_mode_env();
	struct cf_fx_out o;
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV("/bin/bash", "-c",
			  "cat < \"$CF_T_KEY\"; echo \"CASE redirect deny=$? legit=0\"\n"
			  "read l < \"$CF_T_KEY\"; echo \"CASE read deny=$? legit=0 $l\"\n"
			  "x=$(< \"$CF_T_KEY\"); echo \"CASE subst deny=$? legit=0 $x\"\n"
			  "source \"$CF_T_KEY\"; echo \"CASE source deny=$? legit=0\"\n"
			  ". \"$CF_T_KEY\"; echo \"CASE dot deny=$? legit=0\"\n"
			  "mapfile -t a < \"$CF_T_KEY\"; echo \"CASE mapfile deny=$? legit=0 ${a[*]}\"\n"
			  "echo \"$(< \"$CF_T_ALLOWED\")\"; read l < \"$CF_T_ALLOWED\"; echo \"$l\"\n"
			  /* env -i drops LD_PRELOAD and everything else: still fenced. */
			  "env -i /bin/bash -c 'cat < \"$0\"; echo \"CASE env-i deny=$? legit=0\"' \"$CF_T_KEY\"\n"
			  "env -i CF_T_KEYS=\"$CF_T_KEYS\" CF_T_ALLOWED=\"$CF_T_ALLOWED\" \"$CF_T_PROBE\"; "
			  "echo \"PROBE $?\"\n"));
	st_dump("self mode bash", &o);
	cr_expect_eq(o.status, 0);
	/* Each denied: status 1, "Permission denied" (EACCES), no marker. */
	st_assert_cases(&t, &o, 7, 2, false);
	cr_expect(strstr(o.out, "PROBE 0\n"), "cf-probe under env -i was not fenced (see its status)");
	expect_applied_once();
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* A process in self mode goes on as the keeper of its own supervisor
 * (role.c: the program runs on in its grandchild, without an exec), so it
 * must hold none of the supervisor's descriptors: with its listening
 * socket, a fenced process could accept connections made to the
 * supervisor, which pass the identity check (SO_PEERCRED names the process
 * that called listen), and receive what is sent to it (seed 41's
 * supervisor.c:406, the keeper's close(ls) removed). Python, in self mode
 * itself, lists the listening sockets it holds. */
Test(shim_roles, a_self_mode_process_holds_no_listener_of_its_supervisor)
{
	const char *py = cf_test_require_tool("/usr/bin/python3");
	char **env = self_mode_env();
	struct cf_fx_out o;
	cf_fx_run(&o, t.fx.ws, env, NULL,
		  CF_ARGV((char *)py, "-c",
			  "import os, socket\n"
			  "n = 0\n"
			  "for fd in sorted(int(f) for f in os.listdir('/proc/self/fd')):\n"
			  "    try:\n"
			  "        s = socket.socket(fileno=fd)\n"
			  "    except OSError:\n"
			  "        continue\n"
			  "    try:\n"
			  "        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):\n"
			  "            n += 1\n"
			  "            print('LISTENER', fd, s.getsockname())\n"
			  "    finally:\n"
			  "        s.detach()\n"
			  "print('LISTENERS', n)\n"
			  "try:\n"
			  "    open(os.environ['CF_T_KEY']).close()\n"
			  "    print('KEY read')\n"
			  "except PermissionError:\n"
			  "    print('KEY denied')\n"));
	st_dump("self mode python", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.out, "LISTENERS 0\n"), "%s", o.out);
	/* It did fence itself, with a supervisor of its own. */
	cr_expect(strstr(o.out, "KEY denied\n"), "%s", o.out);
	expect_applied_once();
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

Test(shim_roles, depth_20_nested_bash)
{
	char *nest = cf_fx_slurp(st_src("scripts/nest.sh"));
	cr_assert(nest);
	char *nv = malloc(strlen(nest) + 16);
	sprintf(nv, "CF_NEST=%s", nest);
	char shim[PATH_MAX + 64];
	char **env = st_env(&t, (const char *[]){nv, kv(shim, sizeof shim, "CF_T_SHIM", st_shim()),
						 "CF_DEPTH=0", NULL});
	struct cf_fx_out o;
	st_harness(&o, &t, env, (const char *[]){"--log", t.log, NULL},
		   CF_ARGV("/bin/bash", "-c", "bash -c \"$CF_NEST\"; exit $?"));
	st_dump("20 nested bash -c", &o);
	cr_expect_eq(o.status, 0, "the chain ended with %d", o.status);
	cr_expect(strstr(o.out, "CASE leaf depth=20 "), "the leaf did not run at depth 20");
	st_assert_cases(&t, &o, 1, 1, false);
	cr_expect(strstr(o.out, "PROBE 0\n"), "cf-probe at the leaf was not fenced");
	/* The first child of the harness was fenced; no level below added a layer. */
	cr_expect_eq(st_log_lines(&t, NULL), 1, "%zu sandbox_status lines, expected 1",
		     st_log_lines(&t, NULL));
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
	free(nv);
	free(nest);
}

Test(shim_roles, descendant_can_not_pass_for_the_harness)
{
	char shim[PATH_MAX + 64];
	char **env = st_env(&t, (const char *[]){kv(shim, sizeof shim, "CF_T_SHIM", st_shim()), NULL});
	struct cf_fx_out o;
	/* In a fenced child: name itself in the marker, load the shim again, exec. */
	const char *impostor =
		"st=$(cut -d' ' -f22 /proc/$$/stat); export CREDFENCE_HARNESS=\"$$:$st\"; "
		"export LD_PRELOAD=\"$CF_T_SHIM\"; echo \"MARKER $CREDFENCE_HARNESS\"; exec \"$@\"";
	st_harness(&o, &t, env, NULL,
		   CF_ARGV("/bin/bash", "-c",
			   "bash -c \"$0\" impostor \"$CF_T_PROBE\"; echo \"PROBE $?\"\n"
			   "bash -c \"$0\" impostor /usr/bin/python3 -c '\n"
			   "import os\n"
			   "try:\n"
			   "    open(os.environ[\"CF_T_KEY\"]).read(); print(\"OWN readable\")\n"
			   "except PermissionError as e:\n"
			   "    print(\"OWN EACCES\" if e.errno == 13 else \"OWN other\")\n"
			   "d = os.system(\"cat \\\"$CF_T_KEY\\\"\") >> 8\n"
			   "l = os.system(\"cat \\\"$CF_T_ALLOWED\\\"\") >> 8\n"
			   "print(\"CASE impostor-child deny=%d legit=%d\" % (d, l))'\n"
			   /* Not the last command: bash would exec it in place, as the harness. */
			   "echo done\n",
			   (char *)impostor));
	st_dump("impostor", &o);
	cr_expect_eq(o.status, 0);
	cr_expect_eq(st_count(o.out, "MARKER "), 2, "the impostor did not run");
	cr_expect(strstr(o.out, "PROBE 0\n"), "the impostor cf-probe could read a key");
	cr_expect(strstr(o.out, "OWN EACCES"), "the impostor python could read the key itself");
	st_assert_cases(&t, &o, 1, 1, false);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

Test(shim_roles, required_refuses_when_not_effective)
{
	char ran[PATH_MAX + 16], wr[PATH_MAX + 16];
	snprintf(ran, sizeof ran, "%s/ran", t.fx.ws);
	snprintf(wr, sizeof wr, "%s/.ssh", t.fx.home);
	struct cf_fx_out o;
	st_harness(&o, &t, NULL, (const char *[]){"--writable", wr, "--log", t.log, NULL},
		   CF_ARGV("/usr/bin/touch", ran));
	st_dump("required with an overlapping --writable", &o);
	cr_expect_eq(o.status, 125);
	const char *want = "credfence: read isolation is not effective: writable location ";
	cr_expect(strncmp(o.err, want, strlen(want)) == 0,
		  "unexpected message: %s", o.err);
	cr_expect(strstr(o.err, "overlaps secret"), "no overlap named: %s", o.err);
	cr_expect(access(ran, F_OK) != 0, "the command ran");
	cr_expect_eq(st_log_lines(&t, "\"verdict\":\"not effective\""), 1);
	cf_fx_out_free(&o);
}

Test(shim_roles, best_effort_runs_and_logs)
{
	char wr[PATH_MAX + 16];
	snprintf(wr, sizeof wr, "%s/.ssh", t.fx.home);
	struct cf_fx_out o;
	st_harness(&o, &t, NULL, (const char *[]){"--best-effort", "--writable", wr, "--log", t.log, NULL},
		   CF_ARGV("/bin/bash", "-c", "cat \"$CF_T_ALLOWED\"; /bin/true; echo ran"));
	st_dump("best-effort with an overlapping --writable", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.out, ST_ALLOWED_TEXT) && strstr(o.out, "ran\n"), "the children did not run");
	/* credfence itself, then each child launch: not effective, with the reason. */
	size_t ne = st_log_lines(&t, "\"verdict\":\"not effective\"");
	cr_expect_geq(ne, 3, "%zu not-effective lines, expected one for credfence and each child", ne);
	cr_expect_eq(st_log_lines(&t, "overlaps secret"), ne, "a line without the reason");
	cr_expect_eq(st_log_lines(&t, "\"verdict\":\"applied\""), 0);
	cf_fx_out_free(&o);
}

/* Python that kills its parent (the harness's supervisor, above it) and
 * waits until it has ended. */
#define KILL_SUPERVISOR_PY \
	"import os, time\n" \
	"p = os.getppid()\n" \
	"os.kill(p, 9)\n" \
	"for i in range(500):\n" \
	"    try:\n" \
	"        s = open('/proc/%d/stat' % p).read().rsplit(')', 1)[1].split()[0]\n" \
	"    except OSError:\n" \
	"        break\n" \
	"    if s == 'Z':\n" \
	"        break\n" \
	"    time.sleep(0.01)\n"

/* Best effort runs a child unfenced only where isolation is not
 * effective; a harness whose IPC supervisor has ended (killed: the
 * harness's parent, above it) refuses every child in best-effort mode
 * too, as nothing more can be fenced under it, whether write protection
 * is required or not: posix_spawn fails with EPERM and nothing starts
 * (seed 41's fence.c:307, `||` made `&&` in cf_fence_refuses_always: the
 * end the harness found before the launch was no longer decoded as one
 * that refuses always, and posix_spawn reported a child started, which
 * refused itself later and ended with 125). The Python harness waits for
 * the end, then starts each child by posix_spawn (the shim's own launch:
 * the harness looks first). */
Test(shim_roles, best_effort_refuses_every_child_once_the_supervisor_ended)
{
	static const char *const modes[] = {"--write-protect=require", "--write-protect=warn"};
	char **env = st_env(&t, NULL);
	for (size_t m = 0; m < 2; m++) {
		struct cf_fx_out o;
		st_harness(&o, &t, env,
			   (const char *[]){"--best-effort", modes[m], "--log", t.log, NULL},
			   CF_ARGV("/usr/bin/python3", "-c",
				   KILL_SUPERVISOR_PY
				   "for name, f in (('key', 'CF_T_KEY'), ('allowed', 'CF_T_ALLOWED')):\n"
				   "    a = ['/bin/cat', os.environ[f]]\n"
				   "    try:\n"
				   "        st = os.waitpid(os.posix_spawn(a[0], a, os.environ), 0)[1]\n"
				   "        print(name, 'ran', st, flush=True)\n"
				   "    except OSError as e:\n"
				   "        print(name, 'refused', e.errno, flush=True)\n"
				   "print('harness-done', flush=True)\n"));
		st_dump(modes[m], &o);
		/* Its exit status is the supervisor's to pass on: not known. */
		cr_expect(strstr(o.out, "harness-done\n"), "%s: %s", modes[m], o.out);
		cf_fx_assert_no_marker(&t.fx, &o);
		cr_expect(strstr(o.out, "key refused 1\n") && strstr(o.out, "allowed refused 1\n") &&
				  !strstr(o.out, ST_ALLOWED_TEXT),
			  "%s: a child was started:\n%s", modes[m], o.out);
		cr_expect_eq(st_count(o.err, "the IPC supervisor has ended; nothing more can be "
					     "fenced under it (start the harness or command again). "
					     "Nothing was run.\n"),
			     2, "%s: %s", modes[m], o.err);
		cf_fx_out_free(&o);
	}
	cf_fx_env_free(env);
}

/* The harness watches its supervisor itself, at each launch: once it has
 * ended, the harness says so and logs it, also when the launch is one no
 * fenced child makes (a program named with --harness-program, the harness
 * again, which is not fenced and so never finds the end itself). Seed 41's
 * watch.c:51 (cf_shim_watch_supervisor, now in fence_cache.c), the
 * harness's check negated: the end went unsaid until a
 * fenced child met it. */
Test(shim_roles, the_harness_tells_its_supervisor_ended_at_its_next_launch)
{
	struct cf_fx_out o;
	char **env = st_env(&t, NULL);
	st_harness(&o, &t, env,
		   (const char *[]){"--harness-program", "/bin/true", "--log", t.log, NULL},
		   CF_ARGV("/usr/bin/python3", "-c",
			   KILL_SUPERVISOR_PY
			   "pid = os.posix_spawn('/bin/true', ['true'], os.environ)\n"
			   "print('again', os.waitpid(pid, 0)[1], flush=True)\n"));
	cf_fx_env_free(env);
	st_dump("the harness again, its supervisor killed", &o);
	cr_expect(strstr(o.out, "again 0\n"), "the harness again did not run:\n%s", o.out);
	cr_expect_eq(st_count(o.err, "credfence: the IPC supervisor of this harness (pid "), 1,
		     "not said once:\n%s", o.err);
	char *log = cf_fx_slurp(t.log);
	cr_expect(log && st_count(log, "{\"event\":\"supervisor_ended\"") == 1, "the log: %s",
		  log ? log : "(none)");
	free(log);
	cf_fx_out_free(&o);
}

/* A child whose exec returns without running anything and without an
 * error (a seccomp policy that answers execve with SECCOMP_RET_ERRNO and
 * data 0 makes the call return 0) is a failed launch: the shim's
 * posix_spawn says ECHILD and reaps it, never that a child started (seed
 * 41's launch.c:312, `rc < 0` made `rc <= 0`: posix_spawn returned 0 for
 * a child that ran nothing and ended with 127). The Python harness
 * installs that policy on itself, then spawns. */
Test(shim_roles, a_spawn_whose_exec_returns_0_fails_with_echild)
{
	struct cf_fx_out o;
	char nr[32];
	cf_fx_fmt(nr, sizeof nr, "CF_T_EXECVE=%d", (int)SYS_execve);
	char **env = st_env(&t, (const char *[]){nr, NULL});
	st_harness(&o, &t, env, (const char *[]){"--log", t.log, NULL},
		   CF_ARGV("/usr/bin/python3", "-c",
			   "import ctypes, os, struct\n"
			   "libc = ctypes.CDLL(None, use_errno=True)\n"
			   "nr = int(os.environ['CF_T_EXECVE'])\n"
			   "ins = [(0x20, 0, 0, 0), (0x15, 0, 1, nr),\n"
			   "       (0x06, 0, 0, 0x00050000), (0x06, 0, 0, 0x7fff0000)]\n"
			   "buf = ctypes.create_string_buffer(b''.join(struct.pack('HBBI', *i) for i in ins))\n"
			   "class Prog(ctypes.Structure):\n"
			   "    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]\n"
			   "prog = Prog(len(ins), ctypes.addressof(buf))\n"
			   "assert libc.prctl(38, 1, 0, 0, 0) == 0\n"
			   "assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0\n"
			   "try:\n"
			   "    pid = os.posix_spawn('/bin/true', ['true'], os.environ)\n"
			   "    print('spawned', os.waitpid(pid, 0)[1], flush=True)\n"
			   "except OSError as e:\n"
			   "    print('refused', e.errno, flush=True)\n"));
	cf_fx_env_free(env);
	st_dump("a spawn whose exec returns 0", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.out, "refused 10\n"), "not ECHILD (10):\n%s", o.out);
	cf_fx_out_free(&o);
}

/* The harness's plan goes stale and can no longer be made effective at a
 * launch (a directory beside a secret outgrows --max-entries): in required
 * mode every spawn path fails with EPERM and nothing runs. */
Test(shim_roles, required_fails_each_launch_with_eperm)
{
	struct cf_fx_out o;
	char **env = st_env(&t, NULL);
	st_harness(&o, &t, env, (const char *[]){"--max-entries", "200", "--log", t.log, NULL},
		   CF_ARGV("/usr/bin/python3", "-c",
			   "import os, errno, subprocess\n"
			   "home = os.environ['HOME']\n"
			   "for i in range(400): open(os.path.join(home, 'junk-%d' % i), 'w').close()\n"
			   "A = ['/bin/cat', os.environ['CF_T_ALLOWED']]\n"
			   "def err(f):\n"
			   "    try:\n"
			   "        f(); return 'ran'\n"
			   "    except OSError as e: return errno.errorcode[e.errno]\n"
			   "print('R subprocess', err(lambda: subprocess.call(A)))\n"
			   "print('R posix_spawn', err(lambda: os.waitpid(os.posix_spawn(A[0], A, os.environ), 0)))\n"
			   "print('R system', os.system('cat \"$CF_T_ALLOWED\"'))\n"
			   "p = os.popen('cat \"$CF_T_ALLOWED\"'); print('R popen', repr(p.read()))\n"));
	st_dump("required, stale plan beyond --max-entries", &o);
	cr_expect(strstr(o.out, "R subprocess EPERM"), "subprocess did not fail with EPERM");
	cr_expect(strstr(o.out, "R posix_spawn EPERM"), "os.posix_spawn did not fail with EPERM");
	cr_expect(strstr(o.out, "R system -1"), "system() did not report failure");
	cr_expect(!strstr(o.out, ST_ALLOWED_TEXT), "a child ran");
	cr_expect_geq(st_count(o.err, "credfence: read isolation is not effective: too many entries"), 3,
		      "no 'not effective' line on stderr");
	cr_expect_geq(st_log_lines(&t, "\"verdict\":\"not effective\""), 3);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* Issue 12, item 11: a Python harness's subprocess tries each PATH entry with
 * execve. The log names the program that ran (not the first candidate, which
 * does not exist), in one line. */
static char **env_with_path(const struct st *t, char *pathvar, size_t n)
{
	snprintf(pathvar, n, "PATH=%s/no-such-dir:%s/empty:/usr/bin:/bin", t->fx.ws, t->fx.ws);
	char empty[PATH_MAX + 16];
	snprintf(empty, sizeof empty, "%s/empty", t->fx.ws);
	cr_assert(mkdir(empty, 0755) == 0);
	return st_env(t, (const char *[]){pathvar, NULL});
}

Test(shim_roles, log_names_the_path_that_ran_once)
{
	char pathvar[2 * PATH_MAX + 64];
	char **env = env_with_path(&t, pathvar, sizeof pathvar);
	struct cf_fx_out o;
	st_harness(&o, &t, env, (const char *[]){"--log", t.log, NULL},
		   CF_ARGV("/usr/bin/python3", "-c",
			   "import os, subprocess\n"
			   "subprocess.run(['cat', os.environ['CF_T_ALLOWED']], check=True)\n"));
	st_dump("python harness, cat found in the third PATH entry", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.out, ST_ALLOWED_TEXT), "cat did not run");
	cr_expect_eq(st_log_lines(&t, "\"program\":\"/usr/bin/cat\""), 1,
		     "not one line naming /usr/bin/cat");
	cr_expect_eq(st_log_lines(&t, "cat\""), 1, "a line for a PATH candidate that did not run");
	cr_expect_eq(st_log_lines(&t, "no-such-dir"), 0);
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

Test(shim_roles, refused_launch_logs_one_line)
{
	/* The plan goes stale (a directory beside a secret outgrows
	 * --max-entries); /usr/bin/cat and /bin/cat both exist on a merged /usr,
	 * and the two before them do not: one refusal, one line, one message. */
	char pathvar[2 * PATH_MAX + 64];
	char **env = env_with_path(&t, pathvar, sizeof pathvar);
	struct cf_fx_out o;
	st_harness(&o, &t, env, (const char *[]){"--max-entries", "200", "--log", t.log, NULL},
		   CF_ARGV("/usr/bin/python3", "-c",
			   "import os, subprocess\n"
			   "home = os.environ['HOME']\n"
			   "for i in range(400): open(os.path.join(home, 'junk-%d' % i), 'w').close()\n"
			   "try:\n"
			   "    subprocess.run(['cat', os.environ['CF_T_ALLOWED']]); print('R ran')\n"
			   "except OSError as e: print('R', e.errno)\n"));
	st_dump("python harness, a refused launch", &o);
	cr_expect(strstr(o.out, "R 1\n"), "subprocess did not fail with EPERM");
	cr_expect(!strstr(o.out, ST_ALLOWED_TEXT), "cat ran");
	cr_expect_eq(st_log_lines(&t, "\"verdict\":\"not effective\""), 1,
		     "not one log line for one refused launch");
	cr_expect_eq(st_count(o.err, "credfence: read isolation is not effective"), 1,
		     "not one message for one refused launch");
	cf_fx_out_free(&o);
	cf_fx_env_free(env);
}

/* The shim makes the execvp family's PATH search itself (shim/linux/exec.c,
 * by raw system calls), and must stop where glibc's execvp stops: on an
 * error other than EACCES, ENOENT, ESTALE, ENOTDIR, ENODEV and ETIMEDOUT it
 * returns that error, and a later PATH entry of the same name is never run.
 * Here the first entry's cf-loop is a symlink to itself (ELOOP) and the
 * second's prints RAN-LATER: env (coreutils, execvp) must fail with status
 * 126 and the ELOOP words, as it does without the shim; from a harness child
 * (a fenced process's own exec) and from the harness itself. */
static void path_search_stops(struct cf_fx_out *o, char *const cmd[])
{
	char loop[PATH_MAX + 32], later[PATH_MAX + 32];
	cf_fx_fmt(later, sizeof later, "%s/later/cf-loop", t.fx.ws);
	cf_fx_write(later, "#!/bin/sh\necho RAN-LATER\n");
	cr_assert_eq(chmod(later, 0755), 0);
	cf_fx_fmt(loop, sizeof loop, "%s/first/cf-loop", t.fx.ws);
	cf_fx_mkdirs(cf_fx_at(t.fx.ws, "first"));
	if (symlink("cf-loop", loop) && errno != EEXIST)
		cr_assert_fail("symlink %s: %s", loop, strerror(errno));
	char **env = st_env(&t, NULL);
	st_harness(o, &t, env, NULL, cmd);
	cf_fx_env_free(env);
	cr_expect(!strstr(o->out, "RAN-LATER"), "a PATH entry after an ELOOP ran\n%s%s", o->out,
		  o->err);
	cr_expect(strstr(o->err, "Too many levels of symbolic links"), "%s%s", o->out, o->err);
	cf_fx_assert_no_marker(&t.fx, o);
}

Test(shim_roles, a_path_search_stops_at_eloop_as_execvp_does)
{
	char pathvar[2 * PATH_MAX + 16];
	cf_fx_fmt(pathvar, sizeof pathvar, "%s/first:%s/later", t.fx.ws, t.fx.ws);
	struct cf_fx_out o;
	path_search_stops(&o, CF_ARGV("/bin/sh", "-c",
				      "PATH=\"$1\" /usr/bin/env cf-loop; echo \"SEARCH $?\"", "sh",
				      pathvar));
	st_dump("a harness child's execvp, ELOOP first", &o);
	cr_expect(strstr(o.out, "SEARCH 126\n"), "%s%s", o.out, o.err);
	cf_fx_out_free(&o);
	char pathenv[2 * PATH_MAX + 16];
	cf_fx_fmt(pathenv, sizeof pathenv, "PATH=%s", pathvar);
	path_search_stops(&o, CF_ARGV("/usr/bin/env", pathenv, "cf-loop"));
	st_dump("the harness's own execvp, ELOOP first", &o);
	cr_expect_eq(o.status, 126, "%s%s", o.out, o.err);
	cf_fx_out_free(&o);
}

/* A bash harness runs a script without "#!": its child fenced itself at the
 * exec, the exec failed with ENOEXEC, and bash runs the script in that
 * child, which the shim still takes for the harness. The script moves a
 * secret (GNUPGHOME) and forks: the fork handler finds the cached fence
 * built from another environment and rebuilds it under the cache's lock,
 * and a fence prepared in a fenced process asks in a child of its own
 * whether the enclosing fence has a supervisor (enforce/linux/notify/ipc.c,
 * in_child). That child's fork must not run the handler again, which
 * would wait for the lock forever. A watchdog in the harness kills the
 * script after 30 s. */
Test(shim_roles, a_script_without_shebang_that_moves_a_secret_and_forks_does_not_hang)
{
	char script[PATH_MAX + 16];
	cf_fx_fmt(script, sizeof script, "%s/moves", t.fx.ws);
	cf_fx_write(script, "export GNUPGHOME=\"$HOME/gnupg-moved\"; x=$(echo sub); echo \"GOT $x\"\n");
	cr_assert_eq(chmod(script, 0755), 0);
	struct cf_fx_out o;
	char **env = st_env(&t, NULL);
	st_harness(&o, &t, env, NULL,
		   CF_ARGV("/bin/bash", "-c",
			   "./moves & p=$!; (sleep 30 >/dev/null 2>&1; kill -9 $p) >/dev/null 2>&1 & "
			   "w=$!; wait $p; echo \"RC $?\"; kill $w"));
	cf_fx_env_free(env);
	st_dump("a bash harness's child that moves a secret and forks", &o);
	cr_expect(strstr(o.out, "GOT sub\n"), "the script's fork did not come back:\n%s", o.out);
	cr_expect(strstr(o.out, "RC 0\n"), "the script did not end by itself:\n%s", o.out);
	cf_fx_out_free(&o);
}

/* A harness child that goes on after its exec failed (bash runs a script
 * without "#!" in the child whose exec gave ENOEXEC) holds none of the
 * harness's own descriptors: close-on-exec never ran. The prepared ruleset
 * above all: it stays open to landlock_add_rule after it was applied, and
 * the harness's later children apply that same one, so a rule added here
 * would widen every later child's fence. Nor the namespaces, the keeper's
 * socket, the watch's inotify, mount table and supervisor pidfd
 * (enforce/fence.h, cf_fence_close_parents_fds). */
Test(shim_roles, a_child_that_goes_on_without_its_exec_holds_no_harness_descriptor)
{
	char script[PATH_MAX + 16];
	static const char list[] =
		"for f in /proc/$BASHPID/fd/*; do echo \"$1 ${f##*/} $(readlink \"$f\")\"; done\n";
	cf_fx_fmt(script, sizeof script, "%s/listfds", t.fx.ws);
	cf_fx_write(script, list);
	cr_assert_eq(chmod(script, 0755), 0);
	/* The control: the same with "#!", whose exec works, so close-on-exec
	 * ran; the numbers it holds are the ones the harness meant to pass. */
	char with[PATH_MAX + 16], text[sizeof list + 16];
	cf_fx_fmt(with, sizeof with, "%s/listfds2", t.fx.ws);
	cf_fx_fmt(text, sizeof text, "#!/bin/bash\n%s", list);
	cf_fx_write(with, text);
	cr_assert_eq(chmod(with, 0755), 0);
	/* Two launches first: the fence's watch (inotify, mount table,
	 * supervisor pidfd) is set at a generation's second check, where the
	 * stamps are older than a second (a CI run met it; a quick run here
	 * does not). Then the numbers in the harness's own table by bash's own
	 * glob (what it runs is fenced, and may not look into the harness),
	 * then the two children's tables. */
	struct cf_fx_out o;
	char **env = st_env(&t, NULL);
	st_harness(&o, &t, env, NULL,
		   CF_ARGV("/bin/bash", "-c",
			   "/bin/true; /bin/true; "
			   "for f in /proc/$$/fd/*; do echo \"HARNESS ${f##*/}\"; done; "
			   "./listfds2 EX; ./listfds FD; echo done"));
	cf_fx_env_free(env);
	st_dump("a bash harness's child that runs a script without #!", &o);
	cr_expect_eq(o.status, 0);
	/* The control: the harness keeps the namespaces and the keeper's
	 * socket from 768 up (shared_ns.c), by bash's own glob. */
	cr_expect(strstr(o.out, "HARNESS 768\n"), "the control: the harness keeps no descriptor "
		  "at 768:\n%s", o.out);
	cr_expect(strstr(o.out, "\nEX 0 ") && strstr(o.out, "\nFD 0 ") && strstr(o.out, "\ndone\n"),
		  "the scripts did not run:\n%s", o.out);
	for (const char *l = strstr(o.out, "\nFD "); l; l = strstr(l + 1, "\nFD ")) {
		int n = atoi(l + 4);
		char ex[32];
		cf_fx_fmt(ex, sizeof ex, "\nEX %d ", n);
		cr_expect(n == 255 || strstr(o.out, ex),
			  "the child holds descriptor %d, which an exec would have closed:\n%s", n,
			  o.out);
	}
	cf_fx_out_free(&o);
}

/* A harness child whose copy of the harness's prepared ruleset is gone
 * (closed between fork and exec, as a preexec_fn or a shell does) builds a
 * ruleset of its own to fence itself (enforce/linux/fence.c, enter), and
 * closes it: a child whose exec then fails with ENOEXEC goes on in the same
 * process (bash runs a script without "#!" itself), and holds no Landlock
 * ruleset a later exec would not have closed for it. */
Test(shim_roles, a_child_that_built_its_own_ruleset_keeps_none)
{
	char script[PATH_MAX + 16];
	cf_fx_fmt(script, sizeof script, "%s/listfds", t.fx.ws);
	cf_fx_write(script, "for f in /proc/$BASHPID/fd/*; do echo \"FD ${f##*/} $(readlink \"$f\")\"; "
			    "done\n");
	cr_assert_eq(chmod(script, 0755), 0);
	struct cf_fx_out o;
	char **env = st_env(&t, NULL);
	st_harness(&o, &t, env, NULL,
		   CF_ARGV("/bin/bash", "-c",
			   "(for n in {3..50}; do eval \"exec $n>&-\"; done; ./listfds); echo done"));
	cf_fx_env_free(env);
	st_dump("a bash harness's child that runs a script without #!", &o);
	cr_expect_eq(o.status, 0);
	cr_expect(strstr(o.out, "FD 0 ") && strstr(o.out, "\ndone\n"), "the script did not run");
	cr_expect(!strstr(o.out, "landlock-ruleset"), "the child holds a Landlock ruleset:\n%s",
		  o.out);
	cf_fx_out_free(&o);
}
