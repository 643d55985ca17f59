/* Test fixtures shared by every test area (common, enforce, shim, tools).
 *
 * A fixture is a fresh directory of its own under the fixture root, which
 * must lie outside every writable default (/tmp, /var/tmp, /dev/shm, $TMPDIR)
 * and outside the checkout and the build tree. The root is per user:
 * $CREDFENCE_TEST_ROOT, else /var/lib/credfence-tests/uid-N (a root run makes
 * /var/lib/credfence-tests sticky and open to all, like /tmp), else
 * $XDG_RUNTIME_DIR/credfence-tests; with none, every test skips with the reason
 * (fails under CI=true). Each fixture is removed at teardown; the empty
 * per-user directory stays. Inside a fixture:
 *
 *   ROOT/home   a fake home with a fake key at EVERY row of cf_secret_table
 *               (a directory row gets a file inside, e.g. .ssh/id_ed25519), each
 *               holding its own marker "CFMARK-<random>-<location>", plus the
 *               non-secrets .bashrc, notes.txt, .cache/ and .npm/
 *   ROOT/ws     the workspace, beside the home (never above it)
 *
 * Every helper asserts (criterion) on failure, so a test reads straight on.
 * Real credentials of the machine are never touched: only paths under ROOT
 * are created, read or removed. */
#ifndef CF_TEST_FIXTURE_H
#define CF_TEST_FIXTURE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define CF_FX_MAX_SECRETS 96

struct cf_fx_secret {
	const char *rel;     /* the table row, relative to home */
	char path[PATH_MAX]; /* home/rel */
	char key[PATH_MAX];  /* the file holding the marker: path itself, or a file inside */
	char marker[160];    /* unique: tag + "-" + rel with '/' and '.' as '_' */
	bool is_dir;
};

struct cf_fx {
	char root[PATH_MAX];      /* this fixture's own directory (canonical) */
	char home[PATH_MAX];      /* fake home (root/home) */
	char ws[PATH_MAX];        /* workspace (root/ws) */
	char real_home[PATH_MAX]; /* the account's home, for the toolchains only */
	char tag[32];             /* "CFMARK-<hex>": prefix of every marker */
	size_t n;
	struct cf_fx_secret s[CF_FX_MAX_SECRETS];
};

/* This user's fixture root (made if missing), chosen as above; skips (fails
 * under CI=true) when there is none. */
const char *cf_fx_root_dir(void);
/* Build the fixture; cf_fx_teardown() removes the whole tree. */
void cf_fx_setup(struct cf_fx *fx);
void cf_fx_teardown(struct cf_fx *fx);

/* The fixture secret for table row REL (asserts it exists). */
const struct cf_fx_secret *cf_fx_secret(const struct cf_fx *fx, const char *rel);

/* mkdir -p; write TEXT to PATH (creating parents); read a whole file (malloc'd, or
 * NULL when it can not be opened). */
void cf_fx_mkdirs(const char *path);
void cf_fx_write(const char *path, const char *text);
char *cf_fx_slurp(const char *path);
/* DIR/REL in one of 16 rotating static buffers (valid for the next 15 calls). */
const char *cf_fx_at(const char *dir, const char *rel);
/* snprintf that asserts the result fits. */
void cf_fx_fmt(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Remove a tree (no symlink is followed). */
void cf_fx_rmtree(const char *path);

/* The environment for a program under test: PATH kept, HOME=fx->home, LANG=C,
 * CI kept, and the toolchains of the real account (PYENV_ROOT, RUSTUP_HOME,
 * CARGO_HOME from the environment or the account's real home) so that the pyenv
 * shim python3 and the rustup proxies work with a fake HOME. EXTRA ("NAME=value",
 * NULL-terminated, may be NULL) is added last and replaces same-named entries.
 * Free with cf_fx_env_free(). */
char **cf_fx_env(const struct cf_fx *fx, const char *const *extra);
void cf_fx_env_free(char **env);

/* A finished program: status is the exit code, or 128 + signal. */
struct cf_fx_out {
	int status;
	char *out, *err; /* NUL-terminated captured stdout and stderr */
};

/* fork/exec ARGV (PATH searched) in CWD (NULL: unchanged) with ENVP (NULL: ours),
 * STDIN_TEXT fed to its stdin (NULL: /dev/null). Killed after 120 s (times CF_TIMEOUT_SCALE, meson -Dtest_timeout_scale). */
void cf_fx_run(struct cf_fx_out *o, const char *cwd, char *const envp[], const char *stdin_text,
	       char *const argv[]);
void cf_fx_out_free(struct cf_fx_out *o);
#define CF_ARGV(...) ((char *const[]){__VA_ARGS__, NULL})

/* Run "$CREDFENCE_BIN SUB --home fx->home --workspace fx->ws ARGS..." in fx->ws
 * with cf_fx_env(fx, ENV_EXTRA). ARGS is NULL-terminated (options, "--", CMD...). */
void cf_fx_credfence(struct cf_fx_out *o, const struct cf_fx *fx, const char *sub,
		     const char *const *env_extra, char *const args[]);

/* Assert that no marker of FX (nor any part of its tag) is in stdout or stderr. */
void cf_fx_assert_no_marker(const struct cf_fx *fx, const struct cf_fx_out *o);

/* The credfence under test: the copy in the fixture root (ROOT/bin, its shim
 * in ROOT/lib) once a fixture is set up, else $CREDFENCE_BIN (asserts it is set). */
const char *cf_fx_bin(void);

/* A copy of the program PATH (a test helper in the build tree) at
 * fx->root/bin/NAME (NAME: PATH's last component), for a program that runs as
 * another user (UID, GID): the build tree may lie where that user can not
 * reach it (a checkout under a 0700 directory). Checked in a child with that
 * user's ids: a copy it can not execute skips (fails under CI=true) with the
 * reason, instead of reading as a finding of the test. */
const char *cf_fx_helper_for(const struct cf_fx *fx, const char *path, unsigned uid, unsigned gid);

/* CI=true in the environment. */
bool cf_test_ci(void);
/* Skip (locally) or fail (CI=true) with the formatted reason. Does not return. */
void cf_test_unavailable(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Skip with the formatted reason, under CI=true too: for a case that does not
 * apply here and that another test covers (never for a missing mechanism:
 * cf_test_unavailable). The live fixtures are torn down first: a skipped
 * test gets no .fini, and one left behind fails tests/lib/as-user.sh. */
void cf_test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Landlock can be applied here (probed in a child), else skip/fail as above. */
void cf_test_require_landlock(void);
/* The build honours CF_TEST_USERNS (meson -Dtest_userns_switch=true), else
 * skip/fail as above. */
void cf_test_require_userns_switch(void);
/* NAME is an executable on PATH (or an absolute path); its full path is returned.
 * Missing: skip locally, fail under CI=true (scripts/setup installs the tools). */
const char *cf_test_require_tool(const char *name);

#endif
