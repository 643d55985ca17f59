/* The child side of the IPC and metadata fence: the notification filter, its
 * handover to the supervisor (cf_ipc_enter), the blob, and the probes. The
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

#include "bpf.h"
#include "errwords.h"
#include "json.h"
#include "proc.h"
#include "sup_denied.h"
#include "supervisor_wire.h"
#include "sys.h"

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
#ifndef TIOCGPTPEER
#define TIOCGPTPEER 0x5441U /* _IO('T', 0x41) */
#endif

/* Three more answers, the same number in every table of this machine:
 * io_uring_setup: a ring reaches connect, setxattr and the rest without any
 *   system call the filter sees; ENOSYS, and libuv, liburing users and Bun
 *   fall back to plain calls.
 * file_setattr (Linux 6.17): inode flags by path; ENOSYS, and tools fall back
 *   to FS_IOC_FSSETXATTR, which is trapped.
 * prctl(PR_SET_DUMPABLE, 0): said to succeed and not done. An undumpable
 *   process (ssh, gpg) can not have its descriptors taken by the supervisor
 *   (pidfd_getfd is a ptrace-attach check), so every call it makes that goes
 *   to the supervisor would fail. */
#define NR_IO_URING_SETUP 425
#define NR_MOUNT_SETATTR 442 /* the same number on every architecture */
#define NR_FILE_SETATTR 469
#define PR_SET_DUMPABLE_ 4

/* ---- the filter ----
 * Native calls of the list go to the supervisor. The other tables of this
 * machine (i386 through int 0x80 or a 32-bit program, x32) reach the same
 * kernel objects with other numbers and other argument layouts; rather than
 * teach the supervisor those layouts, the same calls there fail with EPERM
 * (socketcall only for its bind and connect). An arch this kernel can not
 * produce here kills the process, as the terminal filter does. */
#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define NATIVE_IOCTL 16
#define NATIVE_PRCTL 157
#define NATIVE_SOCKET 41
#define NATIVE_SOCKETPAIR 53
#define NATIVE_TRAP(X)                                                                            \
	X(connect, 42) X(bind, 49) X(chmod, 90) X(fchmod, 91) X(fchmodat, 268) X(fchmodat2, 452)  \
	X(chown, 92) X(fchown, 93) X(lchown, 94) X(fchownat, 260) X(utime, 132) X(utimes, 235)    \
	X(futimesat, 261) X(utimensat, 280) X(setxattr, 188) X(lsetxattr, 189)                    \
	X(fsetxattr, 190) X(removexattr, 197) X(lremovexattr, 198) X(fremovexattr, 199)           \
	X(setxattrat, 463) X(removexattrat, 466)                                                  \
	/* never reached natively (answered above the list); x32 refuses them */                 \
	X(io_uring_setup, 425) X(file_setattr, 469)
#define X32_BIT 0x40000000U
#define X32_IOCTL 514
#define COMPAT_ARCH AUDIT_ARCH_I386
#define COMPAT_IOCTL 54
#define COMPAT_SOCKETCALL 102
#define COMPAT_SOCKET 359
#define COMPAT_SOCKETPAIR 360
#define COMPAT_DENY(X)                                                                            \
	X(connect, 362) X(bind, 361) X(chmod, 15) X(fchmod, 94) X(fchmodat, 306)                  \
	X(fchmodat2, 452) X(chown16, 182) X(fchown16, 95) X(lchown16, 16) X(chown32, 212)         \
	X(fchown32, 207) X(lchown32, 198) X(fchownat, 298) X(utime, 30) X(utimes, 271)            \
	X(futimesat, 299) X(utimensat, 320) X(utimensat64, 412) X(setxattr, 226)                  \
	X(lsetxattr, 227) X(fsetxattr, 228) X(removexattr, 235) X(lremovexattr, 236)              \
	X(fremovexattr, 237) X(setxattrat, 463) X(removexattrat, 466)                              \
	X(io_uring_setup, 425) X(file_setattr, 469)
