/* Write protection that nothing routes around (issue 31), driven as a user
 * would (credfence run --home FAKE --workspace WS, and a child of credfence
 * harness): the project roots directly below the workspace hold their
 * placeholders; every file git reads to decide what to run (the list in
 * common/protected.c, each row citing git's source) is held, so that a plant
 * from inside changes nothing the user's own git, run afterwards outside
 * the fence, does; the legit git flows keep working inside. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()
/* A child of credfence harness instead of credfence run: a way of
 * cf-nsharness (fork, spawn, ...). */
static const char *harness_way;

static void setup(void)
{
	cf_suite_setup();
	harness_way = NULL;
}

TestSuite(write_holds, .init = setup, .fini = cf_suite_teardown, .timeout = 120);

/* Run SCRIPT with sh -c in the workspace, fenced: credfence run, or a child
 * of credfence harness started the way harness_way says. */
static void sh_fenced(const char *const *env, const char *script)
{
	cf_fx_out_free(&o);
	if (!harness_way) {
		fenced(&o, &fx, env, NULL, CF_ARGV("/bin/sh", "-c", (char *)script));
		return;
	}
	static struct argvb b;
	b.n = 0;
	argvb_add(&b, "--");
	argvb_add(&b, "%s", CF_NSHARNESS);
	argvb_add(&b, "%s", harness_way);
	argvb_add(&b, "%s", script);
	cf_fx_credfence(&o, &fx, "harness", env, b.v);
}

/* The user's own shell, outside the fence, in the workspace. */
static void sh_plain(struct cf_fx_out *out, const char *script)
{
	char **env = cf_fx_env(&fx, (const char *[]){"GIT_CONFIG_NOSYSTEM=1", NULL});
	cf_fx_run(out, fx.ws, env, NULL, CF_ARGV("/bin/sh", "-c", (char *)script));
	cf_fx_env_free(env);
}

static void plain_ok(const char *script)
{
	struct cf_fx_out p = {0};
	sh_plain(&p, script);
	cr_assert_eq(p.status, 0, OUT_FMT, OUT_ARGS(p));
	cf_fx_out_free(&p);
}

/* ---- project roots directly below the workspace ---- */

static void sub_roots(void)
{
	cf_test_require_tool("git");
	/* sub: a repository of a workspace of several; plain: a directory
	 * such as build/ that a fenced command must still remove. */
	plain_ok("set -e; git init -q sub && mkdir -p plain/deep && echo x > plain/deep/f");
	sh_fenced(NULL, "for d in .vscode .claude .cursor .zed; do\n"
			"  mkdir -p sub/$d 2>/dev/null; echo x > sub/$d/tasks.json 2>/dev/null && "
			"echo ESCAPED $d/tasks.json\n"
			"  echo x > sub/$d/settings.json 2>/dev/null && echo ESCAPED $d/settings.json\n"
			"done\n"
			"rm -rf plain && echo plain removed\n"
			"echo done\n");
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "done"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "ESCAPED"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "plain removed"), OUT_FMT, OUT_ARGS(o));
	struct stat st;
	cr_expect(lstat(cf_fx_at(fx.ws, "sub/.vscode/tasks.json"), &st) != 0);
	cr_expect(lstat(cf_fx_at(fx.ws, "sub/.claude/settings.json"), &st) != 0);
	/* No placeholder was made in the plain directory (it is gone). */
	cr_expect(lstat(cf_fx_at(fx.ws, "plain"), &st) != 0);
	cf_fx_assert_no_marker(&fx, &o);
}

Test(write_holds, a_repository_below_the_workspace_holds_its_placeholders_from_run)
{
	cf_test_require_landlock();
	sub_roots();
}

Test(write_holds, a_repository_below_the_workspace_holds_its_placeholders_in_a_harness_child)
{
	cf_test_require_landlock();
	harness_way = "spawn";
	sub_roots();
}

/* ---- git's own indirections (common/git_layout.h) ---- */

/* The workspace as a repository a user has: one commit; a submodule sm
 * (its git directory in .git/modules/sm, its checkout's .git a file); a
 * linked worktree wt below the workspace, with extensions.worktreeConfig
 * and a config.worktree of its own; .git/config includes shared.gitconfig
 * (a file of the worktree) and sets core.hooksPath to ~/.cache/githooks
 * (a writable cache); a bare remote to fetch from. */
