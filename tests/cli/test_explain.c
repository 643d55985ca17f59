/* credfence explain LOGFILE (issue 24): a log made by a fenced run, read back
 * with its denials grouped and the line that would allow each; garbage lines
 * are counted, not fatal. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

static struct cf_fx fx;

static void setup(void)
{
	cf_test_require_landlock();
	cf_fx_setup(&fx);
}

static void teardown(void)
{
	cf_fx_teardown(&fx);
}

TestSuite(explain, .init = setup, .fini = teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

Test(explain, a_fenced_run_and_garbage)
{
	char log[PATH_MAX + 16], outside[PATH_MAX + 16], script[PATH_MAX * 5];
	snprintf(log, sizeof log, "%s/log.jsonl", fx.root);
	snprintf(outside, sizeof outside, "%s/outside.txt", fx.root);
	cf_fx_write(outside, "x\n");
	/* A metadata change outside the writable locations, refused and logged
	 * by the supervisor, twice; a secret read twice (one denied line, the
	 * supervisor's judgement of the shim's report). */
	const struct cf_fx_secret *s = cf_fx_secret(&fx, ".ssh");
	snprintf(script, sizeof script,
		 "chmod 600 '%s'; chmod 640 '%s'; cat '%s'; cat '%s'; echo done", outside, outside,
		 s->key, s->key);
	struct cf_fx_out o;
	/* With user namespaces off: in the mount namespace of the fenced tree
	 * the kernel refuses the chmod itself (EROFS) and nothing is logged. */
	cf_test_require_userns_switch();
	cf_fx_credfence(&o, &fx, "run", (const char *[]){"CF_TEST_NO_USERNS=1", NULL},
			CF_ARGV("--log", log, "--", "/bin/sh", "-c", script));
	cr_assert(strstr(o.out, "done"), "the run did not run: %s", o.err);
	cf_fx_out_free(&o);
	/* Lines that are not credfence's. */
	FILE *f = fopen(log, "a");
	cr_assert(f);
	fputs("not json\n{\"event\":\n\x01\x02\xff\n{\"event\":\"x\"} trailing\n", f);
	fclose(f);

	cf_fx_run(&o, NULL, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), "explain", log));
	cr_expect_eq(o.status, 0, "explain: %d %s", o.status, o.err);
	cr_expect(strstr(o.out, "4 lines skipped"), "the garbage was not counted:\n%s", o.out);
	cr_expect(strstr(o.out, "  metadata changes outside the writable locations (2)\n"),
		  "the metadata group:\n%s", o.out);
	cr_expect_eq(count(o.out, "to allow: --writable DIR\n"), 1, "one allow line a group:\n%s",
		     o.out);
	cr_expect(strstr(o.out, "  SSH private keys, known hosts and config (1)\n"), "%s", o.out);
	char want[PATH_MAX + 64];
	snprintf(want, sizeof want, "    read %s by /usr/bin/cat (pid ", s->key);
	cr_expect(strstr(o.out, want), "the read:\n%s", o.out);
	snprintf(want, sizeof want, "    to allow: --allow-read %s\n", s->key);
	cr_expect(strstr(o.out, want), "its allow line:\n%s", o.out);
	cr_expect(strstr(o.out, "Launches (1):\n  /bin/sh (pid "), "the launch:\n%s", o.out);
	cr_expect(strstr(o.out, "applied, read isolation applied"), "its verdict:\n%s", o.out);
	cf_fx_assert_no_marker(&fx, &o);
	cf_fx_out_free(&o);
}

Test(explain, a_missing_file_or_no_file_is_refused)
{
	struct cf_fx_out o;
	char missing[PATH_MAX + 16];
	snprintf(missing, sizeof missing, "%s/none.jsonl", fx.root);
	cf_fx_run(&o, NULL, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), "explain", missing));
	cr_expect_eq(o.status, 125);
	cr_expect(strncmp(o.err, "credfence: explain: can not read ", 33) == 0, "%s", o.err);
	cf_fx_out_free(&o);
	cf_fx_run(&o, NULL, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), "explain"));
	cr_expect_eq(o.status, 125);
	cr_expect(strncmp(o.err, "credfence: explain: give one log file", 37) == 0, "%s", o.err);
	cf_fx_out_free(&o);
}

/* A write that write protection refused (issue 23) is grouped by its row, as
 * credfence check words it, with the lift that would allow it. */
Test(explain, write_protected_lines_are_grouped_by_row)
{
	char log[PATH_MAX + 16], home[PATH_MAX + 8];
	snprintf(log, sizeof log, "%s/log.jsonl", fx.root);
	snprintf(home, sizeof home, "HOME=%s", fx.home);
	struct cf_fx_out o;
	cf_fx_run(&o, fx.ws, (char *const[]){home, "PATH=/usr/bin:/bin", NULL}, NULL,
		  CF_ARGV("git", "init", "-q", "."));
	cr_assert_eq(o.status, 0, "git init: %s", o.err);
	cf_fx_out_free(&o);
	cf_fx_credfence(&o, &fx, "run", NULL,
			CF_ARGV("--log", log, "--", "/bin/sh", "-c",
				"git config user.name x; echo x > .git/hooks/pre-commit; "
				"echo x > .git/hooks/post-checkout; echo done"));
	cr_assert(strstr(o.out, "done"), "the run did not run: %s", o.err);
	cf_fx_out_free(&o);

	cf_fx_run(&o, NULL, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), "explain", log));
	cr_expect_eq(o.status, 0, "explain: %d %s", o.status, o.err);
	cr_expect(strstr(o.out, "Denials (3), by what denied them:\n"), "%s", o.out);
	cr_expect(strstr(o.out, "  runs unfenced later: git hooks (2)\n"), "%s", o.out);
	cr_expect(strstr(o.out, "  runs unfenced later: git config (core.fsmonitor, core.hooksPath, "
				"aliases) (1)\n"),
		  "%s", o.out);
	char want[PATH_MAX + 64];
	snprintf(want, sizeof want, "    write %s/.git/hooks/pre-commit by /usr/bin/dash (pid ", fx.ws);
	cr_expect(strstr(o.out, want), "the hook:\n%s", o.out);
	snprintf(want, sizeof want, "    write %s/.git/config by /usr/bin/git (pid ", fx.ws);
	cr_expect(strstr(o.out, want), "the config:\n%s", o.out);
	snprintf(want, sizeof want, "    to allow: --allow-write-protected %s/.git/hooks\n", fx.ws);
	cr_expect_eq(count(o.out, want), 1, "one allow line for the hooks:\n%s", o.out);
	snprintf(want, sizeof want, "    to allow: --allow-write-protected %s/.git/config\n", fx.ws);
	cr_expect_eq(count(o.out, want), 1, "and for the config:\n%s", o.out);
	cf_fx_assert_no_marker(&fx, &o);
	cf_fx_out_free(&o);
}
