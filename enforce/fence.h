/* A fence: a policy judged, planned and built into what the kernel applies
 * (Linux: a Landlock ruleset and the IPC fence of a seccomp supervisor;
 * macOS: a Seatbelt profile), ready to be applied. Prepared in normal
 * context; cf_fence_enter() is the part that runs in the child, before exec.
 *
 * The one header the CLI and the shim include from enforce/ (the door): one
 * set of calls for both systems. struct cf_fence is opaque here; what it
 * holds is each system's private header (linux/fence_state.h,
 * darwin/fence_state.h), which only enforce/ and the tests include, as
 * minijail keeps struct minijail in libminijail-private.h. Behind the
 * calls: the Landlock ruleset, the IPC fence's supervisor, the harness's
 * guard, the keeper of the harness's children's namespace and the wire
 * formats between them; none of their headers is reached from here. With
 * it come the harness marker (marker.h) and a process's facts (proc.h),
 * both portable, and common/'s headers. tests/scripts/door.sh holds cli/
 * and shim/ to it. */
#ifndef CF_FENCE_H
#define CF_FENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "err.h"
#include "marker.h"
#include "options.h"
#include "policy.h"
#include "proc.h"
#include "verdict.h"
#ifdef __APPLE__
/* What entering a fence gave. Named as Linux's (the expansion's result,
 * common/linux/expand.h) so that cf_fence_enter and cf_fence_words have one
 * signature on both systems. */
struct cf_expand_result {
	size_t rules;         /* rules in the profile, for status and the log */
	const char *refusal;  /* cf_fence_enter: the system's words for the
				 refusal (cf_sb_apply) in the caller's BUF, or NULL */
};
#else
#include "expand.h"
#endif

struct cf_fence;

/* A fence not prepared yet (its memory zeroed, no descriptor held), for
 * cf_fence_prepare; NULL when out of memory. Normal context. */
struct cf_fence *cf_fence_new(void);
/* F's resources (cf_fence_free) and F itself. F may be NULL. */
void cf_fence_destroy(struct cf_fence *f);

/* What a prepared fence says of itself. Each returns a field: callable
 * between fork and exec.
 * cf_fence_policy: the policy it was judged from (its verdict, mode,
 * locations); cf_fence_ready: the verdict is "applied" so far;
 * cf_fence_inherited: this process is fenced already (no new layer);
 * cf_fence_rules: the rules the prepared fence holds. */
const struct cf_policy *cf_fence_policy(const struct cf_fence *f);
bool cf_fence_ready(const struct cf_fence *f);
bool cf_fence_inherited(const struct cf_fence *f);
size_t cf_fence_rules(const struct cf_fence *f);

/* Judge and build. Returns 0 (look at cf_fence_ready, the policy's verdict) or -ENOMEM.
 * CWD may be NULL (then getcwd). On macOS it resolves the sandbox calls. */
int cf_fence_prepare(struct cf_fence *f, const struct cf_options *o, char *const envp[],
		     const char *cwd);

/* Apply the prepared fence to the caller; on failure the verdict and reason
 * say why. Returns 0 or -errno. Normal context.
 * Linux: the ruleset, to the calling thread, with the IPC fence of F's
 * supervisor (cf_fence_start_supervisor, or the options'
 * CREDFENCE_SUPERVISOR). macOS: the profile, to the calling process. */
int cf_fence_apply(struct cf_fence *f);

/* Whether status may say "applied", and whether best-effort mode may try:
 * the fence is tried in a forked child that is thrown away (neither this
 * process nor its later exec is restricted), so that the kernel itself
 * judges it (Linux: Landlock, then the IPC fence). On failure the verdict and
 * reason say why and F is no longer ready. 0 or -errno. Not for use after
 * fork. */
int cf_fence_probe(struct cf_fence *f);

/* Where this process runs under a seccomp filter (a container's default
 * profile), whether it refuses pidfd_getfd, which the IPC supervisor needs
 * to judge a fenced program's socket (Docker's default allows it only with
 * CAP_SYS_PTRACE): without it every Unix socket connect and bind of the
 * fenced tree fails with EPERM. Asked in a child; nothing is asked outside
 * a filter. 0, or -errno with WHY (N bytes) naming the call and what to
 * allow (issue 33). macOS: 0. */
