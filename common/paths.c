#include "paths.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nolibc.h"

#define CF_MAX_LINKS 40

/* Raw system calls on Linux, so that cf_canon() runs between fork and exec too. */
#ifdef __linux__
#include <fcntl.h>
#include "sys.h"
static int lstat_raw(const char *path, struct stat *st)
{
	return (int)cf_sys4(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}
static long readlink_raw(const char *path, char *buf, size_t n)
{
	return cf_sys4(SYS_readlinkat, AT_FDCWD, path, buf, n);
}
#else
static int lstat_raw(const char *path, struct stat *st)
{
	return lstat(path, st) ? -errno : 0;
}
static long readlink_raw(const char *path, char *buf, size_t n)
{
	ssize_t r = readlink(path, buf, n);
	return r < 0 ? -errno : r;
}
#endif

bool cf_path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

void cf_path_parent(const char *path, char *out, size_t outsz)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	if (n == 0)
		n = 1; /* keep the root */
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, path, n);
	out[n] = '\0';
}

const char *cf_path_base(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Drop the last component of the canonical prefix OUT (of length *len). */
static void pop(char *out, size_t *len)
{
	while (*len > 1 && out[*len - 1] != '/')
		(*len)--;
	if (*len > 1)
		(*len)--;
	out[*len] = '\0';
}

static int push(char *out, size_t *len, size_t outsz, const char *comp, size_t clen)
{
	size_t need = *len + (*len > 1) + clen;
	if (need + 1 > outsz)
		return -ENAMETOOLONG;
	if (*len > 1)
		out[(*len)++] = '/';
	memcpy(out + *len, comp, clen);
	*len += clen;
	out[*len] = '\0';
	return 0;
}

int cf_canon(const char *path, const char *base, char *out, size_t outsz,
	     cf_lookup_fn lookup, void *ctx)
{
	return cf_canon_links(path, base, out, outsz, lookup, NULL, ctx);
}

int cf_canon_links(const char *path, const char *base, char *out, size_t outsz,
		   cf_lookup_fn lookup, cf_lookup_fn on_link, void *ctx)
{
	char todo[PATH_MAX * 2], link[PATH_MAX];
	size_t len = 1, links = 0;
	size_t missing_at = 0; /* > 0: out is missing from this length on */

	if (outsz < 2)
		return -ENAMETOOLONG;
	if (path[0] != '/') {
		if (!base || base[0] != '/')
			return -EINVAL;
		size_t bl = cf_nl_strlen(base), pl = cf_nl_strlen(path);
		if (bl + pl + 2 > sizeof todo)
			return -ENAMETOOLONG;
		memcpy(todo, base, bl);
		todo[bl] = '/';
		memcpy(todo + bl + 1, path, pl + 1);
	} else {
		size_t pl = cf_nl_strlen(path);
		if (pl + 1 > sizeof todo)
			return -ENAMETOOLONG;
		memcpy(todo, path, pl + 1);
	}
	out[0] = '/';
	out[1] = '\0';

	size_t pos = 0;
	while (todo[pos]) {
		while (todo[pos] == '/')
			pos++;
		if (!todo[pos])
			break;
		size_t start = pos;
		while (todo[pos] && todo[pos] != '/')
			pos++;
		size_t clen = pos - start;
		const char *comp = todo + start;
		if (clen == 1 && comp[0] == '.')
			continue;
		if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
			pop(out, &len);
			if (len <= missing_at)
				missing_at = 0; /* back on existing ground: resolve again */
			continue;
		}
		size_t before = len;
		int rc = push(out, &len, outsz, comp, clen);
		if (rc)
			return rc;
		if (missing_at)
			continue;

		if (lookup) {
			char dir[PATH_MAX];
			size_t dlen = before < sizeof dir ? before : sizeof dir - 1;
			memcpy(dir, out, dlen);
			dir[dlen] = '\0';
			lookup(ctx, dir);
		}
		struct stat st;
		if (lstat_raw(out, &st) != 0) {
			/* ENOENT, ENOTDIR, EACCES: from here on the path is kept by name. */
			missing_at = len;
			continue;
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++links > CF_MAX_LINKS)
			return -ELOOP;
		if (on_link)
			on_link(ctx, out);
		long n = readlink_raw(out, link, sizeof link - 1);
		if (n < 0)
			return (int)n;
		link[n] = '\0';
		/* New work: the link's target, then what was left of the old work. */
		size_t rest = cf_nl_strlen(todo + pos);
		if ((size_t)n + 1 + rest + 1 > sizeof todo)
			return -ENAMETOOLONG;
		memmove(todo + n + 1, todo + pos, rest + 1);
		memcpy(todo, link, (size_t)n);
		todo[n] = '/';
		pos = 0;
		if (link[0] == '/') {
			len = 1;
			out[1] = '\0';
		} else {
			len = before;
			out[len] = '\0';
		}
	}
	return 0;
}

size_t cf_path_depth(const char *path)
{
	size_t n = 0;
	for (const char *c = path; *c; c++)
		if (*c == '/' && c[1] && c[1] != '/')
			n++;
	return n;
}

uint64_t cf_path_hash(const char *path)
{
	uint64_t h = 1469598103934665603ULL;
	for (const char *p = path; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h | 1;
}
