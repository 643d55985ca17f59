/* The policy files: credfence's own (~/.config/credfence/config.json, then
 * --config FILE) and Claude Code's or sandbox-runtime's sandbox settings
 * (--settings FILE). JSON read with json-c, in the credfence command only:
 * the shim never links it. Each file's values go to the slots of struct
 * cf_options that the option table (common/vars.c, its key column) names;
 * the command line and the environment override them. */
#ifndef CF_CLI_CONFIG_H
#define CF_CLI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "options.h"
#include "policy.h"
#include "strv.h"
#include "vars.h"

#define CF_CONFIG_MAX_FILES 8

/* What one file gave: "KEY: VALUE" lines, each with the row it went to. */
struct cf_config_note {
	size_t file;
	enum cf_var var; /* CF_VAR_COUNT: a note that fills no slot */
	char *text;
};

struct cf_config_file {
	char *path;   /* as named */
	char *text;   /* its bytes, NUL-terminated */
	size_t len;
	void *root;   /* struct json_object * */
	bool settings; /* Claude Code / sandbox-runtime settings, not credfence's own */
};

struct cf_config {
	struct cf_config_file f[CF_CONFIG_MAX_FILES];
	size_t n;
	struct cf_options vals;     /* what the files hold, merged in the order read */
	struct cf_strv own;         /* strings VALS points into */
	bool took[CF_VAR_COUNT];    /* a file's value of the row took effect */
	bool overridden[CF_VAR_COUNT]; /* a file set the row, the command line or environment won */
	struct cf_config_note *notes;
	size_t n_notes;
	/* sandbox.filesystem.denyWrite: held to lie outside every writable
	 * location once the policy is built (cf_config_check_places). */
	struct cf_strv deny_write;
	size_t *deny_write_file;
	int *deny_write_line;
	const char *home; /* what ~/ expands to */
};

/* Read the user's file (when present), CREDFENCE_CONFIG / --config, then the
 * settings files, into O wherever the command line and the environment left
 * a slot unset (a list: empty; --deny and --deny-env add up instead). 0, or
 * CF_EXIT_FAIL after "credfence: FILE:LINE: ..." naming the key. */
int cf_config_load(struct cf_config *cfg, struct cf_options *o);

/* Each file read, and each denyWrite entry, lies outside every writable
 * location of P (a symlink on the way too): a file the fenced command could
 * rewrite must never loosen the fence. 0, or CF_EXIT_FAIL after a message. */
int cf_config_check_places(struct cf_config *cfg, const struct cf_policy *p, const char *cwd);

/* `credfence status`: the files read and one line per key that took effect. */
void cf_config_print(const struct cf_config *cfg, FILE *out);
/* The same for status --json: [{"path":P,"settings":false,"took":[...],
 * "overridden":[...]}, ...], one object a file read, the lines
 * cf_config_print shows under it; [] when none was read. Into BUF. */
void cf_config_json(const struct cf_config *cfg, char *buf, size_t cap, size_t *len);

void cf_config_free(struct cf_config *cfg);

/* Shared by config.c and settings.c. */
/* The line of the key PATH[0]...PATH[N-1] in the file's text, or 1. */
int cf_config_key_line(const struct cf_config_file *f, const char *const *path, size_t n);
/* PATH with "~/" (or "~") made the home, "//" made "/"; relative made
 * absolute from the current directory when RELATIVE_OK, else refused.
 * NULL with WHY set when refused. Owned by CFG. */
const char *cf_config_path(struct cf_config *cfg, const char *path, bool relative_ok,
			   const char **why);
/* Note TEXT (printf) for status, from file FILE into row VAR. */
int cf_config_note(struct cf_config *cfg, size_t file, enum cf_var var, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Map the Claude Code / sandbox-runtime settings of file FILE (settings.c).
 * 0 or CF_EXIT_FAIL after a message. */
int cf_settings_apply(struct cf_config *cfg, size_t file);

#endif