int cf_fence_container_gap(char *why, size_t n);

/* The kernel's answer to "is the caller fenced already" (a harness shim, a
 * self-mode constructor). 1 or 0. Linux: one syscall, callable after fork. */
int cf_fence_fenced(void);

/* Whether the fence still matches the disk. Linux: every ancestor, and every
 * directory the secrets were resolved in, still has the identity and times it
 * had when the ruleset was built; no allocation, callable between fork and
 * exec. macOS: every secret still resolves as it did when the profile was
 * built. */
bool cf_fence_current(const struct cf_fence *f);

/* Whether the fence needs a supervisor that is not known yet: true for a
 * ready fence that adds a layer and has no supervisor address. Never on
 * macOS (no IPC fence there yet, SECURITY.md). */
bool cf_fence_needs_supervisor(const struct cf_fence *f);

/* Start a supervisor (linux/notify/supervisor.h) for F, serving until KEEPER has
 * exited and no fenced process is left; its denials go to LOGFD. ABOVE: as
 * the ancestor of everything it serves (cf_supervisor_start_above: this
 * process becomes the waiter and the call returns in its grandchild; KEEPER
 * is not used). On failure the verdict and reason say why and F is no longer
 * ready. 0 or -errno. Normal context. macOS: nothing to start, 0. */
int cf_fence_start_supervisor(struct cf_fence *f, pid_t keeper, int logfd, bool above);

/* The address of F's supervisor (CREDFENCE_SUPERVISOR, for what F's
 * process starts), or NULL when it has none (always on macOS). */
const char *cf_fence_supervisor(const struct cf_fence *f);

/* In the child, before exec: fence the caller with F. Leaves F as it is (it
 * may be the harness's shared copy). Returns 0 (RES->rules: the rule count
 * used) or a failure that cf_fence_words words.
 * Linux: between fork and exec, the calling thread, with the prepared
 * ruleset when it is still current, else with one built here from the same
 * plan. No allocation, no errno. -errno or CF_ERR(CF_ERR_TOOMANY, 0) (RES: the directory
 * and its count).
 * macOS: in a fork child only, the calling process, with the prepared profile
 * when it is still current; -ESTALE when it is not (the caller prepares a
 * fresh one), -EPERM when F is not ready, or the -errno of the kernel's
 * refusal, whose words go to BUF (RES->refusal). */
int cf_fence_enter(const struct cf_fence *f, char *buf, size_t bufsz, struct cf_expand_result *res);

/* In a child that entered F (cf_fence_enter and its kin), the descriptors
 * of F's parent that it carries: the prepared ruleset (loaded atomically,
 * as enter does) and a relaunched child's namespaces; the watch's are the
 * caller's to close (cf_fence_close_watch_copies), from numbers it keeps
 * itself: another thread of a vfork parent may replace the watch while this
 * child reads it (ThreadSanitizer saw it). Closed
 * here, in this child's own copy of the descriptor table (made private
 * first: unshare(CLONE_FILES), nothing is copied when it is not shared):
 * 0, or the -errno of that unshare, and nothing closed (F inherited: F
 * holds none). Close-on-exec closes them at the
 * exec anyway; this is for a child that goes on without one (bash runs a
 * script with no #! in the child whose exec failed with ENOEXEC): a ruleset
 * stays open to landlock_add_rule after it was applied, and the harness's
 * later children apply that same one. Raw system calls only; F's memory is
 * not written (a vfork child shares it). Linux; a no-op elsewhere. */
int cf_fence_close_parents_fds(const struct cf_fence *f);

/* The status line for RC, a failure of building or entering F (RES as
 * cf_fence_enter left it), or F's own verdict when F is not ready, into OUT:
 * decoded into a struct cf_why here and worded by cf_why_words
 * (common/verdict.h), the one place that words a verdict, for run, status, a
 * harness child and self mode alike. Linux: no allocation, no stdio, callable
 * between fork and exec. */
void cf_fence_words(const struct cf_fence *f, int rc, const struct cf_expand_result *res,
		    char *out, size_t cap);

/* Whether the failure RC (as for cf_fence_words) must refuse the command in
 * best-effort mode too (cf_why_refuses_always: its IPC supervisor ended or
 * can not be told from an impostor; never on macOS, which has no
 * supervisor). Callable between fork and exec. */
