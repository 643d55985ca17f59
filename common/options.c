#include "options.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol.h"
#include "secret_env.h"
#include "vars.h"

void cf_options_init(struct cf_options *o)
{
	memset(o, 0, sizeof *o);
	o->mode = -1;
	o->allow_ptys = -1;
	o->quiet_denials = -1;
	o->ssh_agent = -1;
	o->static_harness = -1;
}

void cf_options_free(struct cf_options *o)
{
	cf_strv_free(&o->writable);
	cf_strv_free(&o->deny);
	cf_strv_free(&o->allow_sockets);
	cf_strv_free(&o->harness_may_read);
	cf_strv_free(&o->harness_programs);
	cf_strv_free(&o->harness_state);
	cf_strv_free(&o->deny_env);
	cf_strv_free(&o->keep_env);
	cf_strv_free(&o->allow_write_protected);
	cf_strv_free(&o->settings);
}

void cf_options_env_rules(const struct cf_options *o, struct cf_env_rules *r)
{
	r->deny = o->deny_env.v;
	r->n_deny = o->deny_env.n;
	r->keep = o->keep_env.v;
	r->n_keep = o->keep_env.n;
}

const char *cf_env_get(char *const envp[], const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

const char *cf_account_home(void)
{
	static char acct[4096];
	struct passwd pw, *res = NULL;
	char buf[4096];
	if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) != 0 || !res || !res->pw_dir)
		return NULL;
	snprintf(acct, sizeof acct, "%s", res->pw_dir);
	return acct;
}

char *cf_twin_list_join(const struct cf_strv *v)
{
	size_t len = 1;
	for (size_t i = 0; i < v->n; i++)
		len += 2 * strlen(v->v[i]) + 1;
	char *s = calloc(1, len), *w = s;
	if (!s)
		return NULL;
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			*w++ = ':';
		for (const char *p = v->v[i]; *p; p++) {
			if (*p == ':' || *p == '\\')
				*w++ = '\\';
			*w++ = *p;
		}
	}
	*w = '\0';
	return s;
}

/* A twin's colon list (CREDFENCE_DENY, CREDFENCE_WRITABLE): backslash-colon
 * is a colon inside a path and two backslashes one backslash; any other
 * backslash stays as it is. Empty parts are skipped. */
static int add_twin_list(struct cf_strv *s, const char *list)
{
	if (!list)
		return 0;
	char *part = malloc(strlen(list) + 1);
	if (!part)
		return -ENOMEM;
	int rc = 0;
	for (const char *p = list; !rc && *p;) {
		size_t n = 0;
		for (; *p && *p != ':'; p++) {
			if (p[0] == '\\' && (p[1] == ':' || p[1] == '\\'))
				p++;
			part[n++] = *p;
		}
		part[n] = '\0';
		if (n)
			rc = cf_strv_add(s, part);
		if (*p == ':')
			p++;
	}
	free(part);
	return rc;
}

/* A switch's twin NAME: "1" on, "0" or empty off, unset leaves *V as it is
 * (-1, or the option's value). -EINVAL with *BAD = NAME for anything else. */
static int switch_twin(char *const envp[], const char *name, int *v, const char **bad)
{
	const char *s = *v < 0 ? cf_env_get(envp, name) : NULL;
	if (!s)
		return 0;
	if (strcmp(s, "1") == 0 || strcmp(s, "0") == 0 || !*s) {
		*v = s[0] == '1';
		return 0;
	}
	*bad = name;
	return -EINVAL;
}

static int mode_twin(char *const envp[], const char *name, int *mode, const char **bad)
{
	const char *v = *mode < 0 ? cf_env_get(envp, name) : NULL;
	if (!v || !*v)
		return 0;
	if (strcmp(v, CF_MODE_WORD_REQUIRED) == 0)
		*mode = CF_MODE_REQUIRED;
	else if (strcmp(v, CF_MODE_WORD_BEST_EFFORT) == 0)
		*mode = CF_MODE_BEST_EFFORT;
	else {
		*bad = name;
		return -EINVAL;
	}
	return 0;
}

