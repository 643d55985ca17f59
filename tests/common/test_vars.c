/* The table of the CREDFENCE_* variables (common/vars.h): whole rows, the
 * option parser reading every row it keeps, no name spelled in the sources
 * outside the table, and the environment tables of README.md and both CLI
 * references held to it row by row, both ways. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "vars.h"

static const char prefix[] = "CREDFENCE_";

Test(vars, every_row_is_whole)
{
	for (size_t i = 0; i < CF_VAR_COUNT; i++) {
		const struct cf_var_row *r = &cf_vars[i];
		cr_assert(r->name, "row %zu has no name (a hole in the enum's order?)", i);
		cr_expect(strncmp(r->name, prefix, sizeof prefix - 1) == 0, "%s", r->name);
		cr_expect(r->meaning && *r->meaning, "%s has no meaning", r->name);
		cr_expect(r->read_by && r->set_by, "%s: who reads it, who sets it?", r->name);
		cr_expect(cf_var_find(r->name) == r, "%s is not found, or not once", r->name);
		cr_expect(!r->option || strncmp(r->option, "--", 2) == 0, "%s", r->name);
		/* A twin is the user's and is parsed; what credfence harness
		 * exports it takes from the parser's slot. */
		if (r->option)
			cr_expect(r->parsed && (r->set_by & CF_SET_USER), "%s", r->name);
		if (r->set_by & CF_SET_RUN)
			cr_expect(r->set_by & CF_SET_EXPORT, "%s: run exports what harness does", r->name);
		if (r->set_by & CF_SET_EXPORT)
			cr_expect(r->parsed && r->option, "%s", r->name);
		if (r->set_by & (CF_SET_HARNESS | CF_SET_SCRIPT))
			cr_expect(!(r->set_by & CF_SET_USER) && !r->option, "%s", r->name);
		for (size_t j = 0; j < i; j++)
			cr_expect(!r->parsed || !cf_vars[j].parsed || r->slot != cf_vars[j].slot,
				  "%s and %s share a slot", r->name, cf_vars[j].name);
	}
}

/* Every option has a key in the policy file, spelled from the option: its
 * name without the dashes, '-' as '_'. The mode's two options share "mode";
 * --config names a file and so has no key (a file naming another would
 * chain). A row added with an option and no key fails here. */
Test(vars, every_option_has_its_key)
{
	for (size_t i = 0; i < CF_VAR_COUNT; i++) {
		const struct cf_var_row *r = &cf_vars[i];
		char want[64];
		size_t n = 0;
		if (!r->option || strcmp(r->name, "CREDFENCE_CONFIG") == 0) {
			cr_expect(!r->key, "%s has a key but no option a file could stand for",
				  r->name);
			continue;
		}
		cr_assert(r->key, "%s (%s) has no key in the policy file: fill in KEY() in "
			  "common/vars.c", r->name, r->option);
		if (r->kind == CF_KIND_MODE) {
			cr_expect_str_eq(r->key, "mode");
			continue;
		}
		const char *p = r->option + 2;
		for (; *p && *p != ' ' && *p != ',' && n + 1 < sizeof want; p++)
			want[n++] = *p == '-' ? '_' : *p;
		want[n] = '\0';
		cr_expect_str_eq(r->key, want, "%s", r->name);
		for (size_t j = 0; j < i; j++)
			cr_expect(!cf_vars[j].key || strcmp(cf_vars[j].key, r->key) != 0,
				  "%s and %s share the key %s", r->name, cf_vars[j].name, r->key);
	}
}

/* Each parsed row, given a valid value, lands in its own slot. */
Test(vars, the_parser_reads_every_row_it_keeps)
{
	for (size_t i = 0; i < CF_VAR_COUNT; i++) {
		const struct cf_var_row *r = &cf_vars[i];
		if (!r->parsed)
			continue;
		const char *value = r->kind == CF_KIND_SWITCH	? "1"
				    : r->kind == CF_KIND_MODE	? "best-effort"
				    : r->kind == CF_KIND_PROTECT ? "require"
				    : r->kind == CF_KIND_NUMBER ? "7"
				    : r->kind == CF_KIND_PATHS || r->kind == CF_KIND_LIST
					    ? "/a:/b"
					    : "/a";
		char entry[128];
		snprintf(entry, sizeof entry, "%s=%s", r->name, value);
		char *envp[] = {entry, NULL};
		struct cf_options o;
		const char *bad = NULL;
		cf_options_init(&o);
		cr_assert_eq(cf_options_from_env(&o, envp, &bad), 0, "%s", entry);
		const char *slot = (const char *)&o + r->slot;
		switch (r->kind) {
		case CF_KIND_SWITCH:
			cr_expect_eq(*(const int *)(const void *)slot, 1, "%s", entry);
			break;
		case CF_KIND_MODE:
			cr_expect_eq(o.mode, CF_MODE_BEST_EFFORT, "%s", entry);
			break;
		case CF_KIND_PROTECT:
			cr_expect_eq(o.write_protect, CF_WRITE_PROTECT_REQUIRE, "%s", entry);
			break;
		case CF_KIND_NUMBER:
			cr_expect_eq(*(const long *)(const void *)slot, 7, "%s", entry);
			break;
		case CF_KIND_PATHS:
		case CF_KIND_LIST:
			cr_expect_eq(((const struct cf_strv *)(const void *)slot)->n, 2, "%s", entry);
			break;
		default:
			cr_expect_str_eq(*(const char *const *)(const void *)slot, "/a", "%s", entry);
		}
		cf_options_free(&o);
	}
}

