/* The agent harnesses credfence recognises by the name of their command, so
 * that `credfence run -- claude` can point to `credfence harness` (cli/run.c).
 * Portable, no state. */
#ifndef CF_HARNESS_NAMES_H
#define CF_HARNESS_NAMES_H

/* The product name of the harness that ARGV0 starts ("Claude Code"), judged
 * by its last path component; NULL when ARGV0 is no harness credfence knows. */
const char *cf_known_harness(const char *argv0);

#endif
