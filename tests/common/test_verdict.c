/* The verdict as data (common/verdict.h): the one function that words it,
 * a policy's own copies of its strings, and the CLI references' Verdicts
 * tables held to the words table row by row. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "verdict.h"


static const char *words(const struct cf_why *w)
{
	static char line[CF_REASON_MAX];
	cf_why_words(w, line, sizeof line);
	return line;
}

Test(verdict, a_row_fills_its_slots_in_order)
{
	struct cf_why w = {.id = CF_WHY_OVERLAP, .arg = {"/w", "/h/.ssh"}};
	cr_expect_str_eq(words(&w), CF_STATUS_NOT_EFFECTIVE "writable location /w overlaps secret /h/.ssh");
	w = (struct cf_why){.id = CF_WHY_TOO_MANY, .n = 27, .limit = 10, .arg = {"/"}};
	cr_expect_str_eq(words(&w), CF_STATUS_NOT_EFFECTIVE "too many entries under / (27 > 10)");
	w = (struct cf_why){.id = CF_WHY_STATE_TRUSTED,
			    .arg = {"/h/.claude", "holds", "/h/.claude/settings.json", "Claude Code",
				    "settings and hooks"}};
	cr_expect_str_eq(words(&w), CF_STATUS_NOT_EFFECTIVE
			 "--harness-state /h/.claude holds /h/.claude/settings.json, which Claude "
			 "Code trusts (settings and hooks)");
	w = (struct cf_why){.id = CF_WHY_APPLIED};
	cr_expect_str_eq(words(&w), "read isolation applied");
	w = (struct cf_why){.id = CF_WHY_INHERITED};
	cr_expect_str_eq(words(&w), "read isolation applied (inherited: this process is fenced already)");
}

Test(verdict, an_errno_gets_the_rows_fixed_words_else_the_systems)
{
	struct cf_why w = {.id = CF_WHY_LANDLOCK, .err = EOPNOTSUPP};
	cr_expect_str_eq(words(&w), CF_STATUS_NOT_EFFECTIVE
			 "landlock unavailable (disabled at boot: EOPNOTSUPP)");
	w.err = EINVAL;
	cr_expect_str_eq(words(&w), CF_STATUS_NOT_EFFECTIVE "landlock unavailable (Invalid argument)");
	w.err = 4000;
	cr_expect_str_eq(words(&w), CF_STATUS_NOT_EFFECTIVE "landlock unavailable (error 4000)");
	/* EPERM has words of its own in each row that knows it. */
	w = (struct cf_why){.id = CF_WHY_TTYFILTER, .err = EPERM};
	cr_expect(strstr(words(&w), "(refused by an outer seccomp or container policy: EPERM)"), "%s",
		  words(&w));
	w = (struct cf_why){.id = CF_WHY_IPC_NOTIF, .err = EPERM};
	cr_expect(strstr(words(&w), "(Operation not permitted)"), "%s", words(&w));
	w = (struct cf_why){.id = CF_WHY_LANDLOCK_ABI, .n = 0, .limit = 1};
	cr_expect_str_eq(words(&w), CF_STATUS_NOT_EFFECTIVE
			 "landlock unavailable (kernel ABI too old: 0, need 1)");
}

Test(verdict, a_status_line_stays_one_line)
{
	struct cf_why w = {.id = CF_WHY_SEATBELT_REFUSED, .arg = {"line one\nline two\r"}};
	const char *s = words(&w);
	cr_expect(!strchr(s, '\n') && !strchr(s, '\r'), "%s", s);
	cr_expect(strstr(s, "(line one line two )"), "%s", s);
	/* A path with a line break can not forge a second status line either. */
	w = (struct cf_why){.id = CF_WHY_NESTED, .arg = {"/h/x\nread isolation applied"}};
	cr_expect(!strchr(words(&w), '\n'), "%s", words(&w));
}

Test(verdict, a_missing_slot_reads_as_a_question_mark)
{
	struct cf_why w = {.id = CF_WHY_WRITABLE_LINK, .arg = {"/w", "/w/l"}};
	cr_expect(strstr(words(&w), "lies in writable location ?"), "%s", words(&w));
}

Test(verdict, the_line_is_cut_to_the_buffer_and_ended)
{
	char small[24];
	memset(small, 'x', sizeof small);
	struct cf_why w = {.id = CF_WHY_OVERLAP, .arg = {"/a/very/long/path", "/h/.ssh"}};
	cf_why_words(&w, small, sizeof small);
	cr_expect_eq(strlen(small), sizeof small - 1);
	cr_expect_eq(strncmp(small, CF_STATUS_NOT_EFFECTIVE, sizeof small - 1), 0, "%s", small);
	char one[1] = {'x'};
	cf_why_words(&w, one, sizeof one);
	cr_expect_eq(one[0], '\0');
}

Test(verdict, every_row_words_and_knows_what_it_is_about)
{
	for (int id = 0; id < CF_WHY_COUNT; id++) {
		struct cf_why w = {.id = (enum cf_why_id)id, .err = EINVAL, .n = 3, .limit = 4,
				   .arg = {"/a", "b", "/c", "d", "e"}};
		const char *s = words(&w);
		bool applied = cf_why_verdict(w.id) == CF_VERDICT_APPLIED;
		cr_expect(applied == (id == CF_WHY_APPLIED || id == CF_WHY_INHERITED), "row %d", id);
		cr_expect(strncmp(s, applied ? CF_STATUS_APPLIED : CF_STATUS_NOT_EFFECTIVE,
				  strlen(applied ? CF_STATUS_APPLIED : CF_STATUS_NOT_EFFECTIVE)) == 0,
			  "row %d: %s", id, s);
		cr_expect(!strchr(s, '{') && !strchr(s, '}'), "row %d has a slot left: %s", id, s);
	}
	cr_expect_null(cf_why_template(CF_WHY_COUNT));
}

