/* The harness's fence, watched rather than stat'ed at each launch (issue 22).
 *
 * cf_fence_current stats every stamped directory (36 for the default
 * secrets): 56 us of each harness launch. What those stats stand for is
 * that no directory on the way to a secret gained, lost or renamed an
 * entry, and that each stamped path still names the directory that was
 * read. An inotify watch on each of those directories sees every entry
 * created, deleted or moved there, every attribute change, and the
 * directory's own move or deletion, exactly (no timestamp granularity); a
 * poll of the mount table sees a mount put over a path, of which inotify
 * says nothing. Nothing is ever read from the inotify instance: an event
 * stays queued and keeps it readable, so "changed" never turns back into
 * "current".
 *
 * The stats stay for what the watch can not vouch for: a path on a file
 * system whose changes may come from elsewhere than this kernel's VFS (NFS,
 * FUSE, overlayfs's layers: not in local_fs), a path whose parent is not
 * watched (a rename of that parent changes what the path names, and the
 * path's own inode hears nothing), and everything, whenever the watch is in
 * doubt: an event, a read error, a descriptor closed or replaced by the
 * harness, a forked copy of the harness (it would share the mount table's
 * poll, which reports a change to one reader only).
 *
 * Normal context, in the harness only; its fence cache serializes the calls
 * (shim/linux/thread.c). Never between fork and exec: the child checks with
 * the stats (cf_fence_current), or trusts the harness's answer. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fence_state.h"
#include "high_fd.h"
#include "nolibc.h"
#include "paths.h"
#include "sys.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef F2FS_SUPER_MAGIC
#define F2FS_SUPER_MAGIC 0xF2F52010
#endif

/* Every change that alters what a stat of the directory (or of the path)
 * would see; IN_UNMOUNT, IN_Q_OVERFLOW and IN_IGNORED come unasked. One
 * event a directory is all it takes: IN_ONESHOT then removes the watch, so
 * that a busy directory does not fill the queue (16384 events, kernel
 * memory of the user) while the harness launches nothing. */
#define CF_WATCH_MASK                                                                          \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF |     \
	 IN_MOVE_SELF | IN_DONT_FOLLOW | IN_ONESHOT)

struct cf_fence_watch {
	int ino, twin;   /* the inotify instance, twice: kcmp tells ours from a stand-in */
	int mounts;      /* /proc/self/mountinfo: POLLPRI when the mount table changed */
	int sup;         /* the supervisor's pidfd, or -1 */
	struct stat ino_st, mounts_st, sup_st;
	pid_t owner;     /* the process that set it */
	bool changed;    /* sticky: from then on, the stats */
	size_t n_stat;   /* stamped paths the watch does not cover */
	size_t stat_at[]; /* theirs: < n_anc an ancestor, else n_anc + a lookup */
};

/* File systems whose every change passes through this kernel's VFS, so
 * through inotify. */
