/* What a prepared fence holds on macOS: the policy judged and built into a
 * Seatbelt profile (common/profile.c), ready to be applied with
 * enforce/darwin/seatbelt.c. Included by enforce/fence.h, whose calls use it;
 * not to be included by itself.
 *
 * Unlike a Landlock ruleset, a profile names paths, not open directories, and
 * is compiled by the kernel when it is applied: nothing is listed ahead of
 * time, and applying allocates. So the part that runs in a child of the
 * harness, cf_fence_enter(), is for fork children only (the shim turns vfork
 * into fork). The sandbox binds the whole process; exec keeps it. */
#ifndef CF_FENCE_STATE_H
#define CF_FENCE_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "profile.h"

/* What entering a fence gave. Named as Linux's (the expansion's result) so
 * that cf_fence_enter and cf_fence_words have one signature on both systems. */
struct cf_expand_result {
	size_t rules;         /* rules in the profile, for status and the log */
	const char *refusal;  /* cf_fence_enter: the system's words for the
				 refusal (cf_sb_apply) in the caller's BUF, or NULL */
};

struct cf_fence {
	struct cf_policy pol;
	struct cf_profile pf;
	struct cf_expand_result res; /* .refusal is not used here */
	char *lists_json; /* "denied":[...],"writable":[...] for the log */
	bool ready;       /* the verdict is "applied" so far */
	bool inherited;   /* this process is sandboxed already by a sandbox that
			     denies every secret of the policy: nothing is added */
};

#endif
