/* Policy building and verdicts: homes, relocations, --deny, nesting, overlap. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "paths.h"
#include "errwords.h"
#include "policy.h"
#include "secrets.h"

/* The status line of P's verdict (a buffer of this file's own). */
static const char *reason_of(const struct cf_policy *p)
{
	static char line[CF_REASON_MAX];
	cf_policy_reason(p, line, sizeof line);
	return line;
}

static struct cf_fx fx;
static struct cf_options o;
static struct cf_policy p;
static bool built;

static void setup(void)
{
	cf_fx_setup(&fx);
	cf_options_init(&o);
	o.home = fx.home;
	o.workspace = fx.ws;
	built = false;
}

static void teardown(void)
{
	if (built)
		cf_policy_free(&p);
	cf_options_free(&o);
	cf_fx_teardown(&fx);
}

TestSuite(policy, .init = setup, .fini = teardown, .timeout = 30 * CF_TIMEOUT_SCALE);

static void build_env(char *const envp[])
{
	if (built)
		cf_policy_free(&p);
	cr_assert_eq(cf_policy_build(&p, &o, envp, fx.ws), 0);
	built = true;
}

static void build(void)
{
	char *envp[] = {NULL};
	build_env(envp);
}

static const struct cf_denied *denied(const char *path)
{
	for (size_t i = 0; i < p.n_denied; i++)
		if (strcmp(p.denied[i].path, path) == 0)
			return &p.denied[i];
	return NULL;
}

#define at cf_fx_at

static void expect_denied(const char *path, const char *why)
{
	const struct cf_denied *d = denied(path);
	cr_expect(d, "%s is not denied", path);
	if (d && why)
		cr_expect_str_eq(d->why, why, "%s denied for '%s', not '%s'", path, d->why, why);
}

/* Covered: denied itself or inside a denied location. */
static bool covered(const char *path)
{
	for (size_t i = 0; i < p.n_denied; i++)
		if (cf_path_within(path, p.denied[i].path))
			return true;
	return false;
}

Test(policy, home_is_empty_without_any_usable_home)
{
	o.home = NULL;
	build();
	cr_expect_eq(p.verdict, CF_VERDICT_HOME_EMPTY);
	cr_expect_str_eq(reason_of(&p), "read isolation is not effective: HOME is empty");
	char *rel[] = {"HOME=relative/home", NULL};
	build_env(rel);
	cr_expect_str_eq(reason_of(&p), "read isolation is not effective: HOME is empty");
	char *empty[] = {"HOME=", NULL};
	build_env(empty);
	cr_expect_str_eq(reason_of(&p), "read isolation is not effective: HOME is empty");
}

Test(policy, home_comes_from_the_environment_when_not_given)
{
	o.home = NULL;
	char env[PATH_MAX + 8];
	cf_fx_fmt(env, sizeof env, "HOME=%s", fx.home);
	char *envp[] = {env, NULL};
	build_env(envp);
	cr_expect_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	cr_expect_str_eq(p.home, fx.home);
	expect_denied(at(fx.home, ".ssh"), "default");
}

Test(policy, account_home_alone_is_enough_and_is_denied)
{
	o.home = NULL;
	o.account_home = fx.home;
	build();
	cr_expect_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	cr_expect_str_eq(p.account_home, fx.home);
	expect_denied(at(fx.home, ".ssh"), "default");
}

Test(policy, account_home_is_denied_too_when_it_differs)
{
	char acct[PATH_MAX];
	cf_fx_fmt(acct, sizeof acct, "%s/account", fx.root);
	cf_fx_mkdirs(acct);
	o.account_home = acct;
	build();
	cr_expect_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	cr_expect_str_eq(p.account_home, acct);
	for (size_t i = 0; i < cf_secret_count; i++) {
		cr_expect(covered(at(fx.home, cf_secret_table[i].rel)), "%s", cf_secret_table[i].rel);
		cr_expect(covered(at(acct, cf_secret_table[i].rel)), "account %s",
			  cf_secret_table[i].rel);
	}
	o.account_home = fx.home; /* the same home: no second copy */
	build();
	cr_expect_null(p.account_home);
}

Test(policy, every_row_is_denied_under_home_with_what_it_holds)
{
	build();
	cr_expect_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	cr_expect_str_eq(reason_of(&p), "read isolation applied");
	for (size_t i = 0; i < cf_secret_count; i++) {
		const char *path = at(fx.home, cf_secret_table[i].rel);
		cr_expect(covered(path), "%s is not covered", path);
		const struct cf_denied *d = denied(path);
		if (d) {
			cr_expect_str_eq(d->holds, cf_secret_table[i].holds);
			cr_expect_str_eq(d->why, "default");
		}
	}
	for (size_t i = 1; i < p.n_denied; i++)
		cr_expect(strcmp(p.denied[i - 1].path, p.denied[i].path) < 0, "sorted, unique");
}

