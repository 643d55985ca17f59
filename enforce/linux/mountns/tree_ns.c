#include "tree_ns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nolibc.h"
#include "sys.h"
#include "userns.h"

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

int cf_tree_ns_prepare(struct cf_tree_ns *ns, const struct cf_policy *pol,
			 const struct cf_strv *allow, int write_protect, const char *cwd)
{
	memset(ns, 0, sizeof *ns);
	ns->write_protect = write_protect;
	snprintf(ns->cwd, sizeof ns->cwd, "%s", cwd);
	int rc = cf_protect_plan_build(&ns->plan, pol, allow, cwd);
	if (rc)
		return rc;
	ns->planned = true;
	return 0;
}

void cf_tree_ns_free(struct cf_tree_ns *ns)
{
	cf_protect_plan_free(&ns->plan);
	memset(ns, 0, sizeof *ns);
}

static int fail(struct cf_tree_ns *ns, int rc, int step, const char *at)
{
	ns->fail_step = step;
	ns->fail_at = at;
	return rc;
}

/* A recursive clone of PATH (AT_FDCWD) or of the object FD refers to. */
static int clone_tree(int fd, const char *path)
{
	return (int)cf_sys3(SYS_open_tree, fd, path,
			    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
				    (path[0] ? 0 : AT_EMPTY_PATH));
}

static int move_onto(int tree, int fd, const char *path)
{
	return (int)cf_sys5(SYS_move_mount, tree, "", fd, path,
			    MOVE_MOUNT_F_EMPTY_PATH | (path[0] ? 0 : MOVE_MOUNT_T_EMPTY_PATH));
}

/* The object at PATH, opened without following a last symlink: what is
 * bound is what was opened. -ELOOP for a symlink (left unprotected, as the
 * plan counted it). */
static int open_plain(const char *path, bool *dir)
{
	int t = cf_sys_openat(AT_FDCWD, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (t < 0)
		return t;
	struct stat st;
	int rc = (int)cf_sys4(SYS_newfstatat, t, "", &st, AT_EMPTY_PATH);
	if (!rc && S_ISLNK(st.st_mode))
		rc = -ELOOP;
	if (rc) {
		cf_sys_close(t);
		return rc;
	}
	*dir = S_ISDIR(st.st_mode);
	return t;
}

/* A self-bind of PATH in place, writable as it was: rename and rmdir of it
 * now fail with EBUSY. */
static int pin(const char *path)
{
	bool dir;
	int t = open_plain(path, &dir);
	if (t < 0)
		return t;
	int c = clone_tree(t, "");
	int rc = c < 0 ? c : move_onto(c, t, "");
	if (c >= 0)
		cf_sys_close(c);
	cf_sys_close(t);
	return rc;
}

int cf_tree_ns_bind_ro(const char *path)
{
	bool dir;
	int t = open_plain(path, &dir);
	if (t == -ENOENT || t == -ELOOP)
		return 0;
	if (t < 0)
		return t;
	int c = clone_tree(t, "");
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	int rc = c < 0 ? c
		       : (int)cf_sys5(SYS_mount_setattr, c, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro,
				      sizeof ro);
	if (!rc)
		rc = move_onto(c, t, "");
	if (c >= 0)
		cf_sys_close(c);
	cf_sys_close(t);
	return rc ? rc : 1;
}

/* mkdir -p PATH (0755): each component that is missing. */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];
	size_t n = 0;
	while (path[n] && n + 1 < sizeof buf) {
		buf[n] = path[n];
		n++;
	}
	buf[n] = '\0';
	for (size_t i = 1; i < n; i++)
		if (buf[i] == '/') {
			buf[i] = '\0';
			(void)cf_sys3(SYS_mkdirat, AT_FDCWD, buf, 0755);
			buf[i] = '/';
		}
	return (int)cf_sys3(SYS_mkdirat, AT_FDCWD, buf, 0755);
}

