#include "git_layout.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"

/* git refuses a .git file over 1 MiB (setup.c:809); a config file this
 * large is read no further here (what lies past it is not reported). */
#define READ_MAX (1 << 20)
/* config.c:152: includes nest at most this deep. */
#define INCLUDE_DEPTH 10
/* Submodules inside submodules, names with '/' (modules/a/b). */
#define NEST_MAX 8

struct walk {
	const char *home;
	cf_git_add_fn add;
	void *ctx;
	size_t dirs;     /* git directories walked */
	size_t *skipped; /* past CF_GIT_MAX_DIRS */
	int rc;
};

/* DIR/NAME into OUT; false when it does not fit. */
static __attribute__((noinline)) bool join(char *out, size_t n, const char *dir,
					   const char *name)
{
	int k = snprintf(out, n, "%s/%s", dir, name);
	return k >= 0 && (size_t)k < n;
}

/* The whole of the regular file PATH (no symlink followed at its end is
 * asked for: git follows them, so do we), NUL-terminated, or NULL. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > READ_MAX) {
		close(fd);
		return NULL;
	}
	char *b = malloc((size_t)st.st_size + 1);
	size_t n = 0;
	ssize_t k;
	while (b && n < (size_t)st.st_size && (k = read(fd, b + n, (size_t)st.st_size - n)) > 0)
		n += (size_t)k;
	close(fd);
	if (b) {
		b[n] = '\0';
		*len = n;
	}
	return b;
}

/* PATH made canonical (its existing components resolved) against BASE. */
static bool canon(const char *path, const char *base, char *out, size_t n)
{
	return cf_canon(path, base, out, n, NULL, NULL) == 0;
}

static int report(struct walk *w, const char *path, const char *rel)
{
	const struct cf_protected_row *row = cf_protected_git_row(rel);
	if (w->rc || !row)
		return w->rc;
	int rc = w->add(w->ctx, path, row);
	if (rc < 0)
		w->rc = rc;
	return w->rc;
}

/* ---- the config syntax (git-config(1), CONFIGURATION FILE) ---- */

struct cfg_reader {
	const char *p, *end;
};

static int peek(const struct cfg_reader *r)
{
	return r->p < r->end ? (unsigned char)*r->p : -1;
}

static void skip_line(struct cfg_reader *r)
{
	while (r->p < r->end && *r->p != '\n')
		r->p++;
}

/* A section header after '[': "name", "name \"sub\"" or the old "name.sub".
 * false when malformed (git dies there; we read on after the line). */
static bool header(struct cfg_reader *r, char *sect, size_t sn, char *sub, size_t un, bool *has_sub)
{
	size_t i = 0, j = 0;
	*has_sub = false;
	while (r->p < r->end && (isalnum((unsigned char)*r->p) || *r->p == '-' || *r->p == '.')) {
		if (i + 1 < sn)
			sect[i++] = (char)tolower((unsigned char)*r->p);
		r->p++;
	}
	sect[i] = '\0';
	char *dot = strchr(sect, '.');
	if (dot) {
		/* [section.subsection]: the old form, lowercased by git. */
		*dot = '\0';
		snprintf(sub, un, "%s", dot + 1);
		*has_sub = true;
	}
	while (peek(r) == ' ' || peek(r) == '\t')
		r->p++;
	if (peek(r) == '"') {
		r->p++;
		while (r->p < r->end && *r->p != '"' && *r->p != '\n') {
			if (*r->p == '\\' && r->p + 1 < r->end)
				r->p++;
			if (j + 1 < un)
				sub[j++] = *r->p;
			r->p++;
		}
		sub[j] = '\0';
		*has_sub = true;
		if (peek(r) != '"')
			return false;
		r->p++;
	}
	if (peek(r) != ']')
		return false;
	r->p++;
	return i > 0;
}

/* A value after '=': quotes joined, escapes applied, a backslash-newline
 * continues, a comment outside quotes ends it, trailing blanks outside
 * quotes dropped (config.c, parse_value). */
static void value(struct cfg_reader *r, char *out, size_t n)
{
	size_t i = 0, keep = 0;
	bool quoted = false, started = false;
	while (r->p < r->end) {
		char c = *r->p++;
		if (c == '\n' && !quoted) {
			r->p--;
			break;
		}
		if (!quoted && (c == '#' || c == ';')) {
			r->p--;
			skip_line(r);
			break;
		}
		if (!quoted && (c == ' ' || c == '\t')) {
			if (started && i + 1 < n)
				out[i++] = c;
			continue;
		}
		started = true;
		if (c == '"') {
			quoted = !quoted;
			keep = i;
			continue;
		}
		if (c == '\\' && r->p < r->end) {
			c = *r->p++;
			if (c == '\n')
				continue;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'b' ? '\b' : c;
		}
		if (i + 1 < n)
			out[i++] = c;
		keep = i;
	}
	out[keep] = '\0';
}

