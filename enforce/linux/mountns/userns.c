#include "userns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nolibc.h"
#include "sys.h"

#ifndef MS_REC
#define MS_REC 16384
#endif
#ifndef MS_SLAVE
#define MS_SLAVE (1 << 19)
#endif

const char *cf_userns_fault_word(void)
{
	static const char *const words[] = {"", "sysctl", "maxns", "seccomp", "apparmor"};
	return words[cf_userns_fault()];
}

/* What Ubuntu's AppArmor leaves to a process that made a user namespace
 * without a profile that grants it: no capability in it (the switch's
 * apparmor case). Raw system calls. */
static int drop_every_cap(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0, 0, 0}, {0, 0, 0}};
	for (long c = 0; c < 64; c++)
		if (cf_sys2(SYS_prctl, PR_CAPBSET_DROP, c) == -EINVAL)
			break;
	(void)cf_sys2(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL);
	return (int)cf_sys2(SYS_capset, &h, d);
}

int cf_userns_unshare(unsigned long flags)
{
	bool user = cf_sys0(SYS_geteuid) != 0;
	switch (cf_userns_fault()) {
	case CF_USERNS_FAULT_SYSCTL: /* CAP_SYS_ADMIN (root) passes the sysctl */
		if ((flags & CLONE_NEWUSER) && user)
			return -EPERM;
		break;
	case CF_USERNS_FAULT_MAXNS:
		if (flags & CLONE_NEWUSER)
			return -ENOSPC;
		break;
	case CF_USERNS_FAULT_SECCOMP: /* a container's root has no CAP_SYS_ADMIN either */
		if (flags & (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID |
			     CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP))
			return -EPERM;
		break;
	case CF_USERNS_FAULT_APPARMOR: {
		int rc = (int)cf_sys1(SYS_unshare, flags);
		if (rc || !(flags & CLONE_NEWUSER) || !user)
			return rc;
		return drop_every_cap();
	}
	default:
		break;
	}
	return (int)cf_sys1(SYS_unshare, flags);
}

