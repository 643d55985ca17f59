/* libcredfence-fenced.so: the library a fenced program loads in place of
 * libcredfence.so (shim/env.c puts it in LD_PRELOAD of every child it
 * fences, `credfence run` in CMD's). A fenced process needs the shim only to
 * explain the denials it meets (denied.c, ptyname.c): the kernel carries its
 * fence into everything it starts, so its launches need nothing.
 *
 * What a fenced program's start pays for is what this library makes the
 * loader do (issue 36: with libcredfence.so, 1 000 nested /bin/true cost
 * 1.20x plain): it is linked for lazy binding (the judge's ~100 calls into
 * the C library are resolved at their first use, which only a denial
 * reaches; libcredfence.so binds all at load, as its exec path between fork
 * and exec needs), with two segments instead of four, and runs no dlsym at
 * load (denied.c). Nothing here runs between fork and exec on a launch. */
#include "shim.h"

struct cf_shim cf_shim; /* role CF_ROLE_PASS: no harness loads this library */

__attribute__((constructor)) static void cf_fenced_init(void)
{
	__atomic_store_n(&cf_shim.ready, true, __ATOMIC_RELEASE);
}
