/* The protected table (common/protected.h) and its matcher
 * (common/protected_match.h): whole rows, and which row covers which path
 * under which writable locations, homes and lifts. Strings only: the
 * matcher touches no file. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "protected.h"
#include "protected_match.h"

Test(protected, every_row_is_whole)
{
	for (size_t i = 0; i < cf_protected_count; i++) {
		const struct cf_protected_row *r = &cf_protected_table[i];
		cr_assert(r->rel && *r->rel, "row %zu has no path", i);
		size_t n = strlen(r->rel);
		cr_expect(r->rel[0] != '/' && r->rel[n - 1] != '/' && !strstr(r->rel, "//"),
			  "%s: relative, no leading, trailing or double '/'", r->rel);
		cr_expect(!strstr(r->rel, "./") && strcmp(r->rel, ".") != 0, "%s", r->rel);
		cr_expect(r->runs && *r->runs, "%s: who runs it?", r->rel);
		cr_expect(r->source && *r->source, "%s: where does that tool say so?", r->rel);
		cr_expect(!r->placeholder || r->kind == CF_PROT_DIR,
			  "%s: a placeholder is an empty directory, so only for a directory row",
			  r->rel);
		cr_expect(!r->placeholder || r->base == CF_PROT_PROJECT,
			  "%s: home rows get no placeholder (their tools create them)", r->rel);
		for (size_t j = 0; j < i; j++)
			cr_expect(strcmp(r->rel, cf_protected_table[j].rel) != 0 ||
					  r->base != cf_protected_table[j].base,
				  "%s is twice in the table", r->rel);
	}
}

/* The issue's rows, at least. */
Test(protected, the_issues_rows_are_there)
{
	static const char *const want[] = {".git/hooks", ".git/config", ".gitmodules", ".envrc",
					   ".vscode", ".idea", ".claude", ".mcp.json",
					   ".cursor", ".devcontainer", ".npm/_npx",
					   ".cache/pre-commit"};
	for (size_t w = 0; w < sizeof want / sizeof *want; w++) {
		bool found = false;
		for (size_t i = 0; i < cf_protected_count; i++)
			found |= strcmp(cf_protected_table[i].rel, want[w]) == 0;
		cr_expect(found, "%s is no row", want[w]);
	}
}

static char *ws_only[] = {"/w"};

static struct cf_protect_scope scope(char **writable, size_t n, const char *home)
{
	return (struct cf_protect_scope){.writable = writable, .n_writable = n, .home = home};
}

/* The row that covers PATH in S, by its rel, or "-" for none; its location
 * in LOC. */
static const char *rel_of(const struct cf_protect_scope *s, const char *path, char *loc)
{
	const struct cf_protected_row *r = cf_protected_match(s, path, loc, 4096);
	return r ? r->rel : "-";
}

Test(protected_match, project_rows_at_the_workspace_root)
{
	struct cf_protect_scope s = scope(ws_only, 1, "/h");
	char loc[4096];
	cr_expect_str_eq(rel_of(&s, "/w/.git/hooks/pre-commit", loc), ".git/hooks");
	cr_expect_str_eq(loc, "/w/.git/hooks");
	cr_expect_str_eq(rel_of(&s, "/w/.git/hooks", loc), ".git/hooks");
	cr_expect_str_eq(rel_of(&s, "/w/.git/config", loc), ".git/config");
	cr_expect_str_eq(rel_of(&s, "/w/.envrc", loc), ".envrc");
	cr_expect_str_eq(rel_of(&s, "/w/.vscode/tasks.json", loc), ".vscode");
	cr_expect_str_eq(loc, "/w/.vscode");
	cr_expect_str_eq(rel_of(&s, "/w/.mcp.json", loc), ".mcp.json");
	cr_expect_str_eq(rel_of(&s, "/w/.claude/settings.json", loc), ".claude");
}

/* The project roots: a writable location, a directory directly below one,
 * the working directory and its ancestors inside one; no deeper. */
