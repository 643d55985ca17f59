/* What Codex's shell_environment_policy lets through to the shell it starts
 * for the model's commands: its configuration layers read in order (each
 * overriding the last, key by key), then asked for one variable at a time.
 * A static harness (Codex's native program) loads no shim: its commands are
 * fenced only when this shell keeps LD_PRELOAD and the CREDFENCE_* variables.
 *
 * How Codex builds the environment (codex-rs ShellEnvironmentPolicy): start
 * from `inherit` ("all", the default; "core": HOME LOGNAME PATH SHELL USER
 * USERNAME TMPDIR TEMP TMP; "none"), drop names matching the default
 * excludes (*KEY* *SECRET* *TOKEN*, unless ignore_default_excludes), drop
 * names matching `exclude`, insert `set`, then keep only the names matching
 * `include_only` when it is not empty. Patterns are case-insensitive globs
 * (* and ?). */
#ifndef CF_CODEX_ENV_H
#define CF_CODEX_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

enum cf_codex_inherit { CF_CODEX_ALL, CF_CODEX_CORE, CF_CODEX_NONE };

struct cf_codex_env {
	enum cf_codex_inherit inherit;
	char inherit_from[256];   /* the layer that set it ("" by default) */
	bool default_excludes;    /* true unless ignore_default_excludes = true */
	struct cf_strv exclude, include_only; /* the last layer's lists */
	struct cf_strv set;       /* NAME=VALUE, one per name, the last layer's value */
	char set_from[256];       /* the last layer with a set entry */
	char cant[512];           /* why a layer can not be judged ("" when every one can) */
};

void cf_codex_env_init(struct cf_codex_env *e);
void cf_codex_env_free(struct cf_codex_env *e);

/* Merges one layer: TEXT (LEN bytes) of the TOML file FROM. 0, -ENOMEM, or
 * -EINVAL with e->cant saying what in FROM credfence can not judge (a syntax
 * its reader does not follow, a key of shell_environment_policy it does not
 * know, a value of the wrong type). */
int cf_codex_env_layer(struct cf_codex_env *e, const char *text, size_t len, const char *from);

/* A `-c KEY=VALUE` override of Codex's command line (VALUE is TOML, or else
 * a string, as Codex reads it). Overrides of other keys are ignored. */
int cf_codex_env_override(struct cf_codex_env *e, const char *kv);

/* The value NAME gets in Codex's shell when the harness has it as VAL (NULL:
 * unset), or NULL when the shell does not get it. *WHY (may be NULL) names
 * what dropped it: "inherit", "exclude", "include_only", "default". */
const char *cf_codex_env_value(const struct cf_codex_env *e, const char *name, const char *val,
			       const char **why);

/* Case-insensitive glob of Codex's patterns: * any run, ? one character. */
bool cf_codex_glob(const char *pattern, const char *name);

#endif
