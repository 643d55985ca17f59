/* The exec matrix: every interposed entry point, called through ffi_call by a
 * harness (cf-matrix), starts a child that can not read any fake key but can
 * read the workspace; failing calls give exactly what they give without the
 * shim; the harness itself stays free; each fenced launch logs one line. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shimtest.h"

static struct st t;

static void setup(void)
{
	st_setup(&t);
	char p[PATH_MAX + 32];
	snprintf(p, sizeof p, "%s/bin/cf-noexec", t.fx.ws);
	cf_fx_write(p, "#!/bin/sh\nexit 0\n");
	chmod(p, 0644);
	snprintf(p, sizeof p, "%s/bin/cf-script", t.fx.ws);
	/* No #!: execve gives ENOEXEC, the execvp family falls back to /bin/sh. */
	cf_fx_write(p, "exec \"$CF_T_PROBE\" \"$@\"\n");
	chmod(p, 0755);
}

static void teardown(void)
{
	st_teardown(&t);
}

/* The ERR lines of an output, in order. */
static char *err_lines(const char *out)
{
	size_t n = 0;
	char *r = calloc(1, strlen(out) + 1);
	for (const char *p = out; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
		if (strncmp(p, "ERR ", 4) == 0) {
			memcpy(r + n, p, len);
			n += len;
		}
		p += len;
	}
	return r;
}

Test(shim_matrix, every_entry_point, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE)
{
	char path[PATH_MAX + 64], bin[PATH_MAX + 16];
	const char *matrix = st_build("tests/shim/cf-matrix");
	snprintf(path, sizeof path, "PATH=%s/bin:%s/tests/shim:/usr/bin:/bin", t.fx.ws,
		 getenv("CREDFENCE_BUILD"));
	snprintf(bin, sizeof bin, "CF_T_BIN=%s/bin", t.fx.ws);
	char **env = st_env(&t, (const char *[]){path, bin, NULL});

	struct cf_fx_out fenced, free_run;
	st_harness(&fenced, &t, env, (const char *[]){"--log", t.log, NULL},
		   CF_ARGV((char *)matrix, "fenced"));
	st_dump("cf-matrix fenced (under credfence harness)", &fenced);
	cf_fx_run(&free_run, t.fx.ws, env, NULL, CF_ARGV((char *)matrix, "free"));
	st_dump("cf-matrix free (no shim)", &free_run);

	/* Denied reads: cf-probe checked EACCES on every key; and no marker anywhere. */
	cf_fx_assert_no_marker(&t.fx, &fenced);
	cr_expect_eq(st_count(fenced.out, "FAIL "), 0, "some entry points failed (see the log)");
	cr_expect_eq(fenced.status, 0, "cf-matrix fenced ended with %d", fenced.status);
	cr_expect_eq(st_count(fenced.out, "HARNESS_READ ok"), 2, "the harness lost its own access");
	/* 9 forms x 2 + 3 variadic x 65 + 4 ENOEXEC fallbacks at least. */
	cr_expect_geq(st_count(fenced.out, "OK "), 9 * 2 + 3 * 65 + 4 + 27 + 6 + 4 + 5 + 3,
		      "too few cases passed: %zu", st_count(fenced.out, "OK "));

	/* Without the shim the very same probes read the keys: the check can fail. */
	cr_expect_eq(free_run.status, 0, "cf-matrix free ended with %d", free_run.status);
	cr_expect(strstr(free_run.out, t.fx.tag), "without the shim the probe should print the marker");

	/* Failing calls: identical results and errno with and without the shim. */
	char *a = err_lines(fenced.out), *b = err_lines(free_run.out);
	cr_expect(st_count(a, "ERR ") >= 40, "too few failing calls compared: %zu", st_count(a, "ERR "));
	cr_expect_str_eq(a, b, "failing calls differ with the shim:\n%s\nwithout:\n%s", a, b);

	/* Each fenced launch wrote one sandbox_status line, and each was applied. */
	const char *l = strstr(fenced.out, "LAUNCHES ");
	cr_assert(l, "no LAUNCHES line");
	size_t launches = strtoul(l + 9, NULL, 10);
	cr_expect_eq(st_log_lines(&t, NULL), launches, "%zu sandbox_status lines for %zu launches",
		     st_log_lines(&t, NULL), launches);
	cr_expect_eq(st_log_lines(&t, "\"verdict\":\"applied\""), launches,
		     "not every launch was applied");
	free(a);
	free(b);
	cf_fx_out_free(&fenced);
	cf_fx_out_free(&free_run);
	cf_fx_env_free(env);
}

/* A harness's popen whose stream can not be made (fdopen fails, out of
 * memory): popen returns NULL with that errno, its end of the pipe is
 * closed (nothing leaks; a "w" child sees the end of its input and ends,
 * else the popen would wait for it forever), and the next popen works. */
Test(shim_matrix, a_popen_whose_stream_can_not_be_made_leaks_nothing, .init = setup,
     .fini = teardown, .timeout = 120)
{
	struct cf_fx_out o;
	st_harness(&o, &t, NULL, NULL, CF_ARGV((char *)st_build("tests/shim/cf-popenfail")));
	st_dump("cf-popenfail as the harness", &o);
	cr_expect_eq(o.status, 0, "cf-popenfail ended with %d (142: the popen waited forever)",
		     o.status);
	cr_expect(strstr(o.out, "POPEN-w NULL errno=ENOMEM\n"), "%s", o.out);
	cr_expect(strstr(o.out, "LEAKED-w 0\n"), "%s", o.out);
	cr_expect(strstr(o.out, "POPEN-r NULL errno=ENOMEM\n"), "%s", o.out);
	cr_expect(strstr(o.out, "LEAKED-r 0\n"), "%s", o.out);
	cr_expect(strstr(o.out, "WORKS\nDONE\n"), "%s", o.out);
	cf_fx_out_free(&o);
}
