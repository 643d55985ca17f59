#include "expand.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nolibc.h"
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

static int skipped(const struct cf_ancestor *a, const char *name)
{
	if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
		return 1;
	for (size_t i = 0; i < a->n_skip; i++)
		if (cf_nl_streq(a->skip[i], name))
			return 1;
	return 0;
}

/* Our copy of the UAPI, so that older headers still build. */
struct open_how_raw {
	uint64_t flags, mode, resolve;
};
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#define CF_RESOLVE_NO_SYMLINKS 0x04

/* openat() that refuses a symlink anywhere on the way (-ELOOP); with
 * O_PATH|O_NOFOLLOW a symlink as the last component is opened itself. Kernels
 * without openat2 (ENOSYS) get openat, which checks only the last component. */
static int open_nolinks(int dirfd, const char *path, int flags)
{
	struct open_how_raw how = {.flags = (uint64_t)flags, .resolve = CF_RESOLVE_NO_SYMLINKS};
	int fd = (int)cf_sys4(SYS_openat2, dirfd, path, &how, sizeof how);
	if (fd != -ENOSYS)
		return fd;
	return cf_sys_openat(dirfd, path, flags | ((flags & O_PATH) ? O_NOFOLLOW : 0));
}

/* One rule for the O_PATH descriptor FD; symlinks never get one. */
static int rule_for(int fd, enum cf_rule_kind kind, cf_rule_fn fn, void *ctx, size_t *rules)
{
	struct stat st;
	int rc = (int)cf_sys4(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH);
	if (rc == 0 && !S_ISLNK(st.st_mode)) {
		rc = fn(ctx, fd, S_ISDIR(st.st_mode), kind);
		if (rc == 0)
			(*rules)++;
	}
	cf_sys_close(fd);
	return rc;
}

/* An entry NAME read from the directory DIRFD: a symlink there is an entry
 * like any other, and gets no rule. */
