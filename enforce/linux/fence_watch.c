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
 * Here the watch is armed, once a generation of the fence, and taken
 * down; what asks it at each launch (cf_fence_current_watched,
 * cf_fence_supervisor_watched) is in fence.c, with struct cf_fence_watch in
 * fence_state.h. Normal context, in the harness only; its fence cache
 * serializes the calls (shim/linux/fence_cache.c). Never between fork and exec:
 * the child checks with the stats (cf_fence_current), or trusts the
 * harness's answer. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fence_state.h"
#include "high_fd.h"
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

static size_t n_paths(const struct cf_fence *f)
{
	return f->plan.n_anc + f->pol.lookups.n;
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
		const char *p = cf_fence_stamped_at(f, i, &st);
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
	bool ino = w->ino >= 0 && w->twin >= 0 && cf_fence_same_file(w->ino, &w->ino_st) &&
		   cf_sys5(SYS_kcmp, self, self, KCMP_FILE, w->ino, w->twin) == 0;
	int fds[4] = {ino ? w->ino : -1, ino ? w->twin : -1,
		      cf_fence_same_file(w->mounts, &w->mounts_st) ? w->mounts : -1,
		      cf_fence_same_file(w->sup, &w->sup_st) ? w->sup : -1};
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
		const char *p = cf_fence_stamped_at(f, i, &st);
		if (p && depth(p) > max)
			max = depth(p);
	}
	for (size_t d = 0; d <= max; d++)
		for (size_t i = 0; i < n; i++) {
			const char *p = cf_fence_stamped_at(f, i, &st);
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
		if (cf_fence_stamped_at(f, i, &st) && !covered[i])
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

void cf_fence_watch_fds(const struct cf_fence *f, int out[4])
{
	const struct cf_fence_watch *w = f->watch;
	out[0] = w ? w->ino : -1;
	out[1] = w ? w->twin : -1;
	out[2] = w ? w->mounts : -1;
	out[3] = w ? w->sup : -1;
}

long cf_fence_watch_stats(const struct cf_fence *f)
{
	return f->watch && !f->watch->changed ? (long)f->watch->n_stat : -1;
}