Test(policy, nested_secrets_are_dropped)
{
	cf_strv_add(&o.deny, at(fx.home, ".ssh/id_ed25519"));
	cf_strv_add(&o.deny, at(fx.home, ".config"));
	build();
	cr_expect_null(denied(at(fx.home, ".ssh/id_ed25519")));
	cr_expect_null(denied(at(fx.home, ".aws/credentials")), "inside .aws");
	cr_expect_null(denied(at(fx.home, ".aws/config")), "inside .aws");
	cr_expect_null(denied(at(fx.home, ".config/gh")), "inside the denied .config");
	expect_denied(at(fx.home, ".config"), "--deny");
	expect_denied(at(fx.home, ".ssh"), "default");
	for (size_t i = 0; i < p.n_denied; i++)
		for (size_t j = 0; j < p.n_denied; j++)
			cr_expect(i == j || !cf_path_within(p.denied[i].path, p.denied[j].path),
				  "%s is inside %s", p.denied[i].path, p.denied[j].path);
}

Test(policy, deny_option_and_its_twin)
{
	const char *a = at(fx.root, "extra/a"), *b = at(fx.root, "extra/b");
	char env[PATH_MAX * 5];
	cf_fx_fmt(env, sizeof env, "CREDFENCE_DENY=%s::%s", a, b);
	char *envp[] = {env, NULL};
	const char *bad = NULL;
	cr_assert_eq(cf_options_from_env(&o, envp, &bad), 0);
	build_env(envp);
	expect_denied(a, "--deny");
	expect_denied(b, "--deny");
	cr_expect_str_eq(denied(a)->holds, "added with --deny or CREDFENCE_DENY");

	/* An option wins over its twin. */
	cf_options_free(&o);
	cf_options_init(&o);
	o.home = fx.home;
	o.workspace = fx.ws;
	const char *c = at(fx.root, "extra/c");
	cf_strv_add(&o.deny, c);
	o.deny_from_cli = true;
	cr_assert_eq(cf_options_from_env(&o, envp, &bad), 0);
	build_env(envp);
	expect_denied(c, "--deny");
	cr_expect_null(denied(a), "CREDFENCE_DENY is ignored when --deny is given");
}

struct reloc_case {
	const char *var;
	const char *value_rel;     /* under fx.root */
	const char *const want[3]; /* under fx.root */
};

