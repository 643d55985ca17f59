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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "secret_env.h"

/* ---- In the parent: normal context ---- */

struct cf_env_memo;

/* Normal context. The memo of ENVP's entries judged under R (as
 * cf_env_secret does), or NULL when out of memory (then every entry is judged
 * at each launch, as without it). Entries of over 1 MiB are not kept. */
struct cf_env_memo *cf_env_memo_build(char *const *envp, const struct cf_env_rules *r);


/* How many entries M knows (a test's and the benchmark's check). */
size_t cf_env_memo_count(const struct cf_env_memo *m);

void cf_env_memo_free(struct cf_env_memo *m);

/* ---- In the child too: no allocation, no libc state ----
 * Here, inline, so that a launch's lookup runs in the caller's file. */

/* One entry: a kept one with its bytes (COPY), a withheld one with the sum
 * of its bytes only. KEY 0: an empty slot. */
struct cf_env_memo_slot {
	uint64_t key;
	uint64_t sum;
	const char *copy;
	size_t len;
};

/* Made by cf_env_memo_build only; here for the lookup below. */
struct cf_env_memo {
	size_t mask;  /* the slots less one (a power of two, at least twice the entries) */
	size_t count; /* the entries */
	size_t size;  /* the bytes mapped */
	struct cf_env_memo_slot slots[];
};

static inline uint64_t cf_memo_mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static inline uint64_t cf_memo_word_at(const char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* Where to look: the length and the first and last 16 bytes (most entries
 * differ there). Never 0. */
static inline uint64_t cf_memo_key(const char *e, size_t n)
{
	uint64_t h = cf_memo_mix(0x243f6a8885a308d3ull, n);
	if (n >= 16) {
		h = cf_memo_mix(h, cf_memo_word_at(e));
		h = cf_memo_mix(h, cf_memo_word_at(e + 8));
		h = cf_memo_mix(h, cf_memo_word_at(e + n - 16));
		h = cf_memo_mix(h, cf_memo_word_at(e + n - 8));
	} else {
		for (size_t i = 0; i < n; i++)
			h = cf_memo_mix(h, (unsigned char)e[i]);
	}
	return h ? h : 1;
}

/* The sum of all N bytes of E (FNV-1a, 64 bits, then mixed with N). */
static inline uint64_t cf_memo_sum(const char *e, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)e[i]) * 0x100000001b3ull;
	return cf_memo_mix(h, n);
}

/* 1 when the memo withholds ENTRY, 0 when it keeps it, -1 when it does not
 * know those bytes (M NULL: never). */
static inline int cf_env_memo_find(const struct cf_env_memo *m, const char *entry)
{
	if (!m || !entry)
		return -1;
	size_t n = strlen(entry);
	uint64_t k = cf_memo_key(entry, n), s = 0;
	bool summed = false;
	for (size_t i = k & m->mask;; i = (i + 1) & m->mask) {
		const struct cf_env_memo_slot *sl = &m->slots[i];
		if (!sl->key)
			return -1;
		if (sl->key != k || sl->len != n)
			continue;
		if (sl->copy) {
			if (memcmp(sl->copy, entry, n) == 0)
				return 0;
			continue;
		}
		if (!summed)
			s = cf_memo_sum(entry, n), summed = true;
		if (sl->sum == s)
			return 1;
	}
}

#endif
