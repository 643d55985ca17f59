/* The one way the shim reaches a real (C library) function on Linux:
 * CF_REAL, on a table of pointers made from a list of interposed.h.
 *
 * A pointer is NULL until it is resolved, by dlsym(RTLD_NEXT): in the
 * harness's constructor for the launch family (init.c), in libcredfence.so's
 * for the open and write families (denied.c), and otherwise at the first
 * call, so that an interposed symbol never jumps through a null pointer,
 * even when it is called before a constructor ran (another library's
 * constructor, an IFUNC resolver). libcredfence-fenced.so has no
 * constructor: a fenced program's start pays for no dlsym (33 of them were
 * some 15 us of each start, issue 36).
 *
 * dlsym is called only in normal context, never from a call that dlsym or
 * malloc make themselves (an open, a stat: those take CF_NO_DLSYM and make
 * the raw system call while the pointer is NULL), and never between fork
 * and exec: the child paths make raw system calls and read what was
 * prepared before the fork (scripts/stack-usage checks it). The exec family
 * has no real function at all (interposed.h). */
#ifndef CF_SHIM_REAL_H
#define CF_SHIM_REAL_H

#include <dlfcn.h>
#include <spawn.h>
#include <stdio.h>

#include "interposed.h"

/* How CF_REAL takes a function that is not resolved yet. */
#define CF_RESOLVE 1  /* resolve it now: a normal context, not reached from dlsym */
#define CF_NO_DLSYM 0 /* give NULL: the caller makes the raw system call */

/* The real NAME from TABLE (a struct of CF_REAL_SLOT members), loaded with
 * acquire order; when NULL and HOW is CF_RESOLVE, resolved now and stored
 * with release order (two threads that race store the same pointer). NULL
 * when it is not resolved yet (CF_NO_DLSYM) or the C library has none. */
#define CF_REAL(table, name, how)                                                                  \
	({                                                                                         \
		__typeof__((table).name) real_ = __atomic_load_n(&(table).name, __ATOMIC_ACQUIRE); \
		if ((how) && !real_) {                                                             \
			real_ = (__typeof__(real_))dlsym(RTLD_NEXT, #name);                        \
			__atomic_store_n(&(table).name, real_, __ATOMIC_RELEASE);                  \
		}                                                                                  \
		real_;                                                                             \
	})

/* A table's member for a row of a list: a pointer of the real one's type. */
#define CF_REAL_SLOT(name, ret, params, ...) ret (*name) params;

/* The launch family's real functions (spawn.c, system.c): for the calls
 * that are not the harness's to make, and in every other role. Resolved in
 * the harness's constructor (init.c), elsewhere at the first call: none of
 * them is async-signal-safe, and most fenced programs never call them. */
struct cf_real_launch {
	CF_LAUNCH_FAMILY(CF_ROW_NONE, CF_REAL_SLOT)
};
extern struct cf_real_launch cf_real_launch;

#endif
