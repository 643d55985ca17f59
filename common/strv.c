#include "strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cf_strv_add(struct cf_strv *s, const char *str)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		char **v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	char *dup = strdup(str);
	if (!dup)
		return -ENOMEM;
	s->v[s->n++] = dup;
	return 0;
}

bool cf_strv_has(const struct cf_strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], str) == 0)
			return true;
	return false;
}

int cf_strv_add_unique(struct cf_strv *s, const char *str)
{
	return cf_strv_has(s, str) ? 0 : cf_strv_add(s, str);
}

int cf_strv_add_list(struct cf_strv *s, const char *list)
{
	if (!list)
		return 0;
	const char *p = list;
	while (*p) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n) {
			char *part = strndup(p, n);
			if (!part)
				return -ENOMEM;
			int rc = cf_strv_add(s, part);
			free(part);
			if (rc)
				return rc;
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void cf_strv_sort(struct cf_strv *s)
{
	if (s->n > 1)
		qsort(s->v, s->n, sizeof *s->v, cmp);
}

void cf_strv_free(struct cf_strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
