/* An errno's words, as the C library's strerror says them, for the errors a
 * fence can meet, from a table: no locale, no allocation, callable between
 * fork and exec, so that a failure reads the same from every way in. */
#ifndef CF_ERRWORDS_H
#define CF_ERRWORDS_H

#include <stddef.h>

/* E > 0. NULL for an errno the table does not hold (the caller says "error E"). */
const char *cf_errno_words(int e);

/* Append E's words, or "error E", to BUF as cf_json_raw does (json.h). */
void cf_errno_put(char *buf, size_t cap, size_t *len, int e);

#endif
