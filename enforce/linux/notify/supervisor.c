/* The supervisor of the IPC and metadata fence: a process outside every fence
 * that receives the seccomp notifications of fenced processes and decides
 * them. This file starts it (cf_supervisor_start, cf_supervisor_start_above)
 * and holds the waiter of the second; its parts do the rest:
 *   sup_serve.c     the main thread's loop, dispatch, and the worker pool
 *   sup_handover.c  a fenced child's listener and the lists of its fence
 *   sup_caller.c    the caller's memory, descriptors and paths
 *   sup_socket.c    bind records and the connect judgement
 *   sup_meta.c      the metadata judgement
 *   sup_dgram.c     the fenced tree's Unix datagram sockets (a network namespace)
 *   supervisor_pty.c  a pty's peer, given to its caller
 * Their state is one struct sup (sup_state.h), made as the supervisor starts.
 *
 * A decision is never made on the caller's memory and then left to the kernel
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE): the arguments are copied once, the copy
 * is judged, and the call is made here, on a descriptor taken from the caller
 * (pidfd_getfd) or on a file pinned with O_PATH, so that what was judged is
 * what is done. Only bind() is continued: it is recorded, and the record
 * allows nothing by itself (sup_socket.c). */
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mountns/harness_guard.h"
#include "proc.h"
#include "sup_caller.h"
#include "sup_serve.h"
#include "sup_state.h"
#include "sys.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* File-scope and mutable, on purpose: WITHOUT_ROOT_CAPS, END_FN and END_ARG
 * are set through the public calls below before a start (whose signatures
 * carry no state) and read once in the process started; FWD_PID is read by
 * the waiter's signal handler. The supervisor's own state is struct sup. */

/* cf_ipc_serve_without_root_caps(): read in the supervisor as it starts. */
static bool without_root_caps;

void cf_ipc_serve_without_root_caps(void)
{
	without_root_caps = true;
}

/* ---- the start ---- */

/* Close every descriptor but KEEP (sorted, >= 3). */
static void close_others(const int *keep, size_t n)
{
	unsigned from = 3;
	for (size_t i = 0; i <= n; i++) {
		unsigned to = i < n ? (unsigned)keep[i] : ~0U;
		if (to > from && cf_sys3(SYS_close_range, from, to - 1, 0) < 0) {
			for (unsigned fd = from; fd < to && fd < 65536; fd++)
				close((int)fd);
		}
		from = i < n ? to + 1 : from;
	}
}

/* Stderr as the supervisor starts (above mode: the terminal credfence was
 * started from), for the refusals of the harness's children that the user
 * must see (sup_handover.c): opened again where it can be, as a file
 * description of its own that does not block (a terminal stopped with ^S
 * must not stop the supervisor), else a copy. -1 without one. */
static int user_terminal(void)
{
	int fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
	else if (fd < 3) {
		int to = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		close(fd);
		fd = to;
	}
	return fd;
}