#elif defined(__aarch64__)
/* Untested here: no arm64 machine. 32-bit ARM (compat) calls are killed. */
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define NATIVE_IOCTL 29
#define NATIVE_PRCTL 167
#define NATIVE_SOCKET 198
#define NATIVE_SOCKETPAIR 199
#define NATIVE_TRAP(X)                                                                            \
	X(connect, 203) X(bind, 200) X(fchmod, 52) X(fchmodat, 53) X(fchmodat2, 452)              \
	X(fchown, 55) X(fchownat, 54) X(utimensat, 88) X(setxattr, 5) X(lsetxattr, 6)             \
	X(fsetxattr, 7) X(removexattr, 14) X(lremovexattr, 15) X(fremovexattr, 16)                \
	X(setxattrat, 463) X(removexattrat, 466)
#endif

#ifdef NATIVE_ARCH

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LOW(i) offsetof(struct seccomp_data, args[i])
#else
#define LOW(i) (offsetof(struct seccomp_data, args[i]) + 4)
#endif

/* The program is built (cf_ipc_filter_build), not written as a table, so
 * that the native numbers can be a search tree. Installing a filter makes
 * the kernel run it once for every number of the native table that every
 * filter below still allows whatever the arguments, to fill its action
 * cache (kernel/seccomp.c, seccomp_cache_prepare_bitmap): about 1.35 us of
 * every fenced child's start for each instruction on the way to an
 * answer (docs/bench.md). Walking a list (the x32 test, five numbers of
 * their own, 24 trapped ones) took 34 instructions for most numbers; a
 * search over the intervals of numbers that share an answer takes
 * ceil(log2(intervals)) comparisons, 6 here (4 with the metadata calls
 * left to the mounts, which leaves them out of the tree).
 * The rest (ioctl cmds, x32, i386) stay lists, in the order of the tables:
 * none of it is in that run, and a list is half the size of a tree.
 *
 * The builder runs in the child between fork and exec: OUT, the stack and
 * the constant tables of this file, no call outside it. */

/* Where a comparison may lead: a block, known by its label until the
 * program is laid out. */
enum label {
	L_NATIVE,
	L_IOCTL,  /* native ioctl: its cmd decides */
	L_DENIAL, /* a denial's report, ioctl(CF_DENIAL_FD, CF_DENIAL_IOCTL) (sup_denied.h) */
	L_PRCTL,
	L_PRCTL_ARG,
	L_SOCKET,      /* socket, socketpair: a Unix datagram one goes to the supervisor */
	L_SOCKET_TYPE,
	L_X32,
	L_X_IOCTL,
	L_X_SOCKET,
	L_NOT_NATIVE,
	L_C,
	L_C_SOCKETCALL,
	L_C_IOCTL,
	L_C_SOCKET,
	L_ALLOW,
	L_TRAP,
	L_ENOSYS,
	L_DENY,
	L_FAKE_OK,
	L_KILL,
	L_COUNT
};

#define JT_LABEL 1
#define JF_LABEL 2
#define ARMS_MAX 40

struct prog {
	struct sock_filter *f;
	uint8_t how[CF_IPC_FILTER_MAX]; /* JT_LABEL, JF_LABEL: jt, jf hold a label */
	int at[L_COUNT];                /* a label's instruction, -1 until placed */
	unsigned pc;
	bool over;
};

/* One answer of a table: KEY (a number, a cmd) goes to the block TO. */
struct arm {
	uint32_t key;
	uint8_t to;
};

struct arms {
	struct arm a[ARMS_MAX];
	unsigned n;
	bool over;
};

/* The interval of keys from LO up to the next span's LO goes to TO. */
struct span {
	uint32_t lo;
	uint8_t to;
};

static void put(struct prog *p, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf, uint8_t how)
{
	if (p->pc >= CF_IPC_FILTER_MAX) {
		p->over = true;
		return;
	}
	p->f[p->pc] = (struct sock_filter){code, jt, jf, k};
	p->how[p->pc++] = how;
}

static void load(struct prog *p, uint32_t off)
{
	put(p, BPF_LD | BPF_W | BPF_ABS, off, 0, 0, 0);
}

static void ret(struct prog *p, enum label l, uint32_t v)
{
	p->at[l] = (int)p->pc;
	put(p, BPF_RET | BPF_K, v, 0, 0, 0);
}

static void if_eq(struct prog *p, uint32_t k, enum label yes, enum label no)
{
	put(p, BPF_JMP | BPF_JEQ | BPF_K, k, (uint8_t)yes, (uint8_t)no, JT_LABEL | JF_LABEL);
}

