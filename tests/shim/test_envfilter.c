/* shim/env.c: the environment of a fenced child, less the shim in LD_PRELOAD
 * (cf_env_without_shim and its filter), as a unit: separators, several
 * entries, names that only look like the shim's, empty values, and what
 * happens when the caller's arrays are too small (the environment stays as it
 * is: the child then loads the shim, which finds itself fenced already). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define N 16
static char *out[N];
static char ld[4096];

/* The child's environment for ENVP, with the arrays above. */
static char *const *filtered(char *const *envp)
{
	memset(out, 0x5a, sizeof out);
	memset(ld, 0x5a, sizeof ld);
	return cf_env_without_shim(envp, out, N, ld, sizeof ld);
}

/* The LD_PRELOAD entry of ENV, or NULL; and that there is only one. */
static const char *preload(char *const *env)
{
	const char *found = NULL;
	for (size_t i = 0; env[i]; i++)
		if (strncmp(env[i], "LD_PRELOAD=", 11) == 0) {
			cr_assert_null(found, "two LD_PRELOAD entries: %s, %s", found, env[i]);
			found = env[i];
		}
	return found;
}

static void expect_preload(const char *value, const char *want)
{
	char var[512];
	snprintf(var, sizeof var, "LD_PRELOAD=%s", value);
	char *envp[] = {"A=1", var, "B=2", NULL};
	char *const *env = filtered(envp);
	cr_assert_eq(env, (char *const *)out, "'%s': the environment was not rebuilt", value);
	cr_expect_str_eq(env[0], "A=1");
	const char *got = preload(env);
	if (!want) {
		cr_expect_null(got, "'%s' should leave no LD_PRELOAD, got %s", value, got);
		cr_expect_str_eq(env[1], "B=2");
		cr_expect_null(env[2]);
		return;
	}
	cr_assert_not_null(got, "'%s': LD_PRELOAD was dropped, expected '%s'", value, want);
	cr_expect_str_eq(got + 11, want, "'%s'", value);
	cr_expect_str_eq(env[2], "B=2");
	cr_expect_null(env[3]);
}

Test(env_filter, the_shim_alone_drops_the_variable)
{
	expect_preload("/usr/local/lib/libcredfence.so", NULL);
	expect_preload("libcredfence.so", NULL);
}

Test(env_filter, other_entries_stay_in_order)
{
	expect_preload("/a/liba.so:/x/libcredfence.so:/b/libb.so", "/a/liba.so:/b/libb.so");
	expect_preload("/x/libcredfence.so:/a/liba.so", "/a/liba.so");
	expect_preload("/a/liba.so:/x/libcredfence.so", "/a/liba.so");
	/* the shim twice (harness and a wrapper each added it) */
	expect_preload("/x/libcredfence.so:/a/liba.so:/y/libcredfence.so", "/a/liba.so");
}

Test(env_filter, spaces_and_colons_both_separate)
{
	expect_preload("/a/liba.so /x/libcredfence.so", "/a/liba.so");
	expect_preload("/a/liba.so /x/libcredfence.so:/b/libb.so", "/a/liba.so:/b/libb.so");
	/* empty entries (doubled or trailing separators) are dropped */
	expect_preload("  /a/liba.so::/x/libcredfence.so: ", "/a/liba.so");
	expect_preload(":: ", NULL);
}

Test(env_filter, names_that_only_contain_the_shims_stay)
{
	expect_preload("/x/libcredfence.so.1", "/x/libcredfence.so.1");
	expect_preload("/x/mylibcredfence.so", "/x/mylibcredfence.so");
	expect_preload("mylibcredfence.so", "mylibcredfence.so");
	expect_preload("/x/libcredfence.so.d/libz.so", "/x/libcredfence.so.d/libz.so");
	expect_preload("/x/libcredfence.sox:/x/libcredfence.so", "/x/libcredfence.sox");
	expect_preload("/x/libcredfence", "/x/libcredfence");
}

Test(env_filter, an_empty_value_drops_the_variable)
{
	expect_preload("", NULL);
}

Test(env_filter, no_preload_keeps_the_environment)
{
	char *envp[] = {"A=1", "LD_PRELOADX=/x/libcredfence.so", "XLD_PRELOAD=/x/libcredfence.so",
			"LD_LIBRARY_PATH=/x", NULL};
	cr_expect_eq(filtered(envp), (char *const *)envp);
	char *empty[] = {NULL};
	cr_expect_eq(filtered(empty), (char *const *)empty);
	cr_expect_null(cf_env_without_shim(NULL, out, N, ld, sizeof ld));
}

