/* The workspace name rules: their regexes, compiled with POSIX regcomp, over a
 * corpus of names that must and must not be denied, decided the way Seatbelt
 * decides (the last matching rule of the profile wins). */
#include <criterion/criterion.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "names.h"
#include "profile.h"
#include "sbmodel.h"

#define WS "/Users/u/proj"

static const char *const denied_names[] = {
	".env", ".ENV", ".Env", ".Env.local", ".env.local", ".env.production", ".env.",
	".env.example.bak", ".env.EXAMPLE.old", "sub/.env", "deep/er/.eNv.Dev",
	"id_rsa", "id_RSA", "ID_ECDSA", "id_ed25519", "Id_Ed25519", "id_dsa",
	"key.pem", "key.PEM", ".pem", "server.key", "tls/Server.KEY", "cert.p12", "cert.P12",
	"store.pfx", "x.PFX", ".npmrc", ".NPMRC", ".pypirc", ".netrc", ".NetRC",
	".git-credentials", ".GIT-CREDENTIALS", "credentials.json", "Credentials.JSON",
	"config/credentials.json",
	/* anything under a secret directory, templates too */
	"secrets/.env.example", "Secrets/.env.sample", "a/secrets/b/c.txt", "SECRETS/readme.md",
	"secrets", ".ssh", ".ssh/config", ".SSH/known_hosts", ".aws/config",
	"x/.aws/.env.template", ".gnupg/pubring.kbx", ".GnuPG/trustdb.gpg",
};

static const char *const readable_names[] = {
	".env.example", ".ENV.EXAMPLE", ".Env.Sample", ".env.sample", ".env.template",
	"sub/.env.example", "deep/er/.env.Template",
	"notes.env.md", "env", ".envrc", "x.env", "dot.env", "my.env.local", ".environment",
	"id_rsa.pub", "id_rsa2", "my_id_rsa", "id_ed25519.pub",
	"key.pem.txt", "pem", "keys", "key", "keyboard.c", "monkey.keyboard", "a.p12x",
	"mycredentials.json", "mycredentials.json.bak", "credentials.json.bak", "credentials.jsonx",
	"credentials.yaml", ".npmrc.bak", "npmrc", "x.netrc", ".git-credentials~",
	"secrets.txt", "mysecrets/x", "secretsx/y", "secret/x", ".sshd/config", "ssh/config",
	"aws/config", ".awsx/c", "gnupg/x", "README.md", "src/main.c", ".gitignore",
};

static void model_for_workspace(struct cf_profile *pf, struct sb_model *m, const char *ws)
{
	struct cf_policy p;
	memset(&p, 0, sizeof p);
	p.home = (char *)"/Users/u";
	p.workspace = (char *)ws;
	cr_assert_eq(cf_profile_build(pf, &p), 0);
	sb_load(m, pf);
}

static bool readable_in(const struct sb_model *m, const char *ws, const char *rel)
{
	char path[3 * 4096];
	snprintf(path, sizeof path, "%s/%s", ws, rel);
	return sb_allowed(m, "file-read-data", path);
}

Test(names, table_rows_use_their_alphabet)
{
	char re[512];
	cr_assert(cf_name_count > 0);
	for (size_t i = 0; i < cf_name_count; i++) {
		const struct cf_name_row *r = &cf_name_table[i];
		int n = cf_name_component_regex(r, re, sizeof re);
		cr_assert(n > 0 && (size_t)n < sizeof re, "row %s: %d", r->name, n);
		cr_assert_null(strchr(re, '\\'), "row %s: backslash in %s", r->name, re);
		cr_assert_null(strchr(re, '"'), "row %s: quote in %s", r->name, re);
		cr_assert_null(strstr(re, "(?"), "row %s: inline flag in %s", r->name, re);
		regex_t rx;
		cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0, "row %s: %s", r->name, re);
		regfree(&rx);
	}
}

Test(names, component_regex_is_spelled_with_letter_classes)
{
	char re[128];
	const struct cf_name_row env = {".env", CF_MATCH_EXACT, CF_NAME_FILE, ""};
	const struct cf_name_row pem = {".pem", CF_MATCH_SUFFIX, CF_NAME_FILE, ""};
	const struct cf_name_row envs = {".env.", CF_MATCH_PREFIX, CF_NAME_FILE, ""};
	const struct cf_name_row id = {"id_ed25519", CF_MATCH_EXACT, CF_NAME_FILE, ""};
	const struct cf_name_row bad = {".Env", CF_MATCH_EXACT, CF_NAME_FILE, ""};
	cf_name_component_regex(&env, re, sizeof re);
	cr_assert_str_eq(re, "[.][eE][nN][vV]");
	cf_name_component_regex(&pem, re, sizeof re);
	cr_assert_str_eq(re, "[^/]*[.][pP][eE][mM]");
	cf_name_component_regex(&envs, re, sizeof re);
	cr_assert_str_eq(re, "[.][eE][nN][vV][.][^/]*");
	cf_name_component_regex(&id, re, sizeof re);
	cr_assert_str_eq(re, "[iI][dD]_[eE][dD]25519");
	cr_assert_eq(cf_name_component_regex(&bad, re, sizeof re), -EINVAL,
		     "an uppercase letter in the table would match only itself");
}

