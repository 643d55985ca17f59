/* The one table of secret locations: every location the issue names is there,
 * and every row says what it holds. */
#include <criterion/criterion.h>
#include <string.h>

#include "secrets.h"

static const struct cf_secret_row *row(const char *rel)
{
	for (size_t i = 0; i < cf_secret_count; i++)
		if (strcmp(cf_secret_table[i].rel, rel) == 0)
			return &cf_secret_table[i];
	return NULL;
}

static const char *const known[] = {
	".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".npmrc", ".pypirc",
	".docker/config.json", ".kube", ".config/gh", ".config/gcloud",
};

static const char *const stores[] = {
	".config/git/credentials", ".azure", ".config/op", ".password-store",
	".local/share/keyrings", ".vault-token", ".terraform.d/credentials.tfrc.json",
	".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".pgpass", ".my.cnf",
	".s3cfg", ".boto", ".config/hub", ".config/rclone", ".mozilla", ".config/google-chrome",
	".config/chromium", ".bash_history", ".zsh_history", ".python_history", ".psql_history",
	".mysql_history", ".node_repl_history", ".local/share/fish/fish_history",
};

Test(secrets_table, the_eleven_known_locations_come_first)
{
	size_t n = sizeof known / sizeof *known;
	for (size_t i = 0; i < n; i++)
		cr_expect(row(known[i]), "%s is missing from cf_secret_table", known[i]);
	/* "First the 11 locations users already know": none of the stores comes before
	 * the last of them. */
	size_t last_known = 0;
	for (size_t i = 0; i < cf_secret_count; i++)
		for (size_t k = 0; k < n; k++)
			if (strcmp(cf_secret_table[i].rel, known[k]) == 0)
				last_known = i;
	for (size_t i = 0; i < last_known; i++)
		for (size_t k = 0; k < sizeof stores / sizeof *stores; k++)
			cr_expect(strcmp(cf_secret_table[i].rel, stores[k]) != 0,
				  "store %s comes before the known locations", stores[k]);
}

Test(secrets_table, every_credential_store_of_the_issue)
{
	for (size_t i = 0; i < sizeof stores / sizeof *stores; i++)
		cr_expect(row(stores[i]), "%s is missing from cf_secret_table", stores[i]);
}

/* Issue 11: a model-written command must not take the agents' own logins. */
Test(secrets_table, the_coding_agents_logins)
{
	static const char *const agents[] = {
		".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json",
		".local/share/opencode/auth.json", ".config/github-copilot",
	};
	for (size_t i = 0; i < sizeof agents / sizeof *agents; i++)
		cr_expect(row(agents[i]), "%s is missing from cf_secret_table", agents[i]);
}

Test(secrets_table, every_row_says_what_it_holds)
{
	cr_assert_geq(cf_secret_count, 37);
	for (size_t i = 0; i < cf_secret_count; i++) {
		const struct cf_secret_row *r = &cf_secret_table[i];
		cr_expect(r->holds && strlen(r->holds) >= 5, "row %s has no 'holds'", r->rel);
	}
}

Test(secrets_table, rows_are_relative_unique_and_clean)
{
	for (size_t i = 0; i < cf_secret_count; i++) {
		const char *rel = cf_secret_table[i].rel;
		cr_expect(rel[0] && rel[0] != '/', "row %s is not relative", rel);
		cr_expect(rel[strlen(rel) - 1] != '/', "row %s ends in '/'", rel);
		cr_expect(!strstr(rel, "..") && !strstr(rel, "//") && !strstr(rel, "/./"),
			  "row %s is not clean", rel);
		for (size_t j = i + 1; j < cf_secret_count; j++)
			cr_expect(strcmp(rel, cf_secret_table[j].rel) != 0, "row %s twice", rel);
	}
}

static void expect_reloc(const char *rel, const char *env, enum cf_reloc how, const char *leaf)
{
	bool seen = false;
	for (size_t i = 0; i < cf_secret_count; i++) {
		const struct cf_secret_row *r = &cf_secret_table[i];
		if (!r->env || strcmp(r->env, env) != 0 || strcmp(r->rel, rel) != 0)
			continue;
		seen = true;
		cr_expect_eq(r->reloc, how, "%s: %s relocates it the wrong way", rel, env);
		if (leaf)
			cr_expect(r->leaf && strcmp(r->leaf, leaf) == 0, "%s: leaf", rel);
	}
	cr_expect(seen, "no row %s relocated by %s", rel, env);
}

Test(secrets_table, relocating_variables_of_the_issue)
{
	expect_reloc(".gnupg", "GNUPGHOME", CF_RELOC_PATH, NULL);
	expect_reloc(".docker/config.json", "DOCKER_CONFIG", CF_RELOC_JOIN, "config.json");
	expect_reloc(".kube", "KUBECONFIG", CF_RELOC_LIST, NULL);
	expect_reloc(".aws/credentials", "AWS_SHARED_CREDENTIALS_FILE", CF_RELOC_PATH, NULL);
	expect_reloc(".aws/config", "AWS_CONFIG_FILE", CF_RELOC_PATH, NULL);
	expect_reloc(".config/gcloud", "CLOUDSDK_CONFIG", CF_RELOC_PATH, NULL);
	expect_reloc(".config/gh", "GH_CONFIG_DIR", CF_RELOC_PATH, NULL);
	expect_reloc(".azure", "AZURE_CONFIG_DIR", CF_RELOC_PATH, NULL);
	expect_reloc(".npmrc", "NPM_CONFIG_USERCONFIG", CF_RELOC_PATH, NULL);
	expect_reloc(".netrc", "NETRC", CF_RELOC_PATH, NULL);
	expect_reloc(".password-store", "PASSWORD_STORE_DIR", CF_RELOC_PATH, NULL);
	expect_reloc(".cargo/credentials", "CARGO_HOME", CF_RELOC_JOIN, "credentials");
	expect_reloc(".cargo/credentials.toml", "CARGO_HOME", CF_RELOC_JOIN, "credentials.toml");
	expect_reloc(".pgpass", "PGPASSFILE", CF_RELOC_PATH, NULL);
	expect_reloc(".bash_history", "HISTFILE", CF_RELOC_PATH, NULL);
}

Test(secrets_table, relocation_fields_are_consistent)
{
	for (size_t i = 0; i < cf_secret_count; i++) {
		const struct cf_secret_row *r = &cf_secret_table[i];
		cr_expect((r->env == NULL) == (r->reloc == CF_RELOC_NONE), "row %s", r->rel);
		cr_expect((r->reloc == CF_RELOC_JOIN) == (r->leaf != NULL), "row %s leaf", r->rel);
	}
}