Test(policy, each_relocating_variable_is_denied)
{
	static const struct reloc_case cases[] = {
		{"GNUPGHOME", "r/gnupg", {"r/gnupg"}},
		{"DOCKER_CONFIG", "r/docker", {"r/docker/config.json"}},
		{"AWS_SHARED_CREDENTIALS_FILE", "r/aws-creds", {"r/aws-creds"}},
		{"AWS_CONFIG_FILE", "r/aws-config", {"r/aws-config"}},
		{"CLOUDSDK_CONFIG", "r/gcloud", {"r/gcloud"}},
		{"GH_CONFIG_DIR", "r/gh", {"r/gh"}},
		{"AZURE_CONFIG_DIR", "r/azure", {"r/azure"}},
		{"NPM_CONFIG_USERCONFIG", "r/npmrc", {"r/npmrc"}},
		{"NETRC", "r/netrc", {"r/netrc"}},
		{"PASSWORD_STORE_DIR", "r/pass", {"r/pass"}},
		{"CARGO_HOME", "r/cargo", {"r/cargo/credentials", "r/cargo/credentials.toml"}},
		{"PGPASSFILE", "r/pgpass", {"r/pgpass"}},
		{"HISTFILE", "r/hist", {"r/hist"}},
		{"CLAUDE_CONFIG_DIR", "r/claude", {"r/claude/.credentials.json"}},
		{"CODEX_HOME", "r/codex", {"r/codex/auth.json"}},
		{"XDG_DATA_HOME", "r/data", {"r/data/opencode/auth.json"}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char env[PATH_MAX * 2];
		cf_fx_fmt(env, sizeof env, "%s=%s", cases[i].var, at(fx.root, cases[i].value_rel));
		char *envp[] = {env, NULL};
		build_env(envp);
		cr_expect_eq(p.verdict, CF_VERDICT_APPLIED, "%s: %s", cases[i].var, reason_of(&p));
		for (size_t k = 0; k < 3 && cases[i].want[k]; k++)
			expect_denied(at(fx.root, cases[i].want[k]), cases[i].var);
		cr_expect(covered(at(fx.home, ".ssh")), "%s: the defaults stay", cases[i].var);
	}
}

Test(policy, kubeconfig_is_a_colon_list)
{
	char env[PATH_MAX * 3];
	cf_fx_fmt(env, sizeof env, "KUBECONFIG=%s::%s:", at(fx.root, "k/one"), at(fx.root, "k/two"));
	char *envp[] = {env, NULL};
	build_env(envp);
	expect_denied(at(fx.root, "k/one"), "KUBECONFIG");
	expect_denied(at(fx.root, "k/two"), "KUBECONFIG");
}

Test(policy, xdg_config_home_relocates_every_config_row)
{
	char xdg[PATH_MAX], env[PATH_MAX * 2];
	cf_fx_fmt(xdg, sizeof xdg, "%s/xdg", fx.root);
	cf_fx_fmt(env, sizeof env, "XDG_CONFIG_HOME=%s", xdg);
	char *envp[] = {env, NULL};
	build_env(envp);
	size_t n = 0;
	for (size_t i = 0; i < cf_secret_count; i++) {
		const char *rel = cf_secret_table[i].rel;
		if (strncmp(rel, ".config/", 8) != 0)
			continue;
		n++;
		cr_expect(covered(at(xdg, rel + 8)), "%s under XDG_CONFIG_HOME", rel);
		cr_expect(covered(at(fx.home, rel)), "%s under home too", rel);
	}
	cr_expect_geq(n, 8);
	expect_denied(at(xdg, "gh"), "XDG_CONFIG_HOME");
}

Test(policy, symlinked_secret_is_denied_by_name_and_at_its_target)
{
	const char *target = at(fx.root, "elsewhere/ssh");
	cf_fx_mkdirs(target);
	cf_fx_rmtree(at(fx.home, ".ssh"));
	cr_assert(symlink(target, at(fx.home, ".ssh")) == 0);
	build();
	expect_denied(at(fx.home, ".ssh"), "default");
	expect_denied(target, "default");
}

Test(policy, dangling_symlink_denies_its_target_path)
{
	const char *target = at(fx.root, "gone/npmrc");
	cf_fx_rmtree(at(fx.home, ".npmrc"));
	cr_assert(symlink(target, at(fx.home, ".npmrc")) == 0);
	build();
	expect_denied(at(fx.home, ".npmrc"), "default");
	expect_denied(target, "default");
}

Test(policy, missing_secret_is_denied_by_name)
{
	cf_fx_rmtree(at(fx.home, ".pypirc"));
	cf_fx_rmtree(at(fx.home, ".local"));
	build();
	expect_denied(at(fx.home, ".pypirc"), "default");
	expect_denied(at(fx.home, ".local/share/fish/fish_history"), "default");
}

/* A secret's parent is remembered on its own only past a symlink (585b7e5):
 * the whole path's pair must still see a parent swapped for a symlink after
 * the build, for a secret that exists and for one that is missing. */
Test(policy, a_parent_swapped_for_a_symlink_after_the_build_is_seen)
{
	cf_fx_rmtree(at(fx.home, ".config/gcloud"));
	build();
	cr_assert(cf_policy_resolves_same(&p), "nothing moved yet");
	const char *other = at(fx.root, "elsewhere/config");
	cf_fx_mkdirs(at(fx.root, "elsewhere/config/gh"));
	cr_assert(rename(at(fx.home, ".config"), at(fx.home, ".config-was")) == 0);
	cr_assert(symlink(other, at(fx.home, ".config")) == 0);
	cr_expect_not(cf_policy_resolves_same(&p),
		      "~/.config swapped for a symlink, and the policy still resolves the same");
	/* Back as it was: the same again (the check is not stuck on false). */
	cr_assert(unlink(at(fx.home, ".config")) == 0);
	cr_assert(rename(at(fx.home, ".config-was"), at(fx.home, ".config")) == 0);
	cr_expect(cf_policy_resolves_same(&p), "~/.config back in place");
}

Test(policy, symlinked_home_is_resolved)
{
	const char *link = at(fx.root, "homelink");
	cr_assert(symlink(fx.home, link) == 0);
	o.home = link;
	build();
	cr_expect_str_eq(p.home, fx.home);
	expect_denied(at(fx.home, ".ssh"), "default");
}

Test(policy, writable_locations)
{
	const char *extra = at(fx.root, "extra-w");
	const char *tmpdir = at(fx.root, "tmpdir");
	char env[PATH_MAX * 2];
	cf_fx_fmt(env, sizeof env, "TMPDIR=%s", tmpdir);
	char *envp[] = {env, NULL};
	cf_strv_add(&o.writable, extra);
	build_env(envp);
	cr_expect_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	const char *want[] = {fx.ws, "/tmp", "/var/tmp", "/dev/shm", tmpdir,
			      at(fx.home, ".cache"), at(fx.home, ".npm"), at(fx.home, ".cargo/registry"),
			      at(fx.home, ".cargo/git"), extra};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		char c[PATH_MAX];
		cr_assert_eq(cf_canon(want[i], NULL, c, sizeof c, NULL, NULL), 0);
		cr_expect(cf_strv_has(&p.writable, c), "%s is not writable", c);
	}
	cr_expect_str_eq(p.writable.v[0], fx.ws, "the workspace comes first");
}

/* Under `credfence harness` the harness's TMPDIR is its private directory:
 * never writable; the TMPDIR its children get back is (issue 11). */
