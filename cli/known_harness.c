/* credfence harness -- AGENT for the agents of common/harness_kinds.c
 * (known_harness.h): a first-time user needs no flag and no edit of the
 * agent's configuration, and a configuration that would run the agent's
 * commands unfenced is refused. */
#include "known_harness.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codex_env.h"
#include "options.h"

bool cf_cli_which(const char *prog, char *out, size_t n)
{
	if (strchr(prog, '/'))
		return snprintf(out, n, "%s", prog) < (int)n;
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		size_t k = strcspn(path, ":");
		int w = snprintf(out, n, "%.*s%s%s", (int)k, path, k ? "/" : "", prog);
		struct stat st;
		if (w > 0 && w < (int)n && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(out, X_OK) == 0)
			return true;
		path += k;
		if (*path)
			path++;
	}
	return false;
}

/* mkdir -p, each directory made 0700 (the agents' own state is private). */
static int make_dirs(const char *path)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p)
		return -ENAMETOOLONG;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			return -errno;
		*s = c;
		if (!c)
			break;
	}
	struct stat st;
	if (stat(p, &st) != 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static bool is_elf(const char *path)
{
	char m[4];
	FILE *f = fopen(path, "rb");
	bool elf = f && fread(m, 1, 4, f) == 4 && !memcmp(m, "\177ELF", 4);
	if (f)
		fclose(f);
	return elf;
}

/* K's state directories: --harness-state for this run. A first-time user
 * has none yet, and Landlock can allow only what exists: they are made, but
 * only after the policy judged them (no secret, no file the harness trusts,
 * in or under them), so that a refusal leaves nothing behind. */
static int state_dirs(struct cf_cli *c, const struct cf_harness_kind *k, const char *cwd)
{
	struct cf_options *o = &c->opts;
	const char *home = getenv("HOME");
	if (!home || home[0] != '/')
		home = o->home;
	char dirs[2][PATH_MAX];
	size_t n = 0;
	for (size_t i = 0; i < 2 && k->state[i].rel; i++) {
		if (cf_harness_dir_path(&k->state[i], home, environ, dirs[n], sizeof dirs[n]))
			continue;
		if (cf_strv_add_unique(&o->harness_state, dirs[n])) {
			cf_err("out of memory");
			return CF_EXIT_FAIL;
		}
		n++;
	}
	if (!n)
		return 0;
	struct cf_policy pol;
	if (cf_policy_build(&pol, o, environ, cwd)) {
		cf_err("out of memory while building the policy");
		return CF_EXIT_FAIL;
	}
	bool judged = pol.verdict == CF_VERDICT_APPLIED;
	bool state_refused = pol.verdict == CF_VERDICT_HARNESS_STATE;
	cf_policy_free(&pol);
	if (state_refused) /* the fence's refusal names it as a --harness-state */
		cf_err("harness: %s's state (%s%s%s), which its fenced commands write, is judged "
		       "as a --harness-state directory:",
		       k->name, cf_cli_esc(dirs[0]), n > 1 ? ", " : "", n > 1 ? cf_cli_esc(dirs[1]) : "");
	if (!judged) /* the fence's own refusal says why, with nothing made */
		return 0;
	for (size_t i = 0; i < n; i++) {
		int rc = make_dirs(dirs[i]);
		if (rc) {
			cf_err("harness: can not make %s's state directory %s (%s), which its fenced "
			       "commands write; make it yourself, or pass its place with "
			       "--harness-state DIR. Nothing was run.",
			       k->name, cf_cli_esc(dirs[i]), strerror(-rc));
			return CF_EXIT_FAIL;
		}
	}
	return 0;
}

/* The program K's node wrapper starts as the real harness, named as a
 * --harness-program: else it would be fenced as a child of the wrapper and
 * could not write its own state. */
static int native_program(struct cf_cli *c, const struct cf_harness_kind *k)
{
	char found[PATH_MAX], real[PATH_MAX], native[PATH_MAX];
	if (!k->native_pkg || !cf_cli_which(c->cmd[0], found, sizeof found) || !realpath(found, real))
		return 0; /* not found: the exec says so */
	if (is_elf(real)) /* the native program itself */
		return 0;
	if (cf_harness_native(k, real, native, sizeof native) == 0) {
		if (cf_strv_add_unique(&c->opts.harness_programs, native)) {
			cf_err("out of memory");
			return CF_EXIT_FAIL;
		}
		return 0;
	}
	if (c->opts.harness_programs.n) /* the user named it */
		return 0;
	cf_err("harness: %s's wrapper %s starts a native program that is not where it looks (%s in "
	       "node_modules, as node finds it, or its own vendor directory); reinstall %s, or pass "
	       "--harness-program PATH naming the program it starts. Nothing was run.",
	       k->name, cf_cli_esc(real), k->native_pkg, k->name);
	return CF_EXIT_FAIL;
}

int cf_known_prepare(struct cf_cli *c, const struct cf_harness_kind *k, const char *cwd)
{
	int rc = state_dirs(c, k, cwd);
	return rc ? rc : native_program(c, k);
}

/* ------------------------------------------------------------ Codex */

/* One layer of Codex's configuration; a missing file is no layer. */
static int codex_layer(struct cf_codex_env *e, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		snprintf(e->cant, sizeof e->cant, "%s can not be read (%s)", path, strerror(errno));
		return -EINVAL;
	}
	size_t cap = 1 << 16, len = 0;
	char *text = malloc(cap);
	int rc = 0;
	while (text) {
		size_t got = fread(text + len, 1, cap - len, f);
		len += got;
		if (len < cap)
			break;
		char *t = cap < (8u << 20) ? realloc(text, cap *= 2) : NULL;
		if (!t) {
			snprintf(e->cant, sizeof e->cant, "%s is too large", path);
			rc = -EINVAL;
		}
		free(t ? NULL : text);
		text = t;
	}
	if (!rc && ferror(f)) {
		snprintf(e->cant, sizeof e->cant, "%s can not be read", path);
		rc = -EINVAL;
	}
	fclose(f);
	if (!rc)
		rc = text ? cf_codex_env_layer(e, text, len, path) : -ENOMEM;
	free(text);
	return rc;
}

