#include "fenced_ns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys.h"
#include "userns.h"

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

int cf_fenced_ns_prepare(struct cf_fenced_ns *ns, const struct cf_policy *pol,
			 const struct cf_strv *allow, int write_protect, const char *cwd)
{
	memset(ns, 0, sizeof *ns);
	ns->write_protect = write_protect;
	const char *t = getenv("CF_TEST_NO_USERNS");
	ns->no_userns = t && strcmp(t, "1") == 0;
	snprintf(ns->cwd, sizeof ns->cwd, "%s", cwd);
	int rc = cf_protect_plan_build(&ns->plan, pol, allow, cwd);
	if (rc)
		return rc;
	ns->planned = true;
	return 0;
}

void cf_fenced_ns_free(struct cf_fenced_ns *ns)
{
	cf_protect_plan_free(&ns->plan);
	memset(ns, 0, sizeof *ns);
}

static int fail(struct cf_fenced_ns *ns, int rc, int step, const char *at)
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

int cf_fenced_ns_bind_ro(const char *path)
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
static int give_up_caps(struct cf_fenced_ns *ns, int rc)
{
	int e;
	if (cf_sys0(SYS_geteuid) == 0 || !(e = drop_caps()))
		return rc;
	return fail(ns, e, CF_NS_CAPS, NULL);
}

/* Every step after the user namespace: the clones of what stays writable,
 * the read-only root, the writable locations put back, the pins, the
 * placeholders and the read-only binds, and the working directory again. */
int cf_fenced_ns_mount(struct cf_fenced_ns *ns)
{
	const struct cf_protect_plan *pp = &ns->plan;
	int clones[CF_NS_MAX_RW + 1];
	size_t n = 0;
	int rc, step = 0;
	ns->in_force = false;
	ns->held = 0;
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
		/* A placeholder is made in the real file system, by the user (the
		 * ids are mapped to themselves): an empty directory the user's own
		 * tools see and may fill later. Not for a dry run (status). */
		if (pp->items[i].make && !ns->dry)
			(void)cf_sys3(SYS_mkdirat, AT_FDCWD, pp->items[i].path, 0755);
		rc = cf_fenced_ns_bind_ro(pp->items[i].path);
		if (rc < 0) {
			while (nk)
				cf_sys_close(keep[--nk]);
			return fail(ns, rc, CF_NS_BIND, pp->items[i].path);
		}
		ns->held += (size_t)rc;
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

int cf_fenced_ns_enter(struct cf_fenced_ns *ns)
{
	int rc, step;
	ns->in_force = false;
	ns->held = 0;
	if (ns->no_userns)
		return fail(ns, -EPERM, CF_USERNS_UNSHARE, NULL);
	if (ns->plan.rw.n > CF_NS_MAX_RW)
		return fail(ns, -E2BIG, CF_NS_TOO_MANY, NULL);
	if ((rc = cf_userns_own(&step)))
		return step == CF_USERNS_UNSHARE ? fail(ns, rc, step, NULL)
						 : give_up_caps(ns, fail(ns, rc, step, NULL));
	if ((rc = cf_fenced_ns_mount(ns)))
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

void cf_fenced_ns_words(const struct cf_fenced_ns *ns, int rc, char *why, size_t n)
{
	const char *at = ns->fail_at ? ns->fail_at : "";
	switch (ns->fail_step) {
	case CF_USERNS_UNSHARE:
		if (ns->no_userns) {
			snprintf(why, n, "user namespaces are off for this run "
				 "(CF_TEST_NO_USERNS=1, a test switch)");
			return;
		}
		cf_userns_words(rc, ns->fail_step, why, n);
		return;
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
		return;
	case CF_NS_RDONLY:
		snprintf(why, n, "can not make the mounts read-only: %s", strerror(-rc));
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
