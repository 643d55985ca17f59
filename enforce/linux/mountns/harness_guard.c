/* The harness's own reads: covers over the secrets in a mount namespace of
 * the harness's own, a Landlock domain for the ptrace rule, and, for root,
 * the capabilities that would see through the covers. See harness_guard.h. Runs once,
 * in the process that is about to exec the harness, in normal context. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fence_state.h"
#include "harness_guard.h"
#include "secrets.h"
#include "sys.h"
#include "userns.h"

/* The rows the table marks as a coding agent's own login: the harness that
 * owns one reads it (it signs in with it), its children never. */
static bool agent_login(const char *holds)
{
	for (size_t i = 0; i < cf_secret_count; i++)
		if (cf_secret_table[i].agent_login && cf_secret_table[i].holds == holds)
			return true;
	return false;
}

static bool at_or_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool cf_guard_may_read(const struct cf_denied *d, const struct cf_strv *may_read)
{
	if (agent_login(d->holds))
		return true;
	for (size_t i = 0; may_read && i < may_read->n; i++)
		if (at_or_under(d->path, may_read->v[i]))
			return true;
	return false;
}

long cf_guard_may_read_inside(const struct cf_policy *pol, const struct cf_strv *may_read)
{
	for (size_t i = 0; may_read && i < may_read->n; i++)
		for (size_t k = 0; k < pol->n_denied; k++)
			if (strcmp(may_read->v[i], pol->denied[k].path) != 0 &&
			    at_or_under(may_read->v[i], pol->denied[k].path))
				return (long)i;
	return -1;
}

/* A detached tmpfs holding the two covers, "d" and "f", mode 000; MNT is its
 * mount fd. */