int cf_userns_write(const char *path, const char *text)
{
	int fd = cf_sys_openat(AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return fd;
	size_t len = cf_nl_strlen(text);
	long w = cf_sys3(SYS_write, fd, text, len);
	cf_sys_close(fd);
	return w < 0 ? (int)w : w == (long)len ? 0 : -EIO;
}

/* "ID ID 1" into OUT (at least 40 bytes), without stdio. */
static void self_map(unsigned id, char *out)
{
	char digits[12];
	size_t k = 0, n = 0;
	do
		digits[k++] = (char)('0' + id % 10);
	while ((id /= 10));
	for (int twice = 0; twice < 2; twice++) {
		for (size_t i = k; i > 0; i--)
			out[n++] = digits[i - 1];
		out[n++] = ' ';
	}
	out[n++] = '1';
	out[n] = '\0';
}

/* The steps themselves. */
static int own_steps(int *step)
{
	unsigned uid = (unsigned)cf_sys0(SYS_geteuid);
	unsigned gid = (unsigned)cf_sys0(SYS_getegid);
	char map[40];
	int rc;
	if (uid == 0) {
		*step = CF_USERNS_UNSHARE;
		if ((rc = cf_userns_unshare(CLONE_NEWNS)))
			return rc;
	} else {
		*step = CF_USERNS_UNSHARE;
		if ((rc = cf_userns_unshare(CLONE_NEWUSER | CLONE_NEWNS)))
			return rc;
		*step = CF_USERNS_SETGROUPS;
		if ((rc = cf_userns_write("/proc/self/setgroups", "deny")))
			return rc;
		*step = CF_USERNS_UID_MAP;
		self_map(uid, map);
		if ((rc = cf_userns_write("/proc/self/uid_map", map)))
			return rc;
		*step = CF_USERNS_GID_MAP;
		self_map(gid, map);
		if ((rc = cf_userns_write("/proc/self/gid_map", map)))
			return rc;
	}
	*step = CF_USERNS_SLAVE;
	return cf_userns_slave();
}

/* The first byte of a /proc/sys file ('\0' when it can not be read).
 * Raw system calls. */
static char sysctl_byte(const char *path)
{
	char c = '\0';
	int fd = cf_sys_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '\0';
	if (cf_sys3(SYS_read, fd, &c, 1) != 1)
		c = '\0';
	cf_sys_close(fd);
	return c;
}

#define APPARMOR_SYSCTL "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"

/* Whether a new user namespace may come with no capability (Ubuntu's rule). */
static bool restricted(void)
{
	return cf_userns_fault() == CF_USERNS_FAULT_APPARMOR ||
	       sysctl_byte(APPARMOR_SYSCTL) == '1';
}

/* The steps in a child that is thrown away (a raw fork: no atfork
 * handler runs). 0 when they all work, else the child's -errno and step. */
static int probe_steps(int *step)
{
	int p[2], r[2] = {0, 0}, rc;
	if ((rc = (int)cf_sys2(SYS_pipe2, p, O_CLOEXEC)))
		return *step = CF_USERNS_UNSHARE, rc;
	long pid = cf_sys6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
	if (pid == 0) {
		r[0] = own_steps(&r[1]);
		(void)cf_sys3(SYS_write, p[1], r, sizeof r);
		cf_sys1(SYS_exit_group, 0);
	}
	cf_sys_close(p[1]);
	long got = pid < 0 ? pid : cf_sys3(SYS_read, p[0], r, sizeof r);
	cf_sys_close(p[0]);
	if (pid > 0)
		while (cf_sys4(SYS_wait4, pid, NULL, 0, NULL) == -EINTR)
			;
	if (got != (long)sizeof r) {
		*step = CF_USERNS_UNSHARE;
		return got < 0 ? (int)got : -EIO;
	}
	*step = r[1];
	return r[0];
}

int cf_userns_own(int *step)
{
	int rc;
	if (cf_sys0(SYS_geteuid) != 0 && restricted() && (rc = probe_steps(step)))
		return rc;
	return own_steps(step);
}

int cf_userns_slave(void)
{
	return (int)cf_sys5(SYS_mount, "none", "/", NULL, MS_REC | MS_SLAVE, NULL);
}

/* The number on line NAME ("Threads:", "Seccomp:") of /proc/self/status;
 * 0 when it can not be read. */
static long status_field(const char *name)
{
	char buf[4096];
	int fd = cf_sys_openat(AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	long got = 0, k;
	while ((size_t)got < sizeof buf - 1 &&
	       (k = cf_sys3(SYS_read, fd, buf + got, sizeof buf - 1 - (size_t)got)) > 0)
		got += k;
	cf_sys_close(fd);
	buf[got > 0 ? got : 0] = '\0';
	const char *t = strstr(buf, name);
	if (!t)
		return 0;
	long n = 0;
	for (t += strlen(name); *t == ' ' || *t == '\t'; t++)
		;
	for (; *t >= '0' && *t <= '9'; t++)
		n = n * 10 + (*t - '0');
	return n;
}

static long thread_count(void)
{
	return status_field("\nThreads:");
}

bool cf_userns_under_seccomp(void)
{
	return status_field("\nSeccomp:") == 2;
}

#ifndef CF_DATADIR
#define CF_DATADIR "/usr/local/share/credfence"
#endif

int cf_userns_cause(int rc, int step)
{
	int f = cf_userns_fault();
	if (step == CF_USERNS_UNSHARE) {
		if (rc == -EINVAL && thread_count() > 1)
			return CF_USERNS_CAUSE_THREADS;
		if (rc == -ENOSPC)
			return CF_USERNS_CAUSE_MAXNS;
		/* A seccomp profile answers with the errno it is given: EPERM
		 * (Docker's), ENOSYS (Podman's, for what it does not list). */
		if (rc != -EPERM && rc != -ENOSYS)
			return CF_USERNS_CAUSE_OTHER;
		if (rc == -EPERM && (f == CF_USERNS_FAULT_SYSCTL ||
		    (!f && sysctl_byte("/proc/sys/kernel/unprivileged_userns_clone") == '0')))
			return CF_USERNS_CAUSE_SYSCTL;
		if (f == CF_USERNS_FAULT_SECCOMP || (!f && cf_userns_under_seccomp()))
			return CF_USERNS_CAUSE_SECCOMP;
		return CF_USERNS_CAUSE_OTHER;
	}
	/* Made, then refused what a namespace's capabilities allow. */
	if ((rc == -EPERM || rc == -EACCES) && restricted())
		return CF_USERNS_CAUSE_APPARMOR;
	return CF_USERNS_CAUSE_OTHER;
}

void cf_userns_remedy(int cause, char *out, size_t n)
{
	switch (cause) {
	case CF_USERNS_CAUSE_SYSCTL:
		snprintf(out, n, "sudo sysctl -w kernel.unprivileged_userns_clone=1");
		break;
	case CF_USERNS_CAUSE_MAXNS:
		snprintf(out, n, "sudo sysctl -w user.max_user_namespaces=%s",
			 sysctl_byte("/proc/sys/user/max_user_namespaces") == '0' ||
				 cf_userns_fault() == CF_USERNS_FAULT_MAXNS
			     ? "15000"
			     : "N (a higher limit: this user's namespaces reached it)");
		break;
	case CF_USERNS_CAUSE_APPARMOR:
		snprintf(out, n, "sudo install -m 644 " CF_DATADIR "/apparmor/credfence "
			 "/etc/apparmor.d/credfence && sudo apparmor_parser -r "
			 "/etc/apparmor.d/credfence");
		break;
	case CF_USERNS_CAUSE_SECCOMP:
		snprintf(out, n, "start the container with a seccomp profile that allows them: the "
			 "runtime's default with " CF_DATADIR "/seccomp/credfence-rule.json added "
			 "(jq '.syscalls += [input]' DEFAULT.json credfence-rule.json > cf.json; "
			 "--security-opt seccomp=cf.json; README, \"Containers\")");
		break;
	default:
		out[0] = '\0';
	}
}

/* The kernel refuses a user namespace to a process of more than one thread
 * with EINVAL: that is not a setting of the machine, and the advice for one
 * would not apply. The cause and its remedy follow the failure. */
static void cause_words(int rc, int step, char *why, size_t n)
{
	static const char *const what[] = {
		[CF_USERNS_CAUSE_SYSCTL] = "user namespaces are off for ordinary users "
					   "(Debian's sysctl kernel.unprivileged_userns_clone=0)",
		[CF_USERNS_CAUSE_MAXNS] = "no user namespace may be made (sysctl "
					  "user.max_user_namespaces)",
		[CF_USERNS_CAUSE_SECCOMP] = "a seccomp filter refuses unshare (a container's "
					    "default seccomp profile)",
		[CF_USERNS_CAUSE_APPARMOR] = "the user namespace was made without capabilities: "
					     "AppArmor restricts unprivileged user namespaces "
					     "(kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu "
					     "23.10 and later) to programs whose profile allows them",
	};
	int cause = cf_userns_cause(rc, step);
	size_t len = strlen(why);
	char fix[512];
	if (cause == CF_USERNS_CAUSE_OTHER || cause == CF_USERNS_CAUSE_THREADS || len >= n)
		return;
	cf_userns_remedy(cause, fix, sizeof fix);
	snprintf(why + len, n - len, ": %s; to turn them on: %s%s%s%s", what[cause], fix,
		 cf_userns_fault() ? " (test switch CF_TEST_USERNS=" : "", cf_userns_fault_word(),
		 cf_userns_fault() ? ")" : "");
}

int cf_userns_words(int rc, int step, char *why, size_t n)
{
	switch (step) {
	case CF_USERNS_UNSHARE:
		if (geteuid() == 0) {
			snprintf(why, n, "unshare(CLONE_NEWNS) failed: %s", strerror(-rc));
			break;
		}
		long threads = rc == -EINVAL ? thread_count() : 0;
		if (threads > 1)
			snprintf(why, n, "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: %s: this process "
				 "runs %ld threads, and the kernel gives a user namespace only to a "
				 "process of one thread (something loaded into credfence started "
				 "the others: a sanitizer's runtime, such as ThreadSanitizer's, or "
				 "a library in LD_PRELOAD); run credfence without it",
				 strerror(-rc), threads);
		else if (cf_userns_cause(rc, step) == CF_USERNS_CAUSE_OTHER)
			snprintf(why, n, "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: %s (user namespaces "
				 "are off for this user: sysctl user.max_user_namespaces, "
				 "kernel.unprivileged_userns_clone, or AppArmor's "
				 "kernel.apparmor_restrict_unprivileged_userns); allow user namespaces",
				 strerror(-rc));
		else
			snprintf(why, n, "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: %s", strerror(-rc));
		break;
	case CF_USERNS_SETGROUPS:
		snprintf(why, n, "can not write /proc/self/setgroups: %s", strerror(-rc));
		break;
	case CF_USERNS_UID_MAP:
		snprintf(why, n, "can not write /proc/self/uid_map: %s", strerror(-rc));
		break;
	case CF_USERNS_GID_MAP:
		snprintf(why, n, "can not write /proc/self/gid_map: %s", strerror(-rc));
		break;
	default:
		snprintf(why, n, "can not make the mounts private: %s", strerror(-rc));
		break;
	}
	cause_words(rc, step, why, n);
	return rc;
}

void cf_userns_cause_words(int rc, int step, char *why, size_t n)
{
	cause_words(rc, step, why, n);
}
