/* The secret variable tables and their one judgement (common/secret_env.h,
 * common/env_shapes.h; issues 20 and 35), as a unit: each known name, each
 * name prefix, each name word in the ways a name holds it, each value shape
 * under an innocent name, and every secret of tests/corpus/env-secrets.txt
 * is withheld; the corpus's developer machine environment and keep list,
 * the ordinary variables of developer tools and thousands of random paths,
 * hashes, UUIDs and base64 blobs pass (no false positive); the tables are
 * checked against the screens the judgement applies first; the user's
 * rules; dropping in place; the env_withheld log line names and never shows
 * a value. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env_shapes.h"
#include "envcases.h"
#include "event.h"
#include "secret_env.h"

#define TAG "CFMARK-0123456789ab"

/* Each case, with the values 64 fixtures would make (each its own tag). */
Test(secret_env, every_case_is_withheld)
{
	for (unsigned k = 0; k < 64; k++) {
		char tag[32];
		snprintf(tag, sizeof tag, "CFMARK-%012llx", 0x0123456789abull * (k + 1) + k);
		size_t n;
		struct cf_envcase *c = cf_envcases_secrets(k ? tag : TAG, &n);
		cr_assert_geq(n, cf_env_name_count + 4 * cf_env_word_count + 2 * cf_env_shape_count + 60);
		for (size_t i = 0; i < n; i++)
			cr_expect_neq(cf_env_secret(c[i].entry, NULL), CF_ENV_PASS, "passed (%s): %s",
				      c[i].why, c[i].entry);
		cf_envcases_free(c, n);
	}
}

/* Each case has a name of its own, and no name of the ordinary variables:
 * the tests of each way in set them all in one environment, where a name
 * given twice would hide a value. */
static int by_name_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t nx = cf_env_name_len(x), ny = cf_env_name_len(y);
	int c = strncmp(x, y, nx < ny ? nx : ny);
	return c ? c : (nx > ny) - (nx < ny);
}

Test(secret_env, every_case_has_a_name_of_its_own)
{
	size_t n, m;
	struct cf_envcase *c = cf_envcases_secrets(TAG, &n);
	struct cf_envcase *p = cf_envcases_passing(TAG, true, &m);
	const char **all = calloc(n + m + cf_env_ordinary_count, sizeof *all);
	char (*ord)[128] = calloc(cf_env_ordinary_count, sizeof *ord);
	cr_assert(all && ord);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		all[k++] = c[i].entry;
	for (size_t i = 0; i < m; i++)
		all[k++] = p[i].entry;
	for (size_t i = 0; i < cf_env_ordinary_count; i++) {
		snprintf(ord[i], sizeof ord[i], "%s=x", cf_env_ordinary[i].name);
		bool in_corpus = false; /* the corpus's value stands for it */
		for (size_t j = 0; j < m; j++)
			in_corpus = in_corpus || by_name_cmp(&p[j].entry, &(const char *){ord[i]}) == 0;
		if (!in_corpus)
			all[k++] = ord[i];
	}
	qsort(all, k, sizeof *all, by_name_cmp);
	for (size_t i = 1; i < k; i++)
		cr_expect_neq(by_name_cmp(&all[i - 1], &all[i]), 0, "twice: %.*s",
			      (int)cf_env_name_len(all[i]), all[i]);
	free(all);
	free(ord);
	cf_envcases_free(c, n);
	cf_envcases_free(p, m);
}

/* The names of issue 35 that reached a fenced program at a9ad501; the
 * corpus holds each with a value of its kind. */
