/* Real programs that make terminals of their own, inside credfence run with
 * no option (issue 19): the supervisor gives them the slave of each new pty
 * (enforce/linux/notify/supervisor_pty.h). A tool that is missing skips locally and fails
 * under CI=true (scripts/setup installs them). node-pty works the same way
 * (glibc's openpty), but needs a native build: checked by hand, not here. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()

static void setup(void)
{
	cf_suite_setup();
	cf_test_require_landlock();
}

TestSuite(ptys, .init = setup, .fini = cf_suite_teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

static void sh(char *const opts[], const char *script)
{
	fenced(&o, &fx, NULL, opts, CF_ARGV("sh", "-c", (char *)script));
}

Test(ptys, script_runs_a_command_on_a_new_pty)
{
	cf_test_require_tool("script");
	sh(NULL, "script -qec 'tty; echo in-script-$((6 * 7))' /dev/null");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "in-script-42"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "/dev/pts/"), "tty on the new pty\n" OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.err, "pseudo-terminal"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(ptys, python_openpty_fork_and_spawn)
{
	cf_test_require_tool("python3");
	/* os.openpty (glibc openpty), pty.fork (forkpty), pty.spawn: each one
	 * carries a line through the new terminal. */
	sh(NULL, "python3 -c '\n"
		 "import os, pty, sys\n"
		 "m, s = os.openpty()\n"
		 "os.write(s, b\"through-openpty\\n\")\n"
		 "print(os.read(m, 100).decode().strip(), os.ttyname(s).startswith(\"/dev/pts/\"))\n"
		 "pid, fd = pty.fork()\n"
		 "if pid == 0:\n"
		 "    print(\"child-on\", os.isatty(0), flush=True)\n"
		 "    os._exit(0)\n"
		 "print(os.read(fd, 100).decode().strip())\n"
		 "os.waitpid(pid, 0)\n"
		 "sys.stdout.flush()\n"
		 "pty.spawn([\"sh\", \"-c\", \"echo spawned-$((6 * 7))\"])\n"
		 "' </dev/null");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "through-openpty True"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "child-on True"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "spawned-42"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(ptys, tmux_new_detached_then_ls)
{
	cf_test_require_tool("tmux");
	char script[PATH_MAX * 3];
	cf_fx_fmt(script, sizeof script,
		  /* the pane's shell: nobody's own is nologin */
		  "export SHELL=/bin/sh; S=%s/tmux.sock;"
		  " tmux -S $S new -d -s cfpty 'sleep 60' && tmux -S $S ls;"
		  " r=$?; tmux -S $S kill-server; exit $r",
		  fx.ws);
	sh(NULL, script);
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "cfpty: 1 windows"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.err, "fork failed"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(ptys, pexpect_spawns_and_matches)
{
	/* Debian's python3-pexpect (scripts/setup), for the system python3. */
	char **env = cf_fx_env(&fx, NULL);
	cf_fx_run(&o, fx.ws, env, NULL, CF_ARGV("/usr/bin/python3", "-c", "import pexpect"));
	cf_fx_env_free(env);
	if (o.status != 0)
		cf_test_unavailable("no pexpect for /usr/bin/python3 (apt-get install python3-pexpect)");
	cf_fx_out_free(&o);
	fenced(&o, &fx, NULL, NULL,
	       CF_ARGV("/usr/bin/python3", "-c",
		       "import pexpect\n"
		       "c = pexpect.spawn('sh', ['-c', 'echo pexpect-$((6 * 7)); tty'])\n"
		       "c.expect('pexpect-42')\n"
		       "c.expect(pexpect.EOF)\n"
		       "print('matched on', c.before.decode().strip())\n"));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "matched on /dev/pts/"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

/* Tcl Expect opens the slave by its name (exp_getptyslave) in the spawned
 * child, and runs `stty < /dev/pts/N` there: the shim gives the terminal the
 * process holds (shim/linux/ptyname.c), with no option. */
static const char *const expect_script =
	"expect -c 'spawn sh -c {echo hello-from-$((6 * 7)); tty};"
	" expect hello-from-42 {puts matched-spawn}; expect eof; exit 0'";

Test(ptys, expect_spawns_and_matches_by_default)
{
	cf_test_require_tool("expect");
	sh(NULL, expect_script);
	cr_expect_eq(o.status, 0, "by default\n" OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "matched-spawn"), "by default\n" OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "/dev/pts/"), "the spawned sh on its new pty\n" OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "open(slave pty)") && !strstr(o.err, "open(slave pty)"),
		  "by default\n" OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
	cf_fx_out_free(&o);
	sh(CF_ARGV("--allow-ptys"), expect_script);
	cr_expect_eq(o.status, 0, "--allow-ptys\n" OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "matched-spawn"), "--allow-ptys\n" OUT_FMT, OUT_ARGS(o));
}

