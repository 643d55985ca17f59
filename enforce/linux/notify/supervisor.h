/* The IPC and metadata fence (Linux): its supervisor and the child's side of
 * it. The public header; what the two sides say to each other is private,
 * in supervisor_wire.h.
 *
 * Landlock (ABI 7 and older) does not stop a fenced process from connect()ing
 * to a Unix socket that a process outside the fence listens on (systemd --user,
 * D-Bus, tmux, docker: deputies that read the secrets for it), nor from
 * changing metadata (chmod, chown, utimes, extended attributes, inode flags)
 * outside the writable locations. A seccomp user-notification filter sends
 * those calls to a supervisor process that runs outside the fence; it copies
 * the arguments once, judges the copy, and makes the call itself on a
 * descriptor it took from the caller (pidfd_getfd), so that what was judged
 * is what is done. The caller gets the result as its syscall's result.
 *
 * One supervisor serves a whole `credfence run` tree, a whole harness, or a
 * self-mode process tree: a socket bound by any fenced process it serves can
 * be reached by every other one. A socket bound outside stays unreachable
 * unless the fence's own list allows it (--allow-socket, --ssh-agent).
 *
 * When the supervisor is gone, the trapped calls fail (ENOSYS from the
 * kernel): never the kernel's plain behaviour.
 *
 * Two parts below: what the parent calls, in normal context (it may fork,
 * allocate and use the C library), and what a child may call between fork
 * and exec (raw system calls and the stack only, errno never touched). */
#ifndef CF_SUPERVISOR_H
#define CF_SUPERVISOR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "err.h"
#include "strv.h"
#include "verdict.h"

/* The supervisor's abstract socket name (no leading NUL, no '@'), NUL-terminated:
 * "credfence-sup-PID-START-HEX", PID and START (field 22 of /proc/PID/stat)
 * naming the supervisor process, which made the socket and called listen()
 * itself (cf_supervisor_start*), HEX random.
 *
 * The name alone proves nothing: a fenced process can read it in
 * /proc/net/unix, and once the supervisor has died (a fenced process of the
 * same user can kill it) bind it. So a child checks the peer it reached
 * before it hands over its listener (cf_ipc_enter): SO_PEERCRED of a
 * connected stream or seqpacket socket names the process that called
 * listen() on the other end (the kernel copies the listener's credentials
 * at connect, net/unix/af_unix.c); that pid must be PID and, read AFTER
 * the connect, /proc/PID/stat must still show START. A pid is not reused
 * while its process lives, the name is held by the supervisor's socket for
 * as long as it lives, and a listener bound after its death has another
 * process's pid: nothing a fenced process makes passes.
 *
 * And the supervisor must be an ancestor of the caller: every way in starts
 * it above what it serves (cf_supervisor_start_above), as a child subreaper,
 * so that even an orphan of its tree stays below it. An address that names
 * another live process (an environment a harness was steered to give a
 * child, naming a listener of a fenced process with that process's own pid
 * and start time) fails here: no fenced process is an ancestor of a new
 * child of the harness. */
#define CF_IPC_ADDR_MAX 64

/* What a fenced child hands to the supervisor with its listener, built in
 * normal context before any fork. */
struct cf_ipc {
	char addr[CF_IPC_ADDR_MAX]; /* "" : no supervisor known */
	int sup_pid;                /* from ADDR; 0: ADDR names no supervisor's identity */
	unsigned long long sup_start;
	bool sup_beside;            /* the supervisor need not be an ancestor of the caller
				       (cf_supervisor_start; tests): false unless set */
	bool meta_by_mounts;        /* metadata calls are left to the kernel: the caller is in
				       the mount namespace of the fenced tree (tree_ns.h) */
	bool dgram_by_sup;          /* Landlock ABI below 6: the supervisor makes the Unix
				       datagram sockets (sup_dgram.h) */
	char *blob;                 /* the fence's own lists, encoded by cf_ipc_prepare */
	size_t blob_len;
};