void cf_git_config_parse(const char *text, size_t len,
			 void (*fn)(void *ctx, const char *sect, const char *sub, const char *name,
				    const char *value),
			 void *ctx)
{
	struct cfg_reader r = {text, text + len};
	char sect[128] = "", sub[PATH_MAX] = "", name[128], val[PATH_MAX];
	bool has_sub = false, in_section = false;
	/* A UTF-8 byte order mark, as git skips it (config.c, get_next_char). */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		r.p += 3;
	while (r.p < r.end) {
		int c = peek(&r);
		if (c == '\n' || c == ' ' || c == '\t' || c == '\r') {
			r.p++;
			continue;
		}
		if (c == '#' || c == ';') {
			skip_line(&r);
			continue;
		}
		if (c == '[') {
			r.p++;
			in_section = header(&r, sect, sizeof sect, sub, sizeof sub, &has_sub);
			if (!in_section)
				skip_line(&r);
			continue;
		}
		if (!isalpha(c)) {
			skip_line(&r);
			continue;
		}
		size_t i = 0;
		while (r.p < r.end && (isalnum((unsigned char)*r.p) || *r.p == '-')) {
			if (i + 1 < sizeof name)
				name[i++] = (char)tolower((unsigned char)*r.p);
			r.p++;
		}
		name[i] = '\0';
		while (peek(&r) == ' ' || peek(&r) == '\t')
			r.p++;
		bool bare = peek(&r) != '=';
		if (!bare) {
			r.p++;
			value(&r, val, sizeof val);
		} else {
			skip_line(&r);
		}
		if (in_section)
			fn(ctx, sect, has_sub ? sub : NULL, name, bare ? NULL : val);
	}
}

/* ---- one config file: what it includes and where its hooks are ---- */

struct cfg_seen {
	struct walk *w;
	const char *file;     /* the file read (for relative includes) */
	const char *worktree; /* the repository's worktree, or NULL (user config) */
	int depth;
	char hooks[PATH_MAX];    /* core.hooksPath, as set last */
	char worktree_cfg[PATH_MAX]; /* core.worktree, as set last */
	char includes[16][PATH_MAX];
	size_t n_includes;
};

static void on_var(void *ctx, const char *sect, const char *sub, const char *name,
		   const char *value)
{
	struct cfg_seen *s = ctx;
	if (!value)
		return;
	if (strcmp(sect, "core") == 0 && !sub && strcmp(name, "hookspath") == 0)
		snprintf(s->hooks, sizeof s->hooks, "%s", value);
	else if (strcmp(sect, "core") == 0 && !sub && strcmp(name, "worktree") == 0)
		snprintf(s->worktree_cfg, sizeof s->worktree_cfg, "%s", value);
	else if (strcmp(name, "path") == 0 &&
		 ((strcmp(sect, "include") == 0 && !sub) || (strcmp(sect, "includeif") == 0 && sub)) &&
		 s->n_includes < sizeof s->includes / sizeof *s->includes)
		/* Every includeIf, whatever its condition: a condition that does
		 * not hold now (onbranch:, gitdir:) may hold at the user's next
		 * git command. */
		snprintf(s->includes[s->n_includes++], PATH_MAX, "%s", value);
}

/* A path as git's interpolate_path takes it (path.c): "~/" is home,
 * "~user/" is left alone (not reported), relative ones against BASE. */
static bool config_path(const struct walk *w, const char *v, const char *base, char *out,
			size_t n)
{
	char buf[PATH_MAX * 2];
	if (v[0] == '~') {
		if (v[1] != '/' || !w->home)
			return false;
		snprintf(buf, sizeof buf, "%s%s", w->home, v + 1);
		v = buf;
	} else if (strncmp(v, "%(prefix)/", 10) == 0) {
		return false; /* git's own installation: no writable location */
	}
	return canon(v, base, out, n);
}

static void read_config(struct walk *w, const char *file, const char *worktree, int depth,
			char *worktree_cfg, size_t wn);

