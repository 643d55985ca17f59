/* The files git reads to decide what to run, found from git's own files
 * (issue 31): for a project root whose .git exists, the .git file (a
 * linked worktree's or a submodule's "gitdir: PATH"), the git directory's
 * commondir, config, config.worktree and hooks, the common directory's
 * config and hooks, every submodule's git directory under modules/ (and
 * its checkout's .git file, which its core.worktree names), every linked
 * worktree's commondir and config.worktree under worktrees/ (and its .git
 * file, which its gitdir file names), the files config includes
 * (include.path, includeIf.*.path) and the core.hooksPath directory. Each
 * row of common/protected.c that it reports cites the line of git's source
 * that reads the file.
 *
 * What git reads and runs nothing from is left out, each by git's source
 * (2.39.5): info/attributes (attr.c:848) only names filter, diff and merge
 * drivers that config defines, as a .gitattributes in the worktree does;
 * info/exclude (dir.c:2855) and info/sparse-checkout select paths;
 * objects/info/alternates (object-file.c:622) adds object directories; a
 * remotes/ or branches/ file (remote.c:276, 304) is read only for a remote
 * that config does not define; HEAD and refs name commits. The rebase todo
 * (sequencer.c:1740, "exec") runs commands, but only at the user's own git
 * rebase --continue, and a fenced rebase must write it (SECURITY.md).
 *
 * Normal context (open, read, lstat, realpath); portable. Paths reported
 * are canonical, or canonical up to a last component that does not exist. */
#ifndef CF_GIT_LAYOUT_H
#define CF_GIT_LAYOUT_H

#include "protected.h"

/* Called with each path found and the row that says what reads it; a
 * negative result (-ENOMEM) stops the walk and is returned. */
typedef int (*cf_git_add_fn)(void *ctx, const char *path, const struct cf_protected_row *row);

/* A walk bounded in git directories (submodules and linked worktrees,
 * nested): past it the rest is not reported, and counted in *SKIPPED. */
#define CF_GIT_MAX_DIRS 256

/* The files of the repository whose worktree is ROOT (canonical; ROOT/.git
 * a directory or a .git file). HOME (may be NULL) expands "~/" in config
 * paths. 0 or the first negative result of ADD. */
int cf_git_layout(const char *root, const char *home, cf_git_add_fn add, void *ctx,
		  size_t *skipped);

/* The files the user's and the system's git config include, and their
 * core.hooksPath (absolute or under ~): $HOME/.gitconfig,
 * $XDG_CONFIG_HOME/git/config (else ~/.config/git/config), /etc/gitconfig
 * (config.c:2081-2100). The files themselves are rows of their own. */
int cf_git_layout_global(const char *home, const char *xdg_config, cf_git_add_fn add, void *ctx);

/* Each variable of the git config text TEXT (LEN bytes): FN(CTX, section,
 * subsection or NULL, name, value or NULL for a bare boolean); section and
 * name lowercased, as git compares them. The syntax of git-config(1),
 * CONFIGURATION FILE: comments, quotes, escapes, continued lines. For the
 * tests too. */
void cf_git_config_parse(const char *text, size_t len,
			 void (*fn)(void *ctx, const char *sect, const char *sub, const char *name,
				    const char *value),
			 void *ctx);

#endif
