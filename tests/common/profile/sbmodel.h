/* A model of how Seatbelt decides a file operation, for the profiles
 * common/profile.c writes: default allow, the LAST matching rule wins, path
 * filters subpath / literal of a parameter, and (require-all (subpath P)
 * (regex #"RE")) with RE compiled by POSIX regcomp. Parsing a profile asserts
 * that every line has one of the shapes the profile may have, so a line of
 * another shape (a pasted path, say) fails the test that loads it. */
#ifndef CF_SBMODEL_H
#define CF_SBMODEL_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "profile.h"

enum sb_filter { SB_ANY, SB_SUBPATH, SB_LITERAL, SB_SUBPATH_REGEX };

struct sb_rule {
	bool allow;
	char ops[4][32];
	size_t n_ops;
	enum sb_filter filter;
	char key[16];
	const char *path; /* the parameter's value */
	regex_t re;
};

struct sb_model {
	struct sb_rule *r;
	size_t n;
};

void sb_load(struct sb_model *m, const struct cf_profile *pf);
void sb_free(struct sb_model *m);

/* Whether OP ("file-read-data", "file-write-create", "file-write-unlink",
 * "file-link", ...) on the canonical PATH is allowed. */
bool sb_allowed(const struct sb_model *m, const char *op, const char *path);

/* The index of the rule that decides, or -1 when none but the default. */
long sb_deciding(const struct sb_model *m, const char *op, const char *path);

#endif
