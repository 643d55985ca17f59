/* common/nolibc.h: the string helpers safe between fork and exec. */
#include <criterion/criterion.h>
#include <string.h>

#include "nolibc.h"

Test(nolibc, strlen_streq_and_prefix_agree_with_the_c_library)
{
	const char *v[] = {"", "a", "ab", "abc", "/usr/bin", "a\xff"};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		cr_expect_eq(cf_nl_strlen(v[i]), strlen(v[i]), "%s", v[i]);
		for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
			cr_expect_eq(cf_nl_streq(v[i], v[k]), strcmp(v[i], v[k]) == 0, "%s %s", v[i],
				     v[k]);
			cr_expect_eq(cf_nl_has_prefix(v[i], v[k]), strncmp(v[i], v[k], strlen(v[k])) == 0,
				     "%s %s", v[i], v[k]);
		}
	}
}

/* Each entry joined in order, an empty one (leading, inner, trailing) the
 * current directory, one too long for the buffer skipped but still passed. */
Test(nolibc, path_next_joins_each_entry_in_order)
{
	char buf[16];
	const char *p = ":/bin::/a/very/long/dir:/usr/bin:";
	const char *want[] = {"git", "/bin/git", "git", NULL, "/usr/bin/git", "git"};
	size_t n = 0;
	while (p) {
		cr_assert_lt(n, sizeof want / sizeof *want, "more entries than the value has");
		bool fit = cf_nl_path_next(&p, "git", 3, buf, sizeof buf);
		cr_expect_eq(fit, want[n] != NULL, "entry %zu", n);
		if (fit && want[n])
			cr_expect_str_eq(buf, want[n], "entry %zu", n);
		n++;
	}
	cr_expect_eq(n, sizeof want / sizeof *want, "%zu entries", n);
	/* The exact fit: "/bin" "/" "git" and the NUL are 9 bytes. */
	p = "/bin";
	cr_expect(cf_nl_path_next(&p, "git", 3, buf, 9) && strcmp(buf, "/bin/git") == 0);
	cr_expect_null(p);
	p = "/bin";
	cr_expect_not(cf_nl_path_next(&p, "git", 3, buf, 8), "one byte short still fit");
}
