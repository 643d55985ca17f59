/* Issue 11: the harness's own reads. credfence harness starts cf-guardprobe
 * as the harness; it attacks the covers (enforce/linux/mountns/harness_guard.h) in every way its
 * file tools, or a model steering them, could: plain, "..", /proc/self/root,
 * /proc/PID/root of the processes above it and of pid 1, a directory fd,
 * openat2, a raw syscall, io_uring, a symlink and a hard link from the
 * workspace, chmod and umount of a cover, ptrace of the supervisor, and a user
 * namespace of its own (unmount, bind the home elsewhere). Each is checked by
 * its errno and by the absence of every marker in all output. Run as root
 * here and as nobody by the as-user test. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "enforce_test.h"
#include "mountns/harness_guard.h"

#ifndef CF_GUARDPROBE
#error "CF_GUARDPROBE comes from meson"
#endif

CF_SUITE_STATE()

static void setup(void)
{
	cf_suite_setup();
	cf_test_require_landlock();
}

TestSuite(guard, .init = setup, .fini = cf_suite_teardown, .timeout = 60 * CF_TIMEOUT_SCALE);

/* The line of O's stdout that starts with NAME and a space: what follows. */
static const char *result(const char *name)
{
	static char line[512];
	size_t n = strlen(name);
	for (const char *p = o.out; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len > n && strncmp(p, name, n) == 0 && p[n] == ' ') {
			snprintf(line, sizeof line, "%.*s", (int)(len - n - 1), p + n + 1);
			return line;
		}
		p = e ? e + 1 : p + len;
	}
	return NULL;
}

static void run_probe(const char *const *extra_opts)
{
	struct argvb b = {0};
	for (const char *const *x = extra_opts; x && *x; x++)
		argvb_add(&b, "%s", *x);
	argvb_add(&b, "--");
	argvb_add(&b, "%s", CF_GUARDPROBE);
	argvb_add(&b, "%s", fx.home);
	argvb_add(&b, "%s", fx.ws);
	argvb_add(&b, "%s", cf_fx_secret(&fx, ".ssh")->key);
	cf_fx_credfence(&o, &fx, "harness", NULL, b.v);
}

#define EXPECT(name, ...)                                                                   \
	do {                                                                                \
		const char *r_ = result(name);                                              \
		const char *ok_[] = {__VA_ARGS__, NULL};                                    \
		bool hit_ = false;                                                          \
		for (const char **k_ = ok_; r_ && *k_; k_++)                                \
			hit_ = hit_ || strcmp(r_, *k_) == 0;                                \
		cr_expect(hit_, "%s: got '%s'\n" OUT_FMT, name, r_ ? r_ : "(no line)",      \
			  OUT_ARGS(o));                                                     \
	} while (0)

Test(guard, every_way_of_the_harness_to_the_key_is_refused)
{
	run_probe(NULL);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
	EXPECT("open", "EACCES");
	EXPECT("dotdot", "EACCES");
	EXPECT("proc-self-root", "EACCES");
	EXPECT("openat-dirfd", "EACCES");
	EXPECT("openat2", "EACCES");
	EXPECT("raw-openat", "EACCES");
	EXPECT("symlink", "EACCES");
	EXPECT("opendir", "EACCES");
	/* Not a way around: the outside processes' views (Landlock's ptrace rule). */
	EXPECT("proc-parent-root", "EACCES", "EPERM");
	EXPECT("proc-1-root", "EACCES", "EPERM");
	EXPECT("proc-parent-cwd", "EACCES", "EPERM");
	EXPECT("ptrace-parent", "EPERM");
	/* io_uring walks the same path; a kernel with it off says so. */
	EXPECT("io_uring", "EACCES", "ENOSYS", "EPERM");
	EXPECT("hardlink", "EACCES");
	/* The covers stay: read-only, and no capability to unmount them. */
	EXPECT("chmod", "EROFS");
	EXPECT("umount", "EPERM");
	/* A user namespace of its own: its mounts are locked, and the domain
	 * forbids mounting. */
	EXPECT("userns-umount", "EINVAL", "EPERM");
	EXPECT("userns-bind", "EINVAL", "EPERM");
	cr_expect(result("userns-open") && strncmp(result("userns-open"), "read", 4) != 0,
		  OUT_FMT, OUT_ARGS(o));
	/* It stays a harness: it writes its own state and reads it back. */
	EXPECT("state", "read state-ok ");
}

