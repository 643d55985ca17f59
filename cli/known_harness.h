/* credfence harness for a harness of the table common/harness_kinds.c: what
 * it needs, applied before its fence is built, and the refusal of a
 * configuration that would start its commands unfenced. */
#ifndef CF_KNOWN_HARNESS_H
#define CF_KNOWN_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "harness_kinds.h"

/* PROG as execvp would find it, into OUT; false when it would not be found. */
bool cf_cli_which(const char *prog, char *out, size_t n);

/* Before the fence: K's state directories join --harness-state, made (0700)
 * where missing once the policy has judged them; its native program joins
 * --harness-program. 0, or CF_EXIT_FAIL after a message (nothing made). */
int cf_known_prepare(struct cf_cli *c, const struct cf_harness_kind *k, const char *cwd);

/* Once the shim is known: for a harness whose shell's environment its own
 * configuration decides (Codex), refuse one that would not keep the shim and
 * the CREDFENCE_* variables, naming the line to add or change; accept its
 * static program otherwise. 0, or CF_EXIT_FAIL after a message. */
int cf_known_judge_shell(struct cf_cli *c, const struct cf_harness_kind *k,
			 const struct cf_policy *pol, const char *shim, const char *cwd);

#endif