Test(policy, harness_private_tmpdir_is_never_writable)
{
	const char *priv = at(fx.root, "run/harness-tmp.X"), *child = at(fx.root, "child-tmp");
	char tmp[PATH_MAX * 2], sub[PATH_MAX * 2];
	cf_fx_mkdirs(priv);
	cf_fx_mkdirs(child);
	cf_fx_fmt(tmp, sizeof tmp, "TMPDIR=%s", priv);
	cf_fx_fmt(sub, sizeof sub, "TMPDIR=%s/sub", priv);
	char *const *envs[] = {(char *[]){tmp, NULL}, (char *[]){sub, NULL}};
	for (int with_child = 0; with_child < 2; with_child++)
		for (size_t e = 0; e < 2; e++) {
			o.harness_tmpdir = priv;
			o.child_tmpdir = with_child ? child : NULL;
			build_env(envs[e]);
			cr_expect_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
			for (size_t i = 0; i < p.writable.n; i++)
				cr_expect(!cf_path_within(p.writable.v[i], priv) &&
						  !cf_path_within(priv, p.writable.v[i]),
					  "the private TMPDIR is writable through %s", p.writable.v[i]);
			cr_expect_eq(cf_strv_has(&p.writable, child), with_child,
				     "the children's TMPDIR %s", with_child ? "is missing" : "is there");
		}
}

/* --harness-state: writable, unless it holds or lies in a secret or a file
 * a harness trusts. */
Test(policy, harness_state)
{
	const char *snap = at(fx.home, ".claude/shell-snapshots");
	cf_fx_mkdirs(snap);
	cf_strv_add(&o.harness_state, snap);
	build();
	cr_expect_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	cr_expect(cf_strv_has(&p.writable, snap));
	const char *bad[] = {at(fx.home, ".claude"), at(fx.home, ".claude/plugins"),
			     at(fx.home, ".config/opencode/plugin"), at(fx.home, ".codex"),
			     at(fx.home, ".gemini")};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		cf_strv_free(&o.harness_state);
		cf_strv_add(&o.harness_state, bad[i]);
		build();
		cr_expect_eq(p.verdict, CF_VERDICT_HARNESS_STATE, "%s: %s", bad[i], reason_of(&p));
	}
}

Test(policy, workspace_defaults_to_cwd)
{
	o.workspace = NULL;
	build();
	cr_expect_str_eq(p.workspace, fx.ws);
}

Test(policy, writable_containing_a_secret_overlaps)
{
	o.workspace = fx.home;
	build();
	cr_expect_eq(p.verdict, CF_VERDICT_OVERLAP);
	char want[PATH_MAX * 3];
	cf_fx_fmt(want, sizeof want,
		 "read isolation is not effective: writable location %s overlaps secret %s/.aws",
		 fx.home, fx.home);
	cr_expect_str_eq(reason_of(&p), want);
}

Test(policy, writable_inside_a_secret_overlaps)
{
	const char *in = at(fx.home, ".ssh/sub");
	cf_strv_add(&o.writable, in);
	build();
	cr_expect_eq(p.verdict, CF_VERDICT_OVERLAP);
	char want[PATH_MAX * 3];
	cf_fx_fmt(want, sizeof want,
		 "read isolation is not effective: writable location %s overlaps secret %s/.ssh", in,
		 fx.home);
	cr_expect_str_eq(reason_of(&p), want);

	cf_options_free(&o);
	cf_options_init(&o);
	o.home = fx.home;
	o.workspace = fx.ws;
	cf_strv_add(&o.writable, at(fx.home, ".netrc")); /* the secret itself */
	build();
	cf_fx_fmt(want, sizeof want,
		 "read isolation is not effective: writable location %s/.netrc overlaps secret "
		 "%s/.netrc", fx.home, fx.home);
	cr_expect_str_eq(reason_of(&p), want);
}

Test(policy, secret_relocated_into_the_workspace_overlaps)
{
	char env[PATH_MAX * 2];
	cf_fx_fmt(env, sizeof env, "CARGO_HOME=%s/cargo", fx.ws);
	char *envp[] = {env, NULL};
	build_env(envp);
	cr_expect_eq(p.verdict, CF_VERDICT_OVERLAP, "%s", reason_of(&p));
	cr_expect(strstr(reason_of(&p), "overlaps secret"), "%s", reason_of(&p));
}

Test(policy, options_from_env)
{
	const char *bad = NULL;
	char *bogus[] = {"CREDFENCE_MODE=sometimes", NULL};
	cr_expect_eq(cf_options_from_env(&o, bogus, &bad), -EINVAL);
	cr_expect_str_eq(bad, "CREDFENCE_MODE");

	cf_options_init(&o);
	char *zero[] = {"CREDFENCE_MAX_ENTRIES=0", NULL};
	bad = NULL;
	cr_expect_eq(cf_options_from_env(&o, zero, &bad), -EINVAL);
	cr_expect_str_eq(bad, "CREDFENCE_MAX_ENTRIES");

	cf_options_init(&o);
	o.home = fx.home;
	char *good[] = {"CREDFENCE_MODE=best-effort", "CREDFENCE_MAX_ENTRIES=50",
			"CREDFENCE_HOME=/elsewhere", "CREDFENCE_WORKSPACE=/w", "CREDFENCE_LOG=/l",
			NULL};
	cr_assert_eq(cf_options_from_env(&o, good, &bad), 0);
	cr_expect_eq(o.mode, CF_MODE_BEST_EFFORT);
	cr_expect_eq(o.max_entries, 50);
	cr_expect_str_eq(o.home, fx.home, "an option wins over its twin");
	cr_expect_str_eq(o.workspace, "/w");
	cr_expect_str_eq(o.log, "/l");
	o.workspace = fx.ws;
	build_env(good);
	cr_expect_eq(p.mode, CF_MODE_BEST_EFFORT);
	cr_expect_eq(p.max_entries, 50);
	cr_expect_str_eq(p.log, "/l");

	cf_options_init(&o);
	o.home = fx.home;
	o.workspace = fx.ws;
	char *none[] = {NULL};
	build_env(none);
	cr_expect_eq(p.mode, CF_MODE_REQUIRED, "required is the default");
	cr_expect_eq(p.max_entries, CF_DEFAULT_MAX_ENTRIES);
}

