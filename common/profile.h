/* The Seatbelt (macOS sandbox) plan: a profile text and its parameters, made
 * from a policy. Portable: it is built and tested on Linux; only
 * enforce/darwin/seatbelt.c hands it to the kernel.
 *
 * The text holds no path at all. Every location is a parameter, named by a
 * fixed key ("W0", "S3", ...), so a path with quotes, parentheses, backslashes
 * or newlines can not change the profile. Its shape, in order (Seatbelt applies
 * the last matching rule, so the denies come last):
 *
 *   (version 1)
 *   (allow default)
 *   (deny file-write*)                        writes only to the writable
 *   (allow file-write* (subpath W<i>))        locations, and data writes to
 *   (allow file-write-data (subpath DEV))     existing nodes under /dev
 *   workspace name rules, per workspace form WS<i>:
 *     (deny file-read* ...)  names that mark a secret (CF_NAME_FILE)
 *     (allow file-read* ...) the templates (CF_NAME_KEEP)
 *     (deny file-read* ...)  anything under a secret directory (CF_NAME_DIR)
 *   (deny file-read* (subpath S<i>))          each secret, last
 *   (allow file-read* (subpath R<i>))         each --allow-read path inside one
 *   (deny file-write-unlink file-link (subpath S<i>))
 *   (deny file-write-unlink (literal U<i>))   each ancestor up to home, and home
 */
#ifndef CF_PROFILE_H
#define CF_PROFILE_H

#include <stddef.h>

#include "policy.h"
#include "strv.h"

struct cf_profile {
	char *text;
	/* KEY, VALUE, KEY, VALUE, ..., NULL: the array sandbox_init_with_parameters
	 * takes (and sandbox-exec's -D KEY=VALUE, pair by pair). */
	const char **params;
	size_t n_params; /* pairs */
	struct cf_strv strings; /* storage for keys and values */
};

/* Build the profile for P. Returns 0 or -ENOMEM / -ENAMETOOLONG. */
int cf_profile_build(struct cf_profile *pf, const struct cf_policy *p);
void cf_profile_free(struct cf_profile *pf);

/* The value of parameter KEY, or NULL. */
const char *cf_profile_param(const struct cf_profile *pf, const char *key);

/* The form the macOS kernel reports for a canonical PATH: /tmp, /var and /etc
 * are symlinks into /private there. A pure function of the text, so it gives
 * the same answer on Linux, where those links do not exist. Returns 0 or
 * -ENAMETOOLONG. */
int cf_darwin_canon(const char *path, char *out, size_t outsz);

/* The other name of a location on the data volume: /System/Volumes/Data + PATH
 * for a PATH that lies there (not under /System, /dev or the VM volume
 * /private/var/vm; not "/"), and PATH without that prefix for a PATH under
 * /System/Volumes/Data. Returns 1 when OUT got a form, 0 when PATH has none,
 * -ENAMETOOLONG. PATH is in the cf_darwin_canon() form. */
int cf_darwin_firmlink(const char *path, char *out, size_t outsz);

#define CF_DARWIN_DATA_VOLUME "/System/Volumes/Data"

#endif
