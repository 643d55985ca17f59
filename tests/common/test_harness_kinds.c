/* The table of known harnesses (common/harness_kinds.c): recognised by the
 * program's name, each state directory where its variable moves it, and
 * Codex's native program found as node finds it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness_files.h"
#include "harness_kinds.h"

Test(harness_kinds, recognised_by_the_program_name)
{
	cr_expect_str_eq(cf_harness_kind("claude")->name, "Claude Code");
	cr_expect_str_eq(cf_harness_kind("/usr/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe")
				 ->name,
			 "Claude Code");
	cr_expect_str_eq(cf_harness_kind("/usr/local/bin/codex")->name, "Codex");
	cr_expect_str_eq(cf_harness_kind("gemini")->name, "Gemini CLI");
	cr_expect_str_eq(cf_harness_kind("opencode")->name, "opencode");
	cr_expect_null(cf_harness_kind("claude-wrapper"));
	cr_expect_null(cf_harness_kind("/opt/claude/bash"));
	cr_expect_null(cf_harness_kind(""));
	cr_expect_null(cf_harness_kind(NULL));
	/* Only the whole last component, as written (cli/run.c refuses by it). */
	cr_expect_null(cf_harness_kind("xcodex"));
	cr_expect_null(cf_harness_kind("claude/"));
	cr_expect_null(cf_harness_kind("Claude"));
	cr_expect_null(cf_harness_kind("bash"));
}

Test(harness_kinds, every_row_names_a_harness_of_the_trusted_files)
{
	for (size_t i = 0; i < cf_harness_kind_count; i++) {
		bool found = false;
		for (size_t r = 0; r < cf_harness_file_count; r++)
			found |= !strcmp(cf_harness_files[r].harness, cf_harness_kinds[i].name);
		cr_expect(found, "%s has no row in cf_harness_files", cf_harness_kinds[i].name);
	}
}

Test(harness_kinds, state_directories_follow_their_variable)
{
	const struct cf_harness_kind *c = cf_harness_kind("claude"), *o = cf_harness_kind("opencode");
	char out[PATH_MAX];
	char *none[] = {NULL};
	char *moved[] = {"CLAUDE_CONFIG_DIR=/cfg/claude", "XDG_DATA_HOME=/data", NULL};
	char *relative[] = {"XDG_DATA_HOME=data", NULL};
	cr_assert_eq(cf_harness_dir_path(&c->state[0], "/h", none, out, sizeof out), 0);
	cr_expect_str_eq(out, "/h/.claude/shell-snapshots");
	cr_assert_eq(cf_harness_dir_path(&c->state[0], "/h", moved, out, sizeof out), 0);
	cr_expect_str_eq(out, "/cfg/claude/shell-snapshots");
	cr_assert_eq(cf_harness_dir_path(&o->state[0], "/h", moved, out, sizeof out), 0);
	cr_expect_str_eq(out, "/data/opencode/snapshot");
	cr_assert_eq(cf_harness_dir_path(&o->state[0], "/h", relative, out, sizeof out), 0);
	cr_expect_str_eq(out, "/h/.local/share/opencode/snapshot", "a relative XDG variable is ignored");
	cr_expect_eq(cf_harness_dir_path(&o->state[0], NULL, none, out, sizeof out), -ENOENT);
	cr_expect_eq(cf_harness_dir_path(&o->state[0], "/h", none, out, 8), -ENAMETOOLONG);
	cr_expect_null(cf_harness_kind("gemini")->state[0].rel, "Gemini CLI's shell writes no state");
}

static void touch_exec(const char *path)
{
	char d[PATH_MAX];
	snprintf(d, sizeof d, "%s", path);
	for (char *s = d + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(d, 0755);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	cr_assert(f, "%s", path);
	fclose(f);
	chmod(path, 0755);
}

Test(harness_kinds, codex_native_program_as_node_resolves_it)
{
	const struct cf_harness_kind *k = cf_harness_kind("codex");
	if (!k->native_pkg)
		cr_skip_test("no native program on this platform");
	char root[] = "/tmp/cf-kinds-XXXXXX", wrapper[PATH_MAX], want[PATH_MAX], out[PATH_MAX];
	cr_assert(mkdtemp(root));
	snprintf(wrapper, sizeof wrapper, "%s/lib/node_modules/@openai/codex/bin/codex.js", root);
	touch_exec(wrapper);
	cr_expect_eq(cf_harness_native(k, wrapper, out, sizeof out), -ENOENT, "none yet");
	/* hoisted (npm install --prefix): beside the wrapper's package */
	snprintf(want, sizeof want, "%s/lib/node_modules/%s/%s", root, k->native_pkg, k->native_rel);
	touch_exec(want);
	cr_assert_eq(cf_harness_native(k, wrapper, out, sizeof out), 0);
	cr_expect_str_eq(out, want);
	/* nested (npm install -g): under the wrapper's package, found first */
	snprintf(want, sizeof want, "%s/lib/node_modules/@openai/codex/node_modules/%s/%s", root,
		 k->native_pkg, k->native_rel);
	touch_exec(want);
	cr_assert_eq(cf_harness_native(k, wrapper, out, sizeof out), 0);
	cr_expect_str_eq(out, want);
	/* a directory or a file that can not run is no program */
	chmod(want, 0644);
	cr_assert_eq(cf_harness_native(k, wrapper, out, sizeof out), 0);
	cr_expect_neq(strcmp(out, want), 0);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	cr_expect_eq(system(cmd), 0);
	cr_expect_eq(cf_harness_native(cf_harness_kind("claude"), wrapper, out, sizeof out), -ENOENT);
}