Test(secret_env, the_names_of_issue_35_are_withheld)
{
	static const char *const names[] = {
		"DB_PASS", "SMTP_PASS", "MYSQL_ROOT_PWD", "BORG_PASSPHRASE", "GPG_PASSPHRASE",
		"RAILS_MASTER_KEY", "TS_AUTHKEY", "AZURE_DEVOPS_EXT_PAT", "SLACK_WEBHOOK_URL",
		"JDBC_URL", "SERVICE_URL", "npm_config__authToken", "NPM_CONFIG__AUTH",
		"SESSION_COOKIE", "JWT", "SIGNING_KEY", "ENCRYPTION_KEY", "GITHUB_PAT", "LLM_KEY",
		"MYAPP_OPENAI",
	};
	size_t n, found = 0;
	struct cf_envcase *c = cf_envcases_secrets(TAG, &n);
	for (size_t k = 0; k < sizeof names / sizeof *names; k++)
		for (size_t i = 0; i < n; i++) {
			size_t len = strlen(names[k]);
			if (strncmp(c[i].entry, names[k], len) || c[i].entry[len] != '=')
				continue;
			found++;
			cr_expect_neq(cf_env_secret(c[i].entry, NULL), CF_ENV_PASS, "passed: %s", c[i].entry);
		}
	cr_expect_eq(found, sizeof names / sizeof *names, "the corpus lacks some of the names");
	cf_envcases_free(c, n);
}

/* No false positive: the corpus's developer machine environment and keep
 * list pass, each by its own name. */
Test(secret_env, the_corpus_of_non_secrets_passes)
{
	size_t n;
	struct cf_envcase *c = cf_envcases_passing(TAG, true, &n);
	cr_assert_geq(n, 150);
	size_t withheld = 0;
	for (size_t i = 0; i < n; i++) {
		struct cf_env_reason why;
		if (cf_env_judge(c[i].entry, NULL, &why) == CF_ENV_PASS)
			continue;
		withheld++;
		cr_expect_fail("withheld (%s: %s, %s): %s", cf_env_why_word(why.why), why.rule, why.holds,
			       c[i].entry);
	}
	cr_expect_eq(withheld, 0, "%zu false positives in %zu variables", withheld, n);
	cf_envcases_free(c, n);
}

/* No false positive on what a machine's values are made of, at random:
 * paths, hashes, UUIDs, base64 (standard and URL-safe), numbers, words
 * joined by '-' and '_', under innocent names (xorshift: the same each run). */
static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static unsigned next(unsigned n)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static void pick(char *out, size_t len, const char *alpha)
{
	size_t an = strlen(alpha);
	for (size_t i = 0; i < len; i++)
		out[i] = alpha[next((unsigned)an)];
	out[len] = '\0';
}

Test(secret_env, random_machine_values_pass)
{
	static const char *const alphas[] = {
		"0123456789abcdef", "0123456789ABCDEF",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
		"abcdefghijklmnopqrstuvwxyz/._-", "0123456789:.,;",
	};
	static char value[4096], entry[4200], part[512];
	size_t tried = 0, withheld = 0;
	for (int round = 0; round < 4000; round++) {
		size_t k = 0;
		int parts = 1 + (int)next(6);
		for (int p = 0; p < parts && k < 3000; p++) {
			switch (next(5)) {
			case 0: /* a hash */
				pick(part, next(2) ? 40 : 64, alphas[next(2)]);
				break;
			case 1: /* a UUID */
				pick(part, 36, alphas[0]);
				part[8] = part[13] = part[18] = part[23] = '-';
				break;
			case 2: /* base64, standard or URL-safe, padded */
				pick(part, 8 + next(400), alphas[2 + next(2)]);
				if (next(2))
					strcat(part, "==");
				break;
			case 3: /* a path */
				pick(part, 4 + next(60), alphas[4]);
				part[0] = '/';
				break;
			default: /* numbers and separators */
				pick(part, 1 + next(30), alphas[5]);
				break;
			}
			k += (size_t)snprintf(value + k, sizeof value - k, "%s%s", p ? (next(2) ? ":" : " ") : "",
					      part);
		}
		snprintf(entry, sizeof entry, "CF_RANDOM_%d=%s", round, value);
		tried++;
		struct cf_env_reason why;
		if (cf_env_judge(entry, NULL, &why) != CF_ENV_PASS) {
			withheld++;
			cr_expect_fail("withheld (%s %s): %s", why.rule, why.holds, entry);
		}
	}
	cr_expect_eq(withheld, 0, "%zu false positives in %zu random values", withheld, tried);
}

/* The screens cf_env_secret applies first must let every row through, or a
 * row would never withhold. */
