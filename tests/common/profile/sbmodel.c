#include "sbmodel.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"

/* Parse "(VERB OP... FILTER)" with FILTER one of the shapes profile.c writes. */
static void parse_rule(struct sb_rule *r, const char *line, const struct cf_profile *pf)
{
	const char *p = line;
	char re[4096];
	int used = 0;

	memset(r, 0, sizeof *r);
	if (!strncmp(line, "(allow ", 7)) {
		r->allow = true;
		p = line + 7;
	} else if (!strncmp(line, "(deny ", 6)) {
		p = line + 6;
	} else {
		cr_assert_fail("profile line of no known shape: %s", line);
	}
	while (*p && *p != '(' && *p != ')') {
		size_t n = strcspn(p, " )");
		cr_assert(n > 0 && n < sizeof r->ops[0] && r->n_ops < 4, "bad operation in: %s", line);
		memcpy(r->ops[r->n_ops], p, n);
		r->ops[r->n_ops++][n] = '\0';
		p += n;
		if (*p == ' ')
			p++;
	}
	cr_assert(r->n_ops > 0, "no operation in: %s", line);
	if (!strcmp(p, ")")) {
		r->filter = SB_ANY;
		return;
	}
	if (sscanf(p, "(subpath (param \"%15[A-Z0-9]\")))%n", r->key, &used) == 1 && !p[used]) {
		r->filter = SB_SUBPATH;
	} else if (sscanf(p, "(literal (param \"%15[A-Z0-9]\")))%n", r->key, &used) == 1 &&
		   !p[used]) {
		r->filter = SB_LITERAL;
	} else if (sscanf(p, "(require-all (subpath (param \"%15[A-Z0-9]\")) (regex #\"%4095[^\"]\")))%n",
			  r->key, re, &used) == 2 && !p[used]) {
		r->filter = SB_SUBPATH_REGEX;
		int rc = regcomp(&r->re, re, REG_EXTENDED | REG_NOSUB);
		cr_assert_eq(rc, 0, "regcomp failed (%d) on %s", rc, re);
	} else {
		cr_assert_fail("profile filter of no known shape: %s", line);
	}
	r->path = cf_profile_param(pf, r->key);
	cr_assert_not_null(r->path, "parameter %s used but not given", r->key);
}

void sb_load(struct sb_model *m, const struct cf_profile *pf)
{
	const char *t = pf->text;
	size_t cap = 0;
	m->r = NULL;
	m->n = 0;
	cr_assert(!strncmp(t, "(version 1)\n", 12), "profile does not start with (version 1)");
	t += 12;
	while (*t) {
		const char *nl = strchr(t, '\n');
		cr_assert_not_null(nl, "profile does not end with a newline");
		char line[8192];
		size_t n = (size_t)(nl - t);
		cr_assert(n < sizeof line);
		memcpy(line, t, n);
		line[n] = '\0';
		if (m->n == cap) {
			cap = cap ? 2 * cap : 64;
			m->r = realloc(m->r, cap * sizeof *m->r);
			cr_assert_not_null(m->r);
		}
		parse_rule(&m->r[m->n++], line, pf);
		t = nl + 1;
	}
	cr_assert(m->n > 0 && m->r[0].allow && m->r[0].filter == SB_ANY &&
		  !strcmp(m->r[0].ops[0], "default"), "second line is not (allow default)");
}

void sb_free(struct sb_model *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->r[i].filter == SB_SUBPATH_REGEX)
			regfree(&m->r[i].re);
	free(m->r);
	m->r = NULL;
	m->n = 0;
}

static bool op_matches(const char *rule_op, const char *op)
{
	size_t n = strlen(rule_op);
	if (!strcmp(rule_op, "default"))
		return true;
	if (n && rule_op[n - 1] == '*')
		return !strncmp(rule_op, op, n - 1);
	return !strcmp(rule_op, op);
}

static bool rule_matches(const struct sb_rule *r, const char *op, const char *path)
{
	bool any = false;
	for (size_t i = 0; i < r->n_ops; i++)
		any = any || op_matches(r->ops[i], op);
	if (!any)
		return false;
	switch (r->filter) {
	case SB_ANY:
		return true;
	case SB_SUBPATH:
		return cf_path_within(path, r->path);
	case SB_LITERAL:
		return !strcmp(path, r->path);
	case SB_SUBPATH_REGEX:
		return cf_path_within(path, r->path) && regexec(&r->re, path, 0, NULL, 0) == 0;
	}
	return false;
}

long sb_deciding(const struct sb_model *m, const char *op, const char *path)
{
	for (size_t i = m->n; i-- > 1;)
		if (rule_matches(&m->r[i], op, path))
			return (long)i;
	return -1;
}

bool sb_allowed(const struct sb_model *m, const char *op, const char *path)
{
	long i = sb_deciding(m, op, path);
	return i < 0 || m->r[i].allow;
}
