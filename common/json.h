/* JSON text into a caller's buffer: no allocation, safe after fork.
 * Each call appends at *len and keeps the buffer NUL-terminated; output that
 * does not fit is cut, and *len stops at cap - 1. */
#ifndef CF_JSON_H
#define CF_JSON_H

#include <stddef.h>

void cf_json_raw(char *buf, size_t cap, size_t *len, const char *s);
void cf_json_str(char *buf, size_t cap, size_t *len, const char *s);
void cf_json_num(char *buf, size_t cap, size_t *len, long long v);

#endif
