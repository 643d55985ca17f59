/* The IPC and metadata fence's engine, driven directly: a supervisor started
 * by the test, fenced children that enter it with cf_ipc_enter() (no Landlock
 * here: what is tested is what the supervisor decides), outside servers
 * started by the test before. Every refusal has its unfenced control, so
 * that a pass is the fence's doing. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>

#include "bpf_run.h"
#include "enforce_test.h"
#include "notify/supervisor.h"
#include "proc.h"
#include "notify/supervisor_wire.h"

/* The status line of an IPC failure ERR (a buffer of this file's own). */
static const char *ipc_words(int err)
{
	static __thread char line[512];
	struct cf_why w;
	cf_ipc_verdict(err, &w);
	cf_why_words(&w, line, sizeof line);
	return line;
}

CF_SUITE_STATE()

/* What fenced children report: errnos and counts, in memory shared with them. */
struct shared {
	int e[64];
	atomic_int n[8];
};
static struct shared *sh;

static void setup(void)
{
	cf_suite_setup();
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert(sh != MAP_FAILED);
	memset(sh, 0, sizeof *sh);
	signal(SIGPIPE, SIG_IGN);
}

static void teardown(void)
{
	munmap(sh, sizeof *sh);
	cf_suite_teardown();
}

TestSuite(ipc_engine, .init = setup, .fini = teardown, .timeout = 60 * CF_TIMEOUT_SCALE);

/* ---- the supervisor ---- */

struct sup {
	char addr[CF_IPC_ADDR_MAX];
	pid_t pid;
	char log[PATH_MAX];
	struct cf_ipc ipc;
};

/* The supervisor's pid: the process holding the socket listed in
 * /proc/net/unix under its name (SO_PEERCRED would name the caller, which
 * made the listening socket before it forked). */
static pid_t sup_pid(const char *addr)
{
	char want[CF_IPC_ADDR_MAX + 2], line[512], link[64], path[PATH_MAX], sock[64];
	unsigned long ino = 0;
	snprintf(want, sizeof want, "@%s", addr);
	FILE *f = fopen("/proc/net/unix", "r");
	cr_assert_not_null(f);
	while (!ino && fgets(line, sizeof line, f)) {
		char name[256] = "";
		unsigned long i;
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %255s", &i, name) == 2 &&
		    strcmp(name, want) == 0)
			ino = i;
	}
	fclose(f);
	cr_assert(ino, "%s is not in /proc/net/unix", want);
	snprintf(sock, sizeof sock, "socket:[%lu]", ino);
	pid_t found = 0;
	/* /proc is read while other tests start and end processes: a few tries. */
	for (int tries = 0; !found && tries < 50; tries++) {
	if (tries)
		usleep(20000);
	DIR *d = opendir("/proc");
	cr_assert_not_null(d);
	for (struct dirent *e; !found && (e = readdir(d));) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/fd", e->d_name);
		DIR *fd = opendir(path);
		for (struct dirent *g; fd && (g = readdir(fd));) {
			snprintf(path, sizeof path, "/proc/%s/fd/%s", e->d_name, g->d_name);
			ssize_t n = readlink(path, link, sizeof link - 1);
			if (n > 0 && (link[n] = '\0', strcmp(link, sock) == 0))
				found = (pid_t)atoi(e->d_name);
		}
		if (fd)
			closedir(fd);
	}
	closedir(d);
	}
	cr_assert(found > 0 && found != getpid(), "no supervisor process holds %s", sock);
	return found;
}

/* Start a supervisor logging to ROOT/ipc.log, and the blob of a fence whose
 * writable location is the workspace (and /tmp), with ALLOW (NULL-terminated). */
static void sup_start(struct sup *s, const char *const *allow)
{
	struct cf_strv w = {0}, a = {0};
	cf_fx_fmt(s->log, sizeof s->log, "%s/ipc.log", fx.root);
	int log = open(s->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	cr_assert(log >= 0);
	int r = cf_supervisor_start(getpid(), log, s->addr);
	close(log);
	cr_assert_eq(r, 0, "cf_supervisor_start: %s", strerror(-r));
	s->pid = sup_pid(s->addr);
	cr_assert(cf_strv_add(&w, fx.ws) == 0 && cf_strv_add(&w, "/tmp") == 0);
	for (size_t i = 0; allow && allow[i]; i++)
		cr_assert(cf_strv_add(&a, allow[i]) == 0);
	cr_assert_eq(cf_ipc_prepare(&s->ipc, &w, &a, s->addr), 0);
	s->ipc.sup_beside = true; /* cf_supervisor_start: beside the children, not above */
	cf_strv_free(&w);
	cf_strv_free(&a);
}

__attribute__((unused)) static int sup_fds(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(p);
	cr_assert_not_null(d, "%s: %s", p, strerror(errno));
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* ---- fenced children ---- */

typedef int (*child_fn)(void *);

/* Fork a child that enters the fence of S (none when S is NULL), then runs FN. */
static pid_t spawn(struct sup *s, child_fn fn, void *arg)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		if (s) {
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
				_exit(120);
			int r = cf_ipc_enter(&s->ipc);
			if (r < 0) {
				sh->e[63] = r;
				_exit(121);
			}
		}
		_exit(fn(arg));
	}
	return pid;
}

static int reap(pid_t pid)
{
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void run(struct sup *s, child_fn fn, void *arg)
{
	int st = reap(spawn(s, fn, arg));
	cr_assert_eq(st, 0, "child status %d (enter: %d %s)", st, sh->e[63],
		     sh->e[63] ? ipc_words(sh->e[63]) : "");
}

/* ---- servers ---- */

struct server {
	int fd;
	struct sockaddr_un sa;
	socklen_t len;
	atomic_int accepts;
	atomic_int started;
	pthread_t t;
	const char *reply;
};

static void *serve(void *arg)
{
	struct server *sv = arg;
	atomic_store(&sv->started, 1);
	for (;;) {
		int c = accept(sv->fd, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		atomic_fetch_add(&sv->accepts, 1);
		(void)!write(c, sv->reply, strlen(sv->reply));
		close(c);
	}
}

static void addr_of(struct sockaddr_un *sa, socklen_t *len, const char *where)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	size_t n = strlen(where);
	cr_assert_lt(n, sizeof sa->sun_path);
	if (where[0] == '@') {
		memcpy(sa->sun_path + 1, where + 1, n - 1);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else {
		memcpy(sa->sun_path, where, n);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
}

/* A server on WHERE (a path, or "@name"), in a thread of the test: outside. */
static void server_start(struct server *sv, const char *where, const char *reply)
{
	memset(sv, 0, sizeof *sv);
	sv->reply = reply;
	addr_of(&sv->sa, &sv->len, where);
	if (where[0] != '@')
		unlink(where);
	sv->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert(sv->fd >= 0);
	cr_assert(bind(sv->fd, (struct sockaddr *)&sv->sa, sv->len) == 0, "bind %s: %s", where,
		  strerror(errno));
	cr_assert(listen(sv->fd, 64) == 0);
	cr_assert(pthread_create(&sv->t, NULL, serve, sv) == 0);
	/* Started before the test forks a supervisor: a thread still starting
	 * may hold the allocator's lock (AddressSanitizer's has no fork
	 * handler), and the supervisor's child would inherit it locked. */
	while (!atomic_load(&sv->started))
		sched_yield();
}

static void server_stop(struct server *sv)
{
	shutdown(sv->fd, SHUT_RDWR);
	pthread_join(sv->t, NULL);
	close(sv->fd);
}

/* connect() to WHERE: 0 or errno; what the server said into GOT. */
static int try_connect(const char *where, char *got, size_t cap)
{
	struct sockaddr_un sa;
	socklen_t len;
	addr_of(&sa, &len, where);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	int r = connect(s, (struct sockaddr *)&sa, len) < 0 ? errno : 0;
	if (got) {
		got[0] = '\0';
		if (r == 0) {
			ssize_t n = read(s, got, cap - 1);
			got[n > 0 ? n : 0] = '\0';
		}
	}
	close(s);
	return r;
}

static const char *log_text(const struct sup *s)
{
	static char *text;
	free(text);
	text = cf_fx_slurp(s->log);
	return text ? text : "";
}

/* ---- the probes and words ---- */

static int child_covered(void *arg)
{
	(void)arg;
	sh->e[0] = cf_ipc_covered();
	return 0;
}

Test(ipc_engine, probes_and_words)
{
	struct sup s;
	int r = cf_ipc_probe();
	if (r < 0)
		cf_test_unavailable("seccomp user notification: %s", ipc_words(r));
	cr_expect_eq(cf_ipc_covered(), 0, "no listener in the test process");
	sup_start(&s, NULL);
	run(&s, child_covered, NULL);
	cr_expect_eq(sh->e[0], 1, "a fenced process is covered: %d", sh->e[0]);
	cr_expect_str_eq(ipc_words(-ECONNREFUSED), CF_STATUS_NOT_EFFECTIVE
			 "IPC supervisor unreachable (Connection refused)");
	cr_expect_str_eq(ipc_words(CF_ERR(CF_ERR_IPC, ENOSYS)), CF_STATUS_NOT_EFFECTIVE
			 "seccomp user notification unavailable (Function not implemented)");
	cr_expect_str_eq(ipc_words(CF_ERR(CF_ERR_IPC, EBUSY)), CF_STATUS_NOT_EFFECTIVE
			 "another seccomp notification listener is installed (Device or resource busy)");
	cr_expect_str_eq(ipc_words(CF_ERR(CF_ERR_IPC, EAGAIN)), CF_STATUS_NOT_EFFECTIVE
			 "IPC supervisor did not answer (Resource temporarily unavailable)");
	struct cf_ipc none = {0};
	cr_expect_eq(cf_ipc_enter(&none), -ENOTCONN);
	cf_ipc_free(&s.ipc);
}

/* ---- outside servers ---- */

struct two {
	const char *a, *b;
};

static int child_attacks(void *arg)
{
	struct two *t = arg;
	char got[256];
	sh->e[0] = try_connect(t->a, got, sizeof got);
	sh->n[0] += strstr(got, "CFMARK") != NULL;
	sh->e[1] = try_connect(t->b, got, sizeof got);
	sh->n[0] += strstr(got, "CFMARK") != NULL;
	return 0;
}

Test(ipc_engine, outside_servers_are_refused)
{
	struct sup s;
	struct server p, a;
	char path[PATH_MAX], abs[64], marker[128];
	cf_fx_fmt(path, sizeof path, "%s/outside.sock", fx.root);
	cf_fx_fmt(abs, sizeof abs, "@cf-outside-%d", (int)getpid());
	cf_fx_fmt(marker, sizeof marker, "%s-outside", fx.tag);
	server_start(&p, path, marker);
	server_start(&a, abs, marker);
	struct two t = {path, abs};
	/* The control: unfenced, both answer with the marker. */
	run(NULL, child_attacks, &t);
	cr_assert(sh->e[0] == 0 && sh->e[1] == 0 && sh->n[0] == 2, "control: %s / %s",
		  strerror(sh->e[0]), strerror(sh->e[1]));
	int before = atomic_load(&p.accepts) + atomic_load(&a.accepts);
	sh->n[0] = 0;
	sup_start(&s, NULL);
	run(&s, child_attacks, &t);
	cr_expect_eq(sh->e[0], EACCES, "pathname: %s", strerror(sh->e[0]));
	cr_expect_eq(sh->e[1], EACCES, "abstract: %s", strerror(sh->e[1]));
	cr_expect_eq(sh->n[0], 0, "the marker was read");
	cr_expect_eq(atomic_load(&p.accepts) + atomic_load(&a.accepts), before,
		     "an outside server saw a connection");
	const char *lg = log_text(&s);
	cr_expect(strstr(lg, "\"event\":\"ipc_denied\"") && strstr(lg, path), "log: %s", lg);
	char want[80];
	cf_fx_fmt(want, sizeof want, "\"socket\":\"%s\"", abs);
	cr_expect(strstr(lg, want), "log names %s: %s", abs, lg);
	server_stop(&p);
	server_stop(&a);
	cf_ipc_free(&s.ipc);
}

/* ---- servers bound inside ---- */

struct inside {
	const char *where[3];
	int ready[2]; /* pipe: the server child says it listens */
	int done[2];  /* pipe: the test says it may stop */
};

static int child_server(void *arg)
{
	struct inside *in = arg;
	int fds[3];
	for (int i = 0; i < 3; i++) {
		struct sockaddr_un sa;
		socklen_t len;
		addr_of(&sa, &len, in->where[i]);
		if (in->where[i][0] != '@')
			unlink(in->where[i]);
		fds[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&sa, len) < 0 || listen(fds[i], 64) < 0)
			return 10 + i;
		/* Its own server, from the same process. */
		char got[32];
		int e = 0;
		pid_t self = fork();
		if (self == 0)
			_exit(try_connect(in->where[i], NULL, 0));
		int c = accept(fds[i], NULL, NULL);
		if (c >= 0)
			close(c);
		int st;
		waitpid(self, &st, 0);
		e = WEXITSTATUS(st);
		sh->e[10 + i] = e;
		(void)got;
	}
	(void)!write(in->ready[1], "r", 1);
	struct pollfd pf[4] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}, {fds[2], POLLIN, 0},
			       {in->done[0], POLLIN, 0}};
	for (;;) {
		if (poll(pf, 4, 10000) <= 0 || pf[3].revents)
			break;
		for (int i = 0; i < 3; i++)
			if (pf[i].revents) {
				int c = accept(fds[i], NULL, NULL);
				if (c >= 0) {
					(void)!write(c, "inside", 6);
					close(c);
				}
			}
	}
	for (int i = 0; i < 3; i++)
		if (in->where[i][0] != '@')
			unlink(in->where[i]);
	return 0;
}

