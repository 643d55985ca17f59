/* The credfence command: shared option parsing and the subcommands. */
#ifndef CF_CLI_H
#define CF_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"
#include "fence.h"
#include "policy.h"
#include "protocol.h"

#define CF_EXIT_FAIL 125     /* credfence itself failed or refused */
#define CF_EXIT_NOEXEC 126   /* CMD could not be executed */
#define CF_EXIT_NOTFOUND 127 /* CMD was not found */


struct cf_cli {
	struct cf_options opts;
	bool json;        /* status --json */
	bool env;         /* check --env */
	char **cmd;       /* after "--" (run, harness) */
	char **paths;     /* operands (check) */
	int n_paths;
	struct cf_config cfg; /* the policy files read (cli/config.c) */
};

extern char **environ;

/* Parse argv after the subcommand name. WANT_CMD: a "-- CMD" is required.
 * Returns 0, or prints the error and returns CF_EXIT_FAIL. */
int cf_cli_parse(struct cf_cli *c, const char *sub, int argc, char **argv, bool want_cmd,
		 bool allow_json);
/* The same; ALLOW_ENV: check's --env is an option here. */
int cf_cli_parse_env(struct cf_cli *c, const char *sub, int argc, char **argv, bool want_cmd,
		     bool allow_json, bool allow_env);
/* Options merged with the environment and the account's home. 0 or CF_EXIT_FAIL. */
int cf_cli_finish(struct cf_cli *c);
void cf_cli_free(struct cf_cli *c);
/* The policy files read and each denyWrite entry lie outside every writable
 * location of F's policy (CWD: where relative paths start; NULL: the current
 * directory). 0, or CF_EXIT_FAIL after the message. */
int cf_cli_check_config(struct cf_cli *c, const struct cf_fence *f, const char *cwd);

/* "credfence: " + message, on stderr. */
void cf_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "credfence: warning: " + message, on stderr. */
void cf_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One warning line when this process runs as root (SECURITY.md: out of scope). */
void cf_cli_warn_root(const char *sub);
/* A container's seccomp profile that refuses what the IPC fence needs
 * (cf_fence_container_gap): one warning naming the call and the fix. */
void cf_cli_warn_container(const char *sub, const struct cf_fence *f);
/* S with control characters and backslashes escaped (\n, \t, \xHH, \\), so
 * that a file name can not forge an output line; S itself when it has none.
 * One of 4 rotating static buffers otherwise. */
const char *cf_cli_esc(const char *s);
/* What to do about a verdict, for the error line. */
const char *cf_cli_hint(enum cf_verdict v);
/* F's status line (cf_fence_reason), in a buffer of the CLI's own: valid
 * until the next call. */
const char *cf_cli_reason(const struct cf_fence *f);
/* A log the policy refused (it lies in, or is reached through, a writable
 * location): says why and returns CF_EXIT_FAIL; else 0. */
int cf_cli_check_log(const struct cf_fence *f);
/* --allow-write-protected (CREDFENCE_ALLOW_WRITE_PROTECTED) judged against
 * F's policy (cf_protected_lift_refusal): each path made canonical from the
 * current directory into LIFTS (may be NULL). A path that is no protected
 * location, or is or lies in a secret: says why, returns CF_EXIT_FAIL. */
int cf_cli_judge_lifts(const struct cf_cli *c, const struct cf_fence *f, struct cf_strv *lifts);
/* An --allow-read the policy refused: said, and CF_EXIT_FAIL. Else 0, after
 * a warning for each secret location an --allow-read lifts whole. */
int cf_cli_check_allow_read(const struct cf_fence *f, const char *sub);
/* The workspace defaults to the current directory, which the command picks
 * with cd: refuse it (verdict "not effective") when it lies in a home
 * dot-directory such as ~/.config/autostart. A workspace that holds a secret
 * ($HOME, /) is refused by the overlap verdict already. */
void cf_cli_judge_workspace(const struct cf_cli *c, struct cf_fence *f);
/* The secret variables (common/secret_env.h) out of this process's
 * environment before CMD runs: named in the log (LOGFD, env_withheld), taken
 * out of environ and overwritten where /proc/PID/environ shows them. */
void cf_cli_withhold_env(const struct cf_options *o, int logfd, const char *program);
/* The secret variables of this environment moved out of what
 * /proc/PID/environ shows (credfence harness: the harness keeps them, the
 * waiter it leaves behind shows none). 0, or CF_EXIT_FAIL after a message. */
int cf_cli_hide_env(const struct cf_options *o);
/* One line a variable of this environment that a fenced program would not
 * get, "INDENT NAME withheld (RULE)", never its value (status, check --env). */
void cf_cli_print_env(const struct cf_options *o, FILE *out, const char *indent);
/* The shim in CMD reads only the environment: C's options, and the twins
 * they were merged with, set as twins again for the rows of common/vars.c
 * whose set_by has a bit of SET_BY (CF_SET_EXPORT: credfence harness;
 * CF_SET_RUN: what credfence run passes to the shim's judge), every path
 * absolute from CWD. POL is the policy built from them. 0, or -1 out of
 * memory (harness.c). */
int cf_cli_export_options(const struct cf_cli *c, const struct cf_policy *pol, const char *cwd,
			  unsigned set_by);
/* Log the fence's verdict for PROGRAM (opened before any restriction by the caller). */
void cf_cli_log(const struct cf_fence *f, int logfd, const char *program, bool applied);

int cf_cmd_run(int argc, char **argv);
int cf_cmd_harness(int argc, char **argv);
int cf_cmd_status(int argc, char **argv);
int cf_cmd_check(int argc, char **argv);
int cf_cmd_explain(int argc, char **argv);

/* execvp CMD and map its failure to an exit code (never returns). */
_Noreturn void cf_cli_exec(char **cmd);

#endif
