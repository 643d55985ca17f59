/* Where credfence's own parts lie, and the refusal to fence with a part that
 * a fenced command could replace (machinery.c). */
#ifndef CF_CLI_MACHINERY_H
#define CF_CLI_MACHINERY_H

#include "policy.h"

/* This program's path, symlinks resolved; NULL when not known. */
const char *cf_cli_self_path(void);
/* Where the shim is: next to this program (installed or build tree), or
 * installed (harness.c); NULL when not found. */
const char *cf_cli_find_shim(void);
/* What a fenced program loads (libcredfence-fenced.so, shim/linux/fenced_lib.c):
 * the file beside SHIM when it is there, else SHIM itself (it then finds
 * itself fenced and explains too); NULL for a NULL SHIM. Linux; elsewhere SHIM. */
const char *cf_cli_fenced_shim(const char *shim);
/* SHIM first in LD_PRELOAD (kept once). 0, or -1 out of memory. */
int cf_cli_preload(const char *shim);
/* argv[0] of this process (main), for cf_cli_link_path. */
void cf_cli_set_invoked(const char *argv0);
/* The symlink the user called credfence by (argv[0], searched in PATH when
 * it holds no slash), its directory canonical; NULL when none. */
const char *cf_cli_link_path(void);
/* The launcher script named by CREDFENCE_SCRIPT (then unset), or NULL. */
const char *cf_cli_script_path(void);
/* The writable location of P that holds PATH, or NULL (also for a NULL PATH). */
const char *cf_cli_writable_holding(const struct cf_policy *p, const char *path);
/* 0, or CF_EXIT_FAIL after one "credfence: ..." line naming the part, the
 * writable location and the fix. SHIM may be NULL (run loads none). */
int cf_cli_check_machinery(const struct cf_policy *p, const char *shim);

#endif