/* Codex's layers, lowest first: the system's, the user's ($CODEX_HOME), a
 * project's .codex/config.toml in each directory from / down to the one it
 * starts in (Codex reads those of trusted projects; credfence reads them
 * all), the managed ones, then -c overrides from its command line. */
static int codex_layers(struct cf_codex_env *e, char **cmd, const char *cwd, char *user, size_t n)
{
	const char *ch = getenv("CODEX_HOME"), *home = getenv("HOME");
	int rc;
	if (ch && *ch)
		snprintf(user, n, "%s/config.toml", ch);
	else
		snprintf(user, n, "%s/.codex/config.toml", home ? home : "");
	if ((rc = codex_layer(e, "/etc/codex/config.toml")) || (rc = codex_layer(e, user)))
		return rc;
	const char *start = cwd;
	for (char **a = cmd + 1; *a && strcmp(*a, "--"); a++) {
		if ((!strcmp(*a, "-C") || !strcmp(*a, "--cd")) && a[1])
			start = *++a;
		else if (!strncmp(*a, "--cd=", 5))
			start = *a + 5;
	}
	char dir[PATH_MAX], p[PATH_MAX + 32];
	struct stat us, ps;
	bool have_user = stat(user, &us) == 0;
	if (!realpath(start, dir))
		snprintf(dir, sizeof dir, "%s", cwd);
	for (char *s = dir;; s = strchr(s + 1, '/')) {
		char c = s ? *s : '\0';
		if (s)
			*s = '\0';
		snprintf(p, sizeof p, "%s/.codex/config.toml", dir);
		if (s)
			*s = c;
		if (!(have_user && stat(p, &ps) == 0 && ps.st_dev == us.st_dev && ps.st_ino == us.st_ino) &&
		    (rc = codex_layer(e, p)))
			return rc;
		if (!s)
			break;
	}
	if ((rc = codex_layer(e, "/etc/codex/managed_config.toml")) ||
	    (rc = codex_layer(e, "/etc/codex/requirements.toml")))
		return rc;
	for (char **a = cmd + 1; *a && strcmp(*a, "--"); a++) {
		const char *kv = NULL;
		if ((!strcmp(*a, "-c") || !strcmp(*a, "--config")) && a[1])
			kv = *++a;
		else if (!strncmp(*a, "--config=", 9))
			kv = *a + 9;
		if (kv && (rc = cf_codex_env_override(e, kv)))
			return rc;
	}
	return 0;
}

