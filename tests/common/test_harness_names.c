/* common/harness_names.c: the agent harnesses known by their command's name. */
#include <criterion/criterion.h>

#include "harness_names.h"

Test(harness_names, the_four_agents_by_name_and_path)
{
	cr_expect_str_eq(cf_known_harness("claude"), "Claude Code");
	cr_expect_str_eq(cf_known_harness("/usr/local/bin/codex"), "Codex");
	cr_expect_str_eq(cf_known_harness("./gemini"), "Gemini CLI");
	cr_expect_str_eq(cf_known_harness("opencode"), "opencode");
}

Test(harness_names, other_programs_are_none)
{
	const char *others[] = {"bash", "claude-helper", "xcodex", "claude/", "Claude", "", NULL};
	for (size_t i = 0; others[i]; i++)
		cr_expect_null(cf_known_harness(others[i]), "%s taken for a harness", others[i]);
	cr_expect_null(cf_known_harness(NULL));
}
