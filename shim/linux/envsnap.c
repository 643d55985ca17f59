/* The harness's environment as its fence saw it (envsnap.h). */
#include "envsnap.h"

#include <stdlib.h>
#include <string.h>

#include "nolibc.h"
#include "secrets.h"
#include "vars.h"

#define OPT_PREFIX "CREDFENCE_"

/* Names whose value moves a secret. The policy reads HOME and
 * XDG_CONFIG_HOME besides the table's own variables. */
static bool moves_secret(const char *e, size_t namelen)
{
	if ((namelen == 4 && !strncmp(e, "HOME", 4)) ||
	    (namelen == 15 && !strncmp(e, "XDG_CONFIG_HOME", 15)))
		return true;
	for (size_t i = 0; i < cf_secret_count; i++) {
		const char *v = cf_secret_table[i].env;
		if (v && strlen(v) == namelen && !strncmp(e, v, namelen))
			return true;
	}
	return false;
}

static size_t name_len(const char *e)
{
	size_t n = 0;
	while (e[n] && e[n] != '=')
		n++;
	return n;
}

static int push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof **v);
	if (!nv)
		return -1;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -1;
	(*n)++;
	return 0;
}

struct cf_envsnap *cf_envsnap_take(const struct cf_fence *f, char *const envp[])
{
	struct cf_envsnap *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->fence = f;
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *e = envp[i];
		size_t k = name_len(e);
		if (!e[k] || !e[k + 1])
			continue; /* unset and empty move nothing alike */
		int rc = 0;
		if (!strncmp(e, OPT_PREFIX, strlen(OPT_PREFIX)))
			rc = push(&s->opts, &s->n_opts, e);
		else if (moves_secret(e, k))
			rc = push(&s->moves, &s->n_moves, e);
		if (rc) {
			cf_envsnap_free(s);
			return NULL;
		}
	}
	const char *l = getenv(cf_var_name(CF_VAR_LAUNCHER));
	if (l && l[0] == '/' && !(s->launcher = strdup(l))) {
		cf_envsnap_free(s);
		return NULL;
	}
	return s;
}

void cf_envsnap_free(struct cf_envsnap *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_moves; i++)
		free(s->moves[i]);
	for (size_t i = 0; i < s->n_opts; i++)
		free(s->opts[i]);
	free(s->moves);
	free(s->opts);
	free(s->launcher);
	free(s);
}

/* ---- between fork and exec from here on: no allocation, no libc state ---- */

static bool eq_name(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return b[n] == '=';
}

static const char *find(char *const v[], size_t n, const char *e, size_t k)
{
	for (size_t i = 0; v && (n ? i < n : v[i] != NULL); i++)
		if (eq_name(e, v[i], k))
			return v[i];
	return NULL;
}

bool cf_envsnap_moves(const struct cf_envsnap *s, const char *e)
{
	/* Each variable the child sets must be in S with the same value. One
	 * that it leaves unset moves nothing: the secret's default location and
	 * the harness's own setting are denied by the harness's fence anyway. */
	size_t k = name_len(e);
	if (!e[k] || !e[k + 1] || !moves_secret(e, k))
		return false;
	const char *t = find(s->moves, s->n_moves, e, k);
	return !t || !cf_nl_streq(t, e);
}

const char *cf_envsnap_first_change(const struct cf_envsnap *s, char *const envp[])
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (cf_envsnap_moves(s, envp[i]))
			return envp[i];
	return NULL;
}

bool cf_envsnap_same(const struct cf_envsnap *s, char *const envp[])
{
	return cf_envsnap_first_change(s, envp) == NULL;
}
