/* A fence: a policy judged, planned and built into a Landlock ruleset, ready to
 * be applied to a thread. Prepared in normal context; cf_fence_enter() is the
 * part that runs between fork and exec. */
#ifndef CF_FENCE_H
#define CF_FENCE_H

#ifdef __APPLE__
#include "darwin/fence_state.h" /* the same calls, with a Seatbelt profile as the plan */
#else

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "expand.h"
#include "linux/supervisor.h"
#include "policy.h"

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
	char *lists_json;          /* "denied":[...],"writable":[...] for the log */
	struct cf_ipc ipc;         /* the IPC fence: its supervisor and this fence's lists */
	bool ready;                /* the verdict is "applied" so far */
	bool inherited;            /* this process is fenced already: no new layer */
};

/* Judge and build. Returns 0 (look at f->ready, f->pol.verdict) or -ENOMEM.
 * CWD may be NULL (then getcwd). */
int cf_fence_prepare(struct cf_fence *f, const struct cf_options *o, char *const envp[],
		     const char *cwd);
void cf_fence_free(struct cf_fence *f);

/* Apply the prepared ruleset to the calling thread, with the IPC fence of the
 * supervisor named in f->ipc.addr (cf_fence_set_supervisor, or the options'
 * CREDFENCE_SUPERVISOR); on failure the verdict and reason say why. Returns 0
 * or -errno. Normal context. */
int cf_fence_apply(struct cf_fence *f);

/* Whether status may say "applied", and whether best-effort mode may try:
 * Landlock, then the IPC fence, tried in a forked child that is thrown away
 * (neither this process nor its later exec is restricted). On failure the
 * verdict and reason say why and F is no longer ready. 0 or -errno. Not for
 * use after fork. The same call as on macOS. */
int cf_fence_probe(struct cf_fence *f);

/* The kernel's answer to "is the calling thread fenced already" (a harness
 * shim, a self-mode constructor). 1 or 0. One syscall: callable after fork. */
int cf_fence_fenced(void);

/* Whether every ancestor, and every directory the secrets were resolved in,
 * still has the identity and times it had when the ruleset was built. No
 * allocation: callable between fork and exec. */
bool cf_fence_current(const struct cf_fence *f);

/* Whether the fence needs a supervisor that is not known yet: true for a
 * ready fence that adds a layer and has no supervisor address. */
bool cf_fence_needs_supervisor(const struct cf_fence *f);

/* Start a supervisor (supervisor.h) for F, serving until KEEPER has exited and no
 * fenced process is left; its denials go to LOGFD. ABOVE: as the ancestor of
 * everything it serves (cf_supervisor_start_above: this process becomes the
 * waiter and the call returns in its grandchild; KEEPER is not used). On
 * failure the verdict and reason say why and F is no longer ready. 0 or
 * -errno. Normal context. */
int cf_fence_start_supervisor(struct cf_fence *f, pid_t keeper, int logfd, bool above);

/* The address of F's supervisor (CREDFENCE_SUPERVISOR, for what F's
 * process starts), or NULL when it has none. The same call as on macOS. */
const char *cf_fence_supervisor(const struct cf_fence *f);

/* Between fork and exec: fence the calling thread with the prepared ruleset when
 * it is still current, else with one built here from the same plan (never
 * touching the shared one). No allocation, no errno. Returns 0 or -errno /
 * -CF_ETOOMANY (decoded by cf_fence_words); *RES gets the rule count used (and, for -CF_ETOOMANY, the
 * directory and its count). */
int cf_fence_enter(const struct cf_fence *f, char *buf, size_t bufsz, struct cf_expand_result *res);
/* The same, for a caller that checked in normal context, just before it forked,
 * that F was current (cf_fence_current): the child skips the check. */
int cf_fence_enter_checked(const struct cf_fence *f, char *buf, size_t bufsz,
			   struct cf_expand_result *res);

/* The status line for RC, a failure of building or entering F's ruleset
 * (RES: for -CF_ETOOMANY the directory and its count), or F's own verdict
 * when F is not ready, into OUT: decoded into a struct cf_why here and worded
 * by cf_why_words (common/verdict.h), the one place that words a verdict,
 * for run, status, a harness child and self mode alike. No allocation, no
 * stdio: callable between fork and exec. */
void cf_fence_words(const struct cf_fence *f, int rc, const struct cf_expand_result *res,
		    char *out, size_t cap);

/* Whether the failure RC (as for cf_fence_words) must refuse the command in
 * best-effort mode too (cf_why_refuses_always: its IPC supervisor ended or
 * can not be told from an impostor). Callable between fork and exec. */
bool cf_fence_refuses_always(const struct cf_fence *f, int rc);

/* F's verdict as its status line ("read isolation applied", ...) into OUT.
 * Callable between fork and exec. */
void cf_fence_reason(const struct cf_fence *f, char *out, size_t cap);

/* A caller's own judgement (the workspace it was given): F is not ready, for
 * W. The same call as on macOS. */
void cf_fence_refuse(struct cf_fence *f, const struct cf_why *w);

/* The log is opened before the fence goes up (the log file may lie outside
 * every writable location), written after. Both with raw syscalls. Returns an
 * fd, or a negative value when there is no log. */
int cf_fence_log_open(const struct cf_fence *f);
/* One sandbox_status JSON line to FD, formatted into BUF. Does not close FD. */
void cf_fence_log(const struct cf_fence *f, int fd, pid_t pid, const char *program, bool applied,
		  const char *reason, size_t rules, char *buf, size_t bufsz);

#endif /* __APPLE__ */

#endif