static int child_client(void *arg)
{
	struct inside *in = arg;
	char got[32];
	for (int i = 0; i < 3; i++) {
		sh->e[i] = try_connect(in->where[i], got, sizeof got);
		sh->n[1] += strcmp(got, "inside") == 0;
	}
	return 0;
}

Test(ipc_engine, servers_bound_inside_are_reachable)
{
	struct sup s;
	struct inside in;
	char ws[PATH_MAX], tmp[PATH_MAX], abs[64];
	cf_fx_fmt(ws, sizeof ws, "%s/dev.sock", fx.ws);
	cf_fx_fmt(tmp, sizeof tmp, "/tmp/cf-ipc-%d.sock", (int)getpid());
	cf_fx_fmt(abs, sizeof abs, "@cf-inside-%d", (int)getpid());
	in.where[0] = ws, in.where[1] = tmp, in.where[2] = abs;
	cr_assert(pipe(in.ready) == 0 && pipe(in.done) == 0);
	sup_start(&s, NULL);
	pid_t server = spawn(&s, child_server, &in);
	char c;
	cr_assert_eq(read(in.ready[0], &c, 1), 1, "the fenced server did not start");
	for (int i = 0; i < 3; i++)
		cr_expect_eq(sh->e[10 + i], 0, "its own server %s: %s", in.where[i],
			     strerror(sh->e[10 + i]));
	/* A second fenced process of the same supervisor. */
	run(&s, child_client, &in);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(sh->e[i], 0, "%s from a second fenced process: %s", in.where[i],
			     strerror(sh->e[i]));
	cr_expect_eq(sh->n[1], 3);
	(void)!write(in.done[1], "d", 1);
	cr_expect_eq(reap(server), 0);
	cf_ipc_free(&s.ipc);
}

/* ---- what stays open ---- */

static int tcp_listener(int backlog, struct sockaddr_in *a)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	socklen_t al = sizeof *a;
	memset(a, 0, sizeof *a);
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(l >= 0 && bind(l, (struct sockaddr *)a, sizeof *a) == 0 && listen(l, backlog) == 0);
	cr_assert(getsockname(l, (struct sockaddr *)a, &al) == 0);
	return l;
}

static int child_open_paths(void *arg)
{
	struct sockaddr_in *a = arg;
	int sp[2];
	sh->e[0] = socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0 && write(sp[0], "x", 1) == 1 ? 0 : errno;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	sh->e[1] = connect(s, (struct sockaddr *)a, sizeof *a) < 0 ? errno : 0;
	close(s);
	s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int r = connect(s, (struct sockaddr *)a, sizeof *a) < 0 ? errno : 0;
	if (r == EINPROGRESS) {
		struct pollfd pf = {s, POLLOUT, 0};
		int err = 0;
		socklen_t l = sizeof err;
		poll(&pf, 1, 5000);
		getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &l);
		r = err;
	}
	sh->e[2] = r;
	close(s);
	return 0;
}

Test(ipc_engine, socketpair_and_loopback_tcp_work)
{
	struct sup s;
	struct sockaddr_in a;
	int l = tcp_listener(16, &a);
	sup_start(&s, NULL);
	run(&s, child_open_paths, &a);
	cr_expect_eq(sh->e[0], 0, "socketpair: %s", strerror(sh->e[0]));
	cr_expect_eq(sh->e[1], 0, "blocking TCP connect: %s", strerror(sh->e[1]));
	cr_expect_eq(sh->e[2], 0, "non-blocking TCP connect: %s", strerror(sh->e[2]));
	close(l);
	cf_ipc_free(&s.ipc);
}

Test(ipc_engine, allowed_sockets_and_nothing_else)
{
	struct sup s;
	struct server p1, p2, a1, a2;
	char one[PATH_MAX], two[PATH_MAX], abs1[64], abs2[64];
	cf_fx_fmt(one, sizeof one, "%s/agent.sock", fx.root);
	cf_fx_fmt(two, sizeof two, "%s/other.sock", fx.root);
	cf_fx_fmt(abs1, sizeof abs1, "@cf-allowed-%d", (int)getpid());
	cf_fx_fmt(abs2, sizeof abs2, "@cf-allowed-%d-2", (int)getpid());
	server_start(&p1, one, "one");
	server_start(&p2, two, "two");
	server_start(&a1, abs1, "a1");
	server_start(&a2, abs2, "a2");
	const char *allow[] = {one, abs1, NULL};
	sup_start(&s, allow);
	struct two t1 = {one, abs1}, t2 = {two, abs2};
	run(&s, child_attacks, &t1);
	cr_expect(sh->e[0] == 0 && sh->e[1] == 0, "allowed: %s / %s", strerror(sh->e[0]),
		  strerror(sh->e[1]));
	run(&s, child_attacks, &t2);
	cr_expect(sh->e[0] == EACCES && sh->e[1] == EACCES, "not allowed: %s / %s", strerror(sh->e[0]),
		  strerror(sh->e[1]));
	cr_expect_eq(atomic_load(&p2.accepts) + atomic_load(&a2.accepts), 0);
	server_stop(&p1);
	server_stop(&p2);
	server_stop(&a1);
	server_stop(&a2);
	cf_ipc_free(&s.ipc);
}

/* ---- metadata ---- */

#define N_META_OPS 16

static const char *meta_op_name[N_META_OPS] = {
	"chmod",     "chown",	 "utimensat",  "setxattr",    "FS_IOC_SETFLAGS", "fchmod",
	"fchmodat",  "relative chmod", "lchown", "utimes",    "removexattr",	   "fchownat AT_EMPTY_PATH",
	"fsetxattr", "utime",	 "fchmodat2",  "futimens",
};

/* fchmodat2 is Linux 6.6: before it (Debian 12's 6.1) the unfenced control
 * gets ENOSYS (fenced, the supervisor makes the change by another call). */
static bool has_fchmodat2(void)
{
	return syscall(452, -1, "", 0, 0) < 0 ? errno != ENOSYS : true;
}

/* What op I of child_meta gives unfenced. */
static int allowed_gives(int i)
{
	return i == 14 && !has_fchmodat2() ? ENOSYS : 0;
}

/* Every metadata call on PATH; errnos into sh->e[0..N_META_OPS). */
static int child_meta(void *arg)
{
	const char *p = arg;
	char dir[PATH_MAX], *base;
	struct stat st;
	int *e = sh->e;
	if (stat(p, &st) < 0)
		return 2;
	mode_t mode = (st.st_mode & 07777) ^ 0100;
	snprintf(dir, sizeof dir, "%s", p);
	base = strrchr(dir, '/');
	*base++ = '\0';
#define TRY(i, call) e[i] = (call) < 0 ? errno : 0
	TRY(0, chmod(p, mode));
	TRY(1, chown(p, getuid(), getgid()));
	struct timespec ts[2] = {{1000000, 0}, {1000000, 0}};
	TRY(2, utimensat(AT_FDCWD, p, ts, 0));
	TRY(3, setxattr(p, "user.cf", "v", 1, 0));
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	int flags = 0;
	if (fd < 0 || ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		return 3;
	flags ^= FS_NODUMP_FL;
	TRY(4, ioctl(fd, FS_IOC_SETFLAGS, &flags));
	TRY(5, fchmod(fd, mode));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	TRY(6, fchmodat(dfd, base, mode, 0));
	if (chdir(dir) < 0)
		return 4;
	TRY(7, chmod(base, mode));
	TRY(8, lchown(p, getuid(), getgid()));
	TRY(9, utimes(p, NULL));
	TRY(10, removexattr(p, "user.cf"));
	int pfd = open(p, O_PATH | O_CLOEXEC);
	TRY(11, fchownat(pfd, "", getuid(), getgid(), AT_EMPTY_PATH));
	TRY(12, fsetxattr(fd, "user.cf2", "w", 1, 0));
	TRY(13, syscall(SYS_utime, p, NULL));
	TRY(14, syscall(452, dfd, base, mode, AT_SYMLINK_NOFOLLOW));
	TRY(15, syscall(SYS_utimensat, fd, NULL, NULL, 0));
#undef TRY
	return 0;
}

struct snapshot {
	struct stat st;
	char xattrs[256];
	ssize_t nx;
	int flags;
};

static void snap(const char *p, struct snapshot *s)
{
	memset(s, 0, sizeof *s);
	cr_assert(lstat(p, &s->st) == 0, "%s: %s", p, strerror(errno));
	s->nx = llistxattr(p, s->xattrs, sizeof s->xattrs);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ioctl(fd, FS_IOC_GETFLAGS, &s->flags);
		close(fd);
	}
}

static void expect_same(const char *p, const struct snapshot *a, const struct snapshot *b)
{
	cr_expect_eq(a->st.st_mode, b->st.st_mode, "%s: mode changed", p);
	cr_expect(a->st.st_uid == b->st.st_uid && a->st.st_gid == b->st.st_gid, "%s: owner changed", p);
	cr_expect(a->st.st_mtim.tv_sec == b->st.st_mtim.tv_sec &&
			  a->st.st_mtim.tv_nsec == b->st.st_mtim.tv_nsec,
		  "%s: mtime changed", p);
	cr_expect(a->st.st_ctim.tv_sec == b->st.st_ctim.tv_sec &&
			  a->st.st_ctim.tv_nsec == b->st.st_ctim.tv_nsec,
		  "%s: ctime changed (some metadata changed)", p);
	cr_expect(a->nx == b->nx && memcmp(a->xattrs, b->xattrs, a->nx > 0 ? (size_t)a->nx : 0) == 0,
		  "%s: xattrs changed", p);
	cr_expect_eq(a->flags, b->flags, "%s: inode flags changed", p);
}

Test(ipc_engine, metadata_outside_the_writable_locations_is_refused)
{
	struct sup s;
	char outside[PATH_MAX];
	cf_fx_fmt(outside, sizeof outside, "%s/outside.txt", fx.root);
	cf_fx_write(outside, "not a secret\n");
	const char *targets[] = {outside, cf_fx_secret(&fx, ".ssh")->key, fx.home};
	/* The control: unfenced, the same calls succeed on a copy of the first. */
	char copy[PATH_MAX];
	cf_fx_fmt(copy, sizeof copy, "%s/outside-control.txt", fx.root);
	cf_fx_write(copy, "control\n");
	run(NULL, child_meta, copy);
	for (int i = 0; i < N_META_OPS; i++)
		cr_assert_eq(sh->e[i], allowed_gives(i), "control %s: %s", meta_op_name[i], strerror(sh->e[i]));
	sup_start(&s, NULL);
	for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
		struct snapshot before, after;
		snap(targets[t], &before);
		memset(sh->e, 0, sizeof sh->e);
		run(&s, child_meta, (void *)targets[t]);
		snap(targets[t], &after);
		for (int i = 0; i < N_META_OPS; i++)
			cr_expect_eq(sh->e[i], EACCES, "%s on %s: %s", meta_op_name[i], targets[t],
				     strerror(sh->e[i]));
		expect_same(targets[t], &before, &after);
	}
	const char *lg = log_text(&s);
	char want[PATH_MAX + 64];
	cf_fx_fmt(want, sizeof want, "\"call\":\"chmod\",\"path\":\"%s\"", outside);
	cr_expect(strstr(lg, "\"event\":\"metadata_denied\"") && strstr(lg, want), "log: %s", lg);
	cf_ipc_free(&s.ipc);
}

Test(ipc_engine, metadata_inside_the_writable_locations_works)
{
	struct sup s;
	char in_ws[PATH_MAX], in_tmp[PATH_MAX];
	cf_fx_fmt(in_ws, sizeof in_ws, "%s/sub/build-output", fx.ws);
	cf_fx_fmt(in_tmp, sizeof in_tmp, "/tmp/cf-ipc-meta-%d", (int)getpid());
	cf_fx_write(in_ws, "x\n");
	cf_fx_write(in_tmp, "x\n");
	sup_start(&s, NULL);
	const char *targets[] = {in_ws, in_tmp};
	for (size_t t = 0; t < 2; t++) {
		struct snapshot before, after;
		snap(targets[t], &before);
		run(&s, child_meta, (void *)targets[t]);
		snap(targets[t], &after);
		for (int i = 0; i < N_META_OPS; i++)
			cr_expect_eq(sh->e[i], 0, "%s on %s: %s", meta_op_name[i], targets[t],
				     strerror(sh->e[i]));
		cr_expect_neq(before.st.st_mode, after.st.st_mode, "the mode changed");
		cr_expect_eq(after.st.st_mtim.tv_sec, time(NULL) < 2000000 ? 0 : after.st.st_mtim.tv_sec);
		cr_expect_neq(before.flags, after.flags, "the inode flags changed");
		char v[8];
		cr_expect_eq(getxattr(targets[t], "user.cf2", v, sizeof v), 1, "fsetxattr took effect");
	}
	unlink(in_tmp);
	cf_ipc_free(&s.ipc);
}

