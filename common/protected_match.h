/* Which row of the protected table (protected.h) covers a path, under a
 * policy: the one answer that `credfence check`, the enforcement and the
 * log give. Plain string work on canonical paths, no allocation and no
 * system call (cf_protected_canon_lifts and cf_protected_lift_unborn
 * aside): callable anywhere.
 *
 * The rule, precisely (protected.h's project roots, which the enforcement
 * mounts at):
 * - A project row REL covers ROOT/REL and what lies under it, where ROOT is a
 *   project root: a writable location, a directory directly below one, or
 *   the working directory or one of its ancestors that lies in a writable
 *   location. A deeper directory is no root (a repository two levels below
 *   the workspace, off the way to the working directory): the fence would
 *   have to walk the whole tree at every launch to find its rows.
 * - A home row covers HOME/REL and what lies under it, for the home and for
 *   the account's home, when that location lies strictly inside a writable
 *   location (~/.npm/_npx inside ~/.npm; home itself writable).
 * - Elsewhere Landlock refuses the write already. A writable location that
 *   is a row's location or lies inside one (a harness's
 *   ~/.claude/shell-snapshots) is the user's choice and is not covered.
 * - A lifted path (--allow-write-protected) uncovers itself and what lies
 *   under it, nothing above it.
 * - When several rows match, the one with the longest location answers. */
#ifndef CF_PROTECTED_MATCH_H
#define CF_PROTECTED_MATCH_H

#include <stddef.h>

#include "protected.h"
#include "strv.h"

struct cf_policy;

struct cf_protect_scope {
	char *const *writable; /* canonical writable locations */
	size_t n_writable;
	const char *home, *account_home; /* canonical, or NULL */
	const char *cwd;       /* the canonical working directory, or NULL */
	char *const *lifted;   /* canonical --allow-write-protected paths */
	size_t n_lifted;
};

/* The scope of policy P in the working directory CWD (canonical, may be
 * NULL), LIFTED (canonical, may be NULL) lifted. */
void cf_protect_scope_of(struct cf_protect_scope *s, const struct cf_policy *p, const char *cwd,
			 const struct cf_strv *lifted);

/* The row that covers the canonical absolute PATH in S, or NULL; when LOC is
 * not NULL, the row's location there (cut to LOCSZ). */
const struct cf_protected_row *cf_protected_match(const struct cf_protect_scope *s,
						  const char *path, char *loc, size_t locsz);

/* IN (--allow-write-protected as given) made canonical against CWD into OUT.
 * 0, or -errno of cf_canon (naming the bad entry in *BAD), or -ENOMEM. */
int cf_protected_canon_lifts(const struct cf_strv *in, const char *cwd, struct cf_strv *out,
			     const char **bad);

/* A lift that can not take effect (a system call: lstat): the canonical
 * lifted PATH lies strictly inside the location of a row S (the scope
 * without the lifts) covers, that
 * location is held (it exists, or gets a placeholder), and PATH does not
 * exist. A lift inside a row keeps what exists writable in place; a new
 * file can not be made inside the read-only row. The row, or NULL; LOC
 * gets its location (LOCSZ bytes). */
const struct cf_protected_row *cf_protected_lift_unborn(const struct cf_protect_scope *s,
							const char *path, char *loc, size_t locsz);

/* Whether the canonical PATH may be lifted under P in the canonical working
 * directory CWD (may be NULL): it must be a location a
 * row covers, or lie under one, and be no secret location and lie in none.
 * 0, or -EINVAL with WHY (N bytes) saying what is wrong and what to do. */
int cf_protected_lift_refusal(const struct cf_policy *p, const char *cwd, const char *path,
			      char *why, size_t n);

#endif
