/* A policy: who is home, what is secret, what is writable, and the verdict. */
#ifndef CF_POLICY_H
#define CF_POLICY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

#define CF_DEFAULT_MAX_ENTRIES 20000

enum cf_mode { CF_MODE_REQUIRED, CF_MODE_BEST_EFFORT };

/* What the user asked for. Options from the command line are set first;
 * cf_options_from_env() fills what is still unset from the CREDFENCE_* twins. */
struct cf_options {
	const char *home;         /* --home, CREDFENCE_HOME; NULL: $HOME */
	const char *workspace;    /* --workspace, CREDFENCE_WORKSPACE; NULL: cwd */
	struct cf_strv writable;  /* --writable, CREDFENCE_WRITABLE */
	struct cf_strv deny;      /* --deny, CREDFENCE_DENY */
	int mode;                 /* -1 unset, else enum cf_mode */
	const char *log;          /* --log, CREDFENCE_LOG */
	long max_entries;         /* --max-entries, CREDFENCE_MAX_ENTRIES; 0 unset */
	int allow_ptys;           /* --allow-ptys, CREDFENCE_ALLOW_PTYS=1; -1 unset, 0, 1 */
	const char *account_home; /* the password database's home, filled by the caller */
	struct cf_strv allow_sockets; /* --allow-socket, CREDFENCE_ALLOW_SOCKET: paths or @names */
	int ssh_agent;            /* --ssh-agent, CREDFENCE_SSH_AGENT=1; -1 unset, 0, 1 */
	const char *supervisor;   /* CREDFENCE_SUPERVISOR: the IPC supervisor serving this tree
				     (written by the harness shim, never by the user) */
	struct cf_strv harness_may_read; /* --harness-may-read, CREDFENCE_HARNESS_MAY_READ:
					    what the harness itself may read (harness_guard.h) */
	bool writable_from_cli, deny_from_cli, allow_sockets_from_cli;
	bool harness_may_read_from_cli;
	/* Which processes get the harness role (credfence harness only). */
	struct cf_strv harness_programs; /* --harness-program, CREDFENCE_HARNESS_PROGRAM */
	bool harness_programs_from_cli;
	int static_harness; /* --static-harness, CREDFENCE_STATIC_HARNESS=1; -1 unset, 0, 1 */

	/* --harness-state, CREDFENCE_HARNESS_STATE: a harness's own state
	 * directories its children must write (writable, after the checks of
	 * cf_harness_state_refusal). */
	struct cf_strv harness_state;
	bool harness_state_from_cli;

	/* Written by `credfence harness`, never by the user: the harness's private
	 * temporary directory (CREDFENCE_HARNESS_TMPDIR), which its TMPDIR names,
	 * and the TMPDIR its children get back (CREDFENCE_CHILD_TMPDIR; NULL when
	 * it was unset). A TMPDIR within the private one is never writable. */
	const char *harness_tmpdir;
	const char *child_tmpdir;
};

void cf_options_init(struct cf_options *o);
/* Returns 0, or -EINVAL with *bad naming the variable whose value is not valid. */
int cf_options_from_env(struct cf_options *o, char *const envp[], const char **bad);
void cf_options_free(struct cf_options *o);

/* Values that can only be a mistake, refused before anything runs: a home or
 * workspace that is not an existing directory (the home also absolute), an
 * empty --deny, --writable or --log, an over-long path. Returns 0, or -EINVAL
 * with WHY (N bytes) saying what is wrong, naming the option and its twin. */
int cf_options_check(const struct cf_options *o, char *why, size_t n);

const char *cf_env_get(char *const envp[], const char *name);

/* The calling user's home in the password database (denied too when it
 * differs from $HOME), or NULL when there is no entry. One static buffer. */
const char *cf_account_home(void);

/* V as a twin's colon list, the inverse of what cf_options_from_env reads: a
 * colon or backslash in a path escaped with a backslash. malloc'd, or NULL. */
char *cf_twin_list_join(const struct cf_strv *v);

struct cf_denied {
	char *path;        /* canonical */
	const char *holds; /* from the table, or "added with --deny" */
	const char *why;   /* "default", the relocating variable, "--deny" */
};

