/* The benchmark driver: what a whole-process timer is too coarse for.
 *
 *   cf-bench launch N spawn|fork|vfork CMD [ARG...]
 *       start CMD N times one after the other, each waited for; print the
 *       per-launch times in microseconds: "min median max mean". With
 *       CF_BENCH_CLOSE_FIRST=1 it closes every descriptor above 2 first
 *       (once, before the first launch), as a harness that closes what it
 *       did not open does: under credfence harness each child then gets
 *       the namespace of the fenced tree from the supervisor (issue 31)
 *   cf-bench plan HOME WORKSPACE N
 *       build the plan and ruleset N times fresh, and check it N times for
 *       reuse; print "fresh_us reuse_us rules"
 *   cf-bench currency HOME WORKSPACE N
 *       the harness's check that its fence is current, N times each way,
 *       with the stats (cf_fence_current) and by the watch
 *       (cf_fence_current_watched); per check, in microseconds: "min
 *       median" of each, how many stamped paths the watch left to the
 *       stats, and what setting the watch took
 *   cf-bench rss CMD [ARG...]
 *       run CMD once; print its peak resident set in KiB
 *   cf-bench chmod N FILE
 *       N chmod(2) of FILE, alternating two modes; per call, in microseconds:
 *       "min median max mean"
 *   cf-bench open N FILE
 *       N open(2)+close(2) of FILE for reading; per pair, as above (run as a
 *       harness, it shows what the guard over its own reads costs)
 *   cf-bench tcp N
 *       N connects to a loopback TCP server of this process (127.0.0.1, a
 *       free port), each closed at once; per connect, as above
 *   cf-bench unix N PATH
 *       the same on a Unix stream socket this process binds at PATH (a
 *       socket made inside the fence, when it runs fenced)
 *   cf-bench dgram N
 *       N sendto(2) of a 64-byte datagram, with its address, to a loopback
 *       UDP socket of this process (read back after each); per send, as
 *       above: what a datagram send pays now, against a trapped call
 *       (SECURITY.md, datagrams)
 *   cf-bench unix-dgram N
 *       N socket(AF_UNIX, SOCK_DGRAM), each closed at once; per socket, as
 *       above: fenced, the supervisor makes each in the fenced tree's
 *       network namespace (sup_dgram.h)
 *   cf-bench notif N
 *       the floor under every trapped call: a child traps getppid(2) with a
 *       seccomp user notification (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP set,
 *       as the supervisor does) and this process answers each at once, one
 *       thread waiting in RECV; per call, in the child, as above
 *   cf-bench ipcfilter N
 *       the filters' install as a fenced child makes it (no_new_privs,
 *       the terminal filter, then the IPC filter with its listener), each
 *       timed, in N children for each of four pairs taken in turn: "tree"
 *       (the programs typed by hand until main at 55f438a, recorded in
 *       tests/enforce/filter_reference.h) and "libseccomp" (filters.h,
 *       compiled at the build), each as is and with the metadata calls
 *       left to the mounts; a line each: "NAME min median max mean" in us
 *       for the IPC filter, and "NAME-tty ..." for the terminal filter
 *   cf-bench ipccall N
 *       per call under each of those four programs (with the terminal
 *       filter under it), in one child each, taken in turn: a chmod the
 *       filter traps (natively; answered at once by this process, the
 *       notification's floor, as in notif) and an ioctl(FIONREAD) that it
 *       lets through (every ioctl runs the filters: no cache for it), in
 *       samples of 100; a line each: "NAME chmod min median max mean" in us
 *       a call, "NAME ioctl_ns ..." in ns a call
 *   cf-bench envfilter N with|without|memo
 *       N times the environment a fenced child of the harness gets from
 *       this process's own (shim/env.c cf_env_for_child), with the secret
 *       variables withheld or only the shim taken out; per call, in
 *       microseconds of this thread's CPU time, as above, and the number of
 *       variables withheld. memo: withheld too, this environment judged
 *       once first, as the harness's own is at its start (cf_env_memo_init)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fence_state.h"
#include "notify/filters.h"
#include "shim.h"
#include "notify/supervisor_wire.h"
#include "notify/ttyfilter.h"
#include "../enforce/filter_reference.h"

/* The status line of P's verdict (a buffer of this file's own). */
static const char *reason_of(const struct cf_policy *p)
{
	static char line[CF_REASON_MAX];
	cf_policy_reason(p, line, sizeof line);
	return line;
}

