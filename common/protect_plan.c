#include "protect_plan.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "paths.h"
#include "project_root.h"

/* The longest writable location that holds PATH, or NULL. */
static const char *holder(const struct cf_policy *pol, const char *path)
{
	const char *best = NULL;
	for (size_t i = 0; i < pol->writable.n; i++)
		if (cf_path_within(path, pol->writable.v[i]) &&
		    (!best || strlen(pol->writable.v[i]) > strlen(best)))
			best = pol->writable.v[i];
	return best;
}

static int by_length(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t nx = strlen(x), ny = strlen(y);
	return nx != ny ? (nx > ny) - (nx < ny) : strcmp(x, y);
}

static int items_by_length(const void *a, const void *b)
{
	return by_length(&((const struct cf_protect_item *)a)->path,
			 &((const struct cf_protect_item *)b)->path);
}

enum walk { WALK_OK, WALK_ABSENT, WALK_LINK };

/* Every component of P below W, up to P's parent, is a directory that is no
 * symlink (P is canonical, so a symlink means it changed since). */
static enum walk walk_down(const char *w, const char *p)
{
	char buf[PATH_MAX];
	size_t n = strlen(w);
	snprintf(buf, sizeof buf, "%s", p);
	for (char *s = buf + n + 1; (s = strchr(s, '/')); s++) {
		struct stat st;
		*s = '\0';
		int rc = lstat(buf, &st);
		*s = '/';
		if (rc)
			return WALK_ABSENT;
		if (!S_ISDIR(st.st_mode))
			return S_ISLNK(st.st_mode) ? WALK_LINK : WALK_ABSENT;
	}
	return WALK_OK;
}

static int add_mids(struct cf_protect_plan *pp, const char *w, const char *p)
{
	char buf[PATH_MAX];
	size_t n = strlen(w);
	snprintf(buf, sizeof buf, "%s", p);
	for (char *s = buf + n + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		int rc = cf_strv_add_unique(&pp->mids, buf);
		*s = '/';
		if (rc)
			return rc;
	}
	return 0;
}

static bool lifted(const struct cf_strv *allow, const char *p)
{
	for (size_t i = 0; allow && i < allow->n; i++)
		if (cf_path_within(p, allow->v[i]))
			return true;
	return false;
}

static int plan_path(struct cf_protect_plan *pp, struct cf_strv *seen, const struct cf_policy *pol,
		     const struct cf_strv *allow, const struct cf_protected_row *row,
		     const char *p, bool may_make)
{
	const char *w = holder(pol, p);
	if (!w || strcmp(w, p) == 0 || cf_strv_has(seen, p))
		return 0;
	int rc = cf_strv_add(seen, p);
	if (rc)
		return rc;
	if (lifted(allow, p)) {
		pp->lifted++;
		return 0;
	}
	enum walk wk = walk_down(w, p);
	if (wk == WALK_LINK) {
		pp->links++;
		return 0;
	}
	struct stat st;
	bool exists = wk == WALK_OK && lstat(p, &st) == 0;
	if (exists && S_ISLNK(st.st_mode)) {
		pp->links++;
		return 0;
	}
	if (!exists && !(wk == WALK_OK && may_make && row->placeholder)) {
		pp->absent++;
		return 0;
	}
	struct cf_protect_item *v = realloc(pp->items, (pp->n_items + 1) * sizeof *v);
	if (!v)
		return -ENOMEM;
	pp->items = v;
	v[pp->n_items] = (struct cf_protect_item){strdup(p), row, !exists};
	if (!v[pp->n_items].path)
		return -ENOMEM;
	pp->n_items++;
	return add_mids(pp, w, p);
}

int cf_protect_plan_build(struct cf_protect_plan *pp, const struct cf_policy *pol,
			  const struct cf_strv *allow, const char *cwd)
{
	struct cf_strv roots = {0}, seen = {0};
	char p[PATH_MAX];
	int rc = 0;
	memset(pp, 0, sizeof *pp);
	for (size_t i = 0; !rc && i < pol->writable.n; i++) {
		struct stat st;
		if (lstat(pol->writable.v[i], &st) || S_ISLNK(st.st_mode))
			continue;
		rc = cf_strv_add_unique(&pp->rw, pol->writable.v[i]);
		if (!rc && S_ISDIR(st.st_mode))
			rc = cf_project_roots(&roots, pol->writable.v[i], cwd);
	}
	/* Placeholders only at the roots a user works in (the workspace, and
	 * the working directory and its ancestors inside it), not in /tmp, a
	 * cache or every directory below a writable location. */
	for (size_t r = 0; !rc && r < roots.n; r++) {
		bool at_work = pol->workspace && cf_path_within(roots.v[r], pol->workspace) &&
			       (strcmp(roots.v[r], pol->workspace) == 0 ||
				cf_path_within(cwd, roots.v[r]));
		for (size_t k = 0; !rc && k < cf_protected_count; k++) {
			const struct cf_protected_row *row = &cf_protected_table[k];
			if (row->base != CF_PROT_PROJECT)
				continue;
			snprintf(p, sizeof p, "%s/%s", roots.v[r], row->rel);
			rc = plan_path(pp, &seen, pol, allow, row, p, at_work);
		}
	}
	/* A home row counts where it lies inside a writable location (the home
	 * itself, or a writable cache such as ~/.npm). */
	const char *homes[] = {pol->home, pol->account_home};
	for (size_t h = 0; !rc && h < 2; h++)
		for (size_t k = 0; homes[h] && !rc && k < cf_protected_count; k++) {
			const struct cf_protected_row *row = &cf_protected_table[k];
			if (row->base != CF_PROT_HOME)
				continue;
			snprintf(p, sizeof p, "%s/%s", homes[h], row->rel);
			rc = plan_path(pp, &seen, pol, allow, row, p, true);
		}
	cf_strv_free(&roots);
	cf_strv_free(&seen);
	if (rc) {
		cf_protect_plan_free(pp);
		return rc;
	}
	/* qsort's array must not be NULL, even for no element (C17 7.22.5). */
	if (pp->rw.n > 1)
		qsort(pp->rw.v, pp->rw.n, sizeof *pp->rw.v, by_length);
	if (pp->mids.n > 1)
		qsort(pp->mids.v, pp->mids.n, sizeof *pp->mids.v, by_length);
	if (pp->n_items > 1)
		qsort(pp->items, pp->n_items, sizeof *pp->items, items_by_length);
	return 0;
}

void cf_protect_plan_free(struct cf_protect_plan *pp)
{
	for (size_t i = 0; i < pp->n_items; i++)
		free(pp->items[i].path);
	free(pp->items);
	cf_strv_free(&pp->rw);
	cf_strv_free(&pp->mids);
	memset(pp, 0, sizeof *pp);
}