static void repo(void)
{
	cf_test_require_tool("git");
	static const char script[] =
		  "set -e; git config --global user.name u && git config --global user.email u@x && "
		  "git config --global protocol.file.allow always && "
		  "git config --global init.defaultBranch main && "
		  "mkdir -p \"$HOME/.cache/githooks\" && "
		  "git init -q ../sm-src && git -C ../sm-src commit -q --allow-empty -m s && "
		  "git init -q --bare ../remote.git && "
		  "git init -q . && echo one > a.txt && git add a.txt && git commit -qm one && "
		  "git submodule -q add ../sm-src sm && git commit -qm sm && "
		  "git config core.hooksPath '~/.cache/githooks' && "
		  "git push -q ../remote.git main && git remote add origin ../remote.git && "
		  "git config extensions.worktreeConfig true && "
		  "git worktree add -q wt && git -C wt config --worktree user.name wt && "
		  "echo '[user]' > shared.gitconfig && git config include.path ../shared.gitconfig && "
		  "git status --short >/dev/null";
	plain_ok(script);
}

/* Each plant: a fenced command points one of git's files at code of its
 * own, which would print the fake key to stderr and leave PWNED-NAME in
 * the fixture root. $1 the fake key, $2 the fixture root. Each ends with
 * "planted NAME" when its writes went through. */
static const char plants[] =
	"K=$1; R=$2; W=$3; set +e\n"
	"on() { [ \"$W\" = all ] || [ \"$W\" = \"$1\" ]; }\n"
	"cmd() { printf 'cat %s >&2; : > %s/PWNED-%s' \"$K\" \"$R\" \"$1\"; }\n"
	"fsm() { printf '[core]\\n\\tfsmonitor = \"%s; false\"\\n' \"$(cmd $1)\"; }\n"
	"hook() { printf '#!/bin/sh\\n%s\\n' \"$(cmd $1)\"; }\n"
	"evil() { # a git directory of the attacker's: config, hooks, the real objects\n"
	"  d=$R/evil-$1; rm -rf \"$d\"; mkdir -p \"$d/hooks\"; fsm $1 > \"$d/config\"\n"
	"  hook $1 > \"$d/hooks/pre-commit\"; chmod +x \"$d/hooks/pre-commit\"\n"
	"  ln -s \"$g/objects\" \"$d/objects\"; ln -s \"$g/refs\" \"$d/refs\"; echo \"$d\"; }\n"
	"repo() { # a repository of the attacker's\n"
	"  d=$R/evil-$1; rm -rf \"$d\"; git init -q \"$d\" && git -C \"$d\" commit -q --allow-empty -m e\n"
	"  fsm $1 >> \"$d/.git/config\"; echo \"$d/.git\"; }\n"
	"ok() { echo \"planted $1\"; }\n"
	"g=$(pwd)/.git\n"
	"if on commondir; then d=$(evil commondir); (echo \"$d\" > .git/commondir) 2>/dev/null && ok commondir; fi\n"
	"if on sm-config; then (fsm sm-config >> .git/modules/sm/config) 2>/dev/null && ok sm-config; fi\n"
	"if on sm-rename; then c=.git/modules/sm/config; (cp $c $c.new && fsm sm-rename >> $c.new && "
	"mv -f $c.new $c) 2>/dev/null && ok sm-rename; fi\n"
	"if on sm-commondir; then d=$(evil sm-commondir)\n"
	"  (echo \"$d\" > .git/modules/sm/commondir) 2>/dev/null && ok sm-commondir; fi\n"
	"if on sm-hook; then (hook sm-hook > .git/modules/sm/hooks/pre-commit && "
	"chmod +x .git/modules/sm/hooks/pre-commit) 2>/dev/null && ok sm-hook; fi\n"
	"if on sm-gitfile; then d=$(repo sm-gitfile); (echo \"gitdir: $d\" > sm/.git) 2>/dev/null && "
	"ok sm-gitfile; fi\n"
	"if on wt-commondir; then d=$(evil wt-commondir)\n"
	"  (echo \"$d\" > .git/worktrees/wt/commondir) 2>/dev/null && ok wt-commondir; fi\n"
	"if on wt-config; then (fsm wt-config >> .git/worktrees/wt/config.worktree) 2>/dev/null && "
	"ok wt-config; fi\n"
	"if on wt-gitfile; then d=$(repo wt-gitfile); (echo \"gitdir: $d\" > wt/.git) 2>/dev/null && "
	"ok wt-gitfile; fi\n"
	"if on include; then (fsm include >> shared.gitconfig) 2>/dev/null && ok include; fi\n"
	"if on hookspath; then (hook hookspath > \"$HOME/.cache/githooks/pre-commit\" && "
	"chmod +x \"$HOME/.cache/githooks/pre-commit\") 2>/dev/null && ok hookspath; fi\n"
	"echo plants done\n";

