/* Which concrete paths the table of protected files (protected.h) names for
 * a policy and a working directory: the plan of the mount namespace of the
 * fenced tree (enforce/linux/mountns/tree_ns.h). Built in normal context; the
 * lists are what the namespace's maker walks, with no allocation, before
 * exec. Portable (lstat and readdir only). */
#ifndef CF_PROTECT_PLAN_H
#define CF_PROTECT_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "protected.h"
#include "strv.h"

struct cf_protect_item {
	char *path;                         /* canonical, inside a writable location */
	const struct cf_protected_row *row;
	bool make;                          /* absent: an empty directory is made
					       first (a placeholder row) */
};

struct cf_protect_plan {
	struct cf_strv rw;     /* the writable locations that exist, shortest first */
	struct cf_strv mids;   /* every directory strictly between a writable
				  location and a protected path, up to its parent,
				  shortest first: made mount points, so that none
				  can be renamed away with the path inside */
	struct cf_protect_item *items; /* shortest first */
	size_t n_items;
	struct cf_strv keep_rw; /* lifted paths strictly inside an item, that exist: bound
				   writable over themselves on top of its read-only bind
				   (none inside another), shortest first */
	size_t lifted;  /* rows at or under an allowed path (--allow-write-protected) */
	size_t lift_absent; /* lifted paths strictly inside an item that do not
			       exist: they can not be created (SECURITY.md) */
	size_t absent;  /* absent, no placeholder: not protected (SECURITY.md) */
	size_t links;   /* a symlink on the way or at the end: not protected */
	size_t git_skipped; /* git directories past CF_GIT_MAX_DIRS: not walked */
};

/* Build the plan for POL (canonical writable locations and home) from CWD
 * (canonical). ALLOW: --allow-write-protected as given (made canonical
 * against CWD here; one that can not be is left out, the CLI refuses it):
 * a row at or under one is left writable, and one strictly inside a row's
 * location is kept writable inside it (keep_rw) (may be NULL). Only projects that exist now are planned: a repository made later
 * inside the fence is not protected. 0 or -ENOMEM. */
int cf_protect_plan_build(struct cf_protect_plan *pp, const struct cf_policy *pol,
			  const struct cf_strv *allow, const char *cwd);
void cf_protect_plan_free(struct cf_protect_plan *pp);

/* The item of PP that holds the canonical PATH (is it, or lies above it;
 * the deepest), or NULL: what `credfence check` answers from, so that it
 * says what the mounts do, the rows git_layout.h finds included. */
const struct cf_protect_item *cf_protect_plan_find(const struct cf_protect_plan *pp,
						   const char *path);

#endif
