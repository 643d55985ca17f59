/* What a prepared fence holds on Linux: the policy, its plan (the expansion,
 * common/linux/expand.h), the Landlock ruleset built from it and the IPC
 * fence of its supervisor. The private half of enforce/fence.h (as minijail's
 * libminijail-private.h): enforce/ and the tests include it, the CLI and the
 * shim see struct cf_fence opaque (tests/scripts/door.sh). */
#ifndef CF_FENCE_STATE_H
#define CF_FENCE_STATE_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "expand.h"
#include "fence.h"
#include "mountns/shared_ns.h"
#include "mountns/tree_ns.h"
#include "policy.h"
#include "notify/supervisor.h"

/* A lookup stamp its ancestor's stamp covers (not taken). */
#define CF_STAMP_SKIP 2

/* PATH's stamp (expand.h) into ST, with raw system calls: no allocation,
 * callable between fork and exec. A fence is current while these match
 * the stamps cf_expand took when it was built (cf_fence_current). */
void cf_stamp_path(const char *path, struct cf_stamp *st);
int cf_stamp_equal(const struct cf_stamp *a, const struct cf_stamp *b);

/* The harness's watch over the stamped paths (fence_watch.c arms it once a
 * generation; fence.c asks it at each launch). */
struct cf_fence_watch {
	int ino, twin;   /* the inotify instance, twice: kcmp tells ours from a stand-in */
	int mounts;      /* /proc/self/mountinfo: POLLPRI when the mount table changed */
	int sup;         /* the supervisor's pidfd, or -1 */
	struct stat ino_st, mounts_st, sup_st;
	pid_t owner;     /* the process that set it */
	bool changed;    /* sticky: from then on, the stats */
	size_t n_stat;   /* stamped paths the watch does not cover */
	size_t stat_at[]; /* theirs: < n_anc an ancestor, else n_anc + a lookup */
};

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

/* F is not ready, for the failure RC of building, entering or starting it
 * (RES: the expansion's, or NULL): the verdict says why. Normal context. */
void cf_fence_refuse_rc(struct cf_fence *f, int rc, const struct cf_expand_result *res);

/* FD is the file WAS was taken of (device and inode). Normal context. */
bool cf_fence_same_file(int fd, const struct stat *was);

/* The I-th stamped path of F (ancestors first, then the lookups) and its
 * stamp in *ST, or NULL: a lookup its ancestor's stamp covers. */
const char *cf_fence_stamped_at(const struct cf_fence *f, size_t i, const struct cf_stamp **st);

#endif