static const char *const plant_names[] = {"commondir",  "sm-config",  "sm-rename",
					  "sm-commondir", "sm-hook", "sm-gitfile",
					  "wt-commondir", "wt-config", "wt-gitfile",
					  "include",    "hookspath"};

/* The user's own git, outside the fence: status (which recurses into the
 * submodule), a commit in the repository, in the submodule and in the
 * linked worktree. What a plant ran left PWNED-NAME. */
static void users_git(struct cf_fx_out *p)
{
	sh_plain(p, "git status; echo b >> a.txt && git commit -qam b; "
		    "git -C sm status; git -C sm commit -q --allow-empty -m x; "
		    "git -C wt status; git -C wt commit -q --allow-empty -m y; true");
}

static void run_plants(bool fenced_run, const char *which, char *out, size_t n)
{
	/* Too long for one argument: read from the fixture root. */
	char file[PATH_MAX], script[3 * PATH_MAX + 16];
	cf_fx_fmt(file, sizeof file, "%s/plants.sh", fx.root);
	cf_fx_write(file, plants);
	cf_fx_fmt(script, sizeof script, "sh '%s' '%s' '%s' %s", file,
		  cf_fx_secret(&fx, ".ssh")->key, fx.root, which);
	if (fenced_run) {
		sh_fenced(NULL, script);
		cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
		cr_expect(has_line(o.out, "plants done"), OUT_FMT, OUT_ARGS(o));
		cf_fx_fmt(out, n, "%s", o.out);
		return;
	}
	struct cf_fx_out p = {0};
	sh_plain(&p, script);
	cr_assert(has_line(p.out, "plants done"), OUT_FMT, OUT_ARGS(p));
	cf_fx_fmt(out, n, "%s", p.out);
	cf_fx_out_free(&p);
}

static void git_plants(void)
{
	char planted[8192];
	repo();
	run_plants(true, "all", planted, sizeof planted);
	struct cf_fx_out p = {0};
	users_git(&p);
	cf_fx_assert_no_marker(&fx, &p);
	for (size_t i = 0; i < sizeof plant_names / sizeof *plant_names; i++) {
		struct stat st;
		cr_expect(!has_line(planted, "planted %s", plant_names[i]), "%s went through:\n%s",
			  plant_names[i], planted);
		char pw[PATH_MAX];
		cf_fx_fmt(pw, sizeof pw, "%s/PWNED-%s", fx.root, plant_names[i]);
		cr_expect(lstat(pw, &st) != 0, "the user's git ran the plant %s:\n" OUT_FMT,
			  plant_names[i], OUT_ARGS(p));
	}
	cf_fx_out_free(&p);
}

Test(write_holds, no_plant_in_gits_files_reaches_the_users_git_from_run)
{
	cf_test_require_landlock();
	git_plants();
}

Test(write_holds, no_plant_in_gits_files_reaches_the_users_git_from_a_harness_child)
{
	cf_test_require_landlock();
	harness_way = "fork";
	git_plants();
}

/* The control: each plant, made outside the fence in a repository of its
 * own, does reach the user's git (so the tests above can fail). */