static void become_supervisor(int ls, int keeper, int log_fd, int status_fd, pid_t keeper_pid,
			      int waiter)
{
	struct sigaction sa = {.sa_handler = SIG_DFL};
	sigset_t none;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL); /* the caller's handlers are not ours */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	if (chdir("/") < 0)
		_exit(1);
	/* Out of the way of stdio first: the caller may have had 0-2 closed. */
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	int sfd = -1;
	if (status_fd >= 0) {
		sigprocmask(SIG_BLOCK, &chld, NULL);
		if ((sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
			_exit(1);
	}
	int fds[7] = {fcntl(ls, F_DUPFD_CLOEXEC, 3), fcntl(keeper, F_DUPFD_CLOEXEC, 3),
		      log_fd >= 0 ? fcntl(log_fd, F_DUPFD_CLOEXEC, 3) : -1,
		      status_fd >= 0 ? fcntl(status_fd, F_DUPFD_CLOEXEC, 3) : -1,
		      sfd >= 0 ? fcntl(sfd, F_DUPFD_CLOEXEC, 3) : -1,
		      waiter >= 0 ? fcntl(waiter, F_DUPFD_CLOEXEC, 3) : -1,
		      status_fd >= 0 ? user_terminal() : -1};
	if (fds[0] < 0 || fds[1] < 0 || (status_fd >= 0 && (fds[3] < 0 || fds[4] < 0)))
		_exit(1);
	int keep[7], nk = 0;
	for (int i = 0; i < 7; i++)
		if (fds[i] >= 0)
			keep[nk++] = fds[i];
	for (int i = 0; i < nk; i++)
		for (int j = i + 1; j < nk; j++)
			if (keep[j] < keep[i]) {
				int x = keep[i];
				keep[i] = keep[j];
				keep[j] = x;
			}
	for (int fd = 0; fd < 3; fd++)
		close(fd);
	close_others(keep, (size_t)nk);
	int null = open("/dev/null", O_RDWR);
	if (null != 0 || dup2(0, 1) != 1 || dup2(0, 2) != 2)
		_exit(1);
	struct seccomp_notif_sizes sz;
	if (cf_sys3(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0 || sz.seccomp_notif > 512 ||
	    sz.seccomp_notif_resp > 256)
		_exit(1); /* notification() and cf_sup_respond() hold them on the stack */
	/* The state lives as long as the process; the heap keeps the blob
	 * buffer off the stack of whatever thread forked us. */
	struct sup *sup = calloc(1, sizeof *sup);
	if (!sup || pthread_mutex_init(&sup->lock, NULL) != 0 || pthread_cond_init(&sup->work, NULL) != 0)
		_exit(1);
	sup->diag_fd = -1;
	sup->log_fd = fds[2];
	sup->user_err = fds[6];
	sup->ns_fds[0] = sup->ns_fds[1] = sup->ns_fds[2] = -1;
	sup->status_fd = fds[3];
	sup->uid = geteuid();
	const char *t = getenv("CF_TEST_NO_RECEIVERS");
	sup->poll_only = t && strcmp(t, "1") == 0;
	char why[256];
	if (without_root_caps && sup->uid == 0 && cf_guard_drop_root_caps(why, sizeof why) < 0)
		_exit(1);
	if (cf_sup_read_creds("/proc/self/status", NULL, sup->own_creds, sizeof sup->own_creds) < 0)
		_exit(1);
	cf_sup_serve(sup, fds[0], fds[1], fds[4], keeper_pid, fds[5]);
}

/* A fresh abstract listening socket; its name (no leading NUL) in NAME.
 * Called in the supervisor process itself: the name carries its pid and
 * start time, and listen() here makes it the socket's SO_PEERCRED, which
 * each child checks against them (supervisor.h). */
static int listening_socket(char name[CF_IPC_ADDR_MAX])
{
	unsigned char rnd[8];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	unsigned long long start = cf_proc_self_starttime();
	if (!start)
		return -ESRCH; /* no /proc to name ourselves by */
	if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
		return -EIO;
	int k = snprintf(name, CF_IPC_ADDR_MAX, "credfence-sup-%d-%llu-", (int)getpid(), start);
	for (size_t i = 0; i < sizeof rnd; i++)
		k += snprintf(name + k, CF_IPC_ADDR_MAX - (size_t)k, "%02x", rnd[i]);
	memcpy(sa.sun_path + 1, name, (size_t)k);
	int ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (ls < 0)
		return -errno;
	if (bind(ls, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + k)) <
		    0 ||
	    listen(ls, 128) < 0) {
		int e = -errno;
		close(ls);
		return e;
	}
	return ls;
}

int cf_supervisor_start(pid_t keeper, int log_fd, char addr[CF_IPC_ADDR_MAX])
{
	char name[CF_IPC_ADDR_MAX];
	int p[2];
	int kp = (int)cf_sys2(SYS_pidfd_open, keeper, 0);
	if (kp < 0)
		return kp;
	if (pipe2(p, O_CLOEXEC) < 0) {
		int e = -errno;
		close(kp);
		return e;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		pid_t sup = fork();
		if (sup != 0)
			_exit(sup < 0 ? 1 : 0); /* the supervisor is nobody's child */
		/* The supervisor makes its own socket (its pid and start time are
		 * the name's) and reports the name, or -errno, to the caller. */
		int ls = listening_socket(name);
		int r = ls < 0 ? ls : 0;
		if (write(p[1], &r, sizeof r) != sizeof r || ls < 0 ||
		    write(p[1], name, CF_IPC_ADDR_MAX) != CF_IPC_ADDR_MAX)
			_exit(1);
		close(p[1]);
		become_supervisor(ls, kp, log_fd, -1, 0, -1);
		_exit(1);
	}
	int e = pid < 0 ? -errno : 0;
	close(p[1]);
	close(kp);
	if (pid < 0) {
		close(p[0]);
		return e;
	}
	int st = 0, r = -EAGAIN;
	pid_t w;
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (w == pid && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		close(p[0]);
		return -EAGAIN;
	}
	ssize_t n;
	while ((n = read(p[0], &r, sizeof r)) < 0 && errno == EINTR)
		;
	if (n != sizeof r)
		r = -EAGAIN;
	if (r == 0) {
		while ((n = read(p[0], name, CF_IPC_ADDR_MAX)) < 0 && errno == EINTR)
			;
		if (n != CF_IPC_ADDR_MAX || !memchr(name, '\0', CF_IPC_ADDR_MAX))
			r = -EAGAIN;
	}
	close(p[0]);
	if (r == 0)
		memcpy(addr, name, strlen(name) + 1);
	return r;
}

/* The waiter: what the caller's process becomes. It answers for the keeper
 * (its grandchild) to whoever waits for it: the same exit status, or death
 * by the same signal. Signals sent to it are passed on; the terminal's own
 * (SIGINT, SIGQUIT) reach the keeper directly, in the same process group. */
static volatile sig_atomic_t fwd_pid;

static void forward(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	/* SIGINT and SIGQUIT from the terminal reached the keeper already (same
	 * process group): pass on only those a process sent. */
	if ((sig == SIGINT || sig == SIGQUIT) && si && si->si_code > 0)
		return;
	if (fwd_pid > 0)
		kill((pid_t)fwd_pid, sig);
}

static void (*end_fn)(const char *);
static const char *end_arg;

void cf_supervisor_at_end(void (*fn)(const char *), const char *arg)
{
	end_fn = fn;
	end_arg = arg;
}

static void at_end(void)
{
	if (end_fn)
		end_fn(end_arg);
}

static _Noreturn void wait_for_keeper(int rd)
{
	static const int pass[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH, SIGINT, SIGQUIT};
	struct sigaction sa = {.sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof pass / sizeof *pass; i++)
		sigaction(pass[i], &sa, NULL);
	sa.sa_flags = 0;
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	/* Hold nothing of the command's: a pipe's writer must see its reader go
	 * when the command closes it, not when we exit. Stderr stays, for the one
	 * line below. */
	int null = rd >= 3 ? open("/dev/null", O_RDWR | O_CLOEXEC) : -1;
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (null > 2)
			close(null);
		int keep[1] = {rd};
		close_others(keep, 1);
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int pid = 0, msg[2];
	ssize_t n;
	while ((n = read(rd, &pid, sizeof pid)) < 0 && errno == EINTR)
		;
	/* The keeper's pidfd, should the supervisor die first: the keeper is
	 * alive now, or a zombie its parent (the supervisor) has not reaped, as
	 * it reaps it only to report its end, below. */
	int keeper = -1;
	if (n == sizeof pid) {
		fwd_pid = pid;
		keeper = (int)cf_sys2(SYS_pidfd_open, pid, 0);
	}
	while ((n = read(rd, msg, sizeof msg)) < 0 && errno == EINTR)
		;
	if (n != sizeof msg || msg[0] < 0) {
		/* The supervisor died first (a fenced process of the user may kill
		 * it). The command goes on: wait for it, as its caller expects
		 * (a harness keeps the terminal), and keep its temporary directory
		 * until then; its exit status is lost with the supervisor. */
		static const char e[] = "credfence: the IPC supervisor ended before the command; the "
					"command goes on, its Unix connects and metadata changes now "
					"fail, and its exit status will not be known\n";
		(void)!write(2, e, sizeof e - 1);
		struct pollfd p = {keeper, POLLIN, 0};
		while (keeper >= 0 && poll(&p, 1, -1) < 0 && errno == EINTR)
			;
		at_end();
		_exit(125);
	}
	at_end();
	if (msg[0] == CLD_EXITED)
		_exit(msg[1]);
	/* Killed: die of the same signal, without a core of our own. */
	struct rlimit none_core = {0, 0};
	setrlimit(RLIMIT_CORE, &none_core);
	sa.sa_handler = SIG_DFL;
	sigaction(msg[1], &sa, NULL);
	kill(getpid(), msg[1]);
	_exit(128 + msg[1]);
}

int cf_supervisor_start_above(int log_fd, char addr[CF_IPC_ADDR_MAX])
{
	char name[CF_IPC_ADDR_MAX];
	int st[2];
	/* Whether /proc names this process (the supervisor names itself by its
	 * start time), asked here where a failure can still be answered. */
	if (!cf_proc_self_starttime())
		return -ESRCH;
	if (pipe2(st, O_CLOEXEC) < 0)
		return -errno;
	pid_t sup = fork();
	if (sup < 0) {
		int e = -errno;
		close(st[0]);
		close(st[1]);
		return e;
	}
	if (sup > 0) {
		close(st[1]);
		wait_for_keeper(st[0]);
	}
	/* The supervisor: every process it will serve descends from it (Yama's
	 * ptrace_scope 1 lets a process take descriptors only from its
	 * descendants), and orphans come back to it. Its socket is its own
	 * (listening_socket). */
	close(st[0]);
	int ls = listening_socket(name);
	if (ls < 0) {
		char line[160];
		int n = snprintf(line, sizeof line,
				 "credfence: the IPC supervisor could not listen on its socket (%s). "
				 "Nothing was run.\n", strerror(-ls));
		(void)!write(2, line, (size_t)n);
		_exit(125);
	}
	int waiter = (int)cf_sys2(SYS_pidfd_open, getppid(), 0);
	if (waiter < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		_exit(125);
	pid_t keeper = fork();
	if (keeper < 0)
		_exit(125);
	if (keeper == 0) {
		/* The keeper: goes on as the caller, in the caller's process group. */
		close(ls);
		close(st[1]);
		close(waiter);
		memcpy(addr, name, strlen(name) + 1);
		return 0;
	}
	int pid = (int)keeper;
	(void)!write(st[1], &pid, sizeof pid);
	int kp = (int)cf_sys2(SYS_pidfd_open, keeper, 0);
	if (kp < 0)
		_exit(125);
	become_supervisor(ls, kp, log_fd, st[1], keeper, waiter);
	_exit(1);
}
