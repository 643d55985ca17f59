/* The harness role's rules of following (SECURITY.md, "Which processes are
 * the harness"): learnt in the harness's constructor (follow.c), read by its
 * children between fork and exec (child.c), which then execute the harness
 * again unfenced. */
#ifndef CF_SHIM_FOLLOW_H
#define CF_SHIM_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>

/* A file as the kernel names it: what an exec runs, whatever its path. */
struct cf_file_id {
	unsigned maj, min;
	unsigned long long ino;
};

/* Set once by cf_shim_follow_init, in the harness's constructor, before any
 * thread: read only afterwards (children read it between fork and exec). */
struct cf_follow {
	bool any;                    /* a rule can match */
	bool interpreted;            /* rule (a) */
	struct cf_file_id exe;       /* the harness's interpreter */
	char *script_abs;            /* its script as given, made absolute */
	char *script_canon;          /* the same, canonical */
	struct cf_file_id *programs; /* rule (b) */
	size_t n_programs;
	char **opts;                 /* the harness's CREDFENCE_* at its start, less the marker */
	size_t n_opts;
	char *preload;               /* its LD_PRELOAD entry at its start */
};
extern struct cf_follow cf_shim_follow;

/* In the child too (child.c): raw system calls and the stack only. */

/* DIRFD/PATH's identity (statx with FLAGS) into *ID, and whether it is a
 * regular file; false when it can not be had. */
bool cf_shim_file_id(int dirfd, const char *path, int flags, struct cf_file_id *id,
		     bool *regular);
/* The first operand of ARGV (after argv[0]): the first argument that is not
 * an option, or the one after "--". Options with a separate value (-X utf8)
 * make their value the operand: it then names no script, and the child is
 * fenced (fail closed). NULL when there is none. */
const char *cf_shim_first_operand(char *const argv[]);

#endif
