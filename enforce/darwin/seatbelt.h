/* The Seatbelt backend (macOS): a profile from common/profile.c handed to the
 * kernel with sandbox_init_with_parameters(), resolved with dlsym because no
 * public header declares it. The sandbox binds the whole process (not a
 * thread, unlike Landlock) and is carried across exec by the kernel, also into
 * SIP-protected programs whose DYLD_* variables are stripped. Compiled on
 * macOS only. */
#ifndef CF_SEATBELT_H
#define CF_SEATBELT_H

#include <stddef.h>

#include "profile.h"

/* Resolve the sandbox calls. 0, or -ENOSYS when this system lacks
 * sandbox_init_with_parameters. Call it once in normal context (the shim's
 * constructor, the CLI) before any fork: it takes dyld's lock. */
int cf_sb_probe(void);

/* The kernel's answer to "does this process already run sandboxed": 1, 0, or
 * -ENOSYS when sandbox_check is missing. */
int cf_sb_active(void);

/* The kernel's answer to "may this process do OPERATION ("file-read-data",
 * "file-write-create", ...) on PATH", asked without touching PATH and without
 * logging a violation: 1 allowed, 0 denied, -ENOSYS when sandbox_check is
 * missing, -EINVAL when the kernel could not answer. */
int cf_sb_allows(const char *operation, const char *path);

/* Sandbox the calling process with PF. Returns 0, or -errno with the
 * system's words for the refusal in WHY (the kernel's message, or
 * "sandbox_init_with_parameters not found"): the {WHY} of the verdict row
 * CF_WHY_SEATBELT_REFUSED, which words it. Safe in a fork child (not a vfork
 * child): it allocates, which libSystem's fork handlers make safe. */
int cf_sb_apply(const struct cf_profile *pf, char *why, size_t whysz);

#endif
