/* A strict reader of TOML 1.0 (toml.h). Debian 12 packages no C library for
 * TOML, and credfence needs a handful of keys: this reader follows the whole
 * grammar of keys, strings, arrays and tables so that nothing inside a
 * string or an array is taken for a key, decodes strings and booleans, and
 * skips numbers and dates as tokens without reading them. Anything else is
 * -EINVAL with its line. */
#include "toml.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct rd {
	const char *p, *end;
	size_t line;
	char *buf; /* decoded strings of the current line */
	size_t used, cap;
	char *hbuf; /* the current table header's keys */
	const char *hkeys[CF_TOML_MAX_KEYS];
	size_t nh;
	cf_toml_fn fn;
	void *ctx;
	int depth;
};

#define BAD (-EINVAL)

static bool at(const struct rd *r, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(r->end - r->p) >= n && memcmp(r->p, s, n) == 0;
}

static void skip_blank(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t'))
		r->p++;
}

static int skip_comment(struct rd *r)
{
	if (r->p < r->end && *r->p == '#')
		while (r->p < r->end && *r->p != '\n') {
			unsigned char c = (unsigned char)*r->p;
			if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
				return BAD;
			r->p++;
		}
	return 0;
}

/* A newline (LF or CRLF), consumed; false when there is none here. */
static bool newline(struct rd *r)
{
	if (at(r, "\r\n")) {
		r->p += 2;
	} else if (r->p < r->end && *r->p == '\n') {
		r->p++;
	} else {
		return false;
	}
	r->line++;
	return true;
}

/* Blanks, comments and newlines (between the elements of an array). */
static int skip_space(struct rd *r)
{
	for (;;) {
		skip_blank(r);
		if (skip_comment(r))
			return BAD;
		if (!newline(r))
			return 0;
	}
}

/* The end of a line: blanks, a comment, then a newline or the end. */
static int end_of_line(struct rd *r)
{
	skip_blank(r);
	if (skip_comment(r))
		return BAD;
	return r->p == r->end || newline(r) ? 0 : BAD;
}

static int put(struct rd *r, char c)
{
	if (r->used >= r->cap)
		return -ENOMEM;
	r->buf[r->used++] = c;
	return 0;
}

static int put_utf8(struct rd *r, uint32_t u)
{
	if (u > 0x10ffff || (u >= 0xd800 && u <= 0xdfff))
		return BAD;
	char o[4];
	int n;
	if (u < 0x80) {
		o[0] = (char)u, n = 1;
	} else if (u < 0x800) {
		o[0] = (char)(0xc0 | u >> 6), o[1] = (char)(0x80 | (u & 0x3f)), n = 2;
	} else if (u < 0x10000) {
		o[0] = (char)(0xe0 | u >> 12), o[1] = (char)(0x80 | (u >> 6 & 0x3f));
		o[2] = (char)(0x80 | (u & 0x3f)), n = 3;
	} else {
		o[0] = (char)(0xf0 | u >> 18), o[1] = (char)(0x80 | (u >> 12 & 0x3f));
		o[2] = (char)(0x80 | (u >> 6 & 0x3f)), o[3] = (char)(0x80 | (u & 0x3f)), n = 4;
	}
	for (int i = 0; i < n; i++)
		if (put(r, o[i]))
			return -ENOMEM;
	return 0;
}

static int hex_escape(struct rd *r, int digits)
{
	uint32_t u = 0;
	for (int i = 0; i < digits; i++, r->p++) {
		if (r->p >= r->end)
			return BAD;
		char c = *r->p;
		int v = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (v < 0)
			return BAD;
		u = u << 4 | (uint32_t)v;
	}
	return put_utf8(r, u);
}

/* One escape after the backslash of a basic string. */
static int escape(struct rd *r)
{
	if (r->p >= r->end)
		return BAD;
	char c = *r->p++;
	switch (c) {
	case 'b': return put(r, '\b');
	case 't': return put(r, '\t');
	case 'n': return put(r, '\n');
	case 'f': return put(r, '\f');
	case 'r': return put(r, '\r');
	case 'e': return put(r, 0x1b); /* TOML 1.1 */
	case '"': return put(r, '"');
	case '\\': return put(r, '\\');
	case 'u': return hex_escape(r, 4);
	case 'U': return hex_escape(r, 8);
	default: return BAD;
	}
}

/* A string at r->p (any of the four kinds) decoded into the line buffer;
 * *OUT points to it. MULTI: multi-line strings are allowed (not in keys). */
