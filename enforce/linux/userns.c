#include "userns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"

#ifndef MS_REC
#define MS_REC 16384
#endif
#ifndef MS_SLAVE
#define MS_SLAVE (1 << 19)
#endif

static size_t text_len(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

int cf_userns_write(const char *path, const char *text)
{
	int fd = cf_sys_openat(AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return fd;
	size_t len = text_len(text);
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

int cf_userns_own(int *step)
{
	unsigned uid = (unsigned)cf_sys0(SYS_geteuid);
	unsigned gid = (unsigned)cf_sys0(SYS_getegid);
	char map[40];
	int rc;
	if (uid == 0) {
		*step = CF_USERNS_UNSHARE;
		if ((rc = (int)cf_sys1(SYS_unshare, CLONE_NEWNS)))
			return rc;
	} else {
		*step = CF_USERNS_UNSHARE;
		if ((rc = (int)cf_sys1(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS)))
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

int cf_userns_slave(void)
{
	return (int)cf_sys5(SYS_mount, "none", "/", NULL, MS_REC | MS_SLAVE, NULL);
}

/* The threads of this process, from /proc/self/status ("Threads:"); 0 when
 * it can not be read. */
static long thread_count(void)
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
	const char *t = strstr(buf, "\nThreads:");
	if (!t)
		return 0;
	long n = 0;
	for (t += strlen("\nThreads:"); *t == ' ' || *t == '\t'; t++)
		;
	for (; *t >= '0' && *t <= '9'; t++)
		n = n * 10 + (*t - '0');
	return n;
}

/* The kernel refuses a user namespace to a process of more than one thread
 * with EINVAL: that is not a setting of the machine, and the advice for one
 * would not apply. */
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
		else
			snprintf(why, n, "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: %s (user namespaces "
				 "are off for this user: sysctl user.max_user_namespaces, "
				 "kernel.unprivileged_userns_clone, or AppArmor's "
				 "kernel.apparmor_restrict_unprivileged_userns); allow user namespaces",
				 strerror(-rc));
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
	return rc;
}