enum cf_verdict {
	CF_VERDICT_APPLIED = 0,
	CF_VERDICT_HOME_EMPTY,
	CF_VERDICT_OVERLAP,
	CF_VERDICT_LANDLOCK,  /* set by enforce/ */
	CF_VERDICT_TOO_MANY,  /* set by the expansion */
	CF_VERDICT_ERROR,     /* a location could not be resolved */
	CF_VERDICT_NESTED,    /* fenced already by a policy that does not cover this one */
	CF_VERDICT_SEATBELT,  /* set by enforce/ on macOS */
	CF_VERDICT_WRITABLE_LINK, /* a writable location is reached through a symlink
				     that lies in a writable location */
	CF_VERDICT_WORKSPACE, /* set by the callers: the workspace is the current
				 directory, which the command picks with cd */
	CF_VERDICT_IPC,       /* set by enforce/: the IPC supervisor could not be used */
	CF_VERDICT_HARNESS_STATE, /* a --harness-state directory holds or lies in a file
				     the free harness trusts */
};

struct cf_policy {
	char *home;           /* canonical $HOME (or --home), NULL when not usable */
	char *account_home;   /* canonical account home when it differs, else NULL */
	char *workspace;      /* canonical */
	struct cf_denied *denied;
	size_t n_denied;
	struct cf_strv writable; /* canonical, existing or not */
	struct cf_strv lookups;  /* directories canonicalization looked in */
	struct cf_strv resolved; /* pairs: absolute input, its canonical form */
	enum cf_mode mode;
	char *log;            /* canonical, NULL when there is none or it was refused */
	char *log_refused;    /* why the log was refused ("the log L lies in ..."), or NULL */
	size_t max_entries;
	enum cf_verdict verdict;
	char reason[2 * PATH_MAX + 128]; /* full status line, "read isolation ..." */
	struct cf_strv allow_sockets; /* canonical socket paths, or "@name", a fenced program may
					 connect to although they were bound outside the fence */
	bool allow_ptys; /* all of /dev/pts gets a device rule, so new ptys open (and other terminals) */
};

/* Build a policy from options and the environment ENVP (for relocations and
 * $HOME/$TMPDIR). CWD is the directory relative locations are taken from.
 * Returns 0 (then look at verdict) or -ENOMEM. */
int cf_policy_build(struct cf_policy *p, const struct cf_options *o, char *const envp[],
		    const char *cwd);
void cf_policy_free(struct cf_policy *p);

/* Whether every secret still resolves to the canonical path it had when the
 * policy was built (a symlink on the way may have been retargeted since).
 * No allocation, raw syscalls on Linux: safe between fork and exec. */
bool cf_policy_resolves_same(const struct cf_policy *p);

/* The process runs fenced already, and OPEN_SECRET is the first secret of P the
 * enclosing fence lets it at (NULL: none). True when that fence covers P: the
 * reason then says the fence is inherited. False: the verdict is
 * CF_VERDICT_NESTED, naming the open secret. */
bool cf_policy_inherit(struct cf_policy *p, const char *open_secret);

/* The home dot-directory ($HOME/.x or the account's home/.x) that the
 * canonical PATH lies in, written to DOT; false when it lies in none. */
bool cf_policy_home_dotdir(const struct cf_policy *p, const char *path, char *dot, size_t dotsz);

/* Whether PATH, and each symlink met on the way to it, lies outside every
 * writable location of P: then no fenced program can swap the file for
 * another. 0 with the canonical path in OUT; -EACCES with WHY saying which
 * writable location holds it; another -errno when PATH can not be resolved. */
int cf_policy_outside_writable(const struct cf_policy *p, const char *path, const char *cwd,
			       char *out, size_t outsz, char *why, size_t whysz);

/* Set the verdict to "not effective" with the reason formatted from FMT. */
void cf_policy_refuse(struct cf_policy *p, enum cf_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define CF_STATUS_APPLIED "read isolation applied"
#define CF_STATUS_NOT_EFFECTIVE "read isolation is not effective: "

#endif