bool cf_fence_refuses_always(const struct cf_fence *f, int rc);

/* F's verdict as its status line ("read isolation applied", ...) into OUT.
 * Callable between fork and exec. */
void cf_fence_reason(const struct cf_fence *f, char *out, size_t cap);

/* A caller's own judgement (the workspace it was given): F is not ready, for
 * W. */
void cf_fence_refuse(struct cf_fence *f, const struct cf_why *w);

/* The log is opened before the fence goes up (the log file may lie outside
 * every writable location), written after. Linux: both with raw syscalls.
 * Returns an fd, or a negative value when there is no log. */
int cf_fence_log_open(const struct cf_fence *f);
/* One sandbox_status JSON line to FD, formatted into BUF. Does not close FD. */
void cf_fence_log(const struct cf_fence *f, int fd, pid_t pid, const char *program, bool applied,
		  const char *reason, size_t rules, char *buf, size_t bufsz);

#ifdef __APPLE__
/* Resolve the sandbox calls (darwin/seatbelt.c): 0, or -ENOSYS when this
 * system lacks them. Once, in normal context, before any fork: dlsym takes
 * dyld's lock. The shim's constructor calls it first; every call above
 * resolves on first use as well. Landlock needs no lookup. */
int cf_fence_resolve(void);

/* Whether the sandbox in force lets the calling process create PATH, asked
 * of the kernel without touching PATH and without logging a violation (macOS
 * has no O_TMPFILE to try it with): 0 allowed, -EPERM denied, -ENOSYS or
 * -EINVAL when the kernel can not be asked. credfence check. */
int cf_fence_may_create(const char *path);
#else
/* More of what a prepared fence says of itself on Linux, each a field:
 * cf_fence_abi: the Landlock ABI (> 0), or the -errno of its query;
 * cf_fence_racy: a stamped directory changed within the last second, so
 * its mtime may not show the next change (a launch checks in the child).
 * The mount namespace of the fenced tree (cf_fence_protect_prepare):
 * whether it is planned, the --write-protect asked (enum
 * cf_write_protect), the protected paths it holds, those of them that are
 * private copies, and why it is off ("" while it is on). */
int cf_fence_abi(const struct cf_fence *f);
bool cf_fence_racy(const struct cf_fence *f);
bool cf_fence_protect_planned(const struct cf_fence *f);
int cf_fence_write_protect(const struct cf_fence *f);
size_t cf_fence_protect_held(const struct cf_fence *f);
size_t cf_fence_protect_private_copies(const struct cf_fence *f);
const char *cf_fence_protect_off_why(const struct cf_fence *f);

/* F's prepared ruleset taken from it (F then holds -1: a child that still
 * reads F builds its own), for the harness's fence cache to close once it
 * replaced F; -1 when F holds none. Stored atomically: a vfork child of
 * another thread may read it. Normal context. */
int cf_fence_take_ruleset(struct cf_fence *f);
/* Whether cf_fence_watch was tried for F already (set, or failed). */
bool cf_fence_watch_tried(const struct cf_fence *f);

/* Watch what cf_fence_current stats (linux/fence_watch.c: inotify on the
 * stamped directories, the mount table's poll, the supervisor's pidfd), so
 * that the harness's check at a launch is a poll. Set after the stamps were
 * taken, then checked against them once. 0, or -errno: no watch, and
 * cf_fence_current_watched asks the stats. Tried once a fence: -EALREADY
 * after a failure, or after cf_fence_unwatch. Normal context, the harness's
 * fence cache only, which serializes these calls. */
int cf_fence_watch(struct cf_fence *f);
void cf_fence_unwatch(struct cf_fence *f);

/* cf_fence_current's answer, by the watch while it is intact and heard
 * nothing (the paths it can not cover are stat'ed), else by the stats.
 * Normal context only; not thread-safe (see cf_fence_watch). */
bool cf_fence_current_watched(const struct cf_fence *f);

/* F's watch's descriptors into OUT (inotify twice, the mount table, the
 * supervisor's pidfd; -1 each when none), for the shim to close in a child
 * that goes on without an exec (cf_fence_close_watch_copies). As
 * cf_fence_current_watched. */
void cf_fence_watch_fds(const struct cf_fence *f, int out[4]);