/* setxattrat(2) (Linux 6.13) takes its struct xattr_args in a size of the
 * caller's, as copy_struct_from_user() does: less than the struct is
 * EINVAL, more than a page E2BIG, and the bytes past the struct must be
 * zero (E2BIG). The supervisor reads the struct for the kernel: inside the
 * writable locations each size must get the kernel's own answer. */
static const struct {
	size_t size;
	bool dirty; /* the last byte past the struct not zero */
} xa_sizes[] = {{16, false}, {24, false}, {4096, false}, {4097, false}, {15, false}, {4096, true}};
#define N_XA_SIZES (sizeof xa_sizes / sizeof *xa_sizes)

static int child_setxattrat(void *arg)
{
	const char *p = arg;
	static char page[8192];
	struct {
		uint64_t value;
		uint32_t size, flags;
	} xa = {(uint64_t)(uintptr_t) "v", 1, 0};
	for (size_t i = 0; i < N_XA_SIZES; i++) {
		char name[32];
		memset(page, 0, sizeof page);
		memcpy(page, &xa, sizeof xa);
		if (xa_sizes[i].dirty)
			page[xa_sizes[i].size - 1] = 1;
		snprintf(name, sizeof name, "user.cfxa%zu", i);
		sh->e[i] = syscall(463, AT_FDCWD, p, 0, name, page, xa_sizes[i].size) < 0 ? errno : 0;
	}
	return 0;
}

Test(ipc_engine, setxattrat_gets_the_kernels_answer_for_each_struct_size)
{
	struct sup s;
	char control[PATH_MAX], in_ws[PATH_MAX];
	cf_fx_fmt(control, sizeof control, "%s/xa-control", fx.ws);
	cf_fx_fmt(in_ws, sizeof in_ws, "%s/xa-fenced", fx.ws);
	cf_fx_write(control, "x\n");
	cf_fx_write(in_ws, "x\n");
	run(NULL, child_setxattrat, control);
	if (sh->e[0] == ENOSYS)
		cf_test_unavailable("no setxattrat here (Linux 6.13 or later has it)");
	int want[N_XA_SIZES];
	for (size_t i = 0; i < N_XA_SIZES; i++)
		want[i] = sh->e[i];
	/* What copy_struct_from_user() answers, so that the control is sound. */
	static const int kernel[N_XA_SIZES] = {0, 0, 0, E2BIG, EINVAL, E2BIG};
	for (size_t i = 0; i < N_XA_SIZES; i++)
		cr_assert_eq(want[i], kernel[i], "control, size %zu%s: %s", xa_sizes[i].size,
			     xa_sizes[i].dirty ? " (dirty)" : "", strerror(want[i]));
	sup_start(&s, NULL);
	memset(sh->e, 0, sizeof sh->e);
	run(&s, child_setxattrat, in_ws);
	for (size_t i = 0; i < N_XA_SIZES; i++) {
		char name[32], v[8];
		snprintf(name, sizeof name, "user.cfxa%zu", i);
		cr_expect_eq(sh->e[i], want[i], "fenced, size %zu%s: %s, the kernel's: %s",
			     xa_sizes[i].size, xa_sizes[i].dirty ? " (dirty)" : "", strerror(sh->e[i]),
			     strerror(want[i]));
		cr_expect_eq(getxattr(in_ws, name, v, sizeof v) == 1, want[i] == 0,
			     "%s is set: %s", name, want[i] ? "it should not be" : "it is not");
	}
	cf_ipc_free(&s.ipc);
}

/* A pipe and a socket have no place in the file system (their link in
 * /proc/self/fd is "pipe:[N]", "socket:[N]"), and no other process names
 * them by a path: a fenced process may change their metadata as an
 * unfenced one may. */