Test(secret_env, every_name_row_passes_the_anchor_screen)
{
	for (size_t i = 0; i < cf_env_name_count; i++) {
		const char *nm = cf_env_name_table[i].name;
		cr_expect(cf_env_anchors(nm, strlen(nm)), "%s", nm);
		cr_expect_eq(strlen(nm), cf_env_name_table[i].len);
	}
	for (size_t i = 0; i < cf_env_pattern_count; i++) {
		const struct cf_env_pattern_row *p = &cf_env_pattern_table[i];
		cr_expect(p->not_secret || cf_env_anchors(p->word, p->len), "%s", p->pattern);
		cr_expect_eq(strlen(p->word), p->len);
	}
	for (size_t i = 0; i < cf_env_word_count; i++) {
		const struct cf_env_word_row *w = &cf_env_word_table[i];
		cr_expect(cf_env_anchors(w->word, strlen(w->word)) & w->anchor, "%s: not its anchor",
			  w->word);
		cr_expect_eq(strchr(w->word, ' ') != NULL, w->at == CF_WORD_PAIR, "%s", w->word);
		for (const char *p = w->word; *p; p++)
			cr_expect((*p >= 'A' && *p <= 'Z') || *p == ' ', "%s: upper case", w->word);
	}
	for (size_t i = 0; i < cf_env_keep_count; i++) {
		char e[128];
		snprintf(e, sizeof e, "%s=x", cf_env_keep_table[i].name);
		cr_expect(cf_env_name_words(cf_env_keep_table[i].name, strlen(cf_env_keep_table[i].name),
					    false),
			  "%s: the word rules pass it anyway, the keep row is not needed",
			  cf_env_keep_table[i].name);
		cr_expect_eq(cf_env_secret(e, NULL), CF_ENV_PASS, "%s", e);
	}
	cr_expect_eq(cf_env_anchors("HOME", 4), 0);
	cr_expect_eq(cf_env_anchors("LS_COLORS", 9), 0);
}

/* The screen of a name's pairs of letters is the anchors' first two
 * letters, no more, no less; each anchor is found in any case, inside a
 * name and at its end; PAT followed by H is none. */
Test(secret_env, the_anchor_screen_is_the_anchor_table)
{
	unsigned want[CF_ENV_ANCHOR_END + 1] = {0};
	for (size_t i = 0; i < cf_env_anchor_count; i++) {
		const char *w = cf_env_anchor_table[i].word;
		cr_assert_geq(strlen(w), 2, "%s", w);
		for (const char *p = w; *p; p++)
			cr_assert(*p >= 'A' && *p <= 'Z', "%s: upper case", w);
		want[w[0] - 'A' + 1] |= 1u << (w[1] - 'A' + 1);
		char name[64];
		snprintf(name, sizeof name, "x_%s", w);
		cr_expect_eq(cf_env_anchors(name, strlen(name)), cf_env_anchor_table[i].bit, "%s", name);
		snprintf(name, sizeof name, "%sx", w);
		for (char *p = name; *p; p++)
			*p = (char)(*p - 'A' + 'a');
		cr_expect_eq(cf_env_anchors(name, strlen(name)), cf_env_anchor_table[i].bit, "%s", name);
		cr_expect_eq(cf_env_anchors(name, strlen(w) - 1), 0, "%.*s", (int)strlen(w) - 1, name);
	}
	for (unsigned c = 0; c <= CF_ENV_ANCHOR_END; c++)
		cr_expect_eq(cf_env_anchor_seconds[c], want[c], "cf_env_anchor_seconds[%u] is %#x, the table's %#x",
			     c, cf_env_anchor_seconds[c], want[c]);
	cr_expect_eq(cf_env_anchors("GOPATH", 6), 0);
	cr_expect_neq(cf_env_anchors("GITHUB_PAT", 10), 0);
	cr_expect_neq(cf_env_anchors("githubPatToken", 9), 0, "PAT at the end of the length given");
}

/* The notation's rules (env_shapes.h) hold for every row: the sorted table
 * starts with a literal, the lead table with a class; a run of open length
 * is never followed by a literal of its class; at most one lazy run; the
 * part of a token up to its first character outside a run of the scan is
 * at least CF_ENV_SHAPE_RUN_MIN long. */
