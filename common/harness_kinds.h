/* The harnesses credfence knows (issue 19): recognised from the program
 * `credfence harness` starts, and what each needs to work fenced from its
 * first run with no flag and no edit of its configuration. Beside the table
 * of the files a harness trusts (harness_files.h). */
#ifndef CF_HARNESS_KINDS_H
#define CF_HARNESS_KINDS_H

#include <stdbool.h>
#include <stddef.h>

/* A directory of the harness's own state that its fenced children write:
 * $ENV/LEAF when ENV is set to an absolute path, else HOME/REL. */
struct cf_harness_dir {
	const char *rel;
	const char *env;
	const char *leaf;
};

/* How the shell a harness starts gets its environment. */
enum cf_harness_shell {
	CF_SHELL_INHERITS,     /* the harness's whole environment: the shim comes along */
	CF_SHELL_CODEX_POLICY, /* Codex's shell_environment_policy decides (cli/codex_env.h) */
};

struct cf_harness_kind {
	const char *name;                /* "Claude Code", as harness_files.c names it */
	const char *programs[3];         /* the names that recognise it, NULL ended */
	struct cf_harness_dir state[2];  /* state its children write; rel NULL ends */
	/* The program a node wrapper starts as the real harness, found as node
	 * resolves NATIVE_PKG from the wrapper's directory, at NATIVE_REL in it;
	 * NULL when there is none. */
	const char *native_pkg, *native_rel;
	enum cf_harness_shell shell;
};

extern const struct cf_harness_kind cf_harness_kinds[];
extern const size_t cf_harness_kind_count;

/* The known harness started as ARGV0 (its last path component is compared),
 * or NULL. */
const struct cf_harness_kind *cf_harness_kind(const char *argv0);

/* Where D lies for a harness whose home is HOME in environment ENVP, into
 * OUT (N bytes, absolute, not canonical). 0, or -ENOENT when neither the
 * variable nor HOME gives a place, -ENAMETOOLONG. */
int cf_harness_dir_path(const struct cf_harness_dir *d, const char *home, char *const envp[],
			char *out, size_t n);

/* K's native program for the wrapper WRAPPER (canonical), into OUT: the
 * first executable file of node's lookup of K->native_pkg from the wrapper's
 * directory upwards, then the wrapper package's own copy. 0, or -ENOENT. */
int cf_harness_native(const struct cf_harness_kind *k, const char *wrapper, char *out, size_t n);

#endif
