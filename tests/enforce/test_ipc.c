/* Issue 10 through `credfence run`: a fenced command can not use a process
 * outside the fence as its deputy (a Unix socket, pathname or abstract, bound
 * outside; a tmux server), nor change metadata outside the writable
 * locations; what stays inside works; --allow-socket and --ssh-agent allow
 * exactly what they name; `check` and `status` say so. The scenarios are in
 * ipctest.c, shared with tests/shim/test_ipc.c (the other ways in). */
#include <criterion/criterion.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipctest.h"

static struct ipct t;

static void setup(void)
{
	ipct_setup(&t);
}

static void teardown(void)
{
	ipct_teardown(&t);
}

TestSuite(ipc_run, .init = setup, .fini = teardown, .timeout = 30 * CF_TIMEOUT_SCALE);

Test(ipc_run, outside_sockets_are_denied) { ipct_attack_sockets(&t, IPCT_RUN); }
Test(ipc_run, outside_socket_by_other_paths_is_denied) { ipct_attack_socket_paths(&t, IPCT_RUN); }
Test(ipc_run, outside_tmux_is_denied) { ipct_attack_tmux(&t, IPCT_RUN); }
Test(ipc_run, outside_datagram_deputy_is_denied) { ipct_attack_dgram(&t, IPCT_RUN); }
Test(ipc_run, metadata_outside_is_denied) { ipct_meta_outside(&t, IPCT_RUN); }
Test(ipc_run, metadata_inside_works) { ipct_meta_inside(&t, IPCT_RUN); }
Test(ipc_run, tar_xp_into_the_workspace_works) { ipct_tar_inside(&t, IPCT_RUN); }
/* The same three with user namespaces off: the supervisor refuses metadata. */
Test(ipc_run, metadata_outside_is_denied_by_the_supervisor)
{
	t.no_userns = true;
	ipct_meta_outside(&t, IPCT_RUN);
}
Test(ipc_run, metadata_inside_works_by_the_supervisor)
{
	t.no_userns = true;
	ipct_meta_inside(&t, IPCT_RUN);
}
Test(ipc_run, tar_xp_into_the_workspace_works_by_the_supervisor)
{
	t.no_userns = true;
	ipct_tar_inside(&t, IPCT_RUN);
}
Test(ipc_run, sockets_inside_work) { ipct_inside_sockets(&t, IPCT_RUN); }
Test(ipc_run, a_server_of_the_tree_is_reachable) { ipct_server_then_client(&t, IPCT_RUN); }
Test(ipc_run, allow_socket_allows_exactly_it) { ipct_allow_socket(&t, IPCT_RUN, false); }
Test(ipc_run, allow_socket_env_allows_exactly_it) { ipct_allow_socket(&t, IPCT_RUN, true); }
Test(ipc_run, ssh_agent_allows_exactly_it) { ipct_ssh_agent(&t, IPCT_RUN, false); }
Test(ipc_run, ssh_agent_env_allows_exactly_it) { ipct_ssh_agent(&t, IPCT_RUN, true); }
Test(ipc_run, a_swapped_agent_socket_stays_denied) { ipct_swapped_allowed_socket(&t, IPCT_RUN); }
Test(ipc_run, allowances_can_not_be_widened_inside) { ipct_no_self_granted_allowance(&t, IPCT_RUN); }

/* The only line of OUT that holds NEEDLE (asserts there is exactly one). */
static void expect_one_line(const struct cf_fx_out *o, const char *needle, const char *what)
{
	size_t n = 0;
	for (const char *p = o->out; (p = strstr(p, needle)); p++)
		n++;
	cr_expect_eq(n, 1, "%s: %zu lines with '%s'\nstatus %d\n--- stdout\n%s\n--- stderr\n%s", what,
		     n, needle, o->status, o->out, o->err);
}

/* `credfence check SOCK`: "connect: denied" for an outside socket, "connect:
 * allowed" for one --allow-socket names, and still denied for its neighbour. */
Test(ipc_run, check_says_connect_denied_or_allowed)
{
	char a[PATH_MAX], b[PATH_MAX], count[PATH_MAX];
	cf_fx_fmt(a, sizeof a, "%s/a.sock", t.tmp);
	cf_fx_fmt(b, sizeof b, "%s/b.sock", t.tmp);
	ipct_serve(&t, a, count);
	ipct_serve(&t, b, count);
	struct cf_fx_out o;

	cf_fx_credfence(&o, &t.fx, "check", NULL, CF_ARGV(a));
	expect_one_line(&o, "connect: denied", "check of an outside socket");
	cr_expect(!strstr(o.out, "connect: allowed"));
	cf_fx_out_free(&o);

	cf_fx_credfence(&o, &t.fx, "check", NULL, CF_ARGV("--allow-socket", a, a));
	expect_one_line(&o, "connect: allowed", "check with --allow-socket");
	cf_fx_out_free(&o);

	cf_fx_credfence(&o, &t.fx, "check", NULL, CF_ARGV("--allow-socket", a, b));
	expect_one_line(&o, "connect: denied", "check of the neighbour of an allowed socket");
	cf_fx_out_free(&o);

	char env[PATH_MAX + 32];
	cf_fx_fmt(env, sizeof env, "CREDFENCE_ALLOW_SOCKET=%s", a);
	cf_fx_credfence(&o, &t.fx, "check", (const char *[]){env, NULL}, CF_ARGV(a));
	expect_one_line(&o, "connect: allowed", "check with CREDFENCE_ALLOW_SOCKET");
	cf_fx_out_free(&o);
	cr_expect_eq(ipct_accepts(count), 0, "check connected to a socket");
}

