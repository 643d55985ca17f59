/* tests/corpus/denied.txt: attack forms as data, each with its expected errno. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>

#include "enforce_test.h"

struct item {
	char op[16], path[PATH_MAX], expect[64];
};

static char *expand(const char *in, const struct cf_fx *f, char *out, size_t n)
{
	size_t k = 0;
	for (const char *p = in; *p && k + 1 < n;) {
		const char *v = NULL;
		if (strncmp(p, "{home}", 6) == 0)
			v = f->home, p += 6;
		else if (strncmp(p, "{ws}", 4) == 0)
			v = f->ws, p += 4;
		else if (strncmp(p, "{fixture}", 9) == 0)
			v = strrchr(f->root, '/') + 1, p += 9; /* cf-XXXXXX: this run's own */
		if (v) {
			size_t l = strlen(v);
			cr_assert_lt(k + l, n);
			memcpy(out + k, v, l);
			k += l;
		} else {
			out[k++] = *p++;
		}
	}
	out[k] = '\0';
	return out;
}

CF_SUITE_STATE()

TestSuite(corpus, .init = cf_suite_setup, .fini = cf_suite_teardown, .timeout = 60 * CF_TIMEOUT_SCALE);

Test(corpus, denied_forms)
{
	static struct argvb b;
	static struct item items[256];
	size_t n = 0;
	cf_test_require_landlock();
	const char *src = getenv("CREDFENCE_SOURCE");
	cr_assert(src, "CREDFENCE_SOURCE is not set; run with meson test");
	char file[PATH_MAX];
	cf_fx_fmt(file, sizeof file, "%s/tests/corpus/denied.txt", src);
	FILE *f = fopen(file, "r");
	cr_assert(f, "can not read %s", file);
	char line[PATH_MAX];
	b.n = 0;
	argvb_add(&b, "%s", CF_PROBE);
	while (fgets(line, sizeof line, f)) {
		char op[16], path[PATH_MAX / 2], expect[64];
		if (line[0] == '#' || line[0] == '\n')
			continue;
		cr_assert_eq(sscanf(line, "%15s %2047s %63s", op, path, expect), 3, "bad line: %s", line);
		cr_assert_lt(n, 256);
		struct item *it = &items[n++];
		snprintf(it->op, sizeof it->op, "%s", op);
		expand(path, &fx, it->path, sizeof it->path);
		snprintf(it->expect, sizeof it->expect, "%s", expect);
		argvb_add(&b, "%s:%s", it->op, it->path);
	}
	fclose(f);
	cr_assert_gt(n, 10);
	fenced(&o, &fx, NULL, NULL, b.v);
	unlink(expand("/tmp/cf-corpus-hl-{fixture}", &fx, line, sizeof line));
	cr_assert_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	for (size_t i = 0; i < n; i++) {
		/* link prints only its source */
		char shown[PATH_MAX];
		snprintf(shown, sizeof shown, "%s", items[i].path);
		if (strcmp(items[i].op, "link") == 0 && strchr(shown, ':'))
			*strchr(shown, ':') = '\0';
		bool ok = false;
		char alts[64];
		snprintf(alts, sizeof alts, "%s", items[i].expect);
		for (char *s, *e = strtok_r(alts, "|", &s); e && !ok; e = strtok_r(NULL, "|", &s))
			ok = has_line(o.out, "%s %s: %s", items[i].op, shown, e);
		cr_expect(ok, "%s %s: want %s\n%s", items[i].op, shown, items[i].expect, o.out);
	}
	cf_fx_assert_no_marker(&fx, &o);
}
