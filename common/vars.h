/* The CREDFENCE_* variables: one table, one row a variable. The option
 * parser (options.c), `credfence harness`'s export, the per-command help and
 * the references' environment tables (tests/common/test_vars.c) all read it.
 * A name still spelled elsewhere (in a message, the harness marker, the
 * variables credfence harness sets for itself) must be a row: the same test
 * scans common/, enforce/, shim/ and cli/ for names that are not. Plain
 * constant data: readable anywhere, between fork and exec too. */
#ifndef CF_VARS_H
#define CF_VARS_H

#include <stdbool.h>
#include <stddef.h>

/* In the order cf_options_from_env reads them and `credfence harness`
 * exports them. */
enum cf_var {
	CF_VAR_HOME,
	CF_VAR_WORKSPACE,
	CF_VAR_LOG,
	CF_VAR_WRITABLE,
	CF_VAR_DENY,
	CF_VAR_ALLOW_READ,
	CF_VAR_HARNESS_STATE,
	CF_VAR_DENY_ENV,
	CF_VAR_KEEP_ENV,
	CF_VAR_ALLOW_WRITE_PROTECTED,
	CF_VAR_MODE,
	CF_VAR_WRITE_PROTECT,
	CF_VAR_ALLOW_PTYS,
	CF_VAR_QUIET_DENIALS,
	CF_VAR_ALLOW_SOCKET,
	CF_VAR_SSH_AGENT,
	CF_VAR_HARNESS_MAY_READ,
	CF_VAR_HARNESS_PROGRAM,
	CF_VAR_STATIC_HARNESS,
	CF_VAR_MAX_ENTRIES,
	CF_VAR_CONFIG,
	CF_VAR_SETTINGS,
	CF_VAR_SUPERVISOR,
	CF_VAR_HARNESS_TMPDIR,
	CF_VAR_CHILD_TMPDIR,
	CF_VAR_HARNESS,
	CF_VAR_LAUNCHER,
	CF_VAR_FENCED_NS,
	CF_VAR_SCRIPT,
	CF_VAR_COUNT
};

/* What a value looks like, and so how it is read and written. */
enum cf_var_kind {
	CF_KIND_PATH,    /* one path, as given */
	CF_KIND_PATHS,   /* a colon list of paths: "\:" a colon, "\\" a backslash */
	CF_KIND_LIST,    /* a plain colon list (names, socket addresses) */
	CF_KIND_SWITCH,  /* "1" on, "0" or empty off */
	CF_KIND_MODE,    /* "required" or "best-effort" */
	CF_KIND_PROTECT, /* "warn" or "require" (CREDFENCE_WRITE_PROTECT) */
	CF_KIND_NUMBER,  /* a positive number */
	CF_KIND_ADDRESS, /* the supervisor's abstract socket name */
	CF_KIND_MARKER,  /* PID:STARTTIME of a process */
};

/* Who reads a variable (read_by). */
#define CF_BY_CREDFENCE 1u /* the credfence command */
#define CF_BY_SHIM 2u      /* libcredfence.so */

/* Who writes it (set_by). */
#define CF_SET_USER 1u    /* the user; the twin of an option when it has one */
#define CF_SET_EXPORT 2u  /* credfence harness, from its options (export_options) */
#define CF_SET_HARNESS 4u /* credfence harness alone: never the user's to set */
#define CF_SET_SCRIPT 8u  /* scripts/credfence, for the binary it runs */
#define CF_SET_RUN 16u    /* credfence run, from its options, for the shim's judge in
			     CMD (its notices see the policy CMD is fenced by) */

struct cf_var_row {
	const char *name;    /* CREDFENCE_... */
	const char *option;  /* as the references write it ("--home DIR",
				"--best-effort, --required"), or NULL: none */
	enum cf_var_kind kind;
	unsigned read_by, set_by;
	const char *meaning; /* one line */
	/* Where cf_options_from_env puts the value in struct cf_options (and
	 * export_options takes it from): an offset, and for a list the offset
	 * of its from_cli flag; parsed is false when options.c does not read
	 * the variable (the shim or the CLI reads it itself). */
	size_t slot, from_cli;
	bool parsed;
	/* The row's key in credfence's policy file (cli/config.c), or NULL
	 * when a file can not set it (no option, or the row names the file). A
	 * row given an option later needs only this filled in: the reader,
	 * its type check and the round-trip test take the rest from the row. */
	const char *key;
};

extern const struct cf_var_row cf_vars[CF_VAR_COUNT];

static inline const char *cf_var_name(enum cf_var v)
{
	return cf_vars[v].name;
}

/* The row named NAME, or NULL. */
const struct cf_var_row *cf_var_find(const char *name);

/* KIND as the reference's table writes it ("path list"). */
const char *cf_var_kind_word(enum cf_var_kind kind);

/* "--home (CREDFENCE_HOME)": how a message names V, its option first. */
const char *cf_var_label(enum cf_var v, char *buf, size_t cap);

#endif
