#include "policy.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness_files.h"
#include "paths.h"
#include "secrets.h"

void cf_policy_verdict(struct cf_policy *p, const struct cf_why *w)
{
	/* W's strings may lie in why_text already: copy through a buffer. An
	 * argument that does not fit any more is left out (worded "?"). */
	char text[sizeof p->why_text];
	size_t off[CF_WHY_ARGS] = {0}, used = 0; /* offset + 1; 0: none */
	struct cf_why mine = *w;
	for (size_t i = 0; i < CF_WHY_ARGS; i++) {
		if (!w->arg[i] || used >= sizeof text)
			continue;
		size_t n = strnlen(w->arg[i], sizeof text - 1 - used);
		memcpy(text + used, w->arg[i], n);
		text[used + n] = '\0';
		off[i] = used + 1;
		used += n + 1;
	}
	memcpy(p->why_text, text, used);
	for (size_t i = 0; i < CF_WHY_ARGS; i++)
		mine.arg[i] = off[i] ? p->why_text + off[i] - 1 : NULL;
	p->why = mine;
	p->verdict = cf_why_verdict(w->id);
}

void cf_policy_reason(const struct cf_policy *p, char *out, size_t cap)
{
	cf_why_words(&p->why, out, cap);
}

bool cf_policy_inherit(struct cf_policy *p, const char *open_secret)
{
	if (open_secret) {
		cf_policy_verdict(p, &(struct cf_why){.id = CF_WHY_NESTED, .arg = {open_secret}});
		return false;
	}
	cf_policy_verdict(p, &(struct cf_why){.id = CF_WHY_INHERITED});
	return true;
}

static void note_lookup(void *ctx, const char *dir)
{
	struct cf_policy *p = ctx;
	(void)cf_strv_add_unique(&p->lookups, dir);
}

/* Collects secret candidates (not yet canonical) with what they hold. */
struct candidates {
	struct cf_strv path;
	const char **holds, **why;
	size_t cap;
};

static int candidate(struct candidates *c, const char *path, const char *holds, const char *why)
{
	if (!path || !*path)
		return 0;
	if (c->path.n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		const char **h = realloc(c->holds, cap * sizeof *h);
		if (!h)
			return -ENOMEM;
		c->holds = h;
		const char **w = realloc(c->why, cap * sizeof *w);
		if (!w)
			return -ENOMEM;
		c->why = w;
		c->cap = cap;
	}
	c->holds[c->path.n] = holds;
	c->why[c->path.n] = why;
	return cf_strv_add(&c->path, path);
}

static int joined(struct candidates *c, const char *dir, const char *rel, const char *holds,
		  const char *why)
{
	char buf[PATH_MAX * 2];
	if (snprintf(buf, sizeof buf, "%s/%s", dir, rel) >= (int)sizeof buf)
		return 0;
	return candidate(c, buf, holds, why);
}

static int home_rows(struct candidates *c, const char *home)
{
	for (size_t i = 0; i < cf_secret_count; i++) {
		int rc = joined(c, home, cf_secret_table[i].rel, cf_secret_table[i].holds, "default");
		if (rc)
			return rc;
	}
	return 0;
}

static int relocated_rows(struct candidates *c, char *const envp[])
{
	for (size_t i = 0; i < cf_secret_count; i++) {
		const struct cf_secret_row *r = &cf_secret_table[i];
		const char *v = r->env ? cf_env_get(envp, r->env) : NULL;
		int rc = 0;
		if (!v || !*v)
			continue;
		if (r->reloc == CF_RELOC_PATH) {
			rc = candidate(c, v, r->holds, r->env);
		} else if (r->reloc == CF_RELOC_JOIN) {
			rc = joined(c, v, r->leaf, r->holds, r->env);
		} else if (r->reloc == CF_RELOC_LIST) {
			struct cf_strv parts = {0};
			rc = cf_strv_add_list(&parts, v);
			for (size_t k = 0; !rc && k < parts.n; k++)
				rc = candidate(c, parts.v[k], r->holds, r->env);
			cf_strv_free(&parts);
		}
		if (rc)
			return rc;
	}
	const char *xdg = cf_env_get(envp, "XDG_CONFIG_HOME");
	if (!xdg || !*xdg)
		return 0;
	size_t plen = strlen(CF_XDG_CONFIG_PREFIX);
	for (size_t i = 0; i < cf_secret_count; i++) {
		const struct cf_secret_row *r = &cf_secret_table[i];
		if (strncmp(r->rel, CF_XDG_CONFIG_PREFIX, plen) != 0)
			continue;
		int rc = joined(c, xdg, r->rel + plen, r->holds, "XDG_CONFIG_HOME");
		if (rc)
			return rc;
	}
	return 0;
}

