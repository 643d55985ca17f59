/* Shared by the tests of tests/enforce, tests/cli and tests/tools: the helper
 * programs built beside them, an argv builder and line matching. */
#ifndef CF_ENFORCE_TEST_H
#define CF_ENFORCE_TEST_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

#ifndef CF_PROBE
#error "CF_PROBE (path of cf-probe) comes from meson"
#endif

/* The state of a test program: a fixture and the captured output of the
 * program under test, made before and removed after each test. Expands to the
 * two variables and to cf_suite_setup() / cf_suite_teardown(). */
#define CF_SUITE_STATE()                          \
	static struct cf_fx fx;                   \
	static struct cf_fx_out o;                \
	static void cf_suite_setup(void)          \
	{                                         \
		cf_fx_setup(&fx);                 \
		memset(&o, 0, sizeof o);          \
	}                                         \
	static void cf_suite_teardown(void)       \
	{                                         \
		cf_fx_out_free(&o);               \
		cf_fx_teardown(&fx);              \
	}

struct argvb {
	char *v[1024];
	char store[1024][160 + 2 * PATH_MAX / 4];
	int n;
};

/* Append one argument, printf-formatted. */
__attribute__((format(printf, 2, 3))) static inline void argvb_add(struct argvb *b, const char *fmt,
								   ...)
{
	cr_assert_lt(b->n, 1023);
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b->store[b->n], sizeof b->store[0], fmt, ap);
	va_end(ap);
	cr_assert(k >= 0 && (size_t)k < sizeof b->store[0]);
	b->v[b->n] = b->store[b->n];
	b->v[++b->n] = NULL;
}

/* TEXT has a line that is exactly the formatted LINE. */
__attribute__((format(printf, 2, 3))) static inline bool has_line(const char *text, const char *fmt,
								  ...)
{
	char want[PATH_MAX * 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(want, sizeof want, fmt, ap);
	va_end(ap);
	size_t n = strlen(want);
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, want, n) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* Every line of TEXT starts with "credfence: " (and there is at least one). */
static inline bool all_lines_credfence(const char *text)
{
	if (!text || !*text)
		return false;
	for (const char *p = text; *p;) {
		if (strncmp(p, "credfence: ", 11) != 0)
			return false;
		const char *e = strchr(p, '\n');
		if (!e)
			break;
		p = e + 1;
	}
	return true;
}

/* Run credfence run with extra options OPTS (NULL-terminated, may be NULL)
 * then "--" and the command CMD. */
static inline void fenced(struct cf_fx_out *o, const struct cf_fx *fx, const char *const *env,
			  char *const opts[], char *const cmd[])
{
	static struct argvb b;
	b.n = 0;
	for (int i = 0; opts && opts[i]; i++)
		argvb_add(&b, "%s", opts[i]);
	argvb_add(&b, "--");
	for (int i = 0; cmd[i]; i++)
		argvb_add(&b, "%s", cmd[i]);
	cf_fx_credfence(o, fx, "run", env, b.v);
}

#define OUT_FMT "status %d\n--- stdout\n%s\n--- stderr\n%s"
#define OUT_ARGS(o) (o).status, (o).out, (o).err

#endif