static int child_fd_meta(void *arg)
{
	(void)arg;
	int p[2], sv[2];
	if (pipe2(p, O_CLOEXEC) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 2;
	sh->e[0] = fchmod(p[0], 0600) < 0 ? errno : 0;
	sh->e[1] = fchown(p[1], getuid(), getgid()) < 0 ? errno : 0;
	sh->e[2] = fchmod(sv[0], 0600) < 0 ? errno : 0;
	sh->e[3] = fchown(sv[1], getuid(), getgid()) < 0 ? errno : 0;
	return 0;
}

Test(ipc_engine, metadata_of_a_pipe_and_a_socket_works_as_unfenced)
{
	static const char *const what[] = {"fchmod of a pipe", "fchown of a pipe",
					   "fchmod of a socket", "fchown of a socket"};
	struct sup s;
	memset(sh->e, 0xff, sizeof sh->e);
	run(NULL, child_fd_meta, NULL);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(sh->e[i], 0, "control, %s: %s", what[i], strerror(sh->e[i]));
	sup_start(&s, NULL);
	memset(sh->e, 0xff, sizeof sh->e);
	run(&s, child_fd_meta, NULL);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(sh->e[i], 0, "fenced, %s: %s", what[i], strerror(sh->e[i]));
	cr_expect(!strstr(log_text(&s), "\"event\":\"metadata_denied\""), "a denial was logged: %s",
		  log_text(&s));
	cf_ipc_free(&s.ipc);
}

struct links {
	const char *out_link, *in_link;
};

static int child_links(void *arg)
{
	struct links *l = arg;
	sh->e[0] = chmod(l->out_link, 0600) < 0 ? errno : 0;	  /* follows to the outside */
	sh->e[1] = lchown(l->out_link, getuid(), getgid()) < 0 ? errno : 0; /* the link itself */
	sh->e[2] = chmod(l->in_link, 0600) < 0 ? errno : 0;
	sh->e[3] = chown("../outside.txt", getuid(), getgid()) < 0 ? errno : 0; /* from the cwd ws */
	int ws = open(".", O_PATH | O_DIRECTORY);
	sh->e[4] = fchmodat(ws, "../outside.txt", 0600, 0) < 0 ? errno : 0;
	sh->e[5] = fchmodat(ws, "in-target", 0640, 0) < 0 ? errno : 0;
	/* The caller's own /proc/self and /dev/fd, not the supervisor's. */
	char self[64];
	int in = open("in-target", O_RDONLY | O_CLOEXEC), out = open("../outside.txt", O_RDONLY);
	snprintf(self, sizeof self, "/proc/self/fd/%d", out);
	sh->e[6] = syscall(452, AT_FDCWD, self, 0600, 0) < 0 ? errno : 0;
	snprintf(self, sizeof self, "/proc/self/fd/%d", in);
	sh->e[7] = syscall(452, AT_FDCWD, self, 0600, 0) < 0 ? errno : 0;
	snprintf(self, sizeof self, "/dev/fd/%d", in);
	sh->e[8] = chmod(self, 0644) < 0 ? errno : 0;
	return 0;
}

Test(ipc_engine, metadata_through_symlinks_relative_paths_and_dirfds)
{
	struct sup s;
	char outside[PATH_MAX], target[PATH_MAX], out_link[PATH_MAX], in_link[PATH_MAX];
	cf_fx_fmt(outside, sizeof outside, "%s/outside.txt", fx.root);
	cf_fx_fmt(target, sizeof target, "%s/in-target", fx.ws);
	cf_fx_fmt(out_link, sizeof out_link, "%s/to-outside", fx.ws);
	cf_fx_fmt(in_link, sizeof in_link, "%s/to-inside", fx.ws);
	cf_fx_write(outside, "o\n");
	cf_fx_write(target, "t\n");
	cr_assert(symlink(outside, out_link) == 0 && symlink(target, in_link) == 0);
	struct snapshot before, after;
	snap(outside, &before);
	sup_start(&s, NULL);
	struct links l = {out_link, in_link};
	char cwd[PATH_MAX];
	cr_assert(getcwd(cwd, sizeof cwd));
	cr_assert(chdir(fx.ws) == 0);
	pid_t pid = spawn(&s, child_links, &l);
	cr_assert(chdir(cwd) == 0);
	cr_assert_eq(reap(pid), 0);
	snap(outside, &after);
	cr_expect_eq(sh->e[0], EACCES, "chmod through a link to the outside: %s", strerror(sh->e[0]));
	cr_expect_eq(sh->e[1], 0, "lchown of the link in the workspace: %s", strerror(sh->e[1]));
	cr_expect_eq(sh->e[2], 0, "chmod through a link to the inside: %s", strerror(sh->e[2]));
	cr_expect_eq(sh->e[3], EACCES, "relative ../outside: %s", strerror(sh->e[3]));
	cr_expect_eq(sh->e[4], EACCES, "dirfd + ../outside: %s", strerror(sh->e[4]));
	cr_expect_eq(sh->e[5], 0, "dirfd + inside: %s", strerror(sh->e[5]));
	cr_expect_eq(sh->e[6], EACCES, "/proc/self/fd/N of the outside: %s", strerror(sh->e[6]));
	cr_expect_eq(sh->e[7], 0, "/proc/self/fd/N of the inside: %s", strerror(sh->e[7]));
	cr_expect_eq(sh->e[8], 0, "/dev/fd/N of the inside: %s", strerror(sh->e[8]));
	expect_same(outside, &before, &after);
	cf_ipc_free(&s.ipc);
}

/* A relative path is pinned from a descriptor of the caller's directory
 * (its cwd, or the dirfd it gave), which the supervisor takes for each
 * call: a flood of them leaves it holding no more descriptors than before,
 * and one more still works. */
#define RELATIVE_FLOOD 200

static int child_relative_flood(void *arg)
{
	const char *ws = arg;
	if (chdir(ws) < 0)
		return 2;
	int dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return 3;
	for (int i = 0; i < RELATIVE_FLOOD; i++) {
		if (chmod("flood", 0600 | (i & 1) << 6) != 0)
			atomic_fetch_add(&sh->n[0], 1);
		if (fchmodat(dir, "flood", 0640 | (i & 1) << 6, 0) != 0)
			atomic_fetch_add(&sh->n[1], 1);
	}
	return 0;
}

static int child_relative_once(void *arg)
{
	(void)arg;
	sh->e[0] = chmod("flood", 0604) < 0 ? errno : 0;
	return 0;
}

/* One fenced chmod of "flood" from the workspace: 0 or its errno. */
static int relative_once(struct sup *s)
{
	char cwd[PATH_MAX];
	cr_assert(getcwd(cwd, sizeof cwd));
	cr_assert(chdir(fx.ws) == 0);
	sh->e[0] = -1;
	pid_t pid = spawn(s, child_relative_once, NULL);
	cr_assert(chdir(cwd) == 0);
	cr_assert_eq(reap(pid), 0);
	return sh->e[0];
}

Test(ipc_engine, a_flood_of_relative_metadata_calls_leaves_no_descriptor_behind)
{
	struct sup s;
	cf_fx_write(cf_fx_at(fx.ws, "flood"), "x\n");
	sup_start(&s, NULL);
	/* The first fenced process sets what the supervisor keeps for good. */
	cr_assert_eq(relative_once(&s), 0, "a relative chmod: %s", strerror(sh->e[0]));
	/* What it holds for a process that is gone may be closed a moment
	 * later: the count before is an upper bound, the count after must
	 * come down to it. */
	int before = sup_fds(s.pid), after = 0;
	sh->n[0] = sh->n[1] = 0;
	run(&s, child_relative_flood, fx.ws);
	cr_expect_eq(sh->n[0], 0, "%d of %d relative chmods failed", sh->n[0], RELATIVE_FLOOD);
	cr_expect_eq(sh->n[1], 0, "%d of %d fchmodats failed", sh->n[1], RELATIVE_FLOOD);
	for (int i = 0; i < 50 && (after = sup_fds(s.pid)) > before; i++)
		usleep(20000);
	cr_expect_leq(after, before, "after %d relative calls the supervisor holds %d descriptors, "
		      "%d before", 2 * RELATIVE_FLOOD, after, before);
	cr_expect_eq(relative_once(&s), 0, "one more relative chmod: %s", strerror(sh->e[0]));
	struct stat st;
	cr_assert_eq(stat(cf_fx_at(fx.ws, "flood"), &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0604, "its mode is %o", (unsigned)st.st_mode & 0777);
	cf_ipc_free(&s.ipc);
}

/* A file inside the workspace whose path is longer than PATH_MAX: the
 * supervisor pins it (by the caller's cwd), but /proc/self/fd/N can not name
 * it (ENAMETOOLONG), so it can not tell where it lies. The call is refused
 * (fail closed; SECURITY.md) and logged by the name the caller gave. */
struct deep {
	int dir; /* the deepest directory, open */
};

static int child_deep_chmod(void *arg)
{
	struct deep *d = arg;
	if (fchdir(d->dir) < 0)
		return 2;
	sh->e[0] = chmod("f", 0600) < 0 ? errno : 0;
	return 0;
}

Test(ipc_engine, metadata_of_a_file_it_can_not_locate_is_refused)
{
	struct sup s;
	struct deep d;
	char name[201];
	memset(name, 'd', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	d.dir = open(fx.ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert(d.dir >= 0);
	size_t depth = strlen(fx.ws);
	while (depth <= PATH_MAX) {
		cr_assert(mkdirat(d.dir, name, 0755) == 0, "mkdirat: %s", strerror(errno));
		int next = openat(d.dir, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		cr_assert(next >= 0);
		close(d.dir);
		d.dir = next;
		depth += 1 + strlen(name);
	}
	int f = openat(d.dir, "f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	cr_assert(f >= 0);
	close(f);
	/* The precondition: this file has no name /proc/self/fd can give. */
	char link[64], where[PATH_MAX];
	f = openat(d.dir, "f", O_PATH | O_CLOEXEC);
	snprintf(link, sizeof link, "/proc/self/fd/%d", f);
	errno = 0;
	cr_assert(readlink(link, where, sizeof where) < 0 && errno == ENAMETOOLONG,
		  "readlink of a %zu-byte path: %s", depth, strerror(errno));
	/* The control: unfenced, the chmod works. */
	run(NULL, child_deep_chmod, &d);
	cr_assert_eq(sh->e[0], 0, "control: %s", strerror(sh->e[0]));
	cr_assert(fchmodat(d.dir, "f", 0644, 0) == 0, "fchmodat: %s", strerror(errno));
	struct stat before, after;
	cr_assert(fstat(f, &before) == 0);
	sup_start(&s, NULL);
	run(&s, child_deep_chmod, &d);
	cr_assert(fstat(f, &after) == 0);
	cr_expect_eq(sh->e[0], EACCES, "chmod of a file it can not locate: %s", strerror(sh->e[0]));
	cr_expect_eq(before.st_mode, after.st_mode, "the mode changed");
	const char *lg = log_text(&s);
	cr_expect(strstr(lg, "\"event\":\"metadata_denied\"") &&
			  strstr(lg, "\"call\":\"chmod\",\"path\":\"f\""),
		  "the log names the file as the caller did: %s", lg);
	close(f);
	close(d.dir);
	cf_ipc_free(&s.ipc);
}

/* ---- races ---- */

struct race {
	struct sockaddr_un *buf;
	struct sockaddr_un good, bad;
	atomic_int stop;
};

/* Each address stays a while: flipped back at once, the outside one is in
 * the buffer so briefly that on a slow machine (a VM without KVM) no connect
 * of 3000 saw it, and the race was never run. */
static void *flipper(void *arg)
{
	struct race *r = arg;
	while (!atomic_load(&r->stop)) {
		memcpy(r->buf, &r->bad, sizeof r->bad);
		for (int i = 0; i < 2000 && !atomic_load(&r->stop); i++)
			;
		memcpy(r->buf, &r->good, sizeof r->good);
		for (int i = 0; i < 2000 && !atomic_load(&r->stop); i++)
			;
	}
	return NULL;
}

static int child_race(void *arg)
{
	struct race *r = arg;
	pthread_t t;
	r->buf = malloc(sizeof *r->buf);
	memcpy(r->buf, &r->good, sizeof r->good);
	if (pthread_create(&t, NULL, flipper, r))
		return 2;
	/* At least 3000 tries, and on until both answers were seen (at most
	 * 30 s): the test below wants the race run, not merely attempted. */
	time_t until = time(NULL) + 30;
	for (int i = 0; i < 3000 || ((!sh->n[2] || !sh->n[3]) && time(NULL) < until); i++) {
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (connect(s, (struct sockaddr *)r->buf, sizeof *r->buf) == 0)
			sh->n[2]++;
		else if (errno == EACCES)
			sh->n[3]++;
		close(s);
	}
	atomic_store(&r->stop, 1);
	pthread_join(t, NULL);
	return 0;
}

Test(ipc_engine, a_rewritten_address_never_reaches_the_outside)
{
	struct sup s;
	struct server good, bad;
	char gp[PATH_MAX], bp[PATH_MAX];
	cf_fx_fmt(gp, sizeof gp, "%s/allowed.sock", fx.root);
	cf_fx_fmt(bp, sizeof bp, "%s/outside.sock", fx.root);
	server_start(&good, gp, "good");
	server_start(&bad, bp, "bad");
	const char *allow[] = {gp, NULL};
	sup_start(&s, allow);
	struct race r = {0};
	socklen_t l;
	addr_of(&r.good, &l, gp);
	addr_of(&r.bad, &l, bp);
	run(&s, child_race, &r);
	cr_expect_eq(atomic_load(&bad.accepts), 0, "the outside server saw %d connections",
		     atomic_load(&bad.accepts));
	cr_expect_gt(sh->n[2], 0, "no connect reached the allowed server");
	cr_expect_gt(sh->n[3], 0, "no connect was refused: the race was not run");
	cr_log_info("race: %d allowed, %d refused", sh->n[2], sh->n[3]);
	server_stop(&good);
	server_stop(&bad);
	cf_ipc_free(&s.ipc);
}

/* A TCP socket can not reach a Unix listener, whatever address it is given:
 * so a judgement by the socket's family alone (SO_DOMAIN, then let the
 * kernel go on) looks safe. It is not: the kernel looks the descriptor up
 * again when it goes on, and a thread sharing the caller's descriptor table
 * can dup2() a Unix socket onto that number in between. Here one thread
 * flips the address between a loopback TCP one and an outside Unix socket,
 * another flips descriptor N between a TCP and a fresh Unix socket, and the
 * caller connects N again and again: the outside server must see nothing. */
struct swap_race {
	struct sockaddr_storage *buf;
	struct sockaddr_in tcp;
	struct sockaddr_un bad;
	int n, tcp_sock;
	atomic_int stop;
};

static void *swap_flipper(void *arg)
{
	struct swap_race *r = arg;
	while (!atomic_load(&r->stop)) {
		memcpy(r->buf, &r->tcp, sizeof r->tcp);
		memcpy(r->buf, &r->bad, sizeof r->bad);
	}
	return NULL;
}

static void *fd_swapper(void *arg)
{
	struct swap_race *r = arg;
	while (!atomic_load(&r->stop)) {
		int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); /* fresh: never connected */
		if (u < 0)
			continue;
		dup3(u, r->n, O_CLOEXEC); /* each held about as long as the other */
		for (volatile int i = 0; i < 2000; i++)
			;
		dup3(r->tcp_sock, r->n, O_CLOEXEC);
		for (volatile int i = 0; i < 2000; i++)
			;
		close(u);
	}
	return NULL;
}

static int child_swap_race(void *arg)
{
	struct swap_race *r = arg;
	pthread_t t1, t2;
	r->buf = calloc(1, sizeof *r->buf);
	r->tcp_sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	r->n = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!r->buf || r->tcp_sock < 0 || r->n < 0)
		return 2;
	memcpy(r->buf, &r->tcp, sizeof r->tcp);
	if (pthread_create(&t1, NULL, swap_flipper, r) || pthread_create(&t2, NULL, fd_swapper, r))
		return 2;
	/* At least 3000 tries and a second, yielding between them: on a busy
	 * machine the two threads would otherwise not run during the loop. Up
	 * to 10 s more until both kinds of socket were met at the number (a
	 * fenced connect is a round trip, so fewer tries fit in a second: a
	 * CI run once met only Unix sockets there). */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0;; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		bool both = sh->n[2] + sh->n[3] > 0 && sh->n[4] + sh->n[5] > 0;
		if (i >= 3000 && t.tv_sec - t0.tv_sec >= 1 && (both || t.tv_sec - t0.tv_sec >= 11))
			break;
		sched_yield();
		if (connect(r->n, (struct sockaddr *)r->buf, sizeof(struct sockaddr_un)) == 0)
			sh->n[2]++; /* reached something: the outside server counts it */
		else if (errno == EACCES)
			sh->n[3]++; /* a Unix socket, judged */
		else if (errno == ECONNREFUSED)
			sh->n[4]++; /* a TCP socket with the TCP address */
		else
			sh->n[5]++; /* a mismatch (EAFNOSUPPORT, EINVAL), or EISCONN */
	}
	atomic_store(&r->stop, 1);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return 0;
}

Test(ipc_engine, a_swapped_descriptor_never_reaches_the_outside)
{
	struct sup s;
	struct server bad;
	char bp[PATH_MAX];
	cf_fx_fmt(bp, sizeof bp, "%s/outside.sock", fx.root);
	server_start(&bad, bp, "bad");
	/* A loopback port bound but not listening: a TCP connect is refused at
	 * once (ECONNREFUSED), no backlog to fill. */
	struct swap_race r = {0};
	socklen_t al = sizeof r.tcp;
	int port = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	r.tcp.sin_family = AF_INET;
	r.tcp.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(port >= 0 && bind(port, (struct sockaddr *)&r.tcp, sizeof r.tcp) == 0 &&
		  getsockname(port, (struct sockaddr *)&r.tcp, &al) == 0);
	socklen_t l;
	addr_of(&r.bad, &l, bp);
	/* The control, unfenced: the same race reaches the outside server. */
	run(NULL, child_swap_race, &r);
	/* The server thread accepts in its own time, one connection after the
	 * other: wait until it has taken every connect the child saw succeed
	 * (a VM without KVM took none within a second), so that none of them
	 * is counted against the fenced run below. */
	for (int i = 0; i < 2000 && atomic_load(&bad.accepts) < sh->n[2]; i++)
		usleep(10000);
	int plain = atomic_load(&bad.accepts);
	cr_log_info("unfenced: %d reached, %d refused, %d TCP refused, %d mismatched", sh->n[2],
		    sh->n[3], sh->n[4], sh->n[5]);
	cr_expect_gt(plain, 0, "unfenced, the race never reached the outside server");
	memset((void *)sh->n, 0, sizeof sh->n);
	atomic_store(&r.stop, 0);
	sup_start(&s, NULL);
	run(&s, child_swap_race, &r);
	cr_expect_eq(atomic_load(&bad.accepts), plain, "the outside server saw %d connections",
		     atomic_load(&bad.accepts) - plain);
	cr_expect_gt(sh->n[3], 0, "no Unix connect was refused: the race was not run");
	cr_expect_gt(sh->n[4] + sh->n[5], 0, "no TCP socket was tried: the race was not run");
	cr_log_info("swap race: %d reached, %d refused, %d TCP refused, %d mismatched", sh->n[2],
		    sh->n[3], sh->n[4], sh->n[5]);
	close(port);
	server_stop(&bad);
	cf_ipc_free(&s.ipc);
}

/* ---- a supervisor that is gone ---- */

struct killed {
	const char *outside, *inside_file;
	int go[2];
};

static int child_after_kill(void *arg)
{
	struct killed *k = arg;
	char c;
	if (read(k->go[0], &c, 1) != 1)
		return 2;
	sh->e[0] = try_connect(k->outside, NULL, 0);
	sh->e[1] = chmod(k->inside_file, 0600) < 0 ? errno : 0;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	sh->e[2] = bind(s, (struct sockaddr *)&(struct sockaddr_un){AF_UNIX, "@x"}, 4) < 0 ? errno : 0;
	return 0;
}

Test(ipc_engine, a_killed_supervisor_fails_every_trapped_call)
{
	struct sup s;
	struct server out;
	struct killed k;
	char op[PATH_MAX], in[PATH_MAX];
	cf_fx_fmt(op, sizeof op, "%s/outside.sock", fx.root);
	cf_fx_fmt(in, sizeof in, "%s/f", fx.ws);
	cf_fx_write(in, "x");
	server_start(&out, op, "bad");
	k.outside = op, k.inside_file = in;
	cr_assert(pipe(k.go) == 0);
	sup_start(&s, (const char *[]){op, NULL}); /* allowed while it lives */
	pid_t pid = spawn(&s, child_after_kill, &k);
	usleep(100000 * CF_TIMEOUT_SCALE); /* the handover is done (later in the VM's TCG) */
	cr_assert(kill(s.pid, SIGKILL) == 0);
	usleep(100000 * CF_TIMEOUT_SCALE);
	(void)!write(k.go[1], "g", 1);
	cr_assert_eq(reap(pid), 0);
	cr_expect_eq(sh->e[0], ENOSYS, "connect: %s", strerror(sh->e[0]));
	cr_expect_eq(sh->e[1], ENOSYS, "chmod: %s", strerror(sh->e[1]));
	cr_expect_eq(sh->e[2], ENOSYS, "bind: %s", strerror(sh->e[2]));
	cr_expect_eq(atomic_load(&out.accepts), 0);
	server_stop(&out);
	cf_ipc_free(&s.ipc);
}

/* ---- stress ---- */

struct stress {
	const char *inside, *outside, *file;
	atomic_int *bad;
};

static void *stress_thread(void *arg)
{
	struct stress *st = arg;
	char got[16];
	for (int i = 0; i < 150; i++) {
		if (try_connect(st->inside, got, sizeof got) != 0 || strcmp(got, "inside") != 0)
			atomic_fetch_add(&sh->n[4], 1);
		if (try_connect(st->outside, NULL, 0) != EACCES)
			atomic_fetch_add(&sh->n[5], 1);
		if (chmod(st->file, 0600 | (i & 1) << 6) != 0)
			atomic_fetch_add(&sh->n[6], 1);
	}
	return NULL;
}

static int child_stress(void *arg)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, stress_thread, arg))
			return 2;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

Test(ipc_engine, sixteen_threads_of_four_fenced_processes, .timeout = 60 * CF_TIMEOUT_SCALE)
{
	struct sup s;
	struct inside in;
	struct server out;
	char ws[PATH_MAX], tmp[PATH_MAX], abs[64], op[PATH_MAX], file[PATH_MAX];
	cf_fx_fmt(ws, sizeof ws, "%s/srv.sock", fx.ws);
	cf_fx_fmt(tmp, sizeof tmp, "/tmp/cf-ipc-stress-%d.sock", (int)getpid());
	cf_fx_fmt(abs, sizeof abs, "@cf-stress-%d", (int)getpid());
	cf_fx_fmt(op, sizeof op, "%s/outside.sock", fx.root);
	cf_fx_fmt(file, sizeof file, "%s/f", fx.ws);
	cf_fx_write(file, "x");
	server_start(&out, op, "bad");
	in.where[0] = ws, in.where[1] = tmp, in.where[2] = abs;
	cr_assert(pipe(in.ready) == 0 && pipe(in.done) == 0);
	sup_start(&s, NULL);
	pid_t server = spawn(&s, child_server, &in);
	char c;
	cr_assert_eq(read(in.ready[0], &c, 1), 1);
	usleep(50000);
	int fds_before = sup_fds(s.pid);
	struct stress st = {ws, op, file, NULL};
	pid_t kids[4];
	for (int i = 0; i < 4; i++)
		kids[i] = spawn(&s, child_stress, &st);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(reap(kids[i]), 0);
	cr_expect_eq(sh->n[4], 0, "%d connects to the inside server failed", sh->n[4]);
	cr_expect_eq(sh->n[5], 0, "%d connects to the outside were not refused", sh->n[5]);
	cr_expect_eq(sh->n[6], 0, "%d chmods failed", sh->n[6]);
	cr_expect_eq(atomic_load(&out.accepts), 0);
	/* The listeners of the four are closed once they are gone (POLLHUP). */
	int fds_after = 0;
	for (int i = 0; i < 50 && (fds_after = sup_fds(s.pid)) != fds_before; i++)
		usleep(20000);
	cr_expect_eq(fds_after, fds_before, "the supervisor held %d descriptors, now %d", fds_before,
		     fds_after);
	(void)!write(in.done[1], "d", 1);
	cr_expect_eq(reap(server), 0);
	server_stop(&out);
	cf_ipc_free(&s.ipc);
}

/* ---- the other system call tables ---- */

#if defined(__x86_64__)
static long int80(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c) : "r8", "r9", "r10", "r11", "memory");
	return r;
}

