/* Environment cases shared by the unit tests of common/secret_env.c and the
 * tests of each way in (issue 20): fake secret variables, one for each known
 * name, two for each name pattern (as written and in lower case), one for
 * each token prefix under an innocent name, a URL with a password under an
 * innocent name; and the ordinary variables of
 * developer tools that must pass unchanged. Every fake value holds the
 * fixture's tag (upper case for AWS key ids, whose alphabet has no lower
 * case), so that cf_fx_assert_no_marker catches most leaks by itself. */
#ifndef CF_TEST_ENVCASES_H
#define CF_TEST_ENVCASES_H

#include <stdbool.h>
#include <stddef.h>

struct cf_envcase {
	char *entry;      /* "NAME=value", malloc'd */
	const char *why;  /* which rule should withhold it, for messages */
};

/* The fake secrets for TAG (the fixture's "CFMARK-<hex>"); *N gets the count.
 * Free with cf_envcases_free. */
struct cf_envcase *cf_envcases_secrets(const char *tag, size_t *n);
void cf_envcases_free(struct cf_envcase *c, size_t n);

struct cf_env_ordinary {
	const char *name;
	bool safe; /* a made-up value harms no program: the tests of each way in
		      set it ("NAME=cf-ordinary-NAME"); the others (PATH, HOME,
		      relocations of secrets) keep the fixture's value */
};
extern const struct cf_env_ordinary cf_env_ordinary[];
extern const size_t cf_env_ordinary_count;

/* The value a safe ordinary variable gets: "cf-ordinary-" + NAME, in one of
 * 4 rotating static buffers. */
const char *cf_env_ordinary_entry(const char *name);

#endif
