/* Codex's shell_environment_policy, judged from its TOML layers (codex_env.h). */
#include "codex_env.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"

#define POLICY "shell_environment_policy"

void cf_codex_env_init(struct cf_codex_env *e)
{
	memset(e, 0, sizeof *e);
	e->inherit = CF_CODEX_ALL;
	e->default_excludes = true;
}

void cf_codex_env_free(struct cf_codex_env *e)
{
	cf_strv_free(&e->exclude);
	cf_strv_free(&e->include_only);
	cf_strv_free(&e->set);
}

bool cf_codex_glob(const char *p, const char *s)
{
	const char *star = NULL, *back = NULL;
	while (*s) {
		if (*p == '*') {
			star = ++p;
			back = s;
		} else if (*p && (*p == '?' || tolower((unsigned char)*p) == tolower((unsigned char)*s))) {
			p++;
			s++;
		} else if (star) {
			p = star;
			s = ++back;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

struct layer {
	struct cf_codex_env *e;
	const char *from;
	struct cf_strv *list; /* the list an array fills */
};

static int cant(struct layer *l, const char *const *keys, size_t n, const char *what)
{
	char k[256] = "";
	for (size_t i = 0; i < n; i++) {
		size_t u = strlen(k);
		snprintf(k + u, sizeof k - u, "%s%s", i ? "." : "", keys[i]);
	}
	snprintf(l->e->cant, sizeof l->e->cant, "%s: %s %s", l->from, k, what);
	return -EINVAL;
}

static int set_entry(struct cf_codex_env *e, const char *name, const char *val)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < e->set.n; i++)
		if (strncmp(e->set.v[i], name, n) == 0 && e->set.v[i][n] == '=') {
			free(e->set.v[i]);
			memmove(&e->set.v[i], &e->set.v[i + 1], (e->set.n - i - 1) * sizeof *e->set.v);
			e->set.n--;
			break;
		}
	char *kv = malloc(n + strlen(val) + 2);
	if (!kv)
		return -ENOMEM;
	sprintf(kv, "%s=%s", name, val);
	int rc = cf_strv_add(&e->set, kv);
	free(kv);
	return rc;
}

static int on_value(void *ctx, const char *const *keys, size_t n, enum cf_toml_type t,
		    const char *str, bool in_array)
{
	struct layer *l = ctx;
	struct cf_codex_env *e = l->e;
	for (size_t i = 1; i < n; i++) /* a profile's own policy, say: not followed */
		if (strcmp(keys[i], POLICY) == 0)
			return cant(l, keys, n, "is a shell_environment_policy credfence does not judge");
	if (strcmp(keys[0], POLICY) != 0)
		return 0;
	const char *k = n > 1 ? keys[1] : "";
	if (n == 2 && !strcmp(k, "inherit") && t == CF_TOML_STRING && !in_array) {
		if (!strcmp(str, "all"))
			e->inherit = CF_CODEX_ALL;
		else if (!strcmp(str, "core"))
			e->inherit = CF_CODEX_CORE;
		else if (!strcmp(str, "none"))
			e->inherit = CF_CODEX_NONE;
		else
			return cant(l, keys, n, "is not \"all\", \"core\" nor \"none\"");
		snprintf(e->inherit_from, sizeof e->inherit_from, "%s", l->from);
		return 0;
	}
	if (n == 2 && (!strcmp(k, "ignore_default_excludes") || !strcmp(k, "experimental_use_profile")) &&
	    t == CF_TOML_BOOL && !in_array) {
		if (k[0] == 'i')
			e->default_excludes = strcmp(str, "true") != 0;
		return 0;
	}
	if (n == 2 && (!strcmp(k, "exclude") || !strcmp(k, "include_only"))) {
		struct cf_strv *v = k[0] == 'e' ? &e->exclude : &e->include_only;
		if (t == CF_TOML_ARRAY && !in_array) { /* this layer's list replaces the last */
			cf_strv_free(v);
			l->list = v;
			return 0;
		}
		if (t == CF_TOML_STRING && in_array && l->list == v)
			return cf_strv_add(v, str);
		return cant(l, keys, n, "is not an array of strings");
	}
	if (n == 3 && !strcmp(k, "set") && t == CF_TOML_STRING && !in_array) {
		snprintf(e->set_from, sizeof e->set_from, "%s", l->from);
		return set_entry(e, keys[2], str);
	}
	return cant(l, keys, n, "is a key or value credfence does not judge");
}

int cf_codex_env_layer(struct cf_codex_env *e, const char *text, size_t len, const char *from)
{
	struct layer l = {e, from, NULL};
	size_t line = 0;
	int rc = cf_toml_read(text, len, on_value, &l, &line);
	if (rc == -EINVAL && !e->cant[0])
		snprintf(e->cant, sizeof e->cant, "%s: line %zu is TOML that credfence's reader does not "
			 "follow", from, line);
	return rc;
}

static int ignore(void *ctx, const char *const *keys, size_t n, enum cf_toml_type t,
		  const char *str, bool in_array)
{
	(void)ctx, (void)keys, (void)n, (void)t, (void)str, (void)in_array;
	return 0;
}

int cf_codex_env_override(struct cf_codex_env *e, const char *kv)
{
	const char *eq = strchr(kv, '=');
	if (!eq)
		return 0;
	const char *k = kv, *ke = eq, *v = eq + 1;
	while (k < ke && isspace((unsigned char)*k))
		k++;
	while (ke > k && isspace((unsigned char)ke[-1]))
		ke--;
	size_t kn = (size_t)(ke - k);
	const char *hit = strstr(k, POLICY);
	if (!hit || hit + sizeof POLICY - 1 > ke)
		return 0;
	size_t vn = strlen(v);
	char *doc = malloc(kn + 2 * vn + 16);
	if (!doc)
		return -ENOMEM;
	/* VALUE as TOML when it is a value; else Codex takes it as a string. */
	int w = sprintf(doc, "x = %s\n", v);
	bool toml = cf_toml_read(doc, (size_t)w, ignore, NULL, NULL) == 0;
	char *q = doc + sprintf(doc, "%.*s = ", (int)kn, k);
	if (toml) {
		q += sprintf(q, "%s", v);
	} else {
		*q++ = '"';
		for (const char *s = v; *s; s++) {
			if (*s == '"' || *s == '\\')
				*q++ = '\\';
			*q++ = (unsigned char)*s < 0x20 ? ' ' : *s;
		}
		*q++ = '"';
	}
	*q++ = '\n';
	*q = '\0';
	int rc = cf_codex_env_layer(e, doc, (size_t)(q - doc), "-c");
	free(doc);
	return rc;
}

static bool core(const char *name)
{
	static const char *const names[] = {"HOME", "LOGNAME", "PATH", "SHELL", "USER",
					    "USERNAME", "TMPDIR", "TEMP", "TMP"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static bool any(const struct cf_strv *v, const char *name)
{
	for (size_t i = 0; i < v->n; i++)
		if (cf_codex_glob(v->v[i], name))
			return true;
	return false;
}

const char *cf_codex_env_value(const struct cf_codex_env *e, const char *name, const char *val,
			       const char **why)
{
	const char *w = NULL;
	if (e->inherit == CF_CODEX_NONE || (e->inherit == CF_CODEX_CORE && !core(name)))
		val = NULL, w = "inherit";
	static const char *const defaults[] = {"*KEY*", "*SECRET*", "*TOKEN*"};
	for (size_t i = 0; val && e->default_excludes && i < 3; i++)
		if (cf_codex_glob(defaults[i], name))
			val = NULL, w = "default";
	if (val && any(&e->exclude, name))
		val = NULL, w = "exclude";
	size_t n = strlen(name);
	for (size_t i = 0; i < e->set.n; i++)
		if (strncmp(e->set.v[i], name, n) == 0 && e->set.v[i][n] == '=')
			val = e->set.v[i] + n + 1;
	if (val && e->include_only.n && !any(&e->include_only, name))
		val = NULL, w = "include_only";
	if (why)
		*why = val ? NULL : w;
	return val;
}