/* Issue 8, finding 2: a writable location reached through a symlink that lies
 * in another writable location can be redirected by a fenced program (mv the
 * directory away, ln -s ~/.bashrc in its place). W is a --writable location
 * here, standing for /tmp. */
static char w[PATH_MAX];

static void writable_dir_w(void)
{
	cf_fx_fmt(w, sizeof w, "%s/w", fx.root);
	cf_fx_mkdirs(w);
	cf_strv_add(&o.writable, w);
}

static void expect_link_refused(const char *loc, const char *link, const char *in)
{
	char want[PATH_MAX * 4];
	cf_fx_fmt(want, sizeof want,
		  "read isolation is not effective: writable location %s is reached through "
		  "symlink %s, which lies in writable location %s",
		  loc, link, in);
	cr_expect_eq(p.verdict, CF_VERDICT_WRITABLE_LINK, "%s", reason_of(&p));
	cr_expect_str_eq(reason_of(&p), want);
}

Test(policy, workspace_through_a_symlink_in_a_writable_location_is_refused)
{
	writable_dir_w();
	const char *proj = at(w, "proj");
	cr_assert(symlink(at(fx.home, ".bashrc"), proj) == 0);
	o.workspace = proj;
	build();
	expect_link_refused(proj, proj, w);
}

Test(policy, tmpdir_and_writable_through_such_a_symlink_are_refused)
{
	writable_dir_w();
	cf_fx_mkdirs(at(fx.home, ".config/autostart"));
	const char *t = at(w, "tmp");
	cr_assert(symlink(at(fx.home, ".config/autostart"), t) == 0);
	char env[PATH_MAX * 2];
	cf_fx_fmt(env, sizeof env, "TMPDIR=%s", t);
	char *envp[] = {env, NULL};
	build_env(envp);
	expect_link_refused(t, t, w);

	/* A --writable, through a symlinked directory in the middle of its path. */
	const char *mid = at(w, "mid");
	cr_assert(symlink(fx.home, mid) == 0);
	char deep[PATH_MAX];
	cf_fx_fmt(deep, sizeof deep, "%s/.config/autostart", mid);
	cf_strv_add(&o.writable, deep);
	build();
	expect_link_refused(deep, mid, w);
}

Test(policy, symlink_in_a_cache_is_refused_too)
{
	/* ~/.cache is writable: a TMPDIR reached through a link in it. */
	const char *t = at(fx.home, ".cache/tmp");
	cr_assert(symlink(at(fx.root, "elsewhere"), t) == 0);
	char env[PATH_MAX * 2];
	cf_fx_fmt(env, sizeof env, "TMPDIR=%s", t);
	char *envp[] = {env, NULL};
	build_env(envp);
	expect_link_refused(t, t, at(fx.home, ".cache"));
}

/* Issue 12, item 10: the writable caches follow the variables that move them,
 * as the denied list does; the default place is then not writable. */
static bool writable_has(const char *path)
{
	char c[PATH_MAX];
	if (cf_canon(path, NULL, c, sizeof c, NULL, NULL))
		return false;
	return cf_strv_has(&p.writable, c);
}

Test(policy, relocated_caches_are_writable_where_they_moved)
{
	char cargo[PATH_MAX], xdg[PATH_MAX], npm[PATH_MAX];
	cf_fx_fmt(cargo, sizeof cargo, "%s/cargo-home", fx.root);
	cf_fx_fmt(xdg, sizeof xdg, "%s/xdg-cache", fx.root);
	cf_fx_fmt(npm, sizeof npm, "%s/npm-cache", fx.root);
	cf_fx_mkdirs(at(cargo, "registry"));
	cf_fx_mkdirs(at(cargo, "git"));
	cf_fx_mkdirs(xdg);
	cf_fx_mkdirs(npm);
	cf_fx_mkdirs(at(fx.home, ".cargo/registry"));
	cf_fx_mkdirs(at(fx.home, ".cargo/git"));
	cf_fx_mkdirs(at(fx.home, ".cache"));
	cf_fx_mkdirs(at(fx.home, ".npm"));
	char e1[PATH_MAX * 2], e2[PATH_MAX * 2], e3[PATH_MAX * 2];
	cf_fx_fmt(e1, sizeof e1, "CARGO_HOME=%s", cargo);
	cf_fx_fmt(e2, sizeof e2, "XDG_CACHE_HOME=%s", xdg);
	cf_fx_fmt(e3, sizeof e3, "npm_config_cache=%s", npm);
	char *envp[] = {e1, e2, e3, NULL};
	build_env(envp);
	cr_expect_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	const char *moved[] = {at(cargo, "registry"), at(cargo, "git"), xdg, npm};
	for (size_t i = 0; i < sizeof moved / sizeof *moved; i++)
		cr_expect(writable_has(moved[i]), "%s is not writable", moved[i]);
	const char *old[] = {at(fx.home, ".cargo/registry"), at(fx.home, ".cargo/git"),
			     at(fx.home, ".cache"), at(fx.home, ".npm")};
	for (size_t i = 0; i < sizeof old / sizeof *old; i++)
		cr_expect(!writable_has(old[i]), "%s is writable although its cache moved", old[i]);
}

