/* The supervisor's metadata judgement (sup_meta.c): chmod, chown, utimes,
 * extended attributes and the TRAP rows of CF_META_IOCTLS, made on the
 * caller's behalf inside the writable locations, refused outside. Private
 * to the supervisor. */
#ifndef CF_SUP_META_H
#define CF_SUP_META_H

#include <linux/seccomp.h>

#include "sup_state.h"

/* Judge the metadata call of notification N and make it: the result the
 * caller's call returns (not yet answered). */
long cf_sup_handle_meta(struct caller *c, const struct seccomp_notif *n);

#endif