int cf_tree_ns_make(const struct cf_protect_item *it)
{
	const char *fill = it->row->fill;
	if (it->row->private_copy)
		return make_dirs(it->path);
	if (it->row->kind == CF_PROT_DIR || !fill)
		return (int)cf_sys3(SYS_mkdirat, AT_FDCWD, it->path, 0755);
	int fd = (int)cf_sys4(SYS_openat, AT_FDCWD, it->path,
			      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return fd;
	size_t n = cf_nl_strlen(fill);
	long w = cf_sys3(SYS_write, fd, fill, n);
	cf_sys_close(fd);
	if (w != (long)n) {
		/* A short file would not read as the absence of one: gone. */
		(void)cf_sys3(SYS_unlinkat, AT_FDCWD, it->path, 0);
		return w < 0 ? (int)w : -EIO;
	}
	return 0;
}

/* S appended to the option string O (N bytes); false when it does not fit. */
static bool opt_add(char *o, size_t n, size_t *at, const char *s)
{
	while (*s) {
		if (*at + 1 >= n)
			return false;
		o[(*at)++] = *s++;
	}
	o[*at] = '\0';
	return true;
}

static bool opt_num(char *o, size_t n, size_t *at, int v)
{
	char d[16];
	int k = 0;
	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < 15);
	char r[16];
	for (int i = 0; i < k; i++)
		r[i] = d[k - 1 - i];
	r[k] = '\0';
	return opt_add(o, n, at, r);
}

/* The options of an overlay whose lower layer is the directory LOWER (a
 * descriptor: the path is covered by then) and whose upper layer and work
 * directory are PATH/u and PATH/w. */
static bool overlay_opts(char *o, size_t n, int lower, const char *path, bool userxattr)
{
	size_t at = 0;
	return opt_add(o, n, &at, "lowerdir=/proc/self/fd/") && opt_num(o, n, &at, lower) &&
	       opt_add(o, n, &at, ",upperdir=") && opt_add(o, n, &at, path) &&
	       opt_add(o, n, &at, "/u,workdir=") && opt_add(o, n, &at, path) &&
	       opt_add(o, n, &at, "/w") && (!userxattr || opt_add(o, n, &at, ",userxattr"));
}

int cf_tree_ns_private(const char *path)
{
	char o[2 * PATH_MAX + 96], u[PATH_MAX + 4];
	bool dir = false;
	int lower = open_plain(path, &dir);
	if (lower == -ENOENT || lower == -ELOOP)
		return 0;
	if (lower < 0)
		return lower;
	if (!dir) {
		cf_sys_close(lower);
		return 0;
	}
	/* The fence's own tmpfs over the cache: the upper layer and the work
	 * directory live there, in no file system the user's tools see, and
	 * go when the namespace goes. */
	int rc = (int)cf_sys5(SYS_mount, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
	size_t k = 0;
	while (path[k] && k + 3 < sizeof u) {
		u[k] = path[k];
		k++;
	}
	u[k] = '/', u[k + 1] = 'u', u[k + 2] = '\0';
	if (!rc) {
		(void)cf_sys3(SYS_mkdirat, AT_FDCWD, u, 0755);
		u[k + 1] = 'w';
		(void)cf_sys3(SYS_mkdirat, AT_FDCWD, u, 0700);
		/* userxattr first: in a user namespace, overlay keeps its
		 * attributes in user.* xattrs (tmpfs has them since Linux 6.6;
		 * before, overlay mounts without them and a directory of the
		 * cache removed and made again inside fails). Then trusted.*
		 * (root outside a user namespace). */
		rc = -EINVAL;
		for (int x = 1; rc && x >= 0; x--)
			rc = overlay_opts(o, sizeof o, lower, path, x)
				     ? (int)cf_sys5(SYS_mount, "overlay", path, "overlay", 0, o)
				     : -ENAMETOOLONG;
		if (rc) {
			/* No overlay here: the fence keeps the empty tmpfs, a
			 * private cache that starts empty (the tool fetches
			 * again); never the user's own. */
			(void)cf_sys3(SYS_unlinkat, AT_FDCWD, u, AT_REMOVEDIR);
			u[k + 1] = 'u';
			(void)cf_sys3(SYS_unlinkat, AT_FDCWD, u, AT_REMOVEDIR);
			rc = 2;
		} else {
			rc = 1;
		}
	}
	cf_sys_close(lower);
	return rc;
}

int cf_tree_ns_hold(const struct cf_protect_item *it)
{
	return it->row->private_copy ? cf_tree_ns_private(it->path)
				     : cf_tree_ns_bind_ro(it->path);
}

static int drop_caps(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0, 0, 0}, {0, 0, 0}};
	return (int)cf_sys2(SYS_capset, &h, d);
}

