/* cf_canon and the containment helpers, over a temporary tree. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "paths.h"
#include "strv.h"

static struct cf_fx fx;
static char t[PATH_MAX];

static void setup(void)
{
	cf_fx_setup(&fx);
	cf_fx_fmt(t, sizeof t, "%s/t", fx.root);
	char p[PATH_MAX * 2], q[PATH_MAX * 2];
#define AT(buf, rel) (cf_fx_fmt(buf, sizeof buf, "%s/%s", t, rel), buf)
	cf_fx_write(AT(p, "deep/real/file"), "x\n");
	cr_assert(symlink(AT(q, "deep/real"), AT(p, "link")) == 0);     /* absolute */
	cr_assert(symlink("deep/real", AT(p, "rlink")) == 0);            /* relative */
	cr_assert(symlink(AT(q, "nowhere/x"), AT(p, "dangling")) == 0);
	cr_assert(symlink("loop2", AT(p, "loop1")) == 0);
	cr_assert(symlink("loop1", AT(p, "loop2")) == 0);
	cr_assert(symlink("self", AT(p, "self")) == 0);
	cr_assert(symlink("link", AT(p, "chain")) == 0);                 /* link to a link */
	cr_assert(symlink(AT(q, "deep"), AT(p, "movedhome")) == 0);      /* relocated home */
#undef AT
}

static void teardown(void)
{
	cf_fx_teardown(&fx);
}

TestSuite(paths_canon, .init = setup, .fini = teardown, .timeout = 30 * CF_TIMEOUT_SCALE);

/* Canonical form of T/REL, asserting success. */
static const char *canon(const char *rel)
{
	static char out[PATH_MAX];
	char in[PATH_MAX * 2];
	cf_fx_fmt(in, sizeof in, "%s/%s", t, rel);
	int rc = cf_canon(in, NULL, out, sizeof out, NULL, NULL);
	cr_assert_eq(rc, 0, "cf_canon(%s) = %d (%s)", in, rc, strerror(-rc));
	return out;
}

static void expect_canon(const char *rel, const char *want_rel)
{
	char want[PATH_MAX * 2];
	if (want_rel[0] == '/')
		cf_fx_fmt(want, sizeof want, "%s", want_rel);
	else if (*want_rel)
		cf_fx_fmt(want, sizeof want, "%s/%s", t, want_rel);
	else
		cf_fx_fmt(want, sizeof want, "%s", t);
	cr_expect_str_eq(canon(rel), want, "cf_canon(T/%s)", rel);
}

Test(paths_canon, plain_existing_path_is_itself)
{
	expect_canon("deep/real/file", "deep/real/file");
	expect_canon("deep//real/./file", "deep/real/file");
	expect_canon("deep/real/", "deep/real");
}

Test(paths_canon, symlinked_secret_resolves_to_its_target)
{
	expect_canon("link", "deep/real");
	expect_canon("link/file", "deep/real/file");
	expect_canon("rlink/file", "deep/real/file");
	expect_canon("chain/file", "deep/real/file");
}

Test(paths_canon, dangling_symlink_resolves_to_its_target_path)
{
	expect_canon("dangling", "nowhere/x");
	expect_canon("dangling/more", "nowhere/x/more");
}

Test(paths_canon, missing_secret_keeps_its_name)
{
	expect_canon("missing", "missing");
	expect_canon("missing/a/b", "missing/a/b");
	expect_canon("deep/real/file/below", "deep/real/file/below"); /* ENOTDIR: by name */
}

Test(paths_canon, relocated_home_resolves_through_the_link)
{
	expect_canon("movedhome/real/file", "deep/real/file");
	expect_canon("movedhome/.ssh", "deep/.ssh");
}

Test(paths_canon, dotdot_is_applied_after_links_and_lexically_when_missing)
{
	expect_canon("deep/real/../real/file", "deep/real/file");
	expect_canon("link/..", "deep");          /* physically: the target's parent */
	expect_canon("missing/../deep", "deep");  /* lexically in a missing part */
	expect_canon("missing/x/../../link", "deep/real");
	char out[PATH_MAX];
	cr_assert_eq(cf_canon("/..", NULL, out, sizeof out, NULL, NULL), 0);
	cr_expect_str_eq(out, "/");
	cr_assert_eq(cf_canon("/../../", NULL, out, sizeof out, NULL, NULL), 0);
	cr_expect_str_eq(out, "/");
}

Test(paths_canon, loops_give_eloop)
{
	char in[PATH_MAX * 2], out[PATH_MAX];
	cf_fx_fmt(in, sizeof in, "%s/loop1", t);
	cr_expect_eq(cf_canon(in, NULL, out, sizeof out, NULL, NULL), -ELOOP);
	cf_fx_fmt(in, sizeof in, "%s/self/x", t);
	cr_expect_eq(cf_canon(in, NULL, out, sizeof out, NULL, NULL), -ELOOP);
}

