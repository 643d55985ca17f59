/* The protected table (common/protected.h) and its matcher
 * (common/protected_match.h): whole rows, and which row covers which path
 * under which writable locations, homes and lifts. Strings only: the
 * matcher touches no file. And the project roots (common/project_root.h),
 * which the matcher and the mounts' plan share. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "protect_plan.h"
#include "project_root.h"
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
		cr_expect(!r->placeholder || r->kind == CF_PROT_DIR || r->fill,
			  "%s: a placeholder is an empty directory, or a file with what its "
			  "tool reads as no file", r->rel);
		cr_expect(!r->fill || (r->placeholder && r->kind == CF_PROT_FILE), "%s", r->rel);
		cr_expect(!r->placeholder || r->base != CF_PROT_HOME || r->private_copy,
			  "%s: home rows get no placeholder (their tools create them), but for "
			  "a private copy", r->rel);
		cr_expect(!r->private_copy || (r->kind == CF_PROT_DIR && r->placeholder), "%s",
			  r->rel);
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

/* ---- the project roots (common/project_root.h): one definition ---- */

static bool root(const char *w, const char *cwd, const char *dir)
{
	return cf_project_root(w, cwd, dir, strcmp(dir, "/") == 0 ? 0 : strlen(dir));
}

Test(project_root, the_definition)
{
	const char *cwd = "/w/a/b/c";
	static const char *const yes[] = {"/w", "/w/a", "/w/x", "/w/a/b", "/w/a/b/c", NULL};
	static const char *const no[] = {"/w/x/y", "/w/a/y", "/w/a/b/d", "/w/a/b/cc",
					 "/w/a/b/c/d", "/wx", "/", "/other", "/w/a/bb", NULL};
	for (size_t i = 0; yes[i]; i++)
		cr_expect(root("/w", cwd, yes[i]), "%s is a root of /w", yes[i]);
	for (size_t i = 0; no[i]; i++)
		cr_expect(!root("/w", cwd, no[i]), "%s is no root of /w", no[i]);
	cr_expect(!root("/w", NULL, "/w/a/b"), "no working directory: one level only");
	cr_expect(root("/w", NULL, "/w/a"));
	/* A prefix of a longer path, as the matcher asks. */
	cr_expect(cf_project_root("/w", cwd, "/w/a/.git/config", 4));
	cr_expect(!cf_project_root("/w", cwd, "/w/q/r/.git/config", 6));
	/* / writable: itself, its children, and the way to the cwd. */
	cr_expect(root("/", "/x/y", "/"));
	cr_expect(root("/", "/x/y", "/q"));
	cr_expect(root("/", "/x/y", "/x/y"));
	cr_expect(!root("/", "/x/y", "/q/r"));
}

