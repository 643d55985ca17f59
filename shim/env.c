/* A fenced child does not need the shim to be fenced: the kernel carries the
 * fence into all its descendants. It needs it only to explain the denials it
 * meets, so the shim puts the library made for that alone in its place in
 * LD_PRELOAD of the children it fences (libcredfence-fenced.so, beside it;
 * where that is missing, the shim itself stays), or takes itself out when
 * asked. Every child of the harness loses the secret variables too
 * (common/secret_env.h). No allocation: this runs between fork and exec,
 * into arrays on the caller's stack. */
#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env_memo.h"
#include "nolibc.h"
#include "options.h"
#include "protocol.h"
#include "secret_env.h"
#include "shim.h"
#include "vars.h"


size_t cf_env_count(char *const *envp)
{
	size_t n = 0;
	while (envp && envp[n])
		n++;
	return n;
}

static int is_preload(const char *e)
{
	const char *p = CF_PRELOAD_EQ;
	while (*p && *e == *p)
		p++, e++;
	return *p == '\0';
}

/* Whether the entry [s, s+n) names libcredfence.so (any directory). */
static int is_shim(const char *s, size_t n)
{
	static const char name[] = CF_SHIM_FILE;
	size_t k = sizeof name - 1;
	if (n < k)
		return 0;
	const char *base = s + n - k;
	if (n > k && base[-1] != '/')
		return 0;
	for (size_t i = 0; i < k; i++)
		if (base[i] != name[i])
			return 0;
	return 1;
}

bool cf_env_preload_has_shim(const char *entry)
{
	if (!is_preload(entry))
		return 0;
	const char *value = entry + sizeof CF_PRELOAD_EQ - 1;
	while (*value) {
		const char *e = value;
		while (*e && !CF_PRELOAD_SEP(*e))
			e++;
		if (e > value && is_shim(value, (size_t)(e - value)))
			return 1;
		value = *e ? e + 1 : e;
	}
	return 0;
}

/* LD_PRELOAD's value without our entry into BUF ("LD_PRELOAD=..."), or
 * with SWAP (a file name) in its place, in the same directory; returns the
 * bytes used (the string and its NUL), or 0 when BUF is too small (then the
 * environment stays as it is). *LEFT: whether an entry is left. */
static size_t filter(const char *value, const char *swap, char *buf, size_t cap, int *left)
{
	size_t len = 0;
	const char *p = CF_PRELOAD_EQ;
	while (*p) {
		if (len + 1 >= cap)
			return 0;
		buf[len++] = *p++;
	}
	size_t start = len;
	while (*value) {
		const char *e = value;
		while (*e && !CF_PRELOAD_SEP(*e))
			e++;
		size_t n = (size_t)(e - value), keep = n;
		const char *tail = "";
		if (n && is_shim(value, n)) {
			/* The directory, with its slash, then SWAP; or nothing. */
			keep = swap ? n - (sizeof CF_SHIM_FILE - 1) : 0;
			tail = swap ? swap : "";
		}
		size_t tn = cf_nl_strlen(tail);
		if (keep + tn) {
			size_t sep = len > start;
			if (len + sep + keep + tn + 1 > cap)
				return 0;
			if (sep)
				buf[len++] = ':';
			for (size_t i = 0; i < keep; i++)
				buf[len++] = value[i];
			for (size_t i = 0; i < tn; i++)
				buf[len++] = tail[i];
		}
		value = *e ? e + 1 : e;
	}
	buf[len] = '\0';
	*left = len > start;
	return len + 1;
}

/* Under `credfence harness` the harness's TMPDIR is its private directory,
 * which its fenced children may not write: they get the user's TMPDIR back
 * ("TMPDIR=..."), or none when the user had none. Set once in the harness's
 * constructor, read only afterwards. */
static char tmp_private[PATH_MAX]; /* the private directory, "" when there is none */
static char tmp_child[PATH_MAX + 8];
static int tmp_child_set;

static size_t cpy(char *to, size_t cap, const char *a, const char *b)
{
	size_t n = 0;
	for (; *a && n + 1 < cap; a++)
		to[n++] = *a;
	for (; b && *b && n + 1 < cap; b++)
		to[n++] = *b;
	to[n] = '\0';
	return n;
}

void cf_env_tmpdir_init(void)
{
	const char *priv = getenv(cf_var_name(CF_VAR_HARNESS_TMPDIR));
	const char *child = getenv(cf_var_name(CF_VAR_CHILD_TMPDIR));
	tmp_private[0] = '\0';
	if (!priv || priv[0] != '/' || cpy(tmp_private, sizeof tmp_private, priv, NULL) + 1 >=
						     sizeof tmp_private) {
		tmp_private[0] = '\0';
		return;
	}
	tmp_child_set = child && *child;
	if (tmp_child_set)
		cpy(tmp_child, sizeof tmp_child, "TMPDIR=", child);
}

/* What a fenced child gets for the entry E: E itself, the user's TMPDIR for
 * a TMPDIR that names the private directory (or lies in it), or NULL to
 * drop it. */
static char *child_tmpdir(char *e)
{
	static const char name[] = "TMPDIR=";
	size_t i = 0;
	if (!tmp_private[0])
		return e;
	for (; name[i]; i++)
		if (e[i] != name[i])
			return e;
	const char *v = e + i, *p = tmp_private;
	while (*p && *v == *p)
		p++, v++;
	if (*p || (*v && *v != '/'))
		return e;
	return tmp_child_set ? tmp_child : NULL;
}

/* The user's rules (--deny-env, --keep-env), set once in the constructor
 * from options kept for the process's life, read only afterwards. */
