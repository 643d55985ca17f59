/* The secret variable tables and their one judgement (common/secret_env.h,
 * issue 20), as a unit: each known name, each pattern (as written and in
 * lower case), each token prefix under an innocent name is withheld; the
 * ordinary variables of developer tools pass; the user's rules; dropping in
 * place; the env_withheld log line names and never shows a value. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envcases.h"
#include "event.h"
#include "secret_env.h"

#define TAG "CFMARK-0123456789ab"

Test(secret_env, every_case_is_withheld)
{
	size_t n;
	struct cf_envcase *c = cf_envcases_secrets(TAG, &n);
	cr_assert_geq(n, cf_env_name_count + cf_env_value_count + 20);
	for (size_t i = 0; i < n; i++)
		cr_expect_neq(cf_env_secret(c[i].entry, NULL), CF_ENV_PASS, "passed (%s): %s",
			      c[i].why, c[i].entry);
	cf_envcases_free(c, n);
}

/* The screen cf_env_secret applies first must let every table name and
 * pattern word through, or a row would never withhold. */
Test(secret_env, every_row_passes_the_screen)
{
	for (size_t i = 0; i < cf_env_name_count; i++) {
		cr_expect(cf_env_name_may_be_secret(cf_env_name_table[i].name), "%s",
			  cf_env_name_table[i].name);
		cr_expect_eq(strlen(cf_env_name_table[i].name), cf_env_name_table[i].len);
	}
	for (size_t i = 0; i < cf_env_pattern_count; i++) {
		const struct cf_env_pattern_row *p = &cf_env_pattern_table[i];
		cr_expect(p->not_secret || cf_env_name_may_be_secret(p->word), "%s", p->pattern);
		cr_expect_eq(strlen(p->word), p->len);
		cr_expect(cf_env_glob(p->pattern, p->word, p->len), "%s does not match its word",
			  p->pattern);
	}
	for (size_t i = 0; i < cf_env_value_count; i++)
		cr_expect(cf_env_may_start_token(cf_env_value_table[i].prefix[0]), "%s",
			  cf_env_value_table[i].prefix);
	cr_expect_not(cf_env_name_may_be_secret("PATH"));
	cr_expect_not(cf_env_name_may_be_secret("TOKENIZERS_PARALLELISM") == false);
}

Test(secret_env, the_rule_that_withholds_is_the_expected_one)
{
	cr_expect_eq(cf_env_secret("ANTHROPIC_API_KEY=x", NULL), CF_ENV_NAME);
	cr_expect_eq(cf_env_secret("anthropic_api_key=x", NULL), CF_ENV_NAME);
	cr_expect_eq(cf_env_secret("MYAPP_TOKEN=x", NULL), CF_ENV_PATTERN);
	cr_expect_eq(cf_env_secret("myapp_token=x", NULL), CF_ENV_PATTERN);
	cr_expect_eq(cf_env_secret("MY_VAR=ghp_0123456789abcdefghijABCDEFGHIJ0123", NULL),
		     CF_ENV_VALUE);
	cr_expect_eq(cf_env_secret("MY_VAR=AKIAIOSFODNN7EXAMPLE", NULL), CF_ENV_VALUE);
	cr_expect_eq(cf_env_secret("NO_VALUE_TOKEN", NULL), CF_ENV_PATTERN, "an entry without =");
	cr_expect_eq(cf_env_secret("STRIPE_LIVE_SECRET_KEY=x", NULL), CF_ENV_PATTERN);
	/* A name of any length is judged whole. */
	static char longname[1100];
	memset(longname, 'A', 1000);
	strcpy(longname + 1000, "_token=x");
	cr_expect_eq(cf_env_secret(longname, NULL), CF_ENV_PATTERN, "a long *_TOKEN name passed");
	memcpy(longname, "TF_TOKEN_", 9);
	strcpy(longname + 1000, "=x");
	cr_expect_eq(cf_env_secret(longname, NULL), CF_ENV_PATTERN);
	longname[0] = 'X';
	cr_expect_eq(cf_env_secret(longname, NULL), CF_ENV_PASS);
}

