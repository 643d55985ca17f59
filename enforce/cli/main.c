#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef CF_VERSION
#define CF_VERSION "0.0.0"
#endif

static const char usage[] =
	"usage: credfence COMMAND [options] ...\n"
	"\n"
	"  run [options] -- CMD [ARG...]      run CMD fenced: it can not read secrets nor write\n"
	"                                     outside the writable locations\n"
	"  harness [options] -- CMD [ARG...]  run CMD free, with every program it starts fenced\n"
	"  status [--json] [options]          say whether isolation would be applied here, and why\n"
	"  check [options] PATH...            say whether a fenced program could read or write PATH\n"
	"\n"
	"options (each has an environment twin, which the option overrides):\n"
	"  --home DIR        the home whose secrets are denied (CREDFENCE_HOME; default $HOME)\n"
	"  --workspace DIR   writable workspace (CREDFENCE_WORKSPACE; default: current directory)\n"
	"  --writable DIR    another writable location, repeatable (CREDFENCE_WRITABLE, colon list)\n"
	"  --deny PATH       another secret location, repeatable (CREDFENCE_DENY, colon list)\n"
	"  --best-effort     run even when isolation can not be applied (CREDFENCE_MODE=best-effort)\n"
	"  --required        refuse to run when isolation can not be applied (the default)\n"
	"  --log FILE        append one JSON line per sandbox application (CREDFENCE_LOG)\n"
	"  --max-entries N   most entries read from one directory (CREDFENCE_MAX_ENTRIES; 20000)\n"
	"  --allow-ptys      let fenced programs open new ptys, and so every terminal of yours\n"
	"                    under /dev/pts (CREDFENCE_ALLOW_PTYS=1)\n"
	"\n"
	"exit status: CMD's own, or 125 when credfence fails or refuses, 126 when CMD can not\n"
	"be executed, 127 when CMD is not found. See docs/cli-reference.md.\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return CF_EXIT_FAIL;
	}
	const char *cmd = argv[1];
	for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("credfence %s\n", CF_VERSION);
		return 0;
	}
	if (strcmp(cmd, "run") == 0)
		return cf_cmd_run(argc - 2, argv + 2);
	if (strcmp(cmd, "harness") == 0)
		return cf_cmd_harness(argc - 2, argv + 2);
	if (strcmp(cmd, "status") == 0)
		return cf_cmd_status(argc - 2, argv + 2);
	if (strcmp(cmd, "check") == 0)
		return cf_cmd_check(argc - 2, argv + 2);
	cf_err("unknown command '%s'; use run, harness, status or check (credfence --help)", cmd);
	return CF_EXIT_FAIL;
}
