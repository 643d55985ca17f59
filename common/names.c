#include "names.h"

#include <errno.h>
#include <string.h>

#define FILE_IS(name, holds) { name, CF_MATCH_EXACT, CF_NAME_FILE, holds }
#define FILE_STARTS(name, holds) { name, CF_MATCH_PREFIX, CF_NAME_FILE, holds }
#define FILE_ENDS(name, holds) { name, CF_MATCH_SUFFIX, CF_NAME_FILE, holds }
#define DIR_IS(name, holds) { name, CF_MATCH_EXACT, CF_NAME_DIR, holds }
#define KEEP(name) { name, CF_MATCH_EXACT, CF_NAME_KEEP, "template, readable" }

const struct cf_name_row cf_name_table[] = {
	FILE_IS(".env", "environment secrets (dotenv)"),
	FILE_STARTS(".env.", "environment secrets (dotenv)"),
	FILE_IS("id_rsa", "SSH private key"),
	FILE_IS("id_ecdsa", "SSH private key"),
	FILE_IS("id_ed25519", "SSH private key"),
	FILE_IS("id_dsa", "SSH private key"),
	FILE_ENDS(".pem", "private key or certificate (PEM)"),
	FILE_ENDS(".key", "private key"),
	FILE_ENDS(".p12", "private key bundle (PKCS#12)"),
	FILE_ENDS(".pfx", "private key bundle (PKCS#12)"),
	FILE_IS(".npmrc", "npm registry tokens"),
	FILE_IS(".pypirc", "PyPI upload tokens"),
	FILE_IS(".netrc", "machine logins and passwords (netrc)"),
	FILE_IS(".git-credentials", "git credential-store passwords and tokens"),
	FILE_IS("credentials.json", "service account or OAuth credentials"),
	DIR_IS(".ssh", "SSH keys"),
	DIR_IS(".aws", "AWS credentials"),
	DIR_IS(".gnupg", "GnuPG keyrings"),
	DIR_IS("secrets", "secrets by name"),
	KEEP(".env.example"),
	KEEP(".env.sample"),
	KEEP(".env.template"),
};

const size_t cf_name_count = sizeof cf_name_table / sizeof cf_name_table[0];

struct out {
	char *p;
	size_t len, cap;
	int err;
};

/* Counts what it can not write, like snprintf. */
static void put(struct out *o, const char *s)
{
	size_t n = strlen(s);
	if (o->len + n < o->cap)
		memcpy(o->p + o->len, s, n + 1);
	else if (o->len < o->cap)
		o->p[o->len] = '\0';
	o->len += n;
}

static void put_component(struct out *o, const struct cf_name_row *row)
{
	if (row->match == CF_MATCH_SUFFIX)
		put(o, "[^/]*");
	for (const char *c = row->name; *c; c++) {
		char cls[6] = "[xX]";
		if (*c >= 'a' && *c <= 'z') {
			cls[1] = *c;
			cls[2] = (char)(*c - 'a' + 'A');
			put(o, cls);
		} else if (*c == '.') {
			put(o, "[.]");
		} else if ((*c >= '0' && *c <= '9') || *c == '_' || *c == '-') {
			char lit[2] = {*c, '\0'};
			put(o, lit);
		} else {
			o->err = -EINVAL; /* a table row outside its alphabet */
		}
	}
	if (row->match == CF_MATCH_PREFIX)
		put(o, "[^/]*");
}

int cf_name_component_regex(const struct cf_name_row *row, char *out, size_t outsz)
{
	struct out o = {out, 0, outsz, 0};
	if (outsz)
		out[0] = '\0';
	put_component(&o, row);
	return o.err ? o.err : (int)o.len;
}

int cf_name_regex(enum cf_name_kind kind, size_t depth, char *out, size_t outsz)
{
	struct out o = {out, 0, outsz, 0};
	int first = 1;
	if (outsz)
		out[0] = '\0';
	put(&o, "^");
	for (size_t i = 0; i < depth; i++)
		put(&o, "/[^/]+");
	put(&o, "/([^/]+/)*(");
	for (size_t i = 0; i < cf_name_count; i++) {
		if (cf_name_table[i].kind != kind)
			continue;
		if (!first)
			put(&o, "|");
		first = 0;
		put_component(&o, &cf_name_table[i]);
	}
	put(&o, kind == CF_NAME_DIR ? ")(/.*)?$" : ")$");
	if (first)
		o.err = -EINVAL; /* no row of this kind */
	return o.err ? o.err : (int)o.len;
}
