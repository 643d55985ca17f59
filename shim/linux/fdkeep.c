/* A harness that closes every descriptor in its child before the exec
 * would close the ones that child needs to enter the mount namespace of the
 * fenced tree (enforce/linux/mountns/shared_ns.h: the two namespaces and the
 * keeper's socket), and the child would run without write protection.
 * CPython's subprocess does it by default (close_fds=True: close_range(3,
 * ~0U) between its fork and its exec), so every Python harness's children
 * lost it. A range that covers them is closed around them instead: they are
 * close-on-exec already, so the program that runs has none of them, as the
 * caller wanted. Raw system calls only: these are called between fork and
 * exec, and in signal handlers. A harness that closes them one by one with
 * close() (an older CPython, or its own loop) still loses them
 * (SECURITY.md). */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"
#include "sys.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

/* The harness's descriptors in [FIRST, LAST], ascending, into OUT (3 at
 * most): none outside the harness. */
static int kept_in(unsigned first, unsigned last, unsigned out[3])
{
	if (!__atomic_load_n(&cf_shim.ready, __ATOMIC_ACQUIRE) || cf_shim.role != CF_ROLE_HARNESS)
		return 0;
	int fds[3];
	cf_fence_harness_ns_fds(fds);
	int n = 0;
	for (int i = 0; i < 3; i++)
		if (fds[i] > 2 && (unsigned)fds[i] >= first && (unsigned)fds[i] <= last)
			out[n++] = (unsigned)fds[i];
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
			unsigned t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

long cf_shim_close_range(unsigned first, unsigned last, unsigned flags)
{
	unsigned kept[3];
	int n = first <= last ? kept_in(first, last, kept) : 0;
	if (!n)
		return cf_sys3(SYS_close_range, first, last, flags);
	unsigned from = first;
	long rc;
	/* Around each of ours; the table is unshared once, by the first call,
	 * and the others close in the new one. Ours are ints: +1 stays in range. */
	for (int i = 0; i < n; i++) {
		if (kept[i] > from) {
			if ((rc = cf_sys3(SYS_close_range, from, kept[i] - 1, flags)))
				return rc;
			flags &= ~CLOSE_RANGE_UNSHARE;
		}
		from = kept[i] + 1;
	}
	return from <= last ? cf_sys3(SYS_close_range, from, last, flags) : 0;
}

CF_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	long rc = cf_shim_close_range(first, last, (unsigned)flags);
	if (rc < 0) {
		errno = (int)-rc;
		return -1;
	}
	return 0;
}

CF_EXPORT void closefrom(int lowfd)
{
	(void)cf_shim_close_range(lowfd < 0 ? 0 : (unsigned)lowfd, ~0U, 0);
}