static int protect_twin(char *const envp[], const char *name, int *v, const char **bad)
{
	const char *s = cf_env_get(envp, name);
	if (!s || !*s)
		return 0;
	int w = cf_write_protect_parse(s);
	if (w < 0) {
		*bad = name;
		return -EINVAL;
	}
	*v = w;
	return 0;
}

int cf_write_protect_parse(const char *word)
{
	if (strcmp(word, CF_WRITE_PROTECT_WORD_WARN) == 0)
		return CF_WRITE_PROTECT_WARN;
	if (strcmp(word, CF_WRITE_PROTECT_WORD_REQUIRE) == 0)
		return CF_WRITE_PROTECT_REQUIRE;
	return -EINVAL;
}

static int number_twin(char *const envp[], const char *name, long *n, const char **bad)
{
	const char *v = !*n ? cf_env_get(envp, name) : NULL;
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	long k = strtol(v, &end, 10);
	if (*v < '0' || *v > '9' || *end || k <= 0 || errno == ERANGE) {
		*bad = name;
		return -EINVAL;
	}
	*n = k;
	return 0;
}

/* Row R's twin into its slot of O, by its kind; an option already given wins. */
static int twin(struct cf_options *o, const struct cf_var_row *r, char *const envp[],
		const char **bad)
{
	char *slot = (char *)o + r->slot;
	bool from_cli = r->kind == CF_KIND_PATHS || r->kind == CF_KIND_LIST ||
					r->kind == CF_KIND_PROTECT
				? *(bool *)((char *)o + r->from_cli)
				: false;
	switch (r->kind) {
	case CF_KIND_PATH:
	case CF_KIND_ADDRESS:
	case CF_KIND_MARKER:
		if (!*(const char **)slot)
			*(const char **)slot = cf_env_get(envp, r->name);
		return 0;
	case CF_KIND_PATHS:
		return !from_cli && add_twin_list((struct cf_strv *)slot, cf_env_get(envp, r->name))
			       ? -ENOMEM
			       : 0;
	case CF_KIND_LIST:
		return !from_cli && cf_strv_add_list((struct cf_strv *)slot, cf_env_get(envp, r->name))
			       ? -ENOMEM
			       : 0;
	case CF_KIND_SWITCH:
		return switch_twin(envp, r->name, (int *)slot, bad);
	case CF_KIND_MODE:
		return mode_twin(envp, r->name, (int *)slot, bad);
	case CF_KIND_PROTECT:
		return from_cli ? 0 : protect_twin(envp, r->name, (int *)slot, bad);
	case CF_KIND_NUMBER:
		return number_twin(envp, r->name, (long *)slot, bad);
	}
	return 0;
}

