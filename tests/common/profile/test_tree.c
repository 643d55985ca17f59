/* The profile of a policy that cf_policy_build made from a fake home on disk
 * (tests/lib/fixture.h): every canonical secret, in both macOS forms, is
 * denied; a symlinked secret is denied at its name and its target. Nothing is
 * read: the policy only looks names up. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "policy.h"
#include "profile.h"
#include "sbmodel.h"

/* The status line of P's verdict (a buffer of this file's own). */
static const char *reason_of(const struct cf_policy *p)
{
	static char line[CF_REASON_MAX];
	cf_policy_reason(p, line, sizeof line);
	return line;
}

static struct cf_fx fx;

static void setup(void)
{
	cf_fx_setup(&fx);
}

static void teardown(void)
{
	cf_fx_teardown(&fx);
}

static bool has_value(const struct cf_profile *pf, const char *letter, const char *value)
{
	for (size_t i = 0; pf->params[i]; i += 2)
		if (pf->params[i][0] == letter[0] && !strcmp(pf->params[i + 1], value) &&
		    strspn(pf->params[i] + 1, "0123456789") == strlen(pf->params[i] + 1))
			return true;
	return false;
}

Test(tree, every_secret_in_both_forms, .init = setup, .fini = teardown)
{
	char link[2 * PATH_MAX], target[2 * PATH_MAX], dir[2 * PATH_MAX];
	snprintf(dir, sizeof dir, "%s/elsewhere", fx.root);
	snprintf(target, sizeof target, "%s/elsewhere/token", fx.root);
	snprintf(link, sizeof link, "%s/token-link", fx.home);
	cf_fx_mkdirs(dir);
	cf_fx_write(target, "not a real secret");
	cr_assert_eq(symlink(target, link), 0);

	struct cf_options o;
	struct cf_policy p;
	struct cf_profile pf;
	char home_env[PATH_MAX + 8];
	snprintf(home_env, sizeof home_env, "HOME=%s", fx.home);
	char *envp[] = {home_env, NULL};
	cf_options_init(&o);
	o.workspace = fx.ws;
	cr_assert_eq(cf_strv_add(&o.deny, link), 0);
	cr_assert_eq(cf_policy_build(&p, &o, envp, fx.ws), 0);
	cr_assert_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	cr_assert_eq(cf_profile_build(&pf, &p), 0);

	cr_assert_gt(p.n_denied, 10);
	for (size_t i = 0; i < p.n_denied; i++) {
		char canon[PATH_MAX], alt[PATH_MAX + 32];
		cr_assert_eq(cf_darwin_canon(p.denied[i].path, canon, sizeof canon), 0);
		cr_expect(has_value(&pf, "S", canon), "secret %s not denied", canon);
		cr_assert_eq(cf_darwin_firmlink(canon, alt, sizeof alt), 1);
		cr_expect(has_value(&pf, "S", alt), "firmlink form %s not denied", alt);
		cr_expect_null(strstr(pf.text, p.denied[i].path), "a path in the text");
	}
	/* The fixture root is /var/lib/...-like or $CREDFENCE_TEST_ROOT: check both
	 * forms of the link and its target by their mapped names. */
	char canon_link[3 * PATH_MAX], canon_target[3 * PATH_MAX];
	cr_assert_eq(cf_darwin_canon(link, canon_link, sizeof canon_link), 0);
	cr_assert_eq(cf_darwin_canon(target, canon_target, sizeof canon_target), 0);
	cr_expect(has_value(&pf, "S", canon_link), "the link's name %s", canon_link);
	cr_expect(has_value(&pf, "S", canon_target), "the link's target %s", canon_target);
	if (!strncmp(fx.root, "/var/", 5))
		cr_expect(!strncmp(canon_target, "/private/var/", 13), "%s", canon_target);

	/* Ancestors up to home: the target's dir lies outside home. */
	char canon_home[3 * PATH_MAX], canon_dir[3 * PATH_MAX];
	cr_assert_eq(cf_darwin_canon(fx.home, canon_home, sizeof canon_home), 0);
	cr_assert_eq(cf_darwin_canon(dir, canon_dir, sizeof canon_dir), 0);
	cr_expect(has_value(&pf, "U", canon_home));
	cr_expect(has_value(&pf, "U", canon_dir));

	struct sb_model m;
	sb_load(&m, &pf);
	char path[4 * PATH_MAX];
	snprintf(path, sizeof path, "%s/.ssh/id_ed25519", canon_home);
	cr_expect(!sb_allowed(&m, "file-read-data", path), "%s", path);
	snprintf(path, sizeof path, CF_DARWIN_DATA_VOLUME "%s/.ssh/id_ed25519", canon_home);
	cr_expect(!sb_allowed(&m, "file-read-data", path), "%s", path);
	snprintf(path, sizeof path, "%s/notes.txt", canon_home);
	cr_expect(sb_allowed(&m, "file-read-data", path), "%s", path);
	cr_expect(!sb_allowed(&m, "file-write-data", path), "home is not writable: %s", path);
	cr_expect(!sb_allowed(&m, "file-write-unlink", canon_home));
	sb_free(&m);

	cf_profile_free(&pf);
	cf_policy_free(&p);
	cf_options_free(&o);
}
