/* The mount namespace of the fenced tree, made once for a harness's
 * children and entered by each of them. See fenced_keep.h. */
#include "fenced_keep.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys.h"
#include "userns.h"

#ifndef MS_REC
#define MS_REC 16384
#endif
#ifndef MS_SLAVE
#define MS_SLAVE (1 << 19)
#endif

/* What the helper tells the guard. */
struct result {
	int rc;
	size_t held;
	char why[512];
};

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	ssize_t w = write(fd, text, len);
	int rc = w < 0 ? -errno : (size_t)w == len ? 0 : -EIO;
	close(fd);
	return rc;
}

/* The helper's id maps, written by the guard (which holds CAP_SETUID over
 * the helper's parent namespace; the helper does not). Root: every id
 * mapped to itself, so that chown, tar -p and cp -a as root keep their
 * owners. Else the user's own ids, with setgroups denied (as userns.c). */
static int write_maps(pid_t pid, bool root, char *why, size_t n)
{
	char path[64], map[64];
	int rc = 0;
	if (!root) {
		snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
		if ((rc = write_text(path, "deny")))
			return snprintf(why, n, "can not write %s: %s", path, strerror(-rc)), rc;
	}
	for (int g = 0; g < 2; g++) {
		unsigned id = g ? (unsigned)getegid() : (unsigned)geteuid();
		snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, g ? "gid_map" : "uid_map");
		if (root)
			snprintf(map, sizeof map, "0 0 4294967295");
		else
			snprintf(map, sizeof map, "%u %u 1", id, id);
		if ((rc = write_text(path, map)))
			return snprintf(why, n, "can not write %s: %s", path, strerror(-rc)), rc;
	}
	return 0;
}

static bool read_all(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, (char *)buf + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return true;
}

/* The helper: a user and a mount namespace of its own, its maps from the
 * guard, then the namespace of fenced_ns.h; its result on OUT; then it
 * waits to be killed (the guard opens its namespaces meanwhile). */
static void helper(struct cf_fenced_ns *ns, int in, int out)
{
	struct result r = {0};
	char go;
	r.rc = (int)cf_sys1(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS);
	(void)!write(out, &r.rc, sizeof r.rc);
	if (r.rc || !read_all(in, &go, 1))
		_exit(0);
	r.rc = (int)cf_sys5(SYS_mount, "none", "/", NULL, MS_REC | MS_SLAVE, NULL);
	if (r.rc)
		snprintf(r.why, sizeof r.why, "can not make the mounts private: %s",
			 strerror(-r.rc));
	else if ((r.rc = cf_fenced_ns_mount(ns)))
		cf_fenced_ns_words(ns, r.rc, r.why, sizeof r.why);
	r.held = ns->held;
	(void)!write(out, &r, sizeof r);
	(void)!read(in, &go, 1);
	_exit(0);
}

static int open_ns(pid_t pid, const char *which, unsigned long long *ino,
		   unsigned long long *dev, char *why, size_t n)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, which);
	/* Inherited by the harness: no O_CLOEXEC. */
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		int rc = -errno;
		if (fd >= 0)
			close(fd);
		return snprintf(why, n, "can not open %s: %s", path, strerror(-rc)), rc;
	}
	*ino = (unsigned long long)st.st_ino;
	*dev = (unsigned long long)st.st_dev;
	return fd;
}

