#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "protocol.h"

/* A policy is a few hundred bytes; anything near this is not one. */
#define CF_CONFIG_MAX_BYTES (1u << 20)

int cf_config_note(struct cf_config *cfg, size_t file, enum cf_var var, const char *fmt, ...)
{
	char buf[PATH_MAX + 256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	struct cf_config_note *n = realloc(cfg->notes, (cfg->n_notes + 1) * sizeof *n);
	if (!n)
		return -ENOMEM;
	cfg->notes = n;
	n[cfg->n_notes] = (struct cf_config_note){file, var, strdup(buf)};
	if (!n[cfg->n_notes].text)
		return -ENOMEM;
	cfg->n_notes++;
	return 0;
}

/* A string CFG keeps until cf_config_free. */
static const char *keep(struct cf_config *cfg, const char *s)
{
	return cf_strv_add(&cfg->own, s) ? NULL : cfg->own.v[cfg->own.n - 1];
}

const char *cf_config_path(struct cf_config *cfg, const char *path, bool relative_ok,
			   const char **why)
{
	char buf[PATH_MAX];
	int k;
	*why = NULL;
	if (!*path) {
		*why = "is empty; give a path";
		return NULL;
	}
	if (strpbrk(path, "*?[")) {
		*why = "is a pattern; credfence has no patterns: name each path";
		return NULL;
	}
	if (strcmp(path, "~") == 0 || strncmp(path, "~/", 2) == 0)
		k = cfg->home ? snprintf(buf, sizeof buf, "%s%s", cfg->home, path + 1) : -1;
	else if (strncmp(path, "//", 2) == 0)
		k = snprintf(buf, sizeof buf, "%s", path + 1);
	else if (path[0] == '/')
		k = snprintf(buf, sizeof buf, "%s", path);
	else if (!relative_ok) {
		*why = "is relative; give an absolute path or one that starts with ~/";
		return NULL;
	} else {
		char cwd[PATH_MAX];
		k = getcwd(cwd, sizeof cwd)
			    ? snprintf(buf, sizeof buf, "%s/%s", cwd, strncmp(path, "./", 2) ? path : path + 2)
			    : -1;
	}
	if (k < 0 || (size_t)k >= sizeof buf) {
		*why = k < 0 ? "can not be made absolute (no home, or no current directory)"
			     : "is longer than PATH_MAX";
		return NULL;
	}
	return keep(cfg, buf);
}

/* The line TEXT[0..OFF) ends on. */
static int line_at(const char *text, size_t off)
{
	int line = 1;
	for (size_t i = 0; i < off && text[i]; i++)
		line += text[i] == '\n';
	return line;
}

/* json-c gives no positions for keys: walk the text, which json-c accepted,
 * tracking the key at each level of objects. The line of the first
 * occurrence of PATH, or 1; *COUNT (when given) the number of them. */
static int key_walk(const struct cf_config_file *f, const char *const *path, size_t n, int *count)
{
	int first = 0;
	enum { MAXD = 32 };
	bool obj[MAXD + 2] = {false}, ok[MAXD + 2] = {false}, keyok[MAXD + 2] = {false};
	const char *t = f->text;
	size_t d = 0;
	int line = 1;
	ok[0] = true;
	keyok[0] = true;
	for (size_t i = 0; i < f->len; i++) {
		char ch = t[i];
		if (ch == '\n') {
			line++;
		} else if (ch == '{' || ch == '[') {
			bool parent_ok = ok[d] && (d == 0 || (obj[d] && keyok[d]));
			if (d < MAXD)
				d++;
			obj[d] = ch == '{';
			ok[d] = parent_ok && obj[d] && d <= n;
			keyok[d] = false;
		} else if (ch == '}' || ch == ']') {
			if (d)
				d--;
		} else if (ch == '"') {
			size_t s = ++i;
			while (i < f->len && t[i] != '"')
				i += t[i] == '\\' ? 2 : 1;
			size_t e = i, j = i + 1;
			while (j < f->len && strchr(" \t\r\n", t[j]))
				j++;
			if (!obj[d] || j >= f->len || t[j] != ':')
				continue; /* a value, not a key */
			keyok[d] = ok[d] && d >= 1 && d <= n && strlen(path[d - 1]) == e - s &&
				   memcmp(t + s, path[d - 1], e - s) == 0;
			if (keyok[d] && d == n) {
				first = first ? first : line;
				if (!count)
					return first;
				++*count;
			}
		}
	}
	return first ? first : 1;
}

int cf_config_key_line(const struct cf_config_file *f, const char *const *path, size_t n)
{
	return key_walk(f, path, n, NULL);
}

static void file_err(const struct cf_config_file *f, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void file_err(const struct cf_config_file *f, int line, const char *fmt, ...)
{
	char buf[PATH_MAX + 512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (line > 0)
		cf_err("%s:%d: %s. Nothing was run.", cf_cli_esc(f->path), line, buf);
	else
		cf_err("%s: %s. Nothing was run.", cf_cli_esc(f->path), buf);
}

/* Every directory from / down to the one holding PATH (canonical): owned by
 * this user or root, and writable by no one else unless sticky (/tmp). */
static int dirs_safe(const struct cf_config_file *f, const char *canon)
{
	char dir[PATH_MAX];
	struct stat st;
	snprintf(dir, sizeof dir, "%s", canon);
	for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st) != 0)
			return 0; /* gone since: the open below fails */
		if (st.st_uid != getuid() && st.st_uid != 0) {
			file_err(f, 0, "the directory %s is owned by uid %u, neither you nor root; move "
				 "the file to a directory of yours that no one else can change",
				 dir, (unsigned)st.st_uid);
			return CF_EXIT_FAIL;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
			file_err(f, 0, "the directory %s is writable by other users (mode %03o), who "
				 "could replace the file; chmod go-w it, or move the file",
				 dir, (unsigned)(st.st_mode & 0777));
			return CF_EXIT_FAIL;
		}
		if (strcmp(dir, "/") == 0)
			break;
	}
	return 0;
}

