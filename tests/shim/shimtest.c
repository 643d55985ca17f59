#include "shimtest.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *rotate(const char *base, const char *mid, const char *rel)
{
	static char bufs[8][PATH_MAX];
	static int next;
	char *b = bufs[next++ % 8];
	cr_assert(base && *base, "CREDFENCE_BUILD / CREDFENCE_SOURCE not set; run with meson test");
	snprintf(b, PATH_MAX, "%s%s/%s", base, mid, rel);
	return b;
}

const char *st_build(const char *rel)
{
	return rotate(getenv("CREDFENCE_BUILD"), "", rel);
}

const char *st_src(const char *rel)
{
	return rotate(getenv("CREDFENCE_SOURCE"), "/tests/shim", rel);
}

const char *st_shim(void)
{
	return st_build("shim/libcredfence.so");
}

void st_setup(struct st *t)
{
	memset(t, 0, sizeof *t);
	cf_test_require_landlock();
	cf_fx_setup(&t->fx);
	snprintf(t->allowed, sizeof t->allowed, "%s/allowed.txt", t->fx.ws);
	cf_fx_write(t->allowed, ST_ALLOWED_TEXT "\n");
	snprintf(t->log, sizeof t->log, "%s/log.jsonl", t->fx.root);
	t->key = cf_fx_secret(&t->fx, ".ssh")->key;
	size_t len = 1;
	for (size_t i = 0; i < t->fx.n; i++)
		len += strlen(t->fx.s[i].key) + 1;
	t->keys = calloc(1, len);
	cr_assert(t->keys);
	for (size_t i = 0; i < t->fx.n; i++) {
		if (i)
			strcat(t->keys, ":");
		strcat(t->keys, t->fx.s[i].key);
	}
}

void st_teardown(struct st *t)
{
	cf_fx_teardown(&t->fx);
	free(t->keys);
	t->keys = NULL;
}

char **st_env(const struct st *t, const char *const *extra)
{
	static char k1[PATH_MAX + 64], k3[PATH_MAX + 64], k4[PATH_MAX + 64], k5[PATH_MAX + 64],
		k6[PATH_MAX + 64];
	char *k2 = malloc(strlen(t->keys) + 16);
	cr_assert(k2);
	snprintf(k1, sizeof k1, "CF_T_KEY=%s", t->key);
	sprintf(k2, "CF_T_KEYS=%s", t->keys);
	snprintf(k3, sizeof k3, "CF_T_ALLOWED=%s", t->allowed);
	snprintf(k4, sizeof k4, "CF_T_PROBE=%s", st_build("tests/shim/cf-probe"));
	snprintf(k5, sizeof k5, "CF_T_ROOT=%s", t->fx.root);
	snprintf(k6, sizeof k6, "CF_T_OWN=%s", cf_fx_secret(&t->fx, ".claude/.credentials.json")->key);
	size_t n = 0;
	while (extra && extra[n])
		n++;
	const char **all = calloc(n + 7, sizeof *all);
	cr_assert(all);
	all[0] = k1, all[1] = k2, all[2] = k3, all[3] = k4, all[4] = k5, all[5] = k6;
	for (size_t i = 0; i < n; i++)
		all[6 + i] = extra[i];
	char **env = cf_fx_env(&t->fx, all);
	free(all);
	free(k2);
	return env;
}

void st_harness(struct cf_fx_out *o, const struct st *t, char *const envp[],
		const char *const *opts, char *const cmd[])
{
	const char *av[256];
	size_t n = 0;
	av[n++] = cf_fx_bin();
	av[n++] = "harness";
	av[n++] = "--home";
	av[n++] = t->fx.home;
	av[n++] = "--workspace";
	av[n++] = t->fx.ws;
	for (size_t i = 0; opts && opts[i]; i++)
		av[n++] = opts[i];
	av[n++] = "--";
	for (size_t i = 0; cmd[i]; i++) {
		cr_assert(n < 255);
		av[n++] = cmd[i];
	}
	av[n] = NULL;
	char **own = envp ? NULL : st_env(t, NULL);
	cf_fx_run(o, t->fx.ws, envp ? envp : own, NULL, (char *const *)av);
	cf_fx_env_free(own);
}

size_t st_count(const char *hay, const char *needle)
{
	size_t n = 0, k = strlen(needle);
	for (const char *p = hay; (p = strstr(p, needle)); p += k)
		n++;
	return n;
}

size_t st_log_lines(const struct st *t, const char *also)
{
	char *log = cf_fx_slurp(t->log);
	size_t n = 0;
	if (!log)
		return 0;
	for (char *line = log, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		cr_assert(nl, "the log's last line has no newline: %s", line);
		*nl = '\0';
		if (strstr(line, "\"event\":\"sandbox_status\"")) {
			cr_assert(line[0] == '{' && nl[-1] == '}', "not a JSON line: %s", line);
			if (!also || strstr(line, also))
				n++;
		}
	}
	free(log);
	return n;
}

void st_dump(const char *what, const struct cf_fx_out *o)
{
	cr_log_info("%s: status %d\n--- stdout ---\n%s\n--- stderr ---\n%s", what, o->status, o->out,
		    o->err);
}

void st_assert_cases(const struct st *t, const struct cf_fx_out *o, size_t n, size_t n_allowed,
		     bool harness_reads)
{
	/* Some harnesses (git hooks) send their children's stdout to stderr. */
	size_t lo = strlen(o->out), le = strlen(o->err);
	char *all = malloc(lo + le + 2);
	cr_assert(all);
	memcpy(all, o->out, lo);
	all[lo] = '\n';
	memcpy(all + lo + 1, o->err, le + 1);

	cf_fx_assert_no_marker(&t->fx, o);
	if (harness_reads)
		cr_expect(st_count(all, "HARNESS_READ ok") >= 1 && !strstr(all, "HARNESS_READ bad"),
			  "the harness could not read its own login");
	/* Nor any secret (enforce/linux/mountns/harness_guard.h), whatever the harness is written in. */
	cr_expect(!strstr(all, "HARNESS_DENIED bad"), "the harness read the key itself");
	size_t cases = 0;
	for (const char *p = all; (p = strstr(p, "CASE ")); p++) {
		const char *end = strchr(p, '\n');
		int len = end ? (int)(end - p) : (int)strlen(p);
		char line[512];
		snprintf(line, sizeof line, "%.*s ", len, p);
		cases++;
		cr_expect(strstr(line, " deny=1 ") && strstr(line, " legit=0 "), "a case went wrong: %s",
			  line);
	}
	cr_expect_eq(cases, n, "%zu CASE lines, expected %zu", cases, n);
	cr_expect_geq(st_count_denied(all), n,
		      "the denied reads did not fail with EACCES (%zu 'Permission denied', expected %zu)",
		      st_count_denied(all), n);
	cr_expect_eq(st_count(all, ST_ALLOWED_TEXT), n_allowed, "%zu legit reads, expected %zu",
		     st_count(all, ST_ALLOWED_TEXT), n_allowed);
	free(all);
}
