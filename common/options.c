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

void cf_options_init(struct cf_options *o)
{
	memset(o, 0, sizeof *o);
	o->mode = -1;
	o->allow_ptys = -1;
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

/* --harness-state's twin, and the private TMPDIR `credfence harness` gave
 * the harness (never the user's to set). */
static int harness_state_from_env(struct cf_options *o, char *const envp[])
{
	if (!o->harness_tmpdir)
		o->harness_tmpdir = cf_env_get(envp, "CREDFENCE_HARNESS_TMPDIR");
	if (!o->child_tmpdir)
		o->child_tmpdir = cf_env_get(envp, "CREDFENCE_CHILD_TMPDIR");
	if (!o->harness_state_from_cli &&
	    add_twin_list(&o->harness_state, cf_env_get(envp, "CREDFENCE_HARNESS_STATE")))
		return -ENOMEM;
	return 0;
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

int cf_options_from_env(struct cf_options *o, char *const envp[], const char **bad)
{
	const char *v;
	if (!o->home)
		o->home = cf_env_get(envp, "CREDFENCE_HOME");
	if (!o->workspace)
		o->workspace = cf_env_get(envp, "CREDFENCE_WORKSPACE");
	if (!o->log)
		o->log = cf_env_get(envp, "CREDFENCE_LOG");
	if (!o->writable_from_cli && add_twin_list(&o->writable, cf_env_get(envp, "CREDFENCE_WRITABLE")))
		return -ENOMEM;
	if (!o->deny_from_cli && add_twin_list(&o->deny, cf_env_get(envp, "CREDFENCE_DENY")))
		return -ENOMEM;
	if (o->mode < 0 && (v = cf_env_get(envp, "CREDFENCE_MODE")) && *v) {
		if (strcmp(v, CF_MODE_WORD_REQUIRED) == 0)
			o->mode = CF_MODE_REQUIRED;
		else if (strcmp(v, CF_MODE_WORD_BEST_EFFORT) == 0)
			o->mode = CF_MODE_BEST_EFFORT;
		else {
			*bad = "CREDFENCE_MODE";
			return -EINVAL;
		}
	}
	if (switch_twin(envp, "CREDFENCE_ALLOW_PTYS", &o->allow_ptys, bad))
		return -EINVAL;
	if (!o->allow_sockets_from_cli &&
	    cf_strv_add_list(&o->allow_sockets, cf_env_get(envp, "CREDFENCE_ALLOW_SOCKET")))
		return -ENOMEM;
	if (switch_twin(envp, "CREDFENCE_SSH_AGENT", &o->ssh_agent, bad))
		return -EINVAL;
	if (!o->harness_may_read_from_cli &&
	    add_twin_list(&o->harness_may_read, cf_env_get(envp, "CREDFENCE_HARNESS_MAY_READ")))
		return -ENOMEM;
	if (!o->harness_programs_from_cli &&
	    add_twin_list(&o->harness_programs, cf_env_get(envp, "CREDFENCE_HARNESS_PROGRAM")))
		return -ENOMEM;
	if (switch_twin(envp, "CREDFENCE_STATIC_HARNESS", &o->static_harness, bad))
		return -EINVAL;
	if (!o->deny_env_from_cli &&
	    cf_strv_add_list(&o->deny_env, cf_env_get(envp, "CREDFENCE_DENY_ENV")))
		return -ENOMEM;
	if (!o->keep_env_from_cli &&
	    cf_strv_add_list(&o->keep_env, cf_env_get(envp, "CREDFENCE_KEEP_ENV")))
		return -ENOMEM;
	if (!o->supervisor)
		o->supervisor = cf_env_get(envp, "CREDFENCE_SUPERVISOR");
	if (harness_state_from_env(o, envp))
		return -ENOMEM;
	if (!o->max_entries && (v = cf_env_get(envp, "CREDFENCE_MAX_ENTRIES")) && *v) {
		char *end;
		errno = 0;
		long n = strtol(v, &end, 10);
		if (*v < '0' || *v > '9' || *end || n <= 0 || errno == ERANGE) {
			*bad = "CREDFENCE_MAX_ENTRIES";
			return -EINVAL;
		}
		o->max_entries = n;
	}
	return 0;
}

static int dir_check(const char *v, bool absolute, const char *name, char *why, size_t n)
{
	struct stat st;
	if (!v)
		return 0;
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
static int list_check(const struct cf_strv *l, const char *name, bool must_exist, char *why,
		      size_t n)
{
	struct stat st;
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

int cf_options_check(const struct cf_options *o, char *why, size_t n)
{
	int rc = dir_check(o->home, true, "--home (CREDFENCE_HOME)", why, n);
	if (!rc)
		rc = dir_check(o->workspace, false, "--workspace (CREDFENCE_WORKSPACE)", why, n);
	if (!rc)
		rc = list_check(&o->deny, "--deny (CREDFENCE_DENY)", false, why, n);
	if (!rc)
		rc = list_check(&o->writable, "--writable (CREDFENCE_WRITABLE)", true, why, n);
	if (!rc)
		rc = list_check(&o->allow_sockets, "--allow-socket (CREDFENCE_ALLOW_SOCKET)", false, why, n);
	if (!rc)
		rc = list_check(&o->harness_may_read, "--harness-may-read (CREDFENCE_HARNESS_MAY_READ)",
				false, why, n);
	if (!rc)
		rc = list_check(&o->harness_state, "--harness-state (CREDFENCE_HARNESS_STATE)", true,
				why, n);
	for (size_t i = 0; !rc && i < o->allow_sockets.n; i++)
		if (strcmp(o->allow_sockets.v[i], "@") == 0) {
			snprintf(why, n, "--allow-socket (CREDFENCE_ALLOW_SOCKET) has '@' without a "
					 "name; give @NAME for an abstract socket");
			rc = -EINVAL;
		}
	if (!rc)
		rc = list_check(&o->harness_programs, "--harness-program (CREDFENCE_HARNESS_PROGRAM)",
				false, why, n);
	for (size_t i = 0; !rc && i < o->deny_env.n; i++)
		if (!cf_env_rule_valid(o->deny_env.v[i], true)) {
			snprintf(why, n, "--deny-env (CREDFENCE_DENY_ENV) '%.256s' is not a variable "
					 "name or pattern; give letters, digits, '_' and '*' (API_*)",
				 o->deny_env.v[i]);
			rc = -EINVAL;
		}
	for (size_t i = 0; !rc && i < o->keep_env.n; i++)
		if (!cf_env_rule_valid(o->keep_env.v[i], false)) {
			snprintf(why, n, "--keep-env (CREDFENCE_KEEP_ENV) '%.256s' is not a variable "
					 "name; give the whole name, letters, digits and '_' (no pattern: "
					 "each secret passed is named)",
				 o->keep_env.v[i]);
			rc = -EINVAL;
		}
	if (!rc && o->log && !*o->log) {
		snprintf(why, n, "--log (CREDFENCE_LOG) is empty; give a file or leave it unset");
		rc = -EINVAL;
	}
	return rc;
}