/* Read file F->path, judged first: a regular file of this user or root that
 * no other user can write, in directories no other user can change. MUST:
 * a missing file is an error (else it is skipped: 1). */
static int read_file(struct cf_config_file *f, bool must)
{
	char canon[PATH_MAX];
	struct stat st;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT && !must)
		return 1;
	if (fd < 0) {
		file_err(f, 0, "can not open it (%s); check the name", strerror(errno));
		return CF_EXIT_FAIL;
	}
	int rc = CF_EXIT_FAIL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		file_err(f, 0, "is not a regular file; name a JSON file");
	} else if (st.st_uid != getuid() && st.st_uid != 0) {
		file_err(f, 0, "is owned by uid %u, neither you nor root; a policy must be yours",
			 (unsigned)st.st_uid);
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		file_err(f, 0, "is writable by other users (mode %03o), who could loosen the "
			 "fence; chmod go-w it", (unsigned)(st.st_mode & 0777));
	} else if (st.st_size > CF_CONFIG_MAX_BYTES) {
		file_err(f, 0, "is larger than %u bytes; a policy is a few lines", CF_CONFIG_MAX_BYTES);
	} else if (!realpath(f->path, canon)) {
		file_err(f, 0, "can not be resolved (%s)", strerror(errno));
	} else if (dirs_safe(f, canon) == 0) {
		f->text = malloc((size_t)st.st_size + 1);
		ssize_t got = f->text ? read(fd, f->text, (size_t)st.st_size) : -1;
		if (got < 0) {
			file_err(f, 0, "can not read it (%s)", strerror(errno));
		} else {
			f->len = (size_t)got;
			f->text[f->len] = '\0';
			rc = 0;
		}
	}
	close(fd);
	return rc;
}

