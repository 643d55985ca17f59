#include "protect_plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git_layout.h"
#include "paths.h"
#include "project_root.h"
#include "protected_match.h"

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

/* DIR lies directly below W (W not NULL). */
static bool directly_below(const char *dir, const char *w)
{
	size_t n = w ? strlen(w) : 0;
	if (!w || strcmp(w, "/") == 0 || strncmp(dir, w, n) != 0 || dir[n] != '/')
		return false;
	return dir[n + 1] && !strchr(dir + n + 1, '/');
}


/* One plan's answers of lstat(), and the paths it has planned: every row
 * of every project root shares the root's own components, so each is asked
 * once (a /tmp with 60 directories cost 5 600 lstat() calls before), and a
 * path is looked up in constant time, not against every path planned so far
 * (that search was a third of `credfence run`'s start). Open addressing on
 * cf_path_hash(), the path compared in full. Out of memory, a lookup asks
 * the kernel (slower, never a different plan), and a set fails with -ENOMEM,
 * as the list it replaces did. */
struct memo_slot {
	char *path;
	int rc;      /* lstat(): 0 or -errno; MEMO_NONE for a set's member */
	mode_t mode;
};

struct memo {
	struct memo_slot *t;
	size_t cap, n; /* cap a power of two, 0 before the first use */
};

#define MEMO_NONE 1

static struct memo_slot *memo_find(const struct memo *m, const char *path)
{
	size_t mask = m->cap - 1;
	/* cf_path_hash sets its lowest bit (0 marks a free slot elsewhere):
	 * not a bit to index by. */
	for (size_t i = (size_t)(cf_path_hash(path) >> 1) & mask;; i = (i + 1) & mask)
		if (!m->t[i].path || strcmp(m->t[i].path, path) == 0)
			return &m->t[i];
}

/* The slot for PATH, new (path NULL) or found; NULL when out of memory. */
static struct memo_slot *memo_slot(struct memo *m, const char *path)
{
	if (2 * (m->n + 1) > m->cap) {
		struct memo bigger = {calloc(m->cap ? 2 * m->cap : 256, sizeof *m->t),
				      m->cap ? 2 * m->cap : 256, m->n};
		if (!bigger.t)
			return NULL;
		for (size_t i = 0; i < m->cap; i++)
			if (m->t[i].path)
				*memo_find(&bigger, m->t[i].path) = m->t[i];
		free(m->t);
		*m = bigger;
	}
	return memo_find(m, path);
}

static void memo_free(struct memo *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->t[i].path);
	free(m->t);
	memset(m, 0, sizeof *m);
}

/* lstat(PATH): 0 and its mode, or -errno. */
static int memo_lstat(struct memo *m, const char *path, mode_t *mode)
{
	struct memo_slot *s = memo_slot(m, path);
	if (s && s->path) {
		*mode = s->mode;
		return s->rc;
	}
	struct stat st;
	int rc = lstat(path, &st) ? -errno : 0;
	*mode = rc ? 0 : st.st_mode;
	char *dup = s ? strdup(path) : NULL;
	if (dup) {
		*s = (struct memo_slot){dup, rc, *mode};
		m->n++;
	}
	return rc;
}

/* Adds PATH to the set: 1 when it is new, 0 when it was there, -ENOMEM. */
static int set_add(struct memo *m, const char *path)
{
	struct memo_slot *s = memo_slot(m, path);
	if (s && s->path)
		return 0;
	char *dup = s ? strdup(path) : NULL;
	if (!dup)
		return -ENOMEM;
	*s = (struct memo_slot){dup, MEMO_NONE, 0};
	m->n++;
	return 1;
}

/* The lstat() answer for NAME in DIR, from DIR's listing: d_type is the
 * entry's own type, a symlink not followed, as lstat() says it. */
static void memo_put(struct memo *m, const char *dir, const char *name, int rc, mode_t mode)
{
	char p[PATH_MAX];
	if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, name) >= sizeof p)
		return;
	struct memo_slot *s = memo_slot(m, p);
	char *dup = s && !s->path ? strdup(p) : NULL;
	if (dup) {
		*s = (struct memo_slot){dup, rc, mode};
		m->n++;
	}
}

#define LIST_MAX 512 /* entries: a larger root is probed row by row */

