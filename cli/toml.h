/* A small, strict reader of TOML, enough to find a few keys in an agent's
 * configuration (Codex's config.toml). It hands every value to a callback
 * with its full dotted key; what it does not follow is an error, never a
 * guess: a caller that must judge a file refuses it then. */
#ifndef CF_TOML_H
#define CF_TOML_H

#include <stdbool.h>
#include <stddef.h>

enum cf_toml_type {
	CF_TOML_STRING, /* STR is the decoded string */
	CF_TOML_BOOL,   /* STR is "true" or "false" */
	CF_TOML_ARRAY,  /* an array begins; its elements follow with IN_ARRAY set */
	CF_TOML_OTHER,  /* a number, a date, a table in an array: not decoded */
};

#define CF_TOML_MAX_KEYS 16

/* One value at KEYS[0].KEYS[1]...KEYS[NKEYS-1] (a table header's keys, then
 * the line's). An element of an array comes with IN_ARRAY and its array's
 * key. A [[table]] header adds the component "[]". A nonzero return stops
 * the reading and is returned. */
typedef int (*cf_toml_fn)(void *ctx, const char *const *keys, size_t nkeys, enum cf_toml_type t,
			  const char *str, bool in_array);

/* Reads TEXT (LEN bytes). 0, the callback's nonzero value, -ENOMEM, or
 * -EINVAL at what this reader does not follow, with *LINE (1-based) where. */
int cf_toml_read(const char *text, size_t len, cf_toml_fn fn, void *ctx, size_t *line);

#endif
