/* common/err.h: a failure's kind and detail in one int (issue 34). */
#include <criterion/criterion.h>
#include <errno.h>

#include "err.h"

static const enum cf_err_kind kinds[] = {
	CF_ERR_TOOMANY,   CF_ERR_TTYFILTER,  CF_ERR_IPC,          CF_ERR_IPC_START,
	CF_ERR_IPC_PTRACE, CF_ERR_IPC_ENDED, CF_ERR_IPC_IDENTITY, CF_ERR_PIDFD,
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

Test(err, a_plain_errno_and_success_are_of_no_kind)
{
	for (int e = 1; e < 4096; e++) {
		cr_assert_eq(cf_err_kind(-e), CF_ERR_ERRNO, "-%d", e);
		cr_assert_eq(cf_err_detail(-e), e, "-%d", e);
	}
	cr_expect_eq(cf_err_kind(0), CF_ERR_ERRNO);
	cr_expect_eq(cf_err_kind(42), CF_ERR_ERRNO, "a count or a descriptor");
	cr_expect_eq(cf_err_detail(42), 0);
}

Test(err, every_kind_carries_its_detail_back_and_is_never_an_errno)
{
	for (size_t k = 0; k < N_KINDS; k++)
		for (int d = 0; d < 4096; d++) {
			int rc = CF_ERR(kinds[k], d);
			cr_assert_lt(rc, -4095, "kind %d detail %d: %d reads as a system call's errno",
				     (int)kinds[k], d, rc);
			cr_assert_eq(cf_err_kind(rc), kinds[k], "kind %d detail %d", (int)kinds[k], d);
			cr_assert_eq(cf_err_detail(rc), d, "kind %d detail %d", (int)kinds[k], d);
		}
}

Test(err, the_kinds_are_distinct)
{
	for (size_t a = 0; a < N_KINDS; a++)
		for (size_t b = a + 1; b < N_KINDS; b++)
			cr_expect_neq(CF_ERR(kinds[a], EPERM), CF_ERR(kinds[b], EPERM), "%zu and %zu", a, b);
}

Test(err, only_a_plain_errno_takes_a_kind)
{
	cr_expect_eq(cf_err_as(CF_ERR_IPC, -EPIPE), CF_ERR(CF_ERR_IPC, EPIPE));
	cr_expect_eq(cf_err_as(CF_ERR_IPC, 0), 0);
	cr_expect_eq(cf_err_as(CF_ERR_IPC, 7), 7);
	int ended = CF_ERR(CF_ERR_IPC_ENDED, 0);
	cr_expect_eq(cf_err_as(CF_ERR_IPC, ended), ended, "a kind already given stays");
	int start = CF_ERR(CF_ERR_IPC_START, ENOMEM);
	cr_expect_eq(cf_err_as(CF_ERR_IPC_START, -ENOMEM), start);
}