static int add_denied(struct cf_policy *p, size_t *cap, const char *path, const char *holds,
		      const char *why)
{
	for (size_t i = 0; i < p->n_denied; i++)
		if (strcmp(p->denied[i].path, path) == 0)
			return 0;
	if (p->n_denied == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct cf_denied *d = realloc(p->denied, ncap * sizeof *d);
		if (!d)
			return -ENOMEM;
		p->denied = d;
		*cap = ncap;
	}
	char *dup = strdup(path);
	if (!dup)
		return -ENOMEM;
	p->denied[p->n_denied++] = (struct cf_denied){dup, holds, why};
	return 0;
}

/* Keep INPUT (made absolute) and what it resolved to, to check later. */
static int remember(struct cf_policy *p, const char *input, const char *cwd, const char *canon)
{
	char abs[PATH_MAX * 2];
	int k = input[0] == '/' ? snprintf(abs, sizeof abs, "%s", input)
				: snprintf(abs, sizeof abs, "%s/%s", cwd, input);
	if (k < 0 || (size_t)k >= sizeof abs)
		return -ENAMETOOLONG;
	/* Once a pair: cf_policy_resolves_same resolves each again at every
	 * launch that checks it. */
	for (size_t i = 0; i + 1 < p->resolved.n; i += 2)
		if (strcmp(p->resolved.v[i], abs) == 0 && strcmp(p->resolved.v[i + 1], canon) == 0)
			return 0;
	if (cf_strv_add(&p->resolved, abs) || cf_strv_add(&p->resolved, canon))
		return -ENOMEM;
	return 0;
}

bool cf_policy_resolves_same(const struct cf_policy *p)
{
	char now[PATH_MAX];
	for (size_t i = 0; i + 1 < p->resolved.n; i += 2) {
		if (cf_canon(p->resolved.v[i], NULL, now, sizeof now, NULL, NULL))
			return false;
		const char *a = now, *b = p->resolved.v[i + 1];
		while (*a && *a == *b)
			a++, b++;
		if (*a != *b)
			return false;
	}
	return true;
}

/* cf_canon_links' context in canonical_secret: whether a symlink was
 * followed on the way. */
struct followed {
	struct cf_policy *p;
	bool link;
};

static void note_lookup_of(void *ctx, const char *dir)
{
	note_lookup(((struct followed *)ctx)->p, dir);
}

static void note_followed(void *ctx, const char *link)
{
	(void)link;
	((struct followed *)ctx)->link = true;
}

/* A secret is denied by its name (parent resolved, last component kept) and,
 * when that name is a symlink, at the target too. */
static int canonical_secret(struct cf_policy *p, size_t *cap, const char *path, const char *holds,
			    const char *why, const char *cwd)
{
	char full[PATH_MAX], parent[PATH_MAX], name[PATH_MAX + 1];
	struct followed fl = {p, false};
	int rc = cf_canon_links(path, cwd, full, sizeof full, note_lookup_of, note_followed, &fl);
	if (rc == 0)
		rc = remember(p, path, cwd, full);
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		cf_policy_verdict(p, &(struct cf_why){.id = CF_WHY_UNRESOLVED, .err = -rc, .arg = {path}});
		return 0;
	}
	/* The name form: resolve the parent of the path as written. */
	char lexical[PATH_MAX * 2];
	if (path[0] == '/')
		snprintf(lexical, sizeof lexical, "%s", path);
	else
		snprintf(lexical, sizeof lexical, "%s/%s", cwd, path);
	size_t n = strlen(lexical);
	while (n > 1 && lexical[n - 1] == '/')
		lexical[--n] = '\0';
	const char *base = cf_path_base(lexical);
	if (strcmp(base, ".") != 0 && strcmp(base, "..") != 0 && *base) {
		char dir[PATH_MAX * 2];
		snprintf(dir, sizeof dir, "%.*s", (int)(base - lexical), lexical);
		/* No symlink on the way: the parent is the full path's, and the
		 * full path's pair covers it (a link that appears on the way to
		 * the parent is on the way to the full path too). */
		int pc = fl.link ? cf_canon(dir, cwd, parent, sizeof parent, note_lookup, p)
				 : (cf_path_parent(full, parent, sizeof parent), 0);
		if (pc == 0) {
			if (fl.link && (rc = remember(p, dir, cwd, parent)) == -ENOMEM)
				return rc;
			snprintf(name, sizeof name, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "",
				 base);
			if ((rc = add_denied(p, cap, name, holds, why)))
				return rc;
		}
	}
	return add_denied(p, cap, full, holds, why);
}

