/* The harness's private temporary directory (tmpdir.c). */
#ifndef CF_CLI_TMPDIR_H
#define CF_CLI_TMPDIR_H

#include <stddef.h>

#include "policy.h"

/* A fresh directory (mode 0700) for the harness's TMPDIR, into OUT: in
 * $XDG_RUNTIME_DIR, else in $XDG_STATE_HOME/credfence (made when missing; by
 * default ~/.local/state/credfence), the first of them that lies outside
 * every writable location and secret of POL, is the user's alone and not
 * mounted noexec. 0, or -1 with WHY saying why each one was passed over. */
int cf_cli_private_tmpdir(const struct cf_policy *pol, char *out, size_t n, char *why, size_t wn);

/* rm -rf DIR, following no symlink (the waiter runs it when the harness ends). */
void cf_cli_remove_tmpdir(const char *dir);

#endif