/* Parse F's text: strict JSON, one object, nothing after it. */
static int parse(struct cf_config_file *f)
{
	struct json_tokener *tok = json_tokener_new();
	if (!tok) {
		cf_err("out of memory");
		return CF_EXIT_FAIL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	json_object *root = json_tokener_parse_ex(tok, f->text, (int)f->len);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!root || e != json_tokener_success) {
		file_err(f, line_at(f->text, end), "not valid JSON: %s; fix the syntax",
			 e == json_tokener_continue ? "the file ends inside a value"
						    : json_tokener_error_desc(e));
		json_object_put(root);
		return CF_EXIT_FAIL;
	}
	size_t rest = end + strspn(f->text + end, " \t\r\n");
	if (rest < f->len) {
		file_err(f, line_at(f->text, rest), "not valid JSON: text after the end of the "
			 "top-level object; remove it");
		json_object_put(root);
		return CF_EXIT_FAIL;
	}
	if (!json_object_is_type(root, json_type_object)) {
		file_err(f, line_at(f->text, strspn(f->text, " \t\r\n")),
			 "the top level is not an object; write { \"key\": value, ... }");
		json_object_put(root);
		return CF_EXIT_FAIL;
	}
	f->root = root;
	return 0;
}

static const char *type_word(enum cf_var_kind k)
{
	switch (k) {
	case CF_KIND_PATHS:
		return "an array of paths ([\"~/dir\"])";
	case CF_KIND_LIST:
		return "an array of strings";
	case CF_KIND_SWITCH:
		return "true or false";
	case CF_KIND_MODE:
		return "\"" CF_MODE_WORD_REQUIRED "\" or \"" CF_MODE_WORD_BEST_EFFORT "\"";
	case CF_KIND_NUMBER:
		return "a positive whole number";
	case CF_KIND_PROTECT:
		return "\"" CF_WRITE_PROTECT_WORD_WARN "\" or \"" CF_WRITE_PROTECT_WORD_REQUIRE "\"";
	default:
		return "a path (a string)";
	}
}

/* Row R's value V from file FI into CFG->vals: scalars replace an earlier
 * file's, lists add to it. LINE names the key in messages. */
