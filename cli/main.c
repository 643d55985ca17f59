#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "machinery.h"
#include "vars.h"

#ifndef CF_VERSION
#define CF_VERSION "0.0.0"
#endif

#define CF_USAGE_COMMANDS                                                                         \
	"  run [options] -- CMD [ARG...]      run CMD fenced: it can not read secrets nor write\n"  \
	"                                     outside the writable locations\n"                    \
	"  harness [options] -- CMD [ARG...]  run CMD with every program it starts fenced; CMD\n"  \
	"                                     itself writes freely but reads no secret\n"            \
	"  status [--json] [options]          say whether isolation would be applied here, and why\n" \
	"  check [options] PATH...            say whether a fenced program could read or write PATH\n" \
	"  check --env [options] [PATH...]    name the variables a fenced program would not get\n" \
	"  explain LOGFILE                    a past run's denials by row, with what would allow\n" \
	"                                     each, and its launches\n"

/* One option's line(s) in the usage: VAR is its row in common/vars.c, whose
 * name stands for "{}" in TEXT; OPT is the left column when it is not the
 * row's option (the two options of CREDFENCE_MODE). A newline in TEXT goes
 * on in the text's column. */
struct help_row {
	enum cf_var var;
	const char *opt, *text;
};

static const struct help_row options_help[] = {
	{CF_VAR_HOME, NULL, "the home whose secrets are denied ({}; default $HOME)"},
	{CF_VAR_WORKSPACE, NULL, "writable workspace ({}; default: current directory)"},
	{CF_VAR_WRITABLE, NULL, "another writable location, repeatable ({}, colon list)"},
	{CF_VAR_DENY, NULL, "another secret location, repeatable ({}, colon list)"},
	{CF_VAR_ALLOW_READ, NULL,
	 "let fenced programs read the secret location PATH, or PATH inside\n"
	 "one (~/.ssh/known_hosts: the rest of ~/.ssh stays denied),\n"
	 "repeatable ({}, colon list)"},
	{CF_VAR_DENY_ENV, NULL,
	 "withhold the variable NAME too (a pattern with *: MYCO_*) from what\n"
	 "is fenced, repeatable ({}, colon list)"},
	{CF_VAR_KEEP_ENV, NULL,
	 "pass the variable NAME although it is a secret (the whole name),\n"
	 "repeatable ({}, colon list)"},
	{CF_VAR_MODE, "--best-effort", "run even when isolation can not be applied ({}=best-effort)"},
	{CF_VAR_MODE, "--required", "refuse to run when isolation can not be applied (the default)"},
	{CF_VAR_ALLOW_WRITE_PROTECTED, NULL,
	 "let fenced programs write PATH although write protection covers it\n"
	 "(check says \"runs unfenced later\"); never a secret; repeatable\n"
	 "({}, colon list)"},
	{CF_VAR_WRITE_PROTECT, NULL,
	 "where write protection can not be applied: by default warn and run\n"
	 "where no user namespace can be made, and refuse a harness's child\n"
	 "that can not enter the harness's; warn: run both with the read\n"
	 "fence alone; require: refuse both ({}=warn|require)"},
	{CF_VAR_LOG, NULL, "append one JSON line per sandbox application ({})"},
	{CF_VAR_MAX_ENTRIES, NULL, "most entries read from one directory ({}; 20000)"},
	{CF_VAR_ALLOW_PTYS, NULL,
	 "let fenced programs open any pty by its name under /dev/pts, and so\n"
	 "every terminal of yours; new ptys work without it\n"
	 "({}=1)"},
	{CF_VAR_QUIET_DENIALS, NULL,
	 "write no line to a fenced program's stderr when the fence denies it\n"
	 "a read or a write ({}=1)"},
	{CF_VAR_ALLOW_SOCKET, NULL,
	 "let fenced programs connect to the Unix socket S (a path, or @NAME\n"
	 "for an abstract one) bound outside the fence, repeatable\n"
	 "({}, colon list)"},
	{CF_VAR_SSH_AGENT, NULL,
	 "allow exactly the socket $SSH_AUTH_SOCK names: sign with the agent,\n"
	 "the keys stay unreadable ({}=1)"},
	{CF_VAR_HARNESS_STATE, NULL,
	 "make a harness's own state directory writable for the programs it\n"
	 "starts; refused when it holds or lies in a secret or a file the\n"
	 "harness trusts; repeatable ({}, colon list)"},
	{CF_VAR_CONFIG, NULL,
	 "read this policy file too, after ~/.config/credfence/config.json;\n"
	 "options and twins override both ({})"},
	{CF_VAR_SETTINGS, NULL,
	 "read Claude Code's sandbox settings (~/.claude/settings.json),\n"
	 "repeatable ({}, colon list)"},
};

/* credfence harness only: which processes get the harness role, what the
 * harness itself may read. */
static const struct help_row harness_help[] = {
	{CF_VAR_HARNESS_PROGRAM, NULL,
	 "a program CMD starts that is the harness too (the binary a\n"
	 "wrapper starts), repeatable ({}, colon list)"},
	{CF_VAR_STATIC_HARNESS, NULL,
	 "accept a static CMD or harness program: only the children that keep\n"
	 "LD_PRELOAD fence themselves ({}=1)"},
	{CF_VAR_HARNESS_MAY_READ, NULL,
	 "let the harness itself read the secret location P (its own\n"
	 "login needs none; its children never), repeatable\n"
	 "({}, colon list)"},
};

/* HEAD, then the N ROWS: the option in a column of 16, its text beside it
 * from column 20. A wider option puts its text on the next line, or, when
 * WIDE_BESIDE, two spaces after it. */