Test(names, regex_length_is_reported_like_snprintf)
{
	char small[8];
	int n = cf_name_regex(CF_NAME_DIR, 2, NULL, 0);
	cr_assert_gt(n, 0);
	cr_assert_eq(cf_name_regex(CF_NAME_DIR, 2, small, sizeof small), n);
	cr_assert_eq(strlen(small), sizeof small - 1, "truncated output is still terminated");
	char big[1024];
	cr_assert_eq(cf_name_regex(CF_NAME_DIR, 2, big, sizeof big), n);
	cr_assert_eq(strlen(big), (size_t)n);
	cr_assert_str_eq(big, "^/[^/]+/[^/]+/([^/]+/)*([.][sS][sS][hH]|[.][aA][wW][sS]|"
			      "[.][gG][nN][uU][pP][gG]|[sS][eE][cC][rR][eE][tT][sS])(/.*)?$");
}

Test(names, regexes_compile_with_regcomp_at_every_depth)
{
	static const enum cf_name_kind kinds[] = {CF_NAME_FILE, CF_NAME_KEEP, CF_NAME_DIR};
	for (size_t depth = 0; depth < 40; depth++)
		for (size_t k = 0; k < 3; k++) {
			char re[4096];
			int n = cf_name_regex(kinds[k], depth, re, sizeof re);
			cr_assert(n > 0 && (size_t)n < sizeof re);
			regex_t rx;
			cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0, "%s", re);
			regfree(&rx);
		}
}

Test(names, corpus_denied_in_the_workspace)
{
	struct cf_profile pf;
	struct sb_model m;
	model_for_workspace(&pf, &m, WS);
	for (size_t i = 0; i < sizeof denied_names / sizeof *denied_names; i++) {
		cr_expect(!readable_in(&m, WS, denied_names[i]), "%s should be denied", denied_names[i]);
		char alt[4096]; /* the firmlink form of the same file */
		snprintf(alt, sizeof alt, "%s%s", CF_DARWIN_DATA_VOLUME, WS);
		cr_expect(!readable_in(&m, alt, denied_names[i]), "%s/%s should be denied", alt,
			  denied_names[i]);
	}
	sb_free(&m);
	cf_profile_free(&pf);
}

Test(names, corpus_readable_in_the_workspace)
{
	struct cf_profile pf;
	struct sb_model m;
	model_for_workspace(&pf, &m, WS);
	for (size_t i = 0; i < sizeof readable_names / sizeof *readable_names; i++) {
		cr_expect(readable_in(&m, WS, readable_names[i]), "%s should be readable",
			  readable_names[i]);
		char alt[4096];
		snprintf(alt, sizeof alt, "%s%s", CF_DARWIN_DATA_VOLUME, WS);
		cr_expect(readable_in(&m, alt, readable_names[i]), "%s/%s should be readable", alt,
			  readable_names[i]);
	}
	sb_free(&m);
	cf_profile_free(&pf);
}

Test(names, only_inside_the_workspace)
{
	struct cf_profile pf;
	struct sb_model m;
	model_for_workspace(&pf, &m, WS);
	cr_expect(sb_allowed(&m, "file-read-data", "/Users/u/other/.env"));
	cr_expect(sb_allowed(&m, "file-read-data", "/Users/u/projx/.env"));
	cr_expect(sb_allowed(&m, "file-read-data", "/Users/u/secrets/x"));
	cr_expect(sb_allowed(&m, "file-read-data", "/Users/u/proj"));
	cr_expect(!sb_allowed(&m, "file-read-data", "/Users/u/proj/.env"));
	sb_free(&m);
	cf_profile_free(&pf);
}

/* The workspace's own components are skipped: a workspace under a directory
 * named "secrets", or named ".env" itself, stays readable. */
Test(names, the_workspace_path_itself_never_matches)
{
	static const char *const spaces[] = {"/Users/u/secrets/proj", "/Users/u/.ssh-work/.env",
					     "/secrets", "/Users/u/.aws/x/y/z/deep/er"};
	for (size_t i = 0; i < sizeof spaces / sizeof *spaces; i++) {
		struct cf_profile pf;
		struct sb_model m;
		model_for_workspace(&pf, &m, spaces[i]);
		cr_expect(sb_allowed(&m, "file-read-data", spaces[i]), "%s", spaces[i]);
		cr_expect(readable_in(&m, spaces[i], "README.md"), "%s/README.md", spaces[i]);
		cr_expect(readable_in(&m, spaces[i], ".env.example"), "%s/.env.example", spaces[i]);
		cr_expect(!readable_in(&m, spaces[i], ".env"), "%s/.env", spaces[i]);
		cr_expect(!readable_in(&m, spaces[i], "secrets/x"), "%s/secrets/x", spaces[i]);
		sb_free(&m);
		cf_profile_free(&pf);
	}
}

Test(names, workspace_at_root)
{
	struct cf_profile pf;
	struct sb_model m;
	model_for_workspace(&pf, &m, "/");
	cr_expect(!sb_allowed(&m, "file-read-data", "/.env"));
	cr_expect(!sb_allowed(&m, "file-read-data", "/a/b/id_rsa"));
	cr_expect(sb_allowed(&m, "file-read-data", "/a/b/.env.example"));
	cr_expect(sb_allowed(&m, "file-read-data", "/"));
	sb_free(&m);
	cf_profile_free(&pf);
}