/* In a child whose descriptor table is its own (cf_fence_close_parents_fds
 * returned 0): each of FDS (as cf_fence_watch_fds gave them, read with
 * atomic loads by the caller) closed when it still is an inotify instance,
 * a pidfd or a mount table. Raw system calls and stack only. */
void cf_fence_close_watch_copies(const int fds[4]);

/* How many stamped paths F's watch leaves to the stats, or -1 when the
 * stats answer for all (no watch, or it heard a change). cf-bench
 * currency and the tests. */
long cf_fence_watch_stats(const struct cf_fence *f);

/* F's supervisor by its pidfd: 1 alive, 0 ended, -1 not known by the watch
 * (ask /proc: cf_ipc_supervisor_alive). As cf_fence_current_watched. */
int cf_fence_supervisor_watched(const struct cf_fence *f);

/* cf_fence_enter, for a caller that checked in normal context, just before
 * it forked, that F was current (cf_fence_current): the child skips the
 * check. */
int cf_fence_enter_checked(const struct cf_fence *f, char *buf, size_t bufsz,
			   struct cf_expand_result *res);

/* cf_fence_enter (CHECKED: as cf_fence_enter_checked) for a child that has
 * entered the mount namespace of the fenced tree (shared_ns.h: a child
 * of the harness): the IPC fence then leaves metadata calls to the
 * kernel's read-only mounts. */
int cf_fence_enter_in_ns(const struct cf_fence *f, bool checked, char *buf, size_t bufsz,
			 struct cf_expand_result *res);

/* What the log line says of the mount namespace of the fenced tree:
 * METADATA "mounts" or "supervisor" (NULL: not shown), the protected
 * paths HELD, and OFF_WHY when write protection is off (else NULL). */
struct cf_fence_ns_state {
	const char *metadata;
	size_t held;
	const char *off_why;
};
/* cf_fence_log with NS's words instead of F's own (a harness child, whose
 * namespace the harness's guard made). Same context. */
void cf_fence_log_ns(const struct cf_fence *f, const struct cf_fence_ns_state *ns, int fd,
		     pid_t pid, const char *program, bool applied, const char *reason, size_t rules,
		     char *buf, size_t bufsz);

/* The mount namespace of the fenced tree (linux/mountns/tree_ns.h): read-only
 * mounts outside the writable locations (metadata changes there fail with
 * EROFS, and the IPC fence stops trapping them), read-only binds over the
 * protected paths inside them (common/protected.h). Plan it for a ready F
 * that adds a layer, from O and CWD (NULL: getcwd); 0 or -ENOMEM. Normal
 * context. */
int cf_fence_protect_prepare(struct cf_fence *f, const struct cf_options *o, const char *cwd);

/* A credfence run that a harness's shim relaunched (a child whose
 * environment moves a secret), or a process that fences itself below a
 * harness (the child of a static harness, such as Codex's shell, or of a
 * launch the shim did not see), runs inside the harness's guard, whose
 * Landlock domain refuses every mount: it can not make the namespace, but
 * may enter the one the guard made for the harness's children
 * (shared_ns.h), by the descriptors VALUE (CREDFENCE_FENCED_NS, or NULL)
 * names. They are checked to be those namespaces and moved out of the way
 * with FD_CLOEXEC (the command does not get them); cf_fence_protect then
 * enters them instead of making one. When they are not there (a harness
 * or a runtime closed them; a static harness keeps only 0-2), F's
 * supervisor, given by the environment (CREDFENCE_SUPERVISOR), gives them
 * after its identity check (issue 31): also when VALUE is NULL. Call it
 * after cf_fence_protect_prepare, before starting a supervisor of F's
 * own. Normal context. */
void cf_fence_protect_join(struct cf_fence *f, const char *value);

/* After a failed cf_fence_protect: whether a harness above has the
 * namespace that this process could not enter (nor make one of its own).
 * The default (no --write-protect) refuses such a process, --write-protect
 * =warn lets it run with the read fence alone; a machine where no
 * namespace can be made at all warns, as before. */
bool cf_fence_protect_owed(const struct cf_fence *f);
/* The words of that refusal (then the reason), and its hint. */
#define CF_WP_OWED_WORDS                                                                         \
	"write protection can not be given to this command: it can not enter the harness's "      \
	"mount namespace of the fenced tree (which holds .git/hooks, .git/config and the other " \
	"files your own tools run later read-only): "
