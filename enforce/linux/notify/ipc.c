/* The child side of the IPC and metadata fence: the notification filter, its
 * handover to the supervisor (cf_ipc_enter), the blob, and the probes; and
 * the terminal filter (ttyfilter.h), the other filter a child installs,
 * kept here so that a launch touches one file for both (issue 34). The
 * supervisor itself is supervisor.c. */
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errwords.h"
#include "filters.h"
#include "json.h"
#include "proc.h"
#include "sup_denied.h"
#include "ttyfilter.h"
#include "supervisor_wire.h"
#include "sys.h"

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* ---- the filter ----
 * Native calls of the list go to the supervisor; the other tables of this
 * machine (i386 through int 0x80 or a 32-bit program, x32) refuse them with
 * EPERM; an arch this kernel can not produce here kills the process. The
 * programs are compiled by libseccomp when credfence is built
 * (filter_gen.c says what each answers, filters.h): the child installs one
 * with one seccomp() call, nothing built between fork and exec.
 *
 * Installing a filter makes the kernel run it once for every number of the
 * native table that every filter below still allows whatever the arguments,
 * to fill its action cache (kernel/seccomp.c, seccomp_cache_prepare_bitmap):
 * about 1.35 us of every fenced child's start for each instruction on the
 * way to an answer (docs/bench.md). libseccomp lays the native numbers out
 * as a binary tree (SCMP_FLTATR_CTL_OPTIMIZE 2; priorities change nothing
 * there, and its linear list walks every rule) whose leaves test up to four
 * numbers each, x32's among them: 11.6 instructions a native number on
 * average, where the interval tree typed here before took 8 to 9.3
 * (tests/enforce/test_filter_gen.c logs both), 1.5 to 3 us more of a
 * child's start (cf-bench ipcfilter). The 32-bit numbers stay out of that
 * run. */
#ifdef CF_IPC_BPF
const struct sock_filter *cf_ipc_filter(bool meta_by_mounts, bool dgram, unsigned short *len)
{
	const struct cf_bpf *b = &CF_IPC_BPF[CF_IPC_BPF_INDEX(meta_by_mounts, dgram)];
	*len = b->len;
	return b->len ? b->f : NULL; /* none: built where filter_gen could not make it */
}
#else
const struct sock_filter *cf_ipc_filter(bool meta_by_mounts, bool dgram, unsigned short *len)
{
	(void)meta_by_mounts;
	(void)dgram;
	*len = 0;
	return NULL;
}
#endif

/* Before Landlock ABI 6 (no scope for abstract sockets), DGRAM: a Unix
 * datagram socket can sendto() an abstract name bound outside the fence,
 * and no connect() is there to judge. Such a socket is made by the
 * supervisor instead, in a network namespace of the fenced tree's own
 * (sup_dgram.c), whose abstract names only the fenced tree binds. */