Test(write_holds, each_plant_reaches_the_users_git_when_unfenced)
{
	for (size_t i = 0; i < sizeof plant_names / sizeof *plant_names; i++) {
		char planted[8192], pw[PATH_MAX], reset[4 * PATH_MAX];
		struct stat st;
		cf_fx_fmt(reset, sizeof reset,
			  "set -e; cd '%s' && rm -rf ws sm-src remote.git && mkdir ws && "
			  "rm -rf home/.gitconfig home/.cache/githooks",
			  fx.root);
		plain_ok(reset);
		repo();
		run_plants(false, plant_names[i], planted, sizeof planted);
		cr_expect(has_line(planted, "planted %s", plant_names[i]), "%s:\n%s", plant_names[i],
			  planted);
		struct cf_fx_out p = {0};
		users_git(&p);
		cf_fx_fmt(pw, sizeof pw, "%s/PWNED-%s", fx.root, plant_names[i]);
		cr_expect(lstat(pw, &st) == 0, "the plant %s did not run:\n" OUT_FMT, plant_names[i],
			  OUT_ARGS(p));
		cf_fx_out_free(&p);
	}
}

/* What a fenced command legitimately does with git still works: commit,
 * branch, stash, rebase, worktree add, fetch from a local remote, fetch and
 * checkout in a submodule, and git submodule update, which rewrites the
 * submodule's held config with the same bytes at every run
 * (ensure_core_worktree, builtin/submodule--helper.c:2465-2475 in git
 * 2.39.5; the shim lets a rename of the same bytes through). The
 * placeholder .git/commondir ("."), made at the first fenced run, changes
 * nothing the user's git does outside. */
static void legit_git(void)
{
	repo();
	static const char script[] =
		"set -e\n"
		"echo b > b.txt && git add b.txt && git commit -qm b && echo commit ok\n"
		"git branch topic && git checkout -q topic && echo c >> a.txt && git commit -qam c && "
		"echo branch ok\n"
		"echo d >> b.txt && git stash -q && git stash pop -q && git commit -qam d && echo stash ok\n"
		"git checkout -q main && echo e > e.txt && git add e.txt && git commit -qm e && "
		"git checkout -q topic && git rebase -q main && echo rebase ok\n"
		"git worktree add -q wt2 && git -C wt2 status --short && echo worktree ok\n"
		"git fetch -q origin && echo fetch ok\n"
		"git -C sm fetch -q origin && git -C sm checkout -q HEAD~0 && echo submodule ok\n";
	sh_fenced(NULL, script);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	for (const char *w = "commit\0branch\0stash\0rebase\0worktree\0fetch\0submodule\0"; *w;
	     w += strlen(w) + 1)
		cr_expect(has_line(o.out, "%s ok", w), OUT_FMT, OUT_ARGS(o));
	cf_fx_out_free(&o);
	sh_fenced(NULL, "git submodule update && echo update ok");
	cr_expect(has_line(o.out, "update ok"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "credfence: denied") && !strstr(o.err, "credfence: denied"),
		  OUT_FMT, OUT_ARGS(o));
	/* The user's git outside, after the placeholder: all as before. */
	char *cd = cf_fx_slurp(cf_fx_at(fx.ws, ".git/commondir"));
	cr_expect(cd && strcmp(cd, ".\n") == 0, "the placeholder: %s", cd ? cd : "(none)");
	free(cd);
	struct cf_fx_out p = {0};
	sh_plain(&p, "set -e; git status --short && git log --oneline | wc -l && "
		     "git -C wt2 log -1 --format=%s && git worktree list | wc -l && "
		     "git submodule status >/dev/null && echo outside ok");
	cr_expect_eq(p.status, 0, OUT_FMT, OUT_ARGS(p));
	cr_expect(has_line(p.out, "outside ok"), OUT_FMT, OUT_ARGS(p));
	cf_fx_out_free(&p);
}

Test(write_holds, legit_git_flows_work_from_run)
{
	cf_test_require_landlock();
	legit_git();
}

Test(write_holds, legit_git_flows_work_in_a_harness_child)
{
	cf_test_require_landlock();
	harness_way = "spawn";
	legit_git();
}

/* The shim lets a rename over a held file through only when the two hold
 * the same bytes (shim/linux/denied.c): git config writing the value the
 * submodule's config has goes through, without touching the held file;
 * a value of the same length but other bytes is refused, the held file
 * the same inode with the same bytes, git's lock file gone either way. */
