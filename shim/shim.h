/* libcredfence.so: what the interposed calls share. */
#ifndef CF_SHIM_H
#define CF_SHIM_H

#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "fence.h"

/* The role of the process that loaded the shim, decided once in the constructor. */
enum cf_role {
	CF_ROLE_PASS,    /* fenced already (by the kernel's answer), or best-effort
			    without isolation: every call goes straight through */
	CF_ROLE_HARNESS, /* free itself; every child it starts is fenced at launch */
};

struct cf_envsnap;

struct cf_shim {
	/* Set, with release order, when the constructor has decided ROLE: until
	 * then every interposed call is an early one (cf_shim_early). */
	bool ready;
	enum cf_role role;
	pid_t harness_pid;
	/* harness: the current prepared fence. Owned by the fence cache
	 * (fence_cache.c, Linux), which replaces it; everyone else only reads it. */
	struct cf_fence *fence;
	/* harness: what of its environment that fence was built from
	 * (envsnap.h), or NULL; owned and replaced by the fence cache too,
	 * stored with release order. */
	struct cf_envsnap *snap;
	/* harness: its IPC supervisor has ended (cf_shim_watch_supervisor):
	 * every later child is refused, in either mode. Set once, atomically. */
	int supervisor_ended;
#ifndef __APPLE__
	/* harness: the current fence's watch descriptors (cf_fence_watch_fds),
	 * stored with release order when the watch is set: what a child that
	 * goes on without an exec closes (child.c). */
	int watch_fds[4];
#endif
};

extern struct cf_shim cf_shim;

/* The fence that the fork() about to happen on this thread was checked
 * against, in normal context (pthread_atfork prepare); the fork child uses it
 * without checking again. NULL outside that window. vfork and raw clone run
 * no atfork handler: their children check for themselves. */
struct cf_checked {
	const struct cf_fence *fence;
	long long at_ns; /* CLOCK_MONOTONIC */
};
extern __thread struct cf_checked cf_shim_checked __attribute__((tls_model("initial-exec")));

/* A check older than this is not trusted: a fork child that waits long before
 * it execs checks again. */
#define CF_CHECK_TRUST_NS 50000000LL

long long cf_shim_now_ns(void);

/* close_range(2) that leaves the harness's descriptors for the namespace of
 * the fenced tree open (fdkeep.c): 0 or -errno. Raw system calls only. */
long cf_shim_close_range(unsigned first, unsigned last, unsigned flags);

/* Calls that come before the constructor has decided the role (child.c):
 * from another library's constructor, an IFUNC resolver, a thread or a signal
 * handler that ran first, or a vfork child of any of them. Raw syscalls and
 * stack only.
 * cf_shim_early: true until the constructor is done.
 * cf_shim_early_gate: a launch of PROGRAM made then goes on (0) only when
 * this process is fenced already (its child inherits the fence); otherwise
 * -EPERM after one line on stderr: the role that would fence the child is
 * not decided, so nothing is started. */
bool cf_shim_early(void);
int cf_shim_early_gate(const char *program);

/* Normal context, in the harness before each launch (cf_shim_fence_lend):
 * when the IPC supervisor of F has ended, say so once on stderr and in the
 * log (event "supervisor_ended"), and set cf_shim.supervisor_ended. */
void cf_shim_watch_supervisor(const struct cf_fence *f);
/* Whether F's supervisor lives, by the fence's watch (fence_cache.c): 1, 0, or
 * -1 when the watch can not tell. */
int cf_shim_supervisor_watched(const struct cf_fence *f);
/* The same report, once, for a supervisor found ended (by the watch, or by a
 * child's cf_ipc_enter). Raw syscalls and stack: callable in a vfork child,
 * where it marks the harness's own memory. */
void cf_shim_supervisor_ended(const struct cf_fence *f);
/* The same, with the log open already at LOGFD (< 0: opened here): a
 * harness child in the mount namespace of the fenced tree, where the log
 * is on a read-only mount, opened it before. */
void cf_shim_supervisor_ended_log(const struct cf_fence *f, int logfd);

/* Exported symbols carry default visibility; everything else is hidden. */
#define CF_EXPORT __attribute__((visibility("default")))

/* Between fork and exec, in the child about to run PROGRAM: fence it when the
 * harness started it. Raw syscalls and stack only. Returns 1 when the child is
 * fenced (now or before), 0 when it goes on unfenced (the harness replacing its
 * own image; best-effort), or -EPERM (the reason is on stderr and in the log). */
