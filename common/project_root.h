/* What a project root is, for write protection (common/protected.h): the
 * one definition that `credfence check` and the log (protected_match.c) and
 * the read-only mounts (protect_plan.c) both use, so that what check answers
 * is what the kernel refuses.
 *
 * A project root of the writable location W, for the working directory CWD:
 * - W itself;
 * - a directory directly below W;
 * - CWD, or an ancestor of it, when it lies inside W (any depth).
 * A deeper directory is no root (a repository two levels below the
 * workspace, off the way to the working directory): the fence would have to
 * walk the whole tree at every launch to find its rows. All paths canonical. */
#ifndef CF_PROJECT_ROOT_H
#define CF_PROJECT_ROOT_H

#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

/* Whether DIR[0, LEN) is a project root of W for CWD (may be NULL). DIR[0,
 * LEN) ends at a component boundary of DIR; length 0 is "/". Plain string
 * work: no system call, no allocation. */
bool cf_project_root(const char *w, const char *cwd, const char *dir, size_t len);

/* The project roots of W for CWD (may be NULL) that exist now, added to
 * ROOTS: W, CWD and its ancestors inside W, and each directory directly
 * below W that is no symlink; each one cf_project_root accepts. A root may
 * be added twice (on the way to CWD and directly below W, or by two calls):
 * the caller skips a repeat, so that a /tmp with thousands of directories
 * costs no search per entry. 0 or -ENOMEM. */
int cf_project_roots(struct cf_strv *roots, const char *w, const char *cwd);

#endif
