/* The small TOML reader (cli/toml.c): every value with its full key, the
 * odd forms of the grammar read right, and what it does not follow refused
 * with its line, never guessed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "toml.h"

struct seen {
	char out[4096];
};

static int rec(void *ctx, const char *const *keys, size_t n, enum cf_toml_type t, const char *str,
	       bool in_array)
{
	struct seen *s = ctx;
	size_t u = strlen(s->out);
	for (size_t i = 0; i < n; i++)
		u += (size_t)snprintf(s->out + u, sizeof s->out - u, "%s%s", i ? "." : "", keys[i]);
	static const char *const types[] = {"S", "B", "A", "O"};
	snprintf(s->out + u, sizeof s->out - u, "%s%s=%s;", in_array ? "[]" : "", types[t],
		 str ? str : "");
	return 0;
}

static const char *read_doc(const char *doc, int *rc, size_t *line)
{
	static struct seen s;
	memset(&s, 0, sizeof s);
	*rc = cf_toml_read(doc, strlen(doc), rec, &s, line);
	return s.out;
}

#define EXPECT_READ(doc, want)                                                             \
	do {                                                                               \
		int rc_;                                                                   \
		size_t l_;                                                                 \
		const char *got_ = read_doc(doc, &rc_, &l_);                               \
		cr_expect_eq(rc_, 0, "%s: rc %d at line %zu", doc, rc_, l_);               \
		cr_expect_str_eq(got_, want, "%s", doc);                                   \
	} while (0)

#define EXPECT_BAD(doc, at_line)                                                           \
	do {                                                                               \
		int rc_;                                                                   \
		size_t l_;                                                                 \
		read_doc(doc, &rc_, &l_);                                                  \
		cr_expect_eq(rc_, -EINVAL, "%s: rc %d, not refused", doc, rc_);            \
		cr_expect_eq(l_, (size_t)(at_line), "%s: refused at line %zu", doc, l_);   \
	} while (0)

Test(toml, tables_dotted_and_quoted_keys)
{
	EXPECT_READ("a = \"x\"\n[t]\nb = true\n[t.u]\nc.d = 'y'\n",
		    "aS=x;t.bB=true;t.u.c.dS=y;");
	EXPECT_READ("[ \"s p\" . 'q.r' ]\n\"k\" = 1\n", "s p.q.r.kO=;");
	EXPECT_READ("[[arr]]\nx = 1\n", "arr.[].xO=;");
	EXPECT_READ("t = { a = \"1\", b.c = \"2\" }\n", "t.aS=1;t.b.cS=2;");
	EXPECT_READ("e = {}\n", "");
}

Test(toml, strings_of_all_four_kinds)
{
	EXPECT_READ("a = \"q\\\"\\\\\\t\\u00e9\\U0001F600\"\n", "aS=q\"\\\t\xc3\xa9\xf0\x9f\x98\x80;");
	EXPECT_READ("a = 'C:\\path'\n", "aS=C:\\path;");
	EXPECT_READ("a = \"\"\"\nline1\n[not.a.table]\nb = \"no\"\n\"\"\"\n",
		    "aS=line1\n[not.a.table]\nb = \"no\"\n;");
	EXPECT_READ("a = '''\nraw \\n [x]\n'''\n", "aS=raw \\n [x]\n;");
	EXPECT_READ("a = \"\"\"one \\\n    two\"\"\"\n", "aS=one two;");
	EXPECT_READ("a = \"\"\"x\"\"\"\"\"\n", "aS=x\"\";");
	EXPECT_READ("a = \"# not a comment\" # a comment\n", "aS=# not a comment;");
}

Test(toml, arrays_numbers_dates)
{
	EXPECT_READ("a = [ \"x\", 'y', ]\n", "aA=;a[]S=x;a[]S=y;");
	EXPECT_READ("a = [\n  \"x\", # c\n  \"y\"\n]\nb = 2\n", "aA=;a[]S=x;a[]S=y;bO=;");
	EXPECT_READ("a = [[1, 2], [\"z\"]]\n", "aA=;a[]A=;a[]O=;a[]O=;a[]A=;a[]S=z;");
	EXPECT_READ("a = [{ k = \"v\" }]\n", "aA=;a[]O=;a.[].kS=v;");
	EXPECT_READ("n = -1_000\nf = 6.02e23\nd = 1979-05-27 07:32:00Z\ni = inf\nb = false\n",
		    "nO=;fO=;dO=;iO=;bB=false;");
	EXPECT_READ("\xef\xbb\xbf" "a = 1\r\nb = 2\r\n", "aO=;bO=;");
}

Test(toml, what_it_does_not_follow_is_refused_with_its_line)
{
	EXPECT_BAD("a = \"x\"\nb = bare\n", 2);
	EXPECT_BAD("a = \"unterminated\n", 1);
	EXPECT_BAD("a = \"x\" b = 1\n", 1);
	EXPECT_BAD("a =\n", 1);
	EXPECT_BAD("= 1\n", 1);
	EXPECT_BAD("[a\nb = 1\n", 1);
	EXPECT_BAD("a = \"\\q\"\n", 1);
	EXPECT_BAD("a = \"\\uD800\"\n", 1);
	EXPECT_BAD("a = [1, 2\n", 2);
	EXPECT_BAD("t = { a = 1,\n b = 2 }\n", 1);
	EXPECT_BAD("a = '''never closed\n", 2);
	EXPECT_BAD("k\x01 = 1\n", 1);
	/* a key nested deeper than the reader keeps */
	EXPECT_BAD("a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q = 1\n", 1);
	int rc;
	size_t l;
	read_doc("a = 1\0b = 2\n", &rc, &l);
	cr_expect_eq(rc, 0); /* strlen stops at the NUL: what follows was never given */
	static struct seen s;
	cr_expect_eq(cf_toml_read("a = 1\n\0b = 2\n", 13, rec, &s, &l), -EINVAL,
		     "a NUL byte in the text is refused");
	char deep[200];
	memset(deep, '[', 100);
	snprintf(deep, sizeof deep, "a = %.60s", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[");
	cr_expect_eq(cf_toml_read(deep, strlen(deep), rec, &s, &l), -EINVAL, "nesting is bounded");
}

static int stop(void *ctx, const char *const *keys, size_t n, enum cf_toml_type t, const char *str,
		bool in_array)
{
	(void)ctx, (void)keys, (void)n, (void)t, (void)str, (void)in_array;
	return 7;
}

Test(toml, the_callback_stops_the_reading)
{
	size_t l;
	cr_expect_eq(cf_toml_read("a = 1\nb = 2\n", 12, stop, NULL, &l), 7);
}

static int count(void *ctx, const char *const *keys, size_t n, enum cf_toml_type t,
		 const char *str, bool in_array)
{
	(void)keys, (void)t, (void)in_array;
	cr_assert(n >= 1 && n <= CF_TOML_MAX_KEYS);
	if (str)
		(void)strlen(str);
	(*(size_t *)ctx)++;
	return 0;
}

/* Odd input: 20000 mutations of a real configuration (bytes changed,
 * deleted, duplicated, cut short), each read in a buffer of its exact size
 * (ASan sees a read past it). Every one is read or refused, never more. */
Test(toml, mutated_configurations_are_read_or_refused)
{
	static const char base[] =
		"model = \"m\" # c\n[model_providers.fake]\nbase_url = \"http://127.0.0.1:1/v1\"\n"
		"[shell_environment_policy]\ninherit = 'core'\nexclude = [\"A_*\", '''B''']\n"
		"set = { LD_PRELOAD = \"/l\\u00e9.so\", X.y = \"\"\"z\n\"\"\" }\n[[arr]]\nn = -1.5e3\n"
		"d = 1979-05-27 07:32:00Z\nb = [true, [1, {k = 'v'}]]\n";
	unsigned seed = 12345;
	size_t ok = 0, refused = 0;
	for (int i = 0; i < 20000; i++) {
		char doc[sizeof base * 2];
		size_t len = sizeof base - 1;
		memcpy(doc, base, len);
		for (int m = 0; m < 1 + i % 4 && len > 1; m++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % len;
			switch ((seed >> 4) % 4) {
			case 0: doc[at] = "\"'[]{}=.,#\\\n \x01\xc3"[(seed >> 16) % 15]; break;
			case 1: memmove(doc + at, doc + at + 1, len - at - 1), len--; break;
			case 2: if (len + 1 < sizeof doc) memmove(doc + at + 1, doc + at, len - at), len++; break;
			default: len = at + 1; break;
			}
		}
		char *exact = malloc(len ? len : 1);
		cr_assert(exact);
		memcpy(exact, doc, len);
		size_t n = 0, line = 0;
		int rc = cf_toml_read(exact, len, count, &n, &line);
		free(exact);
		cr_assert(rc == 0 || rc == -EINVAL, "mutation %d: rc %d", i, rc);
		cr_assert(line >= 1 && line <= len + 1, "mutation %d: line %zu", i, line);
		rc ? refused++ : ok++;
	}
	cr_expect(ok > 0 && refused > 0, "read %zu, refused %zu: the mutations test nothing", ok,
		  refused);
}