Test(policy, npm_cache_variable_in_either_case_the_last_one_wins)
{
	const char *a = at(fx.root, "npm-a"), *b = at(fx.root, "npm-b");
	cf_fx_mkdirs(a);
	cf_fx_mkdirs(b);
	char e1[PATH_MAX * 2], e2[PATH_MAX * 2];
	cf_fx_fmt(e1, sizeof e1, "NPM_CONFIG_CACHE=%s", a);
	char *upper[] = {e1, NULL};
	build_env(upper);
	cr_expect(writable_has(a), "NPM_CONFIG_CACHE is not followed");
	cr_expect(!writable_has(at(fx.home, ".npm")));

	/* npm takes the last non-empty npm_config_cache in any case. */
	cf_fx_fmt(e2, sizeof e2, "npm_config_cache=%s", b);
	char *empty = "Npm_Config_Cache=";
	char *both[] = {e1, e2, empty, NULL};
	build_env(both);
	cr_expect(writable_has(b), "the last npm_config_cache is not followed");
	cr_expect(!writable_has(a), "an earlier npm_config_cache is writable too");
}

Test(policy, relative_xdg_cache_home_is_ignored_and_empty_variables_too)
{
	cf_fx_mkdirs(at(fx.home, ".cache"));
	cf_fx_mkdirs(at(fx.ws, "rel-cache"));
	cf_fx_mkdirs(at(fx.home, ".cargo/registry"));
	char *envp[] = {"XDG_CACHE_HOME=rel-cache", "CARGO_HOME=", NULL};
	build_env(envp);
	cr_expect(writable_has(at(fx.home, ".cache")), "~/.cache is not writable");
	cr_expect(!writable_has(at(fx.ws, "rel-cache")), "a relative XDG_CACHE_HOME is followed");
	cr_expect(writable_has(at(fx.home, ".cargo/registry")), "an empty CARGO_HOME moved it");
}

Test(policy, relocated_cache_that_overlaps_a_secret_is_not_effective)
{
	cf_fx_mkdirs(at(fx.home, ".ssh/npm"));
	char env[PATH_MAX * 2];
	cf_fx_fmt(env, sizeof env, "npm_config_cache=%s/.ssh/npm", fx.home);
	char *envp[] = {env, NULL};
	build_env(envp);
	cr_expect_eq(p.verdict, CF_VERDICT_OVERLAP, "%s", reason_of(&p));
	char want[PATH_MAX * 3];
	cf_fx_fmt(want, sizeof want,
		  "read isolation is not effective: writable location %s/.ssh/npm overlaps secret "
		  "%s/.ssh",
		  fx.home, fx.home);
	cr_expect_str_eq(reason_of(&p), want);

	/* XDG_CACHE_HOME=$HOME makes the whole home writable. */
	char env2[PATH_MAX * 2];
	cf_fx_fmt(env2, sizeof env2, "XDG_CACHE_HOME=%s", fx.home);
	char *envp2[] = {env2, NULL};
	build_env(envp2);
	cr_expect_eq(p.verdict, CF_VERDICT_OVERLAP, "%s", reason_of(&p));
}

Test(policy, relocated_cache_through_a_symlink_in_a_writable_location_is_refused)
{
	cf_fx_mkdirs(at(fx.root, "elsewhere"));
	const char *link = at(fx.ws, "cache");
	cr_assert(symlink(at(fx.root, "elsewhere"), link) == 0);
	char env[PATH_MAX * 2];
	cf_fx_fmt(env, sizeof env, "XDG_CACHE_HOME=%s", link);
	char *envp[] = {env, NULL};
	build_env(envp);
	expect_link_refused(link, link, fx.ws);
}

Test(policy, user_symlink_outside_every_writable_location_stays_accepted)
{
	/* /home/u/proj -> /data/proj, made by the user: nothing fenced can
	 * retarget it. A relative --writable is taken from the cwd. */
	const char *link = at(fx.root, "wslink");
	cr_assert(symlink(fx.ws, link) == 0);
	o.workspace = link;
	cf_fx_mkdirs(at(fx.root, "data"));
	cr_assert(symlink(at(fx.root, "data"), at(fx.root, "datalink")) == 0);
	cf_strv_add(&o.writable, "../datalink");
	build();
	cr_expect_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	cr_expect_str_eq(p.workspace, fx.ws);
	cr_expect(cf_strv_has(&p.writable, at(fx.root, "data")));
}

