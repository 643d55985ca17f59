/* The mount namespace of the fenced tree for the children of a harness
 * (issues 22 and 23). A harness runs inside its guard (harness_guard.h),
 * whose Landlock domain refuses mount and move_mount to everything it
 * starts, so a child of the harness can not make the namespace of
 * tree_ns.h itself. It is made once, by the guard, before the harness
 * enters its domain: a helper process makes a user namespace (always, root
 * included: a root harness gives up CAP_SYS_ADMIN and could not enter a
 * mount namespace of the initial user namespace) and in it the namespace
 * of tree_ns.h, the guard's covers included. The guard keeps a
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
 * The helper is not killed: it stays as the keeper (keeper.c),
 * reparented away from the harness (a double fork), in the children's user
 * namespace with every capability there and in no Landlock domain (so that
 * neither the harness nor a child can trace it). A bound file the user
 * replaces by rename from outside loses its mount in every namespace: the
 * keeper sees the rename (inotify on the parent directory) and binds the
 * new file read-only again, and a planned path made later too. A child
 * that finds a path lost at its entry asks the keeper (one byte on a
 * socket the harness holds) and waits for its answer before it goes on.
 * The keeper exits when the harness exits (a pidfd). */
#ifndef CF_SHARED_NS_H
#define CF_SHARED_NS_H

#include <stdbool.h>
#include <stddef.h>

#include "tree_ns.h"

struct cf_shared_ns {
	int user_fd, mnt_fd;       /* -1: none */
	unsigned long long user_ino, mnt_ino; /* the namespaces' inode numbers */
	unsigned long long dev;    /* and the device of the namespace file system */
	size_t held;               /* protected paths held read-only in it */
	bool root;                 /* made for a root harness: children keep root's
				      capabilities less the three the guard drops */
	int write_protect;         /* enum cf_write_protect of the harness */
	/* The paths held read-only, as the harness planned them at its start
	 * (cf_shared_ns_plan): each child checks that each is still a mount
	 * point. NULL: not checked. */
	const struct cf_protect_plan *plan;
	bool made;                 /* the harness's guard made it (CREDFENCE_FENCED_NS names
				      it), whether or not this process holds its descriptors */
	int keeper_fd;             /* the harness's end of the keeper's socket; -1 none */
	int keeper_pid;            /* the keeper (its pid at the start; 0 none) */
	char off_why[512];         /* none: why ("" while there is one) */
};

/* ---- In the parent ---- */

/* shared_ns.c's, but cf_harness_keep (harness_ns.c) and cf_keeper
 * (keeper.c). */

/* The one of this process (harness_ns.c), behind fence.h's
 * cf_fence_harness_ns_* calls and the guard's (cf_fence_guard_harness). */
struct cf_shared_ns *cf_harness_keep(void);

/* The guard's step (normal context, one thread, after the covers, before
 * the guard's Landlock domain and capability drop): make the namespace
 * NS plans in a helper and keep its descriptors in K (inheritable: no
 * O_CLOEXEC). 0, or -errno with K->off_why set; the calling process is
 * unchanged either way. */
int cf_shared_ns_make(struct cf_shared_ns *k, struct cf_tree_ns *ns);

/* K as the value of CREDFENCE_FENCED_NS ("USERFD,MNTFD,USERINO,MNTINO,DEV,
 * HELD,ROOT,KEEPERFD,KEEPERPID", the descriptors in five digits, or "off:WHY") into BUF. Five
 * digits: the shim writes the numbers it moves them to over the value in
 * place (a shell reads the environment main() was given, not environ
 * after a setenv). */
void cf_shared_ns_value(const struct cf_shared_ns *k, char *buf, size_t n);

/* The shim of the harness, normal context (its constructor): read VALUE
 * (CREDFENCE_FENCED_NS, or NULL) into K, move the descriptors to high
 * numbers with FD_CLOEXEC (a harness that reuses or dup2s over low
 * numbers does not close them; a child still holds them until its exec)
 * and check that they are the namespaces named; on any mismatch K holds
 * none, and off_why says why. WRITE_PROTECT: the harness's option. Returns
 * the value the harness's environment should hold now (the new numbers),
 * in BUF. */
