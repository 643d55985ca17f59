/* The IPC filter as enforce/linux/notify/ipc.c wrote it before it was built as a
 * search tree (main at 9ec1a32, a table of 174 instructions), kept word for
 * word as the reference that tests/enforce/test_ipc_filter.c holds the built
 * program to, and that cf-bench's "ipcfilter" row installs as "before".
 * x86_64 only (the machine it was measured on). Not to be changed: a change
 * of verdict is made in ipc.c and shown in the test as a difference from
 * this program. It reads the current metadata ioctl table
 * (supervisor_wire.h), which the two programs share. */
#ifndef CF_IPC_REFERENCE_H
#define CF_IPC_REFERENCE_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "notify/bpf.h"
#include "notify/sup_denied.h"
#include "notify/supervisor_wire.h"

#if defined(__x86_64__)
#define CF_HAVE_IPC_REFERENCE 1

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
#define COMPAT_DENY(X)                                                                            \
	X(connect, 362) X(bind, 361) X(chmod, 15) X(fchmod, 94) X(fchmodat, 306)                  \
	X(fchmodat2, 452) X(chown16, 182) X(fchown16, 95) X(lchown16, 16) X(chown32, 212)         \
	X(fchown32, 207) X(lchown32, 198) X(fchownat, 298) X(utime, 30) X(utimes, 271)            \
	X(futimesat, 299) X(utimensat, 320) X(utimensat64, 412) X(setxattr, 226)                  \
	X(lsetxattr, 227) X(fsetxattr, 228) X(removexattr, 235) X(lremovexattr, 236)              \
	X(fremovexattr, 237) X(setxattrat, 463) X(removexattrat, 466)                              \
	X(io_uring_setup, 425) X(file_setattr, 469)
#endif

#ifdef NATIVE_ARCH

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LOW(i) offsetof(struct seccomp_data, args[i])
#else
#define LOW(i) (offsetof(struct seccomp_data, args[i]) + 4)
#endif

#define POS_N(name, nr) P_N_##name,
#define POS_C(name, nr) P_C_##name,
#define POS_IOC(name, cmd, what) P_IOC_##name,
enum { NATIVE_TRAP(POS_N) N_NATIVE };
enum { CF_META_IOCTLS(POS_IOC) N_IOC };
#ifdef COMPAT_DENY
enum { COMPAT_DENY(POS_C) N_COMPAT };
#endif

enum {
	I_ARCH,
	I_IS_NATIVE,
	I_NR,
#ifdef X32_BIT
	I_IS_X32,
#endif
	I_IOCTL,
	I_URING,
	I_FILE_SETATTR,
	I_PRCTL,
	I_MOUNT_SETATTR,
	I_N_LIST,
	I_N_ALLOW = I_N_LIST + N_NATIVE,
	I_N_CMD,
	I_N_IOC,
	I_N_PTPEER = I_N_IOC + N_IOC,
	I_N_DENIAL_CMD, /* a denial's report, ioctl(-1, CF_DENIAL_IOCTL) (sup_denied.h) */
	I_N_DENIAL_LOAD_FD,
	I_N_DENIAL_FD,
	I_N_IOC_ALLOW,
	I_N_IOC_DENY,
	I_TRAP,
	I_PRCTL_OP,
	I_PRCTL_IS_DUMPABLE,
	I_PRCTL_ARG,
	I_PRCTL_IS_ZERO,
	I_PRCTL_ALLOW,
	I_FAKE_OK,
	I_ENOSYS,
#ifdef X32_BIT
	/* x32: the x32 bit cleared, the same list (and x32's own ioctl) refused. */
	I_X_CLEAR,
	I_X_IOCTL_A,
	I_X_IOCTL_B,
	I_X_LIST,
	I_X_ALLOW = I_X_LIST + N_NATIVE,
	I_X_CMD,
	I_X_IOC,
	I_X_IOC_ALLOW = I_X_IOC + N_IOC,
#endif
	I_IS_COMPAT,
#ifdef COMPAT_DENY
	I_C_NR,
	I_C_SOCKETCALL,
	I_C_IOCTL,
	I_C_LIST,
	I_C_ALLOW = I_C_LIST + N_COMPAT,
	I_C_CALL,
	I_C_BIND,
	I_C_CONNECT,
	I_C_CALL_ALLOW,
	I_C_CMD,
	I_C_IOC,
	I_C_IOC_ALLOW = I_C_IOC + N_IOC,
	I_DENY,
#endif
	I_KILL,
	I_COUNT
};