/* This module's failures, the kinds of err.h:
 * CF_ERR_IPC_START (errno): the supervisor could not be started.
 * CF_ERR_IPC_PTRACE (scope): Yama's ptrace_scope keeps the supervisor from
 * the processes it would serve (cf_ipc_ptrace_blocked).
 * CF_ERR_IPC_ENDED: the supervisor has ended: its address is refused, or
 * the process there is another one (which bound the name after it died).
 * CF_ERR_IPC_IDENTITY (errno): the supervisor's identity can not be
 * established (EINVAL: its address names none; else reading its peer or
 * /proc failed). The listener was handed to nobody.
 * CF_ERR_PIDFD (errno): pidfd_open or pidfd_getfd failed (cf_ipc_probe).
 * CF_ERR_IPC (errno): any other step.
 * Any failure of this module as one of the kinds above: a plain -errno
 * becomes CF_ERR_IPC's. */
static inline int cf_ipc_err(int rc)
{
	return cf_err_as(CF_ERR_IPC, rc);
}

/* ---- In the parent ---- */

/* Normal context. WRITABLE: the canonical writable locations (metadata changes
 * are allowed beneath them). ALLOW: sockets the user allowed, canonical paths
 * or "@name" for an abstract name. ADDR: the supervisor (may be NULL or "",
 * to be set later with cf_ipc_set_addr). 0 or -ENOMEM / -EINVAL. */
int cf_ipc_prepare(struct cf_ipc *ipc, const struct cf_strv *writable, const struct cf_strv *allow,
		   const char *addr);
int cf_ipc_set_addr(struct cf_ipc *ipc, const char *addr);
void cf_ipc_free(struct cf_ipc *ipc);

/* The addresses of the supervisors among the calling process's ancestors
 * (their listening names in /proc/net/unix, each of whose pid is an
 * ancestor's), the nearest first, into OUT (at most MAX, and 16). For a
 * process whose environment names none (a static harness that passes its
 * shell only a few variables, as Codex's inherit = "core"): each is
 * checked as any address is, by cf_ipc_enter's identity check, before it
 * is used. Normal context. The count. */
size_t cf_ipc_supervisors_above(char (*out)[CF_IPC_ADDR_MAX], size_t max);

/* The tree the next supervisor serves runs as root without the capabilities
 * a guarded harness gives up (harness_guard.h): the supervisor gives them up too, as
 * it starts, so that it never acts for a caller with more than the caller
 * has (and its callers' credentials match its own). Normal context. */
void cf_ipc_serve_without_root_caps(void);

/* Whether Yama (its ptrace_scope read from SCOPE_FILE, normally
 * /proc/sys/kernel/yama/ptrace_scope; absent: no Yama) keeps a supervisor
 * from taking the descriptors of the processes it serves: 1 when ABOVE is
 * false (the supervisor is not their ancestor: self mode, check) needs scope
 * 0, when ABOVE is true scope 1 is enough; CAP_SYS_PTRACE passes scopes 1 and
 * 2, nothing passes 3. Returns the blocking scope (> 0), or 0. */
int cf_ipc_ptrace_blocked(const char *scope_file, bool above);

/* Normal context, not after fork. Start a supervisor: a process of its own
 * (double-forked, so it is nobody's child to reap; its own session; stdio on
 * /dev/null; outside every fence) that serves each fence whose thread calls
 * cf_ipc_enter() with ADDR. It exits when KEEPER has exited and no fenced
 * process it serves is left. LOG_FD (or -1; duplicated, the caller keeps its
 * own) receives one JSON line per denial: "ipc_denied" (pid, program, socket
 * path or "@name") and "metadata_denied" (pid, program, call, path). Writes
 * the name into ADDR. 0 or -errno. */
int cf_supervisor_start(pid_t keeper, int log_fd, char addr[CF_IPC_ADDR_MAX]);

/* The same supervisor, as an ancestor of every process it serves (Yama's
 * ptrace_scope 1, Ubuntu's default, lets a process take descriptors only
 * from its descendants). For a single-threaded caller about to fence itself
 * and exec (credfence run, credfence harness): the caller's process stays as
 * the waiter, which never returns and answers for the command (its exit
 * status, or death by its signal; SIGTERM, SIGHUP, SIGUSR1/2, SIGALRM and
 * SIGWINCH are passed on); its child is the supervisor, a child subreaper;
 * and this function returns 0 in the supervisor's child, in the caller's
 * process group, which goes on to fence itself and exec. -errno when nothing
 * was started. */