static void same_bytes_rename(void)
{
	repo();
	char cfg[PATH_MAX], lock[PATH_MAX];
	cf_fx_fmt(cfg, sizeof cfg, "%s/.git/modules/sm/config", fx.ws);
	cf_fx_fmt(lock, sizeof lock, "%s.lock", cfg);
	char *before = cf_fx_slurp(cfg);
	struct stat sb, sa;
	cr_assert(before && stat(cfg, &sb) == 0);
	cr_assert(strstr(before, "worktree = ../../../sm\n"), "%s", before);
	sh_fenced(NULL, "c=.git/modules/sm/config\n"
			"git config -f $c core.worktree ../../../sm && echo same ok\n"
			"git config -f $c core.worktree ../../../sX && echo other ok\n"
			"git config -f $c core.worktree ../../../sm2 && echo longer ok\n"
			"echo done\n");
	cr_expect(has_line(o.out, "same ok"), OUT_FMT, OUT_ARGS(o));
	cr_expect(!has_line(o.out, "other ok") && !has_line(o.out, "longer ok"), OUT_FMT,
		  OUT_ARGS(o));
	cr_expect(strstr(o.err, "Device or resource busy"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "done"), OUT_FMT, OUT_ARGS(o));
	char *after = cf_fx_slurp(cfg);
	cr_expect(after && strcmp(after, before) == 0, "the held config changed:\n%s",
		  after ? after : "(none)");
	cr_expect(stat(cfg, &sa) == 0 && sa.st_ino == sb.st_ino, "the held config was replaced");
	struct stat sl;
	cr_expect(lstat(lock, &sl) != 0, "git's lock file was left");
	free(before);
	free(after);
	cf_fx_out_free(&o);
}

Test(write_holds, a_rename_over_a_held_file_needs_the_same_bytes_from_run)
{
	cf_test_require_landlock();
	same_bytes_rename();
}

Test(write_holds, a_rename_over_a_held_file_needs_the_same_bytes_in_a_harness_child)
{
	cf_test_require_landlock();
	harness_way = "fork";
	same_bytes_rename();
}

/* credfence check answers what holds each of git's files. */
Test(write_holds, check_names_what_holds_gits_files)
{
	cf_test_require_landlock();
	repo();
	cf_fx_credfence(&o, &fx, "check", NULL,
			CF_ARGV(".git/commondir", ".git/modules/sm/config", "sm/.git",
				".git/worktrees/wt/commondir", "wt/.git", "shared.gitconfig",
				".git/modules/sm/hooks/pre-commit", "a.txt"));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".git/commondir: does not exist (ENOENT); create: denied (runs "
				  "unfenced later: git (commondir names where git reads config and "
				  "hooks))"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".git/modules/sm/config: file; read: allowed; write: denied (runs "
				  "unfenced later: git config (core.fsmonitor, core.hooksPath, "
				  "aliases))"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "sm/.git: file; read: allowed; write: denied (runs unfenced "
				  "later: git (a .git file names the git directory))"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".git/worktrees/wt/commondir: file; read: allowed; write: denied "
				  "(runs unfenced later: git (commondir names where git reads config "
				  "and hooks))"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "wt/.git: file; read: allowed; write: denied (runs unfenced "
				  "later: git (a .git file names the git directory))"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "shared.gitconfig: file; read: allowed; write: denied (runs "
				  "unfenced later: git config (an included file))"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, ".git/modules/sm/hooks/pre-commit: does not exist (ENOENT); "
				  "create: denied (runs unfenced later: git hooks)"),
		  OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "a.txt: file; read: allowed; write: allowed"), OUT_FMT,
		  OUT_ARGS(o));
}

/* ---- executable caches: a private copy inside the fence ---- */

/* npx from a packed tarball, offline; the fake ~/.npmrc (a secret row,
 * its marker a config key npm would print) left unread. */
#define NPX "NPM_CONFIG_USERCONFIG=/dev/null npx --yes --offline --package"

/* A package with one bin that prints ORIGINAL-TOOL, packed with npm pack
 * into TGZ (no registry: npx installs the tarball offline). */