int cf_shim_child_enter(const char *program);

/* A child's environment as cf_shim_child_call judged it (Linux), in one pass
 * over ENVP: each entry is judged once, and the fence's log, the relaunch and
 * the environment the child gets all read this. */
#define CF_ENV_SHIM_NOTES 8
struct cf_child_env {
	char *const *envp; /* as the caller gave it */
	/* Judged: ENVP has at most CF_CHILD_ENV_MAX entries. OUT then holds
	 * the KEPT entries, a NULL, and the WITHHELD ones (secrets), in order. */
	bool judged;
	char **out;
	size_t kept, withheld;
	/* What MOVED was judged against (NULL: not judged): the first entry
	 * that moves a secret away from where its fence denies it, or NULL. */
	const struct cf_envsnap *snap;
	const char *moved;
	/* Where in OUT the entries lie that a fenced child loses or gets
	 * changed (LD_PRELOAD, the private TMPDIR); more than the notes hold:
	 * N_SHIM says so, and they are looked for again. */
	size_t shim[CF_ENV_SHIM_NOTES];
	size_t n_shim;
};

/* The same, for a child whose environment CE holds (Linux; NULL: no
 * environment to judge): CF_CHILD_RELAUNCH when it moves a secret elsewhere
 * than the harness's environment did; then the child must exec through
 * cf_shim_relaunch(). */
#define CF_CHILD_RELAUNCH 2
int cf_shim_child_enter_env(const char *program, const struct cf_child_env *ce);
int cf_shim_relaunch(const char *file, bool search, char *const argv[], struct cf_child_env *ce);

/* Between fork and exec too (child.c), raw syscalls and stack only.
 * cf_shim_can_exec: access(PATH, X_OK) as exec judges it, 0 or -errno.
 * cf_shim_exec_would_fail: true, with the errno in *ERR, when an execve of
 * PATH could only fail as not there or not executable (ENOENT, ENOTDIR,
 * EACCES); a PATH search tries such candidates by the dozen, and each would
 * otherwise be fenced and logged under a name that never ran.
 * cf_shim_which: FILE as a PATH search would run it, the first candidate in
 * PATH_VAR that may be executed, built in BUF; FILE itself when it holds a
 * slash or no candidate is found. For the log's program name only. */
int cf_shim_can_exec(const char *path);
bool cf_shim_exec_would_fail(const char *path, int *err);
const char *cf_shim_which(const char *file, const char *path_var, char *buf, size_t cap);

/* The environment the current fence was built from (envsnap.h), or NULL. */
static inline const struct cf_envsnap *cf_shim_snap(void)
{
	return __atomic_load_n(&cf_shim.snap, __ATOMIC_ACQUIRE);
}

void cf_shim_say(const char *reason, const char *tail);

/* ENVP without libcredfence.so in LD_PRELOAD, in OUT (CAP pointers) and LDBUF;
 * ENVP itself when there is nothing to take out or it does not fit. */
size_t cf_env_count(char *const *envp);
char *const *cf_env_without_shim(char *const *envp, char **out, size_t cap, char *ldbuf,
				 size_t ldcap);

struct cf_env_rules;

/* What a child's environment loses (cf_env_for_child). */
#define CF_ENV_DROP_SHIM 1u    /* a fenced child: the shim, the private TMPDIR */
#define CF_ENV_DROP_SECRETS 2u /* a child of the harness: every secret variable */
/* ENVP less what DROP names, into OUT (CAP pointers, the count and the NULL)
 * and LDBUF; ENVP itself when nothing goes, or when ENVP does not fit in OUT
 * (callers size OUT to ENVP and refuse more than CF_CHILD_ENV_MAX). An
 * LD_PRELOAD that does not fit LDBUF stays whole. Between fork and exec. */
char *const *cf_env_for_child(char *const *envp, unsigned drop, char **out, size_t cap,
			      char *ldbuf, size_t ldcap);
/* The same rules, an entry at a time, for one pass that judges each entry
 * once (cf_shim_child_call). cf_env_entry_drop: what of CF_ENV_DROP_* would
 * take E out or change it. cf_env_entry_less_shim: what a fenced child gets
 * for E: E itself, its LD_PRELOAD without the shim in LDBUF (at *USED,
 * which grows), the user's TMPDIR, or NULL to drop it. Between fork and
 * exec. */
