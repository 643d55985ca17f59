/* The harness's environment judged once: see env_memo.h. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "env_memo.h"

#define MEMO_ENTRY_MAX (1u << 20)

/* One entry: a kept one with its bytes (COPY), a withheld one with the sum
 * of its bytes only. KEY 0: an empty slot. */
struct slot {
	uint64_t key;
	uint64_t sum;
	const char *copy;
	size_t len;
};

struct cf_env_memo {
	size_t mask;  /* the slots less one (a power of two, at least twice the entries) */
	size_t count; /* the entries */
	size_t size;  /* the bytes mapped */
	struct slot slots[];
};

/* ---- between fork and exec from here on: no allocation, no libc state ---- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static uint64_t word_at(const char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* Where to look: the length and the first and last 16 bytes (most entries
 * differ there). Never 0. */
static uint64_t key(const char *e, size_t n)
{
	uint64_t h = mix(0x243f6a8885a308d3ull, n);
	if (n >= 16) {
		h = mix(h, word_at(e));
		h = mix(h, word_at(e + 8));
		h = mix(h, word_at(e + n - 16));
		h = mix(h, word_at(e + n - 8));
	} else {
		for (size_t i = 0; i < n; i++)
			h = mix(h, (unsigned char)e[i]);
	}
	return h ? h : 1;
}

/* The sum of all N bytes of E (FNV-1a, 64 bits, then mixed with N). */
static uint64_t sum(const char *e, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)e[i]) * 0x100000001b3ull;
	return mix(h, n);
}

int cf_env_memo_find(const struct cf_env_memo *m, const char *entry)
{
	if (!m || !entry)
		return -1;
	size_t n = strlen(entry);
	uint64_t k = key(entry, n), s = 0;
	bool summed = false;
	for (size_t i = k & m->mask;; i = (i + 1) & m->mask) {
		const struct slot *sl = &m->slots[i];
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
			s = sum(entry, n), summed = true;
		if (sl->sum == s)
			return 1;
	}
}

size_t cf_env_memo_count(const struct cf_env_memo *m)
{
	return m ? m->count : 0;
}

/* ---- normal context ---- */

struct cf_env_memo *cf_env_memo_build(char *const *envp, const struct cf_env_rules *r)
{
	size_t n = 0, bytes = 0;
	for (; envp && envp[n]; n++) {
		size_t len = strlen(envp[n]);
		if (len <= MEMO_ENTRY_MAX)
			bytes += len;
	}
	size_t slots = 16;
	while (slots < 2 * n)
		slots *= 2;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t head = sizeof(struct cf_env_memo) + slots * sizeof(struct slot);
	size_t size = (head + bytes + page - 1) / page * page;
	void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	struct cf_env_memo *m = map;
	char *to = (char *)map + head;
	m->mask = slots - 1;
	m->size = size;
	for (size_t i = 0; i < n; i++) {
		const char *e = envp[i];
		size_t len = strlen(e);
		if (len > MEMO_ENTRY_MAX || cf_env_memo_find(m, e) >= 0)
			continue; /* too long to keep, or known already */
		uint64_t k = key(e, len);
		size_t at = k & m->mask;
		while (m->slots[at].key)
			at = (at + 1) & m->mask;
		struct slot *sl = &m->slots[at];
		if (cf_env_secret(e, r) != CF_ENV_PASS) {
			sl->sum = sum(e, len);
		} else {
			memcpy(to, e, len);
			sl->copy = to;
			to += len;
		}
		sl->len = len;
		sl->key = k;
		m->count++;
	}
	/* Read only from here: nothing the harness does can change a verdict. */
	if (mprotect(map, size, PROT_READ)) {
		munmap(map, size);
		return NULL;
	}
	return m;
}

void cf_env_memo_free(struct cf_env_memo *m)
{
	if (m)
		munmap(m, m->size);
}