/* A URL with a password in it is withheld: DATABASE_URL and the like. */
Test(secret_env, a_url_with_a_password)
{
	static const char *const held[] = {
		"DATABASE_URL=postgres://app:" TAG "@db.internal:5432/app",
		"REDIS_URL=redis://:" TAG "@cache:6379/0",
		"MY_REMOTES=origin https://oauth2:" TAG "@gitlab.example.com/g/r.git",
		"https_proxy=http://user:" TAG "@proxy:3128",
	};
	for (size_t i = 0; i < sizeof held / sizeof *held; i++)
		cr_expect_eq(cf_env_secret(held[i], NULL), CF_ENV_URL, "passed: %s", held[i]);
	static const char *const ok[] = {
		"ANTHROPIC_BASE_URL=https://api.anthropic.com/v1",
		"GIT_URL=ssh://git@github.com:22/o/r.git",
		"SENTRY_DSN=https://0123abcd@o1.ingest.sentry.io/42", /* a user, no password */
		"MY_URL=https://user:@host/", "MY_URL=http://host:8080/a@b",
		"MY_URL=https://example.com/?u=a:b@c", "NO_PROXY=localhost,127.0.0.1",
		"MY_VAR=a://b", "MY_VAR=://:@", "MY_VAR=x:", "MY_VAR=",
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
		cr_expect_eq(cf_env_secret(ok[i], NULL), CF_ENV_PASS, "withheld: %s", ok[i]);
}

/* A token inside a value is withheld too: a URL or a header that holds one. */
Test(secret_env, a_token_inside_a_value)
{
	static const char *const held[] = {
		"GIT_REMOTE=https://x-access-token:ghp_0123456789abcdefghijABCDEFGHIJ01@github.com/o/r",
		"AUTH_HEADER_VALUE=Bearer sk-ant-api03-0123456789abcdefghij",
		"MY_VAR=id AKIAIOSFODNN7EXAMPLE in it",
		"MY_VAR=key: -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
		"MY_VAR=a,glpat-0123456789abcdefghij",
	};
	for (size_t i = 0; i < sizeof held / sizeof *held; i++)
		cr_expect_eq(cf_env_secret(held[i], NULL), CF_ENV_VALUE, "passed: %s", held[i]);
	static const char *const ok[] = {
		"PATH=/home/u/.npm_packages/bin:/usr/bin", /* npm_ with a short tail */
		"MY_VAR=xghp_0123456789abcdefghijABCDEFGHIJ01", /* inside a word */
		"MY_VAR=AKIAIOSFODNN7EXAMPLEX", "MY_VAR=noAKIAIOSFODNN7EXAMPLE",
		"LS_COLORS=rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:*.tar=01;31",
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
		cr_expect_eq(cf_env_secret(ok[i], NULL), CF_ENV_PASS, "withheld: %s", ok[i]);
}

/* A value that only starts like a token, or is too short, or holds other
 * characters, is not one: no false positive on ordinary values. */
Test(secret_env, values_that_are_not_tokens_pass)
{
	static const char *const ok[] = {
		"HF_HUB_ENABLE_HF_TRANSFER=hf_transfer", /* hf_ + too short a tail */
		"MY_VAR=ghp_", "MY_VAR=ghp_short", "MY_VAR=npm_config_cache",
		"MY_VAR=ghp_0123456789abcdefghij ABCDEFGHIJ0123", /* a space: 20 after ghp_ */
		"MY_VAR=ghp_0123456789abcdefghij/ABCDEFGHIJ0123", /* a path: 20 after ghp_ */
		"MY_VAR=AKIAIOSFODNN7EXAMPLEX", /* 17 after AKIA */
		"MY_VAR=AKIAiosfodnn7example", /* lower case */
		"MY_VAR=-----BEGIN CERTIFICATE-----", "MY_VAR=-----BEGIN PUBLIC KEY-----xyz",
		"MY_VAR=sk-", "MY_VAR=xoxb-1", "MY_VAR=", "MY_VAR",
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
		cr_expect_eq(cf_env_secret(ok[i], NULL), CF_ENV_PASS, "withheld: %s", ok[i]);
}

Test(secret_env, ordinary_variables_pass)
{
	cr_assert_geq(cf_env_ordinary_count, 50);
	for (size_t i = 0; i < cf_env_ordinary_count; i++) {
		char e[256];
		snprintf(e, sizeof e, "%s=/usr/local/%s", cf_env_ordinary[i].name,
			 cf_env_ordinary[i].name);
		cr_expect_eq(cf_env_secret(e, NULL), CF_ENV_PASS, "withheld: %s", e);
		cr_expect_eq(cf_env_secret(cf_env_ordinary_entry(cf_env_ordinary[i].name), NULL),
			     CF_ENV_PASS, "withheld: %s", cf_env_ordinary[i].name);
	}
}

Test(secret_env, user_rules)
{
	char *deny[] = {"MYCO_*", "EXACT_NAME"};
	char *keep[] = {"GH_TOKEN", "MYCO_PUBLIC"};
	struct cf_env_rules r = {deny, 2, keep, 2};
	cr_expect_eq(cf_env_secret("MYCO_THING=x", &r), CF_ENV_USER);
	cr_expect_eq(cf_env_secret("myco_thing=x", &r), CF_ENV_USER);
	cr_expect_eq(cf_env_secret("EXACT_NAME=x", &r), CF_ENV_USER);
	cr_expect_eq(cf_env_secret("EXACT_NAME_2=x", &r), CF_ENV_PASS);
	cr_expect_eq(cf_env_secret("MYCO_PUBLIC=x", &r), CF_ENV_PASS, "keep wins over deny");
	/* --keep-env passes exactly the one named */
	cr_expect_eq(cf_env_secret("GH_TOKEN=x", &r), CF_ENV_PASS);
	cr_expect_eq(cf_env_secret("GITHUB_TOKEN=x", &r), CF_ENV_NAME);
	cr_expect_eq(cf_env_secret("GH_TOKEN2=x", &r), CF_ENV_PASS);
	cr_expect_eq(cf_env_secret("XGH_TOKEN=x", &r), CF_ENV_PATTERN, "kept by whole name only");
	cr_expect_eq(cf_env_secret("GH_TOKE=x", &r), CF_ENV_PASS);
	/* CREDFENCE_* is ours: never withheld, not even by the user */
	char *all[] = {"CREDFENCE_*"};
	struct cf_env_rules r2 = {all, 1, NULL, 0};
	cr_expect_eq(cf_env_secret("CREDFENCE_WORKSPACE=/w", &r2), CF_ENV_PASS);
}

Test(secret_env, glob)
{
	cr_expect(cf_env_glob("*_TOKEN", "A_TOKEN", 7));
	cr_expect(cf_env_glob("*_TOKEN", "_TOKEN", 6));
	cr_expect_not(cf_env_glob("*_TOKEN", "TOKEN", 5));
	cr_expect_not(cf_env_glob("*_TOKEN", "A_TOKENS", 8));
	cr_expect(cf_env_glob("*PASSWORD*", "PASSWORD", 8));
	cr_expect(cf_env_glob("*_SECRET_*", "A_SECRET_B_SECRET_", 18));
	cr_expect(cf_env_glob("*a*b*c", "xaxbxbxc", 8));
	cr_expect_not(cf_env_glob("*a*b*c", "xaxbxbxcx", 9));
	cr_expect(cf_env_glob("ABC", "abc=ignored", 3), "only LEN bytes are the name");
	cr_expect_not(cf_env_glob("ABC", "ab", 2));
	cr_expect(cf_env_glob("**", "", 0));
}

Test(secret_env, rule_validity)
{
	cr_expect(cf_env_rule_valid("GH_TOKEN", false));
	cr_expect(cf_env_rule_valid("API_*", true));
	cr_expect_not(cf_env_rule_valid("API_*", false), "--keep-env takes no pattern");
	cr_expect_not(cf_env_rule_valid("", true));
	cr_expect_not(cf_env_rule_valid("*", true), "a pattern of only '*' withholds everything");
	cr_expect_not(cf_env_rule_valid("A=B", true));
	cr_expect_not(cf_env_rule_valid("A B", true));
	cr_expect_not(cf_env_rule_valid("A-B", true));
	cr_expect_not(cf_env_rule_valid(NULL, true));
}

/* In place, in order; the withheld strings inside [lo, hi) overwritten. */
Test(secret_env, drop_in_place)
{
	char a[] = "PATH=/bin", b[] = "GITHUB_TOKEN=" TAG, c[] = "HOME=/h",
	     d[] = "MY=ghp_" TAG "abcdefghijklmn";
	char *env[] = {a, b, c, d, NULL};
	unsigned long lo = (unsigned long)b < (unsigned long)d ? (unsigned long)b : (unsigned long)d;
	unsigned long hi = lo + 1; /* only the lower of the two is in the area */
	char *first = lo == (unsigned long)b ? b : d, *other = first == b ? d : b;
	size_t first_len = strlen(first), other_len = strlen(other);
	cr_expect_eq(cf_env_drop_secrets(env, NULL, lo, hi), 2);
	cr_expect_eq(env[0], a);
	cr_expect_eq(env[1], c);
	cr_expect_null(env[2]);
	for (size_t i = 0; i < first_len; i++)
		cr_expect_eq(first[i], '\0', "byte %zu of the string in the area is left", i);
	cr_expect_eq(strlen(other), other_len, "a string outside the area is left alone");
}

/* Kept, but moved out of [lo, hi): the harness keeps its key. */
Test(secret_env, move_keeps_and_overwrites)
{
	char a[] = "PATH=/bin", b[] = "GITHUB_TOKEN=" TAG;
	char *env[] = {a, b, NULL};
	cr_assert_eq(cf_env_move_secrets(env, NULL, (unsigned long)b, (unsigned long)b + 1), 0);
	cr_expect_eq(env[0], a);
	cr_assert_neq(env[1], b);
	cr_expect_str_eq(env[1], "GITHUB_TOKEN=" TAG);
	cr_expect_null(env[2]);
	for (size_t i = 0; i < sizeof b - 1; i++)
		cr_expect_eq(b[i], '\0', "byte %zu left", i);
	free(env[1]);
}

Test(secret_env, log_line_names_and_never_values)
{
	char *env[] = {"PATH=/bin", "GITHUB_TOKEN=" TAG, "MY=ghp_" TAG "abcdefghijklmn",
		       "HOME=/h", NULL};
	int p[2];
	char buf[1024], line[2048];
	cr_assert_eq(pipe(p), 0);
	cr_expect_eq(cf_event_env_write(p[1], 42, "/usr/bin/sh", env, NULL, buf, sizeof buf), 2);
	cr_expect_eq(cf_event_env_write(p[1], 42, "sh", (char *[]){"PATH=/bin", NULL}, NULL, buf,
					sizeof buf),
		     0, "nothing withheld: no line");
	close(p[1]);
	ssize_t n = read(p[0], line, sizeof line - 1);
	close(p[0]);
	cr_assert_gt(n, 0);
	line[n] = '\0';
	cr_expect_str_eq(line, "{\"event\":\"env_withheld\",\"pid\":42,\"program\":\"/usr/bin/sh\","
			       "\"names\":[\"GITHUB_TOKEN\",\"MY\"]}\n");
	cr_expect_null(strstr(line, TAG));
}

/* Too many names for the buffer: cut, and said so, still one valid line. */
Test(secret_env, log_line_cut)
{
	static char names[200][64];
	char *env[201];
	for (int i = 0; i < 200; i++) {
		snprintf(names[i], sizeof names[i], "SERVICE_NUMBER_%03d_TOKEN=" TAG, i);
		env[i] = names[i];
	}
	env[200] = NULL;
	int p[2];
	char buf[1024], line[4096];
	cr_assert_eq(pipe(p), 0);
	cr_expect_eq(cf_event_env_write(p[1], 1, "x", env, NULL, buf, sizeof buf), 200);
	close(p[1]);
	ssize_t n = read(p[0], line, sizeof line - 1);
	close(p[0]);
	cr_assert_gt(n, 0);
	line[n] = '\0';
	cr_expect(strstr(line, "],\"names_cut\":true}\n"), "%s", line);
	cr_expect_null(strstr(line, ",]"));
	cr_expect_lt((size_t)n, sizeof buf);
	cr_expect_null(strstr(line, TAG));
}