static void print_help(FILE *out, const char *head, const struct help_row *rows, size_t n,
		       bool wide_beside)
{
	fputs(head, out);
	for (size_t i = 0; i < n; i++) {
		const struct cf_var_row *v = &cf_vars[rows[i].var];
		const char *opt = rows[i].opt ? rows[i].opt : v->option;
		if (strlen(opt) <= 16 || wide_beside)
			fprintf(out, "  %-16s  ", opt);
		else
			fprintf(out, "  %s\n%20s", opt, "");
		for (const char *t = rows[i].text; *t; t++) {
			if (t[0] == '{' && t[1] == '}') {
				fputs(v->name, out);
				t++;
			} else if (*t == '\n') {
				fprintf(out, "\n%20s", "");
			} else {
				fputc(*t, out);
			}
		}
		fputc('\n', out);
	}
}

static void print_options(FILE *out)
{
	print_help(out, "options (each has an environment twin, which the option overrides):\n",
		   options_help, sizeof options_help / sizeof *options_help, false);
}

static void print_harness_options(FILE *out)
{
	print_help(out, "harness options (the harness's own relaunch of its script needs none):\n",
		   harness_help, sizeof harness_help / sizeof *harness_help, true);
}

#define CF_USAGE_EXIT                                                                             \
	"exit status: CMD's own, or 125 when credfence fails or refuses, 126 when CMD can not\n"    \
	"be executed, 127 when CMD is not found. See man credfence.\n"

static void print_usage(FILE *out)
{
	fputs("usage: credfence COMMAND [options] ...\n\n" CF_USAGE_COMMANDS "\n", out);
	print_options(out);
	fputc('\n', out);
	print_harness_options(out);
	fputs("\n" CF_USAGE_EXIT, out);
}

/* One command's usage: its line, what it does, the options, its exit status. */
static const struct {
	const char *name, *synopsis, *what, *exit;
} commands[] = {
	{"run", "credfence run [options] -- CMD [ARG...]",
	 "Run CMD fenced: CMD and everything it starts can not read a secret and can\n"
	 "write only to the writable locations; CMD gets no secret variable of the\n"
	 "environment (API keys, tokens, passwords) unless --keep-env names it.\n",
	 "exit status: CMD's own, or 125 when credfence fails or refuses, 126 when CMD can\n"
	 "not be executed, 127 when CMD is not found.\n"},
	{"harness", "credfence harness [options] -- CMD [ARG...]",
	 "Run CMD (an agent harness) with libcredfence.so preloaded: every program it\n"
	 "starts is fenced at its launch and gets no secret variable of the environment;\n"
	 "CMD itself keeps its environment and may write where it likes, but can not\n"
	 "read a secret (the secrets are covered in a mount namespace of its own).\n",
	 "exit status: CMD's own, or 125 when credfence fails or refuses, 126 when CMD can\n"
	 "not be executed, 127 when CMD is not found.\n"},
	{"status", "credfence status [--json] [options]",
	 "Say whether isolation would be applied here, and why not; --json for one JSON\n"
	 "object.\n",
	 "exit status: 0 when it would be applied, 1 when not, 125 on a usage error.\n"},
	{"check", "credfence check [options] [--env] PATH...",
	 "Say for each PATH whether a fenced program could read it, write it or create it.\n"
	 "With --env, first name each variable of this environment that a fenced program\n"
	 "would not get, and the rule that withholds it (never its value); PATH is then\n"
	 "optional.\n",
	 "exit status: 0 when every path was probed (or, with --env alone, always), 1 when\n"
	 "some path was not (its line says why), 125 for bad options, no path or an empty\n"
	 "one, isolation that is not effective, or a failed probe.\n"},
	{"explain", "credfence explain LOGFILE",
	 "Read the JSON-lines log that --log wrote and print its denials grouped by what\n"
	 "denied them (a secret row, the socket rule, the metadata rule), each group with\n"
	 "the option that would allow it, then the launches and their verdicts. A line\n"
	 "that is not credfence's is skipped and counted.\n",
	 "exit status: 0, or 125 when LOGFILE can not be read.\n"},
};

/* Print NAME's usage; 0, or CF_EXIT_FAIL for an unknown NAME. */
static int command_help(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
		if (strcmp(commands[i].name, name) != 0)
			continue;
		printf("usage: %s\n\n%s\n", commands[i].synopsis, commands[i].what);
		if (strcmp(name, "explain") != 0) { /* it takes no option */
			print_options(stdout);
			putchar('\n');
		}
		if (strcmp(name, "harness") == 0) {
			print_harness_options(stdout);
			putchar('\n');
		}
		fputs(commands[i].exit, stdout);
		return 0;
	}
	cf_err("no help for '%s'; use credfence help run, harness, status, check or explain", name);
	return CF_EXIT_FAIL;
}

int main(int argc, char **argv)
{
	cf_cli_set_invoked(argv[0]);
	if (argc < 2) {
		print_usage(stderr);
		return CF_EXIT_FAIL;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "help") == 0 && argc > 2)
		return command_help(argv[2]);
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		print_usage(stdout);
		return 0;
	}
	for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			if (command_help(cmd) == 0)
				return 0;
			print_usage(stderr);
			return CF_EXIT_FAIL;
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
	if (strcmp(cmd, "explain") == 0)
		return cf_cmd_explain(argc - 2, argv + 2);
	cf_err("unknown command '%s'; use run, harness, status, check or explain (credfence --help)",
	       cmd);
	return CF_EXIT_FAIL;
}