static int rule_at(int dirfd, const char *name, enum cf_rule_kind kind, cf_rule_fn fn, void *ctx,
		   size_t *rules)
{
	int fd = open_nolinks(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fd == -ENOENT || fd == -EACCES || fd == -ELOOP ? 0 : fd;
	return rule_for(fd, kind, fn, ctx, rules);
}

/* A canonical PATH of the plan: missing is fine, a symlink on the way is not. */
static int rule_on(const char *path, enum cf_rule_kind kind, cf_rule_fn fn, void *ctx,
		   size_t *rules)
{
	int fd = open_nolinks(AT_FDCWD, path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return fd == -ENOENT || fd == -EACCES ? 0 : fd;
	return rule_for(fd, kind, fn, ctx, rules);
}

static int expand_one(const struct cf_ancestor *a, size_t max, char *buf, size_t bufsz,
		      cf_rule_fn fn, void *ctx, struct cf_expand_result *res, struct cf_stamp *stamp)
{
	struct stat st;
	size_t count = 0;
	int rc = 0;
	int dfd = open_nolinks(AT_FDCWD, a->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (stamp)
		memset(stamp, 0, sizeof *stamp);
	/* A missing ancestor holds nothing to allow; one reached through a
	 * symlink (-ELOOP) would have its target's entries allowed: an error. */
	if (dfd < 0)
		return dfd == -ENOENT || dfd == -ENOTDIR ? 0 : dfd;
	/* Stamp before reading: an entry created after this changes the stamp. */
	if (stamp && cf_sys4(SYS_newfstatat, dfd, "", &st, AT_EMPTY_PATH) == 0)
		cf_stamp_from(&st, stamp);
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
			int kind = a->only_wide ? -1 : CF_RULE_READ;
			for (size_t w = 0; w < a->n_wide; w++)
				if (cf_nl_streq(a->wide[w], d->d_name))
					kind = a->wide_kind[w];
			if (kind >= 0)
				rc = rule_at(dfd, d->d_name, (enum cf_rule_kind)kind, fn, ctx,
					     &res->rules);
		}
	}
	cf_sys_close(dfd);
	if (!rc && count > max) {
		res->over_dir = a->path;
		res->over_count = count;
		return CF_ERR(CF_ERR_TOOMANY, 0);
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
		if ((rc = rule_on(pl->writable[i], CF_RULE_WRITE, fn, ctx, &res->rules)))
			return rc;
	for (size_t i = 0; i < pl->n_devs; i++)
		if ((rc = rule_on(pl->devs[i], CF_RULE_DEV, fn, ctx, &res->rules)))
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

/* Writable locations that lie directly in an ancestor get their rights on the
 * entry's one rule; the others keep a rule of their own. An --allow-read path
 * gets a read rule in its parent, an ancestor inside a secret (whose other
 * entries get none). The ancestors' wide lists are laid out one after the
 * other, in ancestor order. The names and paths are the policy's own strings,
 * borrowed (expand.h). */
static int place_wide(struct cf_plan *pl, const struct cf_policy *p)
{
	size_t n = p->writable.n;
	pl->wide_names = calloc(n + p->allow_read.n + 1, sizeof *pl->wide_names);
	pl->wide_kinds = calloc(n + p->allow_read.n + 1, 1);
	pl->rest = calloc(n + 1, sizeof *pl->rest);
	if (!pl->wide_names || !pl->wide_kinds || !pl->rest)
		return -ENOMEM;
	size_t used = 0;
	for (size_t a = 0; a < pl->n_anc; a++) {
		struct cf_ancestor *anc = &pl->anc[a];
		anc->wide = &pl->wide_names[used];
		anc->wide_kind = &pl->wide_kinds[used];
		for (size_t i = 0; i < n; i++) {
			if (ancestor_of(pl, p->writable.v[i]) != anc)
				continue;
			pl->wide_names[used] = cf_path_base(p->writable.v[i]);
			pl->wide_kinds[used++] = CF_RULE_WRITE;
			anc->n_wide++;
		}
		for (size_t i = 0; i < p->allow_read.n; i++) {
			if (ancestor_of(pl, p->allow_read.v[i]) != anc)
				continue;
			pl->wide_names[used] = cf_path_base(p->allow_read.v[i]);
			pl->wide_kinds[used++] = CF_RULE_READ;
			anc->n_wide++;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!ancestor_of(pl, p->writable.v[i]))
			pl->rest[pl->n_writable++] = p->writable.v[i];
	pl->writable = pl->rest;
	return 0;
}

/* Device nodes every program may use. Writes to them reach nothing of the
 * user's; /dev/tty is always the caller's own controlling terminal. */
static const char *const cf_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx",
};

/* Add PATH in canonical form (some systems make /dev/ptmx a symlink to
 * pts/ptmx, and a rule path must be symlink-free). A node that can not be
 * resolved, or that holds or lies in a secret, gets no rule. */
static int add_device(struct cf_plan *pl, const struct cf_policy *p, const char *path)
{
	char canon[PATH_MAX];
	if (cf_canon(path, NULL, canon, sizeof canon, NULL, NULL))
		return 0;
	for (size_t i = 0; i < p->n_denied; i++)
		if (cf_path_within(canon, p->denied[i].path) || cf_path_within(p->denied[i].path, canon))
			return 0;
	return cf_strv_add_unique(&pl->dev_paths, canon);
}

/* /dev/pts/N or /dev/ttyX (a console or serial line): a terminal by name. */
static bool terminal_name(const char *path)
{
	const char *rest;
	if (strncmp(path, "/dev/pts/", 9) == 0)
		rest = path + 9;
	else if (strncmp(path, "/dev/tty", 8) == 0)
		rest = path + 8;
	else
		return false;
	if (!*rest)
		return false;
	for (; *rest; rest++)
		if (*rest == '/')
			return false;
	return true;
}

/* The terminal on FD, when it is one: the caller's own, which the fenced
 * command shares anyway. The node found by name must be the one open on FD
 * (a pty of another devpts instance can have the same name and numbers). */
static int add_own_terminal(struct cf_plan *pl, const struct cf_policy *p, int fd)
{
	char link[32], path[PATH_MAX];
	struct stat by_fd, by_name;
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	if (!terminal_name(path) || fstat(fd, &by_fd) || stat(path, &by_name))
		return 0;
	if (!S_ISCHR(by_fd.st_mode) || by_fd.st_dev != by_name.st_dev ||
	    by_fd.st_ino != by_name.st_ino || by_fd.st_rdev != by_name.st_rdev)
		return 0;
	return add_device(pl, p, path);
}

static int place_devices(struct cf_plan *pl, const struct cf_policy *p)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < sizeof cf_devices / sizeof *cf_devices; i++)
		rc = add_device(pl, p, cf_devices[i]);
	for (int fd = 0; !rc && fd <= 2; fd++)
		rc = add_own_terminal(pl, p, fd);
	/* Landlock checks every open of a pty's slave, even the one
	 * ioctl(TIOCGPTPEER) makes; the supervisor makes that one for a fenced
	 * program (enforce/linux/notify/supervisor_pty.h). Opening a slave by its name needs
	 * all of /dev/pts, which is every terminal of the user. */
	if (!rc && p->allow_ptys)
		rc = add_device(pl, p, "/dev/pts");
	pl->devs = (const char *const *)pl->dev_paths.v;
	pl->n_devs = pl->dev_paths.n;
	return rc;
}

static bool inside_secret(const struct cf_policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_denied; i++)
		if (cf_path_within(path, p->denied[i].path))
			return true;
	return false;
}