static void check_shape(const char *shape, bool lead)
{
	cr_expect_eq(shape[0] == '{', lead, "%s", shape);
	unsigned lazies = 0, prefix = 0;
	bool in_prefix = true;
	for (const char *p = shape; *p;) {
		if (*p != '{') {
			bool run_char = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
					(*p >= '0' && *p <= '9') || strchr("_.~+/=-", *p);
			in_prefix = in_prefix && run_char;
			prefix += in_prefix;
			p++;
			continue;
		}
		char cls = p[1];
		char *end;
		unsigned long min = strtoul(p + 2, &end, 10), max = min;
		if (*end == ',')
			max = strtoul(end + 1, &end, 10);
		cr_assert_eq(*end, '}', "%s: bad run", shape);
		bool lazy = end[1] == '?';
		lazies += lazy;
		const char *next = end + 1 + lazy;
		cr_expect(cf_env_shape_in_class(cls, '\0') == false && (cls == 'P' || cf_env_shape_in_class(cls, '0') ||
			  cf_env_shape_in_class(cls, 'a') || cf_env_shape_in_class(cls, 'Q')),
			  "%s: unknown class %c", shape, cls);
		if (max != min && !lazy && *next && *next != '{')
			cr_expect_not(cf_env_shape_in_class(cls, (unsigned char)*next),
				      "%s: an open run of %c is followed by '%c' of its class", shape, cls, *next);
		if (max != min && !lazy && *next == '{')
			cr_expect_fail("%s: an open run followed by a run", shape);
		bool subset = true;
		for (unsigned c = 1; c < 256; c++)
			if (cf_env_shape_in_class(cls, (unsigned char)c) &&
			    !(((c | 32) >= 'a' && (c | 32) <= 'z') || (c >= '0' && c <= '9') || strchr("_.~+/=-", (int)c)))
				subset = false;
		in_prefix = in_prefix && subset && !lazy;
		if (in_prefix)
			prefix += (unsigned)min;
		p = next;
	}
	cr_expect_leq(lazies, 1, "%s", shape);
	cr_expect_geq(prefix, CF_ENV_SHAPE_RUN_MIN, "%s: only %u characters before the first that ends a run",
		      shape, prefix);
}

Test(secret_env, every_shape_row_keeps_the_notation)
{
	for (size_t i = 0; i < cf_env_shape_count; i++) {
		const char *sh = cf_env_shape_table[i].shape;
		check_shape(sh, false);
		cr_expect(sh[1] && sh[1] != '{', "%s: not two literals first", sh);
		if (i) {
			const char *before = cf_env_shape_table[i - 1].shape;
			cr_expect_leq(memcmp(before, sh, 2), 0, "not sorted by two bytes at %s", sh);
		}
		cr_expect(cf_env_shape_table[i].source && *cf_env_shape_table[i].source);
	}
	/* The screen of second bytes is the table's, no more, no less. */
	unsigned long long want[128] = {0};
	for (size_t i = 0; i < cf_env_shape_count; i++) {
		unsigned char c0 = (unsigned char)cf_env_shape_table[i].shape[0], c1 = (unsigned char)cf_env_shape_table[i].shape[1];
		unsigned b = c1 >= '0' && c1 <= '9' ? c1 - '0' : c1 >= 'A' && c1 <= 'Z' ? 10 + c1 - 'A'
			   : c1 >= 'a' && c1 <= 'z' ? 36 + c1 - 'a' : c1 == '_' ? 62 : 63;
		cr_assert_lt(c0, 128);
		want[c0] |= 1ull << b;
	}
	for (unsigned c = 0; c < 128; c++)
		if (want[c] != cf_env_shape_seconds[c]) {
			char line[1024];
			size_t k = (size_t)snprintf(line, sizeof line, "['%c'] =", c);
			for (unsigned b = 0; b < 64; b++)
				if (want[c] >> b & 1)
					k += (size_t)snprintf(line + k, sizeof line - k, "%s B2('%c')", k > 8 ? " |" : "",
							      b < 10 ? '0' + b : b < 36 ? 'A' + b - 10 : b < 62 ? 'a' + b - 36 : b == 62 ? '_' : '-');
			cr_expect_fail("cf_env_shape_seconds['%c'] is not the table's; want: %s,", c, line);
		}
	for (size_t i = 0; i < cf_env_shape_lead_count; i++) {
		const struct cf_env_shape_lead *l = &cf_env_shape_lead_table[i];
		check_shape(l->row.shape, true);
		char v[512];
		cf_envcases_shape_value(l->row.shape, TAG, (unsigned)i, v, sizeof v);
		cr_expect(strncmp(v + l->hint_at, l->hint, strlen(l->hint)) == 0,
			  "%s: its hint %s is not at %u", l->row.shape, l->hint, l->hint_at);
		cr_expect_leq(l->hint_at + strlen(l->hint), CF_ENV_SHAPE_RUN_MIN, "%s: its hint lies past the run's least length",
			      l->row.shape);
	}
}

