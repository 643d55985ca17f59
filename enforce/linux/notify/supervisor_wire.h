/* The IPC fence's wire format, private to enforce/linux/notify/ipc.c (the child side),
 * the supervisor (enforce/linux/notify/supervisor.c and its sup_*.c parts) and their
 * tests: what the two sides agree on.
 *
 * The blob (cf_ipc_prepare): the magic "cfipc1" and its NUL, then records,
 * each one kind byte followed by a NUL-terminated string:
 *   'w' PATH   a writable location (absolute): metadata changes beneath it
 *   's' PATH   an allowed socket file (absolute)
 *   's' @NAME  an allowed abstract socket name (the bytes after '@')
 * Anything else, or a record without its NUL, makes the supervisor refuse the
 * fence (-EINVAL). A blob is at most CF_IPC_BLOB_MAX bytes (one SOCK_SEQPACKET
 * message, with the listener as SCM_RIGHTS).
 *
 * The answer: one int, 0 (the supervisor serves the listener) or -errno. */
#ifndef CF_SUPERVISOR_WIRE_H
#define CF_SUPERVISOR_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#define CF_IPC_MAGIC "cfipc1"
#define CF_IPC_BLOB_MAX 60000

/* The mount namespace of the fenced tree of a harness's children
 * (shared_ns.h), on the same socket and after the same identity check
 * (issue 31): a child that lost the descriptors its harness held (a harness
 * that closes every descriptor, a static harness that keeps only 0-2, a
 * launch the shim did not see) gets them from the supervisor.
 *   "cfnsg1" give: the harness's guard, once, before it execs the harness:
 *            a struct cf_ns_wire with SCM_RIGHTS user, mnt[, keeper's socket].
 *            Taken only from the supervisor's own child (the process that
 *            becomes the harness, by SO_PEERCRED) and only the first time.
 *   "cfnsq1" ask: a struct cf_ns_wire (its magic alone); the answer is a
 *            struct cf_ns_wire, RC 0 with SCM_RIGHTS user, mnt[, keeper's
 *            socket], RC -ENOENT: the supervisor holds none, or RC
 *            -EALREADY: the caller is in that mount namespace already (by
 *            /proc/PID/ns/mnt of its SO_PEERCRED): no fenced process in it
 *            gets them.
 *   "cfsay1" say: a struct cf_say_wire: a child that write protection
 *            refused, for the user's terminal (the supervisor's stderr as it
 *            started, kept until the harness ends). No answer but an int. */
#define CF_NS_GIVE_MAGIC "cfnsg1"
#define CF_NS_ASK_MAGIC "cfnsq1"
#define CF_SAY_MAGIC "cfsay1"
struct cf_ns_wire {
	char magic[8];
	int rc;
	int nfds; /* 2, or 3 with the keeper's socket */
	unsigned long long user_ino, mnt_ino, dev, held;
	int root;
	int keeper_pid;
};
struct cf_say_wire {
	char magic[8];
	char program[256];
	char why[1024];
};

/* The words for probe failures of pidfd_open/pidfd_getfd (cf_ipc_probe). */

/* Seconds the child side waits for the supervisor's answer. */
#define CF_IPC_ANSWER_TIMEOUT 10

/* ---- the metadata ioctls: ONE table ----
 * Every ioctl in the kernel's uapi headers that changes an inode (or its
 * filesystem) through a descriptor that may be open read-only: Landlock
 * judges none of them (LANDLOCK_ACCESS_FS_IOCTL_DEV covers device files
 * only), and ioctl(2) needs no write access to the file for these.
 *   TRAP  the supervisor acts on the caller's behalf, on the caller's own
 *         descriptor (pidfd_getfd) and a copy of the argument (an int, or
 *         struct fsxattr), inside the writable locations only (sup_meta.c,
 *         cf_sup_handle_meta): what it judged is what it changes.
 *   DENY  EPERM from the filter, everywhere: nothing an agent runs needs it,
 *         and its argument (pointers inside structs) is not worth teaching
 *         the supervisor.
 * The filter (filter_gen.c) and the supervisor read this table and nothing else;
 * compat (i386) and x32 calls get EPERM for every row. Not listed: ioctls
 * that need a descriptor open for writing (FICLONE, FIDEDUPERANGE,
 * EXT4_IOC_MOVE_EXT, XFS_IOC_EXCHANGE_RANGE, F2FS_IOC_DEFRAGMENT ...), whose
 * open Landlock already decided. SECURITY.md has the same list.
 *
 *  name                           cmd (low 32 bits)  what          source (include/uapi/linux/, fs/) */
