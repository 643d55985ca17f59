/* The table of files that the user's own tools, running unfenced, later
 * execute or obey: a fenced command that wrote one would run code outside the
 * fence. Inside every writable location they are write-protected (Linux: a
 * read-only mount over each, in the mount namespace of the fenced tree).
 * Beside the secret table (secrets.h), in the same style; every backend and
 * `credfence check` read this table and nothing else. */
#ifndef CF_PROTECTED_H
#define CF_PROTECTED_H

#include <stdbool.h>
#include <stddef.h>

enum cf_protected_base {
	CF_PROT_PROJECT, /* relative to a project root (a writable location, the
			    working directory and its ancestors inside one, or a
			    directory directly below one) */
	CF_PROT_HOME,    /* relative to home; counts only where home's path lies
			    inside a writable location */
	CF_PROT_GIT,     /* found by common/git_layout.c in git's own files, from
			    each project root's .git: REL is the name relative
			    to a git directory (or the kind of file, for a path
			    a repository's files name); not matched by name */
};

enum cf_protected_kind {
	CF_PROT_DIR,
	CF_PROT_FILE,
};

struct cf_protected_row {
	const char *rel;    /* relative to its base, no leading or trailing '/' */
	enum cf_protected_base base;
	enum cf_protected_kind kind;
	const char *runs;   /* who runs it, as users read it: "git hooks" */
	const char *source; /* where the tool documents that it runs it */
	bool placeholder;   /* when absent, an empty read-only directory stands
			       in for it (its parent must exist), or for a file
			       row a file holding FILL */
	const char *fill;   /* a file placeholder's content: one git reads as
			       the absence of the file (NULL for the rest) */
	bool private_copy;  /* a cache a tool later executes from: not held
			       read-only (the tool would fail inside) but given
			       to the fence as a private copy (Linux: an overlay
			       whose upper layer lives in the fence's own tmpfs),
			       made (with its parents) when absent */
};

extern const struct cf_protected_row cf_protected_table[];
extern const size_t cf_protected_count;

/* The CF_PROT_GIT row named REL (asserted to exist by the tests). */
const struct cf_protected_row *cf_protected_git_row(const char *rel);

#endif