/* Each row matches a value of its shape, and not that value less its last
 * character (a token cut short is not the token), nor with a word
 * character before it. */
Test(secret_env, every_shape_row_matches_its_shape_only)
{
	char v[1024], w[1100];
	for (size_t i = 0; i < cf_env_shape_count + cf_env_shape_lead_count; i++) {
		const char *shape = i < cf_env_shape_count ? cf_env_shape_table[i].shape
							   : cf_env_shape_lead_table[i - cf_env_shape_count].row.shape;
		cf_envcases_shape_value(shape, TAG, (unsigned)i, v, sizeof v);
		cr_expect(cf_env_shape_at(shape, v), "%s does not match its sample %s", shape, v);
		v[strlen(v) - 1] = '\0';
		cr_expect_not(cf_env_shape_at(shape, v), "%s matches a sample cut short: %s", shape, v);
		cf_envcases_shape_value(shape, TAG, (unsigned)i, v, sizeof v);
		snprintf(w, sizeof w, "MY_VAR=x%s", v);
		if (shape[0] != '{' && shape[0] != '-')
			cr_expect_neq(cf_env_secret(w, NULL), CF_ENV_VALUE, "inside a word: %s", w);
	}
}

/* The scan's shortcuts keep every token of its least length: a run shorter
 * than CF_ENV_SHAPE_RUN_MIN is skipped whole, a place is tried only while
 * the run left can hold a token and only when its first two bytes start a
 * row, a lead row only in a run that holds its hint's '~'. Each row's
 * sample (each run at its least length, a lazy run one character: the PEM
 * row's run "-----BEGIN" is CF_ENV_SHAPE_RUN_MIN long) is withheld by that
 * row at a run's start (after a ':': a value's start is a parameter's,
 * pscale_pw_...=x), after a '/' inside a run, after 40 places that pass
 * the screen ("/ho"), and after a '/' that starts the run's second 16
 * bytes; one byte shorter, no longer by that row. */
Test(secret_env, a_token_of_its_least_length_is_withheld)
{
	char v[1024], ctx[1400];
	for (size_t i = 0; i < cf_env_shape_count + cf_env_shape_lead_count; i++) {
		const char *shape = i < cf_env_shape_count ? cf_env_shape_table[i].shape
							   : cf_env_shape_lead_table[i - cf_env_shape_count].row.shape;
		cf_envcases_shape_value(shape, TAG, (unsigned)i, v, sizeof v);
		size_t n = strlen(v);
		for (int cut = 0; cut < 2; cut++) {
			v[n - (size_t)cut] = '\0';
			for (int how = 0; how < 4; how++) {
				size_t k = (size_t)snprintf(ctx, sizeof ctx, "%s",
							    how == 0 ? "x:" : how == 1 ? "x/" : how == 3 ? "0123456789abcdef/" : "");
				for (int j = 0; how == 2 && j < 40; j++)
					k += (size_t)snprintf(ctx + k, sizeof ctx - k, "/ho");
				snprintf(ctx + k, sizeof ctx - k, "%s%s", how == 2 ? "/" : "", v);
				struct cf_env_reason why;
				enum cf_env_why w = cf_env_value_secret(ctx, &why);
				bool by_row = w == CF_ENV_VALUE && strcmp(why.rule, shape) == 0;
				if (!cut)
					cr_expect(by_row, "%s: its least length (%zu) %s (%s)", shape, n,
						  w == CF_ENV_PASS ? "passed" : why.rule, ctx);
				else
					cr_expect_not(by_row, "%s: one byte short of its least length, withheld: %s",
						      shape, ctx);
			}
		}
	}
}