int cf_options_from_env(struct cf_options *o, char *const envp[], const char **bad)
{
	for (size_t i = 0; i < CF_VAR_COUNT; i++) {
		int rc = cf_vars[i].parsed ? twin(o, &cf_vars[i], envp, bad) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int dir_check(const char *v, bool absolute, enum cf_var var, char *why, size_t n)
{
	struct stat st;
	char name[96];
	if (!v)
		return 0;
	cf_var_label(var, name, sizeof name);
	if (!*v)
		snprintf(why, n, "%s is empty; give a directory or leave it unset", name);
	else if (strlen(v) >= PATH_MAX)
		snprintf(why, n, "%s is longer than PATH_MAX (ENAMETOOLONG)", name);
	else if (absolute && v[0] != '/')
		snprintf(why, n, "%s '%s' is relative; give an absolute path", name, v);
	else if (stat(v, &st) != 0)
		snprintf(why, n, "%s '%s' does not exist (%s); give an existing directory", name, v,
			 strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		snprintf(why, n, "%s '%s' is not a directory; give a directory", name, v);
	else
		return 0;
	return -EINVAL;
}

/* MUST_EXIST: a missing entry is refused (a writable location that does not
 * exist gets no rule, yet would be listed as writable). A missing secret is
 * denied by name, so that creating it later is denied too. */
static int list_check(const struct cf_strv *l, enum cf_var var, bool must_exist, char *why,
		      size_t n)
{
	struct stat st;
	char name[96];
	cf_var_label(var, name, sizeof name);
	for (size_t i = 0; i < l->n; i++) {
		if (!*l->v[i]) {
			snprintf(why, n, "%s has an empty entry; give a path", name);
			return -EINVAL;
		}
		if (strlen(l->v[i]) >= PATH_MAX) {
			snprintf(why, n, "%s has an entry longer than PATH_MAX (ENAMETOOLONG)", name);
			return -EINVAL;
		}
		if (must_exist && stat(l->v[i], &st) != 0) {
			snprintf(why, n, "%s '%s' does not exist (%s); create it first, or leave it out",
				 name, l->v[i], strerror(errno));
			return -EINVAL;
		}
	}
	return 0;
}

/* Each name, a --deny-env rule (a pattern allowed) or a --keep-env one. */
static int rules_check(const struct cf_strv *l, enum cf_var var, char *why, size_t n)
{
	bool deny = var == CF_VAR_DENY_ENV;
	char name[96];
	for (size_t i = 0; i < l->n; i++) {
		if (cf_env_rule_valid(l->v[i], deny))
			continue;
		cf_var_label(var, name, sizeof name);
		snprintf(why, n, "%s '%.256s' is not a variable name%s", name, l->v[i],
			 deny ? " or pattern; give letters, digits, '_' and '*' (API_*)"
			      : "; give the whole name, letters, digits and '_' (no pattern: "
				"each secret passed is named)");
		return -EINVAL;
	}
	return 0;
}

int cf_options_check(const struct cf_options *o, char *why, size_t n)
{
	char name[96];
	int rc = dir_check(o->home, true, CF_VAR_HOME, why, n);
	if (!rc)
		rc = dir_check(o->workspace, false, CF_VAR_WORKSPACE, why, n);
	if (!rc)
		rc = list_check(&o->deny, CF_VAR_DENY, false, why, n);
	if (!rc)
		rc = list_check(&o->writable, CF_VAR_WRITABLE, true, why, n);
	if (!rc)
		rc = list_check(&o->allow_sockets, CF_VAR_ALLOW_SOCKET, false, why, n);
	if (!rc)
		rc = list_check(&o->harness_may_read, CF_VAR_HARNESS_MAY_READ, false, why, n);
	if (!rc)
		rc = list_check(&o->harness_state, CF_VAR_HARNESS_STATE, true, why, n);
	for (size_t i = 0; !rc && i < o->allow_sockets.n; i++)
		if (strcmp(o->allow_sockets.v[i], "@") == 0) {
			snprintf(why, n, "%s has '@' without a name; give @NAME for an abstract socket",
				 cf_var_label(CF_VAR_ALLOW_SOCKET, name, sizeof name));
			rc = -EINVAL;
		}
	if (!rc)
		rc = list_check(&o->allow_write_protected, CF_VAR_ALLOW_WRITE_PROTECTED, false, why,
				n);
	if (!rc)
		rc = list_check(&o->settings, CF_VAR_SETTINGS, false, why, n);
	if (!rc && o->config && !*o->config) {
		snprintf(why, n, "%s is empty; give a file or leave it unset",
			 cf_var_label(CF_VAR_CONFIG, name, sizeof name));
		rc = -EINVAL;
	}
	if (!rc)
		rc = list_check(&o->harness_programs, CF_VAR_HARNESS_PROGRAM, false, why, n);
	if (!rc)
		rc = rules_check(&o->deny_env, CF_VAR_DENY_ENV, why, n);
	if (!rc)
		rc = rules_check(&o->keep_env, CF_VAR_KEEP_ENV, why, n);
	if (!rc && o->log && !*o->log) {
		snprintf(why, n, "%s is empty; give a file or leave it unset",
			 cf_var_label(CF_VAR_LOG, name, sizeof name));
		rc = -EINVAL;
	}
	return rc;
}
