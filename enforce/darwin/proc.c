/* proc.h on macOS: there is no /proc; the kernel gives a process's start time
 * through sysctl KERN_PROC_PID. The value is microseconds since the epoch here
 * (clock ticks since boot on Linux): the marker only compares it with itself. */
#ifdef __APPLE__
#include "proc.h"

#include <sys/types.h>
#include <sys/sysctl.h>
#include <unistd.h>

unsigned long long cf_proc_self_starttime(void)
{
	struct kinfo_proc kp;
	size_t len = sizeof kp;
	int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_PID, (int)getpid()};
	if (sysctl(mib, 4, &kp, &len, NULL, 0) != 0 || len != sizeof kp)
		return 0;
	const struct timeval *t = &kp.kp_proc.p_starttime;
	return (unsigned long long)t->tv_sec * 1000000ULL + (unsigned long long)t->tv_usec;
}

/* Not known on macOS: nothing is overwritten there (SECURITY.md). */
int cf_proc_self_env_area(unsigned long *lo, unsigned long *hi)
{
	*lo = *hi = 0;
	return -1;
}

#endif
