/* Why read isolation is, or is not, in force: as data, and the one function
 * that puts it into words, for every way in (run, status, self mode, a
 * harness's child) and both systems. The layers below judge and decode their
 * failures into a struct cf_why; none of them writes a status line.
 *
 * Each row of the words table is a template whose slots name what fills them
 * ("writable location {W} overlaps secret {S}"). With the braces taken off,
 * and {E} written "...", a template is the row of the CLI reference's
 * Verdicts table: tests/common/test_verdict.c holds the two together. */
#ifndef CF_VERDICT_H
#define CF_VERDICT_H

#include <stddef.h>

/* What the verdict is about, for the hint that tells the user what to do. */
enum cf_verdict {
	CF_VERDICT_APPLIED = 0,
	CF_VERDICT_HOME_EMPTY,
	CF_VERDICT_OVERLAP,
	CF_VERDICT_LANDLOCK,  /* Landlock can not be used */
	CF_VERDICT_TOO_MANY,  /* the expansion met an overgrown directory */
	CF_VERDICT_ERROR,     /* a location could not be resolved; the plan changed */
	CF_VERDICT_NESTED,    /* fenced already by a policy that does not cover this one */
	CF_VERDICT_SEATBELT,  /* macOS */
	CF_VERDICT_WRITABLE_LINK, /* a writable location is reached through a symlink
				     that lies in a writable location */
	CF_VERDICT_WORKSPACE, /* the workspace is the current directory, which the
				 command picks with cd */
	CF_VERDICT_IPC,       /* the IPC supervisor could not be used */
	CF_VERDICT_HARNESS_STATE, /* a --harness-state directory holds or lies in a
				     file the free harness trusts, or a secret */
	CF_VERDICT_SECCOMP,   /* the terminal filter could not be installed */
};

/* One row of the words table: the exact reason. */
enum cf_why_id {
	CF_WHY_APPLIED = 0,
	CF_WHY_INHERITED,
	CF_WHY_HOME_EMPTY,
	CF_WHY_OVERLAP,            /* {W} {S} */
	CF_WHY_STATE_UNRESOLVED,   /* {D} */
	CF_WHY_STATE_SECRET,       /* {D} {holds} {S} {WHAT} */
	CF_WHY_STATE_TRUSTED,      /* {D} {holds} {F} {H} {WHAT} */
	CF_WHY_LANDLOCK,           /* err */
	CF_WHY_LANDLOCK_ABI,       /* n: the ABI, limit: the one needed */
	CF_WHY_TOO_MANY,           /* {DIR}, n, limit */
	CF_WHY_NESTED,             /* {S} */
	CF_WHY_NESTED_NO_IPC,
	CF_WHY_UNRESOLVED,         /* {S}, err */
	CF_WHY_WRITABLE_LINK,      /* {W} {L} {V} */
	CF_WHY_WORKSPACE_DOT,      /* {DIR} {D} */
	CF_WHY_WORKSPACE_UNSET,    /* {DIR} */
	CF_WHY_WORKSPACE_RELATIVE, /* {DIR} */
	CF_WHY_TTYFILTER,          /* err */
	CF_WHY_LOOP,
	CF_WHY_STALE,
	CF_WHY_IPC_NOTIF,          /* err, for each IPC row but the ptrace one */
	CF_WHY_IPC_BUSY,
	CF_WHY_IPC_NNP,
	CF_WHY_IPC_TIMEOUT,
	CF_WHY_IPC_UNREACHABLE,
	CF_WHY_IPC_NONE,
	CF_WHY_IPC_REFUSED,
	CF_WHY_IPC_START,
	CF_WHY_IPC_PTRACE,         /* n: Yama's scope */
	CF_WHY_IPC_PIDFD,
	CF_WHY_IPC_ENDED,       /* the supervisor ended (another process may hold its address) */
	CF_WHY_IPC_IDENTITY,       /* err: the supervisor's identity can not be established */
	CF_WHY_SEATBELT_MISSING,
	CF_WHY_SEATBELT_REFUSED,   /* {WHY}: the system's words, made one line */
	CF_WHY_SEATBELT_PROFILE,   /* err */
	CF_WHY_CHILD_NOMEM,        /* macOS: a harness's child had no memory for its fence */
	CF_WHY_COUNT
};

#define CF_WHY_ARGS 5

/* A verdict as data. The strings are borrowed: they must outlive every use
 * of the struct (a policy keeps copies of its own, cf_policy_verdict). */
struct cf_why {
	enum cf_why_id id;
	int err;                       /* an errno (> 0), for the rows that say one */
	long long n, limit;            /* counts, an ABI, a scope */
	const char *arg[CF_WHY_ARGS];  /* the row's string slots, in order */
};

/* What W is about. */
enum cf_verdict cf_why_verdict(enum cf_why_id id);

/* The whole status line for W into OUT ("read isolation applied", "read
 * isolation is not effective: ..."), cut to CAP. No allocation, no stdio, no
 * errno: callable between fork and exec. */
void cf_why_words(const struct cf_why *w, char *out, size_t cap);

/* The row's template, with its slots in braces; NULL past the table. The
 * fixed words an errno gets in the row ("disabled at boot: EOPNOTSUPP"),
 * one by one: I from 0, NULL past the last. For the tests and the docs. */
const char *cf_why_template(enum cf_why_id id);

/* Whether W refuses in best-effort mode too: the IPC supervisor a fence was
 * started with has ended, or can not be told from another process. A fenced
 * process can bring that about (it may kill the supervisor), so it must not
 * turn later commands into unfenced ones. */
int cf_why_refuses_always(enum cf_why_id id);
const char *cf_why_fixed_errno(enum cf_why_id id, size_t i);

#define CF_STATUS_APPLIED "read isolation applied"
#define CF_STATUS_NOT_EFFECTIVE "read isolation is not effective: "

#endif