/* ld.so reads the last LD_PRELOAD of the environment, getenv the first: the
 * shim goes from each. */
Test(env_filter, every_ld_preload_entry_is_filtered)
{
	char *envp[] = {"LD_PRELOAD=/a/liba.so:/x/libcredfence.so", "B=2",
			"LD_PRELOAD=/x/libcredfence.so /b/libb.so", "LD_PRELOAD=/x/libcredfence.so",
			NULL};
	char *const *env = filtered(envp);
	cr_assert_eq(env, (char *const *)out);
	cr_expect_str_eq(env[0], "LD_PRELOAD=/a/liba.so");
	cr_expect_str_eq(env[1], "B=2");
	cr_expect_str_eq(env[2], "LD_PRELOAD=/b/libb.so");
	cr_expect_null(env[3]);
	for (size_t i = 0; env[i]; i++)
		cr_expect_null(strstr(env[i], "libcredfence.so"), "left: %s", env[i]);
}

Test(env_filter, too_many_variables_keep_the_environment)
{
	char *envp[N + 1];
	for (size_t i = 0; i < N; i++)
		envp[i] = i == 3 ? "LD_PRELOAD=/x/libcredfence.so" : "A=1";
	envp[N] = NULL;
	/* N variables and the NULL do not fit in N pointers */
	cr_expect_eq(filtered(envp), (char *const *)envp);
	/* N - 1 variables do */
	envp[N - 1] = NULL;
	char *const *env = filtered(envp);
	cr_assert_eq(env, (char *const *)out);
	cr_expect_eq(cf_env_count(env), N - 2);
	cr_expect_null(preload(env));
}

Test(env_filter, a_value_longer_than_the_buffer_keeps_the_environment)
{
	static char var[8192];
	strcpy(var, "LD_PRELOAD=/x/libcredfence.so:");
	size_t len = strlen(var);
	memset(var + len, 'a', sizeof var - len - 1);
	char *envp[] = {"A=1", var, NULL};
	cr_expect_eq(filtered(envp), (char *const *)envp);
	/* the buffer is never written past its end */
	char small[24];
	memset(small, 0x5a, sizeof small);
	char *envp2[] = {"LD_PRELOAD=/a/liba.so:/b/libb.so:/x/libcredfence.so", NULL};
	cr_expect_eq(cf_env_without_shim(envp2, out, N, small, 20), (char *const *)envp2);
	for (size_t i = 20; i < sizeof small; i++)
		cr_expect_eq(small[i], 0x5a, "byte %zu written", i);
	/* exactly enough: "LD_PRELOAD=/a/liba.so" and its NUL; one byte less is not */
	char fit[22];
	char *envp3[] = {"LD_PRELOAD=/a/liba.so:/x/libcredfence.so", NULL};
	char *const *env = cf_env_without_shim(envp3, out, N, fit, sizeof fit);
	cr_assert_eq(env, (char *const *)out, "22 bytes hold LD_PRELOAD=/a/liba.so");
	cr_expect_str_eq(env[0], "LD_PRELOAD=/a/liba.so");
	cr_expect_eq(cf_env_without_shim(envp3, out, N, fit, sizeof fit - 1), (char *const *)envp3);
	/* two entries share the buffer: 22 + 22 bytes */
	char two[44];
	char *envp4[] = {"LD_PRELOAD=/a/liba.so:/x/libcredfence.so", "LD_PRELOAD=/b/libb.so", NULL};
	env = cf_env_without_shim(envp4, out, N, two, sizeof two);
	cr_assert_eq(env, (char *const *)out);
	cr_expect_str_eq(env[0], "LD_PRELOAD=/a/liba.so");
	cr_expect_str_eq(env[1], "LD_PRELOAD=/b/libb.so");
	/* one byte less: the first is filtered, the second stays whole (it holds
	 * no shim anyway): each entry on its own */
	env = cf_env_without_shim(envp4, out, N, two, sizeof two - 1);
	cr_assert_eq(env, (char *const *)out);
	cr_expect_str_eq(env[0], "LD_PRELOAD=/a/liba.so");
	cr_expect_eq(env[1], envp4[1]);
}

