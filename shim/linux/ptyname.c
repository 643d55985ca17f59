/* A new terminal's slave opened by its name. glibc's openpty asks the master
 * for its peer (TIOCGPTPEER, which the supervisor makes on a fenced
 * program's behalf), but Tcl's Expect opens ptsname()'s /dev/pts/N in its
 * spawned child, and runs `stty < /dev/pts/N` there. /dev/pts stays closed
 * to a fenced program (the user's other terminals lie there), so a terminal
 * this process holds already is given without the name: the peer of a
 * master it holds, or a copy of the slave it holds. Nothing is given that
 * the process could not reach already. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <termios.h>

#include "shim.h"
#include "sys.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* The kernel's numbers (include/uapi/linux/major.h): /dev/ptmx is 5:2, the
 * slaves of the Unix98 ptys use 8 majors from 136 on, 256 minors each. */
#define PTMX_MAJOR 5
#define PTMX_MINOR 2
#define PTS_MAJOR_FIRST 136
#define PTS_MAJORS 8
/* Descriptors looked at: a program that spawns through Expect holds few. */
#define SCAN_FDS 1024

/* N of "/dev/pts/N", or -1. */
static long pts_number(const char *path)
{
	static const char pre[] = "/dev/pts/";
	for (size_t i = 0; i < sizeof pre - 1; i++)
		if (path[i] != pre[i])
			return -1;
	const char *p = path + sizeof pre - 1;
	long n = 0;
	if (!*p || (*p == '0' && p[1]))
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || n > PTS_MAJORS * 256)
			return -1;
		n = n * 10 + (*p - '0');
	}
	return n < PTS_MAJORS * 256 ? n : -1;
}

/* The terminal as open(2) leaves it for FLAGS: without O_NOCTTY, a session
 * leader with no controlling terminal gets this one (TIOCSCTTY refuses in
 * every other case, as open would quietly not give it). */
static int as_opened(long fd, int flags)
{
	if (fd >= 0 && !(flags & O_NOCTTY))
		(void)cf_sys3(SYS_ioctl, fd, TIOCSCTTY, 0);
	return (int)fd;
}

int cf_shim_pty_by_name(const char *path, int flags)
{
	long n = pts_number(path);
	struct stat pts, st;
	if (n < 0 || cf_sys4(SYS_newfstatat, AT_FDCWD, "/dev/pts", &pts, 0) < 0)
		return -ENOENT;
	dev_t slave = makedev(PTS_MAJOR_FIRST + (unsigned)n / 256, (unsigned)n % 256);
	int copy = -1;
	for (int fd = 0; fd < SCAN_FDS; fd++) {
		if (cf_sys4(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH) < 0 || !S_ISCHR(st.st_mode))
			continue;
		unsigned int got;
		if (st.st_rdev == makedev(PTMX_MAJOR, PTMX_MINOR) &&
		    cf_sys3(SYS_ioctl, fd, TIOCGPTN, &got) == 0 && got == (unsigned)n) {
			long s = cf_sys3(SYS_ioctl, fd, TIOCGPTPEER,
					 flags & (O_ACCMODE | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
			if (s >= 0)
				return as_opened(s, flags);
		}
		if (copy < 0 && st.st_rdev == slave && st.st_dev == pts.st_dev)
			copy = fd;
	}
	if (copy < 0)
		return -ENOENT;
	return as_opened(cf_sys3(SYS_fcntl, copy, flags & O_CLOEXEC ? F_DUPFD_CLOEXEC : F_DUPFD, 0),
			 flags);
}
