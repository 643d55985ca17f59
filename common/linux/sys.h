/* Raw system calls that return -errno and touch no libc state (not even errno),
 * on x86-64, aarch64 and riscv64; other architectures do not build.
 * They are what code between fork and exec may call: a vfork child shares the
 * parent's memory, so it must not write errno, take locks or allocate. */
#ifndef CF_SYS_H
#define CF_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/syscall.h>

/* Newer than some libc headers. */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* A const string where an interface takes char * but never writes through it
 * (exec's argv, the kernel's seccomp program): said once, here, instead of a
 * cast that -Wcast-qual rightly reports. */
static inline char *cf_unconst(const char *s)
{
	return (char *)(uintptr_t)s;
}

#if defined(__x86_64__)
static inline long cf_sys6(long n, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
static inline long cf_sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}
#elif defined(__riscv) && __riscv_xlen == 64
static inline long cf_sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long a7 __asm__("a7") = n;
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	register long a3 __asm__("a3") = d;
	register long a4 __asm__("a4") = e;
	register long a5 __asm__("a5") = f;
	__asm__ volatile("ecall"
			 : "+r"(a0)
			 : "r"(a7), "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5)
			 : "memory");
	return a0;
}
#else
/* No fallback to libc's syscall function: in libcredfence.so that name is
 * the shim's own exported wrapper, and it writes errno. */
#error "common/linux/sys.h: no raw system call for this architecture (x86-64, aarch64 and riscv64 have one); add cf_sys6 for it"
#endif

#define cf_sys0(n) cf_sys6((n), 0, 0, 0, 0, 0, 0)
#define cf_sys1(n, a) cf_sys6((n), (long)(a), 0, 0, 0, 0, 0)
#define cf_sys2(n, a, b) cf_sys6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define cf_sys3(n, a, b, c) cf_sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define cf_sys4(n, a, b, c, d) cf_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define cf_sys5(n, a, b, c, d, e) cf_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

static inline int cf_sys_close(int fd)
{
	return (int)cf_sys1(SYS_close, fd);
}

static inline int cf_sys_openat(int dirfd, const char *path, int flags)
{
	return (int)cf_sys4(SYS_openat, dirfd, path, flags, 0);
}

/* 1 when this process is fenced: a fence's Landlock domain refuses to open
 * "/" (nothing lists the root), which nothing else does; else 0. */
static inline int cf_sys_fenced(void)
{
	int fd = cf_sys_openat(AT_FDCWD, "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		cf_sys_close(fd);
	return fd == -EACCES;
}

#endif
