#include "ttyfilter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include "bpf.h"
#include "sys.h"

/* A process reaches ioctl through every system call table its kernel has, so
 * each one is checked: a 64-bit program may still make 32-bit calls (int 0x80
 * on x86_64, or a 32-bit program it execs), and x32 calls carry the native
 * arch with a flag in the number. The same for open_by_handle_at (HANDLE):
 * the numbers are each table's (arch/x86/entry/syscalls/syscall_64.tbl and
 * syscall_32.tbl, include/uapi/asm-generic/unistd.h, arch/arm/tools/syscall.tbl). */
#define X32_BIT 0x40000000U
#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define NATIVE_IOCTL 16
#define NATIVE_HANDLE 304
#define X32_IOCTL_A (X32_BIT | 16)  /* older kernels let x32 reach the 64-bit entry */
#define X32_IOCTL_B (X32_BIT | 514) /* x32's own ioctl */
#define X32_HANDLE (X32_BIT | 304)  /* a common entry: the same number */
#define COMPAT_ARCH AUDIT_ARCH_I386
#define COMPAT_IOCTL 54
#define COMPAT_HANDLE 342
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define NATIVE_IOCTL 29
#define NATIVE_HANDLE 265
#define COMPAT_ARCH AUDIT_ARCH_ARM
#define COMPAT_IOCTL 54
#define COMPAT_HANDLE 371
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
#define NATIVE_IOCTL 29
#define NATIVE_HANDLE 265
#define COMPAT_ARCH AUDIT_ARCH_RISCV32
#define COMPAT_IOCTL 29
#define COMPAT_HANDLE 265
#endif

#ifdef NATIVE_ARCH
#ifndef X32_IOCTL_A
/* No x32 numbering: no real call reaches these checks (numbers from
 * X32_BIT up are none of this table's), which repeat the native ones. */
#define X32_IOCTL_A NATIVE_IOCTL
#define X32_IOCTL_B NATIVE_IOCTL
#define X32_HANDLE NATIVE_HANDLE
#endif

/* The kernel truncates an ioctl's cmd to unsigned int, so only the low word of
 * args[1] decides: 0x100005412 is TIOCSTI as well. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CMD_LOW offsetof(struct seccomp_data, args[1])
#else
#define CMD_LOW (offsetof(struct seccomp_data, args[1]) + 4)
#endif

enum {
	I_ARCH,
	I_IS_NATIVE,
	I_NR,
	I_IS_X32,
	I_IOCTL,
	I_HANDLE,
	I_X32_A,
	I_X32_B,
	I_X32_HANDLE,
	I_IS_COMPAT,
	I_COMPAT_UNCACHED,
	I_COMPAT_NR,
	I_COMPAT_IOCTL,
	I_COMPAT_HANDLE,
	I_CMD,
	I_STI,
	I_LINUX,
	I_ALLOW,
	I_DENY,
	I_KILL,
	I_COUNT
};


static const struct sock_filter cf_ttyfilter[I_COUNT] = {
	[I_ARCH] = LOAD(offsetof(struct seccomp_data, arch)),
	[I_IS_NATIVE] = IF_EQ(I_IS_NATIVE, NATIVE_ARCH, I_NR, I_IS_COMPAT),
	[I_NR] = LOAD(offsetof(struct seccomp_data, nr)),
	/* The native numbers take as many steps to the answer as before the
	 * handle check (arch, native, nr, then three): the kernel's action
	 * cache is built as fast (see I_COMPAT_UNCACHED). */
	[I_IS_X32] = IF_GE(I_IS_X32, X32_BIT, I_X32_A, I_IOCTL),
	[I_IOCTL] = IF_EQ(I_IOCTL, NATIVE_IOCTL, I_CMD, I_HANDLE),
	/* open_by_handle_at: a handle names an inode of a file system, and
	 * opened through any mount of it (a writable location is one of its
	 * own), it reaches the inode whatever the mount's root is; with
	 * CAP_DAC_READ_SEARCH (root) that read a secret past Landlock.
	 * Nothing inside the fence needs it: refused for everyone. */
	[I_HANDLE] = IF_EQ(I_HANDLE, NATIVE_HANDLE, I_DENY, I_ALLOW),
	[I_X32_A] = IF_EQ(I_X32_A, X32_IOCTL_A, I_CMD, I_X32_B),
	[I_X32_B] = IF_EQ(I_X32_B, X32_IOCTL_B, I_CMD, I_X32_HANDLE),
	[I_X32_HANDLE] = IF_EQ(I_X32_HANDLE, X32_HANDLE, I_DENY, I_ALLOW),
	/* An arch this kernel can not produce here: refuse, do not guess. */
	[I_IS_COMPAT] = IF_EQ(I_IS_COMPAT, COMPAT_ARCH, I_COMPAT_UNCACHED, I_KILL),
	/* A load the result does not depend on (the next one replaces it), for
	 * the kernel's action cache: when a filter is installed, the kernel
	 * runs it for every number of each table to find the calls it always
	 * allows (seccomp_cache_prepare), about 1.3 us an instruction on the
	 * way to the answer, and a load of anything but the number or the arch
	 * ends that run. Here it ends it for every 32-bit call, in this filter
	 * and in the IPC filter installed after it (ipc.c), whose 32-bit list
	 * is 34 instructions long: 30 to 40 us of every fenced child's start.
	 * 32-bit calls then run the filters each time, as a 32-bit ioctl did. */
	[I_COMPAT_UNCACHED] = LOAD(offsetof(struct seccomp_data, instruction_pointer)),
	[I_COMPAT_NR] = LOAD(offsetof(struct seccomp_data, nr)),
	[I_COMPAT_IOCTL] = IF_EQ(I_COMPAT_IOCTL, COMPAT_IOCTL, I_CMD, I_COMPAT_HANDLE),
	[I_COMPAT_HANDLE] = IF_EQ(I_COMPAT_HANDLE, COMPAT_HANDLE, I_DENY, I_ALLOW),
	[I_CMD] = LOAD(CMD_LOW),
	[I_STI] = IF_EQ(I_STI, (uint32_t)TIOCSTI, I_DENY, I_LINUX),
	[I_LINUX] = IF_EQ(I_LINUX, (uint32_t)TIOCLINUX, I_DENY, I_ALLOW),
	[I_ALLOW] = RET(SECCOMP_RET_ALLOW),
	[I_DENY] = RET(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
	[I_KILL] = RET(SECCOMP_RET_KILL_PROCESS),
};

const struct sock_filter *cf_ttyfilter_program(unsigned short *len)
{
	*len = I_COUNT;
	return cf_ttyfilter;
}

int cf_ttyfilter_install(void)
{
	/* The kernel copies the program; it never writes through this pointer. */
	struct sock_fprog prog = {.len = I_COUNT, .filter = (struct sock_filter *)(uintptr_t)cf_ttyfilter};
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