static int make_covers(int *mnt, char *why, size_t n)
{
	int fs = (int)cf_sys2(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return snprintf(why, n, "fsopen(tmpfs) failed: %s", strerror(-fs)), fs;
	int rc = (int)cf_sys5(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "16k", 0);
	if (!rc)
		rc = (int)cf_sys5(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0755", 0);
	if (!rc)
		rc = (int)cf_sys5(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	int m = rc ? rc : (int)cf_sys3(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
				       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	cf_sys_close(fs);
	if (m < 0)
		return snprintf(why, n, "can not mount a tmpfs for the covers: %s", strerror(-m)), m;
	int f = (int)cf_sys4(SYS_openat, m, "f", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
	if (f >= 0)
		cf_sys_close(f);
	rc = f < 0 ? f : (int)cf_sys3(SYS_mkdirat, m, "d", 0);
	if (!rc)
		rc = (int)cf_sys4(SYS_fchmodat, m, "f", 0, 0);
	if (!rc)
		rc = (int)cf_sys4(SYS_fchmodat, m, "d", 0, 0);
	if (rc) {
		cf_sys_close(m);
		return snprintf(why, n, "can not make the covers: %s", strerror(-rc)), rc;
	}
	*mnt = m;
	return 0;
}

/* Where the covers' tmpfs is attached while they are cloned from it: before
 * Linux 6.15, open_tree(OPEN_TREE_CLONE) clones only a mount of the
 * caller's own namespace (fs/namespace.c, __do_loopback: check_mnt), and
 * fails with EINVAL on the detached tmpfs of fsmount (Debian 12's 6.1,
 * issue 32). /proc is there on every system, holds no secret and is not
 * needed while the covers are made; the namespace is this process's own
 * (cf_userns_own), so nothing outside sees it. A secret that lay below it
 * would be missed by cover() and caught by the check at the end. */
#define COVERS_AT "/proc"
#ifndef MNT_DETACH
#define MNT_DETACH 2
#endif

static int attach_covers(int mnt, char *why, size_t n)
{
	int rc = (int)cf_sys5(SYS_move_mount, mnt, "", AT_FDCWD, COVERS_AT, MOVE_MOUNT_F_EMPTY_PATH);
	if (rc)
		snprintf(why, n, "can not attach the covers at %s: %s", COVERS_AT, strerror(-rc));
	return rc;
}

static int detach_covers(char *why, size_t n)
{
	int rc = (int)cf_sys2(SYS_umount2, COVERS_AT, MNT_DETACH);
	if (rc)
		snprintf(why, n, "can not detach the covers from %s: %s", COVERS_AT, strerror(-rc));
	return rc;
}

/* Cover PATH (opened without following its last component, so that what was
 * judged is what gets covered) with a read-only clone of the cover of its
 * kind. 1: covered; 0: not present (or a symlink: its target is on the list
 * itself); -errno. */
static int cover(int mnt, const char *path, char *why, size_t n)
{
	int t = cf_sys_openat(AT_FDCWD, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (t == -ENOENT || t == -ENOTDIR)
		return 0;
	if (t < 0)
		return snprintf(why, n, "can not open %s to cover it: %s", path, strerror(-t)), t;
	struct stat st;
	int rc = (int)cf_sys4(SYS_newfstatat, t, "", &st, AT_EMPTY_PATH);
	if (rc || S_ISLNK(st.st_mode)) {
		cf_sys_close(t);
		if (rc)
			snprintf(why, n, "can not stat %s: %s", path, strerror(-rc));
		return rc;
	}
	int c = (int)cf_sys3(SYS_open_tree, mnt, S_ISDIR(st.st_mode) ? "d" : "f",
			     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (c < 0) {
		cf_sys_close(t);
		return snprintf(why, n, "open_tree of a cover failed: %s", strerror(-c)), c;
	}
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
	rc = (int)cf_sys5(SYS_mount_setattr, c, "", AT_EMPTY_PATH, &attr, sizeof attr);
	if (!rc)
		rc = (int)cf_sys5(SYS_move_mount, c, "", t, "",
				  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	cf_sys_close(c);
	cf_sys_close(t);
	if (rc)
		return snprintf(why, n, "can not cover %s: %s", path, strerror(-rc)), rc;
	return 1;
}

/* Whether an --allow-read path lies strictly inside PATH: PATH is then on
 * the way to what the children read, and is covered entry by entry. */
static bool on_the_way(const struct cf_policy *pol, const char *path)
{
	for (size_t i = 0; i < pol->allow_read.n; i++)
		if (strcmp(pol->allow_read.v[i], path) != 0 && at_or_under(pol->allow_read.v[i], path))
			return true;
	return false;
}

/* The secret DIR holds an --allow-read path: cover each of its entries but
 * the allowed ones, going down the way to them, so that the children (who
 * share this view) read what they were allowed. With CHECK, cover nothing
 * and fail instead when such an entry is readable. An entry created in DIR
 * after this is not covered: the harness reads it, its children's Landlock
 * rules do not (SECURITY.md). 0 or -errno with WHY. */
static int cover_around(int mnt, const struct cf_policy *pol, const char *dir, bool check,
			struct cf_guard_report *rep, char *why, size_t n)
{
	DIR *d = opendir(dir);
	int rc = 0;
	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		rc = -errno;
		return snprintf(why, n, "can not list %s to cover its entries: %s", dir,
				strerror(-rc)), rc;
	}
	for (struct dirent *e; !rc && (e = readdir(d));) {
		char path[PATH_MAX];
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) {
			rc = -ENAMETOOLONG;
			snprintf(why, n, "an entry of %s has a path longer than PATH_MAX", dir);
		} else if (cf_strv_has(&pol->allow_read, path)) {
			continue;
		} else if (on_the_way(pol, path)) {
			rc = cover_around(mnt, pol, path, check, rep, why, n);
		} else if (!check) {
			rc = cover(mnt, path, why, n);
			if (rc > 0)
				rep->covered++;
			rc = rc < 0 ? rc : 0;
		} else if (lstat(path, &st) == 0 && !S_ISLNK(st.st_mode)) {
			/* Non-blocking: an entry left uncovered could be a fifo. */
			int fd = cf_sys_openat(AT_FDCWD, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			if (fd >= 0) {
				cf_sys_close(fd);
				snprintf(why, n, "%s is still readable after it was covered", path);
				rc = -EPERM;
			}
		}
	}
	closedir(d);
	return rc;
}

/* A Landlock domain that handles only MAKE_BLOCK and grants nothing: the
 * harness keeps every file access it had, and gains the domain's ptrace
 * rule. In the user namespace (or as root) this process holds CAP_SYS_ADMIN,
 * so the harness is not given no_new_privs. */
static int ptrace_domain(char *why, size_t n)
{
	struct landlock_ruleset_attr ra = {.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_BLOCK};
	int fd = (int)cf_sys3(SYS_landlock_create_ruleset, &ra, sizeof ra, 0);
	if (fd < 0)
		return snprintf(why, n, "landlock_create_ruleset failed: %s", strerror(-fd)), fd;
	int rc = (int)cf_sys2(SYS_landlock_restrict_self, fd, 0);
	cf_sys_close(fd);
	if (rc)
		return snprintf(why, n, "landlock_restrict_self failed: %s", strerror(-rc)), rc;
	return 0;
}

/* Root: mode 000 does not stop CAP_DAC_OVERRIDE, and CAP_SYS_ADMIN could
 * unmount the covers. Dropped from the bounding set too, so that no exec
 * (of a set-user-ID program included) gives them back. */
int cf_guard_drop_root_caps(char *why, size_t n)
{
	static const int caps[] = {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_SYS_ADMIN};
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	int rc;
	for (size_t i = 0; i < sizeof caps / sizeof *caps; i++)
		if ((rc = (int)cf_sys2(SYS_prctl, PR_CAPBSET_DROP, caps[i])))
			return snprintf(why, n, "can not drop capability %d: %s", caps[i],
					strerror(-rc)),
			       rc;
	if ((rc = (int)cf_sys2(SYS_capget, &h, d)))
		return snprintf(why, n, "capget failed: %s", strerror(-rc)), rc;
	for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) {
		unsigned bit = 1u << (caps[i] % 32);
		d[caps[i] / 32].effective &= ~bit;
		d[caps[i] / 32].permitted &= ~bit;
		d[caps[i] / 32].inheritable &= ~bit;
	}
	if ((rc = (int)cf_sys2(SYS_capset, &h, d)))
		return snprintf(why, n, "capset failed: %s", strerror(-rc)), rc;
	return 0;
}

/* Every capability of the user namespace goes at exec anyway (the harness's
 * ids are not 0 in it); dropped now, so that the check below sees what the
 * harness will see. */
static int drop_all_caps(char *why, size_t n)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0, 0, 0}, {0, 0, 0}};
	int rc = (int)cf_sys2(SYS_capset, &h, d);
	if (rc)
		snprintf(why, n, "capset failed: %s", strerror(-rc));
	return rc;
}

int cf_guard_harness(const struct cf_policy *pol, const struct cf_strv *may_read,
		     struct cf_guard_report *rep, char *why, size_t n)
{
	return cf_guard_harness_keep(pol, may_read, NULL, NULL, rep, why, n);
}

/* No mount namespace to guard in (RC, its CAUSE): said in REP, so that
 * the harness starts with a warning (issue 33). A root harness still gives
 * up the three capabilities, as its supervisor did (supervisor.h): its
 * children's credentials must be the supervisor's. If it can not, that
 * is a failure of the guard itself (WHY says so). */
static int without_ns(int rc, int cause, struct cf_guard_report *rep, char *why, size_t n)
{
	char caps[256];
	/* More than one thread in credfence is not the machine's setting: the
	 * guard failed (a sanitizer's runtime; WHY says so). */
	if (cause == CF_USERNS_CAUSE_THREADS)
		return rc;
	if (geteuid() == 0 && cf_guard_drop_root_caps(caps, sizeof caps)) {
		snprintf(why, n, "%s", caps);
		return rc;
	}
	rep->no_ns = true;
	rep->cause = cause;
	return rc;
}

int cf_guard_harness_keep(const struct cf_policy *pol, const struct cf_strv *may_read,
			  struct cf_tree_ns *ns, struct cf_shared_ns *keep,
			  struct cf_guard_report *rep, char *why, size_t n)
{
	int mnt = -1, rc, step;
	memset(rep, 0, sizeof *rep);
	if (keep)
		*keep = (struct cf_shared_ns){.user_fd = -1, .mnt_fd = -1,
						.off_why = "the harness's guard failed before it"};
	if ((rc = cf_userns_own(&step))) {
		cf_userns_words(rc, step, why, n);
		if (keep)
			snprintf(keep->off_why, sizeof keep->off_why, "%s", why);
		return without_ns(rc, cf_userns_cause(rc, step), rep, why, n);
	}
	if ((rc = make_covers(&mnt, why, n))) {
		/* The mount calls refused outright (a seccomp filter, or a
		 * namespace without capabilities): no namespace to guard in. */
		if (rc != -EPERM && rc != -EACCES && rc != -ENOSYS)
			return rc;
		cf_userns_cause_words(rc, CF_USERNS_SLAVE, why, n);
		return without_ns(rc, cf_userns_cause(rc, CF_USERNS_SLAVE), rep, why, n);
	}
	if ((rc = attach_covers(mnt, why, n))) {
		cf_sys_close(mnt);
		return rc;
	}
	/* The list is sorted: a location under one covered already is hidden
	 * with it (and could not be reached to be covered again). */
	const char *last = NULL;
	for (size_t i = 0; i < pol->n_denied; i++) {
		const struct cf_denied *d = &pol->denied[i];
		if (cf_guard_may_read(d, may_read)) {
			rep->may_read++;
			continue;
		}
		if (last && at_or_under(d->path, last))
			continue;
		if (on_the_way(pol, d->path)) {
			if ((rc = cover_around(mnt, pol, d->path, false, rep, why, n)))
				break;
			continue;
		}
		rc = cover(mnt, d->path, why, n);
		if (rc < 0)
			break;
		if (rc) {
			rep->covered++;
			last = d->path;
		} else {
			rep->absent++;
		}
		rc = 0;
	}
	cf_sys_close(mnt);
	/* Detached on failure too: best-effort mode runs the harness on. */
	char dwhy[160];
	int drc = detach_covers(dwhy, sizeof dwhy);
	if (rc)
		return rc;
	if (drc) {
		snprintf(why, n, "%s", dwhy);
		return drc;
	}
	/* Here: the helper's mount namespace is a copy of this one, covers
	 * included, and the guard may still open its namespaces (its
	 * Landlock domain would refuse /proc/PID/ns of a process outside). */
	if (keep && ns && ns->planned)
		(void)cf_shared_ns_make(keep, ns);
	else if (keep)
		*keep = (struct cf_shared_ns){.user_fd = -1, .mnt_fd = -1,
						.off_why = "nothing was planned for it"};
	if ((rc = ptrace_domain(why, n)))
		return rc;
	rc = geteuid() == 0 ? cf_guard_drop_root_caps(why, n) : drop_all_caps(why, n);
	if (rc)
		return rc;
	/* Fail closed: each location must refuse a read now, as it will refuse
	 * the harness, followed as the harness would follow it (a location
	 * swapped for a symlink after it was judged is not let through). */
	for (size_t i = 0; i < pol->n_denied; i++) {
		const struct cf_denied *d = &pol->denied[i];
		if (cf_guard_may_read(d, may_read))
			continue;
		if (on_the_way(pol, d->path)) {
			if ((rc = cover_around(-1, pol, d->path, true, rep, why, n)))
				return rc;
			continue;
		}
		int fd = cf_sys_openat(AT_FDCWD, d->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			cf_sys_close(fd);
			snprintf(why, n, "%s is still readable after it was covered", d->path);
			return -EPERM;
		}
	}
	return 0;
}

int cf_guard_probe(char *why, size_t n)
{
	struct {
		int rc;
		char why[1024];
	} r = {0};
	int p[2], step, mnt = -1;
	if (pipe2(p, O_CLOEXEC))
		return snprintf(why, n, "pipe: %s", strerror(errno)), -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int rc = -errno;
		close(p[0]);
		close(p[1]);
		return snprintf(why, n, "fork: %s", strerror(-rc)), rc;
	}
	if (pid == 0) {
		close(p[0]);
		if ((r.rc = cf_userns_own(&step)))
			cf_userns_words(r.rc, step, r.why, sizeof r.why);
		else if ((r.rc = make_covers(&mnt, r.why, sizeof r.why)))
			cf_userns_cause_words(r.rc, CF_USERNS_SLAVE, r.why, sizeof r.why);
		(void)!write(p[1], &r, sizeof r);
		_exit(0);
	}
	close(p[1]);
	ssize_t got = read(p[0], &r, sizeof r);
	close(p[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof r)
		return snprintf(why, n, "the probe ended early"), -EIO;
	snprintf(why, n, "%s", r.why);
	return r.rc;
}

/* The door's calls (fence.h): the guard of F's policy, and the namespace
 * of F's children kept in this process (harness_ns.c). */
long cf_fence_guard_may_read_inside(const struct cf_fence *f, const struct cf_strv *may_read)
{
	return cf_guard_may_read_inside(&f->pol, may_read);
}

int cf_fence_guard_harness(struct cf_fence *f, const struct cf_strv *may_read,
			   struct cf_fence_guard_report *rep, char *why, size_t n)
{
	struct cf_guard_report r;
	int rc = cf_guard_harness_keep(&f->pol, may_read, &f->ns, cf_harness_keep(), &r, why, n);
	*rep = (struct cf_fence_guard_report){.covered = r.covered, .absent = r.absent,
					      .may_read = r.may_read, .no_ns = r.no_ns};
	return rc;
}

int cf_fence_guard_probe(char *why, size_t n)
{
	return cf_guard_probe(why, n);
}
