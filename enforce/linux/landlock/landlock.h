/* The Landlock backend: ABI probe, ruleset from a plan, restrict.
 * Two parts: what the parent calls, in normal context (it may fork or
 * allocate), and what a child may call between fork and exec (raw system
 * calls and the stack only; -errno, errno never touched). */
#ifndef CF_LANDLOCK_H
#define CF_LANDLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "expand.h"
#include "verdict.h"

#define CF_LANDLOCK_MIN_ABI 1

/* ---- In the parent ---- */

/* Whether restricting would work here, found in a forked child on a ruleset
 * that handles only write rights, so that neither this process nor its later
 * exec is restricted. 0 or -errno. Not for use after fork. */
int cf_ll_probe(void);

/* ---- In the child too: raw system calls and the stack only ---- */

/* The running kernel's ABI (> 0), or -errno (ENOSYS, EOPNOTSUPP, EPERM). In a
 * test build (-Dtest_abi_switch=true) CF_TEST_LANDLOCK_ABI=N caps it at N
 * (read once, at load). One syscall. */
int cf_ll_abi(void);

/* Every filesystem right ABI knows. */
uint64_t cf_ll_handled(int abi);

/* Rights for one rule, masked to what HANDLED has and to file rights for files. */
uint64_t cf_ll_rights(enum cf_rule_kind kind, int is_dir, uint64_t handled);

/* A ruleset for PLAN: returns its fd (close-on-exec) or -errno / CF_ERR_TOOMANY (err.h).
 * BUF is scratch for getdents64. RES and STAMPS as for cf_expand(). */
int cf_ll_build(const struct cf_plan *pl, int abi, char *buf, size_t bufsz,
		struct cf_expand_result *res, struct cf_stamp *stamps);

/* no_new_privs, the terminal filter (ttyfilter.h), then landlock_restrict_self()
 * on the calling thread. A filter that can not be installed fails the whole
 * restrict: CF_ERR(CF_ERR_TTYFILTER, errno). */
int cf_ll_restrict(int ruleset_fd);
/* The same, calling BETWEEN(CTX) after the terminal filter and before the
 * Landlock layer (the IPC fence, supervisor.h); its nonzero result is returned. */
int cf_ll_restrict_with(int ruleset_fd, int (*between)(const void *), const void *ctx);
/* landlock_restrict_self() alone, for a thread whose filters are in place. */
int cf_ll_restrict_self(int ruleset_fd);

/* The kernel's answer to "is this thread already fenced": "/" is an ancestor
 * of every secret, so a fenced thread can not list it. One syscall. */
int cf_ll_fenced(void);

/* Whether FD is a Landlock ruleset (its /proc/self/fd link names one). */
bool cf_ll_is_ruleset(int fd);

/* A failure ERR of this backend (an -errno, or a kind of err.h: the
 * terminal filter's, the IPC fence's; 0 with ABI below CF_LANDLOCK_MIN_ABI:
 * too old) as a verdict. */
void cf_ll_verdict(int err, int abi, struct cf_why *w);

/* Its status line into OUT: cf_ll_verdict, then cf_why_words. For the
 * tests and the probes' messages. */
void cf_ll_reason(int err, int abi, char *out, size_t outsz);

#endif