const char *cf_shared_ns_adopt(struct cf_shared_ns *k, const char *value, int write_protect,
				 char *buf, size_t n);

/* The guard's step after cf_shared_ns_make (normal context): hand K's
 * descriptors to the supervisor of IPC (supervisor_wire.h), which gives
 * them to each child that lost its own. 0 or a code of supervisor.h. */
struct cf_ipc;
int cf_shared_ns_give(const struct cf_shared_ns *k, const struct cf_ipc *ipc);

/* Normal context: K (adopted, or never given: VALUE NULL) without its
 * descriptors takes them from the supervisor of IPC, moved high as
 * cf_shared_ns_adopt moves them; K->made is set when the supervisor
 * holds one. 0, or -errno with K->off_why set. */
int cf_shared_ns_recover(struct cf_shared_ns *k, const struct cf_ipc *ipc);

/* Normal context, the harness's constructor: plan the protected paths
 * again for POL, ALLOW and CWD into PLAN (the guard bound them), for K's
 * children to check. 0 or -ENOMEM (then none is checked). */
int cf_shared_ns_plan(struct cf_shared_ns *k, struct cf_protect_plan *plan,
			const struct cf_policy *pol, const struct cf_strv *allow, const char *cwd);

/* The keeper's loop (keeper.c), in the helper's grandchild: PP is
 * the plan it made the namespace from, HARNESS a pidfd of the harness,
 * SOCK its end of the socket. Never returns. */
void cf_keeper(const struct cf_protect_plan *pp, int harness, int sock)
	__attribute__((noreturn));

/* ---- In the child too: raw system calls and the stack only ---- */

/* All in harness_ns.c, the file a child's launch runs. */

/* FD is the namespace with inode INO on the namespace file system DEV (an
 * inode number names one namespace there; the user and the mount
 * namespace have two). Raw system calls. */
bool cf_shared_ns_fd_is(int fd, unsigned long long ino, unsigned long long dev);

/* Between fork and exec, in a child of the harness, before its Landlock
 * domain: enter K's namespaces and give up their capabilities. Raw system
 * calls and stack only. 0: entered; -errno with *WHY (a fixed string):
 * *CHANGED false when nothing changed (the descriptors are gone or are not
 * the namespaces: fall back), true when the child is left half-way (it
 * must not run). */
int cf_shared_ns_enter(const struct cf_shared_ns *k, bool *changed, const char **why);

/* In a child that has entered (and must not keep them): K's descriptors in
 * this child's table closed, each only when it still is what K says (the
 * namespaces by inode, the keeper's end a socket). Raw calls and stack
 * only; K not written. */
void cf_shared_ns_close_copies(const struct cf_shared_ns *k);

/* Between fork and exec, raw system calls and stack only: K's namespace
 * (K->made) from the supervisor of IPC, after its identity check, into
 * OUT (a copy of K with the descriptors received, close-on-exec; inode
 * numbers that differ from K's are refused). 0, or -errno with *WHY (a
 * fixed string). */
int cf_shared_ns_fetch(const struct cf_shared_ns *k, const struct cf_ipc *ipc,
			 struct cf_shared_ns *out, const char **why);

/* In a child that entered K's namespace, raw system calls and stack only:
 * the first path of K's plan that is no longer a mount point, or NULL. A
 * file replaced from outside by a rename (your own `git config` renames
 * config.lock over .git/config) or removed loses its mount in every
 * namespace: it is writable in this one until the keeper binds it again
 * (cf_shared_ns_ask). */
const char *cf_shared_ns_lost(const struct cf_shared_ns *k);

/* In a child whose entry found a path lost (cf_shared_ns_lost), raw
 * system calls and stack only: ask the keeper to hold its plan again and
 * wait for its answer, until the plan holds or CF_KEEPER_WAIT_MS have
 * passed. 0: held again; -EPIPE: no keeper (gone, or none); -ETIMEDOUT. */
#define CF_KEEPER_WAIT_MS 500
int cf_shared_ns_ask(const struct cf_shared_ns *k);

/* The harness replacing its own image keeps the descriptors (ON: clear
 * FD_CLOEXEC) or takes them back (after a failed exec). Raw system calls. */
void cf_shared_ns_pass(const struct cf_shared_ns *k, bool on);

#endif
