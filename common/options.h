/* What the user asked for: the options, their CREDFENCE_* environment twins
 * (read here, and written back for the shim by cf_twin_list_join), and the
 * checks that refuse a value that can only be a mistake. */
#ifndef CF_OPTIONS_H
#define CF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

enum cf_mode { CF_MODE_REQUIRED, CF_MODE_BEST_EFFORT };

/* What happens where the write protection of common/protected.h can not be
 * applied (--write-protect): DEFAULT (no word given) warns and runs with the
 * read fence where no mount namespace can be made at all (user namespaces
 * off), and refuses a harness's child that can not enter the one its
 * harness has (issue 31); WARN ("warn") runs such a child with the read
 * fence alone too, said in the log; REQUIRE ("require") refuses wherever
 * write protection can not be applied. */
enum cf_write_protect { CF_WRITE_PROTECT_DEFAULT = 0, CF_WRITE_PROTECT_WARN, CF_WRITE_PROTECT_REQUIRE };

/* What the user asked for. Options from the command line are set first;
 * cf_options_from_env() fills what is still unset from the CREDFENCE_* twins. */
struct cf_options {
	const char *home;         /* --home, CREDFENCE_HOME; NULL: $HOME */
	const char *workspace;    /* --workspace, CREDFENCE_WORKSPACE; NULL: cwd */
	struct cf_strv writable;  /* --writable, CREDFENCE_WRITABLE */
	struct cf_strv deny;      /* --deny, CREDFENCE_DENY */
	/* --allow-read, CREDFENCE_ALLOW_READ: a secret location, or a path
	 * inside one, that fenced programs may read (policy.h: allow_read). */
	struct cf_strv allow_read;
	bool allow_read_from_cli;
	int mode;                 /* -1 unset, else enum cf_mode */
	const char *log;          /* --log, CREDFENCE_LOG */
	long max_entries;         /* --max-entries, CREDFENCE_MAX_ENTRIES; 0 unset */
	int allow_ptys;           /* --allow-ptys, CREDFENCE_ALLOW_PTYS=1; -1 unset, 0, 1 */
	int quiet_denials;        /* --quiet-denials, CREDFENCE_QUIET_DENIALS=1; -1 unset, 0, 1 */
	const char *account_home; /* the password database's home, filled by the caller */
	struct cf_strv allow_sockets; /* --allow-socket, CREDFENCE_ALLOW_SOCKET: paths or @names */
	int ssh_agent;            /* --ssh-agent, CREDFENCE_SSH_AGENT=1; -1 unset, 0, 1 */
	const char *supervisor;   /* CREDFENCE_SUPERVISOR: the IPC supervisor serving this tree
				     (written by the harness shim, never by the user) */
	struct cf_strv harness_may_read; /* --harness-may-read, CREDFENCE_HARNESS_MAY_READ:
					    what the harness itself may read (harness_guard.h) */
	bool writable_from_cli, deny_from_cli, allow_sockets_from_cli;
	bool harness_may_read_from_cli;
	/* Which processes get the harness role (credfence harness only). */
	struct cf_strv harness_programs; /* --harness-program, CREDFENCE_HARNESS_PROGRAM */
	bool harness_programs_from_cli;
	int static_harness; /* --static-harness, CREDFENCE_STATIC_HARNESS=1; -1 unset, 0, 1 */

	/* --harness-state, CREDFENCE_HARNESS_STATE: a harness's own state
	 * directories its children must write (writable, after the checks of
	 * cf_harness_state_refusal). */
	struct cf_strv harness_state;
	bool harness_state_from_cli;

	/* Written by `credfence harness`, never by the user: the harness's private
	 * temporary directory (CREDFENCE_HARNESS_TMPDIR), which its TMPDIR names,
	 * and the TMPDIR its children get back (CREDFENCE_CHILD_TMPDIR; NULL when
	 * it was unset). A TMPDIR within the private one is never writable. */
	const char *harness_tmpdir;
	const char *child_tmpdir;

	/* --deny-env, CREDFENCE_DENY_ENV: more variables to withhold (names or
	 * patterns); --keep-env, CREDFENCE_KEEP_ENV: names to pass although the
	 * rules withhold them (common/secret_env.h). */
	struct cf_strv deny_env, keep_env;
	bool deny_env_from_cli, keep_env_from_cli;

	/* --allow-write-protected, CREDFENCE_ALLOW_WRITE_PROTECTED: protected
	 * locations (rows of common/protected.h, or paths under one) that
	 * fenced programs may write all the same; never a secret. */
	struct cf_strv allow_write_protected;
	bool allow_write_protected_from_cli;
	/* --write-protect, CREDFENCE_WRITE_PROTECT: enum cf_write_protect,
	 * CF_WRITE_PROTECT_DEFAULT (0) unless one of them says a word. */
	int write_protect;
	bool write_protect_from_cli;

	/* --config, CREDFENCE_CONFIG: a policy file read after the user's own;
	 * --settings, CREDFENCE_SETTINGS: Claude Code (or sandbox-runtime)
	 * settings files. The credfence command reads them (cli/config.c);
	 * what they hold lands in the slots above. */
	const char *config;
	struct cf_strv settings;
	bool settings_from_cli;
};

/* CREDFENCE_WRITE_PROTECT's words, as the twin and the option take them. */
#define CF_WRITE_PROTECT_WORD_WARN "warn"
#define CF_WRITE_PROTECT_WORD_REQUIRE "require"
#define cf_write_protect_word(w)                                                                   \
	((w) == CF_WRITE_PROTECT_REQUIRE ? CF_WRITE_PROTECT_WORD_REQUIRE                            \
	 : (w) == CF_WRITE_PROTECT_WARN  ? CF_WRITE_PROTECT_WORD_WARN                               \
					 : NULL)
/* WORD as enum cf_write_protect, or -EINVAL. */
int cf_write_protect_parse(const char *word);

void cf_options_init(struct cf_options *o);
/* Returns 0, or -EINVAL with *bad naming the variable whose value is not valid. */
int cf_options_from_env(struct cf_options *o, char *const envp[], const char **bad);
void cf_options_free(struct cf_options *o);

/* Values that can only be a mistake, refused before anything runs: a home or
 * workspace that is not an existing directory (the home also absolute), an
 * empty --deny, --writable or --log, an over-long path, a --deny-env or
 * --keep-env that is not a variable name (or, for --deny-env, a pattern). Returns 0, or -EINVAL
 * with WHY (N bytes) saying what is wrong, naming the option and its twin. */
int cf_options_check(const struct cf_options *o, char *why, size_t n);

const char *cf_env_get(char *const envp[], const char *name);

/* The calling user's home in the password database (denied too when it
 * differs from $HOME), or NULL when there is no entry. One static buffer. */
const char *cf_account_home(void);

/* V as a twin's colon list, the inverse of what cf_options_from_env reads: a
 * colon or backslash in a path escaped with a backslash. malloc'd, or NULL. */
char *cf_twin_list_join(const struct cf_strv *v);

/* The user's environment rules of O (secret_env.h), pointing into O. */
struct cf_env_rules;
void cf_options_env_rules(const struct cf_options *o, struct cf_env_rules *r);

#endif