Test(policy, user_symlink_to_a_symlink_in_a_writable_location_is_refused)
{
	/* The user's link is fine, but where it leads a fenced program can
	 * swap the next link. */
	writable_dir_w();
	const char *inner = at(w, "proj");
	cr_assert(symlink(fx.ws, inner) == 0);
	const char *outer = at(fx.root, "proj");
	cr_assert(symlink(inner, outer) == 0);
	o.workspace = outer;
	build();
	expect_link_refused(outer, inner, w);
}

/* Issue 8, finding 9: the log is reopened by name at every launch; inside a
 * writable location a fenced program could swap it for a symlink. */
Test(policy, log_in_a_writable_location_is_refused)
{
	o.log = at(fx.ws, "cf.log");
	build();
	cr_expect_eq(p.verdict, CF_VERDICT_APPLIED, "the verdict is the fence's, not the log's");
	cr_expect_null(p.log);
	char want[PATH_MAX * 3];
	cf_fx_fmt(want, sizeof want, "the log %s/cf.log lies in writable location %s", fx.ws, fx.ws);
	cr_expect_str_eq(p.log_refused, want);

	writable_dir_w();
	cf_fx_mkdirs(at(fx.root, "logs"));
	const char *link = at(w, "logs");
	cr_assert(symlink(at(fx.root, "logs"), link) == 0);
	char log[PATH_MAX];
	cf_fx_fmt(log, sizeof log, "%s/x.log", link);
	o.log = log;
	build();
	cr_expect_null(p.log);
	cf_fx_fmt(want, sizeof want,
		  "the log %s is reached through symlink %s, which lies in writable location %s",
		  log, link, w);
	cr_expect_str_eq(p.log_refused, want);
}

Test(policy, log_outside_is_kept_canonical)
{
	cf_fx_mkdirs(at(fx.root, "logs"));
	cr_assert(symlink(at(fx.root, "logs"), at(fx.root, "loglink")) == 0);
	o.log = "../loglink/x.log"; /* relative to the cwd, the workspace */
	build();
	cr_expect_null(p.log_refused, "%s", p.log_refused);
	cr_expect_str_eq(p.log, at(fx.root, "logs/x.log"));

	/* Kept when the verdict is "not effective", so that the refusal is logged. */
	o.home = NULL;
	o.log = at(fx.root, "logs/y.log");
	build();
	cr_expect_eq(p.verdict, CF_VERDICT_HOME_EMPTY);
	cr_expect_str_eq(p.log, at(fx.root, "logs/y.log"));
}

Test(policy, home_dot_directories)
{
	char dot[PATH_MAX];
	build();
	cr_expect(cf_policy_home_dotdir(&p, at(fx.home, ".config/autostart"), dot, sizeof dot));
	cr_expect_str_eq(dot, at(fx.home, ".config"));
	cr_expect(cf_policy_home_dotdir(&p, at(fx.home, ".local"), dot, sizeof dot));
	cr_expect_str_eq(dot, at(fx.home, ".local"));
	cr_expect(!cf_policy_home_dotdir(&p, fx.home, dot, sizeof dot), "the home itself");
	cr_expect(!cf_policy_home_dotdir(&p, at(fx.home, "src/.git"), dot, sizeof dot));
	cr_expect(!cf_policy_home_dotdir(&p, fx.ws, dot, sizeof dot));
	cr_expect(!cf_policy_home_dotdir(&p, "/", dot, sizeof dot));

	/* The account's home counts too. */
	char acct[PATH_MAX];
	cf_fx_fmt(acct, sizeof acct, "%s/account", fx.root);
	cf_fx_mkdirs(acct);
	o.account_home = acct;
	build();
	cr_expect(cf_policy_home_dotdir(&p, at(acct, ".ssh-old/x"), dot, sizeof dot));
	cr_expect_str_eq(dot, at(acct, ".ssh-old"));
}

/* What credfence harness writes (cf_twin_list_join) is what the shim reads
 * back, colons and backslashes in paths included. */
Test(policy, twin_list_join_is_read_back_as_it_was)
{
	struct cf_strv in = {0};
	cr_assert_eq(cf_strv_add(&in, "/srv/a:b"), 0);
	cr_assert_eq(cf_strv_add(&in, "/srv/c\\d"), 0);
	cr_assert_eq(cf_strv_add(&in, "/srv/\\:e:"), 0);
	char *joined = cf_twin_list_join(&in);
	cr_assert(joined);
	cr_expect_str_eq(joined, "/srv/a\\:b:/srv/c\\\\d:/srv/\\\\\\:e\\:");
	size_t n = strlen(joined) + 32;
	char *env = malloc(n);
	cr_assert(env);
	snprintf(env, n, "CREDFENCE_DENY=%s", joined);
	char *envp[] = {env, NULL};
	struct cf_options o;
	const char *bad = NULL;
	cf_options_init(&o);
	cr_assert_eq(cf_options_from_env(&o, envp, &bad), 0);
	cr_assert_eq(o.deny.n, in.n);
	for (size_t i = 0; i < in.n; i++)
		cr_expect_str_eq(o.deny.v[i], in.v[i]);
	cf_options_free(&o);
	free(env);
	free(joined);
	cf_strv_free(&in);
}