int cf_supervisor_start_above(int log_fd, char addr[CF_IPC_ADDR_MAX]);

/* What the waiter of cf_supervisor_start_above does once the command has
 * ended, before it answers for it: FN(ARG) (credfence harness removes the
 * harness's private temporary directory). Set before the start; ARG must
 * stay valid (the waiter keeps this process's memory). */
void cf_supervisor_at_end(void (*fn)(const char *), const char *arg);

/* Whether this kernel can do it: seccomp user notification with
 * pidfd_open/pidfd_getfd, found in a forked child. 0 or -errno (decoded by
 * cf_ipc_verdict). Normal context. */
int cf_ipc_probe(void);

/* Whether the calling process already has a notification listener in its
 * seccomp chain (an enclosing fence's supervisor covers it): 1, 0, or -errno.
 * Found in a forked child. Normal context. */
int cf_ipc_covered(void);

/* ---- In the child too: raw system calls and the stack only ---- */

/* To be called after no_new_privs and before landlock_restrict_self (whose scope
 * would forbid reaching the supervisor's abstract socket): connect to the
 * supervisor, check that the peer is the supervisor of ADDR (above), install
 * the notification filter on the calling thread, hand the supervisor the
 * listener and the blob, wait for its answer. 0, or
 * -errno, or CF_ERR(CF_ERR_IPC, errno) when a step after the connect failed
 * (cf_ipc_verdict() decodes them). */
int cf_ipc_enter(const struct cf_ipc *ipc);
/* cf_ipc_enter in two halves, so that the caller can do its own work while
 * the supervisor takes the listener (a child's landlock_restrict_self, which
 * grows with the rules): BEGIN does every step up to the handover and, on
 * success, leaves in *PENDING the socket that END waits on for the
 * supervisor's answer (and closes). The same results as cf_ipc_enter; a
 * caller that got 0 from BEGIN must call END before it runs anything else,
 * and treat its failure as cf_ipc_enter's. Raw system calls and stack. */
int cf_ipc_enter_begin(const struct cf_ipc *ipc, int *pending);
int cf_ipc_enter_end(const struct cf_ipc *ipc, int pending);

/* The mount namespace of a harness's children (shared_ns.h), held by the
 * supervisor (supervisor_wire.h, issue 31). Raw system calls and stack:
 * callable between fork and exec.
 * cf_ipc_ns_get: ask the supervisor of IPC, after the identity check of
 * cf_ipc_enter, for the descriptors: 0 with W (struct cf_ns_wire) and FDS
 * (user, mnt, the keeper's socket or -1; close-on-exec), -ENOENT when it
 * holds none, -EALREADY when the caller is in that mount namespace already
 * (no fenced process inside it gets them), or another code of this file.
 * cf_ipc_ns_give: the harness's guard hands them to it, once: 0 or a code.
 * cf_ipc_say: a line for the user's terminal, that this child (PROGRAM) is
 * refused because WHY; the supervisor writes it where credfence harness
 * was started. Best effort: nothing is said when the supervisor is not
 * reached. */
struct cf_ns_wire;
int cf_ipc_ns_get(const struct cf_ipc *ipc, struct cf_ns_wire *w, int fds[3]);
int cf_ipc_ns_give(const struct cf_ipc *ipc, const struct cf_ns_wire *w, const int *fds);
void cf_ipc_say(const struct cf_ipc *ipc, const char *program, const char *why);

/* Whether the supervisor IPC names is alive: /proc/PID/stat shows its start
 * time and it is no zombie. Raw syscalls and stack: callable after fork. */
bool cf_ipc_supervisor_alive(const struct cf_ipc *ipc);

/* Such a failure ERR (any code of this module, or a plain -errno) as a
 * verdict. No allocation: callable after fork. */
void cf_ipc_verdict(int err, struct cf_why *w);

#endif