/* Each of NAMES in ROOT, from one listing of ROOT instead of one lstat()
 * each (a root's rows start with 24 names; most are absent). Only a
 * listing read to its end counts: with more than LIST_MAX entries, an
 * entry whose type the file system does not give (DT_UNKNOWN), or an
 * error, the names are left to lstat() and it returns false. True: FOUND
 * says which of NAMES are in ROOT; the names found are remembered, and
 * with ALL the absent ones too. */
static bool memo_list(struct memo *m, const char *root, const char *const *names, size_t n,
		      bool found[64], bool all)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	mode_t mode[64] = {0};
	bool whole = n <= 64;
	memset(found, 0, 64 * sizeof *found);
	struct dirent *e;
	size_t seen = 0;
	errno = 0;
	while (whole && (e = readdir(d))) {
		if (++seen > LIST_MAX) {
			whole = false;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (strcmp(e->d_name, names[i]) != 0)
				continue;
			static const unsigned char dt[] = {DT_DIR, DT_REG, DT_LNK, DT_FIFO, DT_SOCK, DT_CHR, DT_BLK};
			static const mode_t md[] = {S_IFDIR, S_IFREG, S_IFLNK, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK};
			size_t k = 0;
			while (k < sizeof dt && dt[k] != e->d_type)
				k++;
			if (k == sizeof dt) {
				whole = false; /* DT_UNKNOWN */
				break;
			}
			found[i] = true;
			mode[i] = md[k];
		}
	}
	whole = whole && errno == 0;
	for (size_t i = 0; whole && i < n; i++)
		if (found[i] || all)
			memo_put(m, root, names[i], found[i] ? 0 : -ENOENT, mode[i]);
	closedir(d);
	return whole;
}

/* Whether ROOT holds an entry named by a project row that is no symlink:
 * from its listing (FOUND, N names) when LISTED, else by lstat(). */
static bool holds_a_row(struct memo *m, const char *root, bool listed, const bool *found,
			const char *const *names, size_t n)
{
	char p[PATH_MAX];
	for (size_t i = 0; listed && i < n; i++) {
		(void)snprintf(p, sizeof p, "%s/%s", root, names[i]);
		mode_t mode;
		if (found[i] && memo_lstat(m, p, &mode) == 0 && !S_ISLNK(mode))
			return true;
	}
	for (size_t k = 0; !listed && k < cf_protected_count; k++) {
		const struct cf_protected_row *row = &cf_protected_table[k];
		mode_t mode;
		if (row->base != CF_PROT_PROJECT || strchr(row->rel, '/'))
			continue;
		(void)snprintf(p, sizeof p, "%s/%s", root, row->rel);
		if (memo_lstat(m, p, &mode) == 0 && !S_ISLNK(mode))
			return true;
	}
	return false;
}

/* The first component of each project row, once each, into NAMES (at most
 * CAP), and for each row of the table the index of its own in AT: what
 * memo_list looks for. More than CAP: CAP + 1. */
static size_t first_names(char names[][64], size_t cap, size_t *at)
{
	size_t n = 0;
	for (size_t k = 0; k < cf_protected_count; k++) {
		const struct cf_protected_row *row = &cf_protected_table[k];
		if (row->base != CF_PROT_PROJECT)
			continue;
		size_t len = strcspn(row->rel, "/"), i = 0;
		if (len >= 64)
			return cap + 1;
		while (i < n && !(strlen(names[i]) == len && strncmp(names[i], row->rel, len) == 0))
			i++;
		at[k] = i;
		if (i < n)
			continue;
		if (n == cap)
			return cap + 1;
		memcpy(names[n], row->rel, len);
		names[n++][len] = '\0';
	}
	return n;
}

/* Every component of P below W, up to P's parent, is a directory that is no
 * symlink (P is canonical, so a symlink means it changed since). */
