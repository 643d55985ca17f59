/* Stub of Apple's <sys/sysctl.h> for scripts/darwin-syntax (README.md).
 * glibc has no sys/sysctl.h since 2.32. The process start time of
 * KERN_PROC_PID: struct kinfo_proc begins with struct extern_proc kp_proc
 * (sys/proc.h), whose first member is the union p_un holding
 * struct timeval __p_starttime, named p_starttime by a macro. Only what the
 * code reads is here; the real structures go on. */
#ifndef CF_STUB_SYS_SYSCTL_H
#define CF_STUB_SYS_SYSCTL_H

#include <stddef.h>
#include <sys/time.h>
#include <sys/types.h>

#define CTL_KERN 1
#define KERN_PROC 14
#define KERN_PROC_PID 1

struct extern_proc {
	union {
		struct timeval __p_starttime;
	} p_un;
#define p_starttime p_un.__p_starttime
	pid_t p_pid;
};

struct kinfo_proc {
	struct extern_proc kp_proc;
};

int sysctl(int *, u_int, void *, size_t *, void *, size_t);

#endif
