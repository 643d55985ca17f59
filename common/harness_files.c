/* The table of files the four tested harnesses trust (harness_files.h).
 * Found by reading each harness's documentation and by strace of a run
 * (tests/harnesses). Where a variable moves a harness's directory, both the
 * default place and the moved one are checked. */
#include "harness_files.h"

#define ROW(h, rel, env, leaf, holds) {h, rel, env, leaf, holds}

const struct cf_harness_file cf_harness_files[] = {
	ROW("Claude Code", ".claude/settings.json", "CLAUDE_CONFIG_DIR", "settings.json",
	    "hooks, the environment it gives itself (ANTHROPIC_BASE_URL: where its login token "
	    "goes), permissions"),
	ROW("Claude Code", ".claude/settings.local.json", "CLAUDE_CONFIG_DIR", "settings.local.json",
	    "the same as settings.json"),
	ROW("Claude Code", ".claude.json", "CLAUDE_CONFIG_DIR", ".claude.json",
	    "MCP servers, trusted projects, account"),
	ROW("Claude Code", ".claude/plugins", "CLAUDE_CONFIG_DIR", "plugins",
	    "plugins: hooks, MCP servers, commands"),
	ROW("Claude Code", ".claude/skills", "CLAUDE_CONFIG_DIR", "skills", "skills the model follows"),
	ROW("Claude Code", ".claude/agents", "CLAUDE_CONFIG_DIR", "agents", "subagent definitions"),
	ROW("Claude Code", ".claude/commands", "CLAUDE_CONFIG_DIR", "commands", "slash commands"),
	ROW("Claude Code", ".claude/CLAUDE.md", "CLAUDE_CONFIG_DIR", "CLAUDE.md",
	    "instructions the model follows in every session"),
	ROW("Codex", ".codex/config.toml", "CODEX_HOME", "config.toml",
	    "model provider and its URL, shell_environment_policy (what its shell inherits), MCP "
	    "servers, the notify program"),
	ROW("Codex", ".codex/rules", "CODEX_HOME", "rules", "command approval rules"),
	ROW("Codex", ".codex/AGENTS.md", "CODEX_HOME", "AGENTS.md",
	    "instructions the model follows in every session"),
	ROW("Gemini CLI", ".gemini/settings.json", "GEMINI_CLI_HOME", ".gemini/settings.json",
	    "hooks, MCP servers, tool permissions, the sandbox setting"),
	ROW("Gemini CLI", ".gemini/.env", "GEMINI_CLI_HOME", ".gemini/.env",
	    "the environment it loads into itself (GOOGLE_GEMINI_BASE_URL, NODE_OPTIONS)"),
	ROW("Gemini CLI", ".gemini/extensions", "GEMINI_CLI_HOME", ".gemini/extensions",
	    "extensions: MCP servers, commands, context"),
	ROW("Gemini CLI", ".gemini/GEMINI.md", "GEMINI_CLI_HOME", ".gemini/GEMINI.md",
	    "instructions the model follows in every session"),
	ROW("opencode", ".config/opencode", "XDG_CONFIG_HOME", "opencode",
	    "its configuration and plugins, JavaScript it runs in its own process"),
};

const size_t cf_harness_file_count = sizeof cf_harness_files / sizeof *cf_harness_files;