static bool local_type(unsigned long type)
{
	switch (type) {
	case EXT4_SUPER_MAGIC: /* ext2 and ext3 too */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case RAMFS_MAGIC:
	case F2FS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

/* PATH (whose lstat is ST) is on such a file system. The answer of the
 * last device asked is kept: the stamped paths lie on a few. */
struct fs_seen {
	dev_t dev;
	bool local, known;
};

static bool local_fs(const char *path, const struct stat *st, struct fs_seen *seen)
{
	struct statfs s;
	if (seen->known && seen->dev == st->st_dev)
		return seen->local;
	if (statfs(path, &s))
		return false;
	*seen = (struct fs_seen){st->st_dev, local_type((unsigned long)s.f_type), true};
	return seen->local;
}

static bool same_file(int fd, const struct stat *was)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == was->st_dev && st.st_ino == was->st_ino;
}

static size_t n_paths(const struct cf_fence *f)
{
	return f->plan.n_anc + f->pol.lookups.n;
}

/* The I-th stamped path and its stamp, or NULL (a lookup its ancestor's
 * stamp covers). */
static const char *path_at(const struct cf_fence *f, size_t i, const struct cf_stamp **st)
{
	if (i < f->plan.n_anc) {
		*st = &f->stamps[i];
		return f->plan.anc[i].path;
	}
	i -= f->plan.n_anc;
	*st = &f->lookup_stamps[i];
	return (*st)->present == CF_STAMP_SKIP ? NULL : f->pol.lookups.v[i];
}

static size_t depth(const char *p)
{
	size_t d = 0;
	if (strcmp(p, "/") == 0)
		return 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

/* PATH's parent is a stamped directory that the watch covers, or a
 * stamped path that was missing, whose creation it covers. */
static bool parent_covered(const struct cf_fence *f, const char *path, const bool *covered,
			   const bool *is_dir)
{
	char up[PATH_MAX];
	const struct cf_stamp *st;
	cf_path_parent(path, up, sizeof up);
	for (size_t i = 0; i < n_paths(f); i++) {
		const char *p = path_at(f, i, &st);
		if (p && covered[i] && is_dir[i] && strcmp(p, up) == 0)
			return true;
	}
	return false;
}

/* Each descriptor that is still the one the watch opened: a harness that
 * closed them one by one may hold other files at those numbers now, which
 * are not ours to close. */
static void close_all(struct cf_fence_watch *w)
{
	pid_t self = getpid();
	bool ino = w->ino >= 0 && w->twin >= 0 && same_file(w->ino, &w->ino_st) &&
		   cf_sys5(SYS_kcmp, self, self, KCMP_FILE, w->ino, w->twin) == 0;
	int fds[4] = {ino ? w->ino : -1, ino ? w->twin : -1,
		      same_file(w->mounts, &w->mounts_st) ? w->mounts : -1,
		      same_file(w->sup, &w->sup_st) ? w->sup : -1};
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	w->ino = w->twin = w->mounts = w->sup = -1;
}

/* The supervisor's pidfd, opened before its identity is checked by /proc
 * (its start time): a pid reused since can not pass. Only where a pidfd
 * has an inode of its own (pidfs, Linux 6.9): an anonymous one could not
 * be told from a stand-in. */
static void watch_supervisor(const struct cf_fence *f, struct cf_fence_watch *w)
{
	if (f->ipc.sup_pid <= 0)
		return;
	int fd = cf_high_fd((int)cf_sys2(SYS_pidfd_open, f->ipc.sup_pid, 0));
	if (fd < 0)
		return;
	if (fstat(fd, &w->sup_st) || w->sup_st.st_ino == w->ino_st.st_ino ||
	    !cf_ipc_supervisor_alive(&f->ipc)) {
		close(fd);
		return;
	}
	w->sup = fd;
}

/* Watch every stamped path, parents first, so that a path's directory can
 * not be swapped and swapped back unseen while its own watch is set. */
static void watch_paths(const struct cf_fence *f, struct cf_fence_watch *w, bool *covered,
			bool *is_dir)
{
	size_t n = n_paths(f), max = 0;
	const struct cf_stamp *st;
	struct fs_seen seen = {0};
	for (size_t i = 0; i < n; i++) {
		const char *p = path_at(f, i, &st);
		if (p && depth(p) > max)
			max = depth(p);
	}
	for (size_t d = 0; d <= max; d++)
		for (size_t i = 0; i < n; i++) {
			const char *p = path_at(f, i, &st);
			if (!p || depth(p) != d)
				continue;
			bool root = strcmp(p, "/") == 0;
			if (!root && !parent_covered(f, p, covered, is_dir))
				continue;
			if (st->present != 1) {
				/* Missing: its creation shows in its covered parent,
				 * and so does that of a path under it, which needs it
				 * made first. */
				covered[i] = is_dir[i] = !root;
				continue;
			}
			struct stat now;
			if (lstat(p, &now) || !local_fs(p, &now, &seen))
				continue;
			/* Refused (a secret the harness's guard covers with an
			 * unreadable tmpfs is EACCES), none left (ENOSPC), gone:
			 * the stats tell for it. */
			if (inotify_add_watch(w->ino, p, CF_WATCH_MASK) < 0)
				continue;
			covered[i] = true;
			is_dir[i] = S_ISDIR(now.st_mode);
		}
}

static int arm(struct cf_fence *f, struct cf_fence_watch *w, bool *covered, bool *is_dir)
{
	w->owner = getpid();
	w->ino = cf_high_fd(inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
	if (w->ino < 0)
		return -errno;
	w->twin = fcntl(w->ino, F_DUPFD_CLOEXEC, w->ino + 1);
	if (w->twin < 0 || fstat(w->ino, &w->ino_st))
		return -errno;
	if (cf_sys5(SYS_kcmp, w->owner, w->owner, KCMP_FILE, w->ino, w->twin) != 0)
		return -ENOSYS; /* no kcmp: a stand-in could not be told */
	/* The mount table before the stats below: a mount after them is
	 * seen by the poll, one before them by the stats. */
	w->mounts = cf_high_fd(open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
	if (w->mounts < 0 || fstat(w->mounts, &w->mounts_st))
		return -errno;
	watch_paths(f, w, covered, is_dir);
	for (size_t i = 0; i < n_paths(f); i++) {
		const struct cf_stamp *st;
		if (path_at(f, i, &st) && !covered[i])
			w->stat_at[w->n_stat++] = i;
	}
	/* Every watch is set: anything that changes from now on is seen. What
	 * changed before is seen here, by the stamps the fence was built with
	 * (a fence changed within its last 50 ms is racy, never current: a
	 * change then could keep the same times). */
	if (!cf_fence_current(f))
		return -ESTALE;
	watch_supervisor(f, w);
	return 0;
}

int cf_fence_watch(struct cf_fence *f)
{
	if (f->watch)
		return 0;
	if (f->watch_tried)
		return -EALREADY;
	f->watch_tried = true;
	if (f->inherited || !f->ready || f->racy)
		return -EINVAL;
	size_t n = n_paths(f);
	struct cf_fence_watch *w = calloc(1, sizeof *w + (n ? n : 1) * sizeof w->stat_at[0]);
	bool *covered = calloc(n ? n : 1, 2 * sizeof *covered);
	if (!w || !covered) {
		free(w);
		free(covered);
		return -ENOMEM;
	}
	w->ino = w->twin = w->mounts = w->sup = -1;
	int rc = arm(f, w, covered, covered + (n ? n : 1));
	free(covered);
	if (rc) {
		close_all(w);
		free(w);
		return rc;
	}
	f->watch = w;
	return 0;
}

void cf_fence_unwatch(struct cf_fence *f)
{
	f->watch_tried = true; /* a replaced generation is not watched again */
	if (!f->watch)
		return;
	close_all(f->watch);
	free(f->watch);
	f->watch = NULL;
}

/* The watch is ours still, and heard nothing. */
static bool quiet(struct cf_fence_watch *w)
{
	if (w->changed)
		return false;
	pid_t self = getpid();
	int queued = -1;
	struct pollfd p[2] = {{w->ino, POLLIN, 0}, {w->mounts, POLLPRI, 0}};
	/* The identity after the poll: a stand-in put there before it
	 * (another file, or none) is still there now. An anonymous inode
	 * (inotify's is shared with eventfd, epoll, timerfd ...) that answers
	 * FIONREAD, twice at our two numbers: an inotify instance, ours
	 * unless the harness put one of its own at both (SECURITY.md). */
	if (self != w->owner || poll(p, 2, 0) != 0 || !same_file(w->ino, &w->ino_st) ||
	    ioctl(w->ino, FIONREAD, &queued) != 0 || queued != 0 ||
	    cf_sys5(SYS_kcmp, self, self, KCMP_FILE, w->ino, w->twin) != 0 ||
	    !same_file(w->mounts, &w->mounts_st))
		w->changed = true;
	return !w->changed;
}

bool cf_fence_current_watched(const struct cf_fence *f)
{
	struct cf_fence_watch *w = f->watch;
	if (f->inherited)
		return true;
	if (!f->ready || f->racy)
		return false;
	if (!w || !quiet(w))
		return cf_fence_current(f);
	for (size_t k = 0; k < w->n_stat; k++) {
		const struct cf_stamp *st;
		struct cf_stamp now;
		const char *p = path_at(f, w->stat_at[k], &st);
		cf_stamp_path(p, &now);
		if (!cf_stamp_equal(&now, st))
			return false;
	}
	return true;
}

int cf_fence_supervisor_watched(const struct cf_fence *f)
{
	const struct cf_fence_watch *w = f->watch;
	if (!w || w->sup < 0 || getpid() != w->owner)
		return -1;
	struct pollfd p = {w->sup, POLLIN, 0};
	int n = poll(&p, 1, 0);
	if (n < 0 || (p.revents & POLLNVAL) || !same_file(w->sup, &w->sup_st))
		return -1;
	return n == 0;
}

void cf_fence_watch_fds(const struct cf_fence *f, int out[4])
{
	const struct cf_fence_watch *w = f->watch;
	out[0] = w ? w->ino : -1;
	out[1] = w ? w->twin : -1;
	out[2] = w ? w->mounts : -1;
	out[3] = w ? w->sup : -1;
}

/* FD's /proc/self/fd link into BUF (CAP bytes, NUL-ended): its length, or
 * -1. Raw system calls and stack. */
static long fd_link(int fd, char *buf, size_t cap)
{
	char link[32] = "/proc/self/fd/", digits[12];
	size_t n = 0, at = sizeof "/proc/self/fd/" - 1;
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) && n < sizeof digits);
	while (n)
		link[at++] = digits[--n];
	link[at] = '\0';
	long r = cf_sys4(SYS_readlinkat, AT_FDCWD, link, buf, cap - 1);
	if (r < 0)
		return -1;
	buf[r] = '\0';
	return r;
}

void cf_fence_close_watch_copies(const int fds[4])
{
	static const char tail[] = "/mountinfo";
	for (int i = 0; i < 4; i++) {
		char got[64];
		long n = fds[i] > 2 ? fd_link(fds[i], got, sizeof got) : -1;
		bool ours = n > 0 && (cf_nl_streq(got, "anon_inode:inotify") ||
				      cf_nl_streq(got, "anon_inode:[pidfd]") ||
				      (cf_nl_has_prefix(got, "/proc/") && (size_t)n >= sizeof tail - 1 &&
				       cf_nl_streq(got + n - (sizeof tail - 1), tail)));
		if (ours)
			cf_sys_close(fds[i]);
	}
}

long cf_fence_watch_stats(const struct cf_fence *f)
{
	return f->watch && !f->watch->changed ? (long)f->watch->n_stat : -1;
}