/* The harness signs in with its own login (the table's agent rows), and
 * --harness-may-read names more; everything else stays covered. Its
 * children read neither. */
Test(guard, own_login_and_may_read_are_readable_to_the_harness_only)
{
	const struct cf_fx_secret *login = cf_fx_secret(&fx, ".claude/.credentials.json");
	const struct cf_fx_secret *aws = cf_fx_secret(&fx, ".aws");
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	struct argvb b = {0};
	argvb_add(&b, "--harness-may-read");
	argvb_add(&b, "%s", aws->path);
	argvb_add(&b, "--");
	argvb_add(&b, "%s", CF_GUARDPROBE);
	argvb_add(&b, "--read");
	argvb_add(&b, "%s", login->key);
	argvb_add(&b, "%s", aws->key);
	argvb_add(&b, "%s", ssh->key);
	cf_fx_credfence(&o, &fx, "harness", NULL, b.v);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	char want[PATH_MAX + 256];
	snprintf(want, sizeof want, "read:%s read %s", login->key, login->marker);
	cr_expect(strstr(o.out, want), "own login: " OUT_FMT, OUT_ARGS(o));
	snprintf(want, sizeof want, "read:%s read %s", aws->key, aws->marker);
	cr_expect(strstr(o.out, want), "may-read: " OUT_FMT, OUT_ARGS(o));
	snprintf(want, sizeof want, "read:%s EACCES", ssh->key);
	cr_expect(strstr(o.out, want), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, ssh->marker) && !strstr(o.err, ssh->marker), OUT_FMT, OUT_ARGS(o));

	/* A child of the harness (fenced at its launch) reads neither. */
	cf_fx_out_free(&o);
	b = (struct argvb){0};
	argvb_add(&b, "--harness-may-read");
	argvb_add(&b, "%s", aws->path);
	argvb_add(&b, "--");
	argvb_add(&b, "/bin/sh");
	argvb_add(&b, "-c");
	char script[3 * PATH_MAX];
	snprintf(script, sizeof script, "%s --read '%s' '%s'; true", CF_GUARDPROBE, login->key,
		 aws->key);
	argvb_add(&b, "%s", script);
	cf_fx_credfence(&o, &fx, "harness", NULL, b.v);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	snprintf(want, sizeof want, "read:%s EACCES", login->key);
	cr_expect(strstr(o.out, want), "child, login: " OUT_FMT, OUT_ARGS(o));
	snprintf(want, sizeof want, "read:%s EACCES", aws->key);
	cr_expect(strstr(o.out, want), "child, may-read: " OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

/* A may-read path inside a location can not be honoured: refused before
 * anything runs. */
Test(guard, may_read_inside_a_location_is_refused)
{
	struct argvb b = {0};
	argvb_add(&b, "--harness-may-read");
	argvb_add(&b, "%s", cf_fx_secret(&fx, ".ssh")->key);
	argvb_add(&b, "--");
	argvb_add(&b, "/bin/echo");
	argvb_add(&b, "RAN");
	cf_fx_credfence(&o, &fx, "harness", NULL, b.v);
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: harness: --harness-may-read"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "RAN"), OUT_FMT, OUT_ARGS(o));
}

/* Every location of the sorted denied list counts, the first one too: a
 * --deny location named to sort before the account home's (/root/.aws,
 * /nonexistent/.aws). It need not exist (a missing one denies its name);
 * nothing is made there. */
Test(guard, may_read_inside_the_first_denied_location_is_refused)
{
	char first[64], inside[96];
	cf_fx_fmt(first, sizeof first, "/0cf-guard-first-%d", (int)getpid());
	cf_fx_fmt(inside, sizeof inside, "%s/sub", first);
	cf_fx_credfence(&o, &fx, "harness", NULL,
			CF_ARGV("--deny", first, "--harness-may-read", inside, "--", "/bin/echo", "RAN"));
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	char want[256];
	cf_fx_fmt(want, sizeof want, "credfence: harness: --harness-may-read "
		  "(CREDFENCE_HARNESS_MAY_READ) '%s' lies inside a secret location", inside);
	cr_expect(strstr(o.err, want), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "RAN"), OUT_FMT, OUT_ARGS(o));
	/* The location listed first, as the guard saw it. */
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "status", NULL, CF_ARGV("--deny", first));
	const char *list = strstr(o.out, "denied (");
	cr_assert(list, OUT_FMT, OUT_ARGS(o));
	list = strchr(list, '\n');
	cr_expect(list && strncmp(list + 1, "  ", 2) == 0 && strncmp(list + 3, first, strlen(first)) == 0,
		  "%s is not the first denied location:\n" OUT_FMT, first, OUT_ARGS(o));
}

