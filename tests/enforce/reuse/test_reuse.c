/* Plan reuse (issue 4): a prepared fence is reused while every ancestor and
 * every directory its secrets were resolved in is unchanged; a new entry, a
 * renamed ancestor or a replaced secret symlink forces a rebuild, and nothing a
 * stale plan would wrongly allow is allowed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fence_state.h"
#include "fixture.h"
#include "proc.h"
#include "linux/notify/supervisor.h"

/* The status line of P's verdict (a buffer of this file's own). */
static const char *reason_of(const struct cf_policy *p)
{
	static char line[CF_REASON_MAX];
	cf_policy_reason(p, line, sizeof line);
	return line;
}

extern char **environ;

static struct cf_fx fx;

/* A plan is not reused while a directory it depends on changed within the last
 * two seconds (a coarse mtime could hide the next change): let the fixture settle. */
static void settle(void)
{
	sleep(3);
}

/* A root of our own, beside the shared one: other tests create and remove
 * their fixtures in the shared root, and it is an ancestor of every fixture,
 * so it would make every plan stale. The tests here run one at a time (-j1). */
static void setup(void)
{
	char root[PATH_MAX];
	cf_fx_fmt(root, sizeof root, "%s-reuse", cf_fx_root_dir());
	setenv("CREDFENCE_TEST_ROOT", root, 1);
	cf_test_require_landlock();
	cf_fx_setup(&fx);
}

static void teardown(void)
{
	cf_fx_teardown(&fx);
}

static void prepare(struct cf_fence *f)
{
	struct cf_options o;
	cf_options_init(&o);
	o.home = fx.home;
	o.workspace = fx.ws;
	cr_assert_eq(cf_fence_prepare(f, &o, environ, fx.ws), 0);
	cr_assert(f->ready, "%s", reason_of(&f->pol));
	/* Children enter the IPC fence too: a supervisor for this test process. */
	cr_assert_eq(cf_fence_start_supervisor(f, getpid(), -1, false), 0, "%s", reason_of(&f->pol));
	cf_options_free(&o);
}

/* A prepared fence that is current. Directories outside the fixture (/, /var,
 * /var/lib) are ancestors too, and something else on the machine may touch
 * them: wait for a quiet moment, a few times at most. */
static void prepare_current(struct cf_fence *f)
{
	for (int i = 0; i < 10; i++) {
		prepare(f);
		if (cf_fence_current(f))
			return;
		cf_fence_free(f);
		sleep(1);
	}
	cr_assert_fail("the plan never became current: an ancestor keeps changing");
}

/* In a forked child: cf_fence_enter, then try to open PATH; the child's exit
 * code is 0 readable, 1 EACCES, 2 other errno, 3 enter refused -ESTALE, 4 other.
 * A refusal's status line, as the child words it (cf_fence_words), goes to
 * the static buffer child_words. */
static char child_words[1024];