/* Whether the preload list LIST names SHIM (canonical); *NAMED gets its
 * first entry otherwise. */
static bool names_shim(const char *list, const char *shim, char *named, size_t n)
{
	named[0] = '\0';
	while (*list) {
		size_t k = strcspn(list, CF_PRELOAD_SEPS);
		char e[PATH_MAX], r[PATH_MAX];
		if (k && k < sizeof e) {
			memcpy(e, list, k);
			e[k] = '\0';
			if (realpath(e, r) && !strcmp(r, shim))
				return true;
			if (!named[0])
				snprintf(named, n, "%s", e);
		}
		list += k;
		if (*list)
			list++;
	}
	return false;
}

/* S as a TOML basic string into OUT. */
static void toml_str(char *out, size_t n, const char *s)
{
	size_t o = 0;
	if (n < 3)
		return;
	out[o++] = '"';
	for (; *s && o + 8 < n; s++) {
		if (*s == '"' || *s == '\\')
			out[o++] = '\\';
		out[o++] = *s;
	}
	out[o++] = '"';
	out[o] = '\0';
}

static void set_add(char *line, size_t n, const char *name, const char *val)
{
	char q[PATH_MAX * 2];
	toml_str(q, sizeof q, val);
	size_t u = strlen(line);
	snprintf(line + u, n - u, "%s%s = %s", u > 8 ? ", " : "", name, q);
}

/* --home names another home than the HOME the shell keeps (a core variable). */
static bool home_moved(const struct cf_options *o)
{
	const char *h = getenv("HOME");
	char a[PATH_MAX], b[PATH_MAX];
	if (!o->home || !*o->home)
		return false;
	return !h || !realpath(h, a) || !realpath(o->home, b) || strcmp(a, b) != 0;
}