/* ---- the policy keeps its own copies ---- */

Test(verdict, a_policy_keeps_copies_of_the_strings)
{
	static struct cf_policy p;
	char secret[] = "/h/.ssh", line[CF_REASON_MAX];
	cf_policy_verdict(&p, &(struct cf_why){.id = CF_WHY_OVERLAP, .arg = {"/w", secret}});
	secret[1] = 'X';
	cf_policy_reason(&p, line, sizeof line);
	cr_expect_str_eq(line, CF_STATUS_NOT_EFFECTIVE "writable location /w overlaps secret /h/.ssh");
	cr_expect_eq(p.verdict, CF_VERDICT_OVERLAP);
	/* Set again from its own strings (a fence that refuses with the verdict it has). */
	struct cf_why again = p.why;
	again.id = CF_WHY_WRITABLE_LINK;
	again.arg[2] = "/v";
	cf_policy_verdict(&p, &again);
	cf_policy_reason(&p, line, sizeof line);
	cr_expect_str_eq(line, CF_STATUS_NOT_EFFECTIVE "writable location /w is reached through "
			 "symlink /h/.ssh, which lies in writable location /v");
	cr_expect_eq(p.verdict, CF_VERDICT_WRITABLE_LINK);
}

Test(verdict, strings_past_the_policys_room_are_left_out)
{
	static struct cf_policy p;
	static char big[sizeof p.why_text + 16];
	char line[CF_REASON_MAX];
	memset(big, 'a', sizeof big - 1);
	big[0] = '/';
	cf_policy_verdict(&p, &(struct cf_why){.id = CF_WHY_OVERLAP, .arg = {big, "/h/.ssh"}});
	cf_policy_reason(&p, line, sizeof line);
	cr_expect(strstr(line, " overlaps secret ?"), "the second string had no room left");
	cr_expect_eq(strlen(p.why.arg[0]), sizeof p.why_text - 1);
}

/* ---- the CLI references ---- */

/* The section of the document at REL from HEADING to the next "## " (NULL:
 * the whole document); the caller frees it. */
static char *section(const char *rel, const char *heading)
{
	char path[PATH_MAX];
	const char *root = getenv("CREDFENCE_SOURCE"); /* tests/meson.build */
	cr_assert(root && *root, "CREDFENCE_SOURCE names the checkout; run the tests with meson test");
	snprintf(path, sizeof path, "%s/%s", root, rel);
	FILE *f = fopen(path, "r");
	cr_assert(f, "can not open %s", path);
	static char all[1 << 20];
	size_t n = fread(all, 1, sizeof all - 1, f);
	fclose(f);
	all[n] = '\0';
	if (!heading)
		return strdup(all);
	char *at = strstr(all, heading);
	cr_assert(at, "%s has no %s section", rel, heading);
	char *end = strstr(at + strlen(heading), "\n## ");
	return strndup(at, end ? (size_t)(end - at) : strlen(at));
}

/* A template as the reference writes it: the braces taken off, {E} as "...". */
static void doc_form(const char *tmpl, char *out, size_t cap)
{
	size_t len = 0;
	for (const char *t = tmpl; *t && len + 4 < cap; t++) {
		if (strncmp(t, "{E}", 3) == 0) {
			memcpy(out + len, "...", 3);
			len += 3;
			t += 2;
		} else if (*t != '{' && *t != '}') {
			out[len++] = *t;
		}
	}
	out[len] = '\0';
}

static void each_row_is_in(const char *rel, const char *heading)
{
	char *sec = section(rel, heading);
	char want[1024];
	int missing = 0;
	for (int id = 0; cf_why_template((enum cf_why_id)id); id++) {
		if (id == CF_WHY_SEATBELT_MISSING || id == CF_WHY_SEATBELT_REFUSED ||
		    id == CF_WHY_SEATBELT_PROFILE || id == CF_WHY_CHILD_NOMEM)
			continue; /* macOS's rows: docs/macos.md (below) */
		doc_form(cf_why_template((enum cf_why_id)id), want, sizeof want);
		if (!strstr(sec, want)) {
			cr_log_error("%s: no row for \"%s\"", rel, want);
			missing++;
		}
		for (size_t i = 0; cf_why_fixed_errno((enum cf_why_id)id, i); i++)
			if (!strstr(sec, cf_why_fixed_errno((enum cf_why_id)id, i))) {
				cr_log_error("%s: no words \"%s\"", rel,
					     cf_why_fixed_errno((enum cf_why_id)id, i));
				missing++;
			}
	}
	free(sec);
	cr_expect_eq(missing, 0, "%s: %d rows of common/verdict.c are not in its %s table", rel,
		     missing, heading);
}

Test(verdict, the_reference_has_every_row)
{
	each_row_is_in("docs/cli-reference.md", "## Verdicts");
}

Test(verdict, the_japanese_reference_has_every_row)
{
	each_row_is_in("docs/cli-reference.ja.md", "## 判定");
}

Test(verdict, the_macos_notes_have_the_seatbelt_rows)
{
	char *doc = section("docs/macos.md", NULL);
	char want[1024];
	const enum cf_why_id mac[] = {CF_WHY_SEATBELT_MISSING, CF_WHY_SEATBELT_REFUSED,
				      CF_WHY_SEATBELT_PROFILE, CF_WHY_CHILD_NOMEM};
	for (size_t i = 0; i < sizeof mac / sizeof *mac; i++) {
		doc_form(cf_why_template(mac[i]), want, sizeof want);
		cr_expect(strstr(doc, want), "docs/macos.md: no \"%s\"", want);
	}
	free(doc);
}