Test(paths_canon, relative_paths_need_an_absolute_base)
{
	char out[PATH_MAX];
	cr_expect_eq(cf_canon("x", NULL, out, sizeof out, NULL, NULL), -EINVAL);
	cr_expect_eq(cf_canon("x", "relative", out, sizeof out, NULL, NULL), -EINVAL);
	cr_assert_eq(cf_canon("link/file", t, out, sizeof out, NULL, NULL), 0);
	char want[PATH_MAX * 2];
	cf_fx_fmt(want, sizeof want, "%s/deep/real/file", t);
	cr_expect_str_eq(out, want);
}

Test(paths_canon, output_too_small_gives_enametoolong)
{
	char in[PATH_MAX * 2], out[8];
	cf_fx_fmt(in, sizeof in, "%s/deep", t);
	cr_expect_eq(cf_canon(in, NULL, out, sizeof out, NULL, NULL), -ENAMETOOLONG);
	cr_expect_eq(cf_canon("/", NULL, out, 1, NULL, NULL), -ENAMETOOLONG);
}

static void collect(void *ctx, const char *dir)
{
	cf_strv_add_unique(ctx, dir);
}

Test(paths_canon, lookups_name_every_directory_looked_in)
{
	struct cf_strv seen = {0};
	char in[PATH_MAX * 2], out[PATH_MAX], want[PATH_MAX * 2];
	cf_fx_fmt(in, sizeof in, "%s/link/file", t);
	cr_assert_eq(cf_canon(in, NULL, out, sizeof out, collect, &seen), 0);
	cr_expect(cf_strv_has(&seen, "/"));
	cr_expect(cf_strv_has(&seen, t), "looked up 'link' in T");
	cf_fx_fmt(want, sizeof want, "%s/deep/real", t);
	cr_expect(cf_strv_has(&seen, want), "looked up 'file' in the link's target");
	cf_strv_free(&seen);
}

Test(paths_helpers, within_parent_base)
{
	cr_expect(cf_path_within("/a/b", "/a"));
	cr_expect(cf_path_within("/a", "/a"));
	cr_expect(cf_path_within("/anything", "/"));
	cr_expect(!cf_path_within("/a/bc", "/a/b"));
	cr_expect(!cf_path_within("/a", "/a/b"));
	char out[PATH_MAX];
	cf_path_parent("/a/b", out, sizeof out);
	cr_expect_str_eq(out, "/a");
	cf_path_parent("/x", out, sizeof out);
	cr_expect_str_eq(out, "/");
	cf_path_parent("/", out, sizeof out);
	cr_expect_str_eq(out, "/");
	cr_expect_str_eq(cf_path_base("/a/b"), "b");
	cr_expect_str_eq(cf_path_base("/a"), "a");
}

static void collect_link(void *ctx, const char *link)
{
	cf_strv_add(ctx, link);
}

/* Each symlink followed is named by its own path: a chain names every link,
 * a link in the middle of the path is named where it lies. */
Test(paths_canon, links_name_every_symlink_followed)
{
	struct cf_strv seen = {0};
	char in[PATH_MAX * 2], out[PATH_MAX], want[PATH_MAX * 2];
	cf_fx_fmt(in, sizeof in, "%s/chain/file", t);
	cr_assert_eq(cf_canon_links(in, NULL, out, sizeof out, NULL, collect_link, &seen), 0);
	cf_fx_fmt(want, sizeof want, "%s/deep/real/file", t);
	cr_expect_str_eq(out, want);
	cr_expect_eq(seen.n, 2, "%zu links", seen.n);
	cf_fx_fmt(want, sizeof want, "%s/chain", t);
	cr_expect(cf_strv_has(&seen, want));
	cf_fx_fmt(want, sizeof want, "%s/link", t);
	cr_expect(cf_strv_has(&seen, want));
	cf_strv_free(&seen);

	/* A relative link resolved against a relative base; a path without links. */
	cr_assert_eq(cf_canon_links("rlink/file", t, out, sizeof out, NULL, collect_link, &seen), 0);
	cf_fx_fmt(want, sizeof want, "%s/rlink", t);
	cr_expect(seen.n == 1 && strcmp(seen.v[0], want) == 0);
	cf_strv_free(&seen);
	cf_fx_fmt(in, sizeof in, "%s/deep/real", t);
	cr_assert_eq(cf_canon_links(in, NULL, out, sizeof out, NULL, collect_link, &seen), 0);
	cr_expect_eq(seen.n, 0);
	cf_strv_free(&seen);
}

Test(paths, path_hash_is_stable_distinct_and_never_zero)
{
	cr_expect_eq(cf_path_hash("/home/u/.ssh/id_ed25519"), cf_path_hash("/home/u/.ssh/id_ed25519"));
	cr_expect_neq(cf_path_hash("/home/u/.ssh/id_ed25519"), cf_path_hash("/home/u/.ssh/id_rsa"));
	cr_expect_neq(cf_path_hash(""), 0);
	cr_expect_eq(cf_path_hash("") & 1, 1);
}
