/* Claude Code's sandbox settings (the "sandbox" object of settings.json)
 * and sandbox-runtime's (~/.srt-settings.json: "filesystem" and "network"
 * at the top), read as they are. What has a meaning here lands in a row of
 * the option table; every other key is named once on stderr with why. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "config.h"

/* A key of the settings and what credfence does with it. */
enum how {
	TO_ROW,       /* its paths go to ROW */
	DENY_WRITE,   /* held read-only: checked against the writable locations */
	IGNORED,      /* named on stderr with WHY */
};

struct setting {
	const char *section; /* "filesystem", "network", or "" for the top */
	const char *key;
	enum how how;
	enum cf_var row;
	const char *why;
};

static const char no_network[] = "credfence does not filter the network";

static const struct setting settings[] = {
	{"filesystem", "denyRead", TO_ROW, CF_VAR_DENY, NULL},
	{"filesystem", "allowWrite", TO_ROW, CF_VAR_WRITABLE, NULL},
	{"filesystem", "denyWrite", DENY_WRITE, CF_VAR_COUNT, NULL},
	{"filesystem", "allowRead", IGNORED, CF_VAR_COUNT,
	 "it re-allows reads inside denyRead; credfence keeps every denied location denied"},
	{"network", "allowUnixSockets", TO_ROW, CF_VAR_ALLOW_SOCKET, NULL},
	{"network", "allowAllUnixSockets", IGNORED, CF_VAR_COUNT,
	 "credfence allows no socket wholesale; name each in allowUnixSockets"},
	{"", "excludedCommands", IGNORED, CF_VAR_COUNT,
	 "credfence does not run commands unfenced"},
	{"", "allowUnsandboxedCommands", IGNORED, CF_VAR_COUNT,
	 "credfence does not run commands unfenced"},
};

/* The row of SECTION.KEY, or NULL. */
static const struct setting *find(const char *section, const char *key)
{
	for (size_t i = 0; i < sizeof settings / sizeof *settings; i++)
		if (strcmp(settings[i].section, section) == 0 && strcmp(settings[i].key, key) == 0)
			return &settings[i];
	return NULL;
}

static void ignored(const char *prefix, const char *section, const char *key, const char *why)
{
	cf_err("settings: ignored %s%s%s%s (%s)", prefix, section, *section ? "." : "",
	       cf_cli_esc(key), why);
}

/* The paths of S (an array of strings at PATH in file FI) into the row, or
 * the denyWrite list. */
static int take_paths(struct cf_config *cfg, size_t fi, const struct setting *s, json_object *v,
		      const char *const *path, size_t depth, const char *name)
{
	struct cf_config_file *f = &cfg->f[fi];
	int line = cf_config_key_line(f, path, depth);
	bool ok = json_object_is_type(v, json_type_array);
	for (size_t i = 0; ok && i < json_object_array_length(v); i++)
		ok = json_object_is_type(json_object_array_get_idx(v, i), json_type_string);
	if (!ok) {
		cf_err("%s:%d: %s is an array of paths, not %s; fix it. Nothing was run.",
		       cf_cli_esc(f->path), line, name, json_type_to_name(json_object_get_type(v)));
		return CF_EXIT_FAIL;
	}
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		const char *raw = json_object_get_string(json_object_array_get_idx(v, i)), *why;
		/* An abstract socket is a name, not a path. */
		const char *p = s->row == CF_VAR_ALLOW_SOCKET && raw[0] == '@'
					? raw
					: cf_config_path(cfg, raw, true, &why);
		if (!p) {
			cf_err("%s:%d: %s: '%s' %s. Nothing was run.", cf_cli_esc(f->path), line, name,
			       cf_cli_esc(raw), why ? why : "(out of memory)");
			return CF_EXIT_FAIL;
		}
		struct stat st;
		if (s->row == CF_VAR_WRITABLE && stat(p, &st) != 0) {
			/* Fewer writable places is the safe side. */
			cf_err("settings: %s:%d: ignored %s '%s' (it does not exist: %s)",
			       cf_cli_esc(f->path), line, name, cf_cli_esc(p), strerror(errno));
			continue;
		}
		if (s->how == DENY_WRITE) {
			size_t n = cfg->deny_write.n + 1;
			size_t *files = realloc(cfg->deny_write_file, n * sizeof *files);
			if (files)
				cfg->deny_write_file = files;
			int *lines = realloc(cfg->deny_write_line, n * sizeof *lines);
			if (lines)
				cfg->deny_write_line = lines;
			if (!files || !lines || cf_strv_add(&cfg->deny_write, p))
				return -ENOMEM;
			cfg->deny_write_file[n - 1] = fi;
			cfg->deny_write_line[n - 1] = line;
			if (cf_config_note(cfg, fi, CF_VAR_COUNT,
					   "%s: %s (read-only: it lies outside every writable location)",
					   name, cf_cli_esc(p)))
				return -ENOMEM;
			continue;
		}
		struct cf_strv *slot = (struct cf_strv *)(void *)((char *)&cfg->vals +
								  cf_vars[s->row].slot);
		char opt[96];
		if (cf_strv_add(slot, p) ||
		    cf_config_note(cfg, fi, s->row, "%s -> %s: %s", name,
				   cf_var_label(s->row, opt, sizeof opt), cf_cli_esc(p)))
			return -ENOMEM;
	}
	return 0;
}

