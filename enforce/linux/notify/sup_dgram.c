/* The fenced tree's Unix datagram sockets: see sup_dgram.h.
 *
 * The helper is a child of the supervisor in a user and network namespace
 * of its own, started at the first such call (nothing is started where
 * Landlock's scope holds). It makes each socket it is asked for and hands
 * it back over a seqpacket pair (SCM_RIGHTS); the supervisor asks one call
 * at a time. It ends when the supervisor does (its end of the pair
 * closes). A fenced process of the same user can kill it: the next call is
 * then refused, never let through. */
#include "sup_dgram.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sup_caller.h"
#include "sys.h"
#include "mountns/userns.h"

#ifndef SIOCGSKNS
#define SIOCGSKNS 0x894C
#endif
#ifndef SECCOMP_IOCTL_NOTIF_ADDFD
struct seccomp_notif_addfd {
	__u64 id;
	__u32 flags;
	__u32 srcfd;
	__u32 newfd;
	__u32 newfd_flags;
};
#define SECCOMP_IOCTL_NOTIF_ADDFD _IOW('!', 3, struct seccomp_notif_addfd)
#endif

struct sup_dgram {
	pthread_mutex_t lock;
	int state;  /* 0 not started, 1 ready, -errno: can not be had */
	int fd;     /* the seqpacket to the helper */
	int diag;   /* a UNIX_DIAG socket made in the namespace */
	dev_t ns_dev;
	ino_t ns_ino;
};

struct request {
	int pair;
	int type, protocol;
};

/* ---- the helper (a child of a threaded process: system calls only) ---- */

static int send_fds(int s, int err, const int *fds, int n)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(2 * sizeof(int))];
	} u;
	struct iovec io = {&err, sizeof err};
	struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1};
	if (n > 0) {
		memset(&u, 0, sizeof u);
		m.msg_control = u.b;
		m.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
	}
	return sendmsg(s, &m, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

static _Noreturn void helper(int s)
{
	/* Hold nothing of the supervisor's but the pair. */
	if (s != 3 && (cf_sys3(SYS_dup3, s, 3, O_CLOEXEC) != 3))
		_exit(1);
	s = 3;
	if (cf_sys3(SYS_close_range, 4, ~0U, 0) < 0)
		_exit(1);
	/* Through the test switch, as every namespace credfence makes. */
	int err = cf_userns_unshare(CLONE_NEWUSER | CLONE_NEWNET);
	int hello[2] = {-1, -1};
	if (!err && (hello[0] = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) < 0)
		err = -errno;
	if (!err && (hello[1] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)
		err = -errno;
	if (send_fds(s, err, hello, err ? 0 : 2) || err)
		_exit(0);
	close(hello[0]);
	close(hello[1]);
	for (;;) {
		struct request q;
		ssize_t n = recv(s, &q, sizeof q, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof q)
			_exit(0); /* the supervisor is gone */
		int fds[2] = {-1, -1}, e = 0;
		if (q.pair)
			e = socketpair(AF_UNIX, q.type, q.protocol, fds) < 0 ? -errno : 0;
		else if ((fds[0] = socket(AF_UNIX, q.type, q.protocol)) < 0)
			e = -errno;
		if (send_fds(s, e, fds, e ? 0 : q.pair ? 2 : 1) < 0)
			_exit(0);
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
	}
}

/* ---- the supervisor's side ---- */

static int recv_fds(int s, int *err, int *fds, int max)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(2 * sizeof(int))];
	} u;
	struct iovec io = {err, sizeof *err};
	struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.b,
			   .msg_controllen = sizeof u.b};
	ssize_t n;
	while ((n = recvmsg(s, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof *err)
		return n < 0 ? -errno : -EPIPE;
	int got = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (int i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + (size_t)i * sizeof fd, sizeof fd);
			if (got < max)
				fds[got++] = fd;
			else
				close(fd);
		}
	}
	return got;
}

static int start(struct sup_dgram *d)
{
	/* The test switch of tree_ns.h: act as where user namespaces are
	 * refused. */
	const char *t = getenv("CF_TEST_NO_USERNS");
	if (t && strcmp(t, "1") == 0)
		return -EPERM;
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid == 0)
		helper(sp[1]);
	close(sp[1]);
	if (pid < 0) {
		close(sp[0]);
		return -errno;
	}
	int err = 0, fds[2] = {-1, -1};
	int got = recv_fds(sp[0], &err, fds, 2);
	struct stat st;
	if (got < 0 || err || got != 2 || fstat(fds[1], &st) < 0) {
		int e = got < 0 ? got : err ? err : -EPROTO;
		for (int i = 0; i < 2 && i < got; i++)
			close(fds[i]);
		close(sp[0]);
		return e;
	}
	close(fds[1]);
	d->fd = sp[0];
	d->diag = fds[0];
	d->ns_dev = st.st_dev;
	d->ns_ino = st.st_ino;
	return 1;
}

