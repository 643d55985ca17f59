/* The harness's environment judged once: see env_memo.h. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "env_memo.h"

#define MEMO_ENTRY_MAX (1u << 20)

/* Normal context only: the lookup is env_memo.h's. */

size_t cf_env_memo_count(const struct cf_env_memo *m)
{
	return m ? m->count : 0;
}

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
	size_t head = sizeof(struct cf_env_memo) + slots * sizeof(struct cf_env_memo_slot);
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
		uint64_t k = cf_memo_key(e, len);
		size_t at = k & m->mask;
		while (m->slots[at].key)
			at = (at + 1) & m->mask;
		struct cf_env_memo_slot *sl = &m->slots[at];
		if (cf_env_secret(e, r) != CF_ENV_PASS) {
			sl->sum = cf_memo_sum(e, len);
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