static void after_config(struct walk *w, struct cfg_seen *s)
{
	char dir[PATH_MAX], p[PATH_MAX];
	cf_path_parent(s->file, dir, sizeof dir);
	for (size_t i = 0; i < s->n_includes && !w->rc; i++) {
		if (!config_path(w, s->includes[i], dir, p, sizeof p))
			continue;
		report(w, p, "include.path");
		if (s->depth < INCLUDE_DEPTH)
			read_config(w, p, s->worktree, s->depth + 1, NULL, 0);
	}
	/* A relative core.hooksPath is taken in the worktree (githooks(5):
	 * "relative to the directory where the hooks are run"). Inside the
	 * repository's own worktree it holds the project's hooks (.husky),
	 * which are the project's code (SECURITY.md, "Where the line is
	 * drawn"); elsewhere (/tmp, ~/.githooks in a writable home) it is
	 * held as .git/hooks is. */
	if (s->hooks[0] && !w->rc) {
		bool rel = s->hooks[0] != '/' && s->hooks[0] != '~';
		if (rel && !s->worktree)
			return; /* relative in the user's config: each worktree's own */
		if (!config_path(w, s->hooks, rel ? s->worktree : dir, p, sizeof p))
			return;
		if (s->worktree && cf_path_within(p, s->worktree))
			return;
		report(w, p, "core.hooksPath");
	}
}

/* FILE as git config: report what it includes and its hooks directory;
 * its core.worktree into WORKTREE_CFG (may be NULL). */
static void read_config(struct walk *w, const char *file, const char *worktree, int depth,
			char *worktree_cfg, size_t wn)
{
	size_t len;
	char *text = slurp(file, &len);
	if (!text)
		return;
	struct cfg_seen *s = calloc(1, sizeof *s);
	if (!s) {
		free(text);
		w->rc = -ENOMEM;
		return;
	}
	s->w = w;
	s->file = file;
	s->worktree = worktree;
	s->depth = depth;
	cf_git_config_parse(text, len, on_var, s);
	free(text);
	if (worktree_cfg && wn)
		snprintf(worktree_cfg, wn, "%s", s->worktree_cfg);
	after_config(w, s);
	free(s);
}

/* ---- git directories ---- */

/* The first line of FILE, less trailing CR and LF, into OUT. */
static bool first_line(const char *file, char *out, size_t n)
{
	size_t len;
	char *t = slurp(file, &len);
	if (!t)
		return false;
	t[strcspn(t, "\n")] = '\0';
	size_t k = strlen(t);
	while (k && (t[k - 1] == '\r' || t[k - 1] == ' '))
		t[--k] = '\0';
	snprintf(out, n, "%s", t);
	free(t);
	return true;
}

static bool is_dir(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whether P looks like a git directory (setup.c:346, is_git_directory:
 * objects/, refs/ and HEAD). */
static bool git_directory(const char *p)
{
	char q[PATH_MAX];
	struct stat st;
	join(q, sizeof q, p, "HEAD");
	if (lstat(q, &st))
		return false;
	join(q, sizeof q, p, "objects");
	return is_dir(q) || (join(q, sizeof q, p, "commondir"), is_file(q));
}

static void gitdir(struct walk *w, const char *g, const char *worktree, int nest);

/* A .git file at DOTGIT (a worktree's or a checkout's): reported, and the
 * git directory it names walked. */
static void gitfile(struct walk *w, const char *dotgit, int nest)
{
	char line[PATH_MAX], wt[PATH_MAX], g[PATH_MAX];
	if (!is_file(dotgit))
		return;
	report(w, dotgit, ".git");
	if (!first_line(dotgit, line, sizeof line) || strncmp(line, "gitdir: ", 8) != 0)
		return;
	cf_path_parent(dotgit, wt, sizeof wt);
	if (canon(line + 8, wt, g, sizeof g) && is_dir(g))
		gitdir(w, g, wt, nest + 1);
}

/* The git directories below DIR/modules: a submodule's name may hold '/'
 * (modules/a/b), so a directory that is no git directory is looked into. */
static void modules(struct walk *w, const char *dir, int nest)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[PATH_MAX];
	while (d && !w->rc && (e = readdir(d))) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= sizeof p || !is_dir(p))
			continue;
		if (git_directory(p)) {
			gitdir(w, p, NULL, nest + 1);
		} else if (nest < NEST_MAX) {
			modules(w, p, nest + 1);
		}
	}
	if (d)
		closedir(d);
}

/* The linked worktrees of the common directory C: each one's commondir
 * and config.worktree, and its .git file, which its gitdir file names
 * (worktree.c:81). */