static int string(struct rd *r, const char **out, bool multi)
{
	char q = *r->p;
	bool literal = q == '\'';
	bool ml = multi && (literal ? at(r, "'''") : at(r, "\"\"\""));
	size_t start = r->used;
	int rc;
	r->p += ml ? 3 : 1;
	if (ml) /* a newline right after the opening is trimmed */
		newline(r);
	for (;;) {
		if (r->p >= r->end)
			return BAD;
		char c = *r->p;
		if (c == q && (!ml || (literal ? at(r, "'''") : at(r, "\"\"\"")))) {
			if (ml) { /* up to two quotes may end the content */
				size_t k = 3;
				while (k < 5 && r->p + k < r->end && r->p[k] == q)
					k++;
				for (size_t i = 3; i < k; i++)
					if ((rc = put(r, q)))
						return rc;
				r->p += k;
			} else {
				r->p++;
			}
			break;
		}
		if (c == '\n' || at(r, "\r\n")) {
			if (!ml)
				return BAD;
			newline(r);
			if ((rc = put(r, '\n')))
				return rc;
			continue;
		}
		if (((unsigned char)c < 0x20 && c != '\t') || c == 0x7f)
			return BAD;
		r->p++;
		if (c == '\\' && !literal) {
			if (ml) { /* a backslash at the end of a line trims the whitespace after it */
				const char *s = r->p;
				while (s < r->end && (*s == ' ' || *s == '\t'))
					s++;
				if (s < r->end && (*s == '\n' || *s == '\r')) {
					r->p = s;
					while (r->p < r->end) {
						if (*r->p == ' ' || *r->p == '\t')
							r->p++;
						else if (!newline(r))
							break;
					}
					continue;
				}
			}
			if ((rc = escape(r)))
				return rc;
			continue;
		}
		if ((rc = put(r, c)))
			return rc;
	}
	if ((rc = put(r, '\0')))
		return rc;
	*out = r->buf + start;
	return 0;
}

static bool bare_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* A dotted key into KEYS[*N...]. */
static int key(struct rd *r, const char **keys, size_t *n)
{
	int rc;
	for (;;) {
		skip_blank(r);
		if (*n >= CF_TOML_MAX_KEYS || r->p >= r->end)
			return BAD;
		if (*r->p == '"' || *r->p == '\'') {
			if ((rc = string(r, &keys[*n], false)))
				return rc;
		} else {
			size_t start = r->used;
			while (r->p < r->end && bare_char(*r->p))
				if ((rc = put(r, *r->p++)))
					return rc;
			if (r->used == start)
				return BAD;
			if ((rc = put(r, '\0')))
				return rc;
			keys[*n] = r->buf + start;
		}
		(*n)++;
		skip_blank(r);
		if (r->p >= r->end || *r->p != '.')
			return 0;
		r->p++;
	}
}

static int value(struct rd *r, const char **keys, size_t n, bool in_array);

static int array(struct rd *r, const char **keys, size_t n, bool in_array)
{
	int rc = r->fn(r->ctx, keys, n, CF_TOML_ARRAY, NULL, in_array);
	if (rc)
		return rc;
	r->p++; /* [ */
	for (;;) {
		if ((rc = skip_space(r)))
			return rc;
		if (r->p >= r->end)
			return BAD;
		if (*r->p == ']') {
			r->p++;
			return 0;
		}
		if ((rc = value(r, keys, n, true)) || (rc = skip_space(r)))
			return rc;
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p >= r->end || *r->p != ']')
			return BAD;
	}
}

/* { k = v, ... } on one line (TOML 1.0), each value handed on under KEYS. */
static int inline_table(struct rd *r, const char **keys, size_t n)
{
	int rc;
	r->p++; /* { */
	skip_blank(r);
	if (r->p < r->end && *r->p == '}') {
		r->p++;
		return 0;
	}
	for (;;) {
		const char *k[CF_TOML_MAX_KEYS];
		size_t m = n;
		memcpy(k, keys, n * sizeof *keys);
		if ((rc = key(r, k, &m)))
			return rc;
		if (r->p >= r->end || *r->p != '=')
			return BAD;
		r->p++;
		skip_blank(r);
		if ((rc = value(r, k, m, false)))
			return rc;
		skip_blank(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == '}') {
			r->p++;
			return 0;
		}
		return BAD;
	}
}

/* A number, a date or a boolean: up to the next delimiter (a date may hold
 * one space between its day and its time). */
