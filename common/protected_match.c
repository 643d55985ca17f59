#include "protected_match.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "paths.h"
#include "policy.h"
#include "project_root.h"
#include "protect_plan.h"

void cf_protect_scope_of(struct cf_protect_scope *s, const struct cf_policy *p, const char *cwd,
			 const struct cf_strv *lifted)
{
	s->cwd = cwd;
	s->writable = p->writable.v;
	s->n_writable = p->writable.n;
	s->home = p->home;
	s->account_home = p->account_home;
	s->lifted = lifted ? lifted->v : NULL;
	s->n_lifted = lifted ? lifted->n : 0;
}

/* The length of W as a prefix: "/" is the empty one. */
static size_t prefix_len(const char *w)
{
	return w[0] == '/' && w[1] == '\0' ? 0 : strlen(w);
}

/* Whether PATH[0, LEN) (a prefix that ends at a component boundary; length
 * 0 is "/") lies in the directory W, or is W when EQUAL_OK. */
static bool prefix_in(const char *path, size_t len, const char *w, bool equal_ok)
{
	size_t n = prefix_len(w);
	if (n > len || strncmp(path, w, n) != 0)
		return false;
	return n == len ? equal_ok : path[n] == '/';
}

/* Whether the location PATH[0, LEN) lies strictly inside a writable
 * location of S. */
static bool loc_writable(const struct cf_protect_scope *s, const char *path, size_t len)
{
	for (size_t i = 0; i < s->n_writable; i++)
		if (prefix_in(path, len, s->writable[i], false))
			return true;
	return false;
}

/* Whether PATH[0, LEN) is a project root of S (project_root.h). */
static bool project_root(const struct cf_protect_scope *s, const char *path, size_t len)
{
	for (size_t i = 0; i < s->n_writable; i++)
		if (cf_project_root(s->writable[i], s->cwd, path, len))
			return true;
	return false;
}

static bool lifted(const struct cf_protect_scope *s, const char *path)
{
	for (size_t i = 0; i < s->n_lifted; i++)
		if (cf_path_within(path, s->lifted[i]))
			return true;
	return false;
}

/* The longest location of a project row REL in PATH that S covers: its
 * length, or 0. */
static size_t project_loc(const struct cf_protect_scope *s, const char *path, const char *rel)
{
	size_t k = strlen(rel), best = 0;
	for (const char *c = strchr(path, '/'); c; c = strchr(c + 1, '/')) {
		const char *at = c + 1;
		if (strncmp(at, rel, k) == 0 && (at[k] == '/' || at[k] == '\0')) {
			size_t root = (size_t)(c - path), len = (size_t)(at - path) + k;
			if (len > best && project_root(s, path, root))
				best = len;
		}
	}
	return best;
}

/* The length of HOME/REL when PATH is it or lies under it and S covers it;
 * else 0. */
static size_t home_loc(const struct cf_protect_scope *s, const char *home, const char *path,
		       const char *rel)
{
	if (!home || !*home)
		return 0;
	size_t h = strlen(home), k = strlen(rel);
	if (h == 1)
		h = 0; /* home is "/" */
	if (strncmp(path, home, h) != 0 || path[h] != '/' || strncmp(path + h + 1, rel, k) != 0)
		return 0;
	char end = path[h + 1 + k];
	if (end != '\0' && end != '/')
		return 0;
	return loc_writable(s, path, h + 1 + k) ? h + 1 + k : 0;
}

const struct cf_protected_row *cf_protected_match(const struct cf_protect_scope *s,
						  const char *path, char *loc, size_t locsz)
{
	if (!path || path[0] != '/' || lifted(s, path))
		return NULL;
	const struct cf_protected_row *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < cf_protected_count; i++) {
		const struct cf_protected_row *r = &cf_protected_table[i];
		size_t len = 0;
		if (r->base == CF_PROT_GIT)
			continue; /* found in git's files, not by name: the plan's */
		if (r->base == CF_PROT_PROJECT)
			len = project_loc(s, path, r->rel);
		else {
			size_t a = home_loc(s, s->home, path, r->rel);
			size_t b = home_loc(s, s->account_home, path, r->rel);
			len = a > b ? a : b;
		}
		if (len > best_len) {
			best = r;
			best_len = len;
		}
	}
	if (best && loc && locsz)
		snprintf(loc, locsz, "%.*s", (int)best_len, path);
	return best;
}

int cf_protected_canon_lifts(const struct cf_strv *in, const char *cwd, struct cf_strv *out,
			     const char **bad)
{
	char c[PATH_MAX];
	for (size_t i = 0; i < in->n; i++) {
		int rc = cf_canon(in->v[i], cwd, c, sizeof c, NULL, NULL);
		if (rc) {
			*bad = in->v[i];
			return rc;
		}
		if (cf_strv_add_unique(out, c))
			return -ENOMEM;
	}
	return 0;
}

const struct cf_protected_row *cf_protected_lift_unborn(const struct cf_protect_scope *s,
							const char *path, char *loc, size_t locsz)
{
	char parent[PATH_MAX];
	struct stat st;
	const struct cf_protected_row *r = cf_protected_match(s, path, loc, locsz);
	if (!r || strcmp(loc, path) == 0 || lstat(path, &st) == 0)
		return NULL;
	cf_path_parent(loc, parent, sizeof parent);
	if (lstat(loc, &st) != 0 && !(r->placeholder && stat(parent, &st) == 0 && S_ISDIR(st.st_mode)))
		return NULL; /* the row is not held: creating is not refused */
	return r;
}

int cf_protected_lift_refusal(const struct cf_policy *p, const char *cwd, const char *path,
			      char *why, size_t n)
{
	for (size_t i = 0; i < p->n_denied; i++)
		if (cf_path_within(path, p->denied[i].path)) {
			snprintf(why, n,
				 "--allow-write-protected (CREDFENCE_ALLOW_WRITE_PROTECTED) '%s' %s the "
				 "secret location %s (%s), which is never lifted; leave it out",
				 path, strcmp(path, p->denied[i].path) == 0 ? "is" : "lies in",
				 p->denied[i].path, p->denied[i].holds);
			return -EINVAL;
		}
	struct cf_protect_scope s;
	cf_protect_scope_of(&s, p, cwd, NULL);
	if (cf_protected_match(&s, path, NULL, 0))
		return 0;
	/* A file that git's own files name (a submodule's config, an
	 * included file): held by the plan, not by a name of the table. */
	struct cf_protect_plan pp;
	if (cwd && cf_protect_plan_build(&pp, p, NULL, cwd) == 0) {
		bool held = cf_protect_plan_find(&pp, path) != NULL;
		cf_protect_plan_free(&pp);
		if (held)
			return 0;
	}
	snprintf(why, n,
		 "--allow-write-protected (CREDFENCE_ALLOW_WRITE_PROTECTED) '%s' is not covered by "
		 "write protection (no row of the table, .git/hooks, .vscode, ..., lies there in a "
		 "writable location); name a location that 'credfence check' answers \"runs "
		 "unfenced later\" for, or a path under one",
		 path);
	return -EINVAL;
}