int cf_known_judge_shell(struct cf_cli *c, const struct cf_harness_kind *k,
			 const struct cf_policy *pol, const char *shim, const char *cwd)
{
	if (k->shell != CF_SHELL_CODEX_POLICY)
		return 0;
	struct cf_options *o = &c->opts;
	struct cf_codex_env e;
	char user[PATH_MAX + 32], why[PATH_MAX * 2] = "", named[PATH_MAX];
	cf_codex_env_init(&e);
	int rc = codex_layers(&e, c->cmd, cwd, user, sizeof user);
	if (rc == -ENOMEM) {
		cf_codex_env_free(&e);
		cf_err("out of memory");
		return CF_EXIT_FAIL;
	}
	/* What the harness exports that its shell must keep to fence itself as
	 * strictly as the harness was asked to. */
	const char *need[] = {"CREDFENCE_WORKSPACE", home_moved(o) ? "CREDFENCE_HOME" : NULL,
			      o->deny.n ? "CREDFENCE_DENY" : NULL};
	const char *dropped_by = NULL, *v = NULL;
	bool fix_include = false;
	if (rc) {
		snprintf(why, sizeof why, "its configuration can not be judged: %s", e.cant);
	} else if (!(v = cf_codex_env_value(&e, CF_PRELOAD_VAR, shim, &dropped_by))) {
		fix_include = dropped_by && !strcmp(dropped_by, "include_only");
		snprintf(why, sizeof why, "its shell_environment_policy drops " CF_PRELOAD_VAR " (%s%s%s)",
			 !strcmp(dropped_by, "inherit") ? (e.inherit == CF_CODEX_CORE ? "inherit = \"core\"" : "inherit = \"none\"")
			 : !strcmp(dropped_by, "exclude") ? "a pattern of exclude"
			 : !strcmp(dropped_by, "include_only") ? "include_only"
							       : "a default exclude",
			 e.inherit_from[0] && !strcmp(dropped_by, "inherit") ? " in " : "",
			 !strcmp(dropped_by, "inherit") ? e.inherit_from : "");
	} else if (!names_shim(v, shim, named, sizeof named)) {
		snprintf(why, sizeof why, "its set line (%s) gives " CF_PRELOAD_VAR " = \"%s\", which %s",
			 e.set_from, v,
			 named[0] && access(named, R_OK) != 0 ? "does not exist"
							     : "is not this credfence's shim");
	} else {
		for (size_t i = 0; i < sizeof need / sizeof *need; i++)
			if (need[i] && !cf_codex_env_value(&e, need[i], "x", &dropped_by)) {
				fix_include = !strcmp(dropped_by, "include_only");
				snprintf(why, sizeof why, "its shell_environment_policy drops %s (%s), without "
					 "which the shim in its shell fences less than this harness asks",
					 need[i], dropped_by);
				break;
			}
	}
	if (!why[0]) {
		cf_codex_env_free(&e);
		if (o->static_harness < 0)
			o->static_harness = 1; /* its shell fences itself: judged above */
		return 0;
	}
	/* The one line to add or change. */
	char line[PATH_MAX * 8];
	if (fix_include) {
		snprintf(line, sizeof line, "add \"%s\" and \"CREDFENCE_*\" to include_only",
			 CF_PRELOAD_VAR);
	} else if (rc) {
		snprintf(line, sizeof line, "write it as plain TOML, without what credfence does not "
			 "judge");
	} else {
		char set[PATH_MAX * 6] = "set = { ";
		set_add(set, sizeof set, CF_PRELOAD_VAR, shim);
		set_add(set, sizeof set, "CREDFENCE_WORKSPACE", pol->workspace ? pol->workspace : cwd);
		if (need[1])
			set_add(set, sizeof set, "CREDFENCE_HOME", o->home);
		if (need[2]) {
			char *d = cf_twin_list_join(&o->deny);
			set_add(set, sizeof set, "CREDFENCE_DENY", d ? d : "");
			free(d);
		}
		for (size_t i = 0; i < e.set.n; i++) { /* the user's other entries stay */
			char *eq = strchr(e.set.v[i], '=');
			*eq = '\0';
			if (strcmp(e.set.v[i], CF_PRELOAD_VAR) && strncmp(e.set.v[i], "CREDFENCE_", 10))
				set_add(set, sizeof set, e.set.v[i], eq + 1);
			*eq = '=';
		}
		size_t u = strlen(set);
		snprintf(set + u, sizeof set - u, " }");
		snprintf(line, sizeof line, "in [shell_environment_policy] of %s, %s: %s",
			 e.set_from[0] ? e.set_from : user, e.set.n ? "change its set line to" : "add the line",
			 set);
	}
	cf_codex_env_free(&e);
	if (pol->mode == CF_MODE_BEST_EFFORT) {
		cf_warn("harness: %s's commands run unfenced: %s; to fence them, %s (best-effort mode)",
			k->name, cf_cli_esc(why), cf_cli_esc(line));
		return 0;
	}
	cf_err("harness: %s's commands would run unfenced: %s. To fence them, %s. Nothing was run.",
	       k->name, cf_cli_esc(why), cf_cli_esc(line));
	return CF_EXIT_FAIL;
}