Test(secret_env, the_rule_that_withholds_is_the_expected_one)
{
	cr_expect_eq(cf_env_secret("ANTHROPIC_API_KEY=x", NULL), CF_ENV_NAME);
	cr_expect_eq(cf_env_secret("anthropic_api_key=x", NULL), CF_ENV_NAME);
	cr_expect_eq(cf_env_secret("MYAPP_TOKEN=x", NULL), CF_ENV_PATTERN);
	cr_expect_eq(cf_env_secret("myapp_token=x", NULL), CF_ENV_PATTERN);
	cr_expect_eq(cf_env_secret("MY_VAR=ghp_0123456789abcdefghijABCDEFGHIJ012345", NULL),
		     CF_ENV_VALUE);
	cr_expect_eq(cf_env_secret("MY_VAR=AKIAIOSFODNN7EXAMPLE", NULL), CF_ENV_VALUE);
	cr_expect_eq(cf_env_secret("NO_VALUE_TOKEN", NULL), CF_ENV_PATTERN, "an entry without =");
	cr_expect_eq(cf_env_secret("STRIPE_LIVE_SECRET_KEY=x", NULL), CF_ENV_PATTERN);
	cr_expect_eq(cf_env_secret("TF_TOKEN_app_terraform_io=x", NULL), CF_ENV_PATTERN);
	cr_expect_eq(cf_env_secret("OP_SESSION_my=x", NULL), CF_ENV_PATTERN);
	/* A name of any length is judged whole. */
	static char longname[1100];
	memset(longname, 'A', 1000);
	strcpy(longname + 1000, "_token=x");
	cr_expect_eq(cf_env_secret(longname, NULL), CF_ENV_PATTERN, "a long *_TOKEN name passed");
	memcpy(longname, "TF_TOKEN_", 9);
	strcpy(longname + 1000, "=x");
	cr_expect_eq(cf_env_secret(longname, NULL), CF_ENV_PATTERN);
	longname[0] = 'X';
	cr_expect_eq(cf_env_secret(longname, NULL), CF_ENV_PATTERN, "XF_TOKEN_AAA...: TOKEN, a word");
	memset(longname, 'B', 1000);
	cr_expect_eq(cf_env_secret(longname, NULL), CF_ENV_PASS);
}

/* What status and check show: the rule and what it holds, never the value. */
Test(secret_env, the_reason_names_the_rule)
{
	struct cf_env_reason r;
	cr_assert_eq(cf_env_judge("GITHUB_TOKEN=" TAG, NULL, &r), CF_ENV_NAME);
	cr_expect_str_eq(r.rule, "GITHUB_TOKEN");
	cr_expect_str_eq(r.holds, "GitHub token");
	cr_assert_eq(cf_env_judge("DB_PASS=" TAG, NULL, &r), CF_ENV_PATTERN);
	cr_expect_str_eq(r.rule, "PASS");
	cr_expect_str_eq(r.holds, "a password");
	cr_assert_eq(cf_env_judge("X=ghp_0123456789abcdefghijABCDEFGHIJ012345", NULL, &r), CF_ENV_VALUE);
	cr_expect_str_eq(r.rule, "ghp_{A36,}");
	cr_expect_str_eq(r.holds, "GitHub personal access token");
	cr_assert_eq(cf_env_judge("X=jdbc:mysql://db/app?user=a&password=" TAG, NULL, &r), CF_ENV_URL);
	cr_expect_str_eq(r.holds, "a password");
	cr_assert_eq(cf_env_judge("X=https://u:" TAG "@h/", NULL, &r), CF_ENV_URL);
	cr_expect_str_eq(r.holds, "a URL with a password");
	char *deny[] = {"MYCO_*"};
	struct cf_env_rules rules = {deny, 1, NULL, 0};
	cr_assert_eq(cf_env_judge("MYCO_X=1", &rules, &r), CF_ENV_USER);
	cr_expect_str_eq(r.rule, "MYCO_*");
	cr_assert_eq(cf_env_judge("PATH=/bin", NULL, &r), CF_ENV_PASS);
	cr_expect_null(r.rule);
}