extern char **environ;

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void stats(double *v, int n)
{
	double sum = 0;
	qsort(v, (size_t)n, sizeof *v, cmp);
	for (int i = 0; i < n; i++)
		sum += v[i];
	printf("%.1f %.1f %.1f %.1f\n", v[0], v[n / 2], v[n - 1], sum / n);
}

static pid_t start(const char *how, char **cmd)
{
	pid_t pid;
	if (strcmp(how, "spawn") == 0) {
		int e = posix_spawnp(&pid, cmd[0], NULL, NULL, cmd, environ);
		if (e) {
			errno = e;
			return -1;
		}
		return pid;
	}
	pid = strcmp(how, "vfork") == 0 ? vfork() : fork();
	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	return pid;
}

static int launch(int n, const char *how, char **cmd)
{
	double *t = calloc((size_t)n, sizeof *t);
	if (!t)
		return 1;
	const char *first = getenv("CF_BENCH_CLOSE_FIRST");
	if (first && strcmp(first, "1") == 0)
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	for (int i = 0; i < n; i++) {
		int status;
		double a = now_us();
		pid_t pid = start(how, cmd);
		if (pid < 0 || waitpid(pid, &status, 0) < 0) {
			perror("cf-bench: launch");
			return 1;
		}
		t[i] = now_us() - a;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "cf-bench: %s exited with status %d\n", cmd[0], status);
			return 1;
		}
	}
	stats(t, n);
	return 0;
}

static int plan(const char *home, const char *ws, int n)
{
	struct cf_options o;
	struct cf_fence f;
	double fresh = 0, reuse = 0;
	size_t rules = 0;
	cf_options_init(&o);
	o.home = home;
	o.workspace = ws;
	for (int i = 0; i < n; i++) {
		double a = now_us();
		if (cf_fence_prepare(&f, &o, environ, ws) || !f.ready) {
			fprintf(stderr, "cf-bench: %s\n", reason_of(&f.pol));
			return 1;
		}
		fresh += now_us() - a;
		rules = f.res.rules;
		a = now_us();
		volatile bool cur = cf_fence_current(&f);
		reuse += now_us() - a;
		(void)cur;
		cf_fence_free(&f);
	}
	printf("%.1f %.2f %zu\n", fresh / n, reuse / n, rules);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int currency(const char *home, const char *ws, int n)
{
	struct cf_options o;
	struct cf_fence f;
	double *t = calloc(2 * (size_t)n, sizeof *t);
	if (!t)
		return 1;
	cf_options_init(&o);
	o.home = home;
	o.workspace = ws;
	if (cf_fence_prepare(&f, &o, environ, ws) || !f.ready) {
		fprintf(stderr, "cf-bench: %s\n", reason_of(&f.pol));
		return 1;
	}
	double armed = now_us();
	int rc = cf_fence_watch(&f);
	armed = now_us() - armed;
	if (rc) {
		fprintf(stderr, "cf-bench: no watch: %s\n", strerror(-rc));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		double a = now_us();
		volatile bool stats = cf_fence_current(&f);
		double b = now_us();
		volatile bool watched = cf_fence_current_watched(&f);
		double c = now_us();
		if (!stats || !watched) {
			fprintf(stderr, "cf-bench: the fence went stale (stats %d, watch %d)\n", stats,
				watched);
			return 1;
		}
		t[i] = b - a;
		t[n + i] = c - b;
	}
	qsort(t, (size_t)n, sizeof *t, cmp_double);
	qsort(t + n, (size_t)n, sizeof *t, cmp_double);
	printf("stats %.2f %.2f watch %.2f %.2f stat_left %ld arm %.1f\n", t[0], t[n / 2], t[n],
	       t[n + n / 2], cf_fence_watch_stats(&f), armed);
	cf_fence_free(&f);
	free(t);
	return 0;
}

static int rss(char **cmd)
{
	struct rusage ru;
	int status;
	pid_t pid = start("fork", cmd);
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
		perror("cf-bench: rss");
		return 1;
	}
	printf("%ld\n", ru.ru_maxrss);
	return 0;
}

