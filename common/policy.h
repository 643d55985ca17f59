/* A policy: who is home, what is secret, what is writable, and the verdict. */
#ifndef CF_POLICY_H
#define CF_POLICY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

#define CF_DEFAULT_MAX_ENTRIES 20000

#include "options.h"
#include "verdict.h"

struct cf_denied {
	char *path;        /* canonical */
	const char *holds; /* from the table, or "added with --deny" */
	const char *why;   /* "default", the relocating variable, "--deny" */
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
	enum cf_verdict verdict; /* what WHY is about (cf_why_verdict) */
	struct cf_why why;       /* the verdict as data; the status line: cf_policy_reason */
	char why_text[2 * PATH_MAX + 128]; /* WHY's strings: the policy's own copies */
	struct cf_strv allow_sockets; /* canonical socket paths, or "@name", a fenced program may
					 connect to although they were bound outside the fence */
	bool allow_ptys; /* all of /dev/pts gets a device rule, so new ptys open (and other terminals) */
	/* --allow-read, resolved: each path canonical (a symlink is judged by
	 * where it points). ALLOW_READ holds the paths that lie strictly inside
	 * a secret location, which stays denied around them; ALLOW_ROWS the
	 * secret locations lifted whole, which are no longer in DENIED. */
	struct cf_strv allow_read;
	struct cf_strv allow_rows;
	/* Why an --allow-read was refused (it lies in no secret location, can
	 * not be resolved, or is reached through a symlink a fenced program
	 * could retarget), or NULL. Refused in either mode: nothing runs. */
	char *allow_read_refused;
};

/* Build a policy from options and the environment ENVP (for relocations and
 * $HOME/$TMPDIR). CWD is the directory relative locations are taken from.
 * Returns 0 (then look at verdict) or -ENOMEM. */
int cf_policy_build(struct cf_policy *p, const struct cf_options *o, char *const envp[],
		    const char *cwd);
void cf_policy_free(struct cf_policy *p);

/* The entry of ALLOW_READ that is PATH or that PATH lies in, or NULL. */
const char *cf_policy_allowed_read(const struct cf_policy *p, const char *path);

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

/* Set the verdict to W (for the status line: cf_policy_reason), keeping copies of its strings (cut to fit
 * why_text). The one way any layer sets a verdict. */
void cf_policy_verdict(struct cf_policy *p, const struct cf_why *w);

/* The status line of P's verdict into OUT (cf_why_words). No allocation:
 * callable between fork and exec. */
#define CF_REASON_MAX (sizeof ((struct cf_policy *)0)->why_text + 512)
void cf_policy_reason(const struct cf_policy *p, char *out, size_t cap);

#endif
