/* A growable list of owned strings. */
#ifndef CF_STRV_H
#define CF_STRV_H

#include <stdbool.h>
#include <stddef.h>

struct cf_strv {
	char **v;
	size_t n, cap;
};

int cf_strv_add(struct cf_strv *s, const char *str);          /* 0 or -ENOMEM */
int cf_strv_add_unique(struct cf_strv *s, const char *str);   /* 0 or -ENOMEM */
int cf_strv_add_list(struct cf_strv *s, const char *colon_list); /* skips empty parts */
bool cf_strv_has(const struct cf_strv *s, const char *str);
void cf_strv_sort(struct cf_strv *s);
void cf_strv_free(struct cf_strv *s);

#endif