int cf_fenced_keep_make(struct cf_fenced_keep *k, struct cf_fenced_ns *ns)
{
	int down[2], up[2], rc;
	struct result r = {0};
	memset(k, 0, sizeof *k);
	k->user_fd = k->mnt_fd = -1;
	k->root = geteuid() == 0;
	k->write_protect = ns->write_protect;
	if (ns->no_userns) {
		ns->fail_step = CF_USERNS_UNSHARE;
		cf_fenced_ns_words(ns, -EPERM, k->off_why, sizeof k->off_why);
		return -EPERM;
	}
	if (ns->plan.rw.n > CF_NS_MAX_RW) {
		ns->fail_step = CF_NS_TOO_MANY;
		cf_fenced_ns_words(ns, -E2BIG, k->off_why, sizeof k->off_why);
		return -E2BIG;
	}
	if (pipe2(down, O_CLOEXEC))
		return rc = -errno, snprintf(k->off_why, sizeof k->off_why, "pipe: %s",
					     strerror(-rc)), rc;
	if (pipe2(up, O_CLOEXEC)) {
		rc = -errno;
		close(down[0]);
		close(down[1]);
		return snprintf(k->off_why, sizeof k->off_why, "pipe: %s", strerror(-rc)), rc;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		helper(ns, down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	if (pid < 0) {
		rc = -errno;
		snprintf(k->off_why, sizeof k->off_why, "fork: %s", strerror(-rc));
		goto out;
	}
	int unshared;
	if (!read_all(up[0], &unshared, sizeof unshared)) {
		rc = -EIO;
		snprintf(k->off_why, sizeof k->off_why, "the helper that makes it ended early");
		goto out;
	}
	if (unshared) {
		rc = unshared;
		snprintf(k->off_why, sizeof k->off_why,
			 "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: %s (user namespaces are off: "
			 "sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, or "
			 "AppArmor's kernel.apparmor_restrict_unprivileged_userns); allow user "
			 "namespaces", strerror(-rc));
		goto out;
	}
	if ((rc = write_maps(pid, k->root, k->off_why, sizeof k->off_why)))
		goto out;
	if (write(down[1], "g", 1) != 1 || !read_all(up[0], &r, sizeof r)) {
		rc = -EIO;
		snprintf(k->off_why, sizeof k->off_why, "the helper that makes it ended early");
		goto out;
	}
	if ((rc = r.rc)) {
		snprintf(k->off_why, sizeof k->off_why, "%s", r.why);
		goto out;
	}
	k->held = r.held;
	if ((rc = open_ns(pid, "user", &k->user_ino, &k->dev, k->off_why, sizeof k->off_why)) < 0)
		goto out;
	k->user_fd = rc;
	if ((rc = open_ns(pid, "mnt", &k->mnt_ino, &k->dev, k->off_why, sizeof k->off_why)) < 0) {
		close(k->user_fd);
		k->user_fd = -1;
		goto out;
	}
	k->mnt_fd = rc;
	rc = 0;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(down[1]);
	close(up[0]);
	return rc;
}

void cf_fenced_keep_value(const struct cf_fenced_keep *k, char *buf, size_t n)
{
	if (k->user_fd < 0 || k->mnt_fd < 0)
		snprintf(buf, n, "off:%s", k->off_why);
	else
		snprintf(buf, n, "%05d,%05d,%llu,%llu,%llu,%zu,%d", k->user_fd, k->mnt_fd,
			 k->user_ino, k->mnt_ino, k->dev, k->held, k->root ? 1 : 0);
}

/* FD is the namespace with inode INO on the namespace file system DEV (an
 * inode number names one namespace there; the user and the mount
 * namespace have two). Raw system calls. */
static bool is_ns(int fd, unsigned long long ino, unsigned long long dev)
{
	struct stat st;
	if (fd < 0 || cf_sys4(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH))
		return false;
	return (unsigned long long)st.st_ino == ino && (unsigned long long)st.st_dev == dev;
}

/* Above what a harness uses: a shell moves its own descriptors down from
 * 255, and most programs take the lowest free one. */
static int high_fd(int fd)
{
	struct rlimit lim;
	long base = 768;
	if (!getrlimit(RLIMIT_NOFILE, &lim) && lim.rlim_cur != RLIM_INFINITY &&
	    (long)lim.rlim_cur - 64 < base)
		base = (long)lim.rlim_cur / 2;
	int to = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);
	if (to < 0)
		to = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return to;
}

const char *cf_fenced_keep_adopt(struct cf_fenced_keep *k, const char *value, int write_protect,
				 char *buf, size_t n)
{
	int ufd, mfd, root;
	memset(k, 0, sizeof *k);
	k->user_fd = k->mnt_fd = -1;
	k->write_protect = write_protect;
	if (!value) {
		snprintf(k->off_why, sizeof k->off_why,
			 "the harness was started without it (no CREDFENCE_FENCED_NS)");
		return NULL;
	}
	if (strncmp(value, "off:", 4) == 0) {
		snprintf(k->off_why, sizeof k->off_why, "%s", value + 4);
		return value;
	}
	if (sscanf(value, "%d,%d,%llu,%llu,%llu,%zu,%d", &ufd, &mfd, &k->user_ino, &k->mnt_ino,
		   &k->dev, &k->held, &root) != 7 || k->user_ino == k->mnt_ino) {
		snprintf(k->off_why, sizeof k->off_why, "CREDFENCE_FENCED_NS is malformed");
		return NULL;
	}
	k->root = root == 1;
	if (!is_ns(ufd, k->user_ino, k->dev) || !is_ns(mfd, k->mnt_ino, k->dev)) {
		snprintf(k->off_why, sizeof k->off_why,
			 "the harness was started without its descriptors (something closed them "
			 "before it ran)");
		return NULL;
	}
	k->user_fd = high_fd(ufd);
	k->mnt_fd = high_fd(mfd);
	if (k->user_fd < 0 || k->mnt_fd < 0) {
		snprintf(k->off_why, sizeof k->off_why, "can not move its descriptors: %s",
			 strerror(errno));
		if (k->user_fd >= 0)
			close(k->user_fd);
		if (k->mnt_fd >= 0)
			close(k->mnt_fd);
		k->user_fd = k->mnt_fd = -1;
		return NULL;
	}
	cf_fenced_keep_value(k, buf, n);
	return buf;
}

/* A child's capabilities before it enters the user namespace, where setns
 * gives it every one: taken back afterwards, so that its credentials stay
 * those of the harness's other children (the supervisor serves only a
 * caller whose CapEff equals its own, sup_caller.h). Root keeps root's
 * less what the guard dropped (bounding set included); any other user
 * holds none. Raw system calls. */
struct caps {
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct d[2];
	unsigned long long bounding;
};

static int caps_save(struct caps *c, bool root)
{
	c->h = (struct __user_cap_header_struct){_LINUX_CAPABILITY_VERSION_3, 0};
	c->bounding = 0;
	if (!root) {
		c->d[0] = c->d[1] = (struct __user_cap_data_struct){0, 0, 0};
		return 0;
	}
	for (int cap = 0; cap < 64; cap++) {
		long in = cf_sys2(SYS_prctl, PR_CAPBSET_READ, cap);
		if (in < 0)
			break; /* past the kernel's last capability */
		if (in)
			c->bounding |= 1ull << cap;
	}
	return (int)cf_sys2(SYS_capget, &c->h, c->d);
}

static int caps_restore(struct caps *c, bool root)
{
	int rc;
	for (int cap = 0; root && cap < 64; cap++) {
		if (c->bounding & (1ull << cap))
			continue;
		rc = (int)cf_sys2(SYS_prctl, PR_CAPBSET_DROP, cap);
		if (rc == -EINVAL)
			break;
		if (rc)
			return rc;
	}
	c->h = (struct __user_cap_header_struct){_LINUX_CAPABILITY_VERSION_3, 0};
	return (int)cf_sys2(SYS_capset, &c->h, c->d);
}

int cf_fenced_keep_enter(const struct cf_fenced_keep *k, bool *changed, const char **why)
{
	char cwd[4096];
	int rc;
	*changed = false;
	if (k->user_fd < 0 || k->mnt_fd < 0) {
		*why = k->off_why;
		return -ENOENT;
	}
	/* A harness that closed every descriptor before it forked this child
	 * (CPython's close_fds), or put another file in their place. */
	if (!is_ns(k->user_fd, k->user_ino, k->dev) || !is_ns(k->mnt_fd, k->mnt_ino, k->dev)) {
		*why = "the descriptors of the namespace were closed before this child's exec "
		       "(a close_fds, or a closefrom)";
		return -EBADF;
	}
	rc = (int)cf_sys2(SYS_getcwd, cwd, sizeof cwd);
	if (rc < 0 || cwd[0] != '/') {
		*why = "the working directory has no path from the root";
		return rc < 0 ? rc : -ENOENT;
	}
	struct caps saved;
	if ((rc = caps_save(&saved, k->root))) {
		*why = "can not read this child's capabilities";
		return rc;
	}
	if ((rc = (int)cf_sys2(SYS_setns, k->user_fd, CLONE_NEWUSER))) {
		*why = "setns into the namespace's user namespace failed";
		return rc;
	}
	*changed = true;
	if ((rc = (int)cf_sys2(SYS_setns, k->mnt_fd, CLONE_NEWNS))) {
		*why = "setns into the mount namespace failed";
		return rc;
	}
	/* setns put the root and the working directory at the namespace's
	 * root: walk back by the path (a descriptor of the old directory
	 * would lead into the old, writable, mounts). */
	if ((rc = (int)cf_sys1(SYS_chdir, cwd))) {
		*why = "can not enter the working directory again in the namespace";
		return rc;
	}
	if ((rc = caps_restore(&saved, k->root))) {
		*why = "can not give up the capabilities of the namespace";
		return rc;
	}
	return 0;
}

int cf_fenced_keep_plan(struct cf_fenced_keep *k, struct cf_protect_plan *plan,
			const struct cf_policy *pol, const struct cf_strv *allow, const char *cwd)
{
	if (k->user_fd < 0)
		return 0;
	int rc = cf_protect_plan_build(plan, pol, allow, cwd);
	if (!rc)
		k->plan = plan;
	return rc;
}

const char *cf_fenced_keep_lost(const struct cf_fenced_keep *k)
{
	const struct cf_protect_plan *pp = k->plan;
	struct statx stx;
	for (size_t i = 0; pp && i < pp->n_items; i++) {
		const char *p = pp->items[i].path;
		long rc = cf_sys5(SYS_statx, AT_FDCWD, p, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
				  STATX_TYPE, &stx);
		if (rc || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
			return rc ? p : NULL; /* the kernel does not say: not checked */
		if (!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
			return p;
	}
	return NULL;
}

void cf_fenced_keep_pass(const struct cf_fenced_keep *k, bool on)
{
	if (k->user_fd < 0 || k->mnt_fd < 0)
		return;
	(void)cf_sys3(SYS_fcntl, k->user_fd, F_SETFD, on ? 0 : FD_CLOEXEC);
	(void)cf_sys3(SYS_fcntl, k->mnt_fd, F_SETFD, on ? 0 : FD_CLOEXEC);
}