/* A child of the harness loses the secrets whatever else happens to its
 * environment: an LD_PRELOAD too long for the buffer stays, the secrets go. */
Test(env_filter, secrets_go_even_when_ld_preload_does_not_fit)
{
	static char var[8192];
	strcpy(var, "LD_PRELOAD=/x/libcredfence.so:");
	size_t len = strlen(var);
	memset(var + len, 'a', sizeof var - len - 1);
	char *envp[] = {"A=1", var, "GITHUB_TOKEN=fake", "MY=ghp_0123456789abcdefghijABCDEFGHIJ012345",
			"B=2", NULL};
	char *const *env = cf_env_for_child(envp, CF_ENV_DROP_SHIM | CF_ENV_DROP_SECRETS, out, N,
					    ld, sizeof ld);
	cr_assert_eq(env, (char *const *)out);
	cr_expect_eq(env[0], envp[0]);
	cr_expect_eq(env[1], envp[1]);
	cr_expect_str_eq(env[2], "B=2");
	cr_expect_null(env[3]);
	/* secrets only (an unfenced child of the harness, best effort): the shim stays */
	char *envp2[] = {"LD_PRELOAD=/x/libcredfence.so", "AWS_SESSION_TOKEN=x", NULL};
	env = cf_env_for_child(envp2, CF_ENV_DROP_SECRETS, out, N, ld, sizeof ld);
	cr_assert_eq(env, (char *const *)out);
	cr_expect_eq(env[0], envp2[0]);
	cr_expect_null(env[1]);
	/* nothing to take: the same array */
	char *envp3[] = {"A=1", "TOKENIZERS_PARALLELISM=false", NULL};
	cr_expect_eq(cf_env_for_child(envp3, CF_ENV_DROP_SHIM | CF_ENV_DROP_SECRETS, out, N, ld,
				      sizeof ld),
		     (char *const *)envp3);
}

/* Under `credfence harness` the harness's TMPDIR is its private directory;
 * a fenced child gets the user's TMPDIR back, or none when there was none.
 * (Each criterion test runs in a process of its own: the setenv stays here.) */
#define PRIV "/run/user/1000/harness-tmp.AbC123"

static const char *tmpdir_of(char *const *env)
{
	for (size_t i = 0; env[i]; i++)
		if (strncmp(env[i], "TMPDIR=", 7) == 0)
			return env[i];
	return NULL;
}

Test(env_filter, the_private_tmpdir_is_given_back)
{
	setenv("CREDFENCE_HARNESS_TMPDIR", PRIV, 1);
	setenv("CREDFENCE_CHILD_TMPDIR", "/var/tmp", 1);
	cf_env_tmpdir_init();
	const char *given[] = {"TMPDIR=" PRIV, "TMPDIR=" PRIV "/sub"};
	for (size_t i = 0; i < 2; i++) {
		char *envp[] = {"A=1", (char *)given[i], "MYTMPDIR=" PRIV, NULL};
		char *const *env = filtered(envp);
		cr_assert_str_eq(tmpdir_of(env), "TMPDIR=/var/tmp");
		cr_expect_str_eq(env[0], "A=1");
		cr_expect_str_eq(env[2], "MYTMPDIR=" PRIV);
		cr_expect_null(env[3]);
	}
	/* A TMPDIR elsewhere, or one that only starts with the same letters, stays. */
	char *other[] = {"TMPDIR=" PRIV "x", NULL};
	cr_expect_eq(filtered(other), other);
}

Test(env_filter, the_private_tmpdir_is_dropped_when_the_user_had_none)
{
	setenv("CREDFENCE_HARNESS_TMPDIR", PRIV, 1);
	unsetenv("CREDFENCE_CHILD_TMPDIR");
	cf_env_tmpdir_init();
	char *envp[] = {"A=1", "TMPDIR=" PRIV, "B=2", NULL};
	char *const *env = filtered(envp);
	cr_expect_null(tmpdir_of(env));
	cr_expect_str_eq(env[0], "A=1");
	cr_expect_str_eq(env[1], "B=2");
	cr_expect_null(env[2]);
}

Test(env_filter, no_private_tmpdir_keeps_tmpdir)
{
	unsetenv("CREDFENCE_HARNESS_TMPDIR");
	cf_env_tmpdir_init();
	char *envp[] = {"TMPDIR=" PRIV, NULL};
	cr_expect_eq(filtered(envp), envp);
}
