/* The harness's environment judged once (common/env_memo.h, issue 35): the
 * memo's verdict is the judgement's for every entry it was built from
 * (every secret case and the corpus's non-secrets), under the user's rules
 * too; and it knows nothing else, not even an entry of the same length and
 * the same first and last 16 bytes (where its search looks first), kept or
 * withheld. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_memo.h"
#include "envcases.h"
#include "secret_env.h"

#define TAG "CFMARK-00aa11bb22cc"

/* Every case and every non-secret of the corpus, in one environment. */
static char **all_cases(size_t *n, struct cf_envcase **s, size_t *ns, struct cf_envcase **p,
			size_t *np)
{
	*s = cf_envcases_secrets(TAG, ns);
	*p = cf_envcases_passing(TAG, false, np);
	char **env = calloc(*ns + *np + 1, sizeof *env);
	cr_assert(env);
	*n = 0;
	for (size_t i = 0; i < *ns; i++)
		env[(*n)++] = (*s)[i].entry;
	for (size_t i = 0; i < *np; i++)
		env[(*n)++] = (*p)[i].entry;
	return env;
}

Test(env_memo, its_verdict_is_the_judgements_for_every_entry)
{
	size_t n, ns, np;
	struct cf_envcase *s, *p;
	char **env = all_cases(&n, &s, &ns, &p, &np);
	cr_assert_gt(ns, 300);
	cr_assert_gt(np, 100);
	struct cf_env_memo *m = cf_env_memo_build(env, NULL);
	cr_assert(m);
	size_t withheld = 0;
	for (size_t i = 0; i < n; i++) {
		int want = cf_env_secret(env[i], NULL) != CF_ENV_PASS;
		withheld += want;
		cr_expect_eq(cf_env_memo_find(m, env[i]), want, "%s", env[i]);
		/* The same bytes elsewhere: found by content, not by address. */
		char *copy = strdup(env[i]);
		cr_assert(copy);
		cr_expect_eq(cf_env_memo_find(m, copy), want, "a copy of %s", env[i]);
		free(copy);
	}
	cr_expect_eq(withheld, ns, "the cases: every secret withheld, every other kept");
	cr_expect_leq(cf_env_memo_count(m), n);
	cf_env_memo_free(m);
	free(env);
	cf_envcases_free(s, ns);
	cf_envcases_free(p, np);
}

/* The user's rules are the memo's: --keep-env passes a name it withholds
 * otherwise, --deny-env withholds one it passes. */
Test(env_memo, it_judges_by_the_users_rules)
{
	char *env[] = {"DB_PASS=fake-db-password", "BUILD_FLAVOR=debug", NULL};
	char *keep[] = {"DB_PASS"}, *deny[] = {"BUILD_*"};
	struct cf_env_rules r = {.deny = deny, .n_deny = 1, .keep = keep, .n_keep = 1};
	struct cf_env_memo *plain = cf_env_memo_build(env, NULL), *ruled = cf_env_memo_build(env, &r);
	cr_assert(plain && ruled);
	cr_expect_eq(cf_env_memo_find(plain, env[0]), 1);
	cr_expect_eq(cf_env_memo_find(plain, env[1]), 0);
	cr_expect_eq(cf_env_memo_find(ruled, env[0]), 0);
	cr_expect_eq(cf_env_memo_find(ruled, env[1]), 1);
	cf_env_memo_free(plain);
	cf_env_memo_free(ruled);
}

/* The harness moves its secrets out of its first environment by the memo's
 * verdicts, judged once (cf_env_move_secrets with a memo): what the memo
 * keeps stays where it is, what it withholds is moved and overwritten. */
Test(env_memo, the_harness_moves_what_the_memo_withholds)
{
	char a[] = "DB_PASS=fake-db-password", b[] = "GITHUB_TOKEN=fake-token";
	char *env[] = {a, b, NULL};
	char *keep[] = {"DB_PASS"};
	struct cf_env_rules r = {.keep = keep, .n_keep = 1};
	struct cf_env_memo *m = cf_env_memo_build(env, &r);
	cr_assert(m);
	/* No rules given to the move itself: the verdicts are the memo's. */
	unsigned long x = (unsigned long)a, y = (unsigned long)b;
	unsigned long lo = x < y ? x : y, hi = (x > y ? x : y) + sizeof a + sizeof b;
	cr_assert_eq(cf_env_move_secrets(env, NULL, m, lo, hi), 0);
	cr_expect_eq(env[0], a, "kept by the memo's --keep-env, yet moved");
	cr_assert_neq(env[1], b);
	cr_expect_str_eq(env[1], "GITHUB_TOKEN=fake-token");
	cr_expect_eq(b[0], '\0');
	free(env[1]);
	cf_env_memo_free(m);
}

/* An entry of the same length and ends as a known one, that differs only in
 * the middle, is not known: the harness changed it since its start (a
 * GitHub token where there was none), and it is judged again. */