/* The keys of the object SEC (SECTION of the settings, at PATH[0..DEPTH)). */
static int walk_section(struct cf_config *cfg, size_t fi, json_object *sec, const char *prefix,
			const char *section, const char **path, size_t depth)
{
	if (!json_object_is_type(sec, json_type_object)) {
		cf_err("%s:%d: %s%s is an object, not %s; fix it. Nothing was run.",
		       cf_cli_esc(cfg->f[fi].path), cf_config_key_line(&cfg->f[fi], path, depth),
		       prefix, section, json_type_to_name(json_object_get_type(sec)));
		return CF_EXIT_FAIL;
	}
	json_object_object_foreach(sec, key, val)
	{
		const struct setting *s = find(section, key);
		char name[256];
		snprintf(name, sizeof name, "%s%s%s%s", prefix, section, *section ? "." : "", key);
		if (!s && !*section &&
		    (strcmp(key, "filesystem") == 0 || strcmp(key, "network") == 0)) {
			path[depth] = key;
			int rc = walk_section(cfg, fi, val, prefix, key, path, depth + 1);
			if (rc)
				return rc;
			continue;
		}
		if (!s) {
			ignored(prefix, section, key,
				strcmp(section, "network") == 0 ? no_network
								: "it has no meaning for credfence");
			continue;
		}
		if (s->how == IGNORED) {
			ignored(prefix, section, key, s->why);
			continue;
		}
		path[depth] = key;
		int rc = take_paths(cfg, fi, s, val, path, depth + 1, name);
		if (rc == -ENOMEM)
			cf_err("out of memory");
		if (rc)
			return CF_EXIT_FAIL;
	}
	return 0;
}

int cf_settings_apply(struct cf_config *cfg, size_t fi)
{
	json_object *root = cfg->f[fi].root, *sandbox;
	const char *path[4];
	/* Claude Code: everything under "sandbox"; sandbox-runtime: at the top. */
	if (json_object_object_get_ex(root, "sandbox", &sandbox)) {
		json_object_object_foreach(root, key, val)
		{
			(void)val;
			if (strcmp(key, "permissions") == 0)
				ignored("", "", key, "Claude Code's own tool rules; its Read(...) "
					"deny rules, which Claude Code adds to denyRead, are not read "
					"here: put those paths in sandbox.filesystem.denyRead");
			else if (strcmp(key, "sandbox") != 0)
				ignored("", "", key, "not a sandbox setting");
		}
		path[0] = "sandbox";
		return walk_section(cfg, fi, sandbox, "sandbox.", "", path, 1);
	}
	return walk_section(cfg, fi, root, "", "", path, 0);
}
