/* The mount namespace of the fenced tree for the children of a harness
 * (issues 22 and 23). A harness runs inside its guard (harness_guard.h),
 * whose Landlock domain refuses mount and move_mount to everything it
 * starts, so a child of the harness can not make the namespace of
 * fenced_ns.h itself. It is made once, by the guard, before the harness
 * enters its domain: a helper process makes a user namespace (always, root
 * included: a root harness gives up CAP_SYS_ADMIN and could not enter a
 * mount namespace of the initial user namespace) and in it the namespace
 * of fenced_ns.h, the guard's covers included. The guard keeps a
 * descriptor of each namespace and lets the helper die; the descriptors
 * stay open across the exec into the harness and keep the namespaces
 * alive. Their numbers and inode numbers reach the shim in
 * CREDFENCE_FENCED_NS.
 *
 * Each child of the harness, between fork and exec, enters the two
 * namespaces by those descriptors (setns: its owner rule gives the child
 * CAP_SYS_ADMIN in the helper's user namespace; Landlock lets setns
 * through, and refuses every other way to reach the helper), walks back
 * to its working directory and gives up the capabilities the user
 * namespace gave it. What it starts inherits the namespaces.
 *
 * The namespace is the view of the harness's start: a protected path made
 * later, or a bound file the user replaces by rename, is not seen anew
 * until the harness restarts (SECURITY.md). */
#ifndef CF_FENCED_KEEP_H
#define CF_FENCED_KEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "fenced_ns.h"

struct cf_fenced_keep {
	int user_fd, mnt_fd;       /* -1: none */
	unsigned long long user_ino, mnt_ino; /* the namespaces' inode numbers */
	unsigned long long dev;    /* and the device of the namespace file system */
	size_t held;               /* protected paths held read-only in it */
	bool root;                 /* made for a root harness: children keep root's
				      capabilities less the three the guard drops */
	int write_protect;         /* enum cf_write_protect of the harness */
	/* The paths held read-only, as the harness planned them at its start
	 * (cf_fenced_keep_plan): each child checks that each is still a mount
	 * point. NULL: not checked. */
	const struct cf_protect_plan *plan;
	char off_why[512];         /* none: why ("" while there is one) */
};

/* The guard's step (normal context, one thread, after the covers, before
 * the guard's Landlock domain and capability drop): make the namespace
 * NS plans in a helper and keep its descriptors in K (inheritable: no
 * O_CLOEXEC). 0, or -errno with K->off_why set; the calling process is
 * unchanged either way. */
int cf_fenced_keep_make(struct cf_fenced_keep *k, struct cf_fenced_ns *ns);

/* K as the value of CREDFENCE_FENCED_NS ("USERFD,MNTFD,USERINO,MNTINO,DEV,
 * HELD,ROOT", the descriptors in five digits, or "off:WHY") into BUF. Five
 * digits: the shim writes the numbers it moves them to over the value in
 * place (a shell reads the environment main() was given, not environ
 * after a setenv). */
void cf_fenced_keep_value(const struct cf_fenced_keep *k, char *buf, size_t n);

/* The shim of the harness, normal context (its constructor): read VALUE
 * (CREDFENCE_FENCED_NS, or NULL) into K, move the descriptors to high
 * numbers with FD_CLOEXEC (a harness that reuses or dup2s over low
 * numbers does not close them; a child still holds them until its exec)
 * and check that they are the namespaces named; on any mismatch K holds
 * none, and off_why says why. WRITE_PROTECT: the harness's option. Returns
 * the value the harness's environment should hold now (the new numbers),
 * in BUF. */
const char *cf_fenced_keep_adopt(struct cf_fenced_keep *k, const char *value, int write_protect,
				 char *buf, size_t n);

/* Between fork and exec, in a child of the harness, before its Landlock
 * domain: enter K's namespaces and give up their capabilities. Raw system
 * calls and stack only. 0: entered; -errno with *WHY (a fixed string):
 * *CHANGED false when nothing changed (the descriptors are gone or are not
 * the namespaces: fall back), true when the child is left half-way (it
 * must not run). */
int cf_fenced_keep_enter(const struct cf_fenced_keep *k, bool *changed, const char **why);

/* Normal context, the harness's constructor: plan the protected paths
 * again for POL, ALLOW and CWD into PLAN (the guard bound them), for K's
 * children to check. 0 or -ENOMEM (then none is checked). */
int cf_fenced_keep_plan(struct cf_fenced_keep *k, struct cf_protect_plan *plan,
			const struct cf_policy *pol, const struct cf_strv *allow, const char *cwd);

/* In a child that entered K's namespace, raw system calls and stack only:
 * the first path of K's plan that is no longer a mount point, or NULL. A
 * file replaced from outside by a rename (your own `git config` renames
 * config.lock over .git/config) or removed loses its mount in every
 * namespace: it is writable in this one until the harness restarts. */
const char *cf_fenced_keep_lost(const struct cf_fenced_keep *k);

/* The harness replacing its own image keeps the descriptors (ON: clear
 * FD_CLOEXEC) or takes them back (after a failed exec). Raw system calls. */
void cf_fenced_keep_pass(const struct cf_fenced_keep *k, bool on);

#endif
