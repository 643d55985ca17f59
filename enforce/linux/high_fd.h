/* A descriptor of credfence's own, moved above the ones a program uses: a
 * shell moves its own down from 255, most programs take the lowest free one,
 * so 768 (or half the limit, when the limit is under 832). In the parent
 * only (getrlimit and fcntl of the C library). The one copy (issue 34): the
 * fence's watch and the namespace's keep both move theirs here. */
#ifndef CF_HIGH_FD_H
#define CF_HIGH_FD_H

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

/* FD moved up, close-on-exec, and closed; the new number, or -1 with errno
 * set (FD itself when it is negative: a failed open passes through, errno
 * as it left it). */
static inline int cf_high_fd(int fd)
{
	struct rlimit lim;
	long base = 768;
	if (fd < 0)
		return fd;
	if (!getrlimit(RLIMIT_NOFILE, &lim) && lim.rlim_cur != RLIM_INFINITY &&
	    (long)lim.rlim_cur - 64 < base)
		base = (long)lim.rlim_cur / 2;
	int to = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);
	if (to < 0)
		to = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return to;
}

#endif
