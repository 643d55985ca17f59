#include "guard.h"

/* How deep the calling thread is inside replacements. A fork child inherits
 * its thread's count, which is what it should see: it is still inside. */
__thread int cf_darwin_depth;
