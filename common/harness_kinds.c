/* The table of known harnesses (harness_kinds.h). Measured with
 * tests/harnesses (-v, --strace): which of a harness's own directories its
 * fenced children write, and what it starts as its real program. */
#include "harness_kinds.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"

/* Codex's node wrapper (bin/codex.js) starts a static musl program from the
 * platform package it lists as an optional dependency. */
#if defined(__linux__) && defined(__x86_64__)
#define CODEX_PKG "@openai/codex-linux-x64"
#define CODEX_REL "vendor/x86_64-unknown-linux-musl/bin/codex"
#elif defined(__linux__) && defined(__aarch64__)
#define CODEX_PKG "@openai/codex-linux-arm64"
#define CODEX_REL "vendor/aarch64-unknown-linux-musl/bin/codex"
#else /* macOS: no harness program to name (the shim follows the wrapper's child) */
#define CODEX_PKG NULL
#define CODEX_REL NULL
#endif

const struct cf_harness_kind cf_harness_kinds[] = {
	/* Its Bash tool's shell writes its snapshot of the user's shell
	 * (functions, aliases, PATH) into the configuration directory. */
	{"Claude Code", {"claude", "claude.exe", NULL},
	 {{".claude/shell-snapshots", "CLAUDE_CONFIG_DIR", "shell-snapshots"}},
	 NULL, NULL, CF_SHELL_INHERITS},
	/* It writes ~/.codex/shell_snapshots itself; its shell keeps what
	 * shell_environment_policy lets through. */
	{"Codex", {"codex", "codex.js", NULL}, {{NULL, NULL, NULL}}, CODEX_PKG, CODEX_REL,
	 CF_SHELL_CODEX_POLICY},
	/* Its shell writes nothing of ~/.gemini; it relaunches itself (node),
	 * which the harness role follows by rule. */
	{"Gemini CLI", {"gemini", "gemini.js", NULL}, {{NULL, NULL, NULL}}, NULL, NULL,
	 CF_SHELL_INHERITS},
	/* Its fenced git keeps the undo snapshots (git init, git add). */
	{"opencode", {"opencode", "opencode.exe", NULL},
	 {{".local/share/opencode/snapshot", "XDG_DATA_HOME", "opencode/snapshot"}}, NULL, NULL,
	 CF_SHELL_INHERITS},
};

const size_t cf_harness_kind_count = sizeof cf_harness_kinds / sizeof *cf_harness_kinds;

const struct cf_harness_kind *cf_harness_kind(const char *argv0)
{
	if (!argv0)
		return NULL;
	const char *base = strrchr(argv0, '/');
	base = base ? base + 1 : argv0;
	for (size_t i = 0; i < cf_harness_kind_count; i++)
		for (const char *const *p = cf_harness_kinds[i].programs; *p; p++)
			if (strcmp(base, *p) == 0)
				return &cf_harness_kinds[i];
	return NULL;
}

int cf_harness_dir_path(const struct cf_harness_dir *d, const char *home, char *const envp[],
			char *out, size_t n)
{
	const char *v = d->env ? cf_env_get(envp, d->env) : NULL;
	int k;
	if (v && v[0] == '/') /* a relative one is ignored, as XDG says */
		k = snprintf(out, n, "%s/%s", v, d->leaf);
	else if (home && home[0] == '/')
		k = snprintf(out, n, "%s/%s", home, d->rel);
	else
		return -ENOENT;
	return k < 0 || (size_t)k >= n ? -ENAMETOOLONG : 0;
}

static bool executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int cf_harness_native(const struct cf_harness_kind *k, const char *wrapper, char *out, size_t n)
{
	char dir[PATH_MAX];
	if (!k->native_pkg || snprintf(dir, sizeof dir, "%s", wrapper) >= (int)sizeof dir)
		return -ENOENT;
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return -ENOENT;
	*slash = '\0'; /* the wrapper's directory: node's lookup starts there */
	char d[PATH_MAX];
	memcpy(d, dir, sizeof d);
	for (;;) {
		const char *base = strrchr(d, '/');
		if (strcmp(base ? base + 1 : d, "node_modules") != 0) {
			int w = snprintf(out, n, "%s/node_modules/%s/%s", strcmp(d, "/") ? d : "",
					 k->native_pkg, k->native_rel);
			if (w > 0 && (size_t)w < n && executable_file(out))
				return 0;
		}
		char *s = strrchr(d, '/');
		if (!s || !strcmp(d, "/"))
			break;
		if (s == d)
			s[1] = '\0';
		else
			*s = '\0';
	}
	/* The wrapper package's own vendor directory (bin/../vendor). */
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		int w = snprintf(out, n, "%s/%s", dir, k->native_rel);
		if (w > 0 && (size_t)w < n && executable_file(out))
			return 0;
	}
	return -ENOENT;
}
