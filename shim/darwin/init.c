/* The constructor on macOS: decide this process's role, as shim/linux/init.c does on
 * Linux. The real functions need no lookup here (interpose.h). */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "environ.h"
#include "shim.h"

struct cf_shim cf_shim;

__attribute__((constructor)) static void cf_shim_init(void)
{
	cf_shim.role = CF_ROLE_PASS;
	/* Resolve the sandbox calls now, before any fork: dlsym takes dyld's lock. */
	(void)cf_fence_resolve();
	/* Sandboxed already: descendants are covered by inheritance. Unlike
	 * Landlock's answer on Linux, sandbox_check says yes for any sandbox
	 * (an app's, someone's sandbox-exec), so fence_self() checks that the
	 * one in force denies every secret, and refuses when it does not. */
	if (cf_fence_fenced()) {
		cf_shim_fence_self();
		return;
	}
	const char *marker = getenv("CREDFENCE_HARNESS");
	if (marker && cf_harness_marker_is_self(marker)) {
		cf_shim_become_harness();
		return;
	}
	cf_shim_fence_self();
}
