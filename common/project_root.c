#include "project_root.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "paths.h"

/* The length of W as a prefix: "/" is the empty one. */
static size_t prefix_len(const char *w)
{
	return w[0] == '/' && w[1] == '\0' ? 0 : strlen(w);
}

bool cf_project_root(const char *w, const char *cwd, const char *dir, size_t len)
{
	size_t n = prefix_len(w);
	if (n > len || strncmp(dir, w, n) != 0)
		return false;
	if (n == len)
		return true; /* W itself */
	if (dir[n] != '/')
		return false; /* not inside W */
	/* On the way to the working directory. */
	if (cwd && strncmp(cwd, dir, len) == 0 && (cwd[len] == '\0' || cwd[len] == '/'))
		return true;
	/* Directly below W. */
	return !memchr(dir + n + 1, '/', len - n - 1);
}

/* DIR (canonical) as a root of W, when it is one. */
static int add_if_root(struct cf_strv *roots, const char *w, const char *cwd, const char *dir)
{
	size_t len = strcmp(dir, "/") == 0 ? 0 : strlen(dir);
	return cf_project_root(w, cwd, dir, len) ? cf_strv_add(roots, dir) : 0;
}

int cf_project_roots(struct cf_strv *roots, const char *w, const char *cwd)
{
	char buf[PATH_MAX], up[PATH_MAX];
	int rc = add_if_root(roots, w, cwd, w);
	if (!rc && cwd && cf_path_within(cwd, w)) {
		snprintf(buf, sizeof buf, "%s", cwd);
		while (!rc && strlen(buf) > strlen(w)) {
			rc = add_if_root(roots, w, cwd, buf);
			cf_path_parent(buf, up, sizeof up);
			snprintf(buf, sizeof buf, "%s", up);
		}
	}
	DIR *d = rc ? NULL : opendir(w);
	struct dirent *e;
	while (d && !rc && (e = readdir(d))) {
		struct stat st;
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		/* The entry's type as the directory holds it: no lstat() a
		 * directory, unless the file system does not say (DT_UNKNOWN). */
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		snprintf(buf, sizeof buf, "%s%s%s", w, strcmp(w, "/") ? "/" : "", e->d_name);
		if (e->d_type == DT_DIR || (lstat(buf, &st) == 0 && S_ISDIR(st.st_mode)))
			rc = add_if_root(roots, w, cwd, buf);
	}
	if (d)
		closedir(d);
	return rc;
}
