#include "protected.h"

#include <string.h>

#define DIR_(rel, runs, src, ph) { rel, CF_PROT_PROJECT, CF_PROT_DIR, runs, src, ph, NULL, false }
#define FILE_(rel, runs, src) { rel, CF_PROT_PROJECT, CF_PROT_FILE, runs, src, false, NULL, false }
#define FILL_(rel, runs, src, fill) \
	{ rel, CF_PROT_PROJECT, CF_PROT_FILE, runs, src, true, fill, false }
#define HOME_DIR(rel, runs, src, ph) { rel, CF_PROT_HOME, CF_PROT_DIR, runs, src, ph, NULL, false }
#define HOME_FILE(rel, runs, src) { rel, CF_PROT_HOME, CF_PROT_FILE, runs, src, false, NULL, false }
#define HOME_PRIVATE(rel, runs, src) { rel, CF_PROT_HOME, CF_PROT_DIR, runs, src, true, NULL, true }
#define GIT_DIR(rel, runs, src, ph) { rel, CF_PROT_GIT, CF_PROT_DIR, runs, src, ph, NULL, false }
#define GIT_FILE(rel, runs, src, fill) \
	{ rel, CF_PROT_GIT, CF_PROT_FILE, runs, src, fill != NULL, fill, false }

/* A commondir placeholder: git takes the file's content, less trailing
 * newlines, relative to the git directory (setup.c, get_common_dir_noenv,
 * lines 306-333 in git 2.39.5): "." names the git directory itself, which
 * is what git uses when there is no commondir. An empty file makes git die
 * ("failed to read"), and so does a directory. Measured with git 2.39.5:
 * status, commit, branch, stash, rebase, worktree add/list/remove,
 * submodule update, gc, fsck and fetch work with it; rev-parse
 * --git-common-dir prints the directory absolute instead of ".git". */
#define COMMONDIR_FILL ".\n"

/* Where the line is drawn (SECURITY.md, "What write protection covers"): a
 * row is a file that a tool runs, or obeys to run something, when the user
 * did not ask it to run the project's code: git status or commit, a cd, an
 * editor or agent opening the folder. Files that the user runs knowingly to
 * run the project (Makefile, package.json scripts, build.rs, conftest.py,
 * .pre-commit-config.yaml and .husky/ behind an installed hook manager) are
 * the project's code, which fenced commands are there to write; they are no
 * rows. Instructions (AGENTS.md, CLAUDE.md, .windsurfrules) steer a model, run
 * nothing, and are no rows either.
 *
 * placeholder: only where an empty read-only directory changes what no tool
 * does: git status lists no empty directory (git tracks files only), and the
 * editors and agents below read named files inside theirs, none of which an
 * empty one holds. Not for .idea (an empty .idea makes a JetBrains IDE open
 * the folder as an existing project instead of importing it) nor for the
 * caches and home rows, which their tools create and fill. */