/* `credfence status` has an "ipc:" part in its verdict. */
Test(ipc_run, status_shows_the_ipc_part)
{
	struct cf_fx_out o;
	cf_fx_credfence(&o, &t.fx, "status", NULL, NULL);
	bool found = false;
	for (const char *p = o.out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		found |= strncmp(p, "ipc:", 4) == 0;
	cr_expect(found, "no line 'ipc: ...' in status\nstatus %d\n--- stdout\n%s\n--- stderr\n%s",
		  o.status, o.out, o.err);
	cr_expect_eq(o.status, 0, "status: %d\n%s", o.status, o.err);
	cf_fx_out_free(&o);
}

/* credfence run stays as the waiter above its supervisor (Yama's ptrace_scope
 * 1 lets the supervisor take descriptors only from its descendants): it must
 * answer for CMD exactly, its exit status and its death by a signal. */
Test(ipc_run, run_answers_for_the_command_it_waits_for)
{
	struct cf_fx_out o;
	cf_fx_credfence(&o, &t.fx, "run", NULL, CF_ARGV("--", "/bin/sh", "-c", "exit 7"));
	cr_expect_eq(o.status, 7, "exit 7 came back as %d\n%s", o.status, o.err);
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &t.fx, "run", NULL, CF_ARGV("--", "/bin/sh", "-c", "kill -TERM $$"));
	cr_expect_eq(o.status, 128 + 15, "death by SIGTERM came back as %d\n%s", o.status, o.err);
	cf_fx_out_free(&o);
}

/* A process the command leaves behind is still served after credfence run
 * has returned (the agent's dev server), and it stays a descendant of the
 * supervisor: orphans come back to it (a child subreaper), not to init. */
Test(ipc_run, a_process_left_behind_is_still_served_and_descends_from_the_supervisor)
{
	char f[PATH_MAX], late[PATH_MAX], bg[PATH_MAX], script[PATH_MAX * 4];
	cf_fx_fmt(f, sizeof f, "%s/made.txt", t.fx.ws);
	cf_fx_fmt(late, sizeof late, "%s/late.txt", t.fx.ws);
	cf_fx_fmt(bg, sizeof bg, "%s/bg.sh", t.fx.ws);
	cf_fx_write(f, "x");
	chmod(f, 0644);
	/* bg.sh runs after its parent shell is gone: $$ is its own pid there. */
	cf_fx_write(bg, "sleep 1\n"
			"chmod 600 \"$1\" && echo chmod-ok\n"
			"p=$(awk '/^PPid/ {print $2}' /proc/$$/status)\n"
			"echo parent=$(cat /proc/$p/comm)\n");
	cf_fx_fmt(script, sizeof script,
		  "/bin/sh '%s' '%s' > '%s.tmp' 2>&1 < /dev/null & sleep 0.2; exit 0", bg, f, late);
	struct cf_fx_out o;
	cf_fx_credfence(&o, &t.fx, "run", NULL, CF_ARGV("--", "/bin/sh", "-c", script));
	cr_assert_eq(o.status, 0, "%s", o.err);
	cf_fx_out_free(&o);
	char tmp[PATH_MAX + 8];
	cf_fx_fmt(tmp, sizeof tmp, "%s.tmp", late);
	char *text = NULL;
	for (int i = 0; i < 100; i++) {
		free(text);
		text = cf_fx_slurp(tmp);
		if (text && strstr(text, "parent="))
			break;
		usleep(50000);
	}
	cr_assert(text && strstr(text, "parent="), "the process left behind wrote nothing: %s",
		  text ? text : "(no file)");
	cr_expect(strstr(text, "chmod-ok"), "its chmod in the workspace failed after run "
		  "returned: %s", text);
	cr_expect(strstr(text, "parent=credfence"), "its parent is not the supervisor: %s", text);
	struct stat st;
	cr_expect(stat(f, &st) == 0 && (st.st_mode & 0777) == 0600, "the chmod did not happen");
	free(text);
}

/* Start `credfence run -- /bin/sh -c SCRIPT` without waiting; the pid of the
 * credfence process (the waiter). SCRIPT writes its own pid to PIDFILE. */
