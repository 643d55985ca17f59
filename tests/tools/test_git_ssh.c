/* git over ssh inside the fence (issue 24), against an sshd and an
 * ssh-agent the test starts (sshd-fixture.sh): with --ssh-agent and
 * --allow-read H/.ssh/known_hosts, git clone ssh://... works while the key
 * file in H/.ssh stays unreadable in the same fence. Without --allow-read
 * the host key can not be checked and the clone fails (the control). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "enforce_test.h"

#ifndef CF_SSHD_FIXTURE
#error "CF_SSHD_FIXTURE (path of sshd-fixture.sh) comes from meson"
#endif

CF_SUITE_STATE()

static char dir[PATH_MAX], sock[PATH_MAX + 32], user[128];
static int port;

static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t n = sizeof a;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert(s >= 0);
	cr_assert(bind(s, (struct sockaddr *)&a, sizeof a) == 0);
	cr_assert(getsockname(s, (struct sockaddr *)&a, &n) == 0);
	close(s);
	return ntohs(a.sin_port);
}

/* The process whose pid the file PATH holds, ended (ours: sshd, the agent). */
static void kill_pidfile(const char *path)
{
	char *t = cf_fx_slurp(path);
	long pid = t ? strtol(t, NULL, 10) : 0;
	free(t);
	if (pid > 1)
		kill((pid_t)pid, SIGTERM);
}

static void setup(void)
{
	cf_suite_setup();
	cf_test_require_landlock();
	cf_fx_fmt(dir, sizeof dir, "%s/sshd", fx.root);
	port = free_port();
	char portarg[16];
	cf_fx_fmt(portarg, sizeof portarg, "%d", port);
	char **env = cf_fx_env(&fx, NULL);
	cf_fx_run(&o, fx.root, env, NULL,
		  CF_ARGV("/bin/sh", CF_SSHD_FIXTURE, dir, portarg, fx.home));
	cf_fx_env_free(env);
	if (o.status == 77)
		cf_test_unavailable("%s", o.out);
	cr_assert_eq(o.status, 0, "sshd-fixture.sh: " OUT_FMT, OUT_ARGS(o));
	const char *s = strstr(o.out, "SSH_AUTH_SOCK=");
	const char *u = strstr(o.out, "USER=");
	cr_assert(s && u, OUT_FMT, OUT_ARGS(o));
	cf_fx_fmt(sock, sizeof sock, "%.*s", (int)strcspn(s, "\n"), s);
	cf_fx_fmt(user, sizeof user, "%.*s", (int)strcspn(u + 5, "\n"), u + 5);
	cf_fx_out_free(&o);
	memset(&o, 0, sizeof o);
}

static void teardown(void)
{
	if (dir[0]) {
		kill_pidfile(cf_fx_at(dir, "sshd.pid"));
		kill_pidfile(cf_fx_at(dir, "agent.pid"));
	}
	cf_suite_teardown();
}

