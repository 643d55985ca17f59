/* Path helpers: canonicalization that records where it looked, containment. */
#ifndef CF_PATHS_H
#define CF_PATHS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Called with each directory in which canonicalization looked a name up. */
typedef void (*cf_lookup_fn)(void *ctx, const char *dir);

/* Resolve PATH to its canonical absolute form. Existing components have their
 * symlinks resolved (a dangling link resolves to its target); components that do
 * not exist are kept by name, with "." and ".." applied lexically. A relative
 * PATH is taken against BASE (absolute). Returns 0 or -errno (-ELOOP,
 * -ENAMETOOLONG, -EINVAL for a relative path without BASE). With LOOKUP NULL it
 * allocates nothing and uses raw system calls on Linux: safe between fork and exec.
 * It needs about 16 KiB of stack. */
int cf_canon(const char *path, const char *base, char *out, size_t outsz,
	     cf_lookup_fn lookup, void *ctx);

/* The same, calling LINK (may be NULL) with the path of each symlink it
 * follows, as found: its directory resolved, its own name kept. A symlink
 * lying where a fenced program may write can be retargeted after this call,
 * so the caller judges where each one lies. */
int cf_canon_links(const char *path, const char *base, char *out, size_t outsz,
		   cf_lookup_fn lookup, cf_lookup_fn link, void *ctx);

/* True when PATH is DIR or lies under it. Both canonical. */
bool cf_path_within(const char *path, const char *dir);

/* A 64-bit FNV-1a hash of PATH, never 0 (0 marks a free slot): the tables
 * that say a denied path once (the shim's notice, the supervisor's log line)
 * key on it. */
uint64_t cf_path_hash(const char *path);

/* Writes the parent of a canonical PATH ("/" for "/x"). */
void cf_path_parent(const char *path, char *out, size_t outsz);

/* The last component of a canonical path (points into PATH). */
const char *cf_path_base(const char *path);

/* The number of components of a canonical absolute path ("/" has 0). */
size_t cf_path_depth(const char *path);


#endif
