/* What a prepared fence holds on Linux: the policy, its plan (the expansion,
 * common/linux/expand.h), the Landlock ruleset built from it and the IPC
 * fence of its supervisor. The private half of enforce/fence.h (as minijail's
 * libminijail-private.h): enforce/ and the tests include it, the CLI and the
 * shim see struct cf_fence opaque (tests/scripts/door.sh). */
#ifndef CF_FENCE_STATE_H
#define CF_FENCE_STATE_H

#include <stdbool.h>

#include "expand.h"
#include "fence.h"
#include "mountns/shared_ns.h"
#include "mountns/tree_ns.h"
#include "policy.h"
#include "notify/supervisor.h"

/* A lookup stamp its ancestor's stamp covers (not taken). */
#define CF_STAMP_SKIP 2

struct cf_fence_watch;

struct cf_fence {
	struct cf_policy pol;
	struct cf_plan plan;
	int abi;                   /* > 0, or -errno of the ABI query */
	int ruleset;               /* prepared ruleset fd, or -1 */
	struct cf_expand_result res;
	struct cf_stamp *stamps;   /* one per ancestor, as read when built */
	struct cf_stamp *lookup_stamps; /* one per directory canonicalization looked in */
	bool racy;                 /* a stamped directory changed within the last
				      second: its mtime may not show the next change */
	struct cf_fence_watch *watch; /* the stamped directories watched, or NULL
					 (cf_fence_watch) */
	bool watch_tried;          /* cf_fence_watch was called: not again */
	char *lists_json;          /* "denied":[...],"writable":[...] for the log */
	struct cf_ipc ipc;         /* the IPC fence: its supervisor and this fence's lists */
	struct cf_tree_ns ns;    /* the mount namespace of the fenced tree, when planned
				      (cf_fence_protect_prepare) */
	struct cf_shared_ns join; /* a relaunched harness child: the namespace the
				       harness's guard made (cf_fence_protect_join) */
	bool joining;              /* JOIN holds its descriptors */
	bool ready;                /* the verdict is "applied" so far */
	bool inherited;            /* this process is fenced already: no new layer */
};

/* F's resources (its ruleset, lists, supervisor's state, namespace), F's
 * memory left zeroed and its ruleset -1: for a fence in storage of the
 * caller's (cf_fence_destroy frees one of cf_fence_new). */
void cf_fence_free(struct cf_fence *f);

#endif