/* The fork-safe errno words (common/errwords.c) are the C library's own, so
 * a failure reads the same from every way in (issue 9). */
Test(policy, errno_words_are_strerrors)
{
	int n = 0;
	for (int e = 1; e < 200; e++) {
		const char *w = cf_errno_words(e);
		if (!w)
			continue;
		n++;
		cr_expect_str_eq(w, strerror(e), "errno %d", e);
	}
	cr_expect_geq(n, 25);
	cr_expect_null(cf_errno_words(0));
	cr_expect_null(cf_errno_words(4095));
}

Test(policy, allow_read_inside_a_row_keeps_the_row_denied)
{
	cr_assert(cf_strv_add(&o.allow_read, at(fx.home, ".ssh/known_hosts")) == 0);
	build();
	cr_assert_null(p.allow_read_refused, "%s", p.allow_read_refused);
	expect_denied(at(fx.home, ".ssh"), "default");
	cr_assert_eq(p.allow_read.n, 1);
	cr_expect_str_eq(p.allow_read.v[0], at(fx.home, ".ssh/known_hosts"));
	cr_expect_eq(p.allow_rows.n, 0);
	cr_expect(cf_policy_allowed_read(&p, at(fx.home, ".ssh/known_hosts")));
	cr_expect_null(cf_policy_allowed_read(&p, at(fx.home, ".ssh/id_ed25519")));
}

Test(policy, allow_read_of_a_whole_row_lifts_it_and_its_inner_paths)
{
	cr_assert(cf_strv_add(&o.allow_read, at(fx.home, ".ssh/known_hosts")) == 0);
	cr_assert(cf_strv_add(&o.allow_read, at(fx.home, ".ssh")) == 0);
	build();
	cr_assert_null(p.allow_read_refused, "%s", p.allow_read_refused);
	cr_expect_null(denied(at(fx.home, ".ssh")));
	cr_expect(denied(at(fx.home, ".aws")));
	cr_assert_eq(p.allow_rows.n, 1);
	cr_expect_str_eq(p.allow_rows.v[0], at(fx.home, ".ssh"));
	cr_expect_eq(p.allow_read.n, 0, "a path inside a lifted row needs no entry");
}

Test(policy, allow_read_nested_paths_keep_the_outer_one)
{
	cr_assert(cf_strv_add(&o.allow_read, at(fx.home, ".ssh/d/x")) == 0);
	cr_assert(cf_strv_add(&o.allow_read, at(fx.home, ".ssh/d")) == 0);
	build();
	cr_assert_eq(p.allow_read.n, 1);
	cr_expect_str_eq(p.allow_read.v[0], at(fx.home, ".ssh/d"));
}

Test(policy, allow_read_outside_every_secret_is_refused)
{
	cr_assert(cf_strv_add(&o.allow_read, at(fx.home, "notes.txt")) == 0);
	build();
	cr_assert(p.allow_read_refused);
	cr_expect(strstr(p.allow_read_refused, "--allow-read (CREDFENCE_ALLOW_READ)"), "%s",
		  p.allow_read_refused);
	cr_expect(strstr(p.allow_read_refused, "lies in no secret location"), "%s",
		  p.allow_read_refused);
}

/* Judged by where it points: a symlink to the key file allows the key
 * file's path, one from inside ~/.ssh to outside is refused. */
Test(policy, allow_read_symlink_is_judged_by_its_target)
{
	cr_assert(symlink(at(fx.home, ".ssh/known_hosts"), at(fx.home, "kh")) == 0);
	cr_assert(cf_strv_add(&o.allow_read, at(fx.home, "kh")) == 0);
	build();
	cr_assert_null(p.allow_read_refused, "%s", p.allow_read_refused);
	cr_assert_eq(p.allow_read.n, 1);
	cr_expect_str_eq(p.allow_read.v[0], at(fx.home, ".ssh/known_hosts"));

	cr_assert(symlink(at(fx.home, "notes.txt"), at(fx.home, ".ssh/config")) == 0);
	cf_strv_free(&o.allow_read);
	cr_assert(cf_strv_add(&o.allow_read, at(fx.home, ".ssh/config")) == 0);
	build();
	cr_assert(p.allow_read_refused);
	cr_expect(strstr(p.allow_read_refused, "resolves to"), "%s", p.allow_read_refused);
	cr_expect(strstr(p.allow_read_refused, at(fx.home, "notes.txt")), "%s", p.allow_read_refused);
}

/* A symlink in the workspace could be retargeted by a fenced program. */
Test(policy, allow_read_through_a_symlink_in_a_writable_location_is_refused)
{
	cr_assert(symlink(at(fx.home, ".ssh/known_hosts"), at(fx.ws, "kh")) == 0);
	cr_assert(cf_strv_add(&o.allow_read, at(fx.ws, "kh")) == 0);
	build();
	cr_assert(p.allow_read_refused);
	cr_expect(strstr(p.allow_read_refused, "writable location"), "%s", p.allow_read_refused);
}
