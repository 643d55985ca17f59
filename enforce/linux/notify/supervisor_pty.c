/* TIOCGPTPEER made by the supervisor for a fenced caller (supervisor_pty.h). */
#include "supervisor_pty.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sys.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_ADDFD
struct seccomp_notif_addfd {
	uint64_t id;
	uint32_t flags;
	uint32_t srcfd;
	uint32_t newfd;
	uint32_t newfd_flags;
};
#define SECCOMP_IOCTL_NOTIF_ADDFD _IOW('!', 3, struct seccomp_notif_addfd)
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

#if defined(__x86_64__)
#define PTY_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define PTY_ARCH AUDIT_ARCH_AARCH64
#endif

/* The kernel's numbers (include/uapi/linux/major.h): /dev/ptmx is 5:2, the
 * slaves of the Unix98 ptys use 8 majors from 136 on, 256 minors each. */
#define PTMX_MAJOR 5
#define PTMX_MINOR 2
#define PTS_MAJOR_FIRST 136
#define PTS_MAJORS 8

#define PEER_FLAGS (O_ACCMODE | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)

bool cf_pty_is_peer_call(const struct seccomp_data *d)
{
#ifdef PTY_ARCH
	/* The kernel truncates an ioctl's cmd to unsigned int. */
	return d->arch == PTY_ARCH && d->nr == SYS_ioctl && (uint32_t)d->args[1] == (uint32_t)TIOCGPTPEER;
#else
	(void)d;
	return false;
#endif
}

/* Whether T is a master made by opening a ptmx: the device, opened for
 * reading or writing (O_PATH can name the node and open nothing). */
static int judge_master(int t)
{
	struct stat st;
	int fl = fcntl(t, F_GETFL);
	if (fl < 0 || fstat(t, &st) < 0)
		return -errno;
	if (fl & O_PATH)
		return -EBADF; /* what the kernel answers for an ioctl on O_PATH */
	if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != PTMX_MAJOR || minor(st.st_rdev) != PTMX_MINOR)
		return -ENOTTY;
	return 0;
}

/* Whether S is the peer of master T, a slave of the devpts instance that
 * /dev/pts is here. */
static int judge_peer(int t, int s)
{
	struct stat st, pts;
	unsigned int n;
	if (ioctl(t, TIOCGPTN, &n) < 0 || fstat(s, &st) < 0 || stat("/dev/pts", &pts) < 0)
		return -EACCES;
	unsigned int maj = major(st.st_rdev), min = minor(st.st_rdev);
	if (!S_ISCHR(st.st_mode) || maj < PTS_MAJOR_FIRST || maj >= PTS_MAJOR_FIRST + PTS_MAJORS)
		return -EACCES;
	if ((maj - PTS_MAJOR_FIRST) * 256 + min != n || st.st_dev != pts.st_dev)
		return -EACCES;
	return 0;
}

/* Put S into the caller as the result of its call. 0 answered, or -errno. */
static long install(int lfd, uint64_t id, int s, int flags)
{
	struct seccomp_notif_addfd a;
	memset(&a, 0, sizeof a);
	a.id = id;
	a.flags = SECCOMP_ADDFD_FLAG_SEND;
	a.srcfd = (uint32_t)s;
	a.newfd_flags = (uint32_t)(flags & O_CLOEXEC);
	if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &a) >= 0)
		return 0;
	if (errno != EINVAL)
		return -errno;
	/* Before Linux 5.14 (no FLAG_SEND): add, then answer with its number. */
	a.flags = 0;
	int fd = ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
	if (fd < 0)
		return -errno;
	struct seccomp_notif_resp r;
	memset(&r, 0, sizeof r);
	r.id = id;
	r.val = fd;
	while (ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 && errno == EINTR)
		;
	return 0;
}

long cf_pty_give_peer(int lfd, uint64_t id, int pidfd, const struct seccomp_data *d)
{
	int fd = (int)d->args[0], flags = (int)d->args[2];
	if ((flags & ~PEER_FLAGS) || (flags & O_ACCMODE) == O_ACCMODE)
		return -EINVAL;
	int t = (int)cf_sys3(SYS_pidfd_getfd, pidfd, fd, 0);
	if (t < 0)
		return t;
	long r = judge_master(t);
	int s = -1;
	if (r == 0) {
		/* Never the supervisor's controlling terminal (O_NOCTTY), never
		 * inherited by what it starts (O_CLOEXEC). */
		s = ioctl(t, TIOCGPTPEER, (flags & (O_ACCMODE | O_NONBLOCK)) | O_NOCTTY | O_CLOEXEC);
		r = s < 0 ? -errno : judge_peer(t, s);
	}
	if (r == 0)
		r = install(lfd, id, s, flags);
	if (s >= 0)
		close(s);
	close(t);
	return r;
}