/* ---- the sources and the references ---- */

static const char *source_root(void)
{
	const char *root = getenv("CREDFENCE_SOURCE"); /* tests/meson.build */
	cr_assert(root && *root, "CREDFENCE_SOURCE names the checkout; run the tests with meson test");
	return root;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	cr_assert(f, "can not open %s", path);
	static char all[1 << 20];
	size_t n = fread(all, 1, sizeof all - 1, f);
	fclose(f);
	all[n] = '\0';
	return strdup(all);
}

/* Each CREDFENCE_ name in TEXT that is no row, counted and logged. */
static int names_not_in_table(const char *text, const char *where)
{
	int bad = 0;
	for (const char *p = strstr(text, prefix); p; p = strstr(p + 1, prefix)) {
		size_t n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
		char name[64];
		if (n >= sizeof name || p[n - 1] == '_')
			continue; /* "CREDFENCE_*", "CREDFENCE_" as a prefix */
		memcpy(name, p, n);
		name[n] = '\0';
		if (!cf_var_find(name)) {
			cr_log_error("%s: %s is not a row of common/vars.c", where, name);
			bad++;
		}
	}
	return bad;
}

static int scan_tree(const char *dir)
{
	DIR *d = opendir(dir);
	cr_assert(d, "can not open %s", dir);
	int bad = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char path[PATH_MAX];
		size_t n = strlen(e->d_name);
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR) {
			bad += scan_tree(path);
		} else if (n > 2 && e->d_name[n - 2] == '.' &&
			   (e->d_name[n - 1] == 'c' || e->d_name[n - 1] == 'h')) {
			char *text = read_all(path);
			bad += names_not_in_table(text, path);
			free(text);
		}
	}
	closedir(d);
	return bad;
}

Test(vars, the_sources_name_no_variable_outside_the_table)
{
	static const char *const layers[] = {"common", "enforce", "shim", "cli"};
	int bad = 0;
	for (size_t i = 0; i < sizeof layers / sizeof *layers; i++) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s/%s", source_root(), layers[i]);
		bad += scan_tree(dir);
	}
	cr_expect_eq(bad, 0, "%d CREDFENCE_* names in the sources are not rows of common/vars.c",
		     bad);
}

/* The reference's words for who reads and who sets a row. */
static void read_by_words(const struct cf_var_row *r, char *out, size_t cap)
{
	snprintf(out, cap, "%s%s%s", r->read_by & CF_BY_CREDFENCE ? "credfence" : "",
		 r->read_by == (CF_BY_CREDFENCE | CF_BY_SHIM) ? ", " : "",
		 r->read_by & CF_BY_SHIM ? "shim" : "");
}

static const char *set_by_words(const struct cf_var_row *r)
{
	if (r->set_by & CF_SET_SCRIPT)
		return "`scripts/credfence` only";
	if (r->set_by & CF_SET_HARNESS)
		return "`credfence harness` only";
	if (r->set_by & CF_SET_RUN)
		return "you; `credfence run` and `credfence harness` export it";
	return r->set_by & CF_SET_EXPORT ? "you; `credfence harness` exports it" : "you";
}

/* CELL without its backticks and the spaces around it, into OUT. */
static void plain(const char *cell, size_t len, char *out, size_t cap)
{
	while (len && *cell == ' ')
		cell++, len--;
	while (len && cell[len - 1] == ' ')
		len--;
	size_t k = 0;
	for (size_t i = 0; i < len && k + 1 < cap; i++)
		if (cell[i] != '`')
			out[k++] = cell[i];
	out[k] = '\0';
}

/* Cell I of the table row LINE (its first cell is 0), into OUT. */
static bool cell(const char *line, int i, char *out, size_t cap)
{
	const char *p = line;
	for (int k = 0; k <= i; k++) {
		p = strchr(p, '|');
		if (!p)
			return false;
		p++;
	}
	size_t len = strcspn(p, "|\n");
	if (p[len] != '|')
		return false;
	snprintf(out, cap, "%.*s", (int)len, p);
	return true;
}