/* How a name is cut into words, and what the words around a secret's word
 * change. */
Test(secret_env, name_words)
{
	static const char *const held[] = {
		"DB_PASS", "db-pass", "DbPass", "dbPASS", "DB_PASS_2", "DB.PASS", "APIKey",
		"OAUTH2TOKEN", "npm_config_//registry.npmjs.org/:_authToken", "ConnectionStrings__Default",
		"MY_API_KEYS", "X_SESSION", "SESSION_KEY_ID_SECRET", "SLACK_WEBHOOK_URL",
		"WEBHOOK_ENDPOINT", "DSN_URL", "MY_APP_KEY_2", "PUBLIC_PASSWORD",
	};
	for (size_t i = 0; i < sizeof held / sizeof *held; i++)
		cr_expect(cf_env_name_words(held[i], strlen(held[i]), false), "passed: %s", held[i]);
	static const char *const passed[] = {
		"BYPASS", "SSH_ASKPASS", "PGPASSFILE", "COMPASS_HOME", "TOKENIZERS_PARALLELISM",
		"MAX_TOKENS", "KEY_ID", "SIGNING_KEY_ID", "SSH_AUTH_SOCK", "SESSION_MANAGER",
		"XDG_SESSION_TYPE", "DB_PASSWORD_FILE", "TOKEN_URL", "OS_AUTH_URL", "KEYTIMEOUT",
		"KITTY_PUBLIC_KEY", "STRIPE_PUBLISHABLE_KEY", "STRIPE_PUBLISHABLE_API_KEY", "MONKEY",
		"KEYRING", "PATH", "OLDPWD", "TLS_KEY", "MY_KEY_2",
		"X_SIG", "SIGNATURE", "AUTH0_DOMAIN", "NEXTAUTH_URL", "XAUTHORITY",
	};
	for (size_t i = 0; i < sizeof passed / sizeof *passed; i++)
		cr_expect_null(cf_env_name_words(passed[i], strlen(passed[i]), false), "withheld: %s",
			       passed[i]);
	cr_expect(cf_env_name_words("sig", 3, true), "a parameter's sig");
	cr_expect(cf_env_name_words("key", 3, true), "a parameter's key");
	cr_expect(cf_env_name_words("api-key", 7, true));
	cr_expect_null(cf_env_name_words("key_id", 6, true));
	cr_expect(cf_env_name_words("X-Amz-Signature", 15, true));
	cr_expect_null(cf_env_name_words("sslkey", 6, true), "libpq's sslkey is a path");
}

