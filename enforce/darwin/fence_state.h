/* The fence on macOS: a policy judged and built into a Seatbelt profile
 * (common/profile.c), ready to be applied with enforce/seatbelt.c. The same
 * calls as the Linux fence in fence.h, where they make sense; fence.h includes
 * this file on macOS.
 *
 * Unlike a Landlock ruleset, a profile names paths, not open directories, and
 * is compiled by the kernel when it is applied: nothing is listed ahead of
 * time, and applying allocates. So the part that runs in a child of the
 * harness, cf_fence_enter(), is for fork children only (the shim turns vfork
 * into fork). The sandbox binds the whole process; exec keeps it. */
#ifndef CF_FENCE_DARWIN_H
#define CF_FENCE_DARWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "policy.h"
#include "profile.h"

/* What entering a fence gave. Named as Linux's (the expansion's result) so
 * that cf_fence_enter and cf_fence_words have one signature on both systems. */
struct cf_expand_result {
	size_t rules;         /* rules in the profile, for status and the log */
	const char *refusal;  /* cf_fence_enter: the system's words for the
				 refusal (cf_sb_apply) in the caller's BUF, or NULL */
};

struct cf_fence {
	struct cf_policy pol;
	struct cf_profile pf;
	struct cf_expand_result res; /* .refusal is not used here */
	char *lists_json; /* "denied":[...],"writable":[...] for the log */
	bool ready;       /* the verdict is "applied" so far */
	bool inherited;   /* this process is sandboxed already by a sandbox that
			     denies every secret of the policy: nothing is added */
};

/* Resolve the sandbox calls (seatbelt.c): 0, or -ENOSYS when this system
 * lacks them. Once, in normal context, before any fork: dlsym takes dyld's
 * lock. The shim's constructor calls it first; every call below resolves on
 * first use as well. macOS only: Landlock needs no lookup. */
int cf_fence_resolve(void);

/* Judge and build. Returns 0 (look at f->ready, f->pol.verdict) or -ENOMEM.
 * CWD may be NULL (then getcwd). It resolves the sandbox calls. */
int cf_fence_prepare(struct cf_fence *f, const struct cf_options *o, char *const envp[],
		     const char *cwd);
void cf_fence_free(struct cf_fence *f);

/* Sandbox the calling process with the prepared profile; on failure the
 * verdict and reason say why. Returns 0 or -errno. */
int cf_fence_apply(struct cf_fence *f);

/* Whether status may say "applied": the profile is applied in a forked child,
 * which is thrown away, so that the kernel itself judges it. On failure the
 * verdict and reason say why. Returns 0 or -errno. Not for use after fork. */
int cf_fence_probe(struct cf_fence *f);

/* Whether the calling process is sandboxed already (seatbelt.c). 1 or 0. */
int cf_fence_fenced(void);

/* Whether the sandbox in force lets the calling process create PATH, asked
 * of the kernel without touching PATH and without logging a violation (macOS
 * has no O_TMPFILE to try it with): 0 allowed, -EPERM denied, -ENOSYS or
 * -EINVAL when the kernel can not be asked. macOS only (credfence check). */
int cf_fence_may_create(const char *path);

/* Whether every secret still resolves as it did when the profile was built. */
bool cf_fence_current(const struct cf_fence *f);

/* In a fork child of the harness: sandbox the calling process with the
 * prepared profile when it is still current. Leaves F as it is (it may be the
 * harness's shared copy). Returns 0 (RES->rules: the profile's), -ESTALE when
 * it is no longer current (the caller prepares a fresh one), -EPERM when F is
 * not ready, or the -errno of the kernel's refusal, whose words go to BUF
 * (RES->refusal). The same call as on Linux; cf_fence_words words a failure. */
int cf_fence_enter(const struct cf_fence *f, char *buf, size_t bufsz, struct cf_expand_result *res);

/* The status line for RC, a failure of cf_fence_enter (RES as it left it),
 * or F's own verdict when F is not ready, into OUT: decoded into a struct
 * cf_why and worded by cf_why_words (common/verdict.h), as on Linux. */
void cf_fence_words(const struct cf_fence *f, int rc, const struct cf_expand_result *res,
		    char *out, size_t cap);

/* F's verdict as its status line into OUT. The same call as on Linux. */
void cf_fence_reason(const struct cf_fence *f, char *out, size_t cap);

/* A caller's own judgement: F is not ready, for W. The same call as on Linux. */
void cf_fence_refuse(struct cf_fence *f, const struct cf_why *w);

/* The log is opened before the sandbox goes up (the log file may lie outside
 * every writable location), written after. Returns an fd, or a negative value
 * when there is no log. */
int cf_fence_log_open(const struct cf_fence *f);
/* One sandbox_status JSON line to FD, formatted into BUF. Does not close FD. */
void cf_fence_log(const struct cf_fence *f, int fd, pid_t pid, const char *program, bool applied,
		  const char *reason, size_t rules, char *buf, size_t bufsz);

/* No IPC supervisor, so no failure that refuses in best-effort mode too. */
static inline bool cf_fence_refuses_always(const struct cf_fence *f, int rc)
{
	(void)f;
	(void)rc;
	return false;
}

/* No IPC fence on macOS yet (SECURITY.md): no supervisor is ever needed. */
static inline bool cf_fence_needs_supervisor(const struct cf_fence *f)
{
	(void)f;
	return false;
}
static inline const char *cf_fence_supervisor(const struct cf_fence *f)
{
	(void)f;
	return NULL;
}
static inline int cf_fence_start_supervisor(struct cf_fence *f, pid_t keeper, int logfd, bool above)
{
	(void)f;
	(void)above;
	(void)keeper;
	(void)logfd;
	return 0;
}

#endif