static int chmods(int n, const char *file)
{
	double *t = calloc((size_t)n, sizeof *t);
	if (!t)
		return 1;
	for (int i = 0; i < n; i++) {
		double a = now_us();
		if (chmod(file, i % 2 ? 0600 : 0644) != 0) {
			perror("cf-bench: chmod");
			return 1;
		}
		t[i] = now_us() - a;
	}
	stats(t, n);
	free(t);
	return 0;
}

static int opens(int n, const char *file)
{
	double *t = calloc((size_t)n, sizeof *t);
	if (!t)
		return 1;
	for (int i = 0; i < n; i++) {
		double a = now_us();
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror("cf-bench: open");
			free(t);
			return 1;
		}
		close(fd);
		t[i] = now_us() - a;
	}
	stats(t, n);
	free(t);
	return 0;
}

/* Accepts and closes, until the process ends. */
static void *acceptor(void *arg)
{
	int s = *(int *)arg;
	for (;;) {
		int c = accept(s, NULL, NULL);
		if (c >= 0)
			close(c);
	}
	return NULL;
}

/* N connects to the listening socket S at ADDR, per connect in microseconds. */
static int connects(int n, int s, const struct sockaddr *addr, socklen_t len)
{
	double *t = calloc((size_t)n, sizeof *t);
	pthread_t th;
	if (!t || listen(s, 4096) != 0 || pthread_create(&th, NULL, acceptor, &s) != 0) {
		perror("cf-bench: listen");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		int c = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		double a = now_us();
		if (c < 0 || connect(c, addr, len) != 0) {
			perror("cf-bench: connect");
			return 1;
		}
		t[i] = now_us() - a;
		close(c);
	}
	stats(t, n);
	free(t);
	return 0;
}

static int tcp(int n)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof sa;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, len) != 0 ||
	    getsockname(s, (struct sockaddr *)&sa, &len) != 0) {
		perror("cf-bench: tcp");
		return 1;
	}
	return connects(n, s, (struct sockaddr *)&sa, len);
}

static int unix_sock(int n, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path) {
		fprintf(stderr, "cf-bench: socket path too long: %s\n", path);
		return 1;
	}
	strcpy(sa.sun_path, path);
	unlink(path);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof sa) != 0) {
		perror("cf-bench: unix");
		return 1;
	}
	int rc = connects(n, s, (struct sockaddr *)&sa, sizeof sa);
	unlink(path);
	return rc;
}

static int dgrams(int n)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof sa;
	int r = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	double *t = calloc((size_t)n, sizeof *t);
	if (!t || r < 0 || s < 0 || bind(r, (struct sockaddr *)&sa, len) != 0 ||
	    getsockname(r, (struct sockaddr *)&sa, &len) != 0) {
		perror("cf-bench: dgram");
		return 1;
	}
	char buf[64] = "cf-bench";
	for (int i = 0; i < n; i++) {
		double a = now_us();
		if (sendto(s, buf, sizeof buf, 0, (struct sockaddr *)&sa, len) != (ssize_t)sizeof buf) {
			perror("cf-bench: sendto");
			return 1;
		}
		t[i] = now_us() - a;
		if (recv(r, buf, sizeof buf, 0) != (ssize_t)sizeof buf) {
			perror("cf-bench: recv");
			return 1;
		}
	}
	stats(t, n);
	free(t);
	return 0;
}