static int take(struct cf_config *cfg, size_t fi, const struct cf_var_row *r, json_object *v,
		int line)
{
	struct cf_config_file *f = &cfg->f[fi];
	char *slot = (char *)&cfg->vals + r->slot;
	const char *why, *p;
	bool ok;
	switch (r->kind) {
	case CF_KIND_PATH:
		ok = json_object_is_type(v, json_type_string);
		if (!ok)
			break;
		if (!(p = cf_config_path(cfg, json_object_get_string(v), false, &why))) {
			file_err(f, line, "\"%s\": '%s' %s", r->key,
				 cf_cli_esc(json_object_get_string(v)), why ? why : "(out of memory)");
			return CF_EXIT_FAIL;
		}
		*(const char **)(void *)slot = p;
		return cf_config_note(cfg, fi, (enum cf_var)(r - cf_vars), "%s: %s", r->key,
				      cf_cli_esc(p));
	case CF_KIND_PATHS:
	case CF_KIND_LIST:
		ok = json_object_is_type(v, json_type_array);
		for (size_t i = 0; ok && i < json_object_array_length(v); i++)
			ok = json_object_is_type(json_object_array_get_idx(v, i), json_type_string);
		if (!ok)
			break;
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			const char *s = json_object_get_string(json_object_array_get_idx(v, i));
			p = r->kind == CF_KIND_LIST ? s : cf_config_path(cfg, s, false, &why);
			if (!p) {
				file_err(f, line, "\"%s\": '%s' %s", r->key, cf_cli_esc(s),
					 why ? why : "(out of memory)");
				return CF_EXIT_FAIL;
			}
			struct stat st;
			if ((r == &cf_vars[CF_VAR_WRITABLE] || r == &cf_vars[CF_VAR_HARNESS_STATE]) &&
			    stat(p, &st) != 0) {
				/* As the option: a missing one would get no rule. */
				file_err(f, line, "\"%s\": '%s' does not exist (%s); create it first, "
					 "or leave it out", r->key, cf_cli_esc(p), strerror(errno));
				return CF_EXIT_FAIL;
			}
			if (cf_strv_add((struct cf_strv *)(void *)slot, p) ||
			    cf_config_note(cfg, fi, (enum cf_var)(r - cf_vars), "%s: %s", r->key,
					   cf_cli_esc(p)))
				return -ENOMEM;
		}
		return 0;
	case CF_KIND_SWITCH:
		ok = json_object_is_type(v, json_type_boolean);
		if (ok) {
			*(int *)(void *)slot = json_object_get_boolean(v) ? 1 : 0;
			return cf_config_note(cfg, fi, (enum cf_var)(r - cf_vars), "%s: %s", r->key,
					      json_object_get_boolean(v) ? "true" : "false");
		}
		break;
	case CF_KIND_MODE:
		p = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
		ok = strcmp(p, CF_MODE_WORD_REQUIRED) == 0 || strcmp(p, CF_MODE_WORD_BEST_EFFORT) == 0;
		if (ok) {
			*(int *)(void *)slot = strcmp(p, CF_MODE_WORD_REQUIRED) == 0
						       ? CF_MODE_REQUIRED
						       : CF_MODE_BEST_EFFORT;
			return cf_config_note(cfg, fi, CF_VAR_MODE, "mode: %s", p);
		}
		break;
	case CF_KIND_PROTECT: {
		p = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
		int w = cf_write_protect_parse(p);
		ok = w >= 0;
		if (ok) {
			*(int *)(void *)slot = w;
			*(bool *)((char *)&cfg->vals + r->from_cli) = true; /* the file set it */
			return cf_config_note(cfg, fi, (enum cf_var)(r - cf_vars), "%s: %s", r->key,
					      p);
		}
		break;
	}
	case CF_KIND_NUMBER:
		ok = json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0 &&
		     json_object_get_int64(v) <= LONG_MAX;
		if (ok) {
			*(long *)(void *)slot = (long)json_object_get_int64(v);
			return cf_config_note(cfg, fi, (enum cf_var)(r - cf_vars), "%s: %ld", r->key,
					      *(long *)(void *)slot);
		}
		break;
	default:
		ok = false;
	}
	file_err(f, line, "\"%s\" must be %s, not %.60s; see 'Policy file' in docs/cli-reference.md",
		 r->key, type_word(r->kind),
		 cf_cli_esc(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE)));
	return CF_EXIT_FAIL;
}

static const struct cf_var_row *row_of_key(const char *key)
{
	for (size_t i = 0; i < CF_VAR_COUNT; i++)
		if (cf_vars[i].key && strcmp(cf_vars[i].key, key) == 0)
			return &cf_vars[i];
	return NULL;
}

