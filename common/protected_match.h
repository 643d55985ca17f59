/* Which row of the protected table (protected.h) covers a path, under a
 * policy: the one answer that `credfence check`, the enforcement and the
 * log give. Plain string work on canonical paths, no allocation and no
 * system call (cf_protected_canon_lifts aside): callable anywhere.
 *
 * The rule, precisely:
 * - A project row REL matches PATH when REL's components appear, in order,
 *   as whole components of PATH, at any depth (every directory is a project
 *   root: a repository inside a repository, a project below the workspace).
 *   The row's location is PATH cut after them.
 * - A home row matches when PATH is HOME/REL or lies under it, for the home
 *   and for the account's home.
 * - Either counts only when its location is a writable location or lies
 *   inside one: elsewhere Landlock refuses the write already. A writable
 *   location strictly inside a row's location (--writable .vscode/cache) is
 *   the user's choice and is not covered.
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
	char *const *lifted;   /* canonical --allow-write-protected paths */
	size_t n_lifted;
};

/* The scope of policy P, LIFTED (canonical, may be NULL) lifted. */
void cf_protect_scope_of(struct cf_protect_scope *s, const struct cf_policy *p,
			 const struct cf_strv *lifted);

/* The row that covers the canonical absolute PATH in S, or NULL; when LOC is
 * not NULL, the row's location there (cut to LOCSZ). */
const struct cf_protected_row *cf_protected_match(const struct cf_protect_scope *s,
						  const char *path, char *loc, size_t locsz);

/* IN (--allow-write-protected as given) made canonical against CWD into OUT.
 * 0, or -errno of cf_canon (naming the bad entry in *BAD), or -ENOMEM. */
int cf_protected_canon_lifts(const struct cf_strv *in, const char *cwd, struct cf_strv *out,
			     const char **bad);

/* Whether the canonical PATH may be lifted under P: it must be a location a
 * row covers, or lie under one, and be no secret location and lie in none.
 * 0, or -EINVAL with WHY (N bytes) saying what is wrong and what to do. */
int cf_protected_lift_refusal(const struct cf_policy *p, const char *path, char *why, size_t n);

#endif