/* A URL with a password in it is withheld: DATABASE_URL and the like. */
Test(secret_env, a_url_with_a_password)
{
	static const char *const held[] = {
		"DATABASE_URL=postgres://app:" TAG "@db.internal:5432/app",
		"REDIS_URL=redis://:" TAG "@cache:6379/0",
		"MY_REMOTES=origin https://oauth2:" TAG "@gitlab.example.com/g/r.git",
		"https_proxy=http://user:" TAG "@proxy:3128",
		"MY_URL=jdbc:postgresql://db/app?user=a&password=" TAG,
		"MY_URL=https://api.example/v1?access_token=" TAG,
		"MY_URL=https://example/x?apiKey=" TAG "&q=1",
		"MY_CONN=Server=db;User Id=sa;Password=" TAG ";",
		"MY_CONN=host=db password=" TAG,
		"MY_CONN=Password=" TAG,
		"MY_OPTS=-Xmx1g -Dtrust.store.password=" TAG,
	};
	for (size_t i = 0; i < sizeof held / sizeof *held; i++)
		cr_expect_eq(cf_env_secret(held[i], NULL), CF_ENV_URL, "passed: %s", held[i]);
	static const char *const ok[] = {
		"ANTHROPIC_BASE_URL=https://api.anthropic.com/v1",
		"GIT_URL=ssh://git@github.com:22/o/r.git",
		"MY_URL=https://0123abcd@o1.ingest.sentry.io/42", /* a user, no password */
		"MY_URL=https://user:@host/", "MY_URL=http://host:8080/a@b",
		"MY_URL=https://example.com/?u=a:b@c", "NO_PROXY=localhost,127.0.0.1",
		"MY_URL=https://example.com/?password=", "MY_URL=https://example.com/?password=&x=1",
		"MY_URL=https://example.com/?grant_type=password&token_type=bearer",
		"MY_URL=postgres://db/app?sslkey=/home/u/.pg/client.key&sslmode=require",
		"MAKEFLAGS= -j4 --jobserver-auth=fifo:/tmp/GMfifo1", "MY_VAR=a://b", "MY_VAR=://:@",
		"MY_VAR=x:", "MY_VAR=", "MY_VAR==password", "MY_VAR=1password=x",
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
		cr_expect_eq(cf_env_secret(ok[i], NULL), CF_ENV_PASS, "withheld: %s", ok[i]);
}

/* A token inside a value is withheld too: a URL or a header that holds one. */
Test(secret_env, a_token_inside_a_value)
{
	static const char *const held[] = {
		"GIT_REMOTE=https://github.com/o/r#ghp_0123456789abcdefghijABCDEFGHIJ012345",
		"MY_HEADER=token ghp_0123456789abcdefghijABCDEFGHIJ012345",
		"AUTH_HEADER_VALUE=Bearer sk-ant-api03-0123456789abcdefghij0123456789",
		"MY_VAR=id AKIAIOSFODNN7EXAMPLE in it",
		"MY_VAR=key: -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
		"MY_VAR=-----BEGIN OPENSSH PRIVATE KEY-----",
		"MY_VAR=a,glpat-0123456789abcdefghij",
		"MY_VAR=x-glpat-0123456789abcdefghij",
		"MY_VAR=header.eyJhbGciOiJIUzI1NiJ9x.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
		"MY_VAR=Authorization: bearer 0123456789abcdef",
		"MY_VAR=https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawX/getMe",
	};
	for (size_t i = 0; i < sizeof held / sizeof *held; i++)
		cr_expect_eq(cf_env_secret(held[i], NULL), CF_ENV_VALUE, "passed: %s", held[i]);
	static const char *const ok[] = {
		"PATH=/home/u/.npm_packages/bin:/usr/bin", /* npm_ with a short tail */
		"MY_VAR=xghp_0123456789abcdefghijABCDEFGHIJ012345", /* inside a word */
		"MY_VAR=AKIAIOSFODNN7EXAMPLEX", "MY_VAR=noAKIAIOSFODNN7EXAMPLE",
		"LS_COLORS=rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:*.tar=01;31",
		"MY_VAR=Bearer", "MY_VAR=Bearer short", "MY_VAR=xBearer 0123456789abcdef",
		"MY_VAR=12345:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsa", /* 33 after A */
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
		"MY_VAR=AKIA0123456789ABCDEF", /* 0, 1, 8, 9 are not in the base32 of a key id */
		"MY_VAR=-----BEGIN CERTIFICATE-----", "MY_VAR=-----BEGIN PUBLIC KEY-----xyz",
		"MY_VAR=sk-", "MY_VAR=sk-learn-0.24.2", "MY_VAR=xoxb-1", "MY_VAR=", "MY_VAR",
		"MY_VAR=eyJhbGciOiJIUzI1NiJ9", /* a JWT's header alone */
		"MY_VAR=LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJ", /* a certificate, base64 */
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
	cr_expect_eq(cf_env_secret("GH_TOKEN2=x", &r), CF_ENV_PATTERN, "kept by whole name only");
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
	     d[] = "MY=ghp_0123456789abcdefghijABCDEFGHIJ" TAG;
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
	cr_assert_eq(cf_env_move_secrets(env, NULL, NULL, (unsigned long)b, (unsigned long)b + 1), 0);
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
	char *env[] = {"PATH=/bin", "GITHUB_TOKEN=" TAG, "MY=ghp_0123456789abcdefghijABCDEFGHIJ" TAG,
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
