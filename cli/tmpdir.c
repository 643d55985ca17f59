/* The harness's private temporary directory (credfence harness).
 *
 * A free harness that writes a file in /tmp and then loads it (opencode, a
 * Bun binary, extracts a native library to $TMPDIR/.<hex>-00000000.so on
 * each run and maps it) can be raced by any fenced program: /tmp is writable
 * to them all. So the harness gets a TMPDIR of its own, made fresh (mode
 * 0700) in a directory that no fenced program may write, whose parent no
 * fenced program may write either (else it could move the directory away and
 * put its own in its place). Its children get the user's TMPDIR back
 * (shim/env.c), and that one stays writable for them. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cli.h"
#include "paths.h"
#include "tmpdir.h"

static char unfit_why[PATH_MAX * 3];

/* Why the place BASE (canonical) can not hold the private directory, judged
 * by the policy alone (BASE need not exist yet), or NULL. */
static const char *misplaced(const struct cf_policy *pol, const char *base)
{
	char *why = unfit_why;
	for (size_t i = 0; i < pol->writable.n; i++)
		if (cf_path_within(base, pol->writable.v[i])) {
			snprintf(why, sizeof unfit_why, "%s lies in writable location %s", base,
				 pol->writable.v[i]);
			return why;
		}
	for (size_t i = 0; i < pol->n_denied; i++)
		if (cf_path_within(base, pol->denied[i].path) ||
		    cf_path_within(pol->denied[i].path, base)) {
			snprintf(why, sizeof unfit_why, "%s overlaps secret %s", base, pol->denied[i].path);
			return why;
		}
	return NULL;
}

/* Why the existing BASE can not hold it (not a directory, not the user's
 * alone, noexec), or NULL. */
static const char *unfit(const char *base)
{
	char *why = unfit_why;
	struct stat st;
	struct statvfs vfs;
	if (lstat(base, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, sizeof unfit_why, "%s is not a directory", base);
		return why;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(why, sizeof unfit_why, "%s is not yours alone (owner or mode)", base);
		return why;
	}
	/* The harness maps what it extracts there. */
	if (statvfs(base, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
		snprintf(why, sizeof unfit_why, "%s is on a file system mounted noexec", base);
		return why;
	}
	return NULL;
}

/* mkdir -p of a canonical PATH, each new directory mode 0700. */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return -ENAMETOOLONG;
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			return 0;
	}
}

int cf_cli_private_tmpdir(const struct cf_policy *pol, char *out, size_t n, char *why, size_t wn)
{
	const char *run = getenv("XDG_RUNTIME_DIR"), *state = getenv("XDG_STATE_HOME");
	char cand[2][PATH_MAX * 2];
	bool make[2] = {false, true}; /* the runtime directory is the system's to make */
	int k = 0;
	if (run && run[0] == '/')
		snprintf(cand[k++], sizeof cand[0], "%s", run);
	else
		make[0] = true;
	if (state && state[0] == '/')
		snprintf(cand[k++], sizeof cand[0], "%s/credfence", state);
	else if (pol->home)
		snprintf(cand[k++], sizeof cand[0], "%s/.local/state/credfence", pol->home);
	size_t wl = 0;
	why[0] = '\0';
	for (int i = 0; i < k; i++) {
		char base[PATH_MAX];
		const char *bad;
		if (cf_canon(cand[i], "/", base, sizeof base, NULL, NULL) != 0)
			continue;
		/* The place is judged before anything is made there; what is
		 * there (made now, or found) is judged after. */
		struct stat st;
		bad = misplaced(pol, base);
		if (!bad && make[i] && lstat(base, &st) != 0 && errno == ENOENT)
			(void)make_dirs(base);
		if (!bad)
			bad = unfit(base);
		if (!bad) {
			char tmpl[PATH_MAX];
			if (snprintf(tmpl, sizeof tmpl, "%s/harness-tmp.XXXXXX", base) >=
			    (int)sizeof tmpl) {
				bad = "the path is too long";
			} else if (!mkdtemp(tmpl)) {
				bad = strerror(errno);
			} else if ((size_t)snprintf(out, n, "%s", tmpl) >= n) {
				rmdir(tmpl);
				bad = "the path is too long";
			} else {
				return 0;
			}
		}
		int w = snprintf(why + wl, wn - wl, "%s%s", wl ? "; " : "", bad);
		if (w > 0 && (size_t)w < wn - wl)
			wl += (size_t)w;
	}
	if (!k)
		snprintf(why, wn, "neither XDG_RUNTIME_DIR nor a home is set");
	return -1;
}

/* Remove everything under the open directory FD, then nothing more: the
 * caller removes the directory itself. Nothing followed: O_NOFOLLOW. */
static void empty_dir(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0 || errno != EISDIR)
			continue;
		int sub = depth < 64 ? openat(dirfd(d), e->d_name,
					      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
				     : -1;
		if (sub >= 0)
			empty_dir(sub, depth + 1);
		(void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

void cf_cli_remove_tmpdir(const char *dir)
{
	if (!dir || dir[0] != '/')
		return;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		empty_dir(fd, 0);
	(void)rmdir(dir);
}