static int child_reads(const struct cf_fence *f, const char *path)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char buf[8192], words[sizeof child_words];
		struct cf_expand_result res;
		close(p[0]);
		int rc = cf_fence_enter(f, buf, sizeof buf, &res);
		if (rc) {
			cf_fence_words(f, rc, &res, words, sizeof words);
			(void)!write(p[1], words, strlen(words));
			_exit(rc == -ESTALE ? 3 : 4);
		}
		int fd = open(path, O_RDONLY);
		_exit(fd >= 0 ? 0 : errno == EACCES ? 1 : 2);
	}
	close(p[1]);
	ssize_t n = read(p[0], child_words, sizeof child_words - 1);
	child_words[n > 0 ? n : 0] = '\0';
	close(p[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

TestSuite(reuse, .init = setup, .fini = teardown, .timeout = 60 * CF_TIMEOUT_SCALE);

Test(reuse, new_entry_in_an_ancestor_forces_a_rebuild)
{
	struct cf_fence f;
	settle();
	prepare_current(&f);
	cr_assert(cf_fence_current(&f), "checking must not change anything");
	cf_fx_write(cf_fx_at(fx.home, "new-entry"), "x");
	cr_assert_not(cf_fence_current(&f), "a new entry in ~ must force a rebuild");
	/* The stale plan does not allow the new entry: a child that finds the plan
	 * stale builds its own, and the new sibling is readable there. */
	cr_assert_eq(child_reads(&f, cf_fx_at(fx.home, "new-entry")), 0);
	cf_fence_free(&f);
}

/* The stamps a launch checks with (fence.c, moved there from
 * common/linux/expand.c with their only callers). */
Test(reuse, a_path_stamp_changes_with_a_new_entry)
{
	struct cf_stamp was, now;
	settle();
	cf_stamp_path(fx.home, &was);
	cr_expect(was.present);
	cf_stamp_path(fx.home, &now);
	cr_expect(cf_stamp_equal(&now, &was), "unchanged: equal");
	cf_fx_write(cf_fx_at(fx.home, "new-entry"), "x\n");
	cf_stamp_path(fx.home, &now);
	cr_expect(!cf_stamp_equal(&now, &was), "an entry was created: not equal");
	cf_stamp_path(cf_fx_at(fx.root, "absent"), &now);
	cr_expect(!now.present);
}

Test(reuse, entry_in_a_deeper_ancestor_forces_a_rebuild)
{
	struct cf_fence f;
	settle();
	prepare_current(&f);
	cf_fx_mkdirs(cf_fx_at(fx.home, ".config/newtool"));
	cr_assert_not(cf_fence_current(&f), "a new entry in ~/.config must force a rebuild");
	cf_fence_free(&f);
}

Test(reuse, renamed_ancestor_forces_a_rebuild)
{
	struct cf_fence f;
	settle();
	prepare_current(&f);
	char old[PATH_MAX];
	cf_fx_fmt(old, sizeof old, "%s/.config.old", fx.home);
	cr_assert_eq(rename(cf_fx_at(fx.home, ".config"), old), 0);
	cr_assert_eq(mkdir(cf_fx_at(fx.home, ".config"), 0755), 0);
	cr_assert_not(cf_fence_current(&f), "a renamed ancestor must force a rebuild");
	/* The secrets that moved with the old ~/.config are beside it now, and the
	 * stale plan's child must not be let at them: a child rebuilding from the
	 * stale plan would allow .config.old (a sibling), so the secrets' new names
	 * must come from a fresh policy. The fresh one denies ~/.config/gh again. */
	struct cf_fence g;
	prepare(&g);
	const struct cf_fx_secret *gh = cf_fx_secret(&fx, ".config/gh");
	cf_fx_mkdirs(gh->path);
	cf_fx_write(cf_fx_at(gh->path, "hosts.yml"), gh->marker);
	cr_assert_eq(child_reads(&g, cf_fx_at(gh->path, "hosts.yml")), 1);
	cf_fence_free(&g);
	cf_fence_free(&f);
}

Test(reuse, replaced_secret_symlink_forces_a_rebuild_and_never_opens_the_new_target)
{
	/* ~/.ssh -> keys-a (denied as the target); keys-b is a plain sibling. */
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	char a[PATH_MAX], b[PATH_MAX], key[PATH_MAX];
	cf_fx_fmt(a, sizeof a, "%s/keys-a", fx.home);
	cf_fx_fmt(b, sizeof b, "%s/keys-b", fx.home);
	cf_fx_rmtree(ssh->path);
	cf_fx_write(cf_fx_at(a, "id_ed25519"), ssh->marker);
	cf_fx_write(cf_fx_at(b, "id_ed25519"), ssh->marker);
	cr_assert_eq(symlink("keys-a", ssh->path), 0);
	cf_fx_fmt(key, sizeof key, "%s/id_ed25519", ssh->path);
	settle();

	struct cf_fence f;
	prepare_current(&f);
	cr_assert_eq(child_reads(&f, key), 1, "the symlinked secret is denied at its target");
	cr_assert_eq(child_reads(&f, cf_fx_at(b, "id_ed25519")), 0, "keys-b is an ordinary sibling");

	/* Retarget: ~/.ssh -> keys-b. */
	char tmp[PATH_MAX];
	cf_fx_fmt(tmp, sizeof tmp, "%s/.ssh.new", fx.home);
	cr_assert_eq(symlink("keys-b", tmp), 0);
	cr_assert_eq(rename(tmp, ssh->path), 0);
	cr_assert_not(cf_fence_current(&f), "a replaced secret symlink must force a rebuild");
	cr_assert_not(cf_policy_resolves_same(&f.pol));
	/* The stale plan allows keys-b; a child must refuse rather than use it. */
	cr_assert_eq(child_reads(&f, key), 3, "a child holding a stale plan must fail closed");
	cr_expect_str_eq(child_words, CF_STATUS_NOT_EFFECTIVE
			 "a symlink on the way to a secret changed since the harness prepared its "
			 "plan; start the harness again");

	/* The rebuilt plan denies the new target and lets the old one be read. */
	struct cf_fence g;
	prepare(&g);
	cr_assert_eq(child_reads(&g, key), 1);
	cr_assert_eq(child_reads(&g, cf_fx_at(b, "id_ed25519")), 1);
	cr_assert_eq(child_reads(&g, cf_fx_at(a, "id_ed25519")), 0);
	cf_fence_free(&g);
	cf_fence_free(&f);
}

/* The harness: a plan rebuilt after a change is the one the next child gets,
 * on each launch path (posix_spawn, vfork, fork). */
Test(reuse, harness_children_get_the_rebuilt_plan, .timeout = 120 * CF_TIMEOUT_SCALE)
{
	const char *py = cf_test_require_tool("/usr/bin/python3");
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	char b[PATH_MAX], script[PATH_MAX];
	cf_fx_fmt(b, sizeof b, "%s/keys-b", fx.home);
	cf_fx_write(cf_fx_at(b, "id_ed25519"), ssh->marker);
	cf_fx_fmt(script, sizeof script, "%s/harness.py", fx.ws);
	cf_fx_write(script,
		"import os, subprocess, sys, time\n"
		"home = os.environ['HOME']\n"
		"def launch(path, how):\n"
		"    argv = ['/bin/cat', path]\n"
		"    if how == 'spawn':\n"
		"        p = subprocess.run(argv, close_fds=False, capture_output=True)\n"
		"    elif how == 'vfork':\n"
		"        p = subprocess.run(argv, capture_output=True)\n"
		"    else:\n"
		"        r, w = os.pipe()\n"
		"        pid = os.fork()\n"
		"        if pid == 0:\n"
		"            os.dup2(w, 1); os.dup2(w, 2)\n"
		"            try: os.execv(argv[0], argv)\n"
		"            finally: os._exit(127)\n"
		"        os.close(w)\n"
		"        out = os.read(r, 65536); os.close(r)\n"
		"        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])\n"
		"        return code, out.decode()\n"
		"    return p.returncode, (p.stdout + p.stderr).decode()\n"
		"for how in ('spawn', 'vfork', 'fork'):\n"
		"    new = os.path.join(home, 'made-later-' + how)\n"
		"    code, out = launch(new, how)\n"
		"    print(how, 'before', code, 'No such file' in out)\n"
		"    with open(new, 'w') as f: f.write('fresh ' + how)\n"
		"    code, out = launch(new, how)\n"
		"    print(how, 'after', code, out.strip())\n"
		"    sys.stdout.flush()\n");
	settle();
	struct cf_fx_out o;
	cf_fx_credfence(&o, &fx, "harness", NULL, CF_ARGV("--", (char *)py, script));
	cr_assert_eq(o.status, 0, "harness failed: %s", o.err);
	const char *want[] = {"spawn before 1 True", "spawn after 0 fresh spawn",
			      "vfork before 1 True", "vfork after 0 fresh vfork",
			      "fork before 1 True", "fork after 0 fresh fork"};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		cr_expect(strstr(o.out, want[i]), "missing '%s' in:\n%s\n%s", want[i], o.out, o.err);
	cf_fx_out_free(&o);
}

/* The harness: after ~/.ssh is retargeted to a directory that used to be an
 * ordinary sibling, no child on any path reads through it. */
Test(reuse, harness_children_never_use_a_stale_plan_to_reach_a_secret, .timeout = 120 * CF_TIMEOUT_SCALE)
{
	const char *py = cf_test_require_tool("/usr/bin/python3");
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	char a[PATH_MAX], b[PATH_MAX], script[PATH_MAX];
	cf_fx_fmt(a, sizeof a, "%s/keys-a", fx.home);
	cf_fx_fmt(b, sizeof b, "%s/keys-b", fx.home);
	cf_fx_rmtree(ssh->path);
	cf_fx_write(cf_fx_at(a, "id_ed25519"), ssh->marker);
	cf_fx_write(cf_fx_at(b, "id_ed25519"), ssh->marker);
	cr_assert_eq(symlink("keys-a", ssh->path), 0);
	cf_fx_fmt(script, sizeof script, "%s/harness.py", fx.ws);
	cf_fx_write(script,
		"import os, subprocess, sys\n"
		"home = os.environ['HOME']\n"
		"key = os.path.join(home, '.ssh', 'id_ed25519')\n"
		"def retarget(to):\n"
		"    tmp = os.path.join(home, '.ssh.tmp')\n"
		"    os.symlink(to, tmp); os.rename(tmp, os.path.join(home, '.ssh'))\n"
		"def launch(how):\n"
		"    argv = ['/bin/cat', key]\n"
		"    try:\n"
		"        if how == 'spawn':\n"
		"            p = subprocess.run(argv, close_fds=False, capture_output=True)\n"
		"        elif how == 'vfork':\n"
		"            p = subprocess.run(argv, capture_output=True)\n"
		"        else:\n"
		"            p = subprocess.run(argv, capture_output=True, preexec_fn=lambda: None)\n"
		"        return p.returncode, (p.stdout + p.stderr).decode()\n"
		"    except OSError as e:\n"
		"        return -1, 'OSError %d' % e.errno\n"
		"targets = ['keys-b', 'keys-a', 'keys-b']\n"
		"for i, how in enumerate(('spawn', 'vfork', 'fork')):\n"
		"    retarget(targets[i])\n"
		"    code, out = launch(how)\n"
		"    print(how, code, out.strip())\n"
		"    sys.stdout.flush()\n");
	settle();
	struct cf_fx_out o;
	cf_fx_credfence(&o, &fx, "harness", NULL, CF_ARGV("--", (char *)py, script));
	cr_assert_eq(o.status, 0, "harness failed: %s", o.err);
	cf_fx_assert_no_marker(&fx, &o);
	for (const char *how = "spawn"; how; how = strcmp(how, "spawn") == 0 ? "vfork"
						   : strcmp(how, "vfork") == 0 ? "fork" : NULL) {
		char line[64];
		cf_fx_fmt(line, sizeof line, "%s 0", how);
		cr_expect_not(strstr(o.out, line), "%s: the key was read:\n%s", how, o.out);
	}
	cr_expect(strstr(o.out, "spawn 1") && strstr(o.out, "fork 1"),
		  "denied reads expected:\n%s\n%s", o.out, o.err);
	cf_fx_out_free(&o);
}

/* ---- the supervisor's answer, waited for after the Landlock layer ---- */

/* A listener on the abstract NAME, or -errno. */
static int listen_on(const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	memcpy(sa.sun_path + 1, name, n);
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + 1 + n) ||
	    listen(s, 4)) {
		int e = -errno;
		if (s >= 0)
			close(s);
		return e;
	}
	return s;
}