static int token(struct rd *r, const char **keys, size_t n, bool in_array)
{
	const char *s = r->p;
	while (r->p < r->end) {
		char c = *r->p;
		if (bare_char(c) || c == '.' || c == ':' || c == '+')
			r->p++;
		else if (c == ' ' && r->p > s && r->p - s == 10 && r->p + 1 < r->end &&
			 r->p[1] >= '0' && r->p[1] <= '9')
			r->p++;
		else
			break;
	}
	size_t len = (size_t)(r->p - s);
	if (!len)
		return BAD;
	bool b = (len == 4 && !memcmp(s, "true", 4)) || (len == 5 && !memcmp(s, "false", 5));
	bool num = (*s >= '0' && *s <= '9') || *s == '+' || *s == '-' ||
		   (len == 3 && (!memcmp(s, "inf", 3) || !memcmp(s, "nan", 3)));
	if (!b && !num)
		return BAD; /* a bare word is no TOML value */
	return r->fn(r->ctx, keys, n, b ? CF_TOML_BOOL : CF_TOML_OTHER,
		     b ? (*s == 't' ? "true" : "false") : NULL, in_array);
}

static int value(struct rd *r, const char **keys, size_t n, bool in_array)
{
	int rc;
	if (r->p >= r->end)
		return BAD;
	if (++r->depth > 32)
		return BAD;
	char c = *r->p;
	if (c == '"' || c == '\'') {
		const char *s;
		rc = string(r, &s, true);
		if (!rc)
			rc = r->fn(r->ctx, keys, n, CF_TOML_STRING, s, in_array);
	} else if (c == '[') {
		rc = array(r, keys, n, in_array);
	} else if (c == '{') {
		if (in_array) { /* a table in an array: its keys are not judged one by one */
			const char *k[CF_TOML_MAX_KEYS];
			if (n >= CF_TOML_MAX_KEYS)
				return BAD;
			memcpy(k, keys, n * sizeof *keys);
			k[n] = "[]";
			rc = r->fn(r->ctx, keys, n, CF_TOML_OTHER, NULL, true);
			if (!rc)
				rc = inline_table(r, k, n + 1);
		} else {
			rc = inline_table(r, keys, n);
		}
	} else {
		rc = token(r, keys, n, in_array);
	}
	r->depth--;
	return rc;
}

/* [a.b] or [[a.b]]: the keys kept for the lines below. */
static int header(struct rd *r)
{
	bool aot = at(r, "[[");
	const char *k[CF_TOML_MAX_KEYS];
	size_t n = 0;
	int rc;
	r->p += aot ? 2 : 1;
	if ((rc = key(r, k, &n)))
		return rc;
	if (!(aot ? at(r, "]]") : at(r, "]")))
		return BAD;
	r->p += aot ? 2 : 1;
	if (aot) {
		if (n >= CF_TOML_MAX_KEYS)
			return BAD;
		k[n++] = "[]";
	}
	/* Copied out of the line buffer, which the next line reuses. */
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(k[i]) + 1;
		if (off + l > r->cap)
			return -ENOMEM;
		memcpy(r->hbuf + off, k[i], l);
		r->hkeys[i] = r->hbuf + off;
		off += l;
	}
	r->nh = n;
	return end_of_line(r);
}

static int line(struct rd *r)
{
	int rc;
	r->used = 0;
	skip_blank(r);
	if (r->p >= r->end)
		return 0;
	if (*r->p == '#' || *r->p == '\n' || *r->p == '\r')
		return end_of_line(r);
	if (*r->p == '[')
		return header(r);
	const char *k[CF_TOML_MAX_KEYS];
	size_t n = r->nh;
	memcpy(k, r->hkeys, n * sizeof *k);
	if ((rc = key(r, k, &n)))
		return rc;
	if (r->p >= r->end || *r->p != '=')
		return BAD;
	r->p++;
	skip_blank(r);
	if ((rc = value(r, k, n, false)))
		return rc;
	return end_of_line(r);
}

int cf_toml_read(const char *text, size_t len, cf_toml_fn fn, void *ctx, size_t *lineno)
{
	struct rd r = {.p = text, .end = text + len, .line = 1, .fn = fn, .ctx = ctx};
	int rc = 0;
	/* Decoded text is never longer than its source, plus a NUL per string. */
	r.cap = 2 * len + 64;
	r.buf = malloc(r.cap);
	r.hbuf = malloc(r.cap);
	if (!r.buf || !r.hbuf)
		rc = -ENOMEM;
	if (!rc && len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		r.p += 3; /* a byte order mark */
	if (!rc && memchr(text, '\0', len))
		rc = BAD;
	while (!rc && r.p < r.end)
		rc = line(&r);
	if (lineno)
		*lineno = r.line;
	free(r.buf);
	free(r.hbuf);
	return rc;
}
