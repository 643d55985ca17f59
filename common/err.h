/* A failure of credfence's low layers as one int, typed (issue 34).
 *
 * The low layers return 0 (or a count, a descriptor) on success and, on
 * failure, -errno: the kernel's answer, as its callers expect. Some
 * failures an errno alone would misname (the terminal filter's install
 * failed with EINVAL, not the Landlock restrict; the supervisor's identity
 * did not check out, not the connect): those carry a kind beside the
 * errno, -(kind << CF_ERR_SHIFT | detail), where detail is the errno (the
 * kernel's are 1 to 4095) or a small number the kind names. A plain
 * -errno is kind CF_ERR_ERRNO.
 *
 * One function turns a failure into words, at the edge: the backend's
 * verdict (cf_ll_verdict, cf_ipc_verdict) makes a struct cf_why of it, and
 * cf_why_words (verdict.h) words that, as bubblewrap's die_with_bind_result
 * words its bind_mount_result. What is here is arithmetic only: safe
 * between fork and exec. */
#ifndef CF_ERR_H
#define CF_ERR_H

enum cf_err_kind {
	CF_ERR_ERRNO = 0,    /* a system call's failure; detail: its errno */
	CF_ERR_TOOMANY,      /* an ancestor of a secret has more entries than the bound
				(common/linux/expand.h); detail 0 */
	CF_ERR_TTYFILTER,    /* the terminal filter could not be installed; errno */
	CF_ERR_IPC,          /* a step of the IPC fence's handover failed; errno */
	CF_ERR_IPC_START,    /* the supervisor could not be started; errno */
	CF_ERR_IPC_PTRACE,   /* Yama's ptrace_scope keeps the supervisor out; detail:
				the scope */
	CF_ERR_IPC_ENDED,    /* the supervisor has ended; detail 0 */
	CF_ERR_IPC_IDENTITY, /* the supervisor's identity could not be checked; errno */
	CF_ERR_PIDFD,        /* pidfd_open or pidfd_getfd failed; errno */
};

#define CF_ERR_SHIFT 12
#define CF_ERR_DETAIL_MASK ((1 << CF_ERR_SHIFT) - 1)

/* The failure of KIND with DETAIL (an errno, or what KIND names). */
#define CF_ERR(kind, detail) (-(int)(((unsigned)(kind) << CF_ERR_SHIFT) | (unsigned)(detail)))

/* The kind of RC: CF_ERR_ERRNO for success and for a plain -errno. */
static inline __attribute__((always_inline)) enum cf_err_kind cf_err_kind(int rc)
{
	return rc < 0 ? (enum cf_err_kind)((unsigned)-rc >> CF_ERR_SHIFT) : CF_ERR_ERRNO;
}

/* The detail of RC: its errno, or what its kind names; 0 for success. */
static inline __attribute__((always_inline)) int cf_err_detail(int rc)
{
	return rc < 0 ? (int)((unsigned)-rc & CF_ERR_DETAIL_MASK) : 0;
}

/* RC as a failure of KIND when it is a plain -errno; any other unchanged. */
static inline __attribute__((always_inline)) int cf_err_as(enum cf_err_kind kind, int rc)
{
	return rc < 0 && cf_err_kind(rc) == CF_ERR_ERRNO ? CF_ERR(kind, -rc) : rc;
}

#endif
