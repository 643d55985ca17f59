#include "logline.h"

#include <string.h>

struct rd {
	const char *p, *end;
	struct cf_logline *l;
	size_t used;
	int depth;
};

static void ws(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n'))
		r->p++;
}

static int put(struct rd *r, char c)
{
	if (r->used + 1 >= sizeof r->l->text)
		return -1;
	r->l->text[r->used++] = c;
	return 0;
}

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string at P (its quote), unescaped into the text when KEEP, to *OUT. */
static int string(struct rd *r, const char **out, int keep)
{
	if (r->p >= r->end || *r->p != '"')
		return -1;
	r->p++;
	size_t start = r->used;
	while (r->p < r->end && *r->p != '"') {
		unsigned char c = (unsigned char)*r->p++;
		if (c < 0x20)
			return -1;
		if (c != '\\') {
			if (keep && put(r, (char)c))
				return -1;
			continue;
		}
		if (r->p >= r->end)
			return -1;
		char e = *r->p++;
		const char *simple = strchr("\"\\/bfnrt", e);
		if (e && simple) {
			static const char to[] = "\"\\/\b\f\n\r\t";
			if (keep && put(r, to[simple - "\"\\/bfnrt"]))
				return -1;
			continue;
		}
		if (e != 'u' || r->end - r->p < 4)
			return -1;
		int v = 0;
		for (int i = 0; i < 4; i++) {
			int h = hex(r->p[i]);
			if (h < 0)
				return -1;
			v = v * 16 + h;
		}
		r->p += 4;
		/* credfence writes \u00XX for control bytes only; anything
		 * wider is kept as '?' (a name, never judged on). */
		if (keep && put(r, v == 0 ? '?' : v < 0x80 ? (char)v : '?'))
			return -1;
	}
	if (r->p >= r->end)
		return -1;
	r->p++;
	if (keep) {
		if (put(r, '\0'))
			return -1;
		*out = r->l->text + start;
	}
	return 0;
}

static int value(struct rd *r, const char **out, int keep);

/* An array or an object, checked and skipped. */
static int nested(struct rd *r)
{
	char close = *r->p == '[' ? ']' : '}';
	if (++r->depth > 16)
		return -1;
	r->p++;
	ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		r->depth--;
		return 0;
	}
	for (;;) {
		const char *ignored;
		ws(r);
		if (close == '}') {
			if (string(r, &ignored, 0))
				return -1;
			ws(r);
			if (r->p >= r->end || *r->p++ != ':')
				return -1;
			ws(r);
		}
		if (value(r, &ignored, 0))
			return -1;
		ws(r);
		if (r->p >= r->end)
			return -1;
		if (*r->p == ',') {
			r->p++;
			continue;
		}
		if (*r->p++ != close)
			return -1;
		r->depth--;
		return 0;
	}
}

static int literal(struct rd *r, const char **out, int keep)
{
	const char *s = r->p;
	while (r->p < r->end && (strchr("+-.eE", *r->p) || (*r->p >= '0' && *r->p <= '9') ||
				 (*r->p >= 'a' && *r->p <= 'z')))
		r->p++;
	size_t n = (size_t)(r->p - s);
	if (n == 0)
		return -1;
	int word = (n == 4 && (!memcmp(s, "true", 4) || !memcmp(s, "null", 4))) ||
		   (n == 5 && !memcmp(s, "false", 5));
	int num = (*s == '-' || (*s >= '0' && *s <= '9'));
	for (size_t i = 0; num && i < n; i++)
		num = !(s[i] >= 'a' && s[i] <= 'z' && s[i] != 'e');
	if (!word && !num)
		return -1;
	if (keep) {
		size_t start = r->used;
		for (size_t i = 0; i < n; i++)
			if (put(r, s[i]))
				return -1;
		if (put(r, '\0'))
			return -1;
		*out = r->l->text + start;
	}
	return 0;
}

static int value(struct rd *r, const char **out, int keep)
{
	if (r->p >= r->end)
		return -1;
	if (*r->p == '"')
		return string(r, out, keep);
	if (*r->p == '[' || *r->p == '{') {
		*out = "";
		return nested(r);
	}
	return literal(r, out, keep);
}

int cf_logline_parse(struct cf_logline *l, const char *line, size_t len)
{
	struct rd r = {line, line + len, l, 0, 0};
	l->n = 0;
	ws(&r);
	if (r.p >= r.end || *r.p++ != '{')
		return -1;
	ws(&r);
	if (r.p < r.end && *r.p == '}') {
		r.p++;
	} else {
		for (;;) {
			ws(&r);
			if (l->n >= CF_LOGLINE_KEYS)
				return -1;
			if (string(&r, &l->key[l->n], 1))
				return -1;
			ws(&r);
			if (r.p >= r.end || *r.p++ != ':')
				return -1;
			ws(&r);
			if (value(&r, &l->val[l->n], 1))
				return -1;
			l->n++;
			ws(&r);
			if (r.p >= r.end)
				return -1;
			if (*r.p == ',') {
				r.p++;
				continue;
			}
			if (*r.p++ != '}')
				return -1;
			break;
		}
	}
	ws(&r);
	return r.p == r.end ? 0 : -1;
}

const char *cf_logline_get(const struct cf_logline *l, const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->key[i], key) == 0)
			return l->val[i];
	return NULL;
}