#define IN_LIST(base, pos, nr, yes) [(base) + (pos)] = IF_EQ((base) + (pos), (nr), (yes), (base) + (pos) + 1),
#define N_ENTRY(name, nr) IN_LIST(I_N_LIST, P_N_##name, nr, I_TRAP)
#define X_ENTRY(name, nr) IN_LIST(I_X_LIST, P_N_##name, nr, I_DENY)
#define C_ENTRY(name, nr) IN_LIST(I_C_LIST, P_C_##name, nr, I_DENY)
/* The metadata ioctls (supervisor_wire.h): natively TRAP or DENY by the table's
 * word; x32 and compat refuse them all. */
#define IOC_TARGET_TRAP I_TRAP
#define IOC_TARGET_DENY I_N_IOC_DENY
#define NI_ENTRY(name, cmd, what) IN_LIST(I_N_IOC, P_IOC_##name, cmd, IOC_TARGET_##what)
#define XI_ENTRY(name, cmd, what) IN_LIST(I_X_IOC, P_IOC_##name, cmd, I_DENY)
#define CI_ENTRY(name, cmd, what) IN_LIST(I_C_IOC, P_IOC_##name, cmd, I_DENY)

#define ALLOW_V SECCOMP_RET_ALLOW
#define DENY_V (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

static const struct sock_filter ref_ipcfilter[I_COUNT] = {
	[I_ARCH] = LOAD(offsetof(struct seccomp_data, arch)),
	[I_IS_NATIVE] = IF_EQ(I_IS_NATIVE, NATIVE_ARCH, I_NR, I_IS_COMPAT),
	[I_NR] = LOAD(offsetof(struct seccomp_data, nr)),
#ifdef X32_BIT
	[I_IS_X32] = IF_GE(I_IS_X32, X32_BIT, I_X_CLEAR, I_IOCTL),
#endif
	[I_IOCTL] = IF_EQ(I_IOCTL, NATIVE_IOCTL, I_N_CMD, I_URING),
	[I_URING] = IF_EQ(I_URING, NR_IO_URING_SETUP, I_ENOSYS, I_FILE_SETATTR),
	[I_FILE_SETATTR] = IF_EQ(I_FILE_SETATTR, NR_FILE_SETATTR, I_ENOSYS, I_PRCTL),
	[I_PRCTL] = IF_EQ(I_PRCTL, NATIVE_PRCTL, I_PRCTL_OP, I_MOUNT_SETATTR),
	/* Allowed here; refused in the mount namespace of the fenced tree
	 * (leave_meta_to_mounts). */
	[I_MOUNT_SETATTR] = IF_EQ(I_MOUNT_SETATTR, NR_MOUNT_SETATTR, I_N_ALLOW, I_N_LIST),
	NATIVE_TRAP(N_ENTRY)
	[I_N_ALLOW] = RET(ALLOW_V),
	/* The kernel truncates an ioctl's cmd to unsigned int: only the low word decides. */
	[I_N_CMD] = LOAD(LOW(1)),
	CF_META_IOCTLS(NI_ENTRY)
	/* A new pty's slave, opened by the supervisor (supervisor_pty.h). */
	[I_N_PTPEER] = IF_EQ(I_N_PTPEER, (uint32_t)TIOCGPTPEER, I_TRAP, I_N_DENIAL_CMD),
	[I_N_DENIAL_CMD] = IF_EQ(I_N_DENIAL_CMD, (uint32_t)CF_DENIAL_IOCTL, I_N_DENIAL_LOAD_FD, I_N_IOC_ALLOW),
	[I_N_DENIAL_LOAD_FD] = LOAD(LOW(0)),
	[I_N_DENIAL_FD] = IF_EQ(I_N_DENIAL_FD, CF_DENIAL_FD, I_TRAP, I_N_IOC_ALLOW),
	[I_N_IOC_ALLOW] = RET(ALLOW_V),
	[I_N_IOC_DENY] = RET(DENY_V),
	[I_TRAP] = RET(SECCOMP_RET_USER_NOTIF),
	[I_PRCTL_OP] = LOAD(LOW(0)),
	[I_PRCTL_IS_DUMPABLE] = IF_EQ(I_PRCTL_IS_DUMPABLE, PR_SET_DUMPABLE_, I_PRCTL_ARG, I_PRCTL_ALLOW),
	[I_PRCTL_ARG] = LOAD(LOW(1)),
	[I_PRCTL_IS_ZERO] = IF_EQ(I_PRCTL_IS_ZERO, 0, I_FAKE_OK, I_PRCTL_ALLOW),
	[I_PRCTL_ALLOW] = RET(ALLOW_V),
	[I_FAKE_OK] = RET(SECCOMP_RET_ERRNO | 0),
	[I_ENOSYS] = RET(SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
#ifdef X32_BIT
	[I_X_CLEAR] = BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~X32_BIT),
	[I_X_IOCTL_A] = IF_EQ(I_X_IOCTL_A, NATIVE_IOCTL, I_X_CMD, I_X_IOCTL_B),
	[I_X_IOCTL_B] = IF_EQ(I_X_IOCTL_B, X32_IOCTL, I_X_CMD, I_X_LIST),
	NATIVE_TRAP(X_ENTRY)
	[I_X_ALLOW] = RET(ALLOW_V),
	[I_X_CMD] = LOAD(LOW(1)),
	CF_META_IOCTLS(XI_ENTRY)
	[I_X_IOC_ALLOW] = RET(ALLOW_V),
#endif
#ifdef COMPAT_DENY
	[I_IS_COMPAT] = IF_EQ(I_IS_COMPAT, COMPAT_ARCH, I_C_NR, I_KILL),
	[I_C_NR] = LOAD(offsetof(struct seccomp_data, nr)),
	[I_C_SOCKETCALL] = IF_EQ(I_C_SOCKETCALL, COMPAT_SOCKETCALL, I_C_CALL, I_C_IOCTL),
	[I_C_IOCTL] = IF_EQ(I_C_IOCTL, COMPAT_IOCTL, I_C_CMD, I_C_LIST),
	COMPAT_DENY(C_ENTRY)
	[I_C_ALLOW] = RET(ALLOW_V),
	/* socketcall(call, args): SYS_BIND is 2, SYS_CONNECT 3. */
	[I_C_CALL] = LOAD(LOW(0)),
	[I_C_BIND] = IF_EQ(I_C_BIND, 2, I_DENY, I_C_CONNECT),
	[I_C_CONNECT] = IF_EQ(I_C_CONNECT, 3, I_DENY, I_C_CALL_ALLOW),
	[I_C_CALL_ALLOW] = RET(ALLOW_V),
	[I_C_CMD] = LOAD(LOW(1)),
	CF_META_IOCTLS(CI_ENTRY)
	[I_C_IOC_ALLOW] = RET(ALLOW_V),
	[I_DENY] = RET(DENY_V),
#else
	[I_IS_COMPAT] = RET(SECCOMP_RET_KILL_PROCESS),
#endif
	[I_KILL] = RET(SECCOMP_RET_KILL_PROCESS),
};