unsigned cf_env_entry_drop(char *e);
char *cf_env_entry_less_shim(char *e, char *ldbuf, size_t *used, size_t ldcap);
/* E without the shim in its LD_PRELOAD, whether or not fenced children keep
 * it (cf_env_keep_shim): for the relaunch through credfence run, which an
 * unfenced shim would fence in self mode. Same buffers as above. */
char *cf_env_entry_drop_shim(char *e, char *ldbuf, size_t *used, size_t ldcap);
/* The user's --deny-env and --keep-env (options kept for the process's life),
 * set once in the constructor; what cf_env_for_child withholds by. */
void cf_env_rules_init(const struct cf_options *o);
const struct cf_env_rules *cf_env_rules(void);
/* Normal context, after cf_env_rules_init: ENVP (the harness's environment
 * at its start) judged once; a child's entry of the same bytes then takes
 * that verdict (common/env_memo.h). Out of memory: every entry is judged. */
void cf_env_memo_init(char *const *envp);
/* That memo, or NULL. */
const struct cf_env_memo *cf_env_memo_current(void);
/* Whether the calling process is a child of the harness (not the harness
 * replacing its own image): its environment loses the secrets. Raw syscalls. */
bool cf_shim_harness_child(void);
/* A child of the harness whose environment is too large to filter runs
 * nothing: the message on stderr, -E2BIG. */
int cf_shim_env_too_big(void);

#define CF_CHILD_ENV_MAX 4096

/* A fenced child keeps the shim in LD_PRELOAD (ON), so that a denial it
 * meets explains itself (denied.c): as libcredfence-fenced.so where that
 * file lies beside the shim (only what explains a denial: issue 36), else
 * the shim itself, which finds itself fenced and passes every launch
 * through. Off: the shim is taken out, as before. Called once, in the
 * constructor (it reads LD_PRELOAD and looks for the file). */
void cf_env_keep_shim(bool on);

/* Whether the environment entry ENTRY is an LD_PRELOAD that names the shim. */
bool cf_env_preload_has_shim(const char *entry);

/* The harness role follows the harness (Linux). In the harness's
 * constructor (follow.c): learn its script and the --harness-program files.
 * Between fork and exec, raw syscalls and stack only: cf_shim_follows says whether
 * DIRFD/PATH (execveat's FLAGS) with ARGV is the harness again (child.c);
 * cf_shim_exec_if_harness checks again and, when it is, executes that very
 * file as the harness (not fenced, a marker of its own): it returns 0 when
 * the child is not the harness (fence it then), -errno when the exec failed. */
void cf_shim_follow_init(void);
bool cf_shim_follows(int dirfd, const char *path, int flags, char *const argv[]);
int cf_shim_exec_if_harness(int dirfd, const char *path, int flags, char *const argv[],
			    char *const envp[]);
/* The harness replacing its own image, in normal context (follow.c): 0, or
 * -EPERM after a message when the new image is a static program (it loads no shim,
 * and would fence nothing) in required mode without --static-harness. */
int cf_shim_judge_own_exec(int dirfd, const char *path, int flags);
/* The harness's private TMPDIR and the one its children get back, read from
 * the environment once (the constructor, harness role); cf_env_without_shim
 * then gives each fenced child the user's TMPDIR. */
void cf_env_tmpdir_init(void);

#ifdef __APPLE__
/* In a wrapper (macOS, darwin/child.c): fence the child about to run PROGRAM
 * (cf_shim_child_enter), then return CALL(ENV, ARG), ENV being ENVP less the
 * shim when fenced, built on this function's stack: CALL is the exec or
 * spawn itself. When the child must not run, CALL is not made: -1, errno
 * EPERM. */
typedef int (*cf_child_call_fn)(char *const env[], const void *arg);
int cf_shim_child_call(const char *program, char *const envp[], cf_child_call_fn call,
		       const void *arg);
#else
/* One launch of a child on Linux, as each exec-like entry point describes it
 * to cf_shim_child_call: the exec family (exec.c), syscall(SYS_execve and
 * SYS_execveat) (syscall.c) and the launch child of posix_spawn, system and
 * popen (launch.c). Read only; the strings and arrays are the caller's. */
