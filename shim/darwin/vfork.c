/* vfork is fork here. A vfork child shares its parent's memory, and fencing
 * the child before exec means compiling and applying a Seatbelt profile, which
 * allocates: in a vfork child that would change the parent's heap. A fork
 * child owns its memory. A vfork caller may only exec or _exit in the child,
 * which a fork child does just as well; the cost is the copy of the page
 * tables. A wrapper can not call vfork itself (it would return from its own
 * frame in the child), so this is unconditional. */
#include <unistd.h>

#include "interpose.h"

static pid_t cf_darwin_vfork(void)
{
	return fork();
}

CF_INTERPOSE(cf_darwin_vfork, vfork);
