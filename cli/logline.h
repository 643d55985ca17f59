/* One line of credfence's JSON-lines log read back (credfence explain),
 * through json-c: a flat object whose values are strings, numbers, true,
 * false or null; arrays and objects are checked and skipped (sandbox_status's
 * lists). The log is credfence's own, with fixed keys; a line that is not
 * such an object is refused, never half read. */
#ifndef CF_LOGLINE_H
#define CF_LOGLINE_H

#include <stddef.h>

/* What one line may hold: keys, and bytes of text (each key and each value
 * that is not an array or an object, with its end). credfence's own lines
 * hold far less; these were the bounds of the reader before json-c, and a
 * line beyond them is still refused. */
#define CF_LOGLINE_KEYS 32
#define CF_LOGLINE_TEXT 16384

struct json_object;

struct cf_logline {
	size_t n;                /* keys */
	struct json_object *obj; /* the line read, or NULL */
	char *buf;               /* the line as json-c is given it */
	size_t cap;
};

/* Parse LINE (LEN bytes, without its newline) into L, which is zeroed before
 * its first use and keeps only this line: 0; -1 when it is not one flat JSON
 * object within the bounds (then L holds none); -ENOMEM. */
int cf_logline_parse(struct cf_logline *l, const char *line, size_t len);

/* The value of KEY: a string decoded, a number or literal as text ("12",
 * "-1.5e3", "true", "null"), "" for an array or an object; NULL when the
 * line has no KEY. Valid until L's next parse or its free. */
const char *cf_logline_get(const struct cf_logline *l, const char *key);

void cf_logline_free(struct cf_logline *l);

#endif