static void place(struct prog *p, enum label l)
{
	p->at[l] = (int)p->pc;
}

/* A table's answers in the order they are given; the first for a key wins,
 * as the first comparison of a list does. */
static void arm(struct arms *t, uint32_t key, enum label to)
{
	for (unsigned i = 0; i < t->n; i++)
		if (t->a[i].key == key)
			return;
	if (t->n >= ARMS_MAX) {
		t->over = true;
		return;
	}
	t->a[t->n++] = (struct arm){key, (uint8_t)to};
}

/* A list: one comparison an arm, in the table's order, then OTHERWISE. An
 * arm that goes where the rest goes is left out. */
static void chain(struct prog *p, const struct arms *t, enum label otherwise)
{
	unsigned end = t->n; /* past the last arm that goes elsewhere */
	p->over |= t->over;
	while (end > 0 && t->a[end - 1].to == otherwise)
		end--;
	if (end == 0) /* nothing to compare: straight on */
		put(p, BPF_JMP | BPF_JGE | BPF_K, 0, (uint8_t)otherwise, (uint8_t)otherwise,
		    JT_LABEL | JF_LABEL);
	for (unsigned i = 0; i < end; i++) {
		if (t->a[i].to == otherwise)
			continue;
		if (i + 1 == end)
			if_eq(p, t->a[i].key, (enum label)t->a[i].to, otherwise);
		else
			put(p, BPF_JMP | BPF_JEQ | BPF_K, t->a[i].key, t->a[i].to, 0, JT_LABEL);
	}
}

static void add_span(struct span *s, unsigned *n, uint32_t lo, uint8_t to)
{
	if (*n && s[*n - 1].lo == lo) { /* an empty interval before it */
		(*n)--;
	}
	if (*n && s[*n - 1].to == to)
		return;
	s[(*n)++] = (struct span){lo, to};
}

/* The intervals of all 2^32 keys: the arms sorted, neighbours with one
 * answer joined, the gaps to OTHERWISE, and every key from TOP_LO on to
 * TOP_TO (above every arm). At most 2 * ARMS_MAX + 2 spans. */
static unsigned spans_of(const struct arms *t, enum label otherwise, uint32_t top_lo, enum label top_to,
			 struct span *s)
{
	struct arm a[ARMS_MAX];
	unsigned n = 0;
	for (unsigned i = 0; i < t->n; i++) {
		unsigned j = n++;
		for (; j > 0 && a[j - 1].key > t->a[i].key; j--)
			a[j] = a[j - 1];
		a[j] = t->a[i];
	}
	unsigned ns = 0;
	add_span(s, &ns, 0, (uint8_t)otherwise);
	for (unsigned i = 0; i < n && a[i].key < top_lo; i++) {
		add_span(s, &ns, a[i].key, a[i].to);
		if (a[i].key + 1 != top_lo && (i + 1 == n || a[i + 1].key != a[i].key + 1))
			add_span(s, &ns, a[i].key + 1, (uint8_t)otherwise);
	}
	add_span(s, &ns, top_lo, (uint8_t)top_to);
	return ns;
}

/* A search over spans A..B: one BPF_JGE a split, the lower half laid out
 * first; a half of one span jumps to its block. B - A - 1 instructions. */
static void tree(struct prog *p, const struct span *s, unsigned a, unsigned b)
{
	if (b - a < 2)
		return;
	unsigned mid = a + (b - a) / 2;
	uint8_t how = 0, jt = 0, jf = 0;
	if (b - mid == 1)
		jt = s[mid].to, how |= JT_LABEL;
	else if (mid - a - 1 > 255)
		p->over = true;
	else
		jt = (uint8_t)(mid - a - 1); /* past the lower half */
	if (mid - a == 1)
		jf = s[a].to, how |= JF_LABEL;
	put(p, BPF_JMP | BPF_JGE | BPF_K, s[mid].lo, jt, jf, how);
	tree(p, s, a, mid);
	tree(p, s, mid, b);
}

static void search(struct prog *p, const struct arms *t, enum label otherwise, uint32_t top_lo,
		   enum label top_to)
{
	struct span s[2 * ARMS_MAX + 2];
	p->over |= t->over;
	unsigned n = spans_of(t, otherwise, top_lo, top_to, s);
	if (n == 1)
		put(p, BPF_JMP | BPF_JGE | BPF_K, 0, s[0].to, s[0].to, JT_LABEL | JF_LABEL);
	tree(p, s, 0, n);
}

