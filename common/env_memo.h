/* The harness's own environment, judged once (issue 35). Every child of the
 * harness is judged variable by variable (secret_env.h); most of its
 * variables are the harness's own, the same bytes at every launch. The memo
 * holds the verdict of each entry of the environment the harness started
 * with, made at its start by the same judgement and rules, so that a launch
 * judges again only what differs.
 *
 * A verdict is taken from the memo only for the same bytes: a kept entry is
 * compared with a copy of itself, whole; a withheld one (whose bytes the
 * memo does not keep) by its length and a 64-bit sum of all its bytes, which
 * can only withhold more, never let a secret through. Anything else is not
 * known, and is judged as before.
 *
 * The memo is built in normal context and read only afterwards (its pages
 * are made read-only): a lookup is callable between fork and exec. */
#ifndef CF_ENV_MEMO_H
#define CF_ENV_MEMO_H

#include <stddef.h>

#include "secret_env.h"

struct cf_env_memo;

/* Normal context. The memo of ENVP's entries judged under R (as
 * cf_env_secret does), or NULL when out of memory (then every entry is judged
 * at each launch, as without it). Entries of over 1 MiB are not kept. */
struct cf_env_memo *cf_env_memo_build(char *const *envp, const struct cf_env_rules *r);

/* Between fork and exec too. 1 when the memo withholds ENTRY, 0 when it
 * keeps it, -1 when it does not know those bytes (M NULL: never). */
int cf_env_memo_find(const struct cf_env_memo *m, const char *entry);

/* How many entries M knows (a test's and the benchmark's check). */
size_t cf_env_memo_count(const struct cf_env_memo *m);

void cf_env_memo_free(struct cf_env_memo *m);

#endif
