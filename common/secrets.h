/* The one table of secret locations. Every backend reads this and nothing else. */
#ifndef CF_SECRETS_H
#define CF_SECRETS_H

#include <stdbool.h>
#include <stddef.h>

/* How an environment variable relocates a row. */
enum cf_reloc {
	CF_RELOC_NONE, /* no variable relocates this row */
	CF_RELOC_PATH, /* the variable is the location itself */
	CF_RELOC_LIST, /* the variable is a colon list of locations */
	CF_RELOC_JOIN, /* the variable is a directory; the location is VAR/leaf */
};

struct cf_secret_row {
	const char *rel;   /* relative to home */
	const char *holds; /* what it holds, shown by `credfence status` */
	const char *env;   /* variable that relocates it, or NULL */
	enum cf_reloc reloc;
	const char *leaf;  /* for CF_RELOC_JOIN */
	bool agent_login;  /* a coding agent's own login: the harness may read it
			      (enforce/linux/mountns/harness_guard.h), its children never */
};

extern const struct cf_secret_row cf_secret_table[];
extern const size_t cf_secret_count;

/* Rows whose rel starts with this prefix are also denied under $XDG_CONFIG_HOME. */
#define CF_XDG_CONFIG_PREFIX ".config/"

#endif