TestSuite(git_ssh, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

/* credfence run OPTS -- sh -c "git clone ...; cat KEY", as a user would. */
static void clone_in_fence(bool allow_read)
{
	char kh[PATH_MAX], ssh_cmd[2 * PATH_MAX], script[3 * PATH_MAX];
	const char *key = cf_fx_secret(&fx, ".ssh")->key;
	cf_fx_fmt(kh, sizeof kh, "%s/.ssh/known_hosts", fx.home);
	cf_fx_fmt(ssh_cmd, sizeof ssh_cmd,
		  "GIT_SSH_COMMAND=ssh -F none -o UserKnownHostsFile=%s -o "
		  "GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes "
		  "-p %d",
		  kh, port);
	cf_fx_fmt(script, sizeof script,
		  "git clone -q 'ssh://%s@127.0.0.1%s/repo.git' clone; echo clone=$?; "
		  "cat clone/README; cat '%s'; echo cat=$?",
		  user, dir, key);
	const char *env[] = {sock, ssh_cmd, NULL};
	if (allow_read)
		cf_fx_credfence(&o, &fx, "run", env,
				CF_ARGV("--ssh-agent", "--allow-read", kh, "--", "/bin/sh", "-c", script));
	else
		cf_fx_credfence(&o, &fx, "run", env,
				CF_ARGV("--ssh-agent", "--", "/bin/sh", "-c", script));
}

Test(git_ssh, clone_works_with_ssh_agent_and_allow_read_and_the_key_stays_denied)
{
	clone_in_fence(true);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "clone=0"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "served-over-ssh-CFGIT"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "cat=1"), "the key was read: " OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Permission denied"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(git_ssh, without_allow_read_the_host_key_can_not_be_checked)
{
	clone_in_fence(false);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(!has_line(o.out, "clone=0"), "cloned without known_hosts: " OUT_FMT, OUT_ARGS(o));
	cr_expect(!has_line(o.out, "served-over-ssh-CFGIT"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "cat=1"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

/* sshd, run as an ordinary user, hands out a pty only where /dev/pts gives
 * new ptys the group tty (mounted gid=5, as on a Debian machine): it
 * chowns the pty to group tty and gives up the session when it can not
 * ("chown(/dev/pts/N, UID, 5) failed" in its log). In a container whose
 * /dev/pts has no gid= option that fails without any fence, for every
 * user but root (issue 36: the fence was never the cause). So the same
 * `ssh -tt` runs once outside the fence first; when sshd can not do it,
 * the test can not run here. */
static void require_remote_pty(const char *kh)
{
	char script[3 * PATH_MAX], log[PATH_MAX + 16];
	cf_fx_fmt(script, sizeof script,
		  "ssh -tt -F none -o UserKnownHostsFile=%s -o GlobalKnownHostsFile=/dev/null "
		  "-o StrictHostKeyChecking=yes -o BatchMode=yes -p %d %s@127.0.0.1 "
		  "'test -t 0 && echo remote-on-a-tty' </dev/null",
		  kh, port, user);
	const char *extra[] = {sock, NULL};
	char **env = cf_fx_env(&fx, extra);
	struct cf_fx_out p = {0};
	cf_fx_run(&p, fx.ws, env, NULL, CF_ARGV("/bin/sh", "-c", script));
	cf_fx_env_free(env);
	bool ok = p.status == 0 && strstr(p.out, "remote-on-a-tty");
	cf_fx_fmt(log, sizeof log, "%s/sshd.log", dir);
	char *why = ok ? NULL : cf_fx_slurp(log);
	if (!ok && why && strstr(why, "chown(/dev/pts/")) {
		why[strcspn(why, "\n")] = '\0';
		cf_fx_out_free(&p);
		cf_test_unavailable("sshd, run as this user, can not hand out a pty here, with no fence "
				    "(%s): /dev/pts gives new ptys no group tty (mount option gid=5)",
				    why);
	}
	cr_assert(ok, "ssh -tt outside the fence failed: " OUT_FMT "\nsshd.log: %s", OUT_ARGS(p),
		  why ? why : "(none)");
	free(why);
	cf_fx_out_free(&p);
}

/* Issue 19: `ssh -tt` from inside the fence to a local sshd: the remote pty
 * is sshd's (outside), the client forces it with no terminal of its own. A
 * command runs there and says it has a terminal; the key stays denied. */
Test(git_ssh, ssh_tt_runs_a_command_on_a_remote_pty)
{
	char kh[PATH_MAX], script[3 * PATH_MAX];
	const char *key = cf_fx_secret(&fx, ".ssh")->key;
	cf_fx_fmt(kh, sizeof kh, "%s/.ssh/known_hosts", fx.home);
	require_remote_pty(kh);
	cf_fx_fmt(script, sizeof script,
		  "ssh -tt -F none -o UserKnownHostsFile=%s -o GlobalKnownHostsFile=/dev/null "
		  "-o StrictHostKeyChecking=yes -o BatchMode=yes -p %d %s@127.0.0.1 "
		  "'test -t 0 && echo remote-on-a-tty; echo remote-$((6 * 7))' </dev/null; "
		  "echo ssh=$?; cat '%s'; echo cat=$?",
		  kh, port, user, key);
	const char *env[] = {sock, NULL};
	cf_fx_credfence(&o, &fx, "run", env,
			CF_ARGV("--ssh-agent", "--allow-read", kh, "--", "/bin/sh", "-c", script));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "remote-on-a-tty"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "remote-42"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "ssh=0"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "cat=1"), "the key was read: " OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

/* Issue 36: git over ssh without the options it needs says which they are.
 * ssh offers only the fake key (IdentitiesOnly: the account's own ~/.ssh is
 * never tried). Without --allow-read the host key's file is named; with it
 * but without --ssh-agent, the refused agent socket names --ssh-agent, and
 * ssh's key files get one notice that names the agent too, never an
 * --allow-read of a private key. */
static void clone_needing(const char *const *opts)
{
	char kh[PATH_MAX], id[PATH_MAX], ssh_cmd[3 * PATH_MAX], script[3 * PATH_MAX];
	cf_fx_fmt(kh, sizeof kh, "%s/.ssh/known_hosts", fx.home);
	cf_fx_fmt(id, sizeof id, "%s/.ssh/id_ed25519", fx.home);
	cf_fx_fmt(ssh_cmd, sizeof ssh_cmd,
		  "GIT_SSH_COMMAND=ssh -F none -o UserKnownHostsFile=%s -o "
		  "GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes "
		  "-o IdentitiesOnly=yes -o IdentityFile=%s -p %d",
		  kh, id, port);
	cf_fx_fmt(script, sizeof script,
		  "git clone -q 'ssh://%s@127.0.0.1%s/repo.git' clone; echo clone=$?", user, dir);
	static struct argvb b;
	b.n = 0;
	for (size_t i = 0; opts && opts[i]; i++)
		argvb_add(&b, "%s", opts[i]);
	argvb_add(&b, "--");
	argvb_add(&b, "/bin/sh");
	argvb_add(&b, "-c");
	argvb_add(&b, "%s", script);
	const char *env[] = {sock, ssh_cmd, NULL};
	cf_fx_credfence(&o, &fx, "run", env, b.v);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void expect_no_key_allowed(void)
{
	cr_expect(!strstr(o.err, "--allow-read ~/.ssh/id_"),
		  "a notice offers to open a private key: " OUT_FMT, OUT_ARGS(o));
	cr_expect(count(o.err, "credfence: denied read of ~/.ssh/id_") <= 1,
		  "more than one notice for ssh's key files: " OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(git_ssh, without_options_the_notices_name_allow_read_and_ssh_agent)
{
	char kh[PATH_MAX], agent[PATH_MAX + 128];
	cf_fx_fmt(kh, sizeof kh, "%s/.ssh/known_hosts", fx.home);
	clone_needing(NULL);
	cr_expect(!has_line(o.out, "clone=0"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.err, "credfence: denied read of ~/.ssh/known_hosts (SSH private keys, "
				  "known hosts and config); to allow: --allow-read ~/.ssh/known_hosts, "
				  "or see: credfence check ~/.ssh/known_hosts"),
		  OUT_FMT, OUT_ARGS(o));
	expect_no_key_allowed();
	cf_fx_out_free(&o);
	memset(&o, 0, sizeof o);

	clone_needing((const char *[]){"--allow-read", kh, NULL});
	cr_expect(!has_line(o.out, "clone=0"), OUT_FMT, OUT_ARGS(o));
	cf_fx_fmt(agent, sizeof agent, "credfence: denied connect to %s (your ssh agent, "
		  "$SSH_AUTH_SOCK); to allow: --ssh-agent", sock + strlen("SSH_AUTH_SOCK="));
	cr_expect(has_line(o.err, "%s", agent), "want: %s\n" OUT_FMT, agent, OUT_ARGS(o));
	cr_expect(strstr(o.err, "ssh can sign with your agent instead of its key files: to allow: "
				"--ssh-agent\n"),
		  OUT_FMT, OUT_ARGS(o));
	expect_no_key_allowed();
}