/* In the mount namespace of the fenced tree (tree_ns.h) every mount but
 * the writable locations is read-only: the kernel itself refuses a metadata
 * change outside them with EROFS, and inside them it is allowed anyway. The
 * metadata calls then go to the kernel directly; the sockets stay trapped,
 * and so do the ioctls the read-only mount does not refuse. */
static void ref_leave_meta_to_mounts(struct sock_filter *p)
{
	for (size_t i = 0; i < N_NATIVE; i++) {
		if (i != P_N_connect && i != P_N_bind)
			p[I_N_LIST + i].jt = (uint8_t)(I_N_ALLOW - (I_N_LIST + i) - 1);
	}
	/* Landlock refuses mount, umount, move_mount and pivot_root to a
	 * sandboxed process, but not mount_setattr: one that holds
	 * CAP_SYS_ADMIN in the namespace's owner (root, who keeps it over
	 * exec) could clear MOUNT_ATTR_RDONLY. */
	p[I_MOUNT_SETATTR].jt = (uint8_t)(I_N_IOC_DENY - I_MOUNT_SETATTR - 1);
	static const unsigned ro_ioctls[] = {P_IOC_FS_IOC_SETFLAGS, P_IOC_FS_IOC32_SETFLAGS,
					     P_IOC_FS_IOC_FSSETXATTR};
	for (size_t i = 0; i < sizeof ro_ioctls / sizeof *ro_ioctls; i++) {
		unsigned at = I_N_IOC + ro_ioctls[i];
		p[at].jt = (uint8_t)(I_N_IOC_ALLOW - at - 1);
	}
}

/* The old program for one mode into OUT: its length. */
static inline unsigned ref_ipc_filter(struct sock_filter *out, bool meta_by_mounts)
{
	for (size_t i = 0; i < I_COUNT; i++)
		out[i] = ref_ipcfilter[i];
	if (meta_by_mounts)
		ref_leave_meta_to_mounts(out);
	return I_COUNT;
}

#endif
#endif
#endif