/* A namespace that failed after its user namespace was made (the process
 * goes on with the read fence alone, under --write-protect=warn): that
 * namespace's capabilities go now, as they would have gone on success.
 * Kept, they would see through what is owned by the user's own ids, such
 * as the mode-000 covers of a harness's guard (a fenced cat found its key
 * missing instead of denied), and the supervisor serves no caller whose
 * credentials differ from its own. Root made no user namespace. RC is
 * returned as it is; when the capabilities can not be given up, a failure
 * at CF_NS_CAPS instead, which runs nothing (past CF_NS_RDONLY). */
static int give_up_caps(struct cf_tree_ns *ns, int rc)
{
	int e;
	if (cf_sys0(SYS_geteuid) == 0 || !(e = drop_caps()))
		return rc;
	return fail(ns, e, CF_NS_CAPS, NULL);
}

/* Every step after the user namespace: the clones of what stays writable,
 * the read-only root, the writable locations put back, the pins, the
 * placeholders and the read-only binds, and the working directory again. */
int cf_tree_ns_mount(struct cf_tree_ns *ns)
{
	const struct cf_protect_plan *pp = &ns->plan;
	int clones[CF_NS_MAX_RW + 1];
	size_t n = 0;
	int rc, step = 0;
	ns->in_force = false;
	ns->held = 0;
	ns->private_n = ns->private_empty = 0;
	if (pp->rw.n > CF_NS_MAX_RW)
		return fail(ns, -E2BIG, CF_NS_TOO_MANY, NULL);
	/* Clones of what stays writable, taken before / turns read-only:
	 * /proc first (its files are written: uid_map, oom_score_adj, ...). */
	for (size_t i = 0; i <= pp->rw.n; i++) {
		const char *p = i == 0 ? "/proc" : pp->rw.v[i - 1];
		int c = clone_tree(AT_FDCWD, p);
		if (c < 0) {
			while (n)
				cf_sys_close(clones[--n]);
			return fail(ns, c, CF_NS_CLONE, p);
		}
		clones[n++] = c;
	}
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	rc = (int)cf_sys5(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro);
	if (rc)
		step = CF_NS_RDONLY;
	/* Shortest first, so that a writable location inside another lands on
	 * top of it. */
	for (size_t i = 0; i < n; i++) {
		if (!rc && (rc = move_onto(clones[i], AT_FDCWD, i == 0 ? "/proc" : pp->rw.v[i - 1])))
			step = CF_NS_MOVE, ns->fail_at = i == 0 ? "/proc" : pp->rw.v[i - 1];
		cf_sys_close(clones[i]);
	}
	if (rc)
		return fail(ns, rc, step, ns->fail_at);
	/* The placeholders first (in the real file system, by the user: the
	 * ids are mapped to themselves; not for a dry run, credfence status):
	 * an empty directory, a file of its row's fill, or a private cache
	 * with its parents, which are then pinned with the rest. */
	for (size_t i = 0; i < pp->n_items && !ns->dry; i++)
		if (pp->items[i].make)
			(void)cf_tree_ns_make(&pp->items[i]);
	for (size_t i = 0; i < pp->mids.n; i++)
		if ((rc = pin(pp->mids.v[i])) && rc != -ENOENT)
			return fail(ns, rc, CF_NS_MID, pp->mids.v[i]);
	/* A lifted path inside a protected directory (--allow-write-protected
	 * .vscode/settings.json): a clone of it, taken from the writable mount
	 * before its row turns read-only, goes back on top of it afterwards. */
	int keep[CF_NS_MAX_KEEP_RW];
	size_t nk = 0;
	if (pp->keep_rw.n > CF_NS_MAX_KEEP_RW)
		return fail(ns, -E2BIG, CF_NS_KEEP_RW, NULL);
	for (size_t i = 0; i < pp->keep_rw.n; i++) {
		bool dir;
		int t = open_plain(pp->keep_rw.v[i], &dir);
		int c = t < 0 ? t : clone_tree(t, "");
		if (t >= 0)
			cf_sys_close(t);
		if (c < 0) {
			while (nk)
				cf_sys_close(keep[--nk]);
			return fail(ns, c, CF_NS_KEEP_RW, pp->keep_rw.v[i]);
		}
		keep[nk++] = c;
	}
	for (size_t i = 0; i < pp->n_items; i++) {
		rc = cf_tree_ns_hold(&pp->items[i]);
		if (rc < 0) {
			while (nk)
				cf_sys_close(keep[--nk]);
			return fail(ns, rc, CF_NS_BIND, pp->items[i].path);
		}
		if (pp->items[i].row->private_copy) {
			ns->private_n += rc > 0;
			ns->private_empty += rc == 2;
		} else {
			ns->held += rc > 0;
		}
	}
	/* Onto the path as it is now, inside the read-only bind: the kernel
	 * follows the path to the top mount. */
	rc = 0;
	for (size_t i = 0; i < nk; i++) {
		if (!rc && (rc = move_onto(keep[i], AT_FDCWD, pp->keep_rw.v[i])))
			step = CF_NS_KEEP_RW, ns->fail_at = pp->keep_rw.v[i];
		cf_sys_close(keep[i]);
	}
	if (rc)
		return fail(ns, rc, step, ns->fail_at);
	/* The working directory still refers to the mount that is now covered
	 * (and read-only): walk to it again. */
	if ((rc = (int)cf_sys1(SYS_chdir, ns->cwd)))
		return fail(ns, rc, CF_NS_CHDIR, ns->cwd);
	ns->in_force = true;
	return 0;
}

