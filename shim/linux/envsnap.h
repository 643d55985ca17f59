/* What of the harness's environment its fence was built from: the variables
 * that move a secret (HOME, XDG_CONFIG_HOME, GNUPGHOME, KUBECONFIG, ...) and
 * the CREDFENCE_* options. A child whose environment moves a secret elsewhere
 * needs a fence built from its own environment. The fence cache takes one
 * with each fence it builds (fence_cache.c); a child compares its own
 * environment with it (child.c). */
#ifndef CF_SHIM_ENVSNAP_H
#define CF_SHIM_ENVSNAP_H

#include <stdbool.h>
#include <stddef.h>

struct cf_fence;

struct cf_envsnap {
	const struct cf_fence *fence; /* the fence built from this environment */
	char **moves;                 /* "NAME=value" of each variable that moves a secret */
	size_t n_moves;
	char **opts;                  /* "CREDFENCE_...=value" */
	size_t n_opts;
	char *launcher;               /* $CREDFENCE_LAUNCHER: the credfence command, or NULL */
};

/* ---- In the parent ---- */

/* NULL when out of memory. */
struct cf_envsnap *cf_envsnap_take(const struct cf_fence *f, char *const envp[]);
void cf_envsnap_free(struct cf_envsnap *s);

/* ---- In the child too: raw system calls and the stack only ---- */

/* Whether the fence of S denies every secret ENVP names: each variable
 * ENVP sets (non-empty) that moves a secret has the value S saw. String
 * compares only. */
bool cf_envsnap_same(const struct cf_envsnap *s, char *const envp[]);

/* Whether the entry E ("NAME=value") sets a variable that moves a secret to
 * a value S did not see. String compares only, as above. */
bool cf_envsnap_moves(const struct cf_envsnap *s, const char *e);

/* The one variable of ENVP that differs from S (its name), for a message. */
const char *cf_envsnap_first_change(const struct cf_envsnap *s, char *const envp[]);

/* Whether the variable named by the first NAMELEN bytes of E moves a
 * secret (HOME, XDG_CONFIG_HOME, the secret table's variables). */
bool cf_envsnap_moves_secret(const char *e, size_t namelen);

#endif
