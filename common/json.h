/* JSON text into a caller's buffer: no allocation, safe after fork (inline,
 * so that a child's log line is written in its caller's file). Each call
 * appends at *len and keeps the buffer NUL-terminated; output that does not
 * fit is cut, and *len stops at cap - 1. */
#ifndef CF_JSON_H
#define CF_JSON_H

#include <stddef.h>

static inline void cf_json_put(char *buf, size_t cap, size_t *len, char c)
{
	if (cap == 0)
		return;
	if (*len + 1 < cap)
		buf[(*len)++] = c;
	buf[*len] = '\0';
}

static inline void cf_json_raw(char *buf, size_t cap, size_t *len, const char *s)
{
	while (*s)
		cf_json_put(buf, cap, len, *s++);
}

static inline void cf_json_str(char *buf, size_t cap, size_t *len, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	cf_json_put(buf, cap, len, '"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			cf_json_put(buf, cap, len, '\\');
			cf_json_put(buf, cap, len, (char)c);
		} else if (c == '\n') {
			cf_json_raw(buf, cap, len, "\\n");
		} else if (c == '\t') {
			cf_json_raw(buf, cap, len, "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			cf_json_raw(buf, cap, len, "\\u00");
			cf_json_put(buf, cap, len, hex[c >> 4]);
			cf_json_put(buf, cap, len, hex[c & 15]);
		} else {
			cf_json_put(buf, cap, len, (char)c);
		}
	}
	cf_json_put(buf, cap, len, '"');
}

static inline void cf_json_num(char *buf, size_t cap, size_t *len, long long v)
{
	char tmp[24];
	int n = 0;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		cf_json_put(buf, cap, len, '-');
	while (n)
		cf_json_put(buf, cap, len, tmp[--n]);
}

#endif
