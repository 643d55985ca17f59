/* The secret environment variables: the tables beside the secret file table
 * (secrets.h), in the same style, and the one judgement every way in uses
 * (credfence run, each child of a harness, self mode, status and check --env).
 * A variable is a secret when its name is a known one, or matches a name
 * pattern (both case-insensitively), or its value starts like a known token,
 * or the user named it (--deny-env); --keep-env passes a name whatever the
 * rest says. A secret is withheld: absent from the child's environment.
 *
 * Everything from cf_env_secret() down is callable between fork and exec:
 * no allocation, no locale, no errno, read-only tables. */
#ifndef CF_SECRET_ENV_H
#define CF_SECRET_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* Why a variable is withheld, or CF_ENV_PASS. */
enum cf_env_why {
	CF_ENV_PASS = 0,
	CF_ENV_NAME,    /* a known name (cf_env_name_table) */
	CF_ENV_PATTERN, /* a name pattern (cf_env_pattern_table) */
	CF_ENV_VALUE,   /* the value looks like a known token (cf_env_value_table) */
	CF_ENV_URL,     /* the value holds a URL with a password (scheme://user:pw@) */
	CF_ENV_USER,    /* --deny-env, CREDFENCE_DENY_ENV */
};

struct cf_env_name_row {
	const char *name;   /* upper case, as its tool documents it */
	size_t len;         /* strlen(name), from the table's macro */
	const char *holds;  /* what it holds */
	const char *source; /* where the name comes from */
};

/* A name pattern: '*' stands for any run of characters (none included);
 * letters match either case. CF_ENV_PATTERN rows withhold; the not-secret
 * rows (a name that a pattern would catch, yet holds no secret:
 * PASSWORD_STORE_DIR) and CREDFENCE_* pass before any other rule. */
enum cf_env_shape {
	CF_ENV_ENDS,     /* *WORD */
	CF_ENV_STARTS,   /* WORD* */
	CF_ENV_CONTAINS, /* *WORD* */
};

struct cf_env_pattern_row {
	const char *pattern; /* as shown: "*_TOKEN" */
	const char *word;    /* upper case, without the '*': "_TOKEN" */
	size_t len;          /* strlen(word) */
	enum cf_env_shape shape;
	const char *holds;
	bool not_secret;
};

/* A token in a value: PREFIX followed by at least MIN_TAIL characters of a
 * token ([A-Za-z0-9_-]); with UPPER, by exactly MIN_TAIL upper case letters
 * and digits (AWS key ids). With CONTAINS: PREFIX and CONTAINS later (a PEM
 * private key). It may start the value or follow any character that is not
 * a token's (a URL's "x:ghp_...@", "Bearer sk-ant-..."). */
struct cf_env_value_row {
	const char *prefix;
	unsigned min_tail;
	bool upper;
	const char *contains;
	const char *holds;
	const char *source;
};

extern const struct cf_env_name_row cf_env_name_table[];
extern const size_t cf_env_name_count;
extern const struct cf_env_pattern_row cf_env_pattern_table[];
extern const size_t cf_env_pattern_count;
extern const struct cf_env_value_row cf_env_value_table[];
extern const size_t cf_env_value_count;

/* The user's own rules, prepared before any fork and read only afterwards.
 * DENY entries may be patterns; KEEP entries are whole names. */
struct cf_env_rules {
	char *const *deny;
	size_t n_deny;
	char *const *keep;
	size_t n_keep;
};

/* Whether the entry ENTRY ("NAME=value"; an entry without '=' is judged by
 * its name) is withheld under R (NULL: the tables alone), and why. */
enum cf_env_why cf_env_secret(const char *entry, const struct cf_env_rules *r);

/* Whether NAME (LEN bytes) matches PATTERN: '*' any run, letters of either
 * case. */
bool cf_env_glob(const char *pattern, const char *name, size_t len);

/* Whether NAME (up to '=' or the end) holds one of the words every known name
 * and withholding pattern holds: the screen cf_env_secret() applies first
 * (the tests check the tables against it). */
bool cf_env_name_may_be_secret(const char *name);

/* Whether C is the first character of a value table prefix: the screen of
 * each position of a value (the tests check the table against it). */
bool cf_env_may_start_token(char c);

/* The length of ENTRY's name (up to '=' or the end). */
size_t cf_env_name_len(const char *entry);

/* The word for WHY in status and check: "known name", "name pattern", ... */
const char *cf_env_why_word(enum cf_env_why why);

/* Normal context. Whether S may be a --deny-env (PATTERN true) or
 * --keep-env entry: letters, digits and '_' (and '*' in a pattern), not
 * empty, not only '*'. */
bool cf_env_rule_valid(const char *s, bool pattern);

/* Normal context. ENV less every entry R withholds, in place, in order; each
 * withheld string is overwritten with NUL bytes when it lies in [LO, HI) (the
 * process's first environment, which /proc/PID/environ shows; 0, 0: none).
 * Returns how many were withheld. */
size_t cf_env_drop_secrets(char **env, const struct cf_env_rules *r, unsigned long lo,
			   unsigned long hi);

/* Normal context. ENV keeps every entry, but each one R withholds that lies
 * in [LO, HI) is copied to the heap (ENV then points at the copy) and
 * overwritten with NUL bytes where it was: a process that keeps its secrets
 * (the harness) without /proc/PID/environ showing them. 0, or -ENOMEM with
 * ENV as it was from that entry on. */
int cf_env_move_secrets(char **env, const struct cf_env_rules *r, unsigned long lo,
			unsigned long hi);

#endif