#define CF_IOC_FSSETXATTR 0x401c5820U /* the one row whose argument is not an int */
#define CF_META_IOCTLS(X)                                                                          \
	X(FS_IOC_SETFLAGS, 0x40086602U, TRAP)        /* fs.h: _IOW('f', 2, long)             */  \
	X(FS_IOC32_SETFLAGS, 0x40046602U, TRAP)      /* fs.h: _IOW('f', 2, int)              */  \
	X(FS_IOC_FSSETXATTR, CF_IOC_FSSETXATTR, TRAP) /* fs.h: _IOW('X', 32, struct fsxattr) */ \
	X(FS_IOC_SETVERSION, 0x40087602U, TRAP)      /* fs.h: _IOW('v', 2, long)             */  \
	X(FS_IOC32_SETVERSION, 0x40047602U, TRAP)    /* fs.h: _IOW('v', 2, int)              */  \
	X(EXT4_IOC_SETVERSION, 0x40086604U, TRAP)    /* fs/ext4/ext4.h: _IOW('f', 4, long)   */  \
	X(EXT4_IOC32_SETVERSION, 0x40046604U, TRAP)  /* fs/ext4/ext4.h: _IOW('f', 4, int)    */  \
	X(FS_IOC_SET_ENCRYPTION_POLICY, 0x800c6613U, DENY) /* fscrypt.h: _IOR('f', 19, v1)   */  \
	X(FS_IOC_ENABLE_VERITY, 0x40806685U, DENY)   /* fsverity.h: _IOW('f', 133, ...)      */  \
	X(FS_IOC_SETFSLABEL, 0x41009432U, DENY)      /* fs.h: _IOW(0x94, 50, char[256])      */  \
	X(EXT4_IOC_SETFSUUID, 0x4008662cU, DENY)     /* fs/ext4/ext4.h: _IOW('f', 44, ...)   */  \
	X(EXT4_IOC_MIGRATE, 0x00006609U, DENY)       /* fs/ext4/ext4.h: _IO('f', 9)          */  \
	X(BTRFS_IOC_SUBVOL_SETFLAGS, 0x4008941aU, DENY) /* btrfs.h: _IOW(0x94, 26, __u64)     */  \
	X(BTRFS_IOC_SET_RECEIVED_SUBVOL, 0xc0c89425U, DENY) /* btrfs.h: _IOWR(0x94, 37, ...) */  \
	X(F2FS_IOC_SET_PIN_FILE, 0x4004f50dU, DENY)  /* f2fs.h: _IOW(0xf5, 13, __u32)        */  \
	X(F2FS_IOC_RELEASE_COMPRESS_BLOCKS, 0x8008f512U, DENY) /* f2fs.h: _IOR(0xf5, 18, u64) */ \
	X(F2FS_IOC_RESERVE_COMPRESS_BLOCKS, 0x8008f513U, DENY) /* f2fs.h: _IOR(0xf5, 19, u64) */ \
	X(F2FS_IOC_SET_COMPRESS_OPTION, 0x4002f516U, DENY) /* f2fs.h: _IOW(0xf5, 22, 2 bytes) */

/* The notification filter of cf_ipc_enter as the child installs it
 * (filters.h, compiled by libseccomp at the build): with the metadata calls
 * left to the kernel when META_BY_MOUNTS, and with DGRAM (Landlock ABI below
 * 6) a Unix datagram socket() or socketpair() to the supervisor
 * (sup_dgram.h), both as in struct cf_ipc. Its length in *LEN; NULL where
 * there is none. A constant: safe between fork and exec. */
struct sock_filter;
const struct sock_filter *cf_ipc_filter(bool meta_by_mounts, bool dgram, unsigned short *len);

#endif
