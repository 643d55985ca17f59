/* What a prepared fence holds on macOS: the policy judged and built into a
 * Seatbelt profile (common/profile.c), ready to be applied with
 * enforce/darwin/seatbelt.c. The private half of enforce/fence.h: enforce/
 * and the tests include it, the CLI and the shim see struct cf_fence opaque.
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

#include "fence.h"
#include "policy.h"
#include "profile.h"

struct cf_fence {
	struct cf_policy pol;
	struct cf_profile pf;
	struct cf_expand_result res; /* .refusal is not used here */
	char *lists_json; /* "denied":[...],"writable":[...] for the log */
	bool ready;       /* the verdict is "applied" so far */
	bool inherited;   /* this process is sandboxed already by a sandbox that
			     denies every secret of the policy: nothing is added */
};

/* F's resources, F's memory zeroed (cf_fence_destroy frees F too). */
void cf_fence_free(struct cf_fence *f);

#endif