static long x32(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(nr | 0x40000000L), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

static int child_int80_getpid(void *arg)
{
	(void)arg;
	return int80(20, 0, 0, 0) > 0 ? 0 : 1;
}

/* A path and a sockaddr in the low 4 GiB, where a 32-bit call can name them. */
static int child_compat(void *arg)
{
	const char *p = arg;
	bool ia32 = sh->n[7];
	char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (low == MAP_FAILED)
		return 2;
	strcpy(low, p);
	struct sockaddr_un *sa = (struct sockaddr_un *)(low + 2048);
	sa->sun_family = AF_UNIX;
	strcpy(sa->sun_path, "/nonexistent"); /* refused before it is read */
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	uint32_t *args = (uint32_t *)(low + 3072);
	args[0] = (uint32_t)s, args[1] = (uint32_t)(uintptr_t)sa, args[2] = sizeof *sa;
	sh->e[4] = (int)-x32(90, (long)(uintptr_t)low, 0600, 0); /* x32 chmod */
	if (!ia32)
		return 0;
	sh->e[0] = (int)-int80(15, (long)(uintptr_t)low, 0600, 0);	   /* i386 chmod */
	sh->e[1] = (int)-int80(362, s, (long)(uintptr_t)sa, sizeof *sa);	   /* i386 connect */
	sh->e[2] = (int)-int80(102, 3, (long)(uintptr_t)args, 0);	   /* socketcall(SYS_CONNECT) */
	sh->e[3] = (int)-int80(212, (long)(uintptr_t)low, getuid(), getgid()); /* chown32 */
	sh->e[5] = int80(20, 0, 0, 0) > 0 ? 0 : 1; /* i386 getpid is left alone */
	return 0;
}

/* The filter as seccomp runs it (bpf_run.h): the tables this kernel may not
 * let us call (ia32 emulation off) on made-up calls. */
static uint32_t run_filter(uint32_t arch, uint32_t nr, uint64_t a0, uint64_t a1)
{
	unsigned short len;
	const struct sock_filter *f = cf_ipc_filter(false, false, &len);
	struct seccomp_data d = {.nr = (int)nr, .arch = arch, .args = {a0, a1}};
	cr_assert_not_null(f);
	return bpf_run(f, len, &d).ret;
}

Test(ipc_engine, the_32_bit_tables_do_not_bypass)
{
	struct sup s;
	char out[PATH_MAX];
	const uint32_t NOTIF = SECCOMP_RET_USER_NOTIF, DENY = SECCOMP_RET_ERRNO | EPERM,
		       ALLOW = SECCOMP_RET_ALLOW;
	struct {
		uint32_t arch, nr;
		uint64_t a0, a1;
		uint32_t want;
	} cases[] = {
		{AUDIT_ARCH_X86_64, 42, 3, 0, NOTIF},
		{AUDIT_ARCH_X86_64, 90, 0, 0, NOTIF},
		{AUDIT_ARCH_X86_64, 466, 0, 0, NOTIF},
		{AUDIT_ARCH_X86_64, 16, 3, FS_IOC_SETFLAGS | (1ULL << 32), NOTIF},
		{AUDIT_ARCH_X86_64, 16, 3, 0x40046602, NOTIF},
		{AUDIT_ARCH_X86_64, 16, 3, FS_IOC_FSSETXATTR, NOTIF},
		{AUDIT_ARCH_X86_64, 16, 3, TIOCGPTPEER | (1ULL << 32), NOTIF}, /* supervisor_pty.h */
		{AUDIT_ARCH_X86_64, 0x40000000 | 514, 3, TIOCGPTPEER, ALLOW}, /* Landlock refuses */
		{AUDIT_ARCH_X86_64, 16, 3, FS_IOC_GETFLAGS, ALLOW},
		{AUDIT_ARCH_X86_64, 44, 3, 0, ALLOW}, /* sendto */
		{AUDIT_ARCH_X86_64, 0x40000000 | 42, 3, 0, DENY},
		{AUDIT_ARCH_X86_64, 0x40000000 | 514, 3, FS_IOC_SETFLAGS, DENY},
		{AUDIT_ARCH_X86_64, 0x40000000 | 514, 3, FS_IOC_GETFLAGS, ALLOW},
		{AUDIT_ARCH_X86_64, 0x40000000 | 0, 3, 0, ALLOW},
		{AUDIT_ARCH_I386, 362, 3, 0, DENY},
		{AUDIT_ARCH_I386, 361, 3, 0, DENY},
		{AUDIT_ARCH_I386, 102, 3, 0, DENY},
		{AUDIT_ARCH_I386, 102, 2, 0, DENY},
		{AUDIT_ARCH_I386, 102, 1, 0, ALLOW}, /* socketcall(SYS_SOCKET) */
		{AUDIT_ARCH_I386, 15, 0, 0, DENY},
		{AUDIT_ARCH_I386, 212, 0, 0, DENY},
		{AUDIT_ARCH_I386, 412, 0, 0, DENY},
		{AUDIT_ARCH_I386, 54, 3, 0x40046602, DENY},
		{AUDIT_ARCH_I386, 54, 3, 0x5401, ALLOW},
		{AUDIT_ARCH_I386, 20, 0, 0, ALLOW},
		{AUDIT_ARCH_AARCH64, 203, 0, 0, SECCOMP_RET_KILL_PROCESS},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		cr_expect_eq(run_filter(cases[i].arch, cases[i].nr, cases[i].a0, cases[i].a1), cases[i].want,
			     "arch %#x nr %#x a0 %llu a1 %#llx", cases[i].arch, cases[i].nr,
			     (unsigned long long)cases[i].a0, (unsigned long long)cases[i].a1);
	/* The real calls. ia32 emulation may be off (ia32_emulation=0): int 0x80
	 * then faults before seccomp sees it, so there is nothing to bypass. */
	sh->n[7] = reap(spawn(NULL, child_int80_getpid, NULL)) == 0;
	cf_fx_fmt(out, sizeof out, "%s/outside.txt", fx.root);
	cf_fx_write(out, "o");
	struct snapshot before, after;
	snap(out, &before);
	run(NULL, child_compat, out);
	cr_assert_eq(sh->e[4], ENOSYS, "control x32 chmod (x32 is off here): %s", strerror(sh->e[4]));
	if (sh->n[7]) {
		cr_assert_eq(sh->e[0], 0, "control i386 chmod: %s", strerror(sh->e[0]));
		cr_assert(chmod(out, before.st.st_mode & 07777) == 0);
		snap(out, &before);
	} else {
		cr_log_info("int 0x80 faults here (no ia32 emulation): only the made-up calls for i386");
	}
	memset(sh->e, 0, sizeof sh->e);
	sup_start(&s, NULL);
	run(&s, child_compat, out);
	snap(out, &after);
	cr_expect_eq(sh->e[4], EPERM, "x32 chmod: %s", strerror(sh->e[4]));
	if (sh->n[7]) {
		cr_expect_eq(sh->e[0], EPERM, "i386 chmod: %s", strerror(sh->e[0]));
		cr_expect_eq(sh->e[1], EPERM, "i386 connect: %s", strerror(sh->e[1]));
		cr_expect_eq(sh->e[2], EPERM, "i386 socketcall connect: %s", strerror(sh->e[2]));
		cr_expect_eq(sh->e[3], EPERM, "i386 chown32: %s", strerror(sh->e[3]));
		cr_expect_eq(sh->e[5], 0, "i386 getpid is left alone");
	}
	expect_same(out, &before, &after);
	cf_ipc_free(&s.ipc);
}
#endif

/* ---- credentials ---- */

static int child_drops_to_nobody(void *arg)
{
	const char *p = arg;
	if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
	    setresuid(65534, 65534, 65534) < 0)
		return 2;
	sh->e[0] = chmod(p, 0666) < 0 ? errno : 0;
	return 0;
}

Test(ipc_engine, a_caller_with_other_credentials_is_refused)
{
	struct sup s;
	char f[PATH_MAX];
	if (geteuid() != 0)
		cf_test_unavailable("needs root to drop to another user");
	cf_fx_fmt(f, sizeof f, "%s/nobodys", fx.ws);
	cf_fx_write(f, "n");
	cr_assert(chown(f, 65534, 65534) == 0 && chmod(f, 0600) == 0);
	run(NULL, child_drops_to_nobody, f); /* the control: nobody owns it, so may chmod it */
	cr_assert_eq(sh->e[0], 0, "control: %s", strerror(sh->e[0]));
	cr_assert(chmod(f, 0600) == 0);
	sup_start(&s, NULL);
	run(&s, child_drops_to_nobody, f);
	cr_expect_eq(sh->e[0], EACCES, "chmod by a caller that dropped to nobody: %s", strerror(sh->e[0]));
	struct stat st;
	cr_assert(stat(f, &st) == 0);
	cr_expect_eq(st.st_mode & 07777, 0600);
	cr_expect(strstr(log_text(&s), "\"reason\":\"credentials\""), "log: %s", log_text(&s));
	cf_ipc_free(&s.ipc);
}

static int child_drops_and_connects(void *arg)
{
	if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
	    setresuid(65534, 65534, 65534) < 0)
		return 2;
	sh->e[0] = try_connect(arg, NULL, 0);
	return 0;
}

/* A connect to an abstract name the policy allows, by a caller that
 * dropped to nobody: refused, as the chmod above, and logged with its
 * reason, so that the user sees why an allowed socket was refused (seed
 * 41's sup_socket.c:207, the log line removed: refused without a word). */
Test(ipc_engine, a_connect_by_a_caller_with_other_credentials_is_refused_and_logged)
{
	struct sup s;
	struct server sv;
	char name[64], want[128];
	if (geteuid() != 0)
		cf_test_unavailable("needs root to drop to another user");
	cf_fx_fmt(name, sizeof name, "@cf-creds-%d", (int)getpid());
	server_start(&sv, name, "hello");
	run(NULL, child_drops_and_connects, name); /* the control: nobody may connect to it */
	cr_assert_eq(sh->e[0], 0, "control: %s", strerror(sh->e[0]));
	sup_start(&s, (const char *[]){name, NULL});
	int before = atomic_load(&sv.accepts);
	run(&s, child_drops_and_connects, name);
	cr_expect_eq(sh->e[0], EACCES, "connect by a caller that dropped to nobody: %s",
		     strerror(sh->e[0]));
	cr_expect_eq(atomic_load(&sv.accepts), before, "the server saw the connection");
	snprintf(want, sizeof want, "\"%s\"", name);
	const char *log = log_text(&s);
	cr_expect(strstr(log, "\"ipc_denied\"") && strstr(log, want) &&
			  strstr(log, "\"reason\":\"credentials\""),
		  "log: %s", log);
	server_stop(&sv);
	cf_ipc_free(&s.ipc);
}

