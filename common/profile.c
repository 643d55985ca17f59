#include "profile.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "paths.h"

#define DEV_PATH "/dev"

static bool under(const char *path, const char *dir)
{
	return cf_path_within(path, dir);
}

int cf_darwin_canon(const char *path, char *out, size_t outsz)
{
	static const char *const linked[] = {"/tmp", "/var", "/etc"};
	const char *prefix = "";
	for (size_t i = 0; i < sizeof linked / sizeof *linked; i++)
		if (under(path, linked[i]))
			prefix = "/private";
	int n = snprintf(out, outsz, "%s%s", prefix, path);
	return n < 0 || (size_t)n >= outsz ? -ENAMETOOLONG : 0;
}

int cf_darwin_firmlink(const char *path, char *out, size_t outsz)
{
	size_t dl = strlen(CF_DARWIN_DATA_VOLUME);
	if (under(path, CF_DARWIN_DATA_VOLUME)) {
		if (!path[dl])
			return 0;
		return cf_darwin_canon(path + dl, out, outsz) ? -ENAMETOOLONG : 1;
	}
	if (!strcmp(path, "/") || under(path, "/System") || under(path, DEV_PATH) ||
	    under(path, "/private/var/vm"))
		return 0;
	int n = snprintf(out, outsz, "%s%s", CF_DARWIN_DATA_VOLUME, path);
	return n < 0 || (size_t)n >= outsz ? -ENAMETOOLONG : 1;
}

/* The profile text, grown as it is written; the first failure sticks. */
struct text {
	char *p;
	size_t len, cap;
	int err;
};

__attribute__((format(printf, 2, 3))) static void say(struct text *t, const char *fmt, ...)
{
	va_list ap;
	if (t->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->err = -EINVAL;
			return;
		}
		if (t->p && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = t->cap ? t->cap : 1024;
		while (cap <= t->len + (size_t)n)
			cap *= 2;
		char *p = realloc(t->p, cap);
		if (!p) {
			t->err = -ENOMEM;
			return;
		}
		t->p = p;
		t->cap = cap;
	}
}

/* One class of locations (one key letter): the forms given keys, deduplicated. */
struct group {
	const char *key; /* "W", "S", ... */
	struct cf_strv values;
};

struct build {
	struct cf_profile *pf;
	struct text t;
	int err;
};

static void fail(struct build *b, int err)
{
	if (!b->err)
		b->err = err;
}

static void group_add_one(struct build *b, struct group *g, const char *value)
{
	if (!b->err && !cf_strv_has(&g->values, value) && cf_strv_add(&g->values, value))
		fail(b, -ENOMEM);
}

/* Both macOS names of the location PATH. */
static void group_add(struct build *b, struct group *g, const char *path)
{
	char canon[PATH_MAX], alt[PATH_MAX + sizeof CF_DARWIN_DATA_VOLUME];
	if (!path || path[0] != '/')
		return;
	if (cf_darwin_canon(path, canon, sizeof canon)) {
		fail(b, -ENAMETOOLONG);
		return;
	}
	group_add_one(b, g, canon);
	int rc = cf_darwin_firmlink(canon, alt, sizeof alt);
	if (rc < 0)
		fail(b, rc);
	else if (rc == 1)
		group_add_one(b, g, alt);
}

/* Keys and values go into the storage now; the array is made at the end. */
static void params_add(struct build *b, const char *key, const char *value)
{
	if (!b->err && (cf_strv_add(&b->pf->strings, key) || cf_strv_add(&b->pf->strings, value)))
		fail(b, -ENOMEM);
}

static void group_params(struct build *b, const struct group *g)
{
	for (size_t i = 0; i < g->values.n; i++) {
		char key[32];
		snprintf(key, sizeof key, "%s%zu", g->key, i);
		params_add(b, key, g->values.v[i]);
	}
}

/* Each ancestor of SECRET up to its home (inclusive); for a secret outside
 * every home, up to but not including "/". */
static void ancestors(struct build *b, struct group *g, const struct cf_policy *p,
		      const char *secret)
{
	const char *home = NULL;
	if (p->home && under(secret, p->home) && strcmp(secret, p->home))
		home = p->home;
	else if (p->account_home && under(secret, p->account_home) &&
		 strcmp(secret, p->account_home))
		home = p->account_home;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", secret);
	for (;;) {
		char parent[PATH_MAX];
		cf_path_parent(dir, parent, sizeof parent);
		if (!strcmp(parent, "/") || !strcmp(parent, dir))
			return;
		group_add(b, g, parent);
		if (home && !strcmp(parent, home))
			return;
		memcpy(dir, parent, sizeof dir);
	}
}

static void write_rules(struct build *b, const struct group *w)
{
	say(&b->t, "(deny file-write*)\n");
	for (size_t i = 0; i < w->values.n; i++)
		say(&b->t, "(allow file-write* (subpath (param \"%s%zu\")))\n", w->key, i);
	/* Like the Linux /dev rule: use the nodes there, create nothing. */
	say(&b->t, "(allow file-write-data (subpath (param \"DEV\")))\n");
}

