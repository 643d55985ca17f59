/* Secrets in a value, whatever the variable's name (secret_env.h): the token
 * shapes that secret scanners know, each row taken from a public rule set
 * (gitleaks' config/gitleaks.toml, trufflehog's detectors, GitHub's secret
 * scanning patterns) and cited; a URL with a password; a parameter named
 * like a secret (?password=, ;AccountKey=, &token=).
 *
 * A shape is written in a small notation of our own, matched by our own
 * code (no regex library: it runs between fork and exec):
 *   a literal character stands for itself;
 *   {cM}    exactly M characters of class c;
 *   {cM,}   M or more (as many as there are);
 *   {cM,N}  M to N (as many as there are, up to N);
 *   {cM,N}? M to N, as few as let the rest match (at most one a shape).
 * A run of more or unbounded length is never followed by a literal of its
 * own class (the tests check it), so taking as many as there are is what a
 * regex would do. A shape that ends in a run of bounded length needs a
 * character outside the class after it: the token does not go on.
 * The classes:
 *   A [A-Za-z0-9]   a [A-Za-z]    l [a-z]        L [a-z0-9]    U [A-Z0-9]
 *   K [A-Z2-7]      D [0-9]       h [0-9a-f]     X [0-9A-Fa-f] w [A-Za-z0-9_]
 *   W [A-Za-z0-9_-] N [A-Za-z0-9-] S [A-Za-z0-9=_.-] q [A-Za-z0-9=_-]
 *   B [A-Za-z0-9+/] J [A-Za-z0-9/\_-] E bech32 [QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]
 *   P [ A-Z0-9_-]   Z [A-Za-z0-9_~.] V [A-Za-z0-9_~.-] T [A-Za-z0-9_=~@.+/-]
 *
 * Where a token may start: at the start of the value or after a character
 * that is not a letter, a digit or '_' (a regex's \b): "x:ghp_...@github.com",
 * "Bearer sk-ant-...", "key=AIza...". */
#ifndef CF_ENV_SHAPES_H
#define CF_ENV_SHAPES_H

#include <stdbool.h>
#include <stddef.h>

#include "secret_env.h"

struct cf_env_shape_row {
	const char *shape;
	const char *holds;
	const char *source;
};

/* A shape that starts with a class, and its first literal (HINT) with where
 * it is (HINT_AT): checked before the shape. */
struct cf_env_shape_lead {
	struct cf_env_shape_row row;
	const char *hint;
	unsigned hint_at;
};

/* Shapes that start with two literals, sorted by them (the lookup is a
 * binary search on the first two bytes; a test checks the order). Among
 * rows with the same two, the first that matches names the token: the
 * narrower rows come first. */
extern const struct cf_env_shape_row cf_env_shape_table[];
extern const size_t cf_env_shape_count;
/* Shapes that start with a class (an Azure client secret), tried at each
 * place a token may start whose HINT is where the row says. */
extern const struct cf_env_shape_lead cf_env_shape_lead_table[];
extern const size_t cf_env_shape_lead_count;
/* Shapes found from the character they hold that ends a run of a token's
 * characters: a Telegram bot token's ':', the space after "Bearer". */
extern const struct cf_env_shape_row cf_env_shape_telegram;
extern const struct cf_env_shape_row cf_env_shape_bearer;

/* For each first byte of the sorted table's shapes, a bit for each of
 * their second bytes (a screen of each place a token may start). */
extern const unsigned long long cf_env_shape_seconds[128];

/* A value is scanned in runs of the characters tokens are made of
 * ([A-Za-z0-9_.~+/=-]); a run shorter than this can not hold the part of any
 * table shape up to its first other character (the tests check every row
 * against it), and is skipped whole. */
#define CF_ENV_SHAPE_RUN_MIN 10

/* Whether the characters at S begin with SHAPE (and, for a shape ending in
 * a bounded run, the token ends there). */
bool cf_env_shape_at(const char *shape, const char *s);

/* Whether the byte C is in class CLS of the notation (false for an unknown
 * class). */
bool cf_env_shape_in_class(char cls, unsigned char c);

/* Whether V holds a secret by its value: a token of a table shape
 * (CF_ENV_VALUE), a URL with a password or a parameter named like a
 * secret (CF_ENV_URL), or none (CF_ENV_PASS). *OUT, when not NULL, gets the
 * reason. */
enum cf_env_why cf_env_value_secret(const char *v, struct cf_env_reason *out);

#endif