static int cmp_denied(const void *a, const void *b)
{
	return strcmp(((const struct cf_denied *)a)->path, ((const struct cf_denied *)b)->path);
}

/* Drop secrets that lie inside another secret: the outer one covers them, and
 * keeping them would make the outer one an ancestor whose siblings get allowed.
 * Runs on the sorted list, where a location comes before everything inside it,
 * so looking at the entries kept so far is enough (and never at a freed one). */
static void drop_nested(struct cf_policy *p)
{
	size_t out = 0;
	for (size_t i = 0; i < p->n_denied; i++) {
		bool inner = false;
		for (size_t j = 0; j < out && !inner; j++)
			inner = cf_path_within(p->denied[i].path, p->denied[j].path);
		if (inner)
			free(p->denied[i].path);
		else
			p->denied[out++] = p->denied[i];
	}
	p->n_denied = out;
}

static char *canon_dup(const char *path, const char *cwd)
{
	char buf[PATH_MAX];
	if (!path || !*path || cf_canon(path, cwd, buf, sizeof buf, NULL, NULL))
		return NULL;
	return strdup(buf);
}

/* Symlinks met while resolving writable locations (and the log), as pairs:
 * the location as given (made absolute), the symlink's own path. */
struct links {
	struct cf_strv pairs;
	const char *given;
	int err;
};

static void note_link(void *ctx, const char *link)
{
	struct links *l = ctx;
	if (!l->err && (cf_strv_add(&l->pairs, l->given) || cf_strv_add(&l->pairs, link)))
		l->err = -ENOMEM;
}

/* PATH resolved, each symlink on the way noted in L. 0, -ENOMEM, or another
 * -errno when PATH can not be resolved. */
static int canon_noting_links(struct links *l, const char *path, const char *cwd, char *out,
			      size_t outsz)
{
	char given[PATH_MAX * 2];
	int k = path[0] == '/' ? snprintf(given, sizeof given, "%s", path)
			       : snprintf(given, sizeof given, "%s/%s", cwd, path);
	if (k < 0 || (size_t)k >= sizeof given)
		return -ENAMETOOLONG;
	l->given = given;
	int rc = cf_canon_links(path, cwd, out, outsz, NULL, note_link, l);
	l->given = NULL;
	return l->err ? l->err : rc;
}

static int writable_add(struct cf_policy *p, struct links *l, const char *path, const char *cwd)
{
	char c[PATH_MAX];
	if (!path || !*path)
		return 0;
	int rc = canon_noting_links(l, path, cwd, c, sizeof c);
	if (rc == -ENOMEM)
		return rc;
	if (rc) /* a location that can not be resolved: no rule, no overlap */
		return 0;
	return cf_strv_add_unique(&p->writable, c);
}