static void npx_package(char *tgz, size_t n)
{
	char script[2 * PATH_MAX];
	cf_test_require_tool("npx");
	cf_test_require_tool("npm");
	cf_fx_write(cf_fx_at(fx.root, "pkg/package.json"),
		    "{\"name\":\"cf-npx-tool\",\"version\":\"1.0.0\","
		    "\"bin\":{\"cf-npx-tool\":\"cli.js\"}}\n");
	cf_fx_write(cf_fx_at(fx.root, "pkg/cli.js"),
		    "#!/usr/bin/env node\nconsole.log(\"ORIGINAL-TOOL\")\n");
	cf_fx_fmt(script, sizeof script,
		  "set -e; cd '%s/pkg' && chmod +x cli.js && "
		  "NPM_CONFIG_USERCONFIG=/dev/null npm pack --silent",
		  fx.root);
	plain_ok(script);
	cf_fx_fmt(tgz, n, "%s/pkg/cf-npx-tool-1.0.0.tgz", fx.root);
}

/* npx --yes inside the fence, with ~/.npm/_npx absent or present at the
 * start: it installs and runs the package, and a fenced command that then
 * rewrites the cached bin and adds an entry of its own sees both; the
 * user's npx outside afterwards runs the original and finds neither. */
static void npx_private(bool present)
{
	char tgz[PATH_MAX], script[4 * PATH_MAX], npx_dir[PATH_MAX];
	npx_package(tgz, sizeof tgz);
	cf_fx_fmt(npx_dir, sizeof npx_dir, "%s/.npm/_npx", fx.home);
	if (present) {
		cf_fx_fmt(script, sizeof script, NPX " '%s' cf-npx-tool", tgz);
		struct cf_fx_out p = {0};
		sh_plain(&p, script);
		cr_assert(has_line(p.out, "ORIGINAL-TOOL"), OUT_FMT, OUT_ARGS(p));
		cf_fx_out_free(&p);
	} else {
		cf_fx_rmtree(npx_dir);
	}
	cf_fx_fmt(script, sizeof script,
		  NPX " '%1$s' cf-npx-tool || echo NPX-FAILED\n"
		  "f=$(find \"$HOME/.npm/_npx\" -name cli.js | head -n1)\n"
		  "printf '#!/bin/sh\\ncat %2$s; echo PLANTED-TOOL\\n' > \"$f\" && echo rewrote\n"
		  "mkdir -p \"$HOME/.npm/_npx/cf-plant\" && echo x > \"$HOME/.npm/_npx/cf-plant/x\" && "
		  "echo added\n"
		  NPX " '%1$s' cf-npx-tool\n",
		  tgz, cf_fx_secret(&fx, ".ssh")->key);
	sh_fenced(NULL, script);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "ORIGINAL-TOOL"), "npx inside: " OUT_FMT, OUT_ARGS(o));
	cr_expect(!strstr(o.out, "NPX-FAILED"), OUT_FMT, OUT_ARGS(o));
	/* Its own writes are there for the fenced tool. */
	cr_expect(has_line(o.out, "rewrote") && has_line(o.out, "added"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "PLANTED-TOOL"), "the fence's own copy: " OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
	/* The user's npx, outside: the original, never the fence's copy. */
	struct cf_fx_out p = {0};
	cf_fx_fmt(script, sizeof script, NPX " '%s' cf-npx-tool; ls -a \"$HOME/.npm/_npx\"", tgz);
	sh_plain(&p, script);
	cr_expect(has_line(p.out, "ORIGINAL-TOOL"), OUT_FMT, OUT_ARGS(p));
	cr_expect(!strstr(p.out, "PLANTED-TOOL") && !strstr(p.out, "cf-plant"), OUT_FMT,
		  OUT_ARGS(p));
	cf_fx_assert_no_marker(&fx, &p);
	cf_fx_out_free(&p);
}

Test(write_holds, npx_with_no_npx_cache_works_inside_and_plants_nothing_from_run)
{
	cf_test_require_landlock();
	npx_private(false);
}

Test(write_holds, npx_with_an_npx_cache_works_inside_and_plants_nothing_from_run)
{
	cf_test_require_landlock();
	npx_private(true);
}

Test(write_holds, npx_with_no_npx_cache_works_inside_and_plants_nothing_in_a_harness_child)
{
	cf_test_require_landlock();
	harness_way = "spawn";
	npx_private(false);
}

Test(write_holds, npx_with_an_npx_cache_works_inside_and_plants_nothing_in_a_harness_child)
{
	cf_test_require_landlock();
	harness_way = "spawn";
	npx_private(true);
}

