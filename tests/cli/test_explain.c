/* credfence explain LOGFILE (issue 24): a log made by a fenced run, read back
 * with its denials grouped and the line that would allow each; garbage lines
 * are counted, not fatal. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Lines that are not quite credfence's, read back as before issue 34 (the
 * log's reader became json-c there): what is read, what is skipped and
 * counted, never fatal. No fence runs here, so no Landlock is needed. */
static struct cf_fx lfx;

static void lines_setup(void)
{
	cf_fx_setup(&lfx);
}

static void lines_teardown(void)
{
	cf_fx_teardown(&lfx);
}

TestSuite(explain_lines, .init = lines_setup, .fini = lines_teardown,
	  .timeout = 60 * CF_TIMEOUT_SCALE);

/* "credfence explain" over a log of LEN bytes, into O. */
static void explain_bytes(struct cf_fx_out *o, const char *text, size_t len)
{
	char log[PATH_MAX + 16];
	snprintf(log, sizeof log, "%s/log.jsonl", lfx.root);
	FILE *f = fopen(log, "w");
	cr_assert(f);
	cr_assert_eq(fwrite(text, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
	cf_fx_run(o, NULL, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), "explain", log));
}

static void explain_text(struct cf_fx_out *o, const char *text)
{
	explain_bytes(o, text, strlen(text));
}

static void expect_counts(const struct cf_fx_out *o, size_t events, size_t skipped)
{
	char want[96];
	cr_expect_eq(o->status, 0, "explain: %d %s", o->status, o->err);
	if (skipped)
		snprintf(want, sizeof want, ": %zu events, %zu lines skipped (not credfence JSON lines)\n",
			 events, skipped);
	else
		snprintf(want, sizeof want, ": %zu events\n", events);
	cr_expect(strstr(o->out, want), "want \"%s\" in:\n%.2000s", want, o->out);
}

#define DENIED_HEAD "{\"event\":\"denied\",\"pid\":7,\"program\":\"cat\",\"access\":\"read\",\"path\":"

/* Escapes decode as credfence writes them; \u0000 and anything above ASCII
 * escaped read as '?' (a name, never judged on), raw UTF-8 stays as it is;
 * what a terminal would take as a command is shown as \xNN. */
Test(explain_lines, escaped_characters)
{
	struct cf_fx_out o;
	explain_text(&o, DENIED_HEAD "\"/h/a\\\"b\\\\c\\/d\\u0001\\u001f\\t\\n\\r\\b\\f.\"}\n"
		     DENIED_HEAD "\"/h/\\u0000\\u00e9\\u00E9\\ud83d\\ude00\\u0041\\u007f\"}\r\n"
		     DENIED_HEAD "\"/h/\xc3\xa9\xff\"}\n"
		     "{\"\\u0065vent\":\"den\\u0069ed\",\"path\":\"/h/k\"}\n");
	expect_counts(&o, 4, 0);
	cr_expect(strstr(o.out, "    read /h/a\"b\\c/d\\x01\\x1f\\x09\\x0a\\x0d\\x08\\x0c. by cat (pid 7)\n"),
		  "%s", o.out);
	cr_expect(strstr(o.out, "    read /h/?????A\\x7f by cat (pid 7)\n"), "%s", o.out);
	cr_expect(strstr(o.out, "    read /h/\xc3\xa9\\xff by cat (pid 7)\n"), "%s", o.out);
	cr_expect(strstr(o.out, "    ? /h/k by ? (pid ?)\n"), "%s", o.out);
	cf_fx_out_free(&o);
}

/* A fenced program names the paths and programs the log holds: a file name
 * made of escape sequences (the terminal's title, its clipboard, a cleared
 * screen; C1's CSI in UTF-8; a bidirectional override) reaches the user's
 * terminal as text, never as the sequence. */