static const char *logical_cwd(char *const envp[], const char *cwd)
{
	const char *pwd = cf_env_get(envp, "PWD");
	struct stat a, b;
	if (pwd && pwd[0] == '/' && stat(pwd, &a) == 0 && stat(cwd, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		return pwd;
	return cwd;
}

/* npm reads its settings from npm_config_* in any case of letters, and the
 * last non-empty one in the environment wins (@npmcli/config, loadEnv). */
static const char *npm_cache_dir(char *const envp[])
{
	static const char key[] = "npm_config_cache=";
	const char *found = NULL;
	for (char *const *e = envp; e && *e; e++)
		if (strncasecmp(*e, key, sizeof key - 1) == 0 && (*e)[sizeof key - 1])
			found = *e + sizeof key - 1;
	return found;
}

/* A cache the tools write while they work, where the environment puts it:
 * $VAR joined with LEAF when VAR is set and not empty, else HOME joined with
 * REL. An XDG variable that is not absolute is ignored, as the XDG spec says;
 * CARGO_HOME and npm's cache are taken from the cwd, as cargo and npm do. */
static int cache_add(struct cf_policy *p, struct links *l, const char *moved, bool xdg,
		     const char *leaf, const char *rel, const char *cwd)
{
	char buf[PATH_MAX * 2];
	int k;
	if (moved && *moved && (!xdg || moved[0] == '/'))
		k = snprintf(buf, sizeof buf, "%s%s%s", moved, *leaf ? "/" : "", leaf);
	else if (p->home)
		k = snprintf(buf, sizeof buf, "%s/%s", p->home, rel);
	else
		return 0;
	if (k < 0 || (size_t)k >= sizeof buf)
		return 0; /* too long to resolve: no rule, like a missing location */
	return writable_add(p, l, buf, cwd);
}

/* The TMPDIR the children write: under `credfence harness` the harness's own
 * TMPDIR is its private directory, which no child may write; the children
 * get the user's TMPDIR back (shim/env.c), and that one is writable. */
static const char *children_tmpdir(const struct cf_options *o, char *const envp[])
{
	const char *t = cf_env_get(envp, "TMPDIR");
	const char *priv = o->harness_tmpdir;
	size_t n = priv ? strlen(priv) : 0;
	if (t && n && priv[0] == '/' && strncmp(t, priv, n) == 0 && (t[n] == '\0' || t[n] == '/'))
		return o->child_tmpdir;
	return t;
}

static int writable_locations(struct cf_policy *p, struct links *l, const struct cf_options *o,
			      char *const envp[], const char *cwd)
{
	static const char *const fixed[] = {"/tmp", "/var/tmp", "/dev/shm"};
	/* The workspace as given: its canonical form no longer shows the symlinks.
	 * For the current directory, the shell's $PWD when it names the same
	 * directory: `cd /tmp/proj` through a symlink a fenced program may have
	 * retargeted must show that symlink. */
	const char *ws = o->workspace ? o->workspace : logical_cwd(envp, cwd);
	int rc = p->workspace ? writable_add(p, l, ws, cwd) : 0;
	for (size_t i = 0; !rc && i < sizeof fixed / sizeof *fixed; i++)
		rc = writable_add(p, l, fixed[i], cwd);
	if (!rc)
		rc = writable_add(p, l, children_tmpdir(o, envp), cwd);
	const char *cargo = cf_env_get(envp, "CARGO_HOME");
	if (!rc)
		rc = cache_add(p, l, cf_env_get(envp, "XDG_CACHE_HOME"), true, "", ".cache", cwd);
	if (!rc)
		rc = cache_add(p, l, npm_cache_dir(envp), false, "", ".npm", cwd);
	if (!rc)
		rc = cache_add(p, l, cargo, false, "registry", ".cargo/registry", cwd);
	if (!rc)
		rc = cache_add(p, l, cargo, false, "git", ".cargo/git", cwd);
	for (size_t i = 0; !rc && i < o->writable.n; i++)
		rc = writable_add(p, l, o->writable.v[i], cwd);
	for (size_t i = 0; !rc && i < o->harness_state.n; i++)
		rc = writable_add(p, l, o->harness_state.v[i], cwd);
	return rc;
}

/* The sockets the user allowed: a path is taken canonical (the socket itself
 * need not exist yet), an abstract name as given. --ssh-agent adds the agent's
 * socket from $SSH_AUTH_SOCK. */
static int allowed_sockets(struct cf_policy *p, const struct cf_options *o, char *const envp[],
			   const char *cwd)
{
	const char *agent = o->ssh_agent > 0 ? cf_env_get(envp, "SSH_AUTH_SOCK") : NULL;
	size_t n = o->allow_sockets.n;
	for (size_t i = 0; i <= n; i++) {
		const char *s = i < n ? o->allow_sockets.v[i] : agent;
		char c[PATH_MAX];
		if (!s || !*s)
			continue;
		if (s[0] == '@') {
			if (cf_strv_add_unique(&p->allow_sockets, s))
				return -ENOMEM;
			continue;
		}
		int rc = cf_canon(s, cwd, c, sizeof c, NULL, NULL);
		if (rc == -ENOMEM || (!rc && cf_strv_add_unique(&p->allow_sockets, c)))
			return -ENOMEM;
	}
	return 0;
}

static const char *writable_holding(const struct cf_policy *p, const char *path)
{
	for (size_t i = 0; i < p->writable.n; i++)
		if (cf_path_within(path, p->writable.v[i]))
			return p->writable.v[i];
	return NULL;
}

/* A symlink that lies in a writable location can be retargeted by a fenced
 * program (mv the directory away, ln -s ~/.bashrc in its place), and the next
 * launch would resolve the location to wherever it points. A symlink outside
 * every writable location is the user's own and stays accepted. */
static void judge_links(struct cf_policy *p, const struct links *l)
{
	for (size_t i = 0; i + 1 < l->pairs.n; i += 2) {
		const char *in = writable_holding(p, l->pairs.v[i + 1]);
		if (in) {
			cf_policy_verdict(p, &(struct cf_why){.id = CF_WHY_WRITABLE_LINK,
							      .arg = {l->pairs.v[i], l->pairs.v[i + 1], in}});
			return;
		}
	}
}

/* The log is reopened by name at every launch. Its canonical path, when it
 * lies outside every writable location, is one that no fenced program can
 * change; inside one, a fenced program could swap the file or a directory on
 * the way for a symlink (to ~/.ssh/authorized_keys). */
static int log_location(struct cf_policy *p, const char *log, const char *cwd)
{
	struct links l = {0};
	char c[PATH_MAX];
	const char *in = NULL;
	char why[PATH_MAX * 4];
	int rc = canon_noting_links(&l, log, cwd, c, sizeof c);
	if (rc == -ENOMEM)
		goto out;
	if (rc) {
		snprintf(why, sizeof why, "the log %s can not be resolved (%s)", log, strerror(-rc));
		rc = 0;
		p->log_refused = strdup(why);
		goto out;
	}
	for (size_t i = 1; !in && i < l.pairs.n; i += 2)
		if ((in = writable_holding(p, l.pairs.v[i])))
			snprintf(why, sizeof why,
				 "the log %s is reached through symlink %s, which lies in writable "
				 "location %s",
				 log, l.pairs.v[i], in);
	if (!in && (in = writable_holding(p, c)))
		snprintf(why, sizeof why, "the log %s lies in writable location %s", c, in);
	if (in)
		p->log_refused = strdup(why);
	else
		p->log = strdup(c);
	if (!p->log && !p->log_refused)
		rc = -ENOMEM;
out:
	cf_strv_free(&l.pairs);
	return rc;
}

int cf_policy_outside_writable(const struct cf_policy *p, const char *path, const char *cwd,
			       char *out, size_t outsz, char *why, size_t whysz)
{
	struct links l = {0};
	const char *in = NULL;
	int rc = canon_noting_links(&l, path, cwd, out, outsz);
	for (size_t i = 1; !rc && !in && i < l.pairs.n; i += 2)
		if ((in = writable_holding(p, l.pairs.v[i])))
			snprintf(why, whysz, "%s is reached through symlink %s, which lies in writable "
				 "location %s", path, l.pairs.v[i], in);
	if (!rc && !in && (in = writable_holding(p, out)))
		snprintf(why, whysz, "%s lies in writable location %s", out, in);
	cf_strv_free(&l.pairs);
	return rc ? rc : in ? -EACCES : 0;
}

bool cf_policy_home_dotdir(const struct cf_policy *p, const char *path, char *dot, size_t dotsz)
{
	const char *homes[] = {p->home, p->account_home};
	for (size_t i = 0; i < 2; i++) {
		const char *h = homes[i];
		if (!h || !cf_path_within(path, h))
			continue;
		size_t n = strcmp(h, "/") == 0 ? 0 : strlen(h);
		if (path[n] != '/' || path[n + 1] != '.')
			continue; /* the home itself, or not a dot-entry of it */
		size_t end = n + 1 + strcspn(path + n + 1, "/");
		snprintf(dot, dotsz, "%.*s", (int)end, path);
		return true;
	}
	return false;
}

static void judge_overlap(struct cf_policy *p)
{
	for (size_t w = 0; w < p->writable.n; w++)
		for (size_t s = 0; s < p->n_denied; s++)
			if (cf_path_within(p->writable.v[w], p->denied[s].path) ||
			    cf_path_within(p->denied[s].path, p->writable.v[w])) {
				cf_policy_verdict(p, &(struct cf_why){.id = CF_WHY_OVERLAP,
								      .arg = {p->writable.v[w],
									      p->denied[s].path}});
				return;
			}
}

/* Where row R of the harness-files table lies: under HOME, or moved by its
 * variable (both are judged). false when there is no such place. */
static bool harness_file_at(const struct cf_harness_file *r, const char *home, char *const envp[],
			    bool moved, const char *cwd, char *out, size_t n)
{
	char buf[PATH_MAX * 2];
	const char *v = moved && r->env ? cf_env_get(envp, r->env) : NULL;
	int k;
	if (moved)
		k = v && v[0] == '/' ? snprintf(buf, sizeof buf, "%s/%s", v, r->leaf) : -1;
	else
		k = home ? snprintf(buf, sizeof buf, "%s/%s", home, r->rel) : -1;
	if (k < 0 || (size_t)k >= sizeof buf)
		return false;
	return cf_canon(buf, cwd, out, n, NULL, NULL) == 0;
}

/* A --harness-state directory becomes writable for every fenced program, so
 * it must hold no secret (the agents' own login tokens are secrets), lie in
 * none, and hold no file the free harness trusts nor lie in one: a fenced
 * program that rewrote it would act through the harness. */
static void judge_harness_state(struct cf_policy *p, const struct cf_options *o,
				char *const envp[], const char *cwd)
{
	const char *homes[] = {p->home, p->account_home};
	for (size_t i = 0; i < o->harness_state.n; i++) {
		char d[PATH_MAX], f[PATH_MAX];
		if (cf_canon(o->harness_state.v[i], cwd, d, sizeof d, NULL, NULL)) {
			cf_policy_verdict(p, &(struct cf_why){.id = CF_WHY_STATE_UNRESOLVED,
							      .arg = {o->harness_state.v[i]}});
			return;
		}
		for (size_t s = 0; s < p->n_denied; s++)
			if (cf_path_within(d, p->denied[s].path) || cf_path_within(p->denied[s].path, d)) {
				cf_policy_verdict(
					p, &(struct cf_why){.id = CF_WHY_STATE_SECRET,
							    .arg = {d,
								    cf_path_within(d, p->denied[s].path)
									    ? "lies in"
									    : "holds",
								    p->denied[s].path, p->denied[s].holds}});
				return;
			}
		for (size_t r = 0; r < cf_harness_file_count; r++)
			for (int at = 0; at < 3; at++) {
				const struct cf_harness_file *h = &cf_harness_files[r];
				if (!harness_file_at(h, at < 2 ? homes[at] : NULL, envp, at == 2, cwd, f,
						     sizeof f))
					continue;
				if (cf_path_within(d, f) || cf_path_within(f, d)) {
					const char *rel = !strcmp(d, f)		? "is"
							  : cf_path_within(d, f) ? "lies in"
										 : "holds";
					cf_policy_verdict(p, &(struct cf_why){.id = CF_WHY_STATE_TRUSTED,
									      .arg = {d, rel, f, h->harness,
										      h->holds}});
					return;
				}
			}
	}
}

const char *cf_policy_allowed_read(const struct cf_policy *p, const char *path)
{
	for (size_t i = 0; i < p->allow_read.n; i++)
		if (cf_path_within(path, p->allow_read.v[i]))
			return p->allow_read.v[i];
	return NULL;
}

static const struct cf_denied *denied_holding(const struct cf_policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_denied; i++)
		if (cf_path_within(path, p->denied[i].path))
			return &p->denied[i];
	return NULL;
}

/* Whether PATH's name form (its parent resolved, its last component kept, as
 * canonical_secret denies a name) is DENIED_PATH. */
static bool lexical_is(const char *path, const char *cwd, const char *denied_path)
{
	char lexical[PATH_MAX * 2], dir[PATH_MAX * 2], parent[PATH_MAX], name[PATH_MAX + 1];
	int k = path[0] == '/' ? snprintf(lexical, sizeof lexical, "%s", path)
			       : snprintf(lexical, sizeof lexical, "%s/%s", cwd, path);
	if (k < 0 || (size_t)k >= sizeof lexical)
		return false;
	size_t n = strlen(lexical);
	while (n > 1 && lexical[n - 1] == '/')
		lexical[--n] = '\0';
	const char *base = cf_path_base(lexical);
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return false;
	snprintf(dir, sizeof dir, "%.*s", (int)(base - lexical), lexical);
	if (cf_canon(dir, cwd, parent, sizeof parent, NULL, NULL))
		return false;
	snprintf(name, sizeof name, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "", base);
	return strcmp(name, denied_path) == 0;
}

static int allow_read_refuse(struct cf_policy *p, const char *fmt, const char *a, const char *b,
			     const char *c)
{
	char why[PATH_MAX * 4];
	snprintf(why, sizeof why, fmt, a, b, c);
	p->allow_read_refused = strdup(why);
	return p->allow_read_refused ? 0 : -ENOMEM;
}

#define ALLOW_READ_LABEL "--allow-read (CREDFENCE_ALLOW_READ)"

/* One --allow-read PATH, judged by where it points. A whole secret location
 * goes to ALLOW_ROWS (dropped from DENIED later), a path inside one to
 * ALLOW_READ. */
static int allow_read_one(struct cf_policy *p, const char *path, const char *cwd)
{
	struct links l = {0};
	char c[PATH_MAX];
	const char *in = NULL;
	int rc = canon_noting_links(&l, path, cwd, c, sizeof c);
	for (size_t i = 1; !rc && !in && i < l.pairs.n; i += 2)
		if ((in = writable_holding(p, l.pairs.v[i])))
			rc = allow_read_refuse(p,
					       ALLOW_READ_LABEL " '%s' is reached through symlink %s, "
					       "which lies in writable location %s, where a fenced "
					       "program could retarget it; name the file by its own path",
					       path, l.pairs.v[i], in);
	cf_strv_free(&l.pairs);
	if (rc == -ENOMEM || in)
		return rc;
	if (rc)
		return allow_read_refuse(p, ALLOW_READ_LABEL " '%s' can not be resolved (%s)%s", path,
					 strerror(-rc), "; give an existing path");
	const struct cf_denied *d = denied_holding(p, c);
	if (!d) {
		bool moved = strcmp(c, path) != 0;
		return allow_read_refuse(p,
					 ALLOW_READ_LABEL " '%s'%s%s lies in no secret location, so "
					 "fenced programs read it already; leave it out ('credfence "
					 "status' lists the secret locations)",
					 path, moved ? ", which resolves to " : "", moved ? c : "");
	}
	if (strcmp(d->path, c) == 0)
		return cf_strv_add_unique(&p->allow_rows, c);
	return cf_strv_add_unique(&p->allow_read, c);
}

/* Resolve every --allow-read, then lift the whole rows: a secret location
 * named whole leaves DENIED, and with it its name form (the symlink that led
 * to it) when that is denied too. A path inside a lifted row needs no entry
 * of its own. */
static int allow_reads(struct cf_policy *p, const struct cf_options *o, const char *cwd)
{
	int rc = 0;
	for (size_t i = 0; !rc && !p->allow_read_refused && i < o->allow_read.n; i++)
		rc = allow_read_one(p, o->allow_read.v[i], cwd);
	if (rc || p->allow_read_refused)
		return rc;
	size_t out = 0;
	for (size_t i = 0; i < p->n_denied; i++) {
		bool lifted = cf_strv_has(&p->allow_rows, p->denied[i].path);
		for (size_t k = 0; !lifted && k < o->allow_read.n; k++) {
			char name[PATH_MAX];
			if (cf_canon(o->allow_read.v[k], cwd, name, sizeof name, NULL, NULL) == 0 &&
			    cf_strv_has(&p->allow_rows, name))
				lifted = lexical_is(o->allow_read.v[k], cwd, p->denied[i].path);
		}
		if (lifted)
			free(p->denied[i].path);
		else
			p->denied[out++] = p->denied[i];
	}
	p->n_denied = out;
	out = 0;
	for (size_t i = 0; i < p->allow_read.n; i++) {
		if (denied_holding(p, p->allow_read.v[i]))
			p->allow_read.v[out++] = p->allow_read.v[i];
		else
			free(p->allow_read.v[i]);
	}
	p->allow_read.n = out;
	/* A path inside another allowed one is read through it; kept, it would
	 * make the outer one an ancestor whose other entries stay denied. */
	/* Sorted, a path comes before everything inside it: the kept ones are
	 * enough to look at (as drop_nested does). */
	cf_strv_sort(&p->allow_read);
	out = 0;
	for (size_t i = 0; i < p->allow_read.n; i++) {
		bool inner = false;
		for (size_t j = 0; j < out && !inner; j++)
			inner = cf_path_within(p->allow_read.v[i], p->allow_read.v[j]);
		if (inner)
			free(p->allow_read.v[i]);
		else
			p->allow_read.v[out++] = p->allow_read.v[i];
	}
	p->allow_read.n = out;
	return 0;
}

static int secret_locations(struct cf_policy *p, const struct cf_options *o, char *const envp[],
			    const char *cwd)
{
	struct candidates c = {0};
	size_t cap = 0;
	int rc = 0;
	if (p->home)
		rc = home_rows(&c, p->home);
	if (!rc && p->account_home)
		rc = home_rows(&c, p->account_home);
	if (!rc)
		rc = relocated_rows(&c, envp);
	for (size_t i = 0; !rc && i < o->deny.n; i++)
		rc = candidate(&c, o->deny.v[i], "added with --deny or CREDFENCE_DENY", "--deny");
	for (size_t i = 0; !rc && i < c.path.n; i++)
		rc = canonical_secret(p, &cap, c.path.v[i], c.holds[i], c.why[i], cwd);
	cf_strv_free(&c.path);
	free(c.holds);
	free(c.why);
	if (rc)
		return rc;
	qsort(p->denied, p->n_denied, sizeof *p->denied, cmp_denied);
	drop_nested(p);
	return 0;
}

int cf_policy_build(struct cf_policy *p, const struct cf_options *o, char *const envp[],
		    const char *cwd)
{
	int rc = 0;

	memset(p, 0, sizeof *p);
	p->mode = o->mode == CF_MODE_BEST_EFFORT ? CF_MODE_BEST_EFFORT : CF_MODE_REQUIRED;
	p->max_entries = o->max_entries > 0 ? (size_t)o->max_entries : CF_DEFAULT_MAX_ENTRIES;
	p->allow_ptys = o->allow_ptys > 0;

	const char *home = o->home ? o->home : cf_env_get(envp, "HOME");
	if (home && home[0] == '/')
		p->home = canon_dup(home, cwd);
	if (o->account_home && o->account_home[0] == '/') {
		char *acct = canon_dup(o->account_home, cwd);
		if (acct && (!p->home || strcmp(acct, p->home) != 0))
			p->account_home = acct;
		else
			free(acct);
	}
	p->workspace = canon_dup(o->workspace ? o->workspace : cwd, cwd);
	if (!p->home && !p->account_home)
		cf_policy_verdict(p, &(struct cf_why){.id = CF_WHY_HOME_EMPTY});
	else if ((rc = secret_locations(p, o, envp, cwd)))
		return rc;

	struct links l = {0};
	rc = writable_locations(p, &l, o, envp, cwd);
	if (!rc)
		rc = allowed_sockets(p, o, envp, cwd);
	/* After the writable locations: a symlink on the way lying in one is refused. */
	if (!rc && (p->home || p->account_home))
		rc = allow_reads(p, o, cwd);
	if (!rc && p->verdict == CF_VERDICT_APPLIED)
		judge_links(p, &l);
	cf_strv_free(&l.pairs);
	if (rc)
		return rc;
	/* Before the overlap: a harness state that holds a secret is told as such. */
	if (p->verdict == CF_VERDICT_APPLIED)
		judge_harness_state(p, o, envp, cwd);
	if (p->verdict == CF_VERDICT_APPLIED)
		judge_overlap(p);
	/* Judged even when the verdict is "not effective": the refusal is logged. */
	return o->log && *o->log ? log_location(p, o->log, cwd) : 0;
}

void cf_policy_free(struct cf_policy *p)
{
	for (size_t i = 0; i < p->n_denied; i++)
		free(p->denied[i].path);
	free(p->denied);
	free(p->home);
	free(p->account_home);
	free(p->workspace);
	free(p->log);
	free(p->log_refused);
	free(p->allow_read_refused);
	cf_strv_free(&p->allow_read);
	cf_strv_free(&p->allow_rows);
	cf_strv_free(&p->writable);
	cf_strv_free(&p->allow_sockets);
	cf_strv_free(&p->lookups);
	cf_strv_free(&p->resolved);
	memset(p, 0, sizeof *p);
}