/* The other caches a tool executes from get the same: a db.db made in
 * ~/.cache/pre-commit, a corepack or pnpm dlx entry, land in the fence's
 * own copy; absent ones are made (with their parents) so that no fenced
 * command can make them outside. */
Test(write_holds, pre_commit_corepack_and_dlx_caches_are_private)
{
	cf_test_require_landlock();
	static const char *const dirs[] = {".cache/pre-commit", ".cache/node/corepack",
					   ".cache/pnpm/dlx"};
	cf_fx_rmtree(cf_fx_at(fx.home, ".cache/pre-commit"));
	mode_t mask = umask(022);
	sh_fenced(NULL, "for d in .cache/pre-commit .cache/node/corepack .cache/pnpm/dlx; do\n"
			"  echo x > \"$HOME/$d/db.db\" && echo \"wrote $d\"; done\n");
	umask(mask);
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	/* Made as mkdir -p makes it, for the user's pre-commit to use
	 * afterwards: 0755 less the umask (seed 41's tree_ns.c:134, 0754). */
	struct stat made;
	cr_assert_eq(stat(cf_fx_at(fx.home, ".cache/pre-commit"), &made), 0);
	cr_expect(S_ISDIR(made.st_mode) && (made.st_mode & 07777) == 0755, "mode %o",
		  (unsigned)(made.st_mode & 07777));
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		struct stat st;
		cr_expect(has_line(o.out, "wrote %s", dirs[i]), OUT_FMT, OUT_ARGS(o));
		char p[PATH_MAX];
		cf_fx_fmt(p, sizeof p, "%s/%s/db.db", fx.home, dirs[i]);
		cr_expect(lstat(p, &st) != 0, "%s reached the user's cache", p);
	}
	/* credfence check says where such a write goes. */
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "check", NULL, CF_ARGV((char *)cf_fx_at(fx.home, ".npm/_npx/x")));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "%s/.npm/_npx/x: does not exist (ENOENT); create: allowed (into "
				  "the fence's own copy; npx outside never runs it)",
			   fx.home),
		  OUT_FMT, OUT_ARGS(o));
}

/* A private cache you remove from outside while a harness runs is made
 * again by the keeper and given its private copy again: a child's write
 * after that still stays in the fence. */
Test(write_holds, a_private_cache_removed_from_outside_is_private_again)
{
	char script[4 * PATH_MAX], outside[2 * PATH_MAX];
	cf_test_require_landlock();
	cf_fx_mkdirs(cf_fx_at(fx.home, ".npm/_npx/abc"));
	cf_fx_write(cf_fx_at(fx.home, ".npm/_npx/abc/entry"), "exit 0\n");
	/* You, outside: once the harness has started, rm -rf ~/.npm/_npx. */
	cf_fx_fmt(outside, sizeof outside,
		  "i=0; while [ ! -e '%1$s/started' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); "
		  "done; rm -rf \"$HOME/.npm/_npx\" && : > '%1$s/removed'",
		  fx.root);
	pid_t w = fork();
	cr_assert(w >= 0);
	if (w == 0) {
		struct cf_fx_out p = {0};
		sh_plain(&p, outside);
		_exit(p.status);
	}
	/* The harness (bash: its redirections and [ are its own). */
	cf_fx_fmt(script, sizeof script,
		  "/bin/sh -c 'ls \"$HOME/.npm/_npx\"'; : > '%1$s/started'; i=0; "
		  "while [ ! -e '%1$s/removed' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; "
		  "sleep 0.5; /bin/sh -c 'echo x > \"$HOME/.npm/_npx/planted\" && echo child wrote'; "
		  "exit 0",
		  fx.root);
	cf_fx_credfence(&o, &fx, "harness", NULL, CF_ARGV("--", "bash", "-c", script));
	int st;
	cr_assert_eq(waitpid(w, &st, 0), w);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the rm -rf outside failed");
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "abc"), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "child wrote"), OUT_FMT, OUT_ARGS(o));
	struct stat sb;
	cr_expect(lstat(cf_fx_at(fx.home, ".npm/_npx/planted"), &sb) != 0,
		  "the child's write reached the user's ~/.npm/_npx");
}