static int unix_dgrams(int n)
{
	double *t = calloc((size_t)n, sizeof *t);
	if (!t)
		return 1;
	for (int i = 0; i < n; i++) {
		double a = now_us();
		int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		t[i] = now_us() - a;
		if (s < 0) {
			perror("cf-bench: socket(AF_UNIX, SOCK_DGRAM)");
			return 1;
		}
		close(s);
	}
	stats(t, n);
	free(t);
	return 0;
}

static double cpu_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int envfilter(int n, const char *how)
{
	size_t count = cf_env_count(environ) + 1;
	char **out = calloc(count, sizeof *out);
	double *t = calloc((size_t)n, sizeof *t);
	static char ld[4096];
	bool memo = strcmp(how, "memo") == 0;
	unsigned drop = CF_ENV_DROP_SHIM | (strcmp(how, "with") == 0 || memo ? CF_ENV_DROP_SECRETS : 0);
	size_t kept = 0;
	if (!out || !t || n <= 0)
		return 1;
	if (memo)
		cf_env_memo_init(environ); /* as the harness does at its start */
	for (int i = 0; i < n; i++) {
		double a = cpu_us();
		char *const *env = cf_env_for_child(environ, drop, out, count, ld, sizeof ld);
		t[i] = cpu_us() - a;
		kept = cf_env_count(env);
	}
	double sum = 0;
	qsort(t, (size_t)n, sizeof *t, cmp);
	for (int i = 0; i < n; i++)
		sum += t[i];
	printf("%.2f %.2f %.2f %.2f %zu\n", t[0], t[n / 2], t[n - 1], sum / n,
	       count - 1 - kept);
	free(out);
	free(t);
	return 0;
}

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS _IOW('!', 4, uint64_t)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* Hands the listener L to the serving parent over SOCK and waits for its
 * byte back; L is closed here. 0, or -1 (L < 0 included). */
static int hand_listener(int sock, int l)
{
	char c = 0;
	struct iovec io = {&c, 1};
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
	u.h = (struct cmsghdr){.cmsg_len = CMSG_LEN(sizeof(int)), .cmsg_level = SOL_SOCKET, .cmsg_type = SCM_RIGHTS};
	if (l < 0)
		return -1;
	memcpy(CMSG_DATA(&u.h), &l, sizeof l);
	int rc = sendmsg(sock, &m, 0) == 1 && read(sock, &c, 1) == 1 ? 0 : -1;
	close(l);
	return rc;
}

static int notif_child(int n, int sock)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof *f, .filter = f};
	double *t = calloc((size_t)n, sizeof *t);
	if (!t || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 1;
	int l = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (hand_listener(sock, l))
		return 1;
	for (int i = 0; i < n; i++) {
		double a = now_us();
		if (syscall(SYS_getppid) != 7)
			return 1;
		t[i] = now_us() - a;
	}
	stats(t, n);
	fflush(stdout);
	return 0;
}