static void mk(const char *base, const char *rel)
{
	char p[2 * PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", base, rel);
	cr_assert(mkdir(p, 0700) == 0, "mkdir %s: %s", p, strerror(errno));
}

/* Every directory of a small tree, to depth 4 below BASE, into ALL. */
static void walk(const char *dir, int depth, struct cf_strv *all)
{
	cr_assert(cf_strv_add(all, dir) == 0);
	DIR *d = depth < 4 ? opendir(dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char p[PATH_MAX + 256];
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			walk(p, depth + 1, all);
	}
	if (d)
		closedir(d);
}

/* The roots the mounts are planned at (cf_project_roots) are exactly the
 * directories of the tree that the matcher's definition accepts. */
Test(project_root, the_mounts_roots_are_the_matchers)
{
	char base[] = "/tmp/cf-roots-XXXXXX", w[PATH_MAX + 8], cwd[2 * PATH_MAX], link[PATH_MAX + 8];
	cr_assert(mkdtemp(base));
	char canon[PATH_MAX];
	cr_assert(realpath(base, canon));
	static const char *const dirs[] = {"w", "w/a", "w/a/b", "w/a/b/c", "w/a/b/d", "w/a/e",
					   "w/x", "w/x/y", "w/x/y/z", "w/.git", "w/.git/hooks",
					   "other", NULL};
	for (size_t i = 0; dirs[i]; i++)
		mk(canon, dirs[i]);
	snprintf(link, sizeof link, "%s/w/l", canon);
	cr_assert(symlink("a", link) == 0);
	snprintf(w, sizeof w, "%s/w", canon);
	const char *cwds[] = {NULL, "w", "w/a/b/c", "w/x/y/z", "other"};
	for (size_t k = 0; k < sizeof cwds / sizeof *cwds; k++) {
		if (cwds[k])
			snprintf(cwd, sizeof cwd, "%s/%s", canon, cwds[k]);
		const char *c = cwds[k] ? cwd : NULL;
		struct cf_strv roots = {0}, all = {0};
		cr_assert(cf_project_roots(&roots, w, c) == 0);
		walk(w, 0, &all);
		for (size_t i = 0; i < all.n; i++)
			cr_expect_eq(cf_strv_has(&roots, all.v[i]), root(w, c, all.v[i]),
				     "cwd %s: %s planned %d, matched %d", c ? c : "(none)", all.v[i],
				     cf_strv_has(&roots, all.v[i]), root(w, c, all.v[i]));
		for (size_t i = 0; i < roots.n; i++)
			cr_expect(cf_strv_has(&all, roots.v[i]), "cwd %s: %s planned, not in the tree",
				  c ? c : "(none)", roots.v[i]);
		cr_expect(!cf_strv_has(&roots, link), "a symlink below W is planned as a root");
		cf_strv_free(&roots);
		cf_strv_free(&all);
	}
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", canon);
	cr_expect(system(cmd) == 0);
}

static void put(const char *base, const char *rel)
{
	char p[2 * PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", base, rel);
	FILE *f = fopen(p, "w");
	cr_assert(f, "%s: %s", p, strerror(errno));
	fclose(f);
}

/* The mounts' plan of the lifts: a lift inside a held directory row that
 * exists is kept writable in it (keep_rw), an absent one is counted, a
 * lift of a whole row lifts it; relative lifts are taken in the working
 * directory. */
Test(protect_plan, lifts_inside_a_row_are_kept_writable)
{
	char base[] = "/tmp/cf-plan-XXXXXX", canon[PATH_MAX], w[PATH_MAX + 8];
	char want[PATH_MAX + 64], row[PATH_MAX + 64];
	cr_assert(mkdtemp(base));
	cr_assert(realpath(base, canon));
	mk(canon, "w");
	snprintf(w, sizeof w, "%s/w", canon);
	mk(w, ".vscode");
	mk(w, ".vscode/sub");
	mk(w, ".git");
	mk(w, ".git/hooks");
	put(w, ".vscode/settings.json");
	put(w, ".vscode/sub/x.json");
	struct cf_policy pol;
	memset(&pol, 0, sizeof pol);
	pol.workspace = w;
	cr_assert(cf_strv_add(&pol.writable, w) == 0);
	struct cf_strv allow = {0};
	snprintf(want, sizeof want, "%s/.vscode/sub/x.json", w);
	cr_assert(cf_strv_add(&allow, ".vscode/settings.json") == 0);
	cr_assert(cf_strv_add(&allow, ".vscode/launch.json") == 0); /* absent */
	cr_assert(cf_strv_add(&allow, want) == 0);                 /* absolute */
	cr_assert(cf_strv_add(&allow, ".git/hooks") == 0);         /* a whole row */
	struct cf_protect_plan pp;
	cr_assert(cf_protect_plan_build(&pp, &pol, &allow, w) == 0);
	cr_expect_eq(pp.keep_rw.n, 2);
	snprintf(row, sizeof row, "%s/.vscode/settings.json", w);
	cr_expect(cf_strv_has(&pp.keep_rw, row), "%s is not kept writable", row);
	cr_expect(cf_strv_has(&pp.keep_rw, want), "%s is not kept writable", want);
	cr_expect_eq(pp.lift_absent, 1);
	cr_expect(pp.lifted >= 1, "the lift of .git/hooks lifted no row");
	snprintf(row, sizeof row, "%s/.vscode", w);
	bool held = false, hooks = false;
	for (size_t i = 0; i < pp.n_items; i++) {
		held = held || strcmp(pp.items[i].path, row) == 0;
		hooks = hooks || strstr(pp.items[i].path, "/.git/hooks") != NULL;
	}
	cr_expect(held, ".vscode is not held");
	cr_expect(!hooks, ".git/hooks is held though lifted");
	cf_protect_plan_free(&pp);
	/* Without the lifts: nothing kept writable. */
	cr_assert(cf_protect_plan_build(&pp, &pol, NULL, w) == 0);
	cr_expect_eq(pp.keep_rw.n, 0);
	cf_protect_plan_free(&pp);
	cf_strv_free(&allow);
	cf_strv_free(&pol.writable);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", canon);
	cr_expect(system(cmd) == 0);
}

/* The plan over many roots, some named twice (a writable location inside
 * another, the working directory's ancestors, directories directly below
 * each): every row that exists is planned once, at every root, and none at
 * a symlink or a file that is no directory. 600 directories below W make
 * the memo and the sets grow several times. */
Test(protect_plan, every_root_once_among_many)
{
	char base[] = "/tmp/cf-plan-XXXXXX", canon[PATH_MAX], w[PATH_MAX + 8], inner[PATH_MAX + 16];
	char cwd[PATH_MAX + 32], p[PATH_MAX + 64];
	cr_assert(mkdtemp(base));
	cr_assert(realpath(base, canon));
	mk(canon, "w");
	snprintf(w, sizeof w, "%s/w", canon);
	enum { N = 600 };
	for (int i = 0; i < N; i++) {
		snprintf(p, sizeof p, "d%04d", i);
		mk(w, p);
		if (i % 3 == 0) {
			snprintf(p, sizeof p, "d%04d/.git", i);
			mk(w, p);
			snprintf(p, sizeof p, "d%04d/.git/hooks", i);
			mk(w, p);
		}
		if (i % 5 == 0) {
			snprintf(p, sizeof p, "d%04d/.envrc", i);
			put(w, p);
		}
	}
	/* A file and a symlink directly below W: no roots. */
	put(w, "f");
	snprintf(p, sizeof p, "%s/l", w);
	cr_assert(symlink("d0000", p) == 0);
	/* A writable location inside W, the working directory below it: its
	 * roots are also W's (d0003 directly below W, on the way to CWD). */
	snprintf(inner, sizeof inner, "%s/d0003", w);
	mk(inner, "sub");
	mk(inner, "sub/.vscode");
	snprintf(cwd, sizeof cwd, "%s/sub", inner);
	struct cf_policy pol;
	memset(&pol, 0, sizeof pol);
	pol.workspace = w;
	cr_assert(cf_strv_add(&pol.writable, w) == 0);
	cr_assert(cf_strv_add(&pol.writable, inner) == 0);
	struct cf_protect_plan pp;
	cr_assert(cf_protect_plan_build(&pp, &pol, NULL, cwd) == 0);
	size_t hooks = 0, envrc = 0, vscode = 0, other = 0;
	for (size_t i = 0; i < pp.n_items; i++) {
		const char *q = pp.items[i].path;
		for (size_t k = 0; k < i; k++)
			cr_expect(strcmp(pp.items[k].path, q) != 0, "%s planned twice", q);
		if (strstr(q, "/.git/hooks"))
			hooks++;
		else if (strstr(q, "/.envrc"))
			envrc++;
		else if (strstr(q, "/sub/.vscode"))
			vscode++;
		else if (!pp.items[i].make)
			other++;
	}
	cr_expect_eq(hooks, N / 3, "%zu .git/hooks planned, %d exist", hooks, N / 3);
	cr_expect_eq(envrc, N / 5, "%zu .envrc planned, %d exist", envrc, N / 5);
	cr_expect_eq(vscode, 1, "the working directory's .vscode planned %zu times", vscode);
	cr_expect_eq(other, 0, "%zu items that exist are no row made here", other);
	for (size_t i = 0; i < pp.mids.n; i++)
		for (size_t k = 0; k < i; k++)
			cr_expect(strcmp(pp.mids.v[k], pp.mids.v[i]) != 0, "mid %s twice", pp.mids.v[i]);
	cf_protect_plan_free(&pp);
	cf_strv_free(&pol.writable);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", canon);
	cr_expect(system(cmd) == 0);
}

/* A private cache is planned (made, with its parents, then given its
 * private copy) only inside a writable location that exists: ~/.npm/_npx
 * when ~/.npm exists, not when it does not (nothing could be made there,
 * and each harness child would find it lost). ~/.cache/pnpm/dlx is made
 * with its parent pnpm. */
Test(protect_plan, private_caches_only_inside_an_existing_writable_location)
{
	char base[] = "/tmp/cf-plan-XXXXXX", canon[PATH_MAX], home[PATH_MAX + 8], w[PATH_MAX + 8];
	char npm[PATH_MAX + 16], cache[PATH_MAX + 16], p[PATH_MAX + 64];
	cr_assert(mkdtemp(base));
	cr_assert(realpath(base, canon));
	mk(canon, "home");
	mk(canon, "home/.cache");
	mk(canon, "w");
	snprintf(home, sizeof home, "%s/home", canon);
	snprintf(w, sizeof w, "%s/w", canon);
	snprintf(npm, sizeof npm, "%s/.npm", home);
	snprintf(cache, sizeof cache, "%s/.cache", home);
	struct cf_policy pol;
	memset(&pol, 0, sizeof pol);
	pol.workspace = w;
	pol.home = home;
	cr_assert(cf_strv_add(&pol.writable, w) == 0);
	cr_assert(cf_strv_add(&pol.writable, npm) == 0); /* absent */
	cr_assert(cf_strv_add(&pol.writable, cache) == 0);
	struct cf_protect_plan pp;
	cr_assert(cf_protect_plan_build(&pp, &pol, NULL, w) == 0);
	bool npx = false, dlx = false;
	for (size_t i = 0; i < pp.n_items; i++) {
		npx = npx || strstr(pp.items[i].path, "/.npm/_npx") != NULL;
		snprintf(p, sizeof p, "%s/pnpm/dlx", cache);
		if (strcmp(pp.items[i].path, p) == 0) {
			dlx = true;
			cr_expect(pp.items[i].make && pp.items[i].row->private_copy);
		}
	}
	cr_expect(!npx, "~/.npm/_npx planned though ~/.npm does not exist");
	cr_expect(dlx, "~/.cache/pnpm/dlx not planned");
	cf_protect_plan_free(&pp);
	cf_strv_free(&pol.writable);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", canon);
	cr_expect(system(cmd) == 0);
}