/* credfence's own file FI: every key a row's. */
static int apply_own(struct cf_config *cfg, size_t fi)
{
	struct cf_config_file *f = &cfg->f[fi];
	json_object_object_foreach((json_object *)f->root, key, val)
	{
		const char *path[] = {key};
		int line = cf_config_key_line(f, path, 1);
		const struct cf_var_row *r = row_of_key(key);
		int times = 0;
		(void)key_walk(f, path, 1, &times);
		if (times > 1) {
			/* json-c keeps the last one without a word. */
			file_err(f, line, "\"%s\" is given %d times; keep one", cf_cli_esc(key),
				 times);
			return CF_EXIT_FAIL;
		}
		if (!r) {
			file_err(f, line, "unknown key \"%s\"; the keys are the options' names with '_' "
				 "for '-' (see 'Policy file' in docs/cli-reference.md)",
				 cf_cli_esc(key));
			return CF_EXIT_FAIL;
		}
		int rc = take(cfg, fi, r, val, line);
		if (rc == -ENOMEM) {
			cf_err("out of memory");
			return CF_EXIT_FAIL;
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* Open, judge and parse the file at PATH as file number CFG->n. 0, 1 when
 * it is missing and need not be there, or CF_EXIT_FAIL after a message. */
static int add_file(struct cf_config *cfg, const char *path, bool settings, bool must)
{
	if (cfg->n >= CF_CONFIG_MAX_FILES) {
		cf_err("more than %d policy and settings files; name fewer. Nothing was run.",
		       CF_CONFIG_MAX_FILES);
		return CF_EXIT_FAIL;
	}
	struct cf_config_file *f = &cfg->f[cfg->n];
	f->path = strdup(path);
	f->settings = settings;
	if (!f->path)
		return CF_EXIT_FAIL;
	int rc = read_file(f, must);
	if (rc == 0)
		rc = parse(f);
	if (rc) {
		free(f->path);
		free(f->text);
		memset(f, 0, sizeof *f);
		return rc;
	}
	cfg->n++;
	return 0;
}

/* Whether a list row adds up across the files, the environment and the
 * command line instead of being replaced: a denial is never lost to an
 * option that names another. */
static bool adds_up(enum cf_var v)
{
	return v == CF_VAR_DENY || v == CF_VAR_DENY_ENV;
}

/* The files' values into O where O has none. */
static int merge(struct cf_config *cfg, struct cf_options *o)
{
	for (size_t i = 0; i < CF_VAR_COUNT; i++) {
		const struct cf_var_row *r = &cf_vars[i];
		if (!r->key || !r->parsed)
			continue;
		char *to = (char *)o + r->slot, *from = (char *)&cfg->vals + r->slot;
		bool has = false, set = false;
		switch (r->kind) {
		case CF_KIND_PATH:
			has = *(const char **)(void *)from != NULL;
			set = *(const char **)(void *)to != NULL;
			if (has && !set)
				*(const char **)(void *)to = *(const char **)(void *)from;
			break;
		case CF_KIND_SWITCH:
		case CF_KIND_MODE:
			has = *(int *)(void *)from >= 0;
			set = *(int *)(void *)to >= 0;
			if (has && !set)
				*(int *)(void *)to = *(int *)(void *)from;
			break;
		case CF_KIND_PROTECT: {
			/* Its default is a value (0): the flag says who set it. */
			const char *twin = getenv(r->name);
			has = *(bool *)((char *)&cfg->vals + r->from_cli);
			set = *(bool *)((char *)o + r->from_cli) || (twin && *twin);
			if (has && !set)
				*(int *)(void *)to = *(int *)(void *)from;
			break;
		}
		case CF_KIND_NUMBER:
			has = *(long *)(void *)from > 0;
			set = *(long *)(void *)to > 0;
			if (has && !set)
				*(long *)(void *)to = *(long *)(void *)from;
			break;
		case CF_KIND_PATHS:
		case CF_KIND_LIST: {
			struct cf_strv *t = (struct cf_strv *)(void *)to;
			const struct cf_strv *s = (const struct cf_strv *)(void *)from;
			has = s->n > 0;
			set = t->n > 0 && !adds_up((enum cf_var)i);
			for (size_t k = 0; has && !set && k < s->n; k++)
				if (cf_strv_add_unique(t, s->v[k]))
					return -ENOMEM;
			break;
		}
		default:
			break;
		}
		cfg->took[i] = has && !set;
		cfg->overridden[i] = has && set;
	}
	return 0;
}

/* The user's file: $XDG_CONFIG_HOME/credfence/config.json, else
 * $HOME/.config/credfence/config.json. */
static int user_file(char *out, size_t n)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int k;
	if (xdg && xdg[0] == '/')
		k = snprintf(out, n, "%s/credfence/config.json", xdg);
	else if (home && home[0] == '/')
		k = snprintf(out, n, "%s/.config/credfence/config.json", home);
	else
		return -1;
	return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* What ~/ stands for: --home or CREDFENCE_HOME, else the last "home" of the
 * files, else $HOME. */
static void pick_home(struct cf_config *cfg, const struct cf_options *o)
{
	cfg->home = o->home && o->home[0] == '/' ? o->home : NULL;
	for (size_t i = 0; !cfg->home && i < cfg->n; i++) {
		json_object *h;
		if (!cfg->f[i].settings && json_object_object_get_ex(cfg->f[i].root, "home", &h) &&
		    json_object_is_type(h, json_type_string) && json_object_get_string(h)[0] == '/')
			cfg->home = keep(cfg, json_object_get_string(h));
	}
	if (!cfg->home) {
		const char *h = getenv("HOME");
		cfg->home = h && h[0] == '/' ? h : NULL;
	}
}

int cf_config_load(struct cf_config *cfg, struct cf_options *o)
{
	char user[PATH_MAX];
	int rc = 0;
	memset(cfg, 0, sizeof *cfg);
	cf_options_init(&cfg->vals);
	/* The settings the command line or the environment names, else the files'. */
	const struct cf_strv *settings = o->settings.n ? &o->settings : &cfg->vals.settings;
	if (user_file(user, sizeof user) == 0 && (rc = add_file(cfg, user, false, false)) == 1)
		rc = 0; /* no file of the user's */
	if (!rc && o->config)
		rc = add_file(cfg, o->config, false, true);
	if (rc)
		goto out;
	pick_home(cfg, o);
	for (size_t i = 0; !rc && i < cfg->n; i++)
		rc = apply_own(cfg, i);
	for (size_t i = 0; !rc && i < settings->n; i++) {
		const char *why, *p = cf_config_path(cfg, settings->v[i], true, &why);
		if (!p) {
			cf_err("settings file '%s' %s. Nothing was run.", cf_cli_esc(settings->v[i]),
			       why ? why : "(out of memory)");
			rc = CF_EXIT_FAIL;
			break;
		}
		size_t fi = cfg->n;
		if (!(rc = add_file(cfg, p, true, true)))
			rc = cf_settings_apply(cfg, fi);
	}
	if (!rc && merge(cfg, o)) {
		cf_err("out of memory");
		rc = CF_EXIT_FAIL;
	}
out:
	/* What the files gave is copied out: json-c's objects go now, on every
	 * path (a refusal exits with CFG still held). */
	for (size_t i = 0; i < cfg->n; i++) {
		json_object_put(cfg->f[i].root);
		cfg->f[i].root = NULL;
	}
	return rc;
}

int cf_config_check_places(struct cf_config *cfg, const struct cf_policy *p, const char *cwd)
{
	char canon[PATH_MAX], why[2 * PATH_MAX + 128], here[PATH_MAX];
	if (!cwd)
		cwd = getcwd(here, sizeof here) ? here : "/";
	for (size_t i = 0; i < cfg->n; i++) {
		int rc = cf_policy_outside_writable(p, cfg->f[i].path, cwd, canon, sizeof canon, why,
						    sizeof why);
		if (rc == -EACCES) {
			file_err(&cfg->f[i], 0, "%s: the fenced command could rewrite this file, and a "
				 "file it can rewrite must never loosen the fence; keep it outside "
				 "every writable location", cf_cli_esc(why));
			return CF_EXIT_FAIL;
		}
		if (rc) {
			file_err(&cfg->f[i], 0, "can not be resolved (%s)", strerror(-rc));
			return CF_EXIT_FAIL;
		}
	}
	for (size_t i = 0; i < cfg->deny_write.n; i++) {
		const struct cf_config_file *f = &cfg->f[cfg->deny_write_file[i]];
		const char *path = cfg->deny_write.v[i];
		int rc = cf_policy_outside_writable(p, path, cwd, canon, sizeof canon, why,
						    sizeof why);
		if (rc == -EACCES) {
			file_err(f, cfg->deny_write_line[i], "sandbox.filesystem.denyWrite: %s; "
				 "credfence can not hold a path read-only inside a writable location: "
				 "take it out of denyWrite, or its place out of the writable ones",
				 cf_cli_esc(why));
			return CF_EXIT_FAIL;
		}
		if (rc && rc != -ENOENT) {
			file_err(f, cfg->deny_write_line[i], "sandbox.filesystem.denyWrite '%s' can "
				 "not be resolved (%s)", cf_cli_esc(path), strerror(-rc));
			return CF_EXIT_FAIL;
		}
	}
	return 0;
}

/* What status says of note K: -1 nothing (its row did not take effect), 0
 * it took effect, 1 the command line or the environment overrode it. */
static int note_state(const struct cf_config *cfg, size_t k)
{
	const struct cf_config_note *n = &cfg->notes[k];
	bool lost = n->var < CF_VAR_COUNT && cfg->overridden[n->var];
	if (n->var < CF_VAR_COUNT && !cfg->took[n->var] && !lost)
		return -1;
	return lost;
}

void cf_config_print(const struct cf_config *cfg, FILE *out)
{
	fprintf(out, "policy files (%zu):\n", cfg->n);
	for (size_t i = 0; i < cfg->n; i++) {
		fprintf(out, "  %s%s\n", cf_cli_esc(cfg->f[i].path),
			cfg->f[i].settings ? " (sandbox settings)" : "");
		for (size_t k = 0; k < cfg->n_notes; k++) {
			int st = cfg->notes[k].file == i ? note_state(cfg, k) : -1;
			if (st >= 0)
				fprintf(out, "    %s%s\n", cfg->notes[k].text,
					st ? " (overridden by the command line or the environment)" : "");
		}
	}
}

void cf_config_json(const struct cf_config *cfg, char *buf, size_t cap, size_t *len)
{
	cf_json_raw(buf, cap, len, "[");
	for (size_t i = 0; i < cfg->n; i++) {
		cf_json_raw(buf, cap, len, i ? ",{\"path\":" : "{\"path\":");
		cf_json_str(buf, cap, len, cfg->f[i].path);
		cf_json_raw(buf, cap, len, ",\"settings\":");
		cf_json_raw(buf, cap, len, cfg->f[i].settings ? "true" : "false");
		for (int want = 0; want < 2; want++) {
			bool first = true;
			cf_json_raw(buf, cap, len, want ? "],\"overridden\":[" : ",\"took\":[");
			for (size_t k = 0; k < cfg->n_notes; k++) {
				if (cfg->notes[k].file != i || note_state(cfg, k) != want)
					continue;
				if (!first)
					cf_json_raw(buf, cap, len, ",");
				cf_json_str(buf, cap, len, cfg->notes[k].text);
				first = false;
			}
		}
		cf_json_raw(buf, cap, len, "]}");
	}
	cf_json_raw(buf, cap, len, "]");
}

void cf_config_free(struct cf_config *cfg)
{
	for (size_t i = 0; i < cfg->n; i++) {
		json_object_put(cfg->f[i].root);
		free(cfg->f[i].path);
		free(cfg->f[i].text);
	}
	for (size_t i = 0; i < cfg->n_notes; i++)
		free(cfg->notes[i].text);
	free(cfg->notes);
	free(cfg->deny_write_file);
	free(cfg->deny_write_line);
	cf_strv_free(&cfg->deny_write);
	cf_options_free(&cfg->vals);
	cf_strv_free(&cfg->own);
	memset(cfg, 0, sizeof *cfg);
}