static int notifs(int n)
{
	int sv[2];
	char c = 'g';
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(notif_child(n, sv[1]));
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec io = {&c, 1};
	struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
	int l = -1;
	if (recvmsg(sv[0], &m, 0) == 1 && CMSG_FIRSTHDR(&m))
		memcpy(&l, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof l);
	if (l < 0 || ioctl(l, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) != 0 ||
	    write(sv[0], &c, 1) != 1) {
		perror("cf-bench: notif");
		kill(pid, SIGKILL);
		return 1;
	}
	for (;;) {
		struct seccomp_notif q;
		struct seccomp_notif_resp r;
		memset(&q, 0, sizeof q);
		if (ioctl(l, SECCOMP_IOCTL_NOTIF_RECV, &q) != 0)
			break; /* ENOENT: the child has exited */
		memset(&r, 0, sizeof r);
		r.id = q.id;
		r.val = 7;
		(void)ioctl(l, SECCOMP_IOCTL_NOTIF_SEND, &r);
	}
	int st;
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

#ifdef CF_HAVE_FILTER_REFERENCE
static const char *const filter_name[4] = {"tree", "libseccomp", "tree-mounts", "libseccomp-mounts"};

/* Program WHICH of filter_name (the IPC filter; the terminal filter with TTY). */
static struct sock_fprog program(int which, bool tty)
{
	bool mounts = which >= 2;
	struct sock_fprog p;
	const struct sock_filter *f;
	if (which % 2 == 0 && tty)
		f = ref_tty, p.len = sizeof ref_tty / sizeof *ref_tty;
	else if (which % 2 == 0)
		f = ref_ipc[CF_IPC_BPF_INDEX(mounts, false)].f, p.len = ref_ipc[CF_IPC_BPF_INDEX(mounts, false)].len;
	else if (tty)
		f = cf_ttyfilter_program(&p.len);
	else
		f = cf_ipc_filter(mounts, false, &p.len);
	p.filter = (struct sock_filter *)(uintptr_t)f; /* the kernel copies it */
	return p;
}

/* no_new_privs, the terminal filter and the IPC filter of WHICH, as a
 * fenced child installs them: the listener, or -1. In *US the IPC filter's
 * part, in *TTY_US the terminal filter's. */
static int install_as_child(int which, double *us, double *tty_us)
{
	struct sock_fprog tty = program(which, true), ipc = program(which, false);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	double a = now_us();
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &tty) != 0)
		return -1;
	double b = now_us();
	long l = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			 SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &ipc);
	*us = now_us() - b;
	*tty_us = b - a;
	return (int)l;
}

static int ipcfilter(int n)
{
	double *t = mmap(NULL, 8 * (size_t)n * sizeof *t, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			 -1, 0);
	if (t == MAP_FAILED)
		return 1;
	for (int i = 0; i < n; i++)
		for (int w = 0; w < 4; w++) {
			int st;
			pid_t pid = fork();
			if (pid == 0)
				_exit(install_as_child(w, &t[w * n + i], &t[(4 + w) * n + i]) < 0);
			if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
				fprintf(stderr, "cf-bench: ipcfilter: the child of %s failed\n", filter_name[w]);
				return 1;
			}
		}
	for (int w = 0; w < 4; w++) {
		printf("%s ", filter_name[w]);
		stats(t + w * n, n);
	}
	for (int w = 0; w < 4; w++) {
		printf("%s-tty ", filter_name[w]);
		stats(t + (4 + w) * n, n);
	}
	return 0;
}

static int ipccall_child(int which, int n, int sock, double *t)
{
	double us;
	char path[] = "/tmp/cf-bench-ipccall-XXXXXX";
	int fd = mkstemp(path), p[2];
	if (fd < 0 || pipe(p) != 0)
		return 1;
	double tty_us;
	int l = install_as_child(which, &us, &tty_us);
	if (hand_listener(sock, l))
		return 1;
	for (int i = 0; i < n; i++) {
		double a = now_us();
		if (chmod(path, i % 2 ? 0600 : 0644) != 0)
			return 1;
		t[i] = now_us() - a;
	}
	for (int i = 0; i < n; i++) { /* 100 a sample, in ns a call */
		int avail;
		double a = now_us();
		for (int k = 0; k < 100; k++)
			if (ioctl(p[0], FIONREAD, &avail) != 0)
				return 1;
		t[n + i] = (now_us() - a) * 10;
	}
	unlink(path);
	return 0;
}

/* Answer every notification of the listener the child sends on SOCK with
 * success, until the child is gone. */