int cf_tree_ns_enter(struct cf_tree_ns *ns)
{
	int rc, step;
	ns->in_force = false;
	ns->held = 0;
	if (ns->plan.rw.n > CF_NS_MAX_RW)
		return fail(ns, -E2BIG, CF_NS_TOO_MANY, NULL);
	if ((rc = cf_userns_own(&step)))
		return step == CF_USERNS_UNSHARE ? fail(ns, rc, step, NULL)
						 : give_up_caps(ns, fail(ns, rc, step, NULL));
	if ((rc = cf_tree_ns_mount(ns)))
		return give_up_caps(ns, rc);
	/* A user's capabilities in its own namespace go at exec; self mode
	 * does not exec, and the supervisor serves only a caller whose
	 * credentials (CapEff included) are its own: dropped now. */
	if (cf_sys0(SYS_geteuid) != 0 && (rc = drop_caps())) {
		ns->in_force = false;
		return fail(ns, rc, CF_NS_CAPS, NULL);
	}
	return 0;
}

void cf_tree_ns_words(const struct cf_tree_ns *ns, int rc, char *why, size_t n)
{
	const char *at = ns->fail_at ? ns->fail_at : "";
	switch (ns->fail_step) {
	case CF_USERNS_UNSHARE:
	case CF_USERNS_SETGROUPS:
	case CF_USERNS_UID_MAP:
	case CF_USERNS_GID_MAP:
	case CF_USERNS_SLAVE:
		cf_userns_words(rc, ns->fail_step, why, n);
		return;
	case CF_NS_TOO_MANY:
		snprintf(why, n, "%zu writable locations, more than the %d a mount namespace is "
			 "made for; give fewer --writable locations", ns->plan.rw.n, CF_NS_MAX_RW);
		return;
	case CF_NS_CLONE:
		snprintf(why, n, "open_tree(%s) failed: %s", at, strerror(-rc));
		cf_userns_cause_words(rc, CF_NS_CLONE, why, n);
		return;
	case CF_NS_RDONLY:
		snprintf(why, n, "can not make the mounts read-only: %s", strerror(-rc));
		cf_userns_cause_words(rc, CF_NS_RDONLY, why, n);
		return;
	case CF_NS_MOVE:
		snprintf(why, n, "can not put the writable location %s back: %s", at, strerror(-rc));
		return;
	case CF_NS_MID:
		snprintf(why, n, "can not make %s a mount point: %s", at, strerror(-rc));
		return;
	case CF_NS_BIND:
		snprintf(why, n, "can not bind %s read-only: %s", at, strerror(-rc));
		return;
	case CF_NS_CHDIR:
		snprintf(why, n, "can not enter the working directory %s again: %s", at,
			 strerror(-rc));
		return;
	case CF_NS_KEEP_RW:
		if (rc == -E2BIG)
			snprintf(why, n, "more than %d --allow-write-protected paths lie inside "
				 "protected directories; lift their directories instead",
				 CF_NS_MAX_KEEP_RW);
		else
			snprintf(why, n, "can not keep %s writable inside its read-only row: %s", at,
				 strerror(-rc));
		return;
	case CF_NS_CAPS:
		snprintf(why, n, "can not give up the capabilities of the user namespace: %s",
			 strerror(-rc));
		return;
	default:
		snprintf(why, n, "%s", strerror(-rc));
	}
}