/* The names inside the ancestor OUT that get no rule: ancestors and secrets,
 * and /dev (its devices get their own rules), unless the user made all of /dev
 * writable. NAMES has room for every one. A secret's name is borrowed from
 * the policy (expand.h). */
static void skip_children(struct cf_plan *pl, const struct cf_policy *p, struct cf_ancestor *out,
			  const char **names)
{
	char dir[PATH_MAX];
	const char *dev = cf_strv_has(&p->writable, "/dev") ? NULL : "/dev";
	out->skip = names;
	for (size_t k = 0; k <= pl->n_anc + p->n_denied; k++) {
		const char *c = k < pl->n_anc		  ? pl->strings.v[k]
				: k < pl->n_anc + p->n_denied ? p->denied[k - pl->n_anc].path
							      : dev;
		if (!c || strcmp(c, "/") == 0)
			continue;
		cf_path_parent(c, dir, sizeof dir);
		if (strcmp(dir, out->path) != 0)
			continue;
		const char *base = cf_path_base(c);
		bool dup = false;
		for (size_t j = 0; j < out->n_skip; j++)
			dup = dup || strcmp(out->skip[j], base) == 0;
		if (!dup)
			names[out->n_skip++] = base;
	}
}

int cf_plan_prepare(struct cf_plan *pl, const struct cf_policy *p)
{
	struct cf_strv anc = {0};
	char dir[PATH_MAX];
	int rc = 0;

	memset(pl, 0, sizeof *pl);
	pl->max_entries = p->max_entries;
	/* Every proper prefix of every secret is an ancestor, and so is every
	 * proper prefix of an --allow-read path: inside the secret, only the way
	 * to that path is allowed (only_wide below). */
	for (size_t i = 0; !rc && i < p->n_denied + p->allow_read.n; i++) {
		const char *s = i < p->n_denied ? p->denied[i].path : p->allow_read.v[i - p->n_denied];
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
	/* The plan's own strings, the ancestors, are in one list that it owns;
	 * the secrets' and writable locations' stay the policy's (expand.h). */
	pl->anc = calloc(anc.n ? anc.n : 1, sizeof *pl->anc);
	pl->names = calloc(anc.n + p->n_denied + 2, sizeof *pl->names); /* + /dev */
	if (!pl->anc || !pl->names) {
		rc = -ENOMEM;
		goto fail;
	}
	pl->strings = anc;
	anc = (struct cf_strv){0};
	pl->n_anc = pl->strings.n;
	size_t used = 0;
	for (size_t i = 0; i < pl->n_anc; i++) {
		struct cf_ancestor *out = &pl->anc[i];
		out->path = pl->strings.v[i];
		/* At or under /dev, or inside a secret (the way to an --allow-read
		 * path): an entry added there later gets no rule either. */
		out->only_wide = cf_path_within(out->path, "/dev") || inside_secret(p, out->path);
		skip_children(pl, p, out, &pl->names[used]);
		used += out->n_skip;
	}
	if ((rc = place_wide(pl, p)) || (rc = place_devices(pl, p)))
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
	cf_strv_free(&pl->dev_paths);
	memset(pl, 0, sizeof *pl);
}
