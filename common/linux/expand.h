/* The deny list turned into an allow list.
 *
 * A plan is prepared from a policy in normal context (it allocates). The
 * expansion itself, cf_expand(), runs between fork and exec: raw getdents64 into
 * a caller buffer, openat2(O_PATH, RESOLVE_NO_SYMLINKS), one callback per rule,
 * no allocation, no stdio, no errno.
 *
 * Every path in a plan is canonical. A symlink met on the way to one means the
 * tree changed after the policy was resolved (a fenced command may swap a
 * directory it can write for a symlink): cf_expand() then fails with -ELOOP
 * rather than put a rule on whatever the symlink points at.
 *
 * A plan borrows from the policy it was prepared from: the names it skips and
 * widens (struct cf_ancestor's skip and wide) and its own writable paths
 * point into that policy's secrets (denied[].path), writable locations
 * (writable) and allowed reads (allow_read). The plan owns only the ancestors' paths, the device paths and
 * the arrays. So the policy must outlive the plan, and its secrets and
 * writable locations must not change while the plan lives: struct cf_fence
 * holds both, and frees the plan first. */
#ifndef CF_EXPAND_H
#define CF_EXPAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "err.h"
#include "policy.h"

enum cf_rule_kind {
	CF_RULE_READ,  /* an entry beside a secret or an ancestor: read and execute */
	CF_RULE_WRITE, /* a writable location: everything */
	CF_RULE_DEV,   /* a device node (or /dev/pts): use it, create nothing */
};

struct cf_ancestor {
	const char *path;         /* canonical directory */
	const char *const *skip;  /* names inside it that get no rule: secrets, ancestors */
	size_t n_skip;
	/* Names inside it that are writable locations: their one rule carries
	 * those rights instead of read and execute, so a location beside a secret
	 * costs no second rule. Inside a secret, the --allow-read names: read. */
	const char *const *wide;
	const unsigned char *wide_kind; /* enum cf_rule_kind */
	size_t n_wide;
	/* At or under /dev: its other entries get no rule at all. A read rule
	 * there would open every terminal of the user; devices are allowed one
	 * by one (struct cf_plan's devs). Inside a secret (the way to an
	 * --allow-read path) likewise: only the allowed names get a rule, so an
	 * entry created there later stays denied. */
	bool only_wide;
};

/* Identity of a directory when it was read: a plan is current while all match. */
struct cf_stamp {
	uint64_t dev, ino;
	int64_t mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
	int present; /* 0: the directory did not exist */
};

/* ST (a stat taken with raw syscalls) as a stamp: cf_expand stamps each
 * ancestor it reads with it, and enforce/linux/fence.c each path it checks
 * (cf_stamp_path), so that both stamps are made alike. No allocation. */
static inline void cf_stamp_from(const struct stat *st, struct cf_stamp *out)
{
	out->dev = st->st_dev;
	out->ino = st->st_ino;
	out->mtime_sec = st->st_mtim.tv_sec;
	out->mtime_nsec = st->st_mtim.tv_nsec;
	out->ctime_sec = st->st_ctim.tv_sec;
	out->ctime_nsec = st->st_ctim.tv_nsec;
	out->present = 1;
}

struct cf_plan {
	struct cf_ancestor *anc;
	size_t n_anc;
	const char *const *writable; /* writable locations not covered by an ancestor's wide list */
	size_t n_writable;
	/* Canonical device nodes, one CF_RULE_DEV rule each: the harmless ones,
	 * /dev/tty, /dev/ptmx, the terminal on fd 0-2 of the process that prepared
	 * the plan, and all of /dev/pts only when the policy allows new ptys. /dev
	 * itself gets no rule, so other terminals of the user stay closed. */
	const char *const *devs;
	size_t n_devs;
	size_t max_entries;
	/* storage, owned by the plan; the strings of the policy are not copied */
	struct cf_strv strings;             /* the ancestors' paths */
	const char **names;                 /* every skip list */
	const char **wide_names, **rest;    /* every wide list; writable */
	unsigned char *wide_kinds;
	struct cf_strv dev_paths;           /* devs */
};

/* 0 or -ENOMEM. The plan borrows from P (above): P must outlive it. */
int cf_plan_prepare(struct cf_plan *pl, const struct cf_policy *p);
void cf_plan_free(struct cf_plan *pl);

/* Called once per rule with an O_PATH descriptor (closed by cf_expand after the
 * call). Return 0 to go on, or a negative errno to stop. */
typedef int (*cf_rule_fn)(void *ctx, int fd, int is_dir, enum cf_rule_kind kind);

struct cf_expand_result {
	size_t rules;
	const char *over_dir; /* the ancestor with too many entries, or NULL */
	size_t over_count;
};

/* Returns 0, CF_ERR(CF_ERR_TOOMANY, 0) when an ancestor has more than
 * max_entries entries (err.h), a callback's error, or -errno of a failed syscall
 * (-ELOOP: a symlink on the way to a path of the plan).
 * STAMPS, when not NULL, gets pl->n_anc entries: each ancestor as it was read. */
int cf_expand(const struct cf_plan *pl, char *buf, size_t bufsz, cf_rule_fn fn, void *ctx,
	      struct cf_expand_result *res, struct cf_stamp *stamps);

#endif