/* ---- an idle client does not end the supervisor ---- */

static int child_chmod(void *arg)
{
	sh->e[0] = chmod(arg, 0640) < 0 ? errno : 0;
	return 0;
}

/* While a client is connected and has said nothing yet, the supervisor's
 * loop polls with a timeout of a second; a poll that times out (0, errno
 * untouched) is a round like any other, not a failure: the supervisor still
 * serves after it. */
Test(ipc_engine, an_idle_client_does_not_end_the_supervisor)
{
	struct sup s;
	char f[PATH_MAX], where[CF_IPC_ADDR_MAX + 2];
	struct sockaddr_un sa;
	socklen_t len;
	cf_fx_fmt(f, sizeof f, "%s/f", fx.ws);
	cf_fx_write(f, "x");
	sup_start(&s, NULL);
	snprintf(where, sizeof where, "@%s", s.addr);
	addr_of(&sa, &len, where);
	int c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	cr_assert(c >= 0);
	cr_assert(connect(c, (struct sockaddr *)&sa, len) == 0, "connect: %s", strerror(errno));
	usleep(2500 * 1000); /* two timeouts of its poll */
	cr_expect_eq(kill(s.pid, 0), 0, "the supervisor ended while a client was idle");
	run(&s, child_chmod, f);
	cr_expect_eq(sh->e[0], 0, "chmod inside after the idle client: %s", strerror(sh->e[0]));
	struct stat st;
	cr_assert(stat(f, &st) == 0);
	cr_expect_eq(st.st_mode & 07777, 0640);
	close(c);
	cf_ipc_free(&s.ipc);
}

/* ---- a connect that waits does not stop the supervisor ---- */

struct stall {
	struct sockaddr_in full;
	const char *file;
};

static void *blocked_connect(void *arg)
{
	struct stall *st = arg;
	for (int i = 0; i < 8; i++) { /* more than the backlog: some of them wait */
		int s = socket(AF_INET, SOCK_STREAM, 0);
		connect(s, (struct sockaddr *)&st->full, sizeof st->full);
	}
	return NULL;
}

static int child_stall(void *arg)
{
	struct stall *st = arg;
	pthread_t t;
	pthread_create(&t, NULL, blocked_connect, st);
	usleep(200000);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	sh->e[0] = chmod(st->file, 0640) < 0 ? errno : 0;
	clock_gettime(CLOCK_MONOTONIC, &b);
	sh->e[1] = (int)((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000);
	_exit(0); /* the blocked thread goes with the process */
}

Test(ipc_engine, a_waiting_connect_does_not_stall_the_others)
{
	struct sup s;
	struct stall st;
	char f[PATH_MAX];
	cf_fx_fmt(f, sizeof f, "%s/f", fx.ws);
	cf_fx_write(f, "x");
	int l = tcp_listener(0, &st.full); /* never accepted: connects beyond it wait */
	st.file = f;
	sup_start(&s, NULL);
	run(&s, child_stall, &st);
	cr_expect_eq(sh->e[0], 0, "chmod: %s", strerror(sh->e[0]));
	cr_expect_lt(sh->e[1], 500, "chmod took %d ms while connects waited", sh->e[1]);
	close(l);
	cf_ipc_free(&s.ipc);
}

/* ---- a connect made by the supervisor behaves as the caller's own ---- */

struct semantics {
	struct sockaddr_in refused; /* bound, not listening */
	struct sockaddr_in open;    /* listening, accepted by nobody */
	struct sockaddr_in full;    /* listening with a full backlog: connects wait */
	char unix_path[PATH_MAX];   /* a Unix socket the child binds, backlog full */
};

static long ms_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

/* Each connect's errno in sh->e[0..6], the timed waits' milliseconds in
 * sh->e[10..11]. */
static int child_semantics(void *arg)
{
	struct semantics *se = arg;
	struct timeval tv = {.tv_usec = 200000};
	struct timespec t0;
	/* A refused port: ECONNREFUSED, blocking and not. */
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sh->e[0] = connect(s, (struct sockaddr *)&se->refused, sizeof se->refused) < 0 ? errno : 0;
	close(s);
	/* Non-blocking: EINPROGRESS (or at once), then it completes. */
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int r = connect(s, (struct sockaddr *)&se->open, sizeof se->open) < 0 ? errno : 0;
	sh->e[1] = r == EINPROGRESS ? 0 : r == 0 ? 0 : r;
	struct pollfd pf = {s, POLLOUT, 0};
	int err = -1;
	socklen_t el = sizeof err;
	sh->e[2] = poll(&pf, 1, 5000) == 1 && getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el) == 0 ? err : -1;
	close(s);
	/* A second connect of a connected socket: EISCONN. */
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	r = connect(s, (struct sockaddr *)&se->open, sizeof se->open);
	sh->e[3] = r == 0 && connect(s, (struct sockaddr *)&se->open, sizeof se->open) < 0 ? errno : -1;
	close(s);
	/* A blocking connect to a full backlog, with SO_SNDTIMEO: it waits
	 * the timeout and no more (EINPROGRESS). */
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sh->e[4] = connect(s, (struct sockaddr *)&se->full, sizeof se->full) < 0 ? errno : 0;
	sh->e[10] = (int)ms_since(&t0);
	close(s);
	/* A Unix socket bound inside with its backlog full: blocking with
	 * SO_SNDTIMEO waits the timeout (EAGAIN), non-blocking fails at once. */
	struct sockaddr_un ua;
	socklen_t ul;
	addr_of(&ua, &ul, se->unix_path);
	unlink(se->unix_path);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&ua, ul) != 0 || listen(l, 0) != 0)
		return 3;
	int filler[4];
	for (int i = 0; i < 4; i++) {
		filler[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		(void)!connect(filler[i], (struct sockaddr *)&ua, ul);
	}
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sh->e[5] = connect(s, (struct sockaddr *)&ua, ul) < 0 ? errno : 0;
	sh->e[11] = (int)ms_since(&t0);
	close(s);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	sh->e[6] = connect(s, (struct sockaddr *)&ua, ul) < 0 ? errno : 0;
	close(s);
	for (int i = 0; i < 4; i++)
		close(filler[i]);
	close(l);
	unlink(se->unix_path);
	return 0;
}

static void semantics_setup(struct semantics *se, int *fds)
{
	socklen_t al = sizeof se->refused;
	fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	se->refused = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	cr_assert(fds[0] >= 0 && bind(fds[0], (struct sockaddr *)&se->refused, sizeof se->refused) == 0 &&
		  getsockname(fds[0], (struct sockaddr *)&se->refused, &al) == 0);
	fds[1] = tcp_listener(64, &se->open);
	fds[2] = tcp_listener(0, &se->full);
	/* Fill the full one's queue from here (its connects are never accepted). */
	for (int i = 3; i < 6; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		(void)!connect(fds[i], (struct sockaddr *)&se->full, sizeof se->full);
	}
	usleep(50000);
	cf_fx_fmt(se->unix_path, sizeof se->unix_path, "%s/full.sock", fx.ws);
}