/* Take one handover on LS: the blob and the listener, then ANSWER (sent
 * when HANG_UP is false; else the connection is closed unanswered). True
 * when a listener came. */
static bool serve_one(int ls, int answer, bool hang_up)
{
	struct pollfd p = {ls, POLLIN, 0};
	if (poll(&p, 1, 5000) <= 0)
		return false;
	int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return false;
	static char blob[1 << 16];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = {blob, sizeof blob};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			   .msg_controllen = sizeof cm.b};
	bool got = false;
	if (recvmsg(c, &m, MSG_CMSG_CLOEXEC) > 0) {
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		if (h && h->cmsg_type == SCM_RIGHTS) {
			int fd;
			memcpy(&fd, CMSG_DATA(h), sizeof fd);
			close(fd);
			got = true;
		}
		if (!hang_up)
			(void)!send(c, &answer, sizeof answer, MSG_NOSIGNAL);
	}
	close(c);
	return got;
}

/* A child's fence waits for the supervisor's answer only after its
 * Landlock layer (issue 22): a refusal, or a supervisor that hangs up
 * without answering, must still refuse the child, as it did when the
 * answer came before the layer. The test process stands in for the
 * supervisor (its own pid and start time in the name, an ancestor of the
 * child). */
Test(reuse, a_refusal_after_the_landlock_layer_still_refuses_the_child)
{
	struct cf_fence f;
	prepare(&f);
	char name[CF_IPC_ADDR_MAX];
	snprintf(name, sizeof name, "credfence-sup-%d-%llu-reusetest", (int)getpid(),
		 cf_proc_starttime(getpid()));
	int ls = listen_on(name);
	cr_assert(ls >= 0, "listen: %s", strerror(-ls));
	cr_assert_eq(cf_ipc_set_addr(&f.ipc, name), 0);
	const char *allowed = cf_fx_at(fx.ws, "allowed.txt");
	cf_fx_write(allowed, "allowed");
	for (int round = 0; round < 3; round++) {
		/* 0: an answer of 0 (the child goes on); 1: a refusal; 2: a hang-up. */
		int p[2];
		cr_assert_eq(pipe(p), 0);
		pid_t pid = fork();
		cr_assert(pid >= 0);
		if (pid == 0) {
			char buf[8192];
			struct cf_expand_result res;
			close(p[0]);
			close(ls);
			int rc = cf_fence_enter(&f, buf, sizeof buf, &res);
			if (rc) {
				char words[1024];
				cf_fence_words(&f, rc, &res, words, sizeof words);
				(void)!write(p[1], words, strlen(words));
				_exit(4);
			}
			int fd = open(allowed, O_RDONLY);
			_exit(fd >= 0 ? 0 : 2);
		}
		close(p[1]);
		bool got = serve_one(ls, round == 1 ? -EPERM : 0, round == 2);
		char words[1024];
		ssize_t n = read(p[0], words, sizeof words - 1);
		words[n > 0 ? n : 0] = '\0';
		close(p[0]);
		int st;
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		cr_assert(got, "round %d: no listener was handed over", round);
		cr_assert(WIFEXITED(st));
		if (round == 0) {
			cr_expect_eq(WEXITSTATUS(st), 0, "answered 0: the child must go on (%s)", words);
		} else {
			cr_expect_eq(WEXITSTATUS(st), 4, "round %d: the child went on (status %d)", round,
				     WEXITSTATUS(st));
			cr_expect(strstr(words, "IPC"), "round %d: the refusal's words: %s", round, words);
		}
	}
	close(ls);
	cf_fence_free(&f);
}