static enum walk walk_down(struct memo *m, const char *w, const char *p)
{
	char buf[PATH_MAX];
	size_t n = strlen(w);
	snprintf(buf, sizeof buf, "%s", p);
	for (char *s = buf + n + 1; (s = strchr(s, '/')); s++) {
		mode_t mode;
		*s = '\0';
		int rc = memo_lstat(m, buf, &mode);
		*s = '/';
		if (rc)
			return WALK_ABSENT;
		if (!S_ISDIR(mode))
			return S_ISLNK(mode) ? WALK_LINK : WALK_ABSENT;
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

static int plan_path(struct cf_protect_plan *pp, struct memo *seen, struct memo *st_memo,
		     const struct cf_policy *pol,
		     const struct cf_strv *allow, const struct cf_protected_row *row,
		     const char *p, bool may_make)
{
	const char *w = holder(pol, p);
	if (!w || strcmp(w, p) == 0)
		return 0;
	int rc = set_add(seen, p);
	if (rc <= 0)
		return rc;
	if (lifted(allow, p)) {
		pp->lifted++;
		return 0;
	}
	enum walk wk = walk_down(st_memo, w, p);
	if (wk == WALK_LINK) {
		pp->links++;
		return 0;
	}
	mode_t mode = 0;
	bool exists = wk == WALK_OK && memo_lstat(st_memo, p, &mode) == 0;
	if (exists && S_ISLNK(mode)) {
		pp->links++;
		return 0;
	}
	/* A private copy is made with its parents (~/.cache/pnpm/dlx): a
	 * fenced tool could otherwise make them and plant there. Only inside
	 * a writable location that exists (pp->rw): elsewhere the mounts'
	 * root is read-only by then and nothing could be made (and a harness
	 * child would find the path lost, and wait for the keeper). */
	if (!exists && !((wk == WALK_OK || (wk == WALK_ABSENT && row->private_copy)) && may_make &&
			 row->placeholder && cf_strv_has(&pp->rw, w))) {
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

/* What git_layout reports, planned as a row of the table is. */
struct git_ctx {
	struct cf_protect_plan *pp;
	struct memo *seen, *st_memo;
	const struct cf_policy *pol;
	const struct cf_strv *allow;
	bool may_make;
};

static int plan_git(void *ctx, const char *path, const struct cf_protected_row *row)
{
	struct git_ctx *g = ctx;
	return plan_path(g->pp, g->seen, g->st_memo, g->pol, g->allow, row, path, g->may_make);
}

/* The lifted paths strictly inside an item: each that exists (no symlink)
 * is kept writable inside the item's read-only bind; one inside another
 * goes with it. */
static int plan_keep_rw(struct cf_protect_plan *pp, const struct cf_strv *lifts)
{
	for (size_t i = 0; i < lifts->n; i++) {
		const char *l = lifts->v[i];
		bool inside = false, under_other = false;
		for (size_t k = 0; k < pp->n_items && !inside; k++)
			inside = cf_path_within(l, pp->items[k].path) &&
				 strcmp(l, pp->items[k].path) != 0;
		for (size_t k = 0; k < lifts->n && !under_other; k++)
			under_other = k != i && cf_path_within(l, lifts->v[k]) &&
				      strcmp(l, lifts->v[k]) != 0;
		if (!inside || under_other)
			continue;
		struct stat st;
		if (lstat(l, &st) || S_ISLNK(st.st_mode)) {
			pp->lift_absent++;
			continue;
		}
		int rc = cf_strv_add_unique(&pp->keep_rw, l);
		if (rc)
			return rc;
	}
	return 0;
}

int cf_protect_plan_build(struct cf_protect_plan *pp, const struct cf_policy *pol,
			  const struct cf_strv *allow_in, const char *cwd)
{
	struct cf_strv roots = {0}, lifts = {0};
	struct memo seen = {0}, root_set = {0}, st_memo = {0};
	const struct cf_strv *allow = &lifts;
	char p[PATH_MAX];
	const char *bad;
	int rc = 0;
	memset(pp, 0, sizeof *pp);
	/* Relative lifts (.vscode/settings.json) name paths in CWD. One that can
	 * not be made canonical is refused by the CLI before this. */
	for (size_t i = 0; allow_in && i < allow_in->n && rc != -ENOMEM; i++) {
		struct cf_strv one = {allow_in->v + i, 1, 1};
		rc = cf_protected_canon_lifts(&one, cwd, &lifts, &bad);
	}
	if (rc == -ENOMEM) {
		cf_strv_free(&lifts);
		return rc;
	}
	rc = 0;
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
	char names[64][64];
	const char *name_v[64];
	size_t *name_at = calloc(cf_protected_count ? cf_protected_count : 1, sizeof *name_at);
	size_t n_names = name_at ? first_names(names, 64, name_at) : 65;
	for (size_t i = 0; i < n_names && n_names <= 64; i++)
		name_v[i] = names[i];
	for (size_t r = 0; !rc && r < roots.n; r++) {
		/* cf_project_roots may name a root twice (a directory directly
		 * below one writable location and on the way to CWD in another). */
		if ((rc = set_add(&root_set, roots.v[r])) <= 0)
			continue;
		rc = 0;
		bool found[64];
		bool at_work = pol->workspace && cf_path_within(roots.v[r], pol->workspace) &&
			       (strcmp(roots.v[r], pol->workspace) == 0 ||
				cf_path_within(cwd, roots.v[r]));
		bool below = !at_work && directly_below(roots.v[r], pol->workspace);
		bool listed = n_names <= 64 && memo_list(&st_memo, roots.v[r], name_v, n_names,
							 found, at_work || below);
		/* A directory directly below the workspace that holds a row
		 * already (a repository of a workspace of several) is pinned
		 * by it (a mount point can not be removed): its absent
		 * placeholders cost nothing more there. A plain one (build/,
		 * node_modules/) gets none: it would become a mount point that
		 * rm -rf, npm ci and cargo clean could no longer remove. */
		if (below)
			at_work = holds_a_row(&st_memo, roots.v[r], listed, found, name_v, n_names);
		for (size_t k = 0; !rc && k < cf_protected_count; k++) {
			const struct cf_protected_row *row = &cf_protected_table[k];
			if (row->base != CF_PROT_PROJECT)
				continue;
			/* Its first name is not in the root, and no placeholder is
			 * made here: nothing to hold (most rows of most roots). */
			if (listed && !found[name_at[k]] &&
			    !(at_work && row->placeholder && !strchr(row->rel, '/'))) {
				pp->absent++;
				continue;
			}
			snprintf(p, sizeof p, "%s/%s", roots.v[r], row->rel);
			rc = plan_path(pp, &seen, &st_memo, pol, allow, row, p, at_work);
		}
		/* The files git reads from this root's .git on (common/git_layout.h):
		 * a .git file, commondir, the submodules' and linked worktrees'
		 * git directories, config includes, core.hooksPath. */
		mode_t mode;
		snprintf(p, sizeof p, "%s/.git", roots.v[r]);
		if (!rc && memo_lstat(&st_memo, p, &mode) == 0) {
			struct git_ctx g = {pp, &seen, &st_memo, pol, allow, at_work};
			rc = cf_git_layout(roots.v[r], pol->home, plan_git, &g, &pp->git_skipped);
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
			rc = plan_path(pp, &seen, &st_memo, pol, allow, row, p, true);
		}
	/* What the user's and the system's git config include, and their
	 * core.hooksPath, where it lies in a writable location. */
	if (!rc) {
		struct git_ctx g = {pp, &seen, &st_memo, pol, allow, false};
		rc = cf_git_layout_global(pol->home, getenv("XDG_CONFIG_HOME"), plan_git, &g);
	}
	if (!rc)
		rc = plan_keep_rw(pp, &lifts);
	free(name_at);
	cf_strv_free(&roots);
	memo_free(&seen);
	memo_free(&root_set);
	memo_free(&st_memo);
	cf_strv_free(&lifts);
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
	if (pp->keep_rw.n > 1)
		qsort(pp->keep_rw.v, pp->keep_rw.n, sizeof *pp->keep_rw.v, by_length);
	return 0;
}

void cf_protect_plan_free(struct cf_protect_plan *pp)
{
	for (size_t i = 0; i < pp->n_items; i++)
		free(pp->items[i].path);
	free(pp->items);
	cf_strv_free(&pp->rw);
	cf_strv_free(&pp->mids);
	cf_strv_free(&pp->keep_rw);
	memset(pp, 0, sizeof *pp);
}

const struct cf_protect_item *cf_protect_plan_find(const struct cf_protect_plan *pp,
						   const char *path)
{
	const struct cf_protect_item *best = NULL;
	for (size_t i = 0; i < pp->n_items; i++)
		if (cf_path_within(path, pp->items[i].path) &&
		    (!best || strlen(pp->items[i].path) > strlen(best->path)))
			best = &pp->items[i];
	return best;
}