Test(ipc_engine, a_connect_keeps_the_callers_errors_and_timeouts)
{
	struct sup s;
	struct semantics se;
	int fds[6], plain[12];
	semantics_setup(&se, fds);
	/* The control, unfenced. */
	run(NULL, child_semantics, &se);
	memcpy(plain, sh->e, sizeof plain);
	cr_expect_eq(plain[0], ECONNREFUSED, "unfenced: %s", strerror(plain[0]));
	memset(sh->e, 0, sizeof sh->e);
	sup_start(&s, NULL);
	run(&s, child_semantics, &se);
	static const char *what[] = {"a refused port", "a non-blocking connect",
				     "its completion (SO_ERROR)", "connect of a connected socket",
				     "a full TCP backlog with SO_SNDTIMEO",
				     "a full Unix backlog with SO_SNDTIMEO", "a full Unix backlog, non-blocking"};
	for (int i = 0; i < 7; i++)
		cr_expect_eq(sh->e[i], plain[i], "%s: fenced %d (%s), unfenced %d (%s)", what[i], sh->e[i],
			     strerror(sh->e[i]), plain[i], strerror(plain[i]));
	cr_expect_eq(sh->e[3], EISCONN);
	cr_expect_eq(sh->e[6], EAGAIN);
	/* The timeout is the caller's own: about 200 ms, not forever. */
	for (int i = 10; i < 12; i++)
		cr_expect(sh->e[i] >= 150 && sh->e[i] < 3000, "%s waited %d ms (unfenced %d ms)",
			  what[i - 6], sh->e[i], plain[i]);
	for (int i = 0; i < 6; i++)
		close(fds[i]);
	cf_ipc_free(&s.ipc);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Another thread's connect while the first one waits: answered at once. */
static void *refused_later(void *arg)
{
	struct semantics *se = arg;
	struct timespec t0;
	usleep(150000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sh->e[2] = connect(s, (struct sockaddr *)&se->refused, sizeof se->refused) < 0 ? errno : 0;
	sh->e[11] = (int)ms_since(&t0);
	close(s);
	return NULL;
}

/* A blocking connect that waits (a full backlog; SO_SNDTIMEO 1 s) gets a
 * signal without SA_RESTART at 100 ms; another thread connects at 150 ms. */
static int child_interrupted(void *arg)
{
	struct semantics *se = arg;
	struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {.tv_sec = 1};
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	pthread_t t;
	if (pthread_create(&t, NULL, refused_later, se) != 0)
		return 3;
	struct itimerval it = {.it_value.tv_usec = 100000};
	setitimer(ITIMER_REAL, &it, NULL);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sh->e[0] = connect(s, (struct sockaddr *)&se->full, sizeof se->full) < 0 ? errno : 0;
	sh->e[10] = (int)ms_since(&t0);
	pthread_join(t, NULL);
	/* Again on the same socket, non-blocking: still connecting. */
	fcntl(s, F_SETFL, O_NONBLOCK);
	sh->e[1] = connect(s, (struct sockaddr *)&se->full, sizeof se->full) < 0 ? errno : 0;
	close(s);
	return 0;
}

/* Unfenced, the signal ends the wait with EINTR. Fenced, the trapped thread
 * waits killable only (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, so that no call
 * the supervisor made is made again by a restart): the connect ends as the
 * supervisor's did, by the caller's own timeout here (1 s), and then the handler
 * runs (SECURITY.md). Either way the process's other calls are answered
 * meanwhile, and the socket is left as unfenced. */
Test(ipc_engine, a_connect_interrupted_by_a_signal_leaves_all_consistent)
{
	struct sup s;
	struct semantics se;
	int fds[6], plain[12];
	semantics_setup(&se, fds);
	run(NULL, child_interrupted, &se);
	memcpy(plain, sh->e, sizeof plain);
	cr_expect_eq(plain[0], EINTR, "unfenced: %s", strerror(plain[0]));
	memset(sh->e, 0, sizeof sh->e);
	sup_start(&s, NULL);
	run(&s, child_interrupted, &se);
	cr_log_info("fenced: %s after %d ms; unfenced: %s after %d ms", strerror(sh->e[0]), sh->e[10],
		    strerror(plain[0]), plain[10]);
	cr_expect(sh->e[0] == EINTR || (sh->e[0] == EINPROGRESS && sh->e[10] >= 900),
		  "interrupted: %s after %d ms", strerror(sh->e[0]), sh->e[10]);
	cr_expect_lt(sh->e[10], 4000, "the interrupted connect took %d ms", sh->e[10]);
	cr_expect_eq(sh->e[1], plain[1], "again on the socket: fenced %s, unfenced %s", strerror(sh->e[1]),
		     strerror(plain[1]));
	cr_expect_eq(sh->e[2], ECONNREFUSED, "the other thread's connect: %s", strerror(sh->e[2]));
	/* Well before the waiting connect's end (1 s): not stalled behind it. */
	cr_expect_lt(sh->e[11], 500, "the other thread's connect took %d ms", sh->e[11]);
	for (int i = 0; i < 6; i++)
		close(fds[i]);
	cf_ipc_free(&s.ipc);
}

/* Yama's ptrace_scope, read from a file the test writes: which setups leave
 * the supervisor unable to take the descriptors of what it serves. The test
 * runs as root (CAP_SYS_PTRACE) in CI and may run as an ordinary user
 * locally: the expectation follows the capability. */
Test(ipc_engine, yama_ptrace_scope_is_judged)
{
	char f[PATH_MAX];
	cf_fx_fmt(f, sizeof f, "%s/ptrace_scope", fx.root);
	bool cap = geteuid() == 0;
	cr_expect_eq(cf_ipc_ptrace_blocked("/nonexistent/ptrace_scope", false), 0, "no Yama");
	cf_fx_write(f, "0\n");
	cr_expect_eq(cf_ipc_ptrace_blocked(f, false), 0);
	cr_expect_eq(cf_ipc_ptrace_blocked(f, true), 0);
	cf_fx_write(f, "1\n");
	cr_expect_eq(cf_ipc_ptrace_blocked(f, true), 0, "an ancestor passes scope 1");
	cr_expect_eq(cf_ipc_ptrace_blocked(f, false), cap ? 0 : 1, "self mode needs scope 0");
	cf_fx_write(f, "2\n");
	cr_expect_eq(cf_ipc_ptrace_blocked(f, true), cap ? 0 : 2, "scope 2 needs CAP_SYS_PTRACE");
	cf_fx_write(f, "3\n");
	cr_expect_eq(cf_ipc_ptrace_blocked(f, true), 3, "nothing passes scope 3");
	const char *why = ipc_words(CF_ERR(CF_ERR_IPC_PTRACE, 1));
	cr_expect(strstr(why, "read isolation is not effective: Yama's ptrace_scope") &&
			  strstr(why, "(ptrace_scope 1)"),
		  "%s", why);
}

/* ---- the supervisor's identity (issue 18) ----
 * A fenced process can read the supervisor's name in /proc/net/unix, kill
 * it, and bind the name. The child must hand its listener to nobody but the
 * supervisor its address names. */

/* An impostor on the abstract NAME: it accepts, takes whatever listener a
 * child hands it (counted in sh->n[0]), answers 0 as the supervisor would,
 * and closes it. */
struct impostor {
	char name[CF_IPC_ADDR_MAX];
	int fd;
	pthread_t t;
	atomic_int bound;
	atomic_int stop;
};

static int bind_name(const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	memcpy(sa.sun_path + 1, name, n);
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (bind(s, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) <
		    0 ||
	    listen(s, 64) < 0) {
		int e = -errno;
		close(s);
		return e;
	}
	return s;
}

static void impostor_serve_one(int ls)
{
	int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	char buf[CF_IPC_BLOB_MAX];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = {buf, sizeof buf};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			   .msg_controllen = sizeof cm.b};
	struct timeval tv = {2, 0};
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (recvmsg(c, &m, MSG_CMSG_CLOEXEC) > 0) {
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		if (h && h->cmsg_type == SCM_RIGHTS) {
			int fd;
			memcpy(&fd, CMSG_DATA(h), sizeof fd);
			atomic_fetch_add(&sh->n[0], 1);
			close(fd);
		}
		int zero = 0;
		(void)!send(c, &zero, sizeof zero, MSG_NOSIGNAL);
	}
	close(c);
}

/* Starved binders: SCHED_IDLE threads that bind the name in a loop until
 * one gets it, then serve as the impostor. */
static void *binder(void *arg)
{
	struct impostor *im = arg;
	struct sched_param sp = {0};
	(void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	while (!atomic_load(&im->stop)) {
		int s = bind_name(im->name);
		if (s < 0)
			continue;
		int expected = 0;
		if (!atomic_compare_exchange_strong(&im->bound, &expected, 1)) {
			close(s);
			break;
		}
		im->fd = s;
		while (!atomic_load(&im->stop)) {
			struct pollfd p = {s, POLLIN, 0};
			if (poll(&p, 1, 20) > 0)
				impostor_serve_one(s);
		}
		break;
	}
	return NULL;
}

static int child_enter_only(void *arg)
{
	(void)arg;
	return 0;
}

/* Enter S's fence in a child: its cf_ipc_enter result. */
static int enter_result(struct sup *s)
{
	sh->e[63] = 0;
	int st = reap(spawn(s, child_enter_only, NULL));
	return st == 0 ? 0 : st == 121 ? sh->e[63] : -1000 - st;
}

static void wait_gone(pid_t pid)
{
	for (int i = 0; i < 500 && kill(pid, 0) == 0; i++) {
		char state = 0;
		unsigned long long st = cf_proc_starttime_state(pid, &state);
		if (st == 0 || state == 'Z')
			break;
		usleep(2000);
	}
}

Test(ipc_engine, a_name_taken_over_after_the_supervisor_died_gets_no_listener)
{
	struct sup s;
	sup_start(&s, NULL);
	cr_assert_eq(enter_result(&s), 0, "the real supervisor serves");
	cr_expect_eq(s.ipc.sup_pid, s.pid, "the name names the supervisor process: %s", s.addr);
	/* While it lives, its name can not be bound. */
	cr_expect_eq(bind_name(s.addr), -EADDRINUSE);
	cr_assert(kill(s.pid, SIGKILL) == 0);
	wait_gone(s.pid);
	int ls = -1;
	for (int i = 0; i < 200 && ls < 0; i++, usleep(5000))
		ls = bind_name(s.addr);
	cr_assert(ls >= 0, "the name was not freed: %s", strerror(-ls));
	/* The child tries to enter; the impostor takes what it is handed. */
	pid_t pid = spawn(&s, child_enter_only, NULL);
	struct pollfd p = {ls, POLLIN, 0};
	if (poll(&p, 1, 3000) > 0)
		impostor_serve_one(ls);
	int st = reap(pid);
	cr_expect_eq(atomic_load(&sh->n[0]), 0, "the impostor received %d listeners",
		     atomic_load(&sh->n[0]));
	cr_expect_eq(st, 121, "the child went on (status %d)", st);
	cr_expect_eq(sh->e[63], CF_ERR(CF_ERR_IPC_ENDED, 0), "%s", ipc_words(sh->e[63]));
	cr_expect(strstr(ipc_words(CF_ERR(CF_ERR_IPC_ENDED, 0)), "the IPC supervisor has ended"), "%s",
		  ipc_words(CF_ERR(CF_ERR_IPC_ENDED, 0)));
	close(ls);
	cf_ipc_free(&s.ipc);
}

/* The attack as it was found: many starved threads bind the name while the
 * supervisor is killed; a child enters after each kill. Many rounds. */
Test(ipc_engine, the_takeover_race_never_gets_a_listener, .timeout = 240 * CF_TIMEOUT_SCALE)
{
	int rounds = getenv("CF_TAKEOVER_ROUNDS") ? atoi(getenv("CF_TAKEOVER_ROUNDS")) : 300;
	int taken = 0, refused = 0;
	for (int r = 0; r < rounds; r++) {
		struct sup s;
		sup_start(&s, NULL);
		struct impostor im = {.fd = -1};
		snprintf(im.name, sizeof im.name, "%s", s.addr);
		pthread_t t[6];
		for (int i = 0; i < 6; i++)
			cr_assert(pthread_create(&t[i], NULL, binder, &im) == 0);
		if (r % 2)
			usleep(500); /* let the binders start spinning */
		cr_assert(kill(s.pid, SIGKILL) == 0);
		wait_gone(s.pid);
		for (int i = 0; i < 100 && !atomic_load(&im.bound); i++)
			usleep(1000);
		taken += atomic_load(&im.bound);
		int rc = enter_result(&s);
		refused += rc == CF_ERR(CF_ERR_IPC_ENDED, 0);
		cr_expect(rc == CF_ERR(CF_ERR_IPC_ENDED, 0), "round %d: the child's enter: %d (%s)", r, rc,
			  rc < 0 && rc > -1000 ? ipc_words(rc) : "went on");
		atomic_store(&im.stop, 1);
		for (int i = 0; i < 6; i++)
			pthread_join(t[i], NULL);
		if (im.fd >= 0)
			close(im.fd);
		cf_ipc_free(&s.ipc);
		if (atomic_load(&sh->n[0]))
			break;
	}
	cr_assert_eq(atomic_load(&sh->n[0]), 0, "an impostor received a listener");
	cr_expect_gt(taken, rounds / 2, "the name was taken over in %d of %d rounds only", taken, rounds);
	cr_log_info("takeover: name taken in %d of %d rounds, every child refused (%d)", taken, rounds,
		    refused);
}

Test(ipc_engine, a_supervisor_address_without_an_identity_is_refused)
{
	struct sup s;
	sup_start(&s, NULL);
	/* The real supervisor's name, its identity replaced: a name of the
	 * old form, then the identity of another live process (ours). */
	char other[CF_IPC_ADDR_MAX];
	cr_assert_eq(cf_ipc_set_addr(&s.ipc, "credfence-sup-deadbeef"), 0);
	int rc = enter_result(&s);
	cr_expect_eq(rc, CF_ERR(CF_ERR_IPC_IDENTITY, EINVAL), "%d %s", rc, ipc_words(rc));
	int ls = bind_name("credfence-sup-fake");
	cr_assert(ls >= 0);
	snprintf(other, sizeof other, "credfence-sup-%d-%llu-fake", (int)getppid(),
		 cf_proc_starttime(getppid()));
	/* A name bound by us, claiming our parent: the peer's pid is ours. */
	int ls2 = bind_name(other);
	cr_assert(ls2 >= 0);
	cr_assert_eq(cf_ipc_set_addr(&s.ipc, other), 0);
	pid_t pid = spawn(&s, child_enter_only, NULL);
	struct pollfd p = {ls2, POLLIN, 0};
	if (poll(&p, 1, 3000) > 0)
		impostor_serve_one(ls2);
	int st = reap(pid);
	cr_expect_eq(st, 121);
	cr_expect_eq(sh->e[63], CF_ERR(CF_ERR_IPC_IDENTITY, EPERM), "%s", ipc_words(sh->e[63]));
	cr_expect_eq(atomic_load(&sh->n[0]), 0, "the impostor received a listener");
	cr_expect(strstr(ipc_words(CF_ERR(CF_ERR_IPC_IDENTITY, EPERM)),
			 "the IPC supervisor's identity can not be established"), "%s",
		  ipc_words(CF_ERR(CF_ERR_IPC_IDENTITY, EPERM)));
	close(ls);
	close(ls2);
	cf_ipc_free(&s.ipc);
}

/* A start time of 0 is none: /proc gives 0 for a process it can not
 * name, so an address that says 0 names no identity to check, even with
 * the real supervisor's pid and random part in it, and is refused as the
 * old form is (seed 41's ipc.c:625, the 0 made 1: the address was taken
 * and the child refused for another reason). */
Test(ipc_engine, a_supervisor_address_with_start_time_0_has_no_identity)
{
	struct sup s;
	sup_start(&s, NULL);
	int pid;
	unsigned long long start;
	char rnd[24], forged[CF_IPC_ADDR_MAX];
	cr_assert_eq(sscanf(s.addr, "credfence-sup-%d-%llu-%23s", &pid, &start, rnd), 3, "%s",
		     s.addr);
	snprintf(forged, sizeof forged, "credfence-sup-%d-0-%s", pid, rnd);
	cr_assert_eq(cf_ipc_set_addr(&s.ipc, forged), 0);
	int rc = enter_result(&s);
	cr_expect_eq(rc, CF_ERR(CF_ERR_IPC_IDENTITY, EINVAL), "%s: %d %s", forged, rc, ipc_words(rc));
	cf_ipc_free(&s.ipc);
}

/* ---- the metadata ioctls, by the one table (supervisor_wire.h) ---- */

#define IOC_ROW(name, cmd, what) {#name, cmd, #what[0] == 'T'},
static const struct {
	const char *name;
	uint32_t cmd;
	bool trap;
} ioc_rows[] = {CF_META_IOCTLS(IOC_ROW)};
#define N_IOC_ROWS (sizeof ioc_rows / sizeof *ioc_rows)

Test(ipc_engine, every_metadata_ioctl_of_the_table_is_trapped_or_refused)
{
	const uint32_t NOTIF = SECCOMP_RET_USER_NOTIF, DENY = SECCOMP_RET_ERRNO | EPERM;
	cr_assert_geq(N_IOC_ROWS, 7);
	for (size_t i = 0; i < N_IOC_ROWS; i++) {
		uint64_t cmd = ioc_rows[i].cmd;
		cr_expect_eq(run_filter(AUDIT_ARCH_X86_64, 16, 3, cmd), ioc_rows[i].trap ? NOTIF : DENY,
			     "%s natively", ioc_rows[i].name);
		cr_expect_eq(run_filter(AUDIT_ARCH_X86_64, 16, 3, cmd | (7ULL << 32)),
			     ioc_rows[i].trap ? NOTIF : DENY, "%s with high bits", ioc_rows[i].name);
		cr_expect_eq(run_filter(AUDIT_ARCH_X86_64, 0x40000000 | 514, 3, cmd), DENY, "%s x32",
			     ioc_rows[i].name);
		cr_expect_eq(run_filter(AUDIT_ARCH_X86_64, 0x40000000 | 16, 3, cmd), DENY, "%s x32 (16)",
			     ioc_rows[i].name);
		cr_expect_eq(run_filter(AUDIT_ARCH_I386, 54, 3, cmd), DENY, "%s i386", ioc_rows[i].name);
	}
	/* What was found open (issue 18), by the kernel's own numbers. */
	cr_expect_eq(run_filter(AUDIT_ARCH_X86_64, 16, 3, FS_IOC_SETVERSION), NOTIF);
	cr_expect_eq(run_filter(AUDIT_ARCH_X86_64, 16, 3, FS_IOC_SET_ENCRYPTION_POLICY), DENY);
	cr_expect_eq(run_filter(AUDIT_ARCH_X86_64, 16, 3, FS_IOC_GETVERSION), SECCOMP_RET_ALLOW);
	cr_expect_eq(run_filter(AUDIT_ARCH_X86_64, 16, 3, FS_IOC_GETFSLABEL), SECCOMP_RET_ALLOW);
}

/* Each TRAP row on PATH with a copy of an int (or struct fsxattr) the
 * kernel accepts; the DENY rows whose kernel answer to a bogus argument is
 * harmless. errnos into sh->e[row]. */
static int child_ioctls(void *arg)
{
	const char *p = arg;
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 2;
	for (size_t i = 0; i < N_IOC_ROWS; i++) {
		union {
			int v;
			struct fsxattr fsx;
			unsigned char bogus[512];
		} a;
		memset(&a, 0, sizeof a);
		uint32_t cmd = ioc_rows[i].cmd;
		if (cmd == CF_IOC_FSSETXATTR) {
			if (ioctl(fd, FS_IOC_FSGETXATTR, &a.fsx) < 0)
				return 3;
			a.fsx.fsx_xflags ^= FS_XFLAG_NODUMP;
		} else if (cmd == 0x40086602U || cmd == 0x40046602U) {
			if (ioctl(fd, FS_IOC_GETFLAGS, &a.v) < 0)
				return 4;
			a.v ^= FS_NODUMP_FL;
		} else if (ioc_rows[i].trap) {
			a.v = 4242; /* a generation */
		} else if (strstr(ioc_rows[i].name, "SETFSLABEL") || strstr(ioc_rows[i].name, "SETFSUUID") ||
			   strstr(ioc_rows[i].name, "MIGRATE")) {
			sh->e[i] = -1; /* not called: the kernel would act on the filesystem */
			continue;
		} else {
			memset(a.bogus, 0xff, sizeof a.bogus); /* an invalid version or size */
		}
		sh->e[i] = ioctl(fd, (unsigned long)cmd, &a) < 0 ? errno : 0;
	}
	close(fd);
	return 0;
}

static unsigned generation(const char *p)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	unsigned g = 0;
	cr_assert(fd >= 0);
	cr_assert(ioctl(fd, FS_IOC_GETVERSION, &g) == 0, "FS_IOC_GETVERSION: %s", strerror(errno));
	close(fd);
	return g;
}

Test(ipc_engine, metadata_ioctls_outside_are_refused_and_inside_work)
{
	struct sup s;
	char outside[PATH_MAX], control[PATH_MAX], inside[PATH_MAX];
	int want[N_IOC_ROWS];
	cf_fx_fmt(outside, sizeof outside, "%s/dotfile", fx.home);
	cf_fx_fmt(control, sizeof control, "%s/control", fx.root);
	cf_fx_fmt(inside, sizeof inside, "%s/built", fx.ws);
	cf_fx_write(outside, "[user]\n");
	cf_fx_write(control, "c\n");
	cf_fx_write(inside, "i\n");
	/* The control: unfenced, what each row does here. */
	memset(sh->e, 0, sizeof sh->e);
	run(NULL, child_ioctls, control);
	memcpy(want, sh->e, sizeof want);
	for (size_t i = 0; i < N_IOC_ROWS; i++)
		cr_log_info("control %s: %s", ioc_rows[i].name, want[i] < 0 ? "not called" : strerror(want[i]));
	if (want[3] != 0) /* FS_IOC_SETVERSION */
		cf_test_unavailable("FS_IOC_SETVERSION does not work on this filesystem (%s)",
				    strerror(want[3]));
	cr_assert_eq(generation(control), 4242u, "the control changed the generation");
	sup_start(&s, NULL);
	struct snapshot before, after;
	unsigned gen = generation(outside);
	snap(outside, &before);
	memset(sh->e, 0, sizeof sh->e);
	run(&s, child_ioctls, outside);
	snap(outside, &after);
	for (size_t i = 0; i < N_IOC_ROWS; i++) {
		if (want[i] < 0)
			continue;
		int expect = ioc_rows[i].trap ? EACCES : EPERM;
		cr_expect_eq(sh->e[i], expect, "outside %s: %s (control: %s)", ioc_rows[i].name,
			     strerror(sh->e[i]), strerror(want[i]));
	}
	expect_same(outside, &before, &after);
	cr_expect_eq(generation(outside), gen, "the generation of a file outside changed");
	/* Inside: a TRAP row does what it did unfenced; a DENY row is refused. */
	memset(sh->e, 0, sizeof sh->e);
	run(&s, child_ioctls, inside);
	for (size_t i = 0; i < N_IOC_ROWS; i++) {
		if (want[i] < 0)
			continue;
		cr_expect_eq(sh->e[i], ioc_rows[i].trap ? want[i] : EPERM, "inside %s: %s (control: %s)",
			     ioc_rows[i].name, strerror(sh->e[i]), strerror(want[i]));
	}
	cr_expect_eq(generation(inside), 4242u, "FS_IOC_SETVERSION did not work inside");
	const char *lg = log_text(&s);
	cr_expect(strstr(lg, "\"call\":\"ioctl\"") && strstr(lg, outside), "log: %s", lg);
	cf_ipc_free(&s.ipc);
}

/* An address naming a live process's own listener, with that process's own
 * pid and start time (an environment a harness was steered to hand a
 * child): the identity checks pass, but the process is no ancestor of the
 * child, as every way in's supervisor is. */
Test(ipc_engine, a_supervisor_that_is_no_ancestor_is_refused)
{
	struct sup s;
	char name[CF_IPC_ADDR_MAX];
	int ready[2];
	sup_start(&s, NULL);
	cr_assert(pipe(ready) == 0);
	pid_t imp = fork();
	cr_assert(imp >= 0);
	if (imp == 0) {
		snprintf(name, sizeof name, "credfence-sup-%d-%llu-0ff1ce", (int)getpid(),
			 cf_proc_self_starttime());
		int ls = bind_name(name);
		(void)!write(ready[1], name, sizeof name);
		struct pollfd p = {ls, POLLIN, 0};
		if (ls >= 0 && poll(&p, 1, 3000) > 0)
			impostor_serve_one(ls);
		_exit(0);
	}
	cr_assert_eq(read(ready[0], name, sizeof name), (ssize_t)sizeof name);
	cr_assert_eq(cf_ipc_set_addr(&s.ipc, name), 0);
	s.ipc.sup_beside = false; /* as in every way in */
	cr_assert_eq(s.ipc.sup_pid, imp);
	int rc = enter_result(&s);
	cr_expect_eq(rc, CF_ERR(CF_ERR_IPC_IDENTITY, EPERM), "%d %s", rc, rc < 0 && rc > -1000 ? ipc_words(rc) : "");
	cr_expect_eq(atomic_load(&sh->n[0]), 0, "the impostor received a listener");
	kill(imp, SIGKILL);
	reap(imp);
	close(ready[0]);
	close(ready[1]);
	cf_ipc_free(&s.ipc);
}

/* ---- the blob's records at their bound (sup_denied.h) ---- */

#include <sys/resource.h>

#include "policy.h"
#include "notify/sup_denied.h"

/* The records of the denied secrets and of the write protection's scope
 * take the blob up to CF_IPC_BLOB_MAX less 4 KiB, the rest being the other
 * records' (sup_denied.h): a record that ends exactly there is kept, one
 * that ends a byte past it is left out (its denial is then not logged),
 * for the 'd' records and for the others alike. */
Test(ipc_engine, the_blob_records_stop_at_their_bound_byte_for_byte)
{
	const size_t bound = CF_IPC_BLOB_MAX - 4096;
	const char *cwd = "/work/project";
	struct cf_policy pol = {0};
	struct cf_denied d = {.path = "/home/u/.ssh", .holds = "SSH keys", .why = "default"};
	size_t rec = strlen(cwd) + 2, drec = strlen(d.path) + strlen(d.holds) + 3;
	for (size_t past = 0; past <= 1; past++) {
		char *blob = NULL;
		size_t len = bound - rec + past;
		cr_assert_eq(cf_sup_protect_blob(&blob, &len, &pol, cwd, NULL), 0);
		cr_expect_eq(len, past ? bound - rec + past : bound,
			     "a cwd record ending %zu byte(s) past the bound: the blob is %zu", past,
			     len);
		free(blob);
		blob = NULL;
		len = bound - drec + past;
		cr_assert_eq(cf_sup_denied_blob(&blob, &len, &d, 1), 0);
		cr_expect_eq(len, past ? bound - drec + past : bound,
			     "a secret's record ending %zu byte(s) past the bound: the blob is %zu",
			     past, len);
		free(blob);
	}
}

/* ---- how the supervisor starts ---- */

static pid_t pid_of_addr(const char *addr)
{
	int pid = 0;
	cr_assert_eq(sscanf(addr, "credfence-sup-%d-", &pid), 1, "%s", addr);
	return (pid_t)pid;
}

/* The "SigBlk:" hex of PID's status, or ~0 when it can not be read. */
static unsigned long long sig_blocked(pid_t pid)
{
	char path[64], line[256];
	unsigned long long m = ~0ULL;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "SigBlk: %llx", &m) == 1)
			break;
	if (f)
		fclose(f);
	return m;
}