/* Labels to relative jumps: the program's length, or 0 when a jump does not
 * reach (over 255 instructions ahead) or the program does not fit. */
static unsigned lay_out(struct prog *p)
{
	if (p->over)
		return 0;
	for (unsigned pc = 0; pc < p->pc; pc++) {
		struct sock_filter *i = &p->f[pc];
		for (int side = 0; side < 2; side++) {
			uint8_t *j = side ? &i->jf : &i->jt;
			if (!(p->how[pc] & (side ? JF_LABEL : JT_LABEL)))
				continue;
			int at = *j < L_COUNT ? p->at[*j] : -1;
			if (at <= (int)pc || at - (int)pc - 1 > 255)
				return 0;
			*j = (uint8_t)(at - (int)pc - 1);
		}
	}
	return p->pc;
}

#define NR_OF(name, nr) nr,
#define POS_N(name, nr) P_N_##name,
#define POS_IOC(name, cmd, what) P_IOC_##name,
enum { NATIVE_TRAP(POS_N) N_NATIVE };
enum { CF_META_IOCTLS(POS_IOC) N_IOC };
static const uint32_t native_trap[] = {NATIVE_TRAP(NR_OF)};
#ifdef COMPAT_DENY
static const uint32_t compat_deny[] = {COMPAT_DENY(NR_OF)};
#endif
#define IOC_CMD(name, cmd, what) (uint32_t)(cmd),
#define IOC_TO(name, cmd, what) L_##what,
static const uint32_t ioc_cmd[] = {CF_META_IOCTLS(IOC_CMD)};
static const uint8_t ioc_to[] = {CF_META_IOCTLS(IOC_TO)};

/* In the mount namespace of the fenced tree (tree_ns.h) every mount but
 * the writable locations is read-only: the kernel itself refuses a metadata
 * change outside them with EROFS, and inside them it is allowed anyway. The
 * metadata calls then go to the kernel directly; the sockets stay trapped,
 * and so do the ioctls the read-only mount does not refuse. */
static enum label native_to(unsigned pos, bool meta_by_mounts)
{
	return meta_by_mounts && pos != P_N_connect && pos != P_N_bind ? L_ALLOW : L_TRAP;
}

static enum label ioctl_to(unsigned pos, bool meta_by_mounts)
{
	if (meta_by_mounts && (pos == P_IOC_FS_IOC_SETFLAGS || pos == P_IOC_FS_IOC32_SETFLAGS ||
			       pos == P_IOC_FS_IOC_FSSETXATTR))
		return L_ALLOW;
	return (enum label)ioc_to[pos];
}

/* Before Landlock ABI 6 (no scope for abstract sockets), DGRAM: a Unix
 * datagram socket can sendto() an abstract name bound outside the fence,
 * and no connect() is there to judge. Such a socket is made by the
 * supervisor instead, in a network namespace of the fenced tree's own
 * (sup_dgram.c), whose abstract names only the fenced tree binds. The
 * 32-bit tables refuse it (their bind and connect are refused already). */
unsigned cf_ipc_filter_build(struct sock_filter *out, bool meta_by_mounts)
{
	return cf_ipc_filter_build_dgram(out, meta_by_mounts, false);
}

