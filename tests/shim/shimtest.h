/* What the shim tests share: a fixture with a workspace file that may be read,
 * the helper programs of this directory, and ways to start things as a harness
 * or in self mode. Built on tests/lib/fixture.h. */
#ifndef CF_SHIMTEST_H
#define CF_SHIMTEST_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "fixture.h"

#define ST_ALLOWED_TEXT "allowed-content-ok"

struct st {
	struct cf_fx fx;
	char allowed[PATH_MAX + 32]; /* ws/allowed.txt, holding ST_ALLOWED_TEXT */
	char log[PATH_MAX + 32];/* root/log.jsonl: outside every writable location */
	const char *key;        /* the fake ssh key */
	char *keys;             /* every fake key, ':' separated (malloc'd) */
};

/* Landlock required (skip, or fail under CI=true), then the fixture. */
void st_setup(struct st *t);
void st_teardown(struct st *t);

/* $CREDFENCE_BUILD/REL, and $CREDFENCE_SOURCE/tests/shim/REL (static buffers, 8 in turn). */
const char *st_build(const char *rel);
const char *st_src(const char *rel);
const char *st_shim(void);

/* The fixture's environment plus CF_T_KEY, CF_T_KEYS, CF_T_ALLOWED, CF_T_PROBE,
 * CF_T_ROOT, CF_T_OWN (an agent's login: the harness itself may read it), and EXTRA (NULL-terminated, may be NULL). Free with cf_fx_env_free. */
char **st_env(const struct st *t, const char *const *extra);

/* `credfence harness --home H --workspace WS [OPTS...] -- CMD...` in WS, with
 * ENVP (NULL: st_env(t, NULL)). OPTS and CMD are NULL-terminated. */
void st_harness(struct cf_fx_out *o, const struct st *t, char *const envp[],
		const char *const *opts, char *const cmd[]);

/* Occurrences of NEEDLE in HAY. */
size_t st_count(const char *hay, const char *needle);
/* A refusal as a fenced child meets it: "Permission denied" (Landlock,
 * EACCES) or "Read-only file system" (a write outside the writable
 * locations, in the mount namespace of the fenced tree: EROFS). */
#define st_count_denied(hay) (st_count((hay), "Permission denied") + \
			      st_count((hay), "Read-only file system"))
#define st_has_denied(hay) (strstr((hay), "Permission denied") || \
			    strstr((hay), "Read-only file system"))

/* Lines of the log holding "sandbox_status" (0 when there is no log). */
size_t st_log_lines(const struct st *t, const char *also);

/* Print a run's output into the test log (criterion shows it on failure). */
void st_dump(const char *what, const struct cf_fx_out *o);

/* Assert the standard outcome of a harness script, in stdout and stderr
 * together: exactly N lines "CASE ..." each with deny=1 legit=0, at least N
 * times "Permission denied" (EACCES), N_ALLOWED copies of the allowed text,
 * the harness read its own login (HARNESS_READ ok) when HARNESS_READS, no
 * HARNESS_DENIED bad (the harness read the key itself), and no marker anywhere. */
void st_assert_cases(const struct st *t, const struct cf_fx_out *o, size_t n, size_t n_allowed,
		     bool harness_reads);

#endif