/* ---- the harness's check by watch (issue 22) ---- */

/* A prepared fence that is current and watched. */
static void prepare_watched(struct cf_fence *f)
{
	for (int i = 0; i < 10; i++) {
		prepare_current(f);
		int rc = cf_fence_watch(f);
		if (rc == 0)
			return;
		cr_assert_eq(rc, -ESTALE, "no watch: %s", strerror(-rc));
		cf_fence_free(f);
		sleep(1);
	}
	cr_assert_fail("the plan never stayed current while it was watched");
}

/* As the harness decides (shim/linux/fence_cache.c, shim/linux/child.c): the
 * watch answers in the parent, and a child told "current" enters the
 * prepared ruleset without a check of its own. The child reads PATH: exit
 * as child_reads, what it read in GOT. */
static int harness_child_reads(const struct cf_fence *f, const char *path, char *got, size_t cap)
{
	bool current = cf_fence_current_watched(f);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char buf[8192];
		struct cf_expand_result res;
		close(p[0]);
		int rc = current ? cf_fence_enter_checked(f, buf, sizeof buf, &res)
				 : cf_fence_enter(f, buf, sizeof buf, &res);
		if (rc)
			_exit(rc == -ESTALE ? 3 : 4);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			_exit(errno == EACCES ? 1 : 2);
		ssize_t n;
		while ((n = read(fd, buf, sizeof buf)) > 0)
			(void)!write(p[1], buf, (size_t)n);
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], got, cap - 1);
	got[n > 0 ? n : 0] = '\0';
	close(p[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* The watch answers alone while nothing changes: every stamped path is
 * covered (the fixture lies on a local file system), 200 checks say
 * current, and the watch is still the one answering after them. */
Test(reuse, watch_answers_alone_while_nothing_changes)
{
	struct cf_fence f;
	settle();
	prepare_watched(&f);
	long left = cf_fence_watch_stats(&f);
	if (left > 0)
		cf_test_skip("%ld stamped paths are on file systems the watch does not cover", left);
	cr_assert_eq(left, 0);
	for (int i = 0; i < 200; i++)
		cr_assert(cf_fence_current_watched(&f), "check %d: no change, yet not current", i);
	cr_assert_eq(cf_fence_watch_stats(&f), 0, "the watch stopped answering with nothing changed");
	cf_fence_free(&f);
}

/* An allowed sibling renamed onto a secret's name: the stale ruleset
 * allows it (its rule is on the sibling's inode), so a launch that trusted
 * a stale answer would read the fake key. */
Test(reuse, watch_sees_an_allowed_sibling_renamed_onto_a_secret)
{
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	char b[PATH_MAX], away[PATH_MAX], key[PATH_MAX], got[4096];
	cf_fx_fmt(b, sizeof b, "%s/keys-b", fx.home);
	cf_fx_fmt(away, sizeof away, "%s/ssh-away", fx.home);
	cf_fx_fmt(key, sizeof key, "%s/id_ed25519", ssh->path);
	cf_fx_write(cf_fx_at(b, "id_ed25519"), ssh->marker);
	settle();
	struct cf_fence f;
	prepare_watched(&f);
	cr_assert_eq(harness_child_reads(&f, cf_fx_at(b, "id_ed25519"), got, sizeof got), 0,
		     "keys-b is an ordinary sibling");
	cr_assert(cf_fence_current_watched(&f));
	cr_assert_eq(rename(ssh->path, away), 0);
	cr_assert_eq(rename(b, ssh->path), 0);
	cr_assert_not(cf_fence_current_watched(&f), "the watch missed keys-b renamed onto ~/.ssh");
	cr_assert_eq(cf_fence_watch_stats(&f), -1);
	int rc = harness_child_reads(&f, key, got, sizeof got);
	cr_expect_eq(rc, 1, "the key at ~/.ssh was not refused (%d): %s", rc, got);
	cr_expect_not(strstr(got, ssh->marker), "the fake key was read: %s", got);
	cf_fence_free(&f);
}

Test(reuse, watch_sees_a_new_home_entry)
{
	struct cf_fence f;
	settle();
	prepare_watched(&f);
	cr_assert(cf_fence_current_watched(&f));
	cf_fx_write(cf_fx_at(fx.home, "new-entry"), "x");
	cr_assert_not(cf_fence_current_watched(&f), "a new entry in ~ was not seen");
	cr_assert_not(cf_fence_current_watched(&f), "a change seen once must stay seen");
	cf_fence_free(&f);
}

/* ~/.config replaced by a rename: a new directory at a stamped path, whose
 * secrets the stale plan does not know. */
Test(reuse, watch_sees_a_stamped_directory_replaced_by_rename)
{
	struct cf_fence f;
	char old[PATH_MAX], fresh[PATH_MAX];
	cf_fx_fmt(old, sizeof old, "%s/.config.old", fx.home);
	cf_fx_fmt(fresh, sizeof fresh, "%s/config-new", fx.home);
	cf_fx_mkdirs(fresh);
	settle();
	prepare_watched(&f);
	cr_assert(cf_fence_current_watched(&f));
	cr_assert_eq(rename(cf_fx_at(fx.home, ".config"), old), 0);
	cr_assert_eq(rename(fresh, cf_fx_at(fx.home, ".config")), 0);
	cr_assert_not(cf_fence_current_watched(&f), "a replaced ~/.config was not seen");
	cf_fence_free(&f);
}

/* A change deep down: an entry in ~/.config, a stamped directory below
 * the home. */
Test(reuse, watch_sees_an_entry_in_a_deeper_ancestor)
{
	struct cf_fence f;
	settle();
	prepare_watched(&f);
	cf_fx_mkdirs(cf_fx_at(fx.home, ".config/newtool"));
	cr_assert_not(cf_fence_current_watched(&f), "a new entry in ~/.config was not seen");
	cf_fence_free(&f);
}

/* The inotify descriptors (anon_inode:inotify) of this process, into FDS. */
static int inotify_fds(int *fds, int cap)
{
	int n = 0;
	for (int fd = 3; fd < 4096 && n < cap; fd++) {
		char link[64], to[64];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t len = readlink(link, to, sizeof to - 1);
		if (len > 0) {
			to[len] = '\0';
			if (strcmp(to, "anon_inode:inotify") == 0)
				fds[n++] = fd;
		}
	}
	return n;
}

/* A harness that puts a quiet file (a pipe with nothing in it) at the
 * watch's numbers, or closes them: the watch is not trusted, the stats
 * answer, and the change after it is seen. */
static void descriptor_lost(bool close_them)
{
	struct cf_fence f;
	int fds[8], p[2];
	settle();
	prepare_watched(&f);
	int n = inotify_fds(fds, 8);
	cr_assert_eq(n, 2, "the watch holds its inotify instance twice (found %d)", n);
	cr_assert_eq(pipe(p), 0);
	for (int i = 0; i < n; i++)
		cr_assert(close_them ? close(fds[i]) == 0 : dup2(p[0], fds[i]) == fds[i]);
	cf_fx_write(cf_fx_at(fx.home, "new-entry"), "x");
	cr_assert_not(cf_fence_current_watched(&f), "a change behind a %s watch descriptor was missed",
		      close_them ? "closed" : "replaced");
	cr_assert_eq(cf_fence_watch_stats(&f), -1);
	close(p[0]);
	close(p[1]);
	cf_fence_free(&f);
}

Test(reuse, watch_descriptor_replaced_by_dup2_falls_back_to_the_stats)
{
	descriptor_lost(false);
}

Test(reuse, watch_descriptor_closed_falls_back_to_the_stats)
{
	descriptor_lost(true);
}

/* A mount over a stamped path changes what the path names, and inotify
 * says nothing: the mount table's poll must. In a user and mount namespace
 * of a child of ours (as any user; a bind mount of a directory of the
 * fixture over ~/.config). Exit 0 seen, 1 missed, 2 could not test. */
Test(reuse, watch_sees_a_bind_mount_on_a_stamped_path)
{
	char over[PATH_MAX];
	cf_fx_fmt(over, sizeof over, "%s/mount-src", fx.root);
	cf_fx_write(cf_fx_at(over, "file"), "x");
	settle();
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
			_exit(20);
		struct cf_options o;
		struct cf_fence f;
		cf_options_init(&o);
		o.home = fx.home;
		o.workspace = fx.ws;
		for (int i = 0; i < 10; i++) {
			if (cf_fence_prepare(&f, &o, environ, fx.ws) || !f.ready)
				_exit(21);
			if (cf_fence_watch(&f) == 0)
				break;
			cf_fence_free(&f);
			sleep(1);
		}
		if (!f.watch || !cf_fence_current_watched(&f))
			_exit(22);
		if (mount(over, cf_fx_at(fx.home, ".config"), NULL, MS_BIND, NULL))
			_exit(23);
		_exit(cf_fence_current_watched(&f) ? 1 : cf_fence_current(&f) ? 24 : 0);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	if (WEXITSTATUS(st) == 20)
		cf_test_unavailable("no user namespace for the mount (unshare failed)");
	cr_assert_neq(WEXITSTATUS(st), 1, "a bind mount over ~/.config was not seen");
	cr_assert_eq(WEXITSTATUS(st), 0, "the test could not run its steps (%d)", WEXITSTATUS(st));
}

/* The supervisor's liveness by its pidfd: alive, then ended once killed. */
Test(reuse, watch_tells_the_supervisor_ended_by_its_pidfd)
{
	struct cf_fence f;
	settle();
	prepare_watched(&f);
	int alive = cf_fence_supervisor_watched(&f);
	if (alive < 0)
		cf_test_skip("no pidfd of its own inode here (pidfs, Linux 6.9): /proc answers");
	cr_assert_eq(alive, 1);
	cr_assert(cf_ipc_supervisor_alive(&f.ipc));
	cr_assert_eq(kill(f.ipc.sup_pid, SIGKILL), 0);
	for (int i = 0; i < 200 && alive == 1; i++) {
		usleep(10000);
		alive = cf_fence_supervisor_watched(&f);
	}
	cr_assert_eq(alive, 0, "a killed supervisor still reads as alive by its pidfd");
	cr_assert_not(cf_ipc_supervisor_alive(&f.ipc), "/proc disagrees with the pidfd");
	cf_fence_free(&f);
}

/* ---- the watch in a harness ---- */

/* ~/.ssh -> keys-a (the key denied at its target); keys-b an ordinary
 * sibling holding a copy of the key. */
static void ssh_as_a_symlink(void)
{
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	char a[PATH_MAX], b[PATH_MAX];
	cf_fx_fmt(a, sizeof a, "%s/keys-a", fx.home);
	cf_fx_fmt(b, sizeof b, "%s/keys-b", fx.home);
	cf_fx_rmtree(ssh->path);
	cf_fx_write(cf_fx_at(a, "id_ed25519"), ssh->marker);
	cf_fx_write(cf_fx_at(b, "id_ed25519"), ssh->marker);
	cr_assert_eq(symlink("keys-a", ssh->path), 0);
}

/* A Python harness that launches until its fence is watched (at a
 * generation's second check), then closes the watch's inotify descriptors or puts a
 * quiet pipe in their place (argv[1]), retargets ~/.ssh to keys-b, and
 * launches cat of the key by posix_spawn and by fork. */
static const char lost_harness[] =
	"import os, subprocess, sys\n"
	"home = os.environ['HOME']\n"
	"key = os.path.join(home, '.ssh', 'id_ed25519')\n"
	"def launch(how):\n"
	"    argv = ['/bin/cat', key]\n"
	"    kw = dict(close_fds=False) if how == 'spawn' else dict(preexec_fn=lambda: None)\n"
	"    p = subprocess.run(argv, capture_output=True, **kw)\n"
	"    return p.returncode, (p.stdout + p.stderr).decode()\n"
	"def watch_fds():\n"
	"    fds = []\n"
	"    for fd in range(3, 4096):\n"
	"        try:\n"
	"            if os.readlink('/proc/self/fd/%d' % fd) == 'anon_inode:inotify': fds.append(fd)\n"
	"        except OSError: pass\n"
	"    return fds\n"
	/* A change elsewhere on the machine (in an ancestor outside the
	 * fixture) makes a new generation, watched at its second launch. */
	"for i in range(30):\n"
	"    launch('spawn')\n"
	"    fds = watch_fds()\n"
	"    if len(fds) == 2: break\n"
	"print('inotify', len(fds))\n"
	"r, w = os.pipe()\n"
	"for fd in fds:\n"
	"    if sys.argv[1] == 'close': os.close(fd)\n"
	"    else: os.dup2(r, fd)\n"
	"tmp = os.path.join(home, '.ssh.tmp')\n"
	"os.symlink('keys-b', tmp); os.rename(tmp, os.path.join(home, '.ssh'))\n"
	"for how in ('spawn', 'fork'):\n"
	"    code, out = launch(how)\n"
	"    print(how, code, out.strip())\n"
	"    sys.stdout.flush()\n";

static void harness_loses_its_watch(const char *how)
{
	const char *py = cf_test_require_tool("/usr/bin/python3");
	char script[PATH_MAX];
	ssh_as_a_symlink();
	cf_fx_fmt(script, sizeof script, "%s/harness.py", fx.ws);
	cf_fx_write(script, lost_harness);
	settle();
	struct cf_fx_out o;
	cf_fx_credfence(&o, &fx, "harness", NULL, CF_ARGV("--", (char *)py, script, (char *)how));
	cr_assert_eq(o.status, 0, "harness failed: %s", o.err);
	cr_assert(strstr(o.out, "inotify 2"), "the harness held no watch to lose:\n%s\n%s", o.out, o.err);
	cf_fx_assert_no_marker(&fx, &o);
	cr_expect(strstr(o.out, "spawn 1") && strstr(o.out, "fork 1"),
		  "the retargeted key must be refused on both paths:\n%s\n%s", o.out, o.err);
	cf_fx_out_free(&o);
}

Test(reuse, harness_that_closes_the_watch_still_refuses_a_retargeted_secret, .timeout = 120 * CF_TIMEOUT_SCALE)
{
	harness_loses_its_watch("close");
}

Test(reuse, harness_that_replaces_the_watch_still_refuses_a_retargeted_secret, .timeout = 120 * CF_TIMEOUT_SCALE)
{
	harness_loses_its_watch("dup2");
}

/* No change, no rebuild: a harness's 20 launches make one generation,
 * one inotify instance, and are answered by the watch (a poll each); a
 * new entry in ~ then makes one more generation, watched at its second
 * check. Counted with strace in the harness process (the one that runs
 * python3). The fixture's ancestors outside it (/tmp) change when other
 * programs of the machine work there, and the stats would see that too:
 * a run that saw one is run again, 5 times at most. */
struct counts {
	int inits_quiet, inits, polls_quiet;
};

static struct counts count_generations(const char *py, const char *strace, const char *script,
				       const char *trace)
{
	struct counts c = {0, 0, 0};
	struct cf_fx_out o;
	char **env = cf_fx_env(&fx, NULL);
	unlink(cf_fx_at(fx.home, "made-now"));
	settle();
	cf_fx_run(&o, fx.ws, env, NULL,
		  CF_ARGV((char *)strace, "-f", "-qq", "-s", "4096", "-e", "signal=none", "-e",
			  "trace=execve,inotify_init1,poll,write", "-o", (char *)trace,
			  (char *)cf_fx_bin(), "harness", "--home", fx.home, "--workspace", fx.ws, "--",
			  (char *)py, (char *)script));
	cf_fx_env_free(env);
	cr_assert_eq(o.status, 0, "harness failed: %s", o.err);
	cr_assert(strstr(o.out, "quiet done"), "%s\n%s", o.out, o.err);
	cf_fx_out_free(&o);
	char *t = cf_fx_slurp(trace);
	cr_assert(t);
	/* The harness: the process that execve'd python3 with the script. */
	long harness = -1;
	for (char *l = t; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strstr(l, "execve(\"") && strstr(l, script) && strstr(l, ") = 0") &&
		    strstr(l, "python3"))
			harness = strtol(l, NULL, 10);
	cr_assert_gt(harness, 0, "no harness process in the trace");
	bool after = false;
	for (char *l = t; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char *call;
		if (strtol(l, &call, 10) != harness)
			continue;
		call += strspn(call, " ");
		if (strncmp(call, "write(1, \"quiet done", 19) == 0)
			after = true;
		if (strncmp(call, "inotify_init1(", 14) == 0) {
			c.inits++;
			c.inits_quiet += !after;
		}
		if (strncmp(call, "poll([{fd=", 10) == 0 && strstr(call, "POLLPRI") && !after)
			c.polls_quiet++;
	}
	free(t);
	return c;
}

Test(reuse, harness_rebuilds_only_after_a_change, .timeout = 180 * CF_TIMEOUT_SCALE)
{
	const char *py = cf_test_require_tool("/usr/bin/python3");
	const char *strace = cf_test_require_tool("strace");
	char script[PATH_MAX], trace[PATH_MAX];
	cf_fx_fmt(script, sizeof script, "%s/harness.py", fx.ws);
	cf_fx_fmt(trace, sizeof trace, "%s/strace.out", fx.root);
	cf_fx_write(script,
		"import os, subprocess, time\n"
		"for i in range(20):\n"
		"    subprocess.run(['/bin/true'], close_fds=False)\n"
		"print('quiet done', flush=True)\n"
		"open(os.path.join(os.environ['HOME'], 'made-now'), 'w').close()\n"
		"time.sleep(0.2)\n" /* past the 50 ms of a racy fence */
		"for i in range(3):\n"
		"    subprocess.run(['/bin/true'], close_fds=False)\n");
	struct counts c;
	for (int i = 0; i < 5; i++) {
		c = count_generations(py, strace, script, trace);
		if (c.inits_quiet == 1 && c.inits == 2)
			break;
	}
	cr_expect_eq(c.inits_quiet, 1, "20 launches with nothing changed set %d watches", c.inits_quiet);
	cr_expect_geq(c.polls_quiet, 18, "the watch answered %d of 20 launches", c.polls_quiet);
	cr_expect_eq(c.inits, 2, "a new entry in ~ must make one more generation (%d watches)",
		     c.inits);
}

/* In a forked child whose descriptor table (limit 64, so the watch moves
 * its descriptors to 32 and up) has FREE slots left: one below 32 and the
 * rest from 32 up. cf_fence_watch then takes, in turn, the inotify
 * instance (moved up), its twin and the mount table (moved up): with 3
 * free the mount table is the one that can not be had. The child's exit:
 * 0 refused with EMFILE and not watched, 1 watched, 2 refused as stale,
 * 3 anything else. */
static int watch_with_free(struct cf_fence *f, int free_slots)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct rlimit lim = {64, 64};
		int mine[64], n = 0, fd;
		if (setrlimit(RLIMIT_NOFILE, &lim))
			_exit(3);
		while (n < 64 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
			mine[n++] = fd;
		int low = -1, given = 0;
		for (int i = 0; i < n && low < 0; i++)
			if (mine[i] < 32)
				low = mine[i];
		if (low < 0 || close(low))
			_exit(3);
		for (int i = n - 1; i >= 0 && ++given < free_slots; i--)
			if (mine[i] < 32 || close(mine[i]))
				_exit(3);
		int rc = cf_fence_watch(f);
		long stats = cf_fence_watch_stats(f);
		_exit(rc == -EMFILE && stats == -1 ? 0 : rc == 0 && stats >= 0 ? 1 : rc == -ESTALE ? 2 : 3);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the child died (%d)", st);
	return WEXITSTATUS(st);
}

/* A harness out of descriptors when its fence is first watched: without
 * the mount table the watch would see no mount put over a path, so it is
 * not set (EMFILE) and every check is made by the stats. The control: one
 * descriptor more, and the same fence is watched. */
Test(reuse, watch_that_can_not_open_the_mount_table_is_not_set)
{
	struct cf_fence f;
	settle();
	prepare_current(&f);
	int with4 = 2;
	for (int i = 0; i < 5 && with4 == 2; i++) {
		with4 = watch_with_free(&f, 4);
		if (with4 == 2) {
			cf_fence_free(&f);
			sleep(1);
			prepare_current(&f);
		}
	}
	cr_assert_eq(with4, 1, "with 4 descriptors free the fence was not watched (%d)", with4);
	int with3 = watch_with_free(&f, 3);
	cr_expect_eq(with3, 0, "with 3 free (no mount table) the watch was %s",
		     with3 == 1 ? "set all the same" : "refused for another reason");
	cf_fence_free(&f);
}