struct cf_child {
	/* The file, as execveat takes it: AT_FDCWD, the path and 0 for a path;
	 * the descriptor, "" and AT_EMPTY_PATH for fexecve. PATH NULL: nothing
	 * to follow (it can not be the harness again). */
	int dirfd;
	const char *path;
	int flags;
	/* execvp's PATH: PATH is a name to look up in it, and what the search
	 * finds is what is followed and logged. NULL: PATH is a path. */
	const char *search;
	const char *program; /* for the log and the messages; NULL: PATH */
	char *const *argv, *const *envp;
	unsigned how;        /* CF_CHILD_* below */
	/* The launch child: the fence chosen for ENVP before the clone, and
	 * whether it was checked current then (cf_shim_fence_thread_env).
	 * NULL: the harness's current one, judged against ENVP here. */
	const struct cf_fence *fence;
	bool checked;
	const void *sigmask; /* the kernel's sigset to exec with; NULL: as it is */
	/* After the fence, before the exec (the launch's file actions): 0 or
	 * -errno. NULL: nothing. When READY is given the harness-again check is
	 * made before it and once more after it, on the very file executed. */
	int (*ready)(const struct cf_child *c);
	/* The real call with the child's environment ENV: -errno (an exec
	 * returns only when it failed). */
	int (*call)(const struct cf_child *c, char *const env[]);
	const void *arg; /* the caller's, for READY and CALL */
};
#define CF_CHILD_OWN 1u      /* the harness replacing its own image is judged
				(cf_shim_judge_own_exec): the exec family */
#define CF_CHILD_PROBE 2u    /* execve of a path: one that could only fail as
				not there fails here, unfenced and unlogged */
#define CF_CHILD_RELAUNCH_OK 4u /* PATH may be handed to credfence run
				   (cf_shim_relaunch) when ENVP moves a secret */
/* Between fork and exec, raw syscalls and stack only: the one way a child
 * starts (child.c). Before the constructor, the early gate; then: is it the
 * harness again (by follow.c's rules: executed as the harness)? -> enter the
 * child's environment (fence it, or relaunch it through credfence run, or refuse)
 * -> build its environment (less the shim when fenced, less every secret
 * variable for a child of the harness) -> C->call. Returns -errno when
 * nothing ran or the exec failed: -EPERM when the child must not run. */
int cf_shim_child_call(const struct cf_child *c);
#endif

/* The roles (role.c), from the constructor: the options from the environment
 * (0, or -errno after a message), fence this process (or exit 125 in required
 * mode), become the harness (or exit 125). */
int cf_shim_options(struct cf_options *o);
void cf_shim_fence_self(void);
void cf_shim_become_harness(void);
/* The harness's options, as read at its start (role.c). */
const struct cf_options *cf_shim_harness_options(void);

/* A fence lent by the harness's fence cache (fence_cache.c) to one launch. The
 * cache owns it: the borrower reads it and never frees or changes it. When
 * the cache replaces it, its ruleset is closed at once (cf_fence_enter reads
 * that fd once, atomically, and builds its own when it is gone) and its
 * memory is kept CF_RETIRE_SECONDS more (fence_cache.c), for a vfork child of
 * another thread that may still read it: a launch must be done with it
 * by then. */
struct cf_fence_loan {
	const struct cf_fence *fence; /* never NULL in the harness */
	bool current; /* current when lent (a failed rebuild lends the old one):
			 a child launched at once may skip the check */
};
/* In the harness, in normal context: the fence for the next child, rebuilt
 * when the one at hand is no longer current. */
struct cf_fence_loan cf_shim_fence_lend(void);

/* Fence the calling thread for PROGRAM and report (child.c). 1 when fenced,
 * 0 when it goes on unfenced (best effort), -EPERM when it must not run.
 * CHECKED: the caller verified in normal context that F is current. */
int cf_shim_fence_thread(const struct cf_fence *f, const char *program, bool checked);
/* The same, and the env_withheld line for the child's environment CE (NULL:
 * none) in the same log. */
int cf_shim_fence_thread_env(const struct cf_fence *f, const char *program, bool checked,
			     const struct cf_child_env *ce);
/* The status line for a failure RC of cf_fence_enter, built without stdio. */
void cf_shim_reason(const struct cf_fence *f, int rc, const struct cf_expand_result *res,
		    char *out, size_t cap);
/* The fence cache and its fork handlers (fence_cache.c), set up by the
 * constructor. */
void cf_shim_fence_cache_init(void);

/* A terminal this process holds, opened by its name /dev/pts/N (ptyname.c):
 * the peer of a master it holds, or a copy of the slave it holds. The fd, or
 * -errno (-ENOENT: it holds no such terminal). Fenced processes only. */
int cf_shim_pty_by_name(const char *path, int flags);

#endif