Test(protected_match, project_roots)
{
	struct cf_protect_scope s = scope(ws_only, 1, "/h");
	char loc[4096];
	cr_expect_str_eq(rel_of(&s, "/w/a/.git/config", loc), ".git/config");
	cr_expect_str_eq(loc, "/w/a/.git/config");
	cr_expect_str_eq(rel_of(&s, "/w/a/b/.git/config", loc), "-", "two levels down, off the cwd");
	cr_expect_str_eq(rel_of(&s, "/w/node_modules/x/.vscode/settings.json", loc), "-");
	cr_expect_str_eq(rel_of(&s, "/w/.git/hooks/x/.git/hooks/y", loc), ".git/hooks");
	cr_expect_str_eq(loc, "/w/.git/hooks", "the outer row: the inner root is no root");
	/* On the way to the working directory, any depth. */
	s.cwd = "/w/a/b/c";
	cr_expect_str_eq(rel_of(&s, "/w/a/b/.git/config", loc), ".git/config");
	cr_expect_str_eq(loc, "/w/a/b/.git/config");
	cr_expect_str_eq(rel_of(&s, "/w/a/b/c/.envrc", loc), ".envrc");
	cr_expect_str_eq(rel_of(&s, "/w/a/b/d/.envrc", loc), "-", "a sibling of the way");
	cr_expect_str_eq(rel_of(&s, "/w/a/b/cc/.envrc", loc), "-", "a longer name is no ancestor");
	/* An ancestor of the working directory outside every writable
	 * location is no root. */
	s.cwd = "/w/a";
	cr_expect_str_eq(rel_of(&s, "/.git/config", loc), "-");
	/* Every directory is a root when / is writable, through the cwd. */
	char *root[] = {"/"};
	s = scope(root, 1, "/h");
	s.cwd = "/x/y";
	cr_expect_str_eq(rel_of(&s, "/x/y/.git/config", loc), ".git/config");
	cr_expect_str_eq(rel_of(&s, "/.git/config", loc), ".git/config");
	cr_expect_str_eq(rel_of(&s, "/q/.git/config", loc), ".git/config");
	cr_expect_str_eq(rel_of(&s, "/q/r/.git/config", loc), "-");
}

/* Whole components only, and what git itself writes stays uncovered. */
Test(protected_match, whole_components_only)
{
	struct cf_protect_scope s = scope(ws_only, 1, "/h");
	char loc[4096];
	static const char *const free_paths[] = {
		"/w/x.git/hooks/a",  "/w/.git/hooksy",     "/w/.git/hooks.old/a",
		"/w/.gitconfig",     "/w/.git",            "/w/.git/objects/ab/cdef",
		"/w/.git/index",     "/w/.git/refs/heads/main", "/w/.git/COMMIT_EDITMSG",
		"/w/.git/config.lock", "/w/my.envrc",      "/w/.vscodex/a",
		"/w/src/main.c",     "/w",                 "/w/.gitattributes",
		"/w/.pre-commit-config.yaml", "/w/.husky/pre-commit", "/w/AGENTS.md",
		"/w/Makefile",       "/w/.tool-versions",  "/w/.git/info/attributes",
	};
	for (size_t i = 0; i < sizeof free_paths / sizeof *free_paths; i++)
		cr_expect_str_eq(rel_of(&s, free_paths[i], loc), "-", "%s", free_paths[i]);
}

/* Outside every writable location Landlock refuses the write already. */
Test(protected_match, only_inside_writable_locations)
{
	struct cf_protect_scope s = scope(ws_only, 1, "/h");
	char loc[4096];
	cr_expect_str_eq(rel_of(&s, "/srv/repo/.git/config", loc), "-");
	cr_expect_str_eq(rel_of(&s, "/wx/.git/config", loc), "-");
	cr_expect_str_eq(rel_of(&s, "/h/.bashrc", loc), "-", "home is not writable here");
	cr_expect_str_eq(rel_of(&s, "relative/.git/config", loc), "-");
	cr_expect_null(cf_protected_match(&s, NULL, loc, sizeof loc));
}

/* A writable location that is a row's location or lies inside one is the
 * user's choice (a harness's state directory ~/.claude/shell-snapshots). */
Test(protected_match, writable_location_inside_a_row)
{
	char *w[] = {"/h/.claude/shell-snapshots", "/w/.git/hooks", "/h/.npm/_npx"};
	struct cf_protect_scope s = scope(w, 3, "/h");
	char loc[4096];
	cr_expect_str_eq(rel_of(&s, "/h/.claude/shell-snapshots/snap.sh", loc), "-");
	cr_expect_str_eq(rel_of(&s, "/w/.git/hooks/pre-commit", loc), "-");
	cr_expect_str_eq(rel_of(&s, "/h/.npm/_npx/x", loc), "-");
}

Test(protected_match, home_rows_where_home_is_writable)
{
	char *w[] = {"/w", "/h/.npm"};
	struct cf_protect_scope s = scope(w, 2, "/h");
	char loc[4096];
	cr_expect_str_eq(rel_of(&s, "/h/.npm/_npx/0123/node_modules/.bin/x", loc), ".npm/_npx");
	cr_expect_str_eq(loc, "/h/.npm/_npx");
	cr_expect_str_eq(rel_of(&s, "/h/.npm/_cacache/x", loc), "-");
	cr_expect_str_eq(rel_of(&s, "/h/.bashrc", loc), "-");
	cr_expect_str_eq(rel_of(&s, "/w/.npm/_npx/x", loc), "-", "a home row is no project row");

	char *all[] = {"/h"};
	s = scope(all, 1, "/h");
	cr_expect_str_eq(rel_of(&s, "/h/.bashrc", loc), ".bashrc");
	cr_expect_str_eq(rel_of(&s, "/h/.bashrc.d", loc), "-");
	cr_expect_str_eq(rel_of(&s, "/h/.config/git/config", loc), ".config/git");
	cr_expect_str_eq(rel_of(&s, "/h/.local/bin/ls", loc), ".local/bin");
	/* A home row's longer location wins over the project row .vscode. */
	cr_expect_str_eq(rel_of(&s, "/h/.vscode/extensions/x/main.js", loc), ".vscode/extensions");
	cr_expect_str_eq(rel_of(&s, "/h/.vscode/argv.json", loc), ".vscode");
	/* The account's home too, when it differs. */
	char *acct[] = {"/home/u"};
	s = scope(acct, 1, "/h");
	s.account_home = "/home/u";
	cr_expect_str_eq(rel_of(&s, "/home/u/.zshrc", loc), ".zshrc");
}

