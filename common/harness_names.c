/* One table: the command names of the agent harnesses credfence knows. */
#include <stddef.h>
#include <string.h>

#include "harness_names.h"

static const struct {
	const char *command, *product;
} harnesses[] = {
	{"claude", "Claude Code"},
	{"codex", "Codex"},
	{"gemini", "Gemini CLI"},
	{"opencode", "opencode"},
};

const char *cf_known_harness(const char *argv0)
{
	if (!argv0)
		return NULL;
	const char *base = strrchr(argv0, '/');
	base = base ? base + 1 : argv0;
	for (size_t i = 0; i < sizeof harnesses / sizeof *harnesses; i++)
		if (strcmp(base, harnesses[i].command) == 0)
			return harnesses[i].product;
	return NULL;
}
