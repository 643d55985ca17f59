/* The workspace secret-name rules: names that mark a secret wherever they lie
 * inside the workspace. Next to the secret table (secrets.h), and like it read
 * by the backends and nothing else. Only the Seatbelt profile enforces them:
 * on Linux the workspace is writable and one Landlock rule covers all of it. */
#ifndef CF_NAMES_H
#define CF_NAMES_H

#include <stddef.h>

enum cf_name_kind {
	CF_NAME_FILE, /* an entry with this name is a secret */
	CF_NAME_DIR,  /* a directory with this name and all under it are secret */
	CF_NAME_KEEP, /* a template: readable although a FILE row matches it,
			 unless it lies under a DIR row */
};

enum cf_name_match {
	CF_MATCH_EXACT,  /* the whole name */
	CF_MATCH_PREFIX, /* the name starts with it (".env." is `.env.*`) */
	CF_MATCH_SUFFIX, /* the name ends with it (".pem" is `*.pem`) */
};

struct cf_name_row {
	const char *name; /* lowercase letters, digits, '.', '_', '-' only */
	enum cf_name_match match;
	enum cf_name_kind kind;
	const char *holds; /* what it holds, shown by `credfence status` */
};

extern const struct cf_name_row cf_name_table[];
extern const size_t cf_name_count;

/* The extended regular expression (POSIX ERE, and the dialect Seatbelt's regex
 * filter reads) for one name component of ROW, matched case-insensitively
 * by letter classes: ".env" is "[.][eE][nN][vV]". No backslash, no quote.
 * Returns the length it needs without the NUL, as snprintf does (OUT holds
 * all of it when that is below OUTSZ), or -EINVAL for a row outside the
 * alphabet. */
int cf_name_component_regex(const struct cf_name_row *row, char *out, size_t outsz);

/* The regex for every row of KIND, over a whole canonical path, anchored: it
 * skips exactly DEPTH leading components (the workspace's, whose identity a
 * subpath filter checks) and matches a path strictly inside them. FILE and
 * KEEP match the last component; DIR matches any later component and what
 * lies under it. The workspace's own path never enters the text.
 * Returns as cf_name_component_regex() does; -EINVAL when KIND has no row. */
int cf_name_regex(enum cf_name_kind kind, size_t depth, char *out, size_t outsz);

#endif