static void worktrees(struct walk *w, const char *c, int nest)
{
	char dir[PATH_MAX], p[PATH_MAX], line[PATH_MAX], dotgit[PATH_MAX];
	join(dir, sizeof dir, c, "worktrees");
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && !w->rc && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= sizeof p || !is_dir(p))
			continue;
		if (w->dirs >= CF_GIT_MAX_DIRS) {
			++*w->skipped;
			continue;
		}
		w->dirs++;
		char f[PATH_MAX + 32];
		join(f, sizeof f, p, "commondir");
		report(w, f, "commondir");
		join(f, sizeof f, p, "config.worktree");
		if (is_file(f))
			report(w, f, "config.worktree");
		join(f, sizeof f, p, "gitdir");
		if (first_line(f, line, sizeof line) && canon(line, p, dotgit, sizeof dotgit) &&
		    is_file(dotgit))
			report(w, dotgit, ".git");
		/* Its own submodules (modules is per worktree: path.c:111). */
		join(f, sizeof f, p, "modules");
		if (is_dir(f) && nest < NEST_MAX)
			modules(w, f, nest + 1);
	}
	if (d)
		closedir(d);
}

/* The git directory G, whose worktree is WORKTREE (NULL: take it from
 * G's core.worktree, as for a submodule's git directory). */
static void gitdir(struct walk *w, const char *g, const char *worktree, int nest)
{
	char f[PATH_MAX + 32], line[PATH_MAX], c[PATH_MAX], wcfg[PATH_MAX] = "", wt[PATH_MAX];
	if (w->rc || nest > NEST_MAX)
		return;
	if (w->dirs >= CF_GIT_MAX_DIRS) {
		++*w->skipped;
		return;
	}
	w->dirs++;
	/* setup.c:312: the common directory. */
	join(f, sizeof f, g, "commondir");
	report(w, f, "commondir");
	snprintf(c, sizeof c, "%s", g);
	if (first_line(f, line, sizeof line) && !canon(line[0] ? line : ".", g, c, sizeof c))
		snprintf(c, sizeof c, "%s", g);
	join(f, sizeof f, c, "config");
	report(w, f, "config");
	join(f, sizeof f, c, "hooks");
	report(w, f, "hooks");
	/* A submodule's git directory names its checkout in core.worktree
	 * (relative to itself), where the checkout's .git file lies. */
	join(f, sizeof f, c, "config");
	read_config(w, f, worktree, 0, wcfg, sizeof wcfg);
	join(f, sizeof f, g, "config.worktree");
	if (is_file(f)) {
		report(w, f, "config.worktree");
		read_config(w, f, worktree, 0, NULL, 0);
	}
	if (!worktree && wcfg[0] && canon(wcfg, g, wt, sizeof wt)) {
		join(f, sizeof f, wt, ".git");
		if (is_file(f))
			report(w, f, ".git");
	}
	join(f, sizeof f, g, "modules");
	if (is_dir(f))
		modules(w, f, nest);
	if (strcmp(c, g) != 0) {
		join(f, sizeof f, c, "modules");
		if (is_dir(f))
			modules(w, f, nest);
	}
	worktrees(w, c, nest);
}

int cf_git_layout(const char *root, const char *home, cf_git_add_fn add, void *ctx,
		  size_t *skipped)
{
	char dotgit[PATH_MAX];
	size_t none = 0;
	struct walk w = {home, add, ctx, 0, skipped ? skipped : &none, 0};
	if ((size_t)snprintf(dotgit, sizeof dotgit, "%s/.git", strcmp(root, "/") ? root : "") >=
	    sizeof dotgit)
		return 0;
	if (is_dir(dotgit))
		gitdir(&w, dotgit, root, 0);
	else
		gitfile(&w, dotgit, 0);
	return w.rc;
}

int cf_git_layout_global(const char *home, const char *xdg_config, cf_git_add_fn add, void *ctx)
{
	char f[PATH_MAX];
	size_t none = 0;
	struct walk w = {home, add, ctx, 0, &none, 0};
	if (home) {
		join(f, sizeof f, home, ".gitconfig");
		read_config(&w, f, NULL, 0, NULL, 0);
	}
	if (xdg_config && xdg_config[0] == '/')
		snprintf(f, sizeof f, "%s/git/config", xdg_config);
	else if (home)
		snprintf(f, sizeof f, "%s/.config/git/config", home);
	else
		f[0] = '\0';
	if (f[0])
		read_config(&w, f, NULL, 0, NULL, 0);
	read_config(&w, "/etc/gitconfig", NULL, 0, NULL, 0);
	return w.rc;
}
