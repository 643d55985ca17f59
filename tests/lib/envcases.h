/* Environment cases shared by the unit tests of common/secret_env.c and the
 * tests of each way in (issues 20 and 35):
 * - fake secret variables: one for each known name; two for each name
 *   prefix (as written and in lower case); several for each name word
 *   (CFX_PASSWORD, cfy_password, CFXPASSWORDCFX, cfxApiKey, ...); for each
 *   value shape of env_shapes.c a value of that shape under an innocent
 *   name, alone and inside a longer value; and every `withheld` line of
 *   tests/corpus/env-secrets.txt;
 * - the ordinary variables of developer tools that must pass unchanged
 *   (cf_env_ordinary, and the corpus's `passes` and `unit` lines).
 * Every fake value is made from the fixture's tag, so that each fixture's
 * values differ and a leak is found by the value itself; most hold the tag
 * whole, so that cf_fx_assert_no_marker catches them too. */
#ifndef CF_TEST_ENVCASES_H
#define CF_TEST_ENVCASES_H

#include <stdbool.h>
#include <stddef.h>

struct cf_envcase {
	char *entry;      /* "NAME=value", malloc'd */
	const char *why;  /* which rule should withhold it, for messages */
};

/* The fake secrets for TAG (the fixture's "CFMARK-<hex>"); *N gets the count.
 * The corpus is read from $CREDFENCE_SOURCE/tests/corpus/env-secrets.txt
 * (aborts without it). Free with cf_envcases_free. */
struct cf_envcase *cf_envcases_secrets(const char *tag, size_t *n);

/* The corpus's variables that hold no secret: its `passes` lines, and with
 * UNIT its `unit` lines too (why: "passes" or "unit"). */
struct cf_envcase *cf_envcases_passing(const char *tag, bool unit, size_t *n);

void cf_envcases_free(struct cf_envcase *c, size_t n);

/* A value of SHAPE (env_shapes.h notation) made from TAG and SALT, into OUT
 * (CAP bytes, cut to fit). */
void cf_envcases_shape_value(const char *shape, const char *tag, unsigned salt, char *out,
			     size_t cap);

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