/* Whatever the caller blocked (a harness thread that blocks every signal
 * around its fork, as runtimes do), the supervisor blocks none: else a
 * SIGTERM to it would wait forever. */
Test(ipc_engine, the_supervisor_blocks_no_signal_of_its_caller)
{
	char addr[CF_IPC_ADDR_MAX];
	sigset_t all, was;
	sigfillset(&all);
	cr_assert_eq(pthread_sigmask(SIG_SETMASK, &all, &was), 0);
	int r = cf_supervisor_start(getpid(), -1, addr);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	cr_assert_eq(r, 0, "cf_supervisor_start: %s", strerror(-r));
	pid_t pid = pid_of_addr(addr);
	/* It names itself before it sets its mask: wait for that. */
	unsigned long long m = ~0ULL;
	for (int i = 0; i < 150 && (m = sig_blocked(pid)) != 0; i++)
		usleep(20000);
	cr_expect_eq(m, 0, "the supervisor %d blocks %llx", (int)pid, m);
}

/* PID has ended (gone, or a zombie not reaped yet), waiting up to 3 s. */
static bool sup_ended(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 150; i++) {
		char st[512] = "";
		FILE *f = fopen(path, "r");
		if (!f)
			return true;
		size_t n = fread(st, 1, sizeof st - 1, f);
		fclose(f);
		st[n] = '\0';
		const char *p = strrchr(st, ')');
		if (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
			return true;
		usleep(20000);
	}
	return false;
}

/* A supervisor ends with its keeper, also one started out of descriptors:
 * with the copy of its listening socket the last descriptor to be had, it
 * can not keep its keeper's pidfd, would never see the keeper end, and
 * must not serve at all. The keeper here is a forked child with FREE
 * descriptors free (3: the pidfd and a pipe; in the supervisor, the
 * socket, then the copy in the slot of the pipe's end given back; 4: one
 * for the pidfd's copy too); it reports the address and ends. */
static pid_t sup_with_free(int free_slots)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t k = fork();
	cr_assert(k >= 0);
	if (k == 0) {
		char addr[CF_IPC_ADDR_MAX] = "";
		int mine[1024], n = 0, fd;
		close(p[0]);
		while (n < 1024 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
			mine[n++] = fd;
		if (n == 1024 || n < free_slots)
			_exit(2);
		for (int i = 1; i <= free_slots; i++)
			close(mine[n - i]);
		int r = cf_supervisor_start(getpid(), -1, addr);
		(void)!write(p[1], addr, sizeof addr);
		_exit(r ? 1 : 0);
	}
	close(p[1]);
	char addr[CF_IPC_ADDR_MAX] = "";
	ssize_t got = read(p[0], addr, sizeof addr);
	close(p[0]);
	int st;
	cr_assert_eq(waitpid(k, &st, 0), k);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the keeper could not start it (%d)", st);
	cr_assert(got == (ssize_t)sizeof addr && addr[0], "no address");
	return pid_of_addr(addr);
}

Test(ipc_engine, a_supervisor_out_of_descriptors_does_not_outlive_its_keeper)
{
	struct rlimit lim;
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &lim), 0);
	if (lim.rlim_cur > 1024) {
		lim.rlim_cur = 1024;
		cr_assert_eq(setrlimit(RLIMIT_NOFILE, &lim), 0);
	}
	pid_t control = sup_with_free(4);
	cr_expect(sup_ended(control), "with 4 free, the supervisor %d outlived its keeper",
		  (int)control);
	pid_t pid = sup_with_free(3);
	bool ended = sup_ended(pid);
	if (!ended)
		kill(pid, SIGKILL);
	cr_expect(ended, "with 3 free, the supervisor %d outlived its keeper", (int)pid);
}