/* The option column OPT (as written) of row R: each of the row's options in
 * backticks with its argument, or NONE. */
static bool option_matches(const struct cf_var_row *r, const char *opt, const char *none)
{
	char o[256];
	plain(opt, strlen(opt), o, sizeof o);
	if (!r->option)
		return strcmp(o, none) == 0;
	char want[128];
	for (const char *p = r->option; *p;) {
		size_t n = strcspn(p, ",");
		snprintf(want, sizeof want, "`%.*s`", (int)n, p);
		if (!strstr(opt, want))
			return false;
		p += n;
		p += strspn(p, ", ");
	}
	return true;
}

/* The table of HEADING in REL: every row of common/vars.c once, no other
 * CREDFENCE_ row, each option as the table writes it (NONE when it has
 * none); when WHOLE, the kind, who reads, who sets and the meaning too. */
static void table_is_the_list(const char *rel, const char *heading, const char *none, bool whole)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", source_root(), rel);
	char *all = read_all(path);
	char *sec = strstr(all, heading);
	cr_assert(sec, "%s has no %s section", rel, heading);
	char *end = strstr(sec + strlen(heading), "\n## ");
	if (end)
		*end = '\0';
	int seen[CF_VAR_COUNT] = {0}, bad = 0;
	char c[512], w[512];
	for (char *line = sec; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, "| `CREDFENCE_", 13) != 0)
			continue;
		cr_assert(cell(line, 0, c, sizeof c), "%s: a row that is no table row", rel);
		plain(c, strlen(c), w, sizeof w);
		const struct cf_var_row *r = cf_var_find(w);
		if (!r) {
			cr_log_error("%s: %s is not a row of common/vars.c", rel, w);
			bad++;
			continue;
		}
		seen[r - cf_vars]++;
		if (!cell(line, 1, c, sizeof c) || !option_matches(r, c, none)) {
			cr_log_error("%s: %s: option column is not %s", rel, r->name,
				     r->option ? r->option : none);
			bad++;
		}
		if (!whole)
			continue;
		char want[256];
		const char *expect[4] = {cf_var_kind_word(r->kind), want, set_by_words(r), r->meaning};
		read_by_words(r, want, sizeof want);
		for (int k = 0; k < 4; k++) {
			char e[256];
			plain(expect[k], strlen(expect[k]), e, sizeof e);
			if (!cell(line, 2 + k, c, sizeof c))
				c[0] = '\0';
			plain(c, strlen(c), w, sizeof w);
			if (strcmp(w, e) != 0) {
				cr_log_error("%s: %s: \"%s\", not \"%s\"", rel, r->name, w, e);
				bad++;
			}
		}
	}
	for (size_t i = 0; i < CF_VAR_COUNT; i++)
		if (seen[i] != 1) {
			cr_log_error("%s: %s has %d rows, not one", rel, cf_vars[i].name, seen[i]);
			bad++;
		}
	free(all);
	cr_expect_eq(bad, 0, "%s: %d differences between its %s table and common/vars.c", rel, bad,
		     heading);
}

Test(vars, the_readme_table_is_the_list)
{
	table_is_the_list("README.md", "## Environment variables\n", "none", false);
}

Test(vars, the_reference_table_is_the_list)
{
	table_is_the_list("docs/cli-reference.md", "## Environment variables\n", "none", true);
}

Test(vars, the_japanese_reference_table_is_the_list)
{
	table_is_the_list("docs/cli-reference.ja.md", "## 環境変数\n", "なし", false);
}

/* The man page's ENVIRONMENT section names every row, and no other
 * CREDFENCE_ variable. */
Test(vars, the_man_page_names_every_row)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/docs/credfence.1", source_root());
	char *all = read_all(path);
	char *sec = strstr(all, "\n.SH ENVIRONMENT\n");
	cr_assert(sec, "docs/credfence.1 has no ENVIRONMENT section");
	char *end = strstr(sec + 1, "\n.SH ");
	if (end)
		*end = '\0';
	int bad = names_not_in_table(sec, "docs/credfence.1");
	for (size_t i = 0; i < CF_VAR_COUNT; i++) {
		const char *p = strstr(sec, cf_vars[i].name);
		size_t n = strlen(cf_vars[i].name);
		while (p && (p[n] == '_' || (p[n] >= 'A' && p[n] <= 'Z')))
			p = strstr(p + n, cf_vars[i].name); /* CREDFENCE_HARNESS in _HARNESS_STATE */
		if (!p) {
			cr_log_error("docs/credfence.1: ENVIRONMENT does not name %s", cf_vars[i].name);
			bad++;
		}
	}
	free(all);
	cr_expect_eq(bad, 0, "docs/credfence.1: %d differences between ENVIRONMENT and common/vars.c",
		     bad);
}