/* The name gives only a terminal the process holds: a program that makes a
 * pty of its own and then names the one after it (another process's) by
 * number is refused, the number it holds is given. */
Test(ptys, a_pty_by_name_only_when_held)
{
	cf_test_require_tool("python3");
	sh(NULL, "/usr/bin/python3 -c '\n"
		 "import os\n"
		 "m1, s1 = os.openpty(); m2, s2 = os.openpty()\n"
		 "n1, n2 = os.ttyname(s1), os.ttyname(s2)\n"
		 "os.close(s2); os.close(m2)\n"
		 "m3, s3 = os.openpty()\n"  /* keeps a terminal of another number open */
		 "os.close(s1)\n"
		 "fd = os.open(n1, os.O_RDWR | os.O_NOCTTY)\n"
		 "print(\"held-by-name\", os.ttyname(fd) == n1, flush=True)\n"
		 "pid = os.fork()\n"
		 "if pid == 0:\n"
		 "    os.close(m1); os.close(fd); os.close(m3)\n"
		 "    try:\n"
		 "        os.open(n1, os.O_RDWR | os.O_NOCTTY); print(\"ESCAPED not-held\", flush=True)\n"
		 "    except PermissionError: print(\"not-held EACCES\", flush=True)\n"
		 "    os._exit(0)\n"
		 "os.waitpid(pid, 0)\n'");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "held-by-name True"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "not-held EACCES"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "ESCAPED"), OUT_FMT, OUT_ARGS(o));
}

/* A session leader that opens its new terminal by name without O_NOCTTY
 * gets it as its controlling terminal, as open(2) gives it (Expect's
 * spawned child does this after setsid, for job control and /dev/tty):
 * the terminal the shim hands over instead of the name must be made the
 * controlling one too. The control: with O_NOCTTY it is not. */
Test(ptys, a_session_leader_gets_its_pty_by_name_as_controlling_terminal)
{
	cf_test_require_tool("python3");
	sh(NULL, "/usr/bin/python3 -c '\n"
		 "import os\n"
		 "def ctty():\n"
		 "    return int(open(\"/proc/self/stat\").read().rsplit(\")\", 1)[1].split()[4])\n"
		 "m, s = os.openpty()\n"
		 "n = os.ttyname(s)\n"
		 "os.close(s)\n"
		 "for flags, what in ((os.O_RDWR | os.O_NOCTTY, \"noctty\"), (os.O_RDWR, \"ctty\")):\n"
		 "    pid = os.fork()\n"
		 "    if pid == 0:\n"
		 "        os.setsid()\n"
		 "        fd = os.open(n, flags)\n"
		 "        print(what, \"controlling\" if ctty() == os.fstat(fd).st_rdev else\n"
		 "              \"none\" if ctty() == 0 else \"other\", flush=True)\n"
		 "        os._exit(0)\n"
		 "    os.waitpid(pid, 0)\n'");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "noctty none"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "ctty controlling"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}
