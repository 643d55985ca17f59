/* The recursion guard: a replacement that is entered from inside another one
 * on the same thread (execvp -> execve, our posix_spawn -> anything libSystem
 * calls) goes straight to the real function, so a child is fenced once, at the
 * outermost call, and no call loops back into the shim. */
#ifndef CF_DARWIN_GUARD_H
#define CF_DARWIN_GUARD_H

#include <stdbool.h>

extern __thread int cf_darwin_depth;

/* True when the calling thread is already inside a replacement. Pair every
 * call with cf_guard_leave(), nested or not. */
static inline bool cf_guard_enter(void)
{
	return cf_darwin_depth++ > 0;
}

static inline void cf_guard_leave(void)
{
	cf_darwin_depth--;
}

#endif