const struct cf_protected_row cf_protected_table[] = {
	/* githooks(5): "Hooks are programs you can place in a hooks directory
	 * to trigger actions at certain points in git's execution"; the
	 * default directory is $GIT_DIR/hooks. An empty one holds no hook. */
	DIR_(".git/hooks", "git hooks", "githooks(5)", true),
	/* git-config(1): core.fsmonitor and core.hooksPath name programs that
	 * git status and git commit run; alias.* with '!' runs a shell
	 * command; core.sshCommand, credential.helper and diff/filter drivers
	 * too. */
	FILE_(".git/config", "git config (core.fsmonitor, core.hooksPath, aliases)",
	      "git-config(1), CONFIGURATION FILE and core.fsmonitor"),
	/* git-config(1): $GIT_DIR/config.worktree is read as configuration
	 * when extensions.worktreeConfig is set. */
	FILE_(".git/config.worktree", "git config (per worktree)",
	      "git-config(1), extensions.worktreeConfig"),
	/* setup.c, get_common_dir_noenv (git 2.39.5, line 312): when
	 * $GIT_DIR/commondir exists, git reads config, hooks, objects and
	 * refs from the directory it names instead. */
	FILL_(".git/commondir", "git (commondir names where git reads config and hooks)",
	      "git 2.39.5 setup.c:312 (get_common_dir_noenv)", COMMONDIR_FILL),
	/* gitmodules(5): the URL and path git submodule update fetches and
	 * checks out; the '!command' form of update is ignored there "for
	 * security reasons" (and since git 2.24.1 refused, CVE-2019-19604). */
	FILE_(".gitmodules", "git submodules", "gitmodules(5)"),
	/* direnv(1): "Before each prompt, direnv checks for the existence of
	 * a .envrc file ... loads it into a bash sub-shell"; only files the
	 * user allowed (by path and content hash: direnv-allow). */
	FILE_(".envrc", "direnv", "direnv(1), direnv.net"),
	/* mise hooks (enter, leave, cd) run on every cd under mise activate,
	 * and [env] _.source runs scripts: https://mise.jdx.dev/hooks.html.
	 * Trust is by path unless paranoid (mise trust --help), and mise run,
	 * install and exec trust their own config by themselves. The file
	 * names: https://mise.jdx.dev/configuration.html. */
	FILE_("mise.toml", "mise hooks and env", "mise.jdx.dev/hooks.html"),
	FILE_(".mise.toml", "mise hooks and env", "mise.jdx.dev/hooks.html"),
	FILE_("mise.local.toml", "mise hooks and env", "mise.jdx.dev/hooks.html"),
	FILE_(".mise.local.toml", "mise hooks and env", "mise.jdx.dev/hooks.html"),
	DIR_(".mise", "mise hooks and env", "mise.jdx.dev/configuration.html", false),
	FILE_(".config/mise.toml", "mise hooks and env", "mise.jdx.dev/configuration.html"),
	DIR_(".config/mise", "mise hooks and env", "mise.jdx.dev/configuration.html", false),
	/* VS Code: tasks.json (a task with runOptions.runOn "folderOpen" runs
	 * when the folder opens), settings.json (terminal profiles and
	 * environment, interpreter and tool paths), launch.json. Zed reads
	 * .vscode/tasks.json too (zed-industries/zed issue 51733). */
	DIR_(".vscode", "VS Code tasks and settings", "code.visualstudio.com/docs/editor/tasks",
	     true),
	/* JetBrains IDEs: run configurations and startup tasks in .idea/. */
	DIR_(".idea", "JetBrains IDE run configurations",
	     "jetbrains.com/help/idea/project-settings-and-structure.html", false),
	/* Zed: .zed/tasks.json and .zed/settings.json (language servers'
	 * binaries, context servers): https://zed.dev/docs/tasks. */
	DIR_(".zed", "Zed tasks and settings", "zed.dev/docs/tasks", true),
	/* Claude Code: .claude/settings.json (hooks run shell commands,
	 * permissions), .claude/commands, .claude/agents. */
	DIR_(".claude", "Claude Code settings, hooks, commands and agents",
	     "docs.anthropic.com/en/docs/claude-code/settings", true),
	/* Claude Code: project-scoped MCP servers, started as commands (after
	 * the user approves the file's servers once). */
	FILE_(".mcp.json", "MCP servers an agent starts", "docs.anthropic.com/en/docs/claude-code/mcp"),
	/* Cursor: .cursor/mcp.json (servers it starts), rules, hooks. */
	DIR_(".cursor", "Cursor MCP servers, hooks and rules",
	     "docs.cursor.com/context/model-context-protocol", true),
	/* Dev Containers: initializeCommand runs on the host, the other
	 * lifecycle commands in the container; .devcontainer/devcontainer.json
	 * or .devcontainer.json at the root. */
	DIR_(".devcontainer", "dev containers (initializeCommand runs on the host)",
	     "containers.dev/implementors/json_reference", true),
	FILE_(".devcontainer.json", "dev containers (initializeCommand runs on the host)",
	      "containers.dev/implementors/json_reference"),
	/* Continue: MCP server blocks in .continue/mcpServers/ at the
	 * workspace root: docs.continue.dev/customize/deep-dives/mcp. */
	DIR_(".continue", "Continue MCP servers", "docs.continue.dev/customize/deep-dives/mcp", true),
	/* Windsurf: workspace hooks (.windsurf/hooks.json) run shell commands
	 * at Cascade's steps: docs.windsurf.com/windsurf/cascade/hooks. */
	DIR_(".windsurf", "Windsurf Cascade hooks and workflows",
	     "docs.windsurf.com/windsurf/cascade/hooks", true),
	/* Gemini CLI: the project settings file .gemini/settings.json
	 * (mcpServers started as commands, tool discovery commands):
	 * geminicli.com/docs/cli/configuration. */
	DIR_(".gemini", "Gemini CLI settings and MCP servers", "geminicli.com/docs/cli/configuration",
	     true),
	/* Codex: a trusted project's .codex/config.toml ([mcp_servers.*]). */
	DIR_(".codex", "Codex project config and MCP servers",
	     "developers.openai.com/codex/config-reference", true),
	/* opencode: opencode.json(c) at the project root or in .opencode/
	 * (mcp "local" commands), and plugins in .opencode/ that it loads
	 * and runs: opencode.ai/docs/config. */
	DIR_(".opencode", "opencode config, plugins and MCP servers", "opencode.ai/docs/config", true),
	FILE_("opencode.json", "opencode config and MCP servers", "opencode.ai/docs/config"),
	FILE_("opencode.jsonc", "opencode config and MCP servers", "opencode.ai/docs/config"),

	/* Git's own indirections (common/git_layout.c walks them from each
	 * project root's .git, the git directories of its submodules and
	 * linked worktrees included). Line numbers: git 2.39.5, Debian's
	 * source package 1:2.39.5-0+deb12u3. A submodule's git directory is
	 * $GIT_DIR/modules/<name> (submodule.c:2624), a linked worktree's
	 * $GIT_COMMON_DIR/worktrees/<id> (worktree.c:81 reads its gitdir
	 * file); each is a git directory with the files below. */
	GIT_FILE("commondir", "git (commondir names where git reads config and hooks)",
		 "git 2.39.5 setup.c:312 (get_common_dir_noenv)", COMMONDIR_FILL),
	GIT_FILE("config", "git config (core.fsmonitor, core.hooksPath, aliases)",
		 "git 2.39.5 config.c:2133 ($GIT_COMMON_DIR/config)", NULL),
	GIT_FILE("config.worktree", "git config (per worktree)",
		 "git 2.39.5 config.c:2161 (config.worktree)", NULL),
	GIT_DIR("hooks", "git hooks", "git 2.39.5 hook.c:13 (find_hook)", true),
	/* setup.c:844 (read_gitfile_gently): a .git file "gitdir: PATH" names
	 * the git directory of a linked worktree or a submodule's checkout;
	 * git status in the superproject runs git status in each submodule. */
	GIT_FILE(".git", "git (a .git file names the git directory)",
		 "git 2.39.5 setup.c:844 (read_gitfile_gently)", NULL),
	/* config.c:443-453 (include.path, includeIf.*.path) and 159-200
	 * (handle_path_include: relative to the including file, ~ expanded,
	 * an absent file skipped): a file read as git config. */
	GIT_FILE("include.path", "git config (an included file)",
		 "git 2.39.5 config.c:443 (include.path, includeIf)", NULL),
	/* config.c:1528 and path.c:411: the hooks git runs are read from
	 * core.hooksPath instead of $GIT_DIR/hooks. */
	GIT_DIR("core.hooksPath", "git hooks (core.hooksPath)",
		"git 2.39.5 config.c:1528, path.c:411", false),

	/* Home rows: they matter only where home itself, or the row's
	 * directory, is writable (a user's --writable ~ or ~/.npm). */
	/* Caches a tool later executes from without asking (private_copy):
	 * inside the fence the tool sees what was there and adds to a copy
	 * of the fence's own; the user's own tool outside never runs what a
	 * fenced one added. ~/.npm and ~/.cache are writable by default. */
	/* npm-exec(1): npx installs a package it does not find into the npm
	 * cache's _npx folder and runs its bin from there next time. */
	HOME_PRIVATE(".npm/_npx", "npx", "docs.npmjs.com/cli/commands/npx"),
	/* pre-commit: the hook repositories it clones and installs, run by
	 * git commit: pre-commit.com ("cache ... ~/.cache/pre-commit"). */
	HOME_PRIVATE(".cache/pre-commit", "pre-commit", "pre-commit.com"),
	/* pnpm dlx: "After executing a dlx command, pnpm keeps a cache that
	 * omits the installation step for subsequent calls" (pnpm.io,
	 * settings, dlxCacheMaxAge), in the cache directory's dlx/
	 * (cacheDir, ~/.cache/pnpm on Linux). */
	HOME_PRIVATE(".cache/pnpm/dlx", "pnpm dlx", "pnpm.io/settings#dlxcachemaxage"),
	/* corepack: the package managers it downloads and then runs for
	 * pnpm and yarn, in $XDG_CACHE_HOME/node/corepack (nodejs/corepack,
	 * sources/folderUtils.ts). */
	HOME_PRIVATE(".cache/node/corepack", "corepack (pnpm, yarn)",
		     "github.com/nodejs/corepack sources/folderUtils.ts"),
	/* git-config(1), FILES: ~/.gitconfig and $XDG_CONFIG_HOME/git/config
	 * (its credentials file there is a secret row besides). */
	HOME_FILE(".gitconfig", "git config", "git-config(1), FILES"),
	HOME_DIR(".config/git", "git config", "git-config(1), FILES", false),
	/* bash(1), INVOCATION; zsh(1), STARTUP/SHUTDOWN FILES; fish(1). */
	HOME_FILE(".bashrc", "bash", "bash(1), INVOCATION"),
	HOME_FILE(".bash_profile", "bash", "bash(1), INVOCATION"),
	HOME_FILE(".bash_login", "bash", "bash(1), INVOCATION"),
	HOME_FILE(".bash_logout", "bash", "bash(1), INVOCATION"),
	HOME_FILE(".profile", "sh and bash login shells", "bash(1), INVOCATION; dash(1)"),
	HOME_FILE(".zshenv", "zsh", "zsh(1), STARTUP/SHUTDOWN FILES"),
	HOME_FILE(".zshrc", "zsh", "zsh(1), STARTUP/SHUTDOWN FILES"),
	HOME_FILE(".zprofile", "zsh", "zsh(1), STARTUP/SHUTDOWN FILES"),
	HOME_FILE(".zlogin", "zsh", "zsh(1), STARTUP/SHUTDOWN FILES"),
	HOME_DIR(".config/fish", "fish", "fish-doc, Configuration files", false),
	/* file-hierarchy(7): ~/.local/bin "should be placed in $PATH". */
	HOME_DIR(".local/bin", "commands on PATH", "file-hierarchy(7)", false),
	/* direnv(1): direnvrc and the scripts in lib/ are sourced for every .envrc; the
	 * allow list that direnv-allow(1) writes says which .envrc run. */
	HOME_DIR(".config/direnv", "direnv", "direnv(1), direnv-stdlib(1)", false),
	HOME_DIR(".local/share/direnv", "direnv (the allow list)", "direnv(1)", false),
	/* mise's trust list (mise trust) and global config. */
	HOME_DIR(".local/state/mise", "mise (the trust list)", "mise.jdx.dev/cli/trust.html", false),
	/* Autostart entries and user units run at the next login. */
	HOME_DIR(".config/autostart", "the desktop session at login",
		 "specifications.freedesktop.org/autostart-spec", false),
	HOME_DIR(".config/systemd/user", "systemd --user", "systemd.unit(5)", false),
	/* VS Code's user settings and tasks, its extensions' code. */
	HOME_DIR(".config/Code/User", "VS Code user settings and tasks",
		 "code.visualstudio.com/docs/configure/settings", false),
	HOME_DIR(".vscode/extensions", "VS Code extensions",
		 "code.visualstudio.com/docs/configure/extensions/extension-marketplace", false),
};

const size_t cf_protected_count = sizeof cf_protected_table / sizeof cf_protected_table[0];

const struct cf_protected_row *cf_protected_git_row(const char *rel)
{
	for (size_t i = 0; i < cf_protected_count; i++)
		if (cf_protected_table[i].base == CF_PROT_GIT && strcmp(cf_protected_table[i].rel, rel) == 0)
			return &cf_protected_table[i];
	return NULL;
}