unsigned cf_ipc_filter_build_dgram(struct sock_filter *out, bool meta_by_mounts, bool dgram)
{
	struct prog p = {.f = out};
	struct arms t;
	for (unsigned l = 0; l < L_COUNT; l++)
		p.at[l] = -1;

	load(&p, offsetof(struct seccomp_data, arch));
	if_eq(&p, NATIVE_ARCH, L_NATIVE, L_NOT_NATIVE);
	place(&p, L_NATIVE);
	load(&p, offsetof(struct seccomp_data, nr));
	t.n = 0, t.over = false;
	arm(&t, NATIVE_IOCTL, L_IOCTL);
	arm(&t, NR_IO_URING_SETUP, L_ENOSYS);
	arm(&t, NR_FILE_SETATTR, L_ENOSYS);
	arm(&t, NATIVE_PRCTL, L_PRCTL);
	if (dgram) {
		arm(&t, NATIVE_SOCKET, L_SOCKET);
		arm(&t, NATIVE_SOCKETPAIR, L_SOCKET);
	}
	/* Allowed here; refused in the mount namespace of the fenced tree.
	 * Landlock refuses mount, umount, move_mount and pivot_root to a
	 * sandboxed process, but not mount_setattr: one that holds
	 * CAP_SYS_ADMIN in the namespace's owner (root, who keeps it over
	 * exec) could clear MOUNT_ATTR_RDONLY. The x32 and i386 tables have
	 * it too (442, a struct of the same layout): refused there as well. */
	arm(&t, NR_MOUNT_SETATTR, meta_by_mounts ? L_DENY : L_ALLOW);
	for (unsigned i = 0; i < N_NATIVE; i++)
		arm(&t, native_trap[i], native_to(i, meta_by_mounts));
#ifdef X32_BIT
	search(&p, &t, L_ALLOW, X32_BIT, L_X32);
#else
	search(&p, &t, L_ALLOW, UINT32_MAX, L_ALLOW);
#endif

	/* The kernel truncates an ioctl's cmd to unsigned int: only the low word decides. */
	place(&p, L_IOCTL);
	load(&p, LOW(1));
	t.n = 0, t.over = false;
	for (unsigned i = 0; i < N_IOC; i++)
		arm(&t, ioc_cmd[i], ioctl_to(i, meta_by_mounts));
	arm(&t, (uint32_t)TIOCGPTPEER, L_TRAP); /* a new pty's slave, opened by the supervisor */
	arm(&t, (uint32_t)CF_DENIAL_IOCTL, L_DENIAL);
	chain(&p, &t, L_ALLOW);
	place(&p, L_DENIAL);
	load(&p, LOW(0));
	if_eq(&p, CF_DENIAL_FD, L_TRAP, L_ALLOW);

	place(&p, L_PRCTL);
	load(&p, LOW(0));
	if_eq(&p, PR_SET_DUMPABLE_, L_PRCTL_ARG, L_ALLOW);
	place(&p, L_PRCTL_ARG);
	load(&p, LOW(1));
	if_eq(&p, 0, L_FAKE_OK, L_ALLOW);

	if (dgram) {
		/* socket(AF_UNIX, SOCK_DGRAM | flags, ...), socketpair too. */
		place(&p, L_SOCKET);
		load(&p, LOW(0));
		if_eq(&p, AF_UNIX, L_SOCKET_TYPE, L_ALLOW);
		place(&p, L_SOCKET_TYPE);
		load(&p, LOW(1));
		put(&p, BPF_ALU | BPF_AND | BPF_K, 0xf, 0, 0, 0); /* SOCK_TYPE_MASK */
		if_eq(&p, SOCK_DGRAM, L_TRAP, L_ALLOW);
	}

#ifdef X32_BIT
	/* x32: the x32 bit cleared, the same list (and x32's own ioctl) refused. */
	place(&p, L_X32);
	put(&p, BPF_ALU | BPF_AND | BPF_K, ~X32_BIT, 0, 0, 0);
	t.n = 0, t.over = false;
	arm(&t, NATIVE_IOCTL, L_X_IOCTL);
	arm(&t, X32_IOCTL, L_X_IOCTL);
	if (dgram) {
		arm(&t, NATIVE_SOCKET, L_X_SOCKET);
		arm(&t, NATIVE_SOCKETPAIR, L_X_SOCKET);
	}
	for (unsigned i = 0; i < N_NATIVE; i++)
		arm(&t, native_trap[i], L_DENY);
	if (meta_by_mounts) /* as natively: the mounts must stay read-only */
		arm(&t, NR_MOUNT_SETATTR, L_DENY);
	chain(&p, &t, L_ALLOW);
	place(&p, L_X_IOCTL);
	load(&p, LOW(1));
	t.n = 0, t.over = false;
	for (unsigned i = 0; i < N_IOC; i++)
		arm(&t, ioc_cmd[i], L_DENY);
	chain(&p, &t, L_ALLOW);
	if (dgram) { /* any Unix socket: x32 can bind and connect none */
		place(&p, L_X_SOCKET);
		load(&p, LOW(0));
		if_eq(&p, AF_UNIX, L_DENY, L_ALLOW);
	}
#endif

	place(&p, L_NOT_NATIVE);
#ifdef COMPAT_DENY
	if_eq(&p, COMPAT_ARCH, L_C, L_KILL);
	place(&p, L_C);
	/* A load the answer does not depend on: it keeps the 32-bit numbers out
	 * of the action cache's run, as in the terminal filter (ttyfilter.c),
	 * whether or not that filter is below this one. */
	load(&p, offsetof(struct seccomp_data, instruction_pointer));
	load(&p, offsetof(struct seccomp_data, nr));
	t.n = 0, t.over = false;
	arm(&t, COMPAT_SOCKETCALL, L_C_SOCKETCALL);
	arm(&t, COMPAT_IOCTL, L_C_IOCTL);
	if (dgram) {
		arm(&t, COMPAT_SOCKET, L_C_SOCKET);
		arm(&t, COMPAT_SOCKETPAIR, L_C_SOCKET);
	}
	for (unsigned i = 0; i < sizeof compat_deny / sizeof *compat_deny; i++)
		arm(&t, compat_deny[i], L_DENY);
	if (meta_by_mounts)
		arm(&t, NR_MOUNT_SETATTR, L_DENY);
	chain(&p, &t, L_ALLOW);
	/* socketcall(call, args): SYS_BIND is 2, SYS_CONNECT 3. */
	place(&p, L_C_SOCKETCALL);
	load(&p, LOW(0));
	t.n = 0, t.over = false;
	arm(&t, 2, L_DENY);
	arm(&t, 3, L_DENY);
	if (dgram) { /* SYS_SOCKET, SYS_SOCKETPAIR: their domain is in memory */
		arm(&t, 1, L_DENY);
		arm(&t, 8, L_DENY);
	}
	chain(&p, &t, L_ALLOW);
	place(&p, L_C_IOCTL);
	load(&p, LOW(1));
	t.n = 0, t.over = false;
	for (unsigned i = 0; i < N_IOC; i++)
		arm(&t, ioc_cmd[i], L_DENY);
	chain(&p, &t, L_ALLOW);
	if (dgram) {
		place(&p, L_C_SOCKET);
		load(&p, LOW(0));
		if_eq(&p, AF_UNIX, L_DENY, L_ALLOW);
	}
#endif
	ret(&p, L_KILL, SECCOMP_RET_KILL_PROCESS);
	ret(&p, L_ALLOW, SECCOMP_RET_ALLOW);
	ret(&p, L_TRAP, SECCOMP_RET_USER_NOTIF);
	ret(&p, L_ENOSYS, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
	ret(&p, L_DENY, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	ret(&p, L_FAKE_OK, SECCOMP_RET_ERRNO | 0);
	return lay_out(&p);
}

const struct sock_filter *cf_ipc_filter_program(unsigned short *len)
{
	static struct sock_filter f[CF_IPC_FILTER_MAX];
	*len = (unsigned short)cf_ipc_filter_build(f, false);
	return *len ? f : NULL;
}

static long install_filter(unsigned long flags, bool meta_by_mounts, bool dgram)
{
	struct sock_filter f[CF_IPC_FILTER_MAX];
	struct sock_fprog prog = {
		.len = (unsigned short)cf_ipc_filter_build_dgram(f, meta_by_mounts, dgram), .filter = f};
	if (prog.len == 0)
		return -E2BIG; /* a table outgrew the builder: fail closed */
	return cf_sys3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

#else

unsigned cf_ipc_filter_build(struct sock_filter *out, bool meta_by_mounts)
{
	(void)out;
	(void)meta_by_mounts;
	return 0;
}

unsigned cf_ipc_filter_build_dgram(struct sock_filter *out, bool meta_by_mounts, bool dgram)
{
	(void)dgram;
	return cf_ipc_filter_build(out, meta_by_mounts);
}

const struct sock_filter *cf_ipc_filter_program(unsigned short *len)
{
	*len = 0;
	return NULL;
}

static long install_filter(unsigned long flags, bool meta_by_mounts, bool dgram)
{
	(void)flags;
	(void)meta_by_mounts;
	(void)dgram;
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
 * handler, holding the lock that handler takes (shim/linux/thread.c): a
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
