/* The mount namespace of the fenced tree (issues 22 and 23): every mount
 * read-only except the writable locations, so that a metadata change
 * outside them (chmod, chown, utimes, xattrs, inode flags) fails with EROFS
 * in the kernel at no cost per call; and, inside the writable locations, a
 * read-only bind over each protected path of common/protected.h (the files
 * the user's own unfenced tools later run), with every directory between
 * the writable location and the path made a mount point, so that it can not
 * be renamed away with the path inside (rename and rmdir of a mount point
 * fail with EBUSY).
 *
 * Made once per `credfence run`, in the process that is about to exec,
 * single-threaded, before Landlock: unshare(CLONE_NEWUSER|CLONE_NEWNS) (root:
 * CLONE_NEWNS only). No process inside can make a mount writable again:
 * Landlock refuses mount, umount, move_mount and pivot_root to it, and the
 * IPC fence's filter refuses mount_setattr, which Landlock lets through to a
 * holder of CAP_SYS_ADMIN (root keeps it over exec). What the fenced
 * process starts inherits the namespace. Reached through enforce/fence.h. */
#ifndef CF_TREE_NS_H
#define CF_TREE_NS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "protect_plan.h"

/* More writable locations than this are refused at prepare (the clones are
 * held on the stack while the root is made read-only). */
#define CF_NS_MAX_RW 64
/* More lifted paths inside protected directories than this are refused
 * when the namespace is made (their clones are held on the stack too). */
#define CF_NS_MAX_KEEP_RW 32

enum cf_ns_step {
	/* 1..5: enum cf_userns_step; up to CF_NS_RDONLY nothing is changed yet
	 * that the process could see */
	CF_NS_TOO_MANY = 15, /* more than CF_NS_MAX_RW writable locations */
	CF_NS_CLONE,      /* open_tree of a writable location */
	CF_NS_RDONLY,     /* mount_setattr of / */
	CF_NS_MOVE,       /* a writable location put back */
	CF_NS_MID,        /* a directory on the way made a mount point */
	CF_NS_BIND,       /* a protected path bound read-only */
	CF_NS_CHDIR,      /* back into the working directory, now on top */
	CF_NS_CAPS,       /* not root: the user namespace's capabilities given up */
	CF_NS_KEEP_RW,    /* a lifted path kept writable inside its read-only row */
};

struct cf_tree_ns {
	bool planned;
	bool dry;         /* make no placeholder (a probe: credfence status) */
	int write_protect;
	struct cf_protect_plan plan;
	char cwd[PATH_MAX];
	/* what cf_tree_ns_enter did */
	bool in_force;    /* the namespace is made */
	size_t held;      /* protected paths bound read-only */
	size_t private_n; /* caches given a private copy */
	size_t private_empty; /* of those, how many got no overlay: an empty
				 tmpfs of the fence's own instead */
	int fail_step;    /* on failure: the step (enum cf_ns_step or cf_userns_step) */
	const char *fail_at; /* and the path it failed at, or NULL */
	char off_why[512];   /* why it is not made, for the log (cf_fence_protect) */
};

/* ---- In the parent ---- */

/* Normal context: plan for POL from CWD. 0 or -ENOMEM. */
int cf_tree_ns_prepare(struct cf_tree_ns *ns, const struct cf_policy *pol,
			 const struct cf_strv *allow, int write_protect, const char *cwd);
void cf_tree_ns_free(struct cf_tree_ns *ns);

/* The failure RC of cf_tree_ns_enter in words, into WHY. Normal context. */
void cf_tree_ns_words(const struct cf_tree_ns *ns, int rc, char *why, size_t n);

/* ---- In the child too: raw system calls and the stack only ---- */

/* Make the namespace in the calling process (one thread), and the
 * placeholders (empty directories, mode 0755). Raw system calls
 * and stack only. 0, or -errno with fail_step and fail_at set; up to step
 * CF_NS_RDONLY the process is in a copy of the namespace it came from (or
 * still in that one), and may go on without the protection. */
int cf_tree_ns_enter(struct cf_tree_ns *ns);

/* The steps of cf_tree_ns_enter after the user namespace, for a caller
 * that made the namespace itself (shared_ns.c: a helper of the harness's
 * guard). Same context and results. */
int cf_tree_ns_mount(struct cf_tree_ns *ns);

/* One step of cf_tree_ns_mount: a read-only bind of PATH over itself,
 * in the caller's mount namespace (shared_ns.c's keeper binds a row
 * again with it). Raw system calls and stack. 1 bound, 0 not there (or a
 * symlink), or -errno. */
int cf_tree_ns_bind_ro(const char *path);

/* A private copy of the cache directory PATH in the caller's mount
 * namespace: a tmpfs over it, then an overlay of PATH (lower, as it was)
 * with its upper layer in that tmpfs, so that what is written there lands
 * in the fence's own copy and goes with the namespace (Linux 5.11+ in a
 * user namespace). Where overlay can not be mounted, the empty tmpfs
 * stays: a private cache that starts empty. Raw system calls and stack.
 * 1 overlay, 2 empty tmpfs, 0 not there (or a symlink), or -errno. */
int cf_tree_ns_private(const char *path);

/* The mount an item of the plan gets: a read-only bind, or for a private
 * copy cf_tree_ns_private. Same results (1 or 2 held). */
int cf_tree_ns_hold(const struct cf_protect_item *it);

/* The placeholder of an absent item IT (make set): an empty directory
 * (0755), or for a file row a file (0644) holding the row's fill, which
 * its tool reads as the absence of the file (.git/commondir: "."). Made in
 * the real file system, never over an existing name. Raw system calls and
 * stack. 0 or -errno. */
int cf_tree_ns_make(const struct cf_protect_item *it);

#endif
