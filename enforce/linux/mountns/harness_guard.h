/* The harness's own reads (issue 11): the free harness must not read the
 * secrets either, whatever its file tools do (a Bun harness reads with raw
 * syscalls, where no preload can stand). Linux only.
 *
 * How: before it execs, the harness process gets a mount namespace of its own
 * (in a user namespace of its own unless it runs as root) in which every
 * secret location that exists is covered by an empty, read-only tmpfs object
 * of mode 000: a directory over a directory, a file over a file. Its
 * children share that view, and their fence comes on top. The harness also
 * enters a Landlock domain that handles no file access it needs (only
 * MAKE_BLOCK), for what a domain brings with it: no ptrace-mode access to a
 * process outside it, so /proc/PID/root of an outside process does not lead
 * around the covers. Run as root, the harness loses CAP_DAC_OVERRIDE,
 * CAP_DAC_READ_SEARCH and CAP_SYS_ADMIN (bounding set too): mode 000 would
 * not stop it, and it could unmount the covers. */
#ifndef CF_GUARD_H
#define CF_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "shared_ns.h"
#include "policy.h"

struct cf_guard_report {
	size_t covered;    /* secret locations covered */
	size_t absent;     /* not present at start: nothing to cover (see SECURITY.md) */
	size_t may_read;   /* left readable: --harness-may-read, the agents' own logins */
	/* On failure: no mount namespace could be had (user namespaces off or
	 * restricted, a container's seccomp profile), as opposed to a cover
	 * that failed. The harness then starts unguarded, with one line that
	 * says so (issue 33); CAUSE is enum cf_userns_cause. */
	bool no_ns;
	int cause;
};

/* ---- In the parent only: every call here runs in normal context, in the
 * process that is about to exec the harness (no child part) ---- */

/* Whether the denied location D is one the harness may read: an agent's own
 * login (the table says which), or at or under a MAY_READ path (canonical). */
bool cf_guard_may_read(const struct cf_denied *d, const struct cf_strv *may_read);

/* A MAY_READ path that lies strictly inside a denied location can not be
 * honoured (the cover is the whole location): its index, or -1. */
long cf_guard_may_read_inside(const struct cf_policy *pol, const struct cf_strv *may_read);

/* Root only: give up CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_SYS_ADMIN,
 * bounding set included (the guard's last step for a root harness; the IPC
 * supervisor of that harness does the same, supervisor.h). 0 or -errno with WHY. */
int cf_guard_drop_root_caps(char *why, size_t n);

/* Guard the calling process (single-threaded, just before it execs the
 * harness: the kernel gives a user namespace only to a process of one
 * thread, and WHY says so when that is what failed). MAY_READ: canonical
 * paths. Returns 0, or -errno with WHY (N bytes) saying which step failed;
 * the process is then in no state to run the harness as guarded (the caller
 * refuses, or goes on in best-effort mode). */
int cf_guard_harness(const struct cf_policy *pol, const struct cf_strv *may_read,
		     struct cf_guard_report *rep, char *why, size_t n);

/* The same, and between the covers and the Landlock domain, the mount
 * namespace of the fenced tree that NS plans, for the harness's children
 * (shared_ns.h), into KEEP (NS NULL or not planned: none, KEEP->off_why
 * says so). That namespace failing does not fail the guard: KEEP->off_why
 * says why, and the caller judges it by --write-protect. */
int cf_guard_harness_keep(const struct cf_policy *pol, const struct cf_strv *may_read,
			  struct cf_tree_ns *ns, struct cf_shared_ns *keep,
			  struct cf_guard_report *rep, char *why, size_t n);

/* Whether the guard could be made here, asked in a child that is thrown
 * away (credfence status): its mount namespace and its covers' tmpfs.
 * 0, or -errno with WHY (cause and remedy included). Normal context. */
int cf_guard_probe(char *why, size_t n);

#endif
