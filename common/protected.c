#include "protected.h"

#define DIR_(rel, runs, src, ph) { rel, CF_PROT_PROJECT, CF_PROT_DIR, runs, src, ph }
#define FILE_(rel, runs, src) { rel, CF_PROT_PROJECT, CF_PROT_FILE, runs, src, false }
#define HOME_DIR(rel, runs, src, ph) { rel, CF_PROT_HOME, CF_PROT_DIR, runs, src, ph }
#define HOME_FILE(rel, runs, src) { rel, CF_PROT_HOME, CF_PROT_FILE, runs, src, false }

/* First draft; each row names the tool that runs it and where that tool says
 * so. */
const struct cf_protected_row cf_protected_table[] = {
	DIR_(".git/hooks", "git hooks", "githooks(5)", true),
	FILE_(".git/config", "git config (core.fsmonitor, core.hooksPath, aliases)", "git-config(1)"),
	FILE_(".gitmodules", "git submodules", "gitmodules(5)"),
	FILE_(".envrc", "direnv", "direnv(1)"),
	DIR_(".vscode", "VS Code tasks and settings", "code.visualstudio.com/docs/editor/tasks", true),
	DIR_(".idea", "JetBrains IDE run configurations", "jetbrains.com/help/idea/project-settings-and-structure.html", true),
	DIR_(".claude", "Claude Code settings, hooks, commands and agents", "docs.anthropic.com/en/docs/claude-code/settings", true),
	FILE_(".mcp.json", "MCP servers an agent starts", "docs.anthropic.com/en/docs/claude-code/mcp"),
	DIR_(".cursor", "Cursor rules and MCP servers", "docs.cursor.com/context/model-context-protocol", true),
	DIR_(".devcontainer", "dev containers", "containers.dev/implementors/json_reference", true),
	HOME_DIR(".npm/_npx", "npx", "docs.npmjs.com/cli/commands/npx", false),
	HOME_DIR(".cache/pre-commit", "pre-commit", "pre-commit.com", false),
};

const size_t cf_protected_count = sizeof cf_protected_table / sizeof cf_protected_table[0];