Test(env_memo, the_same_ends_and_length_are_not_the_same_entry)
{
	char kept[] = "CF_NOTE=aaaaaaaaaaaaaaaa/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/bbbbbbbbbbbbbbbb";
	char token[] = "CF_NOTE=aaaaaaaaaaaaaaaa/ghp_MemoTest0123456789abcdefghijklmnopqr/bbbbbbbbbbbbbbbb";
	char secret[] = "DB_PASS=aaaaaaaaaaaaaaaa/one-fake-password-of-forty-bytes-long!!/bbbbbbbbbbbbbbbb";
	char other[] = "DB_PASS=aaaaaaaaaaaaaaaa/two-fake-password-of-forty-bytes-long!!/bbbbbbbbbbbbbbbb";
	cr_assert_eq(strlen(kept), strlen(token));
	cr_assert_eq(strlen(secret), strlen(other));
	cr_assert_eq(cf_env_secret(kept, NULL), CF_ENV_PASS);
	cr_assert_neq(cf_env_secret(token, NULL), CF_ENV_PASS, "the token's shape is known");
	cr_assert_neq(cf_env_secret(secret, NULL), CF_ENV_PASS);
	char *env[] = {kept, secret, NULL};
	struct cf_env_memo *m = cf_env_memo_build(env, NULL);
	cr_assert(m);
	cr_expect_eq(cf_env_memo_find(m, kept), 0);
	cr_expect_eq(cf_env_memo_find(m, secret), 1);
	cr_expect_eq(cf_env_memo_find(m, token), -1, "a changed middle was taken as known");
	cr_expect_eq(cf_env_memo_find(m, other), -1, "a changed secret was taken as known");
	/* One byte more, or less, is another entry too. */
	kept[strlen(kept) - 1] = '\0';
	cr_expect_eq(cf_env_memo_find(m, kept), -1);
	cr_expect_eq(cf_env_memo_find(m, "CF_NOTE=aaaaaaaaaaaaaaaa/"), -1);
	cf_env_memo_free(m);
}

/* Short entries (under 16 bytes, every byte looked at), an entry given
 * twice, the empty environment, no memo at all. */
Test(env_memo, short_twice_empty_and_none)
{
	char *env[] = {"A=1", "A=1", "A=2", "PWD=/w", "TOKEN=x", "", NULL};
	struct cf_env_memo *m = cf_env_memo_build(env, NULL);
	cr_assert(m);
	cr_expect_eq(cf_env_memo_count(m), 5, "an entry given twice is kept once");
	cr_expect_eq(cf_env_memo_find(m, "A=1"), 0);
	cr_expect_eq(cf_env_memo_find(m, "A=2"), 0);
	cr_expect_eq(cf_env_memo_find(m, "A=3"), -1);
	cr_expect_eq(cf_env_memo_find(m, "PWD=/w"), 0);
	cr_expect_eq(cf_env_memo_find(m, "TOKEN=x"), 1);
	cr_expect_eq(cf_env_memo_find(m, "TOKEN=y"), -1);
	cr_expect_eq(cf_env_memo_find(m, ""), 0);
	cr_expect_eq(cf_env_memo_find(m, NULL), -1);
	cf_env_memo_free(m);
	char *none[] = {NULL};
	struct cf_env_memo *e = cf_env_memo_build(none, NULL);
	cr_assert(e);
	cr_expect_eq(cf_env_memo_count(e), 0);
	cr_expect_eq(cf_env_memo_find(e, "A=1"), -1);
	cf_env_memo_free(e);
	cr_expect_eq(cf_env_memo_find(NULL, "A=1"), -1);
	cr_expect_eq(cf_env_memo_count(NULL), 0);
	cf_env_memo_free(NULL);
}

/* As many entries as a child may carry (CF_CHILD_ENV_MAX, 4096), each
 * found; an entry of over 1 MiB is not kept, and is judged at each launch. */
Test(env_memo, many_entries_and_a_huge_one)
{
	enum { N = 4096 };
	char **env = calloc(N + 2, sizeof *env);
	cr_assert(env);
	for (size_t i = 0; i < N; i++)
		cr_assert(asprintf(&env[i], "%s_%05zu=/opt/tool/%zu/bin", i % 7 ? "VAR" : "MY_TOKEN", i, i) > 0);
	size_t big = (1u << 20) + 8;
	env[N] = malloc(big + 1);
	cr_assert(env[N]);
	memset(env[N], 'v', big);
	memcpy(env[N], "BIG=", 4);
	env[N][big] = '\0';
	struct cf_env_memo *m = cf_env_memo_build(env, NULL);
	cr_assert(m);
	cr_expect_eq(cf_env_memo_count(m), N);
	size_t withheld = 0;
	for (size_t i = 0; i < N; i++) {
		int want = cf_env_secret(env[i], NULL) != CF_ENV_PASS;
		withheld += want;
		cr_expect_eq(cf_env_memo_find(m, env[i]), want, "%s", env[i]);
	}
	cr_expect_eq(withheld, (N + 6) / 7, "every MY_TOKEN_ withheld, every VAR_ kept");
	cr_expect_eq(cf_env_memo_find(m, env[N]), -1);
	cf_env_memo_free(m);
	for (size_t i = 0; i <= N; i++)
		free(env[i]);
	free(env);
}

/* Nothing can change a verdict after the build: its pages are read only.
 * (Not under AddressSanitizer, which reports the fault itself.) */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CF_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CF_ASAN 1
#endif
#ifndef CF_ASAN
Test(env_memo, it_can_not_be_written, .signal = SIGSEGV)
{
	char *env[] = {"TOKEN=x", NULL};
	struct cf_env_memo *m = cf_env_memo_build(env, NULL);
	cr_assert(m);
	memset((void *)m, 0, sizeof(size_t));
}
#endif