static long install_filter(unsigned long flags, bool meta_by_mounts, bool dgram)
{
	struct sock_fprog prog = {.filter = NULL};
	/* The kernel copies the program; it never writes through this pointer. */
	prog.filter = (struct sock_filter *)(uintptr_t)cf_ipc_filter(meta_by_mounts, dgram, &prog.len);
	if (!prog.filter)
		return -ENOSYS; /* no filter for this machine yet: fail closed */
	return cf_sys3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

/* ---- the terminal filter (ttyfilter.h) ----
 * Installed before the IPC filter (landlock.c, cf_ll_restrict_with).
 *
 * A process reaches ioctl through every system call table its kernel has,
 * so each one is checked: a 64-bit program may still make 32-bit calls (int
 * 0x80 on x86_64, or a 32-bit program it execs), and x32 calls carry the
 * native arch with a flag in the number (its own ioctl, and the 64-bit one
 * older kernels let it reach). The same for open_by_handle_at. The kernel
 * truncates an ioctl's cmd to unsigned int, so only the low word of args[1]
 * decides: 0x100005412 is TIOCSTI as well. An arch this kernel can not
 * produce here: killed, not guessed. The program is compiled by libseccomp
 * when credfence is built (filter_gen.c, tty_rules), with the numbers of each
 * table from libseccomp's; the 32-bit table's part starts with a load the
 * answer does not depend on, that ends the kernel's action cache run for
 * every 32-bit call, in this filter and in the IPC filter installed after
 * it (ipc.c): those calls run the filters each time, as a 32-bit ioctl did. */
#ifdef CF_TTY_BPF

const struct sock_filter *cf_ttyfilter_program(unsigned short *len)
{
	*len = CF_TTY_BPF.len;
	return CF_TTY_BPF.len ? CF_TTY_BPF.f : NULL;
}

int cf_ttyfilter_install(void)
{
	if (!CF_TTY_BPF.len)
		return -ENOSYS; /* built where filter_gen could not make it: fail closed */
	/* The kernel copies the program; it never writes through this pointer. */
	struct sock_fprog prog = {.len = CF_TTY_BPF.len, .filter = (struct sock_filter *)(uintptr_t)CF_TTY_BPF.f};
	return (int)cf_sys3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

#else

const struct sock_filter *cf_ttyfilter_program(unsigned short *len)
{
	*len = 0;
	return NULL;
}

int cf_ttyfilter_install(void)
{
	return -ENOSYS; /* no filter for this machine yet: fail closed */
}

#endif

/* ---- the blob ---- */

static int blob_add(char **blob, size_t *len, char kind, const char *s)
{
	size_t n = strlen(s);
	if (*len + 2 + n > CF_IPC_BLOB_MAX)
		return -EINVAL;
	char *b = realloc(*blob, *len + 2 + n);
	if (!b)
		return -ENOMEM;
	b[*len] = kind;
	memcpy(b + *len + 1, s, n + 1);
	*blob = b;
	*len += 2 + n;
	return 0;
}

/* "credfence-sup-PID-START-HEX": PID and START into IPC, or 0 when ADDR is
 * not of that form (cf_ipc_enter then refuses: no identity to check). */
static void parse_identity(struct cf_ipc *ipc)
{
	static const char prefix[] = "credfence-sup-";
	unsigned long long v[2] = {0, 0};
	const char *p = ipc->addr;
	ipc->sup_pid = 0;
	ipc->sup_start = 0;
	if (strncmp(p, prefix, sizeof prefix - 1) != 0)
		return;
	p += sizeof prefix - 1;
	for (int k = 0; k < 2; k++) {
		if (*p < '0' || *p > '9')
			return;
		while (*p >= '0' && *p <= '9' && v[k] < (1ULL << 62))
			v[k] = v[k] * 10 + (unsigned long long)(*p++ - '0');
		if (*p++ != '-')
			return;
	}
	if (!*p || v[0] == 0 || v[0] > 0x3fffffff || v[1] == 0)
		return;
	ipc->sup_pid = (int)v[0];
	ipc->sup_start = v[1];
}

int cf_ipc_set_addr(struct cf_ipc *ipc, const char *addr)
{
	size_t n = addr ? strlen(addr) : 0;
	if (n >= CF_IPC_ADDR_MAX || n >= sizeof(((struct sockaddr_un *)0)->sun_path) - 1)
		return -EINVAL;
	memcpy(ipc->addr, addr ? addr : "", n + 1);
	parse_identity(ipc);
	return 0;
}

int cf_ipc_prepare(struct cf_ipc *ipc, const struct cf_strv *writable, const struct cf_strv *allow,
		   const char *addr)
{
	int r;
	memset(ipc, 0, sizeof *ipc);
	if ((r = cf_ipc_set_addr(ipc, addr)) < 0)
		return r;
	ipc->blob = malloc(sizeof CF_IPC_MAGIC);
	if (!ipc->blob)
		return -ENOMEM;
	memcpy(ipc->blob, CF_IPC_MAGIC, sizeof CF_IPC_MAGIC);
	ipc->blob_len = sizeof CF_IPC_MAGIC;
	for (size_t i = 0; writable && i < writable->n && r == 0; i++)
		r = writable->v[i][0] == '/' ? blob_add(&ipc->blob, &ipc->blob_len, 'w', writable->v[i])
					     : -EINVAL;
	for (size_t i = 0; allow && i < allow->n && r == 0; i++) {
		const char *s = allow->v[i];
		bool ok = s[0] == '/' || (s[0] == '@' && s[1]);
		r = ok ? blob_add(&ipc->blob, &ipc->blob_len, 's', s) : -EINVAL;
	}
	if (r < 0)
		cf_ipc_free(ipc);
	return r;
}

void cf_ipc_free(struct cf_ipc *ipc)
{
	free(ipc->blob);
	ipc->blob = NULL;
	ipc->blob_len = 0;
}

/* ---- between fork and exec ---- */

static int sup_connect(const char *name)
{
	struct sockaddr_un sa;
	size_t n = 0;
	char *p = (char *)&sa;
	for (size_t i = 0; i < sizeof sa; i++)
		p[i] = 0;
	sa.sun_family = AF_UNIX;
	while (name[n] && n + 1 < sizeof sa.sun_path) {
		sa.sun_path[n + 1] = name[n]; /* sun_path[0] stays NUL: abstract */
		n++;
	}
	int s = (int)cf_sys3(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return s;
	struct timeval tv = {CF_IPC_ANSWER_TIMEOUT, 0};
	long r = cf_sys5(SYS_setsockopt, s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (r == 0)
		r = cf_sys5(SYS_setsockopt, s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (r == 0)
		r = cf_sys3(SYS_connect, s, &sa, offsetof(struct sockaddr_un, sun_path) + 1 + n);
	if (r < 0) {
		cf_sys_close(s);
		return (int)r;
	}
	return s;
}

/* The listener and the blob to the supervisor; its answer is taken by
 * answer() (the caller may do other work meanwhile). */
static long hand_over(int s, int listener, const struct cf_ipc *ipc)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	struct iovec iov = {ipc->blob, ipc->blob_len};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = c.buf;
	m.msg_controllen = sizeof c.buf;
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	unsigned char *data = CMSG_DATA(h);
	const unsigned char *from = (const unsigned char *)&listener;
	for (size_t i = 0; i < sizeof(int); i++)
		data[i] = from[i];
	long r = cf_sys3(SYS_sendmsg, s, &m, MSG_NOSIGNAL);
	if (r < 0)
		return r;
	if ((size_t)r != ipc->blob_len)
		return -EPIPE;
	return 0;
}

static long answer(int s)
{
	int answer = -EPROTO;
	long r = cf_sys6(SYS_recvfrom, s, (long)&answer, sizeof answer, 0, 0, 0);
	if (r < 0)
		return r;
	if (r != sizeof answer)
		return -ECONNRESET;
	return answer;
}

/* Whether PID is an ancestor of the calling process, by /proc's parent
 * links. A tree deeper than this is not one any way in makes. */
static bool is_ancestor(int pid)
{
	struct cf_proc_stat st;
	int p = (int)cf_sys0(SYS_getppid);
	for (int depth = 0; p > 1 && depth < 128; depth++) {
		if (p == pid)
			return true;
		if (cf_proc_stat(p, &st) < 0)
			return false;
		p = st.ppid;
	}
	return p == pid;
}

/* Whether the peer of S is the supervisor of IPC: 0, or the code of
 * supervisor.h. SO_PEERCRED of our connected socket is what the kernel copied from
 * the listener at connect, set by listen() to the listening process
 * (net/unix/af_unix.c, unix_listen: "set credentials so connect can copy
 * them"). Checked after the connect, so that a supervisor that died before
 * it (its name then free to bind) fails a test: the listener's pid is the
 * binder's, or the pid is the supervisor's and /proc shows another process
 * (or none) under it. An address naming a live process that is not ours
 * fails the ancestry. */
static int peer_is_supervisor(int s, const struct cf_ipc *ipc)
{
	struct ucred cr = {0, 0, 0};
	socklen_t len = sizeof cr;
	long r = cf_sys5(SYS_getsockopt, s, SOL_SOCKET, SO_PEERCRED, &cr, &len);
	if (r < 0)
		return CF_ERR(CF_ERR_IPC_IDENTITY, -r);
	if (cr.pid != ipc->sup_pid) /* 0 too: a listener of another pid namespace */
		return cf_ipc_supervisor_alive(ipc) ? CF_ERR(CF_ERR_IPC_IDENTITY, EPERM) : CF_ERR(CF_ERR_IPC_ENDED, 0);
	unsigned long long start = cf_proc_starttime(cr.pid);
	if (start == 0)
		return CF_ERR(CF_ERR_IPC_IDENTITY, ESRCH); /* gone, or no /proc to tell */
	if (start != ipc->sup_start)
		return CF_ERR(CF_ERR_IPC_ENDED, 0);
	return ipc->sup_beside || is_ancestor(cr.pid) ? 0 : CF_ERR(CF_ERR_IPC_IDENTITY, EPERM);
}

bool cf_ipc_supervisor_alive(const struct cf_ipc *ipc)
{
	char state = 0;
	return ipc->sup_pid > 0 && cf_proc_starttime_state(ipc->sup_pid, &state) == ipc->sup_start &&
	       state != 'Z' && state != 'X';
}

/* The supervisor cut the connection without an answer (ECONNRESET, EPIPE,
 * or an end of file): it was killed under the child, and its death shows
 * in /proc a little after its sockets close (they go first, as it exits).
 * Whether it ended within 100 ms: the child is then refused as for a
 * supervisor that has ended, in best-effort mode too. Raw system calls. */
static bool ended_after_cut(const struct cf_ipc *ipc, long r)
{
	if (r != -ECONNRESET && r != -EPIPE)
		return false;
	for (int i = 0; i < 50; i++) {
		if (!cf_ipc_supervisor_alive(ipc))
			return true;
		struct timespec ts = {0, 2000000};
		(void)cf_sys2(SYS_nanosleep, &ts, NULL);
	}
	return !cf_ipc_supervisor_alive(ipc);
}

/* A connection to the supervisor of IPC whose peer is checked to be it:
 * the socket, or -errno or a code of supervisor.h. */
static int sup_open(const struct cf_ipc *ipc)
{
	if (!ipc->addr[0])
		return -ENOTCONN;
	if (ipc->sup_pid <= 0)
		return CF_ERR(CF_ERR_IPC_IDENTITY, EINVAL);
	int s = sup_connect(ipc->addr);
	if (s < 0)
		return cf_ipc_supervisor_alive(ipc) ? s : CF_ERR(CF_ERR_IPC_ENDED, 0);
	int who = peer_is_supervisor(s, ipc);
	if (who < 0) {
		cf_sys_close(s);
		return who;
	}
	return s;
}

int cf_ipc_enter_begin(const struct cf_ipc *ipc, int *pending)
{
	*pending = -1;
	if (!ipc->addr[0] || !ipc->blob)
		return -ENOTCONN;
	int s = sup_open(ipc);
	if (s < 0)
		return s;
	long l = install_filter(SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
				ipc->meta_by_mounts, ipc->dgram_by_sup);
	if (l == -EINVAL) /* before 5.19 */
		l = install_filter(SECCOMP_FILTER_FLAG_NEW_LISTENER, ipc->meta_by_mounts,
				   ipc->dgram_by_sup);
	if (l < 0) {
		cf_sys_close(s);
		return CF_ERR(CF_ERR_IPC, -l);
	}
	long r = hand_over(s, (int)l, ipc);
	/* From here on the supervisor holds the listener (or its message is on
	 * the way, holding it too), or nobody does and the trapped calls fail
	 * with ENOSYS. */
	cf_sys_close((int)l);
	if (r < 0) {
		cf_sys_close(s);
		return ended_after_cut(ipc, r) ? CF_ERR(CF_ERR_IPC_ENDED, 0) : CF_ERR(CF_ERR_IPC, -r);
	}
	*pending = s;
	return 0;
}

int cf_ipc_enter_end(const struct cf_ipc *ipc, int pending)
{
	long r = answer(pending);
	cf_sys_close(pending);
	/* No answer: the supervisor that took the listener died before it gave
	 * one (killed under the child, as the takeover race does). That is
	 * the supervisor ending, which refuses the child in best-effort mode
	 * too, not a broken connection it may go on after. */
	if (ended_after_cut(ipc, r))
		return CF_ERR(CF_ERR_IPC_ENDED, 0);
	if (r < 0)
		return CF_ERR(CF_ERR_IPC, -r);
	return 0;
}

int cf_ipc_enter(const struct cf_ipc *ipc)
{
	int pending;
	int rc = cf_ipc_enter_begin(ipc, &pending);
	return rc ? rc : cf_ipc_enter_end(ipc, pending);
}

/* ---- the namespace of a harness's children, and the user's terminal ---- */

static void put_magic(char *to, const char *magic)
{
	size_t i = 0;
	for (; magic[i]; i++)
		to[i] = magic[i];
	for (; i < 8; i++)
		to[i] = '\0';
}

static bool is_magic(const char *at, const char *magic)
{
	for (size_t i = 0; i < 8; i++) {
		if (at[i] != magic[i])
			return false;
		if (!magic[i])
			return true;
	}
	return true;
}

/* SCM_RIGHTS of N descriptors FDS (N <= 3) into the message M. */
union cf_fds_cmsg {
	struct cmsghdr h;
	char buf[CMSG_SPACE(3 * sizeof(int))];
};

static void put_fds(struct msghdr *m, union cf_fds_cmsg *c, const int *fds, int n)
{
	m->msg_control = c->buf;
	m->msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
	struct cmsghdr *h = CMSG_FIRSTHDR(m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	unsigned char *data = CMSG_DATA(h);
	const unsigned char *from = (const unsigned char *)fds;
	for (size_t i = 0; i < (size_t)n * sizeof(int); i++)
		data[i] = from[i];
}

/* The descriptors of SCM_RIGHTS in M into FDS (at most CAP, the rest
 * closed); their count. */
static int take_fds(struct msghdr *m, int *fds, int cap)
{
	int n = 0;
	if (m->msg_controllen < sizeof(struct cmsghdr))
		return 0;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(m); h; h = CMSG_NXTHDR(m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			unsigned char *to = (unsigned char *)&fd;
			for (size_t b = 0; b < sizeof fd; b++)
				to[b] = CMSG_DATA(h)[i * sizeof(int) + b];
			if (n < cap)
				fds[n++] = fd;
			else
				cf_sys_close(fd);
		}
	}
	return n;
}

int cf_ipc_ns_get(const struct cf_ipc *ipc, struct cf_ns_wire *w, int fds[3])
{
	fds[0] = fds[1] = fds[2] = -1;
	int s = sup_open(ipc);
	if (s < 0)
		return s;
	struct cf_ns_wire ask;
	char *p = (char *)&ask;
	for (size_t i = 0; i < sizeof ask; i++)
		p[i] = 0;
	put_magic(ask.magic, CF_NS_ASK_MAGIC);
	long r = cf_sys6(SYS_sendto, s, (long)&ask, sizeof ask, MSG_NOSIGNAL, 0, 0);
	if (r >= 0 && r != (long)sizeof ask)
		r = -EPIPE;
	if (r < 0) {
		cf_sys_close(s);
		return CF_ERR(CF_ERR_IPC, -r);
	}
	union cf_fds_cmsg c;
	struct iovec iov = {w, sizeof *w};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = c.buf;
	m.msg_controllen = sizeof c.buf;
	r = cf_sys3(SYS_recvmsg, s, &m, MSG_CMSG_CLOEXEC);
	cf_sys_close(s);
	int got = r > 0 ? take_fds(&m, fds, 3) : 0;
	int rc = 0;
	if (r < 0)
		rc = CF_ERR(CF_ERR_IPC, -r);
	else if (r != (long)sizeof *w || !is_magic(w->magic, CF_NS_ASK_MAGIC) ||
		 (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		rc = CF_ERR(CF_ERR_IPC, EPROTO);
	else if (w->rc)
		rc = w->rc == -ENOENT || w->rc == -EALREADY ? w->rc : CF_ERR(CF_ERR_IPC, EPROTO);
	else if (w->nfds < 2 || w->nfds > 3 || got != w->nfds)
		rc = CF_ERR(CF_ERR_IPC, EPROTO);
	if (rc) {
		for (int i = 0; i < got; i++)
			cf_sys_close(fds[i]);
		fds[0] = fds[1] = fds[2] = -1;
	}
	return rc;
}

int cf_ipc_ns_give(const struct cf_ipc *ipc, const struct cf_ns_wire *w, const int *fds)
{
	struct cf_ns_wire give = *w;
	put_magic(give.magic, CF_NS_GIVE_MAGIC);
	if (give.nfds < 2 || give.nfds > 3)
		return -EINVAL;
	int s = sup_open(ipc);
	if (s < 0)
		return s;
	union cf_fds_cmsg c;
	struct iovec iov = {&give, sizeof give};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	put_fds(&m, &c, fds, give.nfds);
	long r = cf_sys3(SYS_sendmsg, s, &m, MSG_NOSIGNAL);
	if (r >= 0 && r != (long)sizeof give)
		r = -EPIPE;
	if (r >= 0)
		r = answer(s);
	cf_sys_close(s);
	return r < 0 ? (int)r : 0;
}

void cf_ipc_say(const struct cf_ipc *ipc, const char *program, const char *why)
{
	struct cf_say_wire w;
	char *p = (char *)&w;
	for (size_t i = 0; i < sizeof w; i++)
		p[i] = 0;
	put_magic(w.magic, CF_SAY_MAGIC);
	for (size_t i = 0; program && program[i] && i + 1 < sizeof w.program; i++)
		w.program[i] = program[i];
	for (size_t i = 0; why && why[i] && i + 1 < sizeof w.why; i++)
		w.why[i] = why[i];
	int s = sup_open(ipc);
	if (s < 0)
		return;
	(void)cf_sys6(SYS_sendto, s, (long)&w, sizeof w, MSG_NOSIGNAL, 0, 0);
	/* Its answer: the line is out before this child goes on. */
	(void)answer(s);
	cf_sys_close(s);
}

/* ---- a supervisor found by ancestry (issue 31) ---- */

size_t cf_ipc_supervisors_above(char (*out)[CF_IPC_ADDR_MAX], size_t max)
{
	enum { DEPTH = 64, FOUND = 16 };
	int pids[DEPTH];
	size_t np = 0, n = 0;
	struct cf_proc_stat st;
	for (int p = getppid(); p > 1 && np < DEPTH; p = st.ppid) {
		pids[np++] = p;
		if (cf_proc_stat(p, &st) < 0)
			break;
	}
	FILE *f = np ? fopen("/proc/net/unix", "re") : NULL;
	if (!f)
		return 0;
	struct {
		size_t depth;
		char name[CF_IPC_ADDR_MAX];
	} found[FOUND];
	char *line = NULL;
	size_t cap = 0;
	static const char tag[] = "@credfence-sup-";
	while (n < FOUND && getline(&line, &cap, f) > 0) {
		char *at = strstr(line, tag);
		if (!at)
			continue;
		at[strcspn(at, " \n")] = '\0';
		int pid = atoi(at + sizeof tag - 1);
		size_t d = 0, len = strlen(at + 1);
		while (d < np && pids[d] != pid)
			d++;
		bool dup = false;
		for (size_t i = 0; i < n; i++)
			dup = dup || strcmp(found[i].name, at + 1) == 0;
		if (d == np || len >= CF_IPC_ADDR_MAX || dup)
			continue;
		found[n].depth = d;
		memcpy(found[n].name, at + 1, len + 1);
		n++;
	}
	free(line);
	fclose(f);
	/* The nearest first. */
	size_t k = 0;
	for (size_t d = 0; d < np && k < max; d++)
		for (size_t i = 0; i < n && k < max; i++)
			if (found[i].depth == d)
				memcpy(out[k++], found[i].name, CF_IPC_ADDR_MAX);
	return k;
}

/* ---- words ---- */

static bool has_cap_sys_ptrace(void)
{
	char line[256];
	bool yes = false;
	FILE *f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "CapEff:", 7) == 0)
			yes = (strtoull(line + 7, NULL, 16) >> 19) & 1; /* CAP_SYS_PTRACE */
	if (f)
		fclose(f);
	return yes;
}

int cf_ipc_ptrace_blocked(const char *scope_file, bool above)
{
	char buf[16] = "";
	int fd = open(scope_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* no Yama */
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	int scope = n > 0 ? atoi(buf) : 0;
	if (scope <= 0)
		return 0;
	if (scope >= 3)
		return scope;
	if (has_cap_sys_ptrace())
		return 0;
	if (scope == 1 && above)
		return 0;
	return scope;
}

void cf_ipc_verdict(int err, struct cf_why *w)
{
	err = cf_ipc_err(err);
	*w = (struct cf_why){.id = CF_WHY_IPC_REFUSED, .err = cf_err_detail(err)};
	switch (cf_err_kind(err)) {
	case CF_ERR_PIDFD:
		w->id = CF_WHY_IPC_PIDFD;
		return;
	case CF_ERR_IPC_IDENTITY:
		w->id = CF_WHY_IPC_IDENTITY;
		return;
	case CF_ERR_IPC_ENDED:
		*w = (struct cf_why){.id = CF_WHY_IPC_ENDED};
		return;
	case CF_ERR_IPC_PTRACE:
		*w = (struct cf_why){.id = CF_WHY_IPC_PTRACE, .n = cf_err_detail(err)};
		return;
	case CF_ERR_IPC_START:
		w->id = CF_WHY_IPC_START;
		return;
	default:
		break;
	}
	switch (w->err) {
	case ENOSYS:
	case EINVAL:
	case EOPNOTSUPP:
		w->id = CF_WHY_IPC_NOTIF;
		break;
	case EBUSY:
		w->id = CF_WHY_IPC_BUSY;
		break;
	case EACCES:
		w->id = CF_WHY_IPC_NNP;
		break;
	case EAGAIN:
	case ETIMEDOUT:
		w->id = CF_WHY_IPC_TIMEOUT;
		break;
	case EPIPE:
	case ECONNRESET:
	case ECONNREFUSED:
		w->id = CF_WHY_IPC_UNREACHABLE;
		break;
	case ENOTCONN:
		w->id = CF_WHY_IPC_NONE;
		break;
	default:
		break;
	}
}

/* ---- probes (normal context; the work is done in a forked child) ---- */

static const struct sock_filter allow_all[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};

static long listener_of_allow_all(void)
{
	struct sock_fprog prog = {.len = 1, .filter = (struct sock_filter *)(uintptr_t)allow_all};
	if (cf_sys5(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -EPERM;
	return cf_sys3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

static int probe_child(void)
{
	long l = listener_of_allow_all();
	if (l < 0 && l != -EBUSY) /* EBUSY: a listener above us, so the kernel has them */
		return CF_ERR(CF_ERR_IPC, -l);
	int pfd = (int)cf_sys2(SYS_pidfd_open, cf_sys0(SYS_getpid), 0);
	if (pfd < 0)
		return CF_ERR(CF_ERR_PIDFD, -pfd);
	int fd = (int)cf_sys3(SYS_pidfd_getfd, pfd, pfd, 0);
	if (fd < 0)
		return CF_ERR(CF_ERR_PIDFD, -fd);
	return 0;
}

static int covered_child(void)
{
	long l = listener_of_allow_all();
	if (l == -EBUSY)
		return 1;
	return l < 0 ? (int)l : 0;
}

/* FN (raw system calls only) in a child, by a raw fork: no atfork handler
 * runs. cf_fence_prepare asks cf_ipc_covered in a process that is fenced
 * already, and the shim's fence cache prepares a fence from its own fork
 * handler, holding the lock that handler takes (shim/linux/fence_cache.c): a
 * harness child that goes on after a failed exec (bash runs a script
 * without "#!" itself) would wait for that lock forever in a libc fork. */
static int in_child(int (*fn)(void))
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = (pid_t)cf_sys6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return pid;
	}
	if (pid == 0) {
		close(p[0]);
		int r = fn();
		_exit(write(p[1], &r, sizeof r) == sizeof r ? 0 : 1);
	}
	close(p[1]);
	int r = -EIO, st;
	ssize_t n;
	do
		n = read(p[0], &r, sizeof r);
	while (n < 0 && errno == EINTR);
	if (n != sizeof r)
		r = -EIO;
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return r;
}

int cf_ipc_probe(void)
{
	return in_child(probe_child);
}

int cf_ipc_covered(void)
{
	return in_child(covered_child);
}
