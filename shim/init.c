/* The constructor: resolve the real calls, then decide this process's role. */
#include <dlfcn.h>
#include <stdlib.h>

#include "proc.h"
#include "shim.h"


struct cf_shim cf_shim;

#define LOOKUP_REAL(name) (cf_shim.real.name = (__typeof__(cf_shim.real.name))dlsym(RTLD_NEXT, #name))

static void resolve_real(void)
{
	LOOKUP_REAL(execve);
	LOOKUP_REAL(execv);
	LOOKUP_REAL(execvp);
	LOOKUP_REAL(execvpe);
	LOOKUP_REAL(fexecve);
	LOOKUP_REAL(execveat);
	LOOKUP_REAL(posix_spawn);
	LOOKUP_REAL(posix_spawnp);
	LOOKUP_REAL(pidfd_spawn);
	LOOKUP_REAL(pidfd_spawnp);
	LOOKUP_REAL(system);
	LOOKUP_REAL(popen);
	LOOKUP_REAL(pclose);
	LOOKUP_REAL(syscall);
}

__attribute__((constructor)) static void cf_shim_init(void)
{
	resolve_real();
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
		cf_shim_thread_init();
		return;
	}
	cf_shim_fence_self();
}