static struct cf_env_rules env_rules;

void cf_env_rules_init(const struct cf_options *o)
{
	cf_options_env_rules(o, &env_rules);
}

const struct cf_env_rules *cf_env_rules(void)
{
	return &env_rules;
}

/* The verdicts of the harness's own environment, made once at its start by
 * the rules above (common/env_memo.h); read only afterwards. NULL: none. */
static struct cf_env_memo *env_memo;

void cf_env_memo_init(char *const *envp)
{
	cf_env_memo_free(env_memo);
	env_memo = cf_env_memo_build(envp, &env_rules);
}

const struct cf_env_memo *cf_env_memo_current(void)
{
	return env_memo;
}

/* Whether E is withheld: the memo's verdict for the harness's own bytes,
 * the judgement for any other. */
static bool is_secret(const char *e)
{
	int v = cf_env_memo_find(env_memo, e);
	return v >= 0 ? v == 1 : cf_env_secret(e, &env_rules) != CF_ENV_PASS;
}

/* Whether a fenced child keeps the shim in LD_PRELOAD (cf_env_keep_shim),
 * and as which file: CF_FENCED_SHIM_FILE where it lies beside the shim.
 * Set once in the constructor, read only afterwards. */
static bool keep_shim;
static const char *keep_as;

void cf_env_keep_shim(bool on)
{
	keep_shim = on;
	keep_as = NULL;
#ifdef CF_FENCED_SHIM_FILE
	/* Judged by the first entry that names the shim, as ld.so loads it. */
	const char *v = on ? getenv(CF_PRELOAD_VAR) : NULL;
	while (v && *v) {
		const char *e = v;
		while (*e && !CF_PRELOAD_SEP(*e))
			e++;
		size_t n = (size_t)(e - v), k = sizeof CF_SHIM_FILE - 1;
		char path[PATH_MAX];
		if (n && is_shim(v, n) && n - k + sizeof CF_FENCED_SHIM_FILE <= sizeof path &&
		    n - k + sizeof CF_JUDGE_FILE <= sizeof path) {
			/* Both beside it, or the shim itself (protocol.h). */
			memcpy(path, v, n - k);
			memcpy(path + n - k, CF_JUDGE_FILE, sizeof CF_JUDGE_FILE);
			bool judge = access(path, R_OK) == 0;
			memcpy(path + n - k, CF_FENCED_SHIM_FILE, sizeof CF_FENCED_SHIM_FILE);
			if (judge && access(path, R_OK) == 0)
				keep_as = CF_FENCED_SHIM_FILE;
			break;
		}
		v = *e ? e + 1 : e;
	}
#endif
}

/* E with the shim's entries replaced by SWAP, or dropped (NULL). */
static char *swap_shim(char *e, const char *swap, char *ldbuf, size_t *used, size_t ldcap)
{
	if (!is_preload(e))
		return e;
	int left = 0;
	size_t r = filter(e + sizeof CF_PRELOAD_EQ - 1, swap, ldbuf + *used, ldcap - *used, &left);
	if (r == 0)
		return e;
	if (!left)
		return NULL;
	char *kept = ldbuf + *used;
	*used += r;
	return kept;
}

unsigned cf_env_entry_drop(char *e)
{
	unsigned d = 0;
#ifndef CF_BENCH_NO_ENV_FILTER
	if (is_secret(e))
		d |= CF_ENV_DROP_SECRETS;
#endif
	if ((is_preload(e) && (!keep_shim || (keep_as && cf_env_preload_has_shim(e)))) ||
	    child_tmpdir(e) != e)
		d |= CF_ENV_DROP_SHIM;
	return d;
}

/* Every LD_PRELOAD entry is filtered: ld.so reads the last one, getenv()
 * the first. One that does not fit LDBUF stays as it is (the child then
 * loads the shim again, which finds itself fenced): the secrets go all the
 * same. */
char *cf_env_entry_less_shim(char *e, char *ldbuf, size_t *used, size_t ldcap)
{
	if (!is_preload(e))
		return child_tmpdir(e);
	if (keep_shim && !keep_as)
		return e;
	return swap_shim(e, keep_shim ? keep_as : NULL, ldbuf, used, ldcap);
}

char *cf_env_entry_drop_shim(char *e, char *ldbuf, size_t *used, size_t ldcap)
{
	return swap_shim(e, NULL, ldbuf, used, ldcap);
}

char *const *cf_env_for_child(char *const *envp, unsigned drop, char **out, size_t cap,
			      char *ldbuf, size_t ldcap)
{
	size_t n = cf_env_count(envp);
	if (!envp || n + 1 > cap)
		return envp;
#ifdef CF_BENCH_NO_ENV_FILTER
	/* scripts/bench's second build only: the launch without the filter. */
	drop &= ~CF_ENV_DROP_SECRETS;
#endif
	size_t k = 0, used = 0;
	int changed = 0;
	for (size_t i = 0; i < n; i++) {
		if ((drop & CF_ENV_DROP_SECRETS) && is_secret(envp[i])) {
			changed = 1;
			continue;
		}
		char *e = (drop & CF_ENV_DROP_SHIM)
				  ? cf_env_entry_less_shim(envp[i], ldbuf, &used, ldcap)
				  : envp[i];
		changed |= e != envp[i];
		if (e)
			out[k++] = e;
	}
	out[k] = NULL;
	return changed ? out : envp;
}

char *const *cf_env_without_shim(char *const *envp, char **out, size_t cap, char *ldbuf,
				 size_t ldcap)
{
	return cf_env_for_child(envp, CF_ENV_DROP_SHIM, out, cap, ldbuf, ldcap);
}
