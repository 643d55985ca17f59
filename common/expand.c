#include "expand.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "paths.h"
#include "sys.h"

struct dirent64_raw {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

#define CF_DT_LNK 10

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static void stamp_from(const struct stat *st, struct cf_stamp *out)
{
	out->dev = st->st_dev;
	out->ino = st->st_ino;
	out->mtime_sec = st->st_mtim.tv_sec;
	out->mtime_nsec = st->st_mtim.tv_nsec;
	out->ctime_sec = st->st_ctim.tv_sec;
	out->ctime_nsec = st->st_ctim.tv_nsec;
	out->present = 1;
}

void cf_stamp_path(const char *path, struct cf_stamp *out)
{
	struct stat st;
	memset(out, 0, sizeof *out);
	if (cf_sys4(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
		stamp_from(&st, out);
}

int cf_stamp_equal(const struct cf_stamp *a, const struct cf_stamp *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec &&
	       a->ctime_sec == b->ctime_sec && a->ctime_nsec == b->ctime_nsec;
}

static int skipped(const struct cf_ancestor *a, const char *name)
{
	if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
		return 1;
	for (size_t i = 0; i < a->n_skip; i++)
		if (streq(a->skip[i], name))
			return 1;
	return 0;
}

/* One rule for an entry opened as O_PATH; symlinks never get one. */
static int rule_at(int dirfd, const char *name, enum cf_rule_kind kind, cf_rule_fn fn, void *ctx,
		   size_t *rules)
{
	struct stat st;
	int fd = cf_sys_openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fd == -ENOENT || fd == -EACCES || fd == -ELOOP ? 0 : fd;
	int rc = (int)cf_sys4(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH);
	if (rc == 0 && !S_ISLNK(st.st_mode)) {
		rc = fn(ctx, fd, S_ISDIR(st.st_mode), kind);
		if (rc == 0)
			(*rules)++;
	}
	cf_sys_close(fd);
	return rc;
}

static int expand_one(const struct cf_ancestor *a, size_t max, char *buf, size_t bufsz,
		      cf_rule_fn fn, void *ctx, struct cf_expand_result *res, struct cf_stamp *stamp)
{
	struct stat st;
	size_t count = 0;
	int rc = 0;
	int dfd = cf_sys_openat(AT_FDCWD, a->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (stamp)
		memset(stamp, 0, sizeof *stamp);
	if (dfd < 0) /* a missing ancestor holds nothing to allow */
		return dfd == -ENOENT || dfd == -ENOTDIR ? 0 : dfd;
	/* Stamp before reading: an entry created after this changes the stamp. */
	if (stamp && cf_sys4(SYS_newfstatat, dfd, "", &st, AT_EMPTY_PATH) == 0)
		stamp_from(&st, stamp);
	for (;;) {
		long n = cf_sys3(SYS_getdents64, dfd, buf, bufsz);
		if (n < 0) {
			rc = (int)n;
			break;
		}
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			struct dirent64_raw *d = (struct dirent64_raw *)(buf + off);
			off += d->d_reclen;
			if (d->d_name[0] == '.' &&
			    (d->d_name[1] == '\0' || (d->d_name[1] == '.' && d->d_name[2] == '\0')))
				continue;
			if (++count > max || rc)
				continue;
			if (d->d_type == CF_DT_LNK || skipped(a, d->d_name))
				continue;
			enum cf_rule_kind kind = CF_RULE_READ;
			for (size_t w = 0; w < a->n_wide; w++)
				if (streq(a->wide[w], d->d_name))
					kind = (enum cf_rule_kind)a->wide_kind[w];
			rc = rule_at(dfd, d->d_name, kind, fn, ctx, &res->rules);
		}
	}
	cf_sys_close(dfd);
	if (!rc && count > max) {
		res->over_dir = a->path;
		res->over_count = count;
		return -CF_ETOOMANY;
	}
	return rc;
}

int cf_expand(const struct cf_plan *pl, char *buf, size_t bufsz, cf_rule_fn fn, void *ctx,
	      struct cf_expand_result *res, struct cf_stamp *stamps)
{
	int rc;
	res->rules = 0;
	res->over_dir = NULL;
	res->over_count = 0;
	for (size_t i = 0; i < pl->n_anc; i++) {
		rc = expand_one(&pl->anc[i], pl->max_entries, buf, bufsz, fn, ctx, res,
				stamps ? &stamps[i] : NULL);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < pl->n_writable; i++)
		if ((rc = rule_at(AT_FDCWD, pl->writable[i], CF_RULE_WRITE, fn, ctx, &res->rules)))
			return rc;
	if (pl->dev && (rc = rule_at(AT_FDCWD, pl->dev, CF_RULE_DEV, fn, ctx, &res->rules)))
		return rc;
	return 0;
}

/* ---- preparation (normal context) ---- */

static struct cf_ancestor *ancestor_of(struct cf_plan *pl, const char *path)
{
	char dir[PATH_MAX];
	if (strcmp(path, "/") == 0)
		return NULL;
	cf_path_parent(path, dir, sizeof dir);
	for (size_t i = 0; i < pl->n_anc; i++)
		if (strcmp(pl->anc[i].path, dir) == 0)
			return &pl->anc[i];
	return NULL;
}

/* Writable locations and /dev that lie directly in an ancestor get their
 * rights on the entry's one rule; the others keep a rule of their own. The
 * ancestors' wide lists are laid out one after the other, in ancestor order. */
static int place_wide(struct cf_plan *pl, const struct cf_policy *p)
{
	size_t n = p->writable.n + 1;
	const char **paths = calloc(n, sizeof *paths);
	unsigned char *kinds = calloc(n, 1);
	pl->wide_names = calloc(n, sizeof *pl->wide_names);
	pl->wide_kinds = calloc(n, 1);
	pl->rest = calloc(n, sizeof *pl->rest);
	if (!paths || !kinds || !pl->wide_names || !pl->wide_kinds || !pl->rest) {
		free(paths);
		free(kinds);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->writable.n; i++) {
		paths[i] = p->writable.v[i];
		kinds[i] = CF_RULE_WRITE;
	}
	paths[n - 1] = "/dev";
	kinds[n - 1] = CF_RULE_DEV;
	size_t used = 0;
	bool dev_placed = false;
	for (size_t a = 0; a < pl->n_anc; a++) {
		struct cf_ancestor *anc = &pl->anc[a];
		anc->wide = &pl->wide_names[used];
		anc->wide_kind = &pl->wide_kinds[used];
		for (size_t i = 0; i < n; i++) {
			if (ancestor_of(pl, paths[i]) != anc)
				continue;
			const char *base = cf_path_base(paths[i]);
			bool dup = false;
			for (size_t k = 0; k < anc->n_wide; k++)
				if (strcmp(anc->wide[k], base) == 0) {
					/* the same entry twice (a writable /dev?): keep the wider right */
					if (kinds[i] == CF_RULE_WRITE)
						pl->wide_kinds[used - anc->n_wide + k] = CF_RULE_WRITE;
					dup = true;
				}
			if (!dup) {
				pl->wide_names[used] = base;
				pl->wide_kinds[used] = kinds[i];
				used++;
				anc->n_wide++;
			}
			if (i == n - 1)
				dev_placed = true;
		}
	}
	size_t rest = 0;
	for (size_t i = 0; i + 1 < n; i++)
		if (!ancestor_of(pl, paths[i]))
			pl->rest[rest++] = paths[i];
	pl->writable = pl->rest;
	pl->n_writable = rest;
	pl->dev = dev_placed ? NULL : "/dev";
	free(paths);
	free(kinds);
	return 0;
}

int cf_plan_prepare(struct cf_plan *pl, const struct cf_policy *p)
{
	struct cf_strv anc = {0};
	char dir[PATH_MAX];
	int rc = 0;

	memset(pl, 0, sizeof *pl);
	pl->max_entries = p->max_entries;
	/* Every proper prefix of every secret is an ancestor. */
	for (size_t i = 0; !rc && i < p->n_denied; i++) {
		const char *s = p->denied[i].path;
		if (strcmp(s, "/") == 0)
			continue;
		cf_path_parent(s, dir, sizeof dir);
		for (;;) {
			if ((rc = cf_strv_add_unique(&anc, dir)))
				break;
			if (strcmp(dir, "/") == 0)
				break;
			char up[PATH_MAX];
			cf_path_parent(dir, up, sizeof up);
			strcpy(dir, up);
		}
	}
	if (rc)
		goto fail;
	cf_strv_sort(&anc);
	/* One storage list owns all strings; the plan points into it. */
	pl->anc = calloc(anc.n ? anc.n : 1, sizeof *pl->anc);
	pl->names = calloc(anc.n + p->n_denied + 1, sizeof *pl->names);
	if (!pl->anc || !pl->names) {
		rc = -ENOMEM;
		goto fail;
	}
	pl->strings = anc;
	anc = (struct cf_strv){0};
	pl->n_anc = pl->strings.n;
	size_t used = 0;
	for (size_t i = 0; i < pl->n_anc; i++) {
		const char *a = pl->strings.v[i];
		struct cf_ancestor *out = &pl->anc[i];
		out->path = a;
		out->skip = &pl->names[used];
		/* Children of A that are ancestors or secrets. */
		for (size_t k = 0; k < pl->n_anc + p->n_denied; k++) {
			const char *c = k < pl->n_anc ? pl->strings.v[k] : p->denied[k - pl->n_anc].path;
			if (strcmp(c, "/") == 0)
				continue;
			cf_path_parent(c, dir, sizeof dir);
			if (strcmp(dir, a) != 0)
				continue;
			const char *base = cf_path_base(c);
			bool dup = false;
			for (size_t j = 0; j < out->n_skip; j++)
				dup = dup || strcmp(out->skip[j], base) == 0;
			if (!dup) {
				pl->names[used++] = base;
				out->n_skip++;
			}
		}
	}
	if ((rc = place_wide(pl, p)))
		goto fail;
	return 0;
fail:
	cf_strv_free(&anc);
	cf_plan_free(pl);
	return rc;
}

void cf_plan_free(struct cf_plan *pl)
{
	free(pl->anc);
	free(pl->names);
	free(pl->wide_names);
	free(pl->wide_kinds);
	free(pl->rest);
	cf_strv_free(&pl->strings);
	memset(pl, 0, sizeof *pl);
}
