/* The secret environment variables: the tables beside the secret file table
 * (secrets.h), in the same style, and the one judgement every way in uses
 * (credfence run, each child of a harness, self mode, status and check --env).
 *
 * A variable is a secret when
 * - its name is a known one (cf_env_name_table), starts like one
 *   (cf_env_pattern_table: TF_TOKEN_*, OP_SESSION_*), or holds a word that
 *   names a secret (cf_env_word_table: PASSWORD, PASS, PWD, PASSPHRASE,
 *   SECRET, *TOKEN, PAT, API KEY, MASTER KEY, ..., WEBHOOK, COOKIE, DSN,
 *   CONNECTION STRING, a last word AUTH, SESSION or JWT), in any case and
 *   with any prefix or suffix, unless a later word says the variable only
 *   describes it (cf_env_descriptor_table: DB_PASSWORD_FILE, SSH_AUTH_SOCK,
 *   ACTIONS_ID_TOKEN_REQUEST_URL) or the whole name is a known non-secret
 *   (cf_env_keep_table: PWD, DESKTOP_SESSION, STARSHIP_SESSION_KEY);
 * - or its value is, or holds, a token of a shape secret scanners know
 *   (env_shapes.h), a URL with a password, or a secret-named parameter
 *   (?password=, ;AccountKey=, &token=);
 * - or the user named it (--deny-env).
 * --keep-env passes a name whatever the rest says. A secret is withheld:
 * absent from the child's environment.
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
	CF_ENV_PATTERN, /* a name rule: a word (cf_env_word_table) or a prefix */
	CF_ENV_VALUE,   /* the value is or holds a token of a known shape */
	CF_ENV_URL,     /* the value holds a URL with a password, or a secret parameter */
	CF_ENV_USER,    /* --deny-env, CREDFENCE_DENY_ENV */
};

/* What withheld a variable, for status and check: the rule's words, never
 * the value. RULE is the rule as shown ("GITHUB_TOKEN", "PASSWORD",
 * "ghp_"); HOLDS what it holds ("GitHub token", "a password"). */
struct cf_env_reason {
	enum cf_env_why why;
	const char *rule;
	const char *holds;
};

struct cf_env_name_row {
	const char *name;   /* upper case, as its tool documents it */
	size_t len;         /* strlen(name), from the table's macro */
	const char *holds;  /* what it holds */
	const char *source; /* where the name comes from */
};

/* A name prefix (letters of either case). CF_ENV_PATTERN rows withhold; the
 * not-secret rows (names that would be caught, yet hold no secret:
 * PASSWORD_STORE_DIR, GIT_CONFIG_KEY_0) and CREDFENCE_* pass before any other
 * rule, value included. */
struct cf_env_pattern_row {
	const char *pattern; /* as shown: "TF_TOKEN_*" */
	const char *word;    /* upper case, without the '*': "TF_TOKEN_" */
	size_t len;          /* strlen(word) */
	const char *holds;
	bool not_secret;
};

/* A word of a name that names a secret. A name is cut into words at every
 * character that is not a letter or a digit and where camelCase changes
 * case (npm_config__authToken: NPM CONFIG AUTH TOKEN); the digits that end
 * a word are not compared (DB_PASS2 is DB PASS). */
enum cf_env_word_at {
	CF_WORD_IS,    /* the word itself: PASS, not BYPASS or ASKPASS */
	CF_WORD_ENDS,  /* a word ending in it: TOKEN, AUTHTOKEN, not TOKENIZERS */
	CF_WORD_HOLDS, /* a word holding it: PASSWORD, PGPASSWORD, PASSWORDS */
	CF_WORD_PAIR,  /* two words, "API KEY", or one word ending in both, APIKEY */
};

struct cf_env_word_row {
	const char *word; /* upper case; a CF_WORD_PAIR row "API KEY" */
	size_t len;       /* strlen(word), from the table's macro */
	enum cf_env_word_at at;
	bool last;   /* only as the name's last word (digits aside): LLM_KEY, not KEY_ID */
	bool plural; /* its plural too: API_KEYS */
	bool url;    /* its value is a URL: a later URL, URI or ENDPOINT word does not
			describe it (SLACK_WEBHOOK_URL) */
	bool param;  /* only in a value's parameter (?sig=), not a variable's name */
	unsigned anchor; /* the cf_env_anchor bit its word holds (a test checks it) */
	const char *holds;
	const char *source;
};