static void name_rule(struct build *b, const char *verb, enum cf_name_kind kind,
		      const char *key, size_t i, size_t depth)
{
	int n = cf_name_regex(kind, depth, NULL, 0);
	char *re = n < 0 ? NULL : malloc((size_t)n + 1);
	if (n < 0 || !re) {
		fail(b, n < 0 ? n : -ENOMEM);
		return;
	}
	cf_name_regex(kind, depth, re, (size_t)n + 1);
	if (strchr(re, '"') || strchr(re, '\\'))
		fail(b, -EINVAL); /* it could end the #"..." literal */
	else
		say(&b->t, "(%s file-read* (require-all (subpath (param \"%s%zu\")) (regex #\"%s\")))\n",
		    verb, key, i, re);
	free(re);
}

/* Seatbelt's regex sees the whole path, and the workspace path must not enter
 * the text: the subpath filter checks that the path lies in the workspace, and
 * the regex, which skips exactly as many components as the workspace has,
 * looks only at what lies below it. */
static void workspace_rules(struct build *b, const struct group *ws)
{
	for (size_t i = 0; i < ws->values.n; i++) {
		size_t depth = cf_path_depth(ws->values.v[i]);
		name_rule(b, "deny", CF_NAME_FILE, ws->key, i, depth);
		name_rule(b, "allow", CF_NAME_KEEP, ws->key, i, depth);
		name_rule(b, "deny", CF_NAME_DIR, ws->key, i, depth);
	}
}

static void secret_rules(struct build *b, const struct group *s, const struct group *r,
			 const struct group *u)
{
	for (size_t i = 0; i < s->values.n; i++)
		say(&b->t, "(deny file-read* (subpath (param \"%s%zu\")))\n", s->key, i);
	/* --allow-read inside a secret: after its deny, so that it wins there
	 * alone. subpath: a directory allowed is allowed whole, as on Linux. */
	for (size_t i = 0; i < r->values.n; i++)
		say(&b->t, "(allow file-read* (subpath (param \"%s%zu\")))\n", r->key, i);
	/* Neither the secret nor a way to it may move to a readable name. */
	for (size_t i = 0; i < s->values.n; i++)
		say(&b->t, "(deny file-write-unlink file-link (subpath (param \"%s%zu\")))\n", s->key,
		    i);
	for (size_t i = 0; i < u->values.n; i++)
		say(&b->t, "(deny file-write-unlink (literal (param \"%s%zu\")))\n", u->key, i);
}

static int finish_params(struct cf_profile *pf)
{
	pf->n_params = pf->strings.n / 2;
	pf->params = calloc(pf->strings.n + 1, sizeof *pf->params);
	if (!pf->params)
		return -ENOMEM;
	for (size_t i = 0; i < pf->strings.n; i++)
		pf->params[i] = pf->strings.v[i];
	return 0;
}

int cf_profile_build(struct cf_profile *pf, const struct cf_policy *p)
{
	struct build b = {pf, {0}, 0};
	struct group w = {"W", {0}}, ws = {"WS", {0}}, s = {"S", {0}}, u = {"U", {0}};
	struct group r = {"R", {0}};

	memset(pf, 0, sizeof *pf);
	for (size_t i = 0; i < p->writable.n; i++)
		group_add(&b, &w, p->writable.v[i]);
	group_add(&b, &ws, p->workspace);
	for (size_t i = 0; i < p->n_denied; i++)
		group_add(&b, &s, p->denied[i].path);
	for (size_t i = 0; i < p->allow_read.n; i++)
		group_add(&b, &r, p->allow_read.v[i]);
	for (size_t i = 0; i < p->n_denied; i++)
		ancestors(&b, &u, p, p->denied[i].path);
	group_add(&b, &u, p->home);
	group_add(&b, &u, p->account_home);

	group_params(&b, &w);
	params_add(&b, "DEV", DEV_PATH);
	group_params(&b, &ws);
	group_params(&b, &s);
	group_params(&b, &r);
	group_params(&b, &u);

	say(&b.t, "(version 1)\n(allow default)\n");
	write_rules(&b, &w);
	workspace_rules(&b, &ws);
	secret_rules(&b, &s, &r, &u);

	cf_strv_free(&w.values);
	cf_strv_free(&ws.values);
	cf_strv_free(&s.values);
	cf_strv_free(&r.values);
	cf_strv_free(&u.values);
	pf->text = b.t.p;
	int rc = b.err ? b.err : b.t.err;
	if (!rc)
		rc = finish_params(pf);
	if (rc)
		cf_profile_free(pf);
	return rc;
}

void cf_profile_free(struct cf_profile *pf)
{
	free(pf->text);
	free(pf->params);
	cf_strv_free(&pf->strings);
	memset(pf, 0, sizeof *pf);
}

const char *cf_profile_param(const struct cf_profile *pf, const char *key)
{
	for (size_t i = 0; pf->params && pf->params[i]; i += 2)
		if (!strcmp(pf->params[i], key))
			return pf->params[i + 1];
	return NULL;
}