Test(explain_lines, escape_sequences_never_reach_the_terminal)
{
	struct cf_fx_out o;
	explain_text(&o, "{\"event\":\"denied\",\"pid\":7,\"program\":\"c\\u001b[2Jat\",\"access\":\"read\","
		     "\"path\":\"/h/\\u001b]52;c;cHduZWQ=\\u0007 \xc2\x9b" "6n \xe2\x80\xae" "exe.txt\"}\n"
		     "{\"event\":\"sandbox_status\",\"pid\":8,\"program\":\"\\u001bP+q\\u001b\\\\\","
		     "\"verdict\":\"full\",\"reason\":\"\\u009b31m\"}\n"
		     "{\"event\":\"supervisor_ended\",\"pid\":9,\"program\":\"x\",\"reason\":\"\\r\\u001b[1A\"}\n");
	expect_counts(&o, 3, 0);
	for (const char *p = o.out; *p; p++)
		cr_expect(((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f) || *p == '\n',
			  "a control byte 0x%02x at %zu of:\n%s", (unsigned char)*p, (size_t)(p - o.out), o.out);
	cr_expect(strstr(o.out, "read /h/\\x1b]52;c;cHduZWQ=\\x07 \\xc2\\x9b6n \\xe2\\x80\\xaeexe.txt by "
				"c\\x1b[2Jat (pid 7)\n"), "%s", o.out);
	cr_expect(strstr(o.out, "  \\x1bP+q\\x1b\\ (pid 8): full, ?31m\n"), "%s", o.out);
	cr_expect(strstr(o.out, "seen by x, pid 9): \\x0d\\x1b[1A\n"), "%s", o.out);
	cf_fx_out_free(&o);
}

/* Numbers and literals are read as written; arrays and objects are skipped
 * whole, 16 levels deep at most. */
Test(explain_lines, values_and_nesting)
{
	struct cf_fx_out o;
	explain_text(&o, "{\"event\":\"sandbox_status\",\"pid\":-1.5e3,\"program\":true,"
			 "\"verdict\":null,\"reason\":false,\"denied\":[\"/a\",{\"b\":[1,2]}],"
			 "\"x\":{},\"y\":[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}\n"
			 " { \"event\" : \"sandbox_status\" , \"pid\" : 12 }\t \n"
			 "{\"event\":\"sandbox_status\",\"y\":[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}\n");
	expect_counts(&o, 2, 1);
	cr_expect(strstr(o.out, "Launches (2):\n  true (pid -1.5e3): null, false\n"
				"  ? (pid 12): ?, ?\n"),
		  "%s", o.out);
	cf_fx_out_free(&o);
}

/* Lines cut short, with text after them, or beyond JSON are skipped and
 * counted: credfence writes none of them. */
Test(explain_lines, malformed_and_truncated_lines_are_skipped)
{
	static const char bad[] =
		DENIED_HEAD "\"/h/cut\"\n"                        /* truncated */
		DENIED_HEAD "\n"                                  /* truncated after a colon */
		DENIED_HEAD "\"/h/x\"} trailing\n"                /* text after it */
		DENIED_HEAD "\"/h/x\"}{}\n"                       /* two objects */
		DENIED_HEAD "\"/h/\001\"}\n"                      /* a raw control byte */
		DENIED_HEAD "\"/h/\ttab\"}\n"                     /* a raw tab in a string */
		DENIED_HEAD "\"/h/\\q\"}\n"                       /* an unknown escape */
		DENIED_HEAD "\"/h/\\u12\"}\n"                     /* a short \u */
		"{'event':\"denied\",\"path\":\"/h/x\"}\n"        /* a single-quoted key */
		"{\"event\":'denied',\"path\":\"/h/x\"}\n"        /* a single-quoted value */
		"{event:\"denied\",\"path\":\"/h/x\"}\n"          /* a bare key */
		DENIED_HEAD "\"/h/x\",\"n\":NaN}\n"             /* NaN */
		DENIED_HEAD "\"/h/x\",\"n\":-Infinity}\n"       /* Infinity */
		DENIED_HEAD "\"/h/x\",\"n\":True}\n"            /* a literal's case */
		DENIED_HEAD "\"/h/x\",\"n\":+1}\n"              /* a plus */
		DENIED_HEAD "\"/h/x\",}\n"                        /* a trailing comma */
		DENIED_HEAD "\"/h/x\",\"l\":[1,]}\n"              /* one in an array */
		DENIED_HEAD "\"/h/x\" /* c */}\n"                 /* a comment */
		"\f" DENIED_HEAD "\"/h/x\"}\n"                    /* a form feed as a blank */
		DENIED_HEAD "\"/h/x\"}\v\n"                       /* a vertical tab */
		"[" DENIED_HEAD "\"/h/x\"}]\n"                    /* not an object */
		"\"denied\"\n"
		"   \n"                                           /* blanks only */
		"not json\n"
		"\x01\x02\xff\n";
	static const char nul[] = DENIED_HEAD "\"/h/x\"}\0\n" DENIED_HEAD "\"/h/\0\"}\n";
	size_t n = sizeof bad - 1;
	char *text = malloc(n + sizeof nul);
	cr_assert(text);
	memcpy(text, bad, n);
	memcpy(text + n, nul, sizeof nul - 1);
	struct cf_fx_out o;
	explain_bytes(&o, text, n + sizeof nul - 1);
	expect_counts(&o, 0, 27);
	cr_expect(strstr(o.out, "Denials (0), by what denied them:\n  none\n"), "%s", o.out);
	cf_fx_out_free(&o);
	free(text);
}

/* A line of 32 keys and 16 KiB of text at most (the keys and the values
 * that are not arrays or objects, each with its end) is read; a longer one
 * is not credfence's and is skipped. Arrays count for nothing: a status
 * line's long list of denied paths is read. */
Test(explain_lines, long_lines)
{
	/* "event","denied","pid","7","program","cat","access","read","path":
	 * 6+7+4+2+8+4+7+5+5 = 48 bytes before the path's own. */
	size_t fits = 16383 - 48 - 1, cap = 300000;
	char *text = malloc(cap), *p = text;
	cr_assert(text);
	for (size_t len = fits; len <= fits + 1; len++) {
		p += sprintf(p, "%s\"/", DENIED_HEAD);
		memset(p, 'a', len - 1);
		p += len - 1;
		p += sprintf(p, "\"}\n");
	}
	for (int keys = 32; keys <= 33; keys++) {
		p += sprintf(p, "{\"event\":\"sandbox_status\",\"program\":\"k%d\"", keys);
		for (int k = 2; k < keys; k++)
			p += sprintf(p, ",\"k%d\":%d", k, k);
		p += sprintf(p, "}\n");
	}
	p += sprintf(p, "{\"event\":\"sandbox_status\",\"program\":\"list\",\"denied\":[");
	for (int k = 0; k < 3000; k++)
		p += sprintf(p, "%s\"/home/u/.config/some/secret/%05d\"", k ? "," : "", k);
	p += sprintf(p, "]}\n");
	cr_assert_lt((size_t)(p - text), cap);
	struct cf_fx_out o;
	explain_bytes(&o, text, (size_t)(p - text));
	expect_counts(&o, 3, 2);
	cr_expect(strstr(o.out, "Denials (1), by what denied them:\n"), "%.300s", o.out);
	cr_expect(strstr(o.out, "Launches (2):\n  k32 (pid ?): ?, ?\n  list (pid ?): ?, ?\n"), "%s",
		  o.out);
	cf_fx_out_free(&o);
	free(text);
}

/* What is not a readable file is a credfence: error, as before. */
Test(explain_lines, a_directory_is_a_read_error)
{
	struct cf_fx_out o;
	cf_fx_run(&o, NULL, NULL, NULL, CF_ARGV((char *)cf_fx_bin(), "explain", lfx.root));
	cr_expect_eq(o.status, 125);
	cr_expect(strncmp(o.err, "credfence: explain: a read error while reading ", 47) == 0, "%s",
		  o.err);
	cf_fx_out_free(&o);
}
