/* The keeper of the children's mount namespace (shared_ns.h): the helper
 * that made it, kept alive, binds a protected path read-only again when
 * the user's own tools replace it from outside (a rename over a mount
 * point detaches its mount in every namespace). It watches the parent
 * directory of each planned path with inotify and answers the one-byte
 * requests of children that found a path lost. A request carries nothing:
 * the keeper only applies its fixed plan again. It exits when the harness
 * does. */
#include "shared_ns.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sys.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define WATCHED (IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF | \
		 IN_MOVE_SELF | IN_ONLYDIR)

#define CF_KEEPER_REST_MS 2

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The parent directory of PATH into BUF and its last name. */
static const char *split(const char *path, char *buf, size_t n)
{
	snprintf(buf, n, "%s", path);
	char *slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return snprintf(buf, n, "/"), strrchr(path, '/') + 1;
	*slash = '\0';
	return slash + 1;
}

/* Watch again the parent of each planned path (a directory replaced from
 * outside is a new inode; an existing watch is kept). */
static void watch_all(const struct cf_protect_plan *pp, int ino)
{
	char dir[4096];
	for (size_t i = 0; i < pp->n_items; i++) {
		split(pp->items[i].path, dir, sizeof dir);
		(void)inotify_add_watch(ino, dir, WATCHED);
	}
}

/* Each planned path that exists and is not a mount point any more is
 * bound read-only again (a private cache: its private copy mounted again);
 * a placeholder or a private cache removed from outside is made again, as
 * at the start. */
static void hold_all(const struct cf_protect_plan *pp)
{
	struct statx stx;
	for (size_t i = 0; i < pp->n_items; i++) {
		const char *p = pp->items[i].path;
		long rc = cf_sys5(SYS_statx, AT_FDCWD, p, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
				  STATX_TYPE, &stx);
		/* A private cache removed from outside is made again too: else a
		 * child would make it, in the user's file system. */
		if (rc == -ENOENT && (pp->items[i].make || pp->items[i].row->private_copy)) {
			(void)cf_tree_ns_make(&pp->items[i]);
			rc = cf_sys5(SYS_statx, AT_FDCWD, p, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
				     STATX_TYPE, &stx);
		}
		if (rc || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
		    (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
			continue;
		(void)cf_tree_ns_hold(&pp->items[i]);
	}
}

/* An inotify event names a planned path (or its directory went away). */
static bool names_a_row(const struct cf_protect_plan *pp, const struct inotify_event *ev)
{
	char dir[4096];
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_Q_OVERFLOW))
		return true;
	for (size_t i = 0; ev->len && i < pp->n_items; i++)
		if (!strcmp(split(pp->items[i].path, dir, sizeof dir), ev->name))
			return true;
	return false;
}

static bool drain_events(const struct cf_protect_plan *pp, int ino)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool hit = false;
	for (;;) {
		ssize_t n = read(ino, buf, sizeof buf);
		if (n <= 0)
			return hit;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			hit = hit || names_a_row(pp, ev);
			p += sizeof *ev + ev->len;
		}
	}
}

/* The requests waiting, each answered with one byte after one pass. At
 * most a socket buffer's worth a pass: a flood only makes it pass again. */
static void answer(const struct cf_protect_plan *pp, int sock)
{
	char b[64];
	int n = 0;
	while (n < (int)sizeof b && recv(sock, b, 1, MSG_DONTWAIT) == 1)
		n++;
	hold_all(pp);
	while (n-- > 0)
		(void)send(sock, "k", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

void cf_keeper(const struct cf_protect_plan *pp, int harness, int sock)
{
	/* Its own session: the terminal's signals (^C) are for the harness. */
	(void)setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* Nothing of the harness's stays open here but the two it needs. */
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		(void)dup2(null, fd);
	int h = fcntl(harness, F_DUPFD_CLOEXEC, 10), s = fcntl(sock, F_DUPFD_CLOEXEC, 11);
	if (h < 10 || s < 10 || h == s)
		_exit(1);
	(void)dup2(h, 3);
	(void)dup2(s, 4);
	(void)cf_sys3(SYS_close_range, 5, ~0U, 0);
	harness = 3;
	sock = 4;
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ino < 0)
		_exit(1);
	watch_all(pp, ino);
	hold_all(pp);
	struct pollfd pf[3] = {{harness, POLLIN, 0}, {ino, POLLIN, 0}, {sock, POLLIN, 0}};
	/* After a batch of requests the socket rests for CF_KEEPER_REST_MS:
	 * a flood of requests (from the harness, which holds the socket)
	 * then blocks its writer instead of keeping the keeper busy, and the
	 * watch is served first. */
	long rest_until = 0;
	for (;;) {
		long rest = rest_until - now_ms();
		int n = rest > 0 ? 2 : 3;
		pf[2].revents = 0;
		if (poll(pf, (nfds_t)n, rest > 0 ? (int)rest : -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (pf[0].revents)
			_exit(0);
		if ((pf[1].revents & POLLIN) && drain_events(pp, ino)) {
			hold_all(pp);
			watch_all(pp, ino);
		}
		if (pf[2].revents & (POLLHUP | POLLERR))
			_exit(0);
		if (pf[2].revents & POLLIN) {
			answer(pp, sock);
			rest_until = now_ms() + CF_KEEPER_REST_MS;
		}
	}
}