/* A secret that is a symlink to a file elsewhere: the guard covers the
 * target, so the harness reading it through the link gets EACCES too. */
Test(guard, a_symlinked_secret_is_covered_at_its_target)
{
	const struct cf_fx_secret *netrc = cf_fx_secret(&fx, ".netrc");
	char target[PATH_MAX], mark[64];
	cf_fx_fmt(target, sizeof target, "%s/elsewhere/netrc", fx.root);
	cf_fx_fmt(mark, sizeof mark, "%s-linked-netrc", fx.tag);
	cf_fx_write(target, mark);
	cr_assert_eq(unlink(netrc->key), 0);
	cr_assert_eq(symlink(target, netrc->key), 0);
	struct argvb b = {0};
	argvb_add(&b, "--");
	argvb_add(&b, "%s", CF_GUARDPROBE);
	argvb_add(&b, "--read");
	argvb_add(&b, "%s", netrc->key);
	argvb_add(&b, "%s", target);
	cf_fx_credfence(&o, &fx, "harness", NULL, b.v);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	char want[2 * PATH_MAX];
	snprintf(want, sizeof want, "read:%s EACCES", netrc->key);
	cr_expect(strstr(o.out, want), OUT_FMT, OUT_ARGS(o));
	snprintf(want, sizeof want, "read:%s EACCES", target);
	cr_expect(strstr(o.out, want), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, mark) && !strstr(o.err, mark), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

/* Issue 18: a directory descriptor the harness inherits lies outside its
 * guard's mount namespace. credfence harness refuses it, naming it; a
 * command under credfence run reaches nothing through one (Landlock judges
 * the path by where it resolves). */
static const char read_through_fd[] =
	"import os, sys\n"
	"fd = int(sys.argv[1])\n"
	"try:\n"
	"    f = os.open(sys.argv[2], os.O_RDONLY, dir_fd=fd)\n"
	"    print('read', os.read(f, 4096).decode(errors='replace'))\n"
	"except OSError as e:\n"
	"    print('errno', e.errno)\n";

static void run_with_dirfd(const char *sub, const char *dir, int flags, int at, const char *rel)
{
	const char *py = cf_test_require_tool("python3");
	int fd = open(dir, O_RDONLY | O_DIRECTORY | flags);
	cr_assert(fd >= 0, "%s: %s", dir, strerror(errno));
	int inherited = fcntl(fd, F_DUPFD, at); /* no O_CLOEXEC: the command inherits it */
	cr_assert(inherited == at, "descriptor %d is taken", at);
	close(fd);
	char num[16];
	snprintf(num, sizeof num, "%d", at);
	char pyb[PATH_MAX], code[sizeof read_through_fd], relb[PATH_MAX];
	snprintf(pyb, sizeof pyb, "%s", py);
	memcpy(code, read_through_fd, sizeof code);
	snprintf(relb, sizeof relb, "%s", rel);
	cf_fx_credfence(&o, &fx, sub, NULL, CF_ARGV("--", pyb, "-c", code, num, relb));
	close(inherited);
}

Test(guard, an_inherited_directory_above_a_secret_is_refused)
{
	run_with_dirfd("harness", fx.home, 0, 44, ".ssh/id_ed25519");
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: harness: descriptor 44 is the directory") &&
			  strstr(o.err, "holds secret") && strstr(o.err, "44<&-"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "read"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
	cf_fx_out_free(&o);
	/* An O_PATH descriptor of the secret directory itself. */
	char ssh[PATH_MAX];
	cf_fx_fmt(ssh, sizeof ssh, "%s/.ssh", fx.home);
	run_with_dirfd("harness", ssh, O_PATH, 45, "id_ed25519");
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "descriptor 45 is the directory") && strstr(o.err, " is secret "),
		  OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
	cf_fx_out_free(&o);
	/* A directory beside the secrets is no reason to refuse. */
	run_with_dirfd("harness", fx.ws, 0, 46, "no-such-file");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "errno 2"), OUT_FMT, OUT_ARGS(o));
}