/* A word that, after a secret's word, says the variable only describes the
 * secret: where it is (DB_PASSWORD_FILE, SSH_AUTH_SOCK), what runs to get
 * it (PASSWORD_COMMAND), or a setting of it (SESSION_ID, TOKEN_TYPE,
 * KEY_ID). URL rows do not describe a secret whose value is a URL. */
struct cf_env_descriptor_row {
	const char *word;
	size_t len;
	bool url;
	const char *why;
};

/* A whole name that the word rules would withhold and that holds no secret. */
struct cf_env_keep_row {
	const char *name;
	const char *why;
};

extern const struct cf_env_name_row cf_env_name_table[];
extern const size_t cf_env_name_count;
extern const struct cf_env_pattern_row cf_env_pattern_table[];
extern const size_t cf_env_pattern_count;
extern const struct cf_env_word_row cf_env_word_table[];
extern const size_t cf_env_word_count;
extern const struct cf_env_descriptor_row cf_env_descriptor_table[];
extern const size_t cf_env_descriptor_count;
extern const struct cf_env_keep_row cf_env_keep_table[];
extern const size_t cf_env_keep_count;

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

/* The same, and what withheld it in *OUT (when not NULL). */
enum cf_env_why cf_env_judge(const char *entry, const struct cf_env_rules *r,
			     struct cf_env_reason *out);

/* The word rules on the name NAME (LEN bytes): the row that withholds it, or
 * NULL. PARAM: NAME is a parameter inside a value (?sig=, ;Password=), which
 * the keep list and the known names do not concern. */
const struct cf_env_word_row *cf_env_name_words(const char *name, size_t len, bool param);

/* Sets *OUT (when not NULL) to WHY, RULE and HOLDS; returns WHY. */
enum cf_env_why cf_env_reason_set(struct cf_env_reason *out, enum cf_env_why why, const char *rule,
				  const char *holds);

/* Whether NAME (LEN bytes) matches PATTERN: '*' any run, letters of either
 * case. */
bool cf_env_glob(const char *pattern, const char *name, size_t len);

/* The bits of the words the word rules look for (PASS, PWD, SECRET, TOKEN,
 * KEY, AUTH, ...) that NAME (up to '=' or the end) holds: the screen
 * cf_env_secret() applies first. A name that holds none is no known name
 * and no word rule's (the tests check the tables against it). */
unsigned cf_env_anchors(const char *name, size_t len);

/* The anchors: a word of the word rules holds its row's (a test checks
 * it). */
struct cf_env_anchor_row {
	char word[6]; /* upper case */
	unsigned bit;
};
extern const struct cf_env_anchor_row cf_env_anchor_table[];
extern const size_t cf_env_anchor_count;

/* The screen of each pair of letters of a name: for each letter's code
 * (A 1 to Z 26, either case; 0 any other byte; the end of a name
 * CF_ENV_ANCHOR_END), the bits of the codes of the letters that follow it
 * at the start of an anchor. */
#define CF_ENV_ANCHOR_END 27
extern const unsigned cf_env_anchor_seconds[CF_ENV_ANCHOR_END + 1];

/* The length of ENTRY's name (up to '=' or the end). Between fork and exec
 * too: inline, so a child's launch runs it in its own file. */
static inline size_t cf_env_name_len(const char *entry)
{
	size_t n = 0;
	while (entry[n] && entry[n] != '=')
		n++;
	return n;
}

/* The word for WHY in status and check: "known name", "name rule", ... */
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
 * (the harness) without /proc/PID/environ showing them. M (NULL: none) gives
 * the verdicts it holds (env_memo.h), made by the same R. 0, or -ENOMEM with
 * ENV as it was from that entry on. */
struct cf_env_memo;
int cf_env_move_secrets(char **env, const struct cf_env_rules *r, const struct cf_env_memo *m,
			unsigned long lo, unsigned long hi);

#endif
