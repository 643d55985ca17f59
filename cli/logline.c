/* credfence's log lines read with json-c (logline.h). */
#include "logline.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

/* An object holding arrays and objects 16 deep (json-c counts the line's
 * own object, and refuses at its bound minus one). */
#define NESTING 18

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

/* The value of four hex digits at S, or -1. */
static int hex4(const char *s)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hex(s[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* json-c 0.16 reads, even with JSON_TOKENER_STRICT, what RFC 8259 refuses
 * and credfence never writes: control bytes raw in a string, keys in single
 * quotes, NaN and Infinity, \f and \v as blanks. False when S holds any of
 * them (outside a string only JSON's punctuation, blanks, numbers and the
 * letters of true, false and null may stand), as the reader before json-c
 * refused them. The same pass turns each \u escape of NUL or of anything
 * above ASCII into '?' (\u003f), as that reader did: credfence escapes
 * control bytes only, and a name read back is shown, never judged on. */
static bool plain_json(char *s, size_t n)
{
	bool in_string = false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!in_string) {
			if (c == '"')
				in_string = true;
			else if (c == '\0' || !strchr("{}[]:, \t\r\n-+.0123456789eEtruefalsn", c))
				return false;
			continue;
		}
		if (c < 0x20)
			return false;
		if (c == '"') {
			in_string = false;
		} else if (c == '\\' && i + 1 < n) {
			int v = s[i + 1] == 'u' && n - i >= 6 ? hex4(s + i + 2) : -1;
			if (v == 0 || v >= 0x80)
				memcpy(s + i + 2, "003f", 4);
			i++; /* the escaped byte: a quote does not end the string */
		}
	}
	return true;
}

static void drop(struct cf_logline *l)
{
	json_object_put(l->obj);
	l->obj = NULL;
	l->n = 0;
}

/* Within CF_LOGLINE_KEYS and CF_LOGLINE_TEXT. */
static bool within_bounds(struct json_object *o)
{
	size_t text = 0;
	if (json_object_object_length(o) > CF_LOGLINE_KEYS)
		return false;
	json_object_object_foreach(o, key, val) {
		text += strlen(key) + 1;
		if (!json_object_is_type(val, json_type_array) &&
		    !json_object_is_type(val, json_type_object))
			text += strlen(val ? json_object_get_string(val) : "null") + 1;
	}
	return text < CF_LOGLINE_TEXT;
}

int cf_logline_parse(struct cf_logline *l, const char *line, size_t len)
{
	drop(l);
	if (len > INT_MAX)
		return -1;
	if (len > l->cap) {
		char *b = realloc(l->buf, len);
		if (!b)
			return -ENOMEM;
		l->buf = b;
		l->cap = len;
	}
	if (len)
		memcpy(l->buf, line, len);
	if (!plain_json(l->buf, len))
		return -1;
	struct json_tokener *tok = json_tokener_new_ex(NESTING);
	if (!tok)
		return -ENOMEM;
	/* Trailing bytes are judged here: blanks only, as JSON's. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
	struct json_object *o = json_tokener_parse_ex(tok, l->buf, (int)len);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	bool ok = o && json_object_is_type(o, json_type_object);
	for (size_t i = end; ok && i < len; i++)
		ok = l->buf[i] == ' ' || l->buf[i] == '\t' || l->buf[i] == '\r' || l->buf[i] == '\n';
	if (!ok || !within_bounds(o)) {
		json_object_put(o);
		return -1;
	}
	l->obj = o;
	l->n = (size_t)json_object_object_length(o);
	return 0;
}

const char *cf_logline_get(const struct cf_logline *l, const char *key)
{
	struct json_object *v;
	if (!l->obj || !json_object_object_get_ex(l->obj, key, &v))
		return NULL;
	if (!v)
		return "null";
	if (json_object_is_type(v, json_type_array) || json_object_is_type(v, json_type_object))
		return "";
	return json_object_get_string(v);
}

void cf_logline_free(struct cf_logline *l)
{
	drop(l);
	free(l->buf);
	l->buf = NULL;
	l->cap = 0;
}