static int answer_all(int sock)
{
	char c = 'g';
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec io = {&c, 1};
	struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
	int l = -1;
	if (recvmsg(sock, &m, 0) == 1 && CMSG_FIRSTHDR(&m))
		memcpy(&l, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof l);
	if (l < 0 || ioctl(l, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) != 0 ||
	    write(sock, &c, 1) != 1)
		return -1;
	for (;;) {
		struct seccomp_notif q;
		struct seccomp_notif_resp r;
		memset(&q, 0, sizeof q);
		if (ioctl(l, SECCOMP_IOCTL_NOTIF_RECV, &q) != 0)
			break;
		memset(&r, 0, sizeof r);
		r.id = q.id;
		(void)ioctl(l, SECCOMP_IOCTL_NOTIF_SEND, &r);
	}
	close(l);
	return 0;
}

static int ipccall(int n)
{
	double *t = mmap(NULL, 8 * (size_t)n * sizeof *t, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			 -1, 0);
	if (t == MAP_FAILED)
		return 1;
	fflush(stdout);
	for (int w = 0; w < 4; w++) {
		int sv[2], st;
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
			return 1;
		pid_t pid = fork();
		if (pid == 0)
			_exit(ipccall_child(w, n, sv[1], t + 2 * w * n));
		close(sv[1]);
		int a = answer_all(sv[0]);
		close(sv[0]);
		if (a < 0 || pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "cf-bench: ipccall: the child of %s failed\n", filter_name[w]);
			kill(pid, SIGKILL);
			return 1;
		}
	}
	for (int w = 0; w < 4; w++) {
		printf("%s chmod ", filter_name[w]);
		stats(t + 2 * w * n, n);
		printf("%s ioctl_ns ", filter_name[w]);
		stats(t + 2 * w * n + n, n);
	}
	return 0;
}
#endif

int main(int argc, char **argv)
{
#ifdef CF_HAVE_FILTER_REFERENCE
	if (argc == 3 && strcmp(argv[1], "ipcfilter") == 0)
		return ipcfilter(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "ipccall") == 0)
		return ipccall(atoi(argv[2]));
#endif
	if (argc >= 5 && strcmp(argv[1], "launch") == 0)
		return launch(atoi(argv[2]), argv[3], argv + 4);
	if (argc == 5 && strcmp(argv[1], "plan") == 0)
		return plan(argv[2], argv[3], atoi(argv[4]));
	if (argc == 5 && strcmp(argv[1], "currency") == 0)
		return currency(argv[2], argv[3], atoi(argv[4]));
	if (argc >= 3 && strcmp(argv[1], "rss") == 0)
		return rss(argv + 2);
	if (argc == 4 && strcmp(argv[1], "chmod") == 0)
		return chmods(atoi(argv[2]), argv[3]);
	if (argc == 4 && strcmp(argv[1], "open") == 0)
		return opens(atoi(argv[2]), argv[3]);
	if (argc == 3 && strcmp(argv[1], "tcp") == 0)
		return tcp(atoi(argv[2]));
	if (argc == 4 && strcmp(argv[1], "unix") == 0)
		return unix_sock(atoi(argv[2]), argv[3]);
	if (argc == 3 && strcmp(argv[1], "dgram") == 0)
		return dgrams(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "unix-dgram") == 0)
		return unix_dgrams(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "notif") == 0)
		return notifs(atoi(argv[2]));
	if (argc == 4 && strcmp(argv[1], "envfilter") == 0)
		return envfilter(atoi(argv[2]), argv[3]);
	fputs("usage: cf-bench launch N spawn|fork|vfork CMD... | plan HOME WS N | rss CMD... | "
	      "chmod N FILE | open N FILE | tcp N | unix N PATH | dgram N | unix-dgram N | "
	      "notif N | "
	      "envfilter N with|without|memo | ipcfilter N | ipccall N\n",
	      stderr);
	return 2;
}