Test(protected_match, a_lift_uncovers_itself_and_below)
{
	char *lift[] = {"/w/.vscode/settings.json", "/w/.git/hooks"};
	struct cf_protect_scope s = scope(ws_only, 1, "/h");
	s.lifted = lift;
	s.n_lifted = 2;
	char loc[4096];
	cr_expect_str_eq(rel_of(&s, "/w/.vscode/settings.json", loc), "-");
	cr_expect_str_eq(rel_of(&s, "/w/.vscode/tasks.json", loc), ".vscode");
	cr_expect_str_eq(rel_of(&s, "/w/.vscode", loc), ".vscode", "nothing above a lift");
	cr_expect_str_eq(rel_of(&s, "/w/.git/hooks/pre-commit", loc), "-");
	cr_expect_str_eq(rel_of(&s, "/w/sub/.git/hooks/pre-commit", loc), ".git/hooks",
			 "another project's row stays");
}

Test(protected_match, a_short_location_buffer_is_cut)
{
	struct cf_protect_scope s = scope(ws_only, 1, "/h");
	char loc[6];
	cr_expect_not_null(cf_protected_match(&s, "/w/.git/config", loc, sizeof loc));
	cr_expect_str_eq(loc, "/w/.g");
}

/* ---- which paths --allow-write-protected accepts ---- */

static struct cf_policy pol;
static struct cf_denied secrets[2];

static void policy_setup(void)
{
	memset(&pol, 0, sizeof pol);
	cr_assert_eq(cf_strv_add(&pol.writable, "/w"), 0);
	cr_assert_eq(cf_strv_add(&pol.writable, "/h/.aws-cache"), 0);
	pol.home = "/h";
	secrets[0] = (struct cf_denied){"/h/.ssh", "SSH keys", "default"};
	secrets[1] = (struct cf_denied){"/w/.git/keys", "a key in the repository", "--deny"};
	pol.denied = secrets;
	pol.n_denied = 2;
}

static void policy_teardown(void)
{
	cf_strv_free(&pol.writable);
}

TestSuite(protected_lift, .init = policy_setup, .fini = policy_teardown);

Test(protected_lift, a_row_or_a_path_under_one)
{
	char why[1024];
	cr_expect_eq(cf_protected_lift_refusal(&pol, NULL, "/w/.vscode", why, sizeof why), 0, "%s", why);
	cr_expect_eq(cf_protected_lift_refusal(&pol, NULL, "/w/.vscode/settings.json", why, sizeof why), 0,
		     "%s", why);
	cr_expect_eq(cf_protected_lift_refusal(&pol, NULL, "/w/sub/.git/hooks", why, sizeof why), 0);
}

Test(protected_lift, anything_else_is_refused)
{
	char why[1024];
	static const char *const bad[] = {"/w", "/w/src", "/w/.git", "/srv/x/.vscode",
					  "/h/.bashrc"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		why[0] = '\0';
		cr_expect_eq(cf_protected_lift_refusal(&pol, NULL, bad[i], why, sizeof why), -EINVAL, "%s",
			     bad[i]);
		cr_expect(strstr(why, "is not covered by write protection"), "%s", why);
		cr_expect(strstr(why, "--allow-write-protected (CREDFENCE_ALLOW_WRITE_PROTECTED)"),
			  "%s", why);
	}
}

Test(protected_lift, a_secret_never)
{
	char why[1024];
	cr_expect_eq(cf_protected_lift_refusal(&pol, NULL, "/h/.ssh", why, sizeof why), -EINVAL);
	cr_expect(strstr(why, "is the secret location /h/.ssh (SSH keys), which is never lifted"),
		  "%s", why);
	/* A secret that lies where a row covers: the secret wins. */
	cr_expect_eq(cf_protected_lift_refusal(&pol, NULL, "/w/.git/keys/id", why, sizeof why), -EINVAL);
	cr_expect(strstr(why, "lies in the secret location /w/.git/keys"), "%s", why);
}
