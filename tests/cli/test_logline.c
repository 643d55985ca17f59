/* cli/logline.c: credfence's own JSON lines read back (credfence explain).
 * Real lines are read whole; anything else is refused without a crash, which
 * the fuzz cases check under ASan+UBSan (test_readers in build-asan). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "logline.h"

static struct cf_logline l;

static int parse(const char *s)
{
	return cf_logline_parse(&l, s, strlen(s));
}

Test(logline, reads_the_events_credfence_writes)
{
	cr_assert_eq(parse("{\"event\":\"sandbox_status\",\"pid\":12,\"program\":\"cat\","
			   "\"backend\":\"landlock\",\"abi\":7,\"verdict\":\"applied\","
			   "\"reason\":\"read isolation applied\",\"mode\":\"required\",\"rules\":40,"
			   "\"denied\":[\"/h/.ssh\",\"/h/.aws\"],\"writable\":[]}"), 0);
	cr_expect_str_eq(cf_logline_get(&l, "event"), "sandbox_status");
	cr_expect_str_eq(cf_logline_get(&l, "pid"), "12");
	cr_expect_str_eq(cf_logline_get(&l, "reason"), "read isolation applied");
	cr_expect_str_eq(cf_logline_get(&l, "denied"), "");
	cr_expect_null(cf_logline_get(&l, "nothing"));
	cr_assert_eq(parse("{\"event\":\"denied\",\"path\":\"/h/a\\\"b\\\\c\\u0001\\n\",\"x\":true,"
			   "\"y\":null,\"z\":-1.5e3}"), 0);
	cr_expect_str_eq(cf_logline_get(&l, "path"), "/h/a\"b\\c\001\n");
	cr_expect_str_eq(cf_logline_get(&l, "x"), "true");
	cr_expect_str_eq(cf_logline_get(&l, "z"), "-1.5e3");
	cr_expect_eq(parse("{}"), 0);
	cr_expect_eq(l.n, 0);
}

Test(logline, refuses_what_is_not_one_flat_object)
{
	static const char *const bad[] = {
		"", "garbage", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":1}}",
		"{\"a\":1} x", "[1]", "{\"a\":\"x}", "{\"a\":\"\\q\"}", "{\"a\":\"\\u12\"}",
		"{\"a\":tru}", "{\"a\":[1,}", "{\"a\":{\"b\"}}", "{a:1}", "{\"a\":\"\x01\"}",
		"{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		cr_expect_eq(parse(bad[i]), -1, "accepted: %s", bad[i]);
}

/* Random bytes, and real lines with bytes changed, cut or doubled: each
 * parse returns 0 or -1 and reads nothing past the length given. */
Test(logline, fuzz_random_and_mutated_lines)
{
	static const char *const seeds[] = {
		"{\"event\":\"sandbox_status\",\"pid\":12,\"program\":\"cat\",\"abi\":7,"
		"\"denied\":[\"/h/.ssh\"],\"writable\":[\"/w\"]}",
		"{\"event\":\"ipc_denied\",\"pid\":3,\"program\":\"/usr/bin/curl\",\"socket\":"
		"\"/run/x.sock\",\"reason\":\"credentials\"}",
		"{\"event\":\"denied\",\"pid\":7,\"program\":\"cat\",\"path\":\"/h/.ssh/id\","
		"\"access\":\"read\",\"row\":\"SSH keys\",\"allow\":\"--allow-read ~/.ssh/id\"}",
	};
	unsigned seed = 24;
	char buf[512];
	for (int round = 0; round < 200000; round++) {
		size_t n;
		if (round % 4 == 0) {
			n = (size_t)rand_r(&seed) % sizeof buf;
			for (size_t i = 0; i < n; i++)
				buf[i] = "{}[]\":,\\u0aZ -1e.tnf"[rand_r(&seed) % 20];
		} else {
			const char *s = seeds[rand_r(&seed) % 3];
			n = strlen(s);
			memcpy(buf, s, n);
			for (int k = rand_r(&seed) % 4; k >= 0; k--) {
				size_t at = (size_t)rand_r(&seed) % n;
				switch (rand_r(&seed) % 3) {
				case 0:
					buf[at] = (char)rand_r(&seed);
					break;
				case 1:
					n = at; /* cut */
					break;
				default:
					if (n + 1 < sizeof buf) { /* doubled */
						memmove(buf + at + 1, buf + at, n - at);
						n++;
					}
				}
				if (n == 0)
					break;
			}
		}
		/* A copy exactly N long, so ASan sees any read past it. */
		char *exact = malloc(n ? n : 1);
		cr_assert(exact);
		memcpy(exact, buf, n);
		int r = cf_logline_parse(&l, exact, n);
		cr_assert(r == 0 || r == -1);
		free(exact);
	}
}

/* Where json-c (issue 34) reads otherwise than the reader before it, on
 * lines credfence never writes (its numbers are pids and counts, its keys
 * distinct): a number that is not JSON's is refused where it was kept as
 * written, an integer is its value's text (-0 is 0, one beyond 64 bits is
 * clamped), and of a key given twice the last is kept, not the first. */
Test(logline, what_json_c_reads_otherwise)
{
	static const char *const refused[] = {
		"{\"a\":01}", "{\"a\":1e}", "{\"a\":-}", "{\"a\":1-2}", "{\"a\":1e5e5}",
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
		cr_expect_eq(parse(refused[i]), -1, "accepted: %s", refused[i]);
	cr_assert_eq(parse("{\"a\":-0,\"b\":99999999999999999999,\"c\":-0.0,\"d\":1E5}"), 0);
	cr_expect_str_eq(cf_logline_get(&l, "a"), "0");
	cr_expect_str_eq(cf_logline_get(&l, "b"), "18446744073709551615");
	cr_expect_str_eq(cf_logline_get(&l, "c"), "-0.0");
	cr_expect_str_eq(cf_logline_get(&l, "d"), "1E5");
	cr_assert_eq(parse("{\"event\":\"denied\",\"event\":\"sandbox_status\"}"), 0);
	cr_expect_str_eq(cf_logline_get(&l, "event"), "sandbox_status");
	cr_expect_eq(l.n, 1);
}