static struct sup_dgram *state(struct sup *sup)
{
	pthread_mutex_lock(&sup->lock);
	struct sup_dgram *d = sup->dgram;
	if (!d && (d = calloc(1, sizeof *d))) {
		pthread_mutex_init(&d->lock, NULL);
		d->fd = d->diag = -1;
		__atomic_store_n(&sup->dgram, d, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sup->lock);
	return d;
}

/* The socket(s) of request Q from the helper into FDS: their count, or -errno
 * (-ENETUNREACH: there is no namespace, with WHY). */
static int make(struct sup *sup, const struct request *q, int fds[2], char *why, size_t n)
{
	struct sup_dgram *d = state(sup);
	if (!d)
		return -ENOMEM;
	pthread_mutex_lock(&d->lock);
	if (d->state == 0)
		d->state = start(d);
	int got = -ENETUNREACH, err = 0;
	if (d->state == 1 && send(d->fd, q, sizeof *q, MSG_NOSIGNAL) == (ssize_t)sizeof *q &&
	    (got = recv_fds(d->fd, &err, fds, 2)) >= 0 && err) {
		for (int i = 0; i < got; i++)
			close(fds[i]);
		got = err;
	} else if (d->state == 1 && got < 0) {
		d->state = -EPIPE; /* the helper is gone: refuse from now on */
		got = -ENETUNREACH;
	}
	if (got == -ENETUNREACH)
		snprintf(why, n, "no network namespace for the fence's datagram sockets: %s",
			 strerror(d->state < 0 ? -d->state : EPIPE));
	pthread_mutex_unlock(&d->lock);
	return got;
}

static int addfd(const struct caller *c, int fd, int type, bool send)
{
	struct seccomp_notif_addfd a;
	memset(&a, 0, sizeof a);
	a.id = c->id;
	a.flags = send ? (1U << 1) /* SECCOMP_ADDFD_FLAG_SEND */ : 0;
	a.srcfd = (uint32_t)fd;
	a.newfd_flags = (type & SOCK_CLOEXEC) ? O_CLOEXEC : 0;
	int r = ioctl(c->lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
	return r < 0 ? -errno : r;
}

bool cf_sup_is_dgram(const struct seccomp_data *d)
{
	return d->nr == SYS_socket || d->nr == SYS_socketpair;
}

void cf_sup_handle_dgram(struct caller *c, const struct seccomp_notif *n)
{
	struct request q = {.pair = n->data.nr == SYS_socketpair,
			    .type = (int)n->data.args[1], .protocol = (int)n->data.args[2]};
	int fds[2] = {-1, -1};
	char why[200] = "";
	long r = (int)n->data.args[0] != AF_UNIX ? -EAFNOSUPPORT : make(c->sup, &q, fds, why, sizeof why);
	if (r == -ENETUNREACH) {
		cf_sup_log_denial(c, "ipc_denied", q.pair ? "socketpair" : "socket", "socket",
				  "unix datagram", why);
		r = -EACCES;
	} else if (r >= 0 && !q.pair) {
		/* Added and answered at once: the caller gets its number. */
		r = addfd(c, fds[0], q.type, true);
		if (r == -EINVAL) { /* before Linux 5.14: add, then answer */
			r = addfd(c, fds[0], q.type, false);
		} else if (r >= 0) {
			close(fds[0]);
			cf_sup_caller_close(c);
			return;
		}
	} else if (r >= 0) {
		int two[2] = {addfd(c, fds[0], q.type, false), -1};
		two[1] = two[0] < 0 ? two[0] : addfd(c, fds[1], q.type, false);
		r = two[0] < 0 ? two[0] : two[1] < 0 ? two[1] : 0;
		struct iovec local = {two, sizeof two}, remote = {(void *)(uintptr_t)n->data.args[3], sizeof two};
		if (!r && process_vm_writev(c->tid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof two)
			r = -EFAULT;
	}
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (cf_sup_valid(c))
		cf_sup_respond(c->lfd, c->id, r, false);
	cf_sup_caller_close(c);
}

bool cf_sup_dgram_inside(struct sup *sup, int s)
{
	struct sup_dgram *d = __atomic_load_n(&sup->dgram, __ATOMIC_ACQUIRE);
	if (!d || s < 0)
		return false;
	pthread_mutex_lock(&d->lock);
	bool ready = d->state == 1;
	dev_t dev = d->ns_dev;
	ino_t ino = d->ns_ino;
	pthread_mutex_unlock(&d->lock);
	if (!ready)
		return false;
	int ns = ioctl(s, SIOCGSKNS);
	struct stat st;
	bool in = ns >= 0 && fstat(ns, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
	if (ns >= 0)
		close(ns);
	return in;
}

int cf_sup_dgram_diag(struct sup *sup)
{
	struct sup_dgram *d = __atomic_load_n(&sup->dgram, __ATOMIC_ACQUIRE);
	return d ? d->diag : -1;
}