#define CF_WP_OWED_HINT                                                                          \
	"; run the harness with --write-protect=warn to let such a command run with the read "   \
	"fence alone"

/* A refusal of write protection in WHY (for PROGRAM), for the user's
 * terminal: F's supervisor writes it where credfence harness was started
 * (the process's own stderr may be the model's tool output). Best effort;
 * raw system calls and stack. */
void cf_fence_tell_user(const struct cf_fence *f, const char *program, const char *why);

/* Make it in the calling process (one thread, about to apply F and exec),
 * or enter the one cf_fence_protect_join found.
 * 0: made (or nothing to make: F inherits its namespace, or was not
 * planned); WHY non-empty then is a warning to show (a path that the
 * joined namespace no longer holds). -errno with WHY: *CHANGED false when
 * nothing was changed (user namespaces are off: the caller warns, or
 * refuses under --write-protect=require, which also refuses a joined
 * namespace that no longer holds a path), true when the process is left
 * half-made (the caller refuses). Normal context. */
int cf_fence_protect(struct cf_fence *f, bool *changed, char *why, size_t n);

/* Whether cf_fence_protect would succeed, tried in a forked child that is
 * thrown away (no placeholder is made): 0 (F's ns.held: the paths it would
 * hold), -ENOENT when it is not planned, or -errno with WHY. credfence
 * status. */
int cf_fence_protect_probe(struct cf_fence *f, char *why, size_t n);

/* Which mechanism refuses metadata changes outside the writable locations
 * for F: "mounts" (the namespace is made), else "supervisor". */
const char *cf_fence_metadata_by(const struct cf_fence *f);

/* A denial's report, from the shim in a fenced program to F's supervisor
 * (issue 24): WRITE or a read of PATH (absolute) was refused, ROW is 1 +
 * the index in cf_protected_table of the write protection that held it, 0
 * none. The supervisor judges PATH against the fence's own lists and logs
 * it: 0 the first time in the run, -EALREADY after, -EPERM when the fence
 * does not deny it; -EBADF without a supervisor (nothing is logged),
 * -ENAMETOOLONG when PATH does not fit. One raw system call. */
int cf_fence_report_denial(bool write, unsigned row, const char *path);

/* F's supervisor has ended: a failure code of cf_fence_enter and its kin
 * (-CF_FENCE_SUPERVISOR_ENDED), which cf_fence_words words; a caller that
 * saw the end itself passes it so. */
#define CF_FENCE_SUPERVISOR_ENDED (-CF_ERR(CF_ERR_IPC_ENDED, 0))

/* F's supervisor: its pid (<= 0: none), and whether it is alive by
 * /proc (its start time, not a zombie). Raw system calls and stack. */
pid_t cf_fence_supervisor_pid(const struct cf_fence *f);
bool cf_fence_supervisor_alive(const struct cf_fence *f);

/* The next supervisor started (cf_fence_start_supervisor) serves a tree
 * that runs as root without the capabilities a guarded harness gives up:
 * it gives them up too, as it starts. Normal context. */
void cf_fence_supervisor_without_root_caps(void);

/* What the waiter of a supervisor started ABOVE does once the command has
 * ended: FN(ARG) (credfence harness removes its private temporary
 * directory). Set before the start; ARG must stay valid. */
void cf_fence_at_end(void (*fn)(const char *), const char *arg);

/* The harness's guard over its own reads (issue 11): a mount namespace of
 * its own with the secret locations covered, the mount namespace of the
 * fenced tree for its children made in a helper (this process keeps its
 * descriptors: cf_fence_harness_ns_*), then a Landlock domain for the
 * ptrace rule. Linux only; macOS has no guard yet. */
struct cf_fence_guard_report {
	size_t covered;  /* secret locations covered */
	size_t absent;   /* not present at start: nothing to cover */
	size_t may_read; /* left readable: --harness-may-read, the agents' own logins */
	bool no_ns;      /* on failure: no mount namespace could be had at all */
};
/* A MAY_READ path (canonical) that lies strictly inside one of F's denied
 * locations, which the guard can not honour (it covers a location as a
 * whole): its index, or -1. */