Test(guard, run_reaches_nothing_through_an_inherited_directory)
{
	run_with_dirfd("run", fx.home, 0, 44, ".ssh/id_ed25519");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "errno 13"), "EACCES expected\n" OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
	cf_fx_out_free(&o);
	char ssh[PATH_MAX];
	cf_fx_fmt(ssh, sizeof ssh, "%s/.ssh", fx.home);
	run_with_dirfd("run", ssh, O_PATH, 45, "id_ed25519");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "errno 13"), "EACCES expected\n" OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

/* The kernel gives a user namespace only to a process of one thread: the
 * guard of an ordinary user's harness started from a threaded credfence
 * (ThreadSanitizer's runtime starts a thread in every forked child) fails
 * with EINVAL, and says so, not "user namespaces are off". The same guard in
 * a process of one thread is the control: it succeeds. Run by the guard
 * itself in a child, as nobody when the test runs as root (root needs no
 * user namespace). */
static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

struct guard_result {
	int rc;
	char why[1024];
};

static struct guard_result guard_in_child(bool threaded)
{
	struct guard_result r = {.rc = -1};
	int p[2];
	cr_assert(pipe(p) == 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		struct cf_policy pol;
		struct cf_guard_report rep;
		pthread_t t;
		memset(&pol, 0, sizeof pol);
		/* Dumpable again after the change of ids, as after an exec:
		 * else /proc/self/uid_map stays root's. */
		if (geteuid() == 0 && (setgroups(0, NULL) || setgid(65534) || setuid(65534) ||
				       prctl(PR_SET_DUMPABLE, 1)))
			_exit(2);
		if (threaded && pthread_create(&t, NULL, sleeper, NULL))
			_exit(3);
		r.rc = cf_guard_harness(&pol, NULL, &rep, r.why, sizeof r.why);
		_exit(write(p[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 4);
	}
	close(p[1]);
	ssize_t got = read(p[0], &r, sizeof r);
	close(p[0]);
	int st;
	cr_assert(waitpid(pid, &st, 0) == pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child ended with status %d", st);
	cr_assert_eq(got, (ssize_t)sizeof r);
	r.why[sizeof r.why - 1] = '\0';
	return r;
}

Test(guard, a_threaded_caller_is_told_why_it_gets_no_user_namespace)
{
	struct guard_result one = guard_in_child(false);
	if (one.rc)
		cf_test_unavailable("the guard fails for an ordinary user here even with one thread: %s",
				    one.why);
	struct guard_result two = guard_in_child(true);
	cr_expect_eq(two.rc, -EINVAL, "rc %d: %s", two.rc, two.why);
	cr_expect(strstr(two.why, "runs 2 threads"), "%s", two.why);
	cr_expect(strstr(two.why, "ThreadSanitizer"), "%s", two.why);
	cr_expect(!strstr(two.why, "user namespaces are off"), "%s", two.why);
}

/* The same through the command: a credfence with a library that starts a
 * thread in each forked child (tests/enforce/forkthread.c, as ThreadSanitizer
 * does). An ordinary user's harness is refused with that reason and the way
 * out, and nothing runs; best-effort starts it with the same reason as a
 * warning. Root's guard makes no user namespace: the harness runs guarded. */
Test(guard, a_threaded_credfence_names_the_threads)
{
	const char *pre[] = {"LD_PRELOAD=" CF_FORKTHREAD, NULL};
	const char *reason = "threads, and the kernel gives a user namespace only to a process "
			     "of one thread";
	cf_fx_credfence(&o, &fx, "harness", pre, CF_ARGV("--", "/bin/echo", "RAN"));
	if (geteuid() == 0) {
		cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
		cr_expect(strstr(o.out, "RAN"), OUT_FMT, OUT_ARGS(o));
		cr_expect(!strstr(o.err, reason), OUT_FMT, OUT_ARGS(o));
		return;
	}
	cr_expect_eq(o.status, 125, OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "RAN"), "it ran: " OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: harness: the harness's own reads of the secrets can not "
				"be guarded: unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: Invalid argument: "
				"this process runs "),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, reason), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "Run with --best-effort"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.err, "user namespaces are off"), OUT_FMT, OUT_ARGS(o));
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "harness", pre, CF_ARGV("--best-effort", "--", "/bin/echo", "RAN"));
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.out, "RAN"), OUT_FMT, OUT_ARGS(o));
	cr_expect(strstr(o.err, "credfence: warning: harness: the harness's own reads of the secrets "
				"are not guarded: ") && strstr(o.err, reason),
		  OUT_FMT, OUT_ARGS(o));
}
