/* One line of credfence's JSON-lines log read back (credfence explain): a
 * flat object whose values are strings, numbers, true, false or null;
 * arrays and objects are checked and skipped (sandbox_status's lists). The
 * log is credfence's own, with fixed keys, so this is all it needs; a line
 * that is not such an object is refused, never half read. No allocation:
 * the strings are unescaped into the struct itself. */
#ifndef CF_LOGLINE_H
#define CF_LOGLINE_H

#include <stddef.h>

#define CF_LOGLINE_KEYS 32
#define CF_LOGLINE_TEXT 16384

struct cf_logline {
	size_t n;
	const char *key[CF_LOGLINE_KEYS];
	const char *val[CF_LOGLINE_KEYS]; /* a string unescaped, a number or
					     literal as written; "" for an
					     array or an object */
	char text[CF_LOGLINE_TEXT];
};

/* Parse LINE (LEN bytes, without its newline) into L: 0, or -1 when it is
 * not one flat JSON object that fits (then L holds nothing useful). */
int cf_logline_parse(struct cf_logline *l, const char *line, size_t len);

/* The value of KEY, or NULL. */
const char *cf_logline_get(const struct cf_logline *l, const char *key);

#endif