static pid_t start_run(const char *script)
{
	char **env = cf_fx_env(&t.fx, NULL);
	pid_t p = fork();
	cr_assert(p >= 0);
	if (p == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (chdir(t.fx.ws) != 0)
			_exit(126);
		execve(cf_fx_bin(),
		       CF_ARGV((char *)cf_fx_bin(), "run", "--home", t.fx.home, "--workspace", t.fx.ws,
			       "--", "/bin/sh", "-c", (char *)script),
		       env);
		_exit(127);
	}
	cf_fx_env_free(env);
	return p;
}

static pid_t read_pid(const char *file)
{
	for (int i = 0; i < 200; i++) {
		char *s = cf_fx_slurp(file);
		pid_t pid = s ? (pid_t)atoi(s) : 0;
		free(s);
		if (pid > 0)
			return pid;
		usleep(20000);
	}
	cr_assert_fail("the command never wrote its pid to %s", file);
	return 0;
}

static bool gone_within(pid_t pid, int ms)
{
	char stat[64], *s;
	cf_fx_fmt(stat, sizeof stat, "/proc/%d/stat", (int)pid);
	for (int i = 0; i < ms / 20; i++) {
		s = cf_fx_slurp(stat);
		/* gone, or a zombie its reaper has not collected yet */
		bool dead = !s || strstr(s, ") Z ");
		free(s);
		if (dead)
			return true;
		usleep(20000);
	}
	return false;
}

/* The waiter can not pass SIGKILL on: the supervisor sees it die before the
 * command and kills the command (timeout -s KILL credfence run ... must not
 * leave CMD running). */
Test(ipc_run, a_killed_waiter_takes_the_command_with_it)
{
	char pidfile[PATH_MAX], script[PATH_MAX + 64];
	cf_fx_fmt(pidfile, sizeof pidfile, "%s/cmd.pid", t.fx.ws);
	cf_fx_fmt(script, sizeof script, "echo $$ > '%s'; exec sleep 30", pidfile);
	pid_t waiter = start_run(script);
	pid_t cmd = read_pid(pidfile);
	cr_assert_neq(cmd, waiter, "the command runs below the waiter, not in it");
	kill(waiter, SIGKILL);
	waitpid(waiter, NULL, 0);
	cr_expect(gone_within(cmd, 3000), "the command (pid %d) outlived its killed waiter", (int)cmd);
	kill(cmd, SIGKILL);
}

/* SIGINT sent by a process (not the terminal) is passed on; the waiter then
 * dies of the same signal. */
Test(ipc_run, a_signal_sent_to_the_waiter_reaches_the_command)
{
	char pidfile[PATH_MAX], script[PATH_MAX + 64];
	cf_fx_fmt(pidfile, sizeof pidfile, "%s/cmd.pid", t.fx.ws);
	cf_fx_fmt(script, sizeof script, "echo $$ > '%s'; exec sleep 30", pidfile);
	pid_t waiter = start_run(script);
	pid_t cmd = read_pid(pidfile);
	kill(waiter, SIGINT);
	int st = 0;
	cr_assert_eq(waitpid(waiter, &st, 0), waiter);
	cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT, "the waiter ended with status 0x%x",
		  st);
	cr_expect(gone_within(cmd, 3000), "the command did not get the SIGINT");
	kill(cmd, SIGKILL);
}

/* Issue 18: the supervisor killed (a fenced process of the user can) before
 * the command ends. The waiter stays until the command ends (a harness keeps
 * the terminal and its temporary directory), then answers 125; meanwhile a
 * signal sent to it still reaches the command. */
Test(ipc_run, a_killed_supervisor_leaves_the_waiter_waiting_for_the_command)
{
	char pidfile[PATH_MAX], script[PATH_MAX + 64];
	cf_fx_fmt(pidfile, sizeof pidfile, "%s/cmd.pid", t.fx.ws);
	cf_fx_fmt(script, sizeof script, "echo $$ > '%s'; exec sleep 30", pidfile);
	pid_t waiter = start_run(script);
	pid_t cmd = read_pid(pidfile);
	char stat[64], *s;
	cf_fx_fmt(stat, sizeof stat, "/proc/%d/stat", (int)cmd);
	s = cf_fx_slurp(stat);
	int sup = 0;
	cr_assert(s && sscanf(strrchr(s, ')') + 1, " %*c %d", &sup) == 1 && sup > 1, "%s", s);
	free(s);
	cr_assert_neq(sup, waiter, "the command's parent is the supervisor, not the waiter");
	cr_assert(kill(sup, SIGKILL) == 0);
	int st = 0;
	usleep(300000);
	cr_expect_eq(waitpid(waiter, &st, WNOHANG), 0, "the waiter ended (0x%x) while the command runs",
		     st);
	cr_expect(!gone_within(cmd, 100), "the command ended with its supervisor");
	kill(waiter, SIGTERM); /* passed on: the command ends, then the waiter */
	cr_assert_eq(waitpid(waiter, &st, 0), waiter);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 125, "the waiter ended with status 0x%x", st);
	cr_expect(gone_within(cmd, 3000), "the command did not get the SIGTERM");
	kill(cmd, SIGKILL);
}
