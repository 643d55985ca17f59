/* The files a free harness trusts: what it runs, loads or obeys on its own
 * (hooks, plugins, the environment it applies to itself, where it sends its
 * login token). A fenced program that could change one of them would get
 * past the fence through the harness, so no --harness-state directory may
 * hold one or lie in one (common/policy.c). */
#ifndef CF_HARNESS_FILES_H
#define CF_HARNESS_FILES_H

#include <stddef.h>

struct cf_harness_file {
	const char *harness; /* "Claude Code", ... */
	const char *rel;     /* relative to home */
	const char *env;     /* the variable that moves it (VAR/leaf), or NULL */
	const char *leaf;
	const char *holds;   /* what it holds that the harness obeys */
};

extern const struct cf_harness_file cf_harness_files[];
extern const size_t cf_harness_file_count;

#endif