long cf_fence_guard_may_read_inside(const struct cf_fence *f, const struct cf_strv *may_read);
/* Guard the calling process (single-threaded, about to exec the harness)
 * for F, leaving readable what MAY_READ names, after
 * cf_fence_protect_prepare. 0, or -errno with WHY (N bytes); REP says what
 * was covered either way. The children's namespace failing does not fail
 * the guard (cf_fence_harness_ns_off_why says why). */
int cf_fence_guard_harness(struct cf_fence *f, const struct cf_strv *may_read,
			   struct cf_fence_guard_report *rep, char *why, size_t n);
/* Whether the guard could be made here, asked in a child that is thrown
 * away (credfence status). 0, or -errno with WHY. */
int cf_fence_guard_probe(char *why, size_t n);

/* The mount namespace of the fenced tree that a harness's children enter
 * (issues 22, 23 and 31): made by the guard (cf_fence_guard_harness) in
 * credfence harness, adopted by the harness's shim from
 * CREDFENCE_FENCED_NS. One a process, held in enforce/ (static storage:
 * a vfork child reads it with the harness's memory). */

/* Its value for CREDFENCE_FENCED_NS into BUF (N bytes); whether this
 * process holds its descriptors; why it is off ("" when it is not);
 * and, in credfence harness, its descriptors handed to F's supervisor,
 * which gives them to a child that lost its own: 0, -ENOTCONN without a
 * supervisor, or a failure code of the supervisor (> -4096: -errno).
 * Normal context. */
void cf_fence_harness_ns_value(char *buf, size_t n);
bool cf_fence_harness_ns_held(void);
const char *cf_fence_harness_ns_off_why(void);
int cf_fence_harness_ns_give(const struct cf_fence *f);

/* The harness's shim, in its constructor (normal context): read GIVEN
 * (CREDFENCE_FENCED_NS, or NULL), move the descriptors out of the
 * harness's way (high numbers, FD_CLOEXEC) and check them; started
 * without them, take them from F's supervisor. WRITE_PROTECT: the
 * harness's option. Returns the value the harness's environment should
 * hold now: BUF (N bytes) when the numbers moved, else GIVEN. */
const char *cf_fence_harness_ns_adopt(const struct cf_fence *f, const char *given,
				      int write_protect, char *buf, size_t n);
/* Then plan the protected paths again for F's policy, ALLOW and CWD (the
 * guard bound them), for each child to check they still are held. 0 or
 * -ENOMEM (then none is checked). */
int cf_fence_harness_ns_plan(const struct cf_fence *f, const struct cf_strv *allow,
			     const char *cwd);

/* Between fork and exec, raw system calls and stack only, in a child of
 * the harness before its fence: enter the namespace by the harness's
 * descriptors or, when they are gone, by the supervisor's (closed again
 * once entered). NS gets what the log says of it. 1: entered (REASON, CAP
 * bytes, non-empty is a warning to say: a path lost and not held again);
 * 0: not entered, go on (no namespace and write protection not required,
 * or --write-protect=warn, or F inherited); -CF_FENCE_NS_REFUSED with
 * REASON: the child must not run. LOSTWHY: room for NS's words. */
#define CF_FENCE_NS_REFUSED 65536
int cf_fence_harness_ns_enter(const struct cf_fence *f, struct cf_fence_ns_state *ns,
			      char *reason, size_t cap, char *lostwhy, size_t lostcap);
/* In a fenced child that goes on without an exec, in a descriptor table
 * of its own: the namespace's descriptors closed (each only when it still
 * is what was adopted). Raw system calls and stack. */
void cf_fence_harness_ns_close_copies(void);
/* Its descriptors (the namespaces and the keeper's socket) into OUT, -1
 * each when none: what the shim's close_range spares. Raw. */
void cf_fence_harness_ns_fds(int out[3]);
/* The harness replacing its own image (or relaunching a child through
 * credfence run) passes the descriptors on (ON: FD_CLOEXEC cleared) and
 * takes them back after a failed exec. Raw system calls. */
void cf_fence_harness_ns_pass(bool on);

/* What F's Landlock ABI can not express and what holds it instead, in one
 * line for the start of a command and for credfence status (README.md,
 * "Older kernels"), or NULL from ABI 5 on. */
const char *cf_fence_abi_note(const struct cf_fence *f);
#endif

#endif
