/* The constructor: decide this process's role, and for a harness resolve
 * the real calls. A call that comes before it is an early one (child.c, "Before the
 * constructor"). */
#include <stdlib.h>

#include "real.h"
#include "shim.h"


struct cf_shim cf_shim;
struct cf_real_launch cf_real_launch;

#define RESOLVE(name, ...) (void)CF_REAL(cf_real_launch, name, CF_RESOLVE);

static void resolve_real(void)
{
	CF_LAUNCH_FAMILY(CF_ROW_NONE, RESOLVE)
}

static void decide_role(void)
{
	cf_shim.role = CF_ROLE_PASS;
	/* Fenced already: descendants are covered by inheritance, add no layer. */
	if (cf_fence_fenced())
		return;
	/* The harness gives its fenced children the user's TMPDIR back, and a
	 * process that fences itself takes it back for itself and its own. */
	cf_env_tmpdir_init();
	const char *marker = getenv("CREDFENCE_HARNESS");
	if (marker && cf_harness_marker_is_self(marker)) {
		cf_shim_become_harness();
		cf_shim_follow_init();
		cf_shim_fence_cache_init();
		return;
	}
	cf_shim_fence_self();
}

__attribute__((constructor)) static void cf_shim_init(void)
{
	decide_role();
	/* Every fenced program loads the shim (denied.c), and most never call
	 * these: there each is resolved at its first call (real.h), none of
	 * them async-signal-safe. 7 dlsym calls are 15 to 25 us of every fenced
	 * program's start (CF_PROF_CTOR timing, issue 22). */
	if (cf_shim.role == CF_ROLE_HARNESS)
		resolve_real();
	/* From now on the calls take the role's paths (cf_shim_early until
	 * then). */
	__atomic_store_n(&cf_shim.ready, true, __ATOMIC_RELEASE);
}
