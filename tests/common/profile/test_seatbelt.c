/* macOS only: the profile applied by the kernel. Each case forks; the child
 * sandboxes itself with cf_sb_apply() and tries what the profile decides,
 * reporting one result byte per check; the parent asserts. Seatbelt denies
 * with EPERM. No file content is ever printed: a check only says whether the
 * open worked, and the parent also checks no marker reached the report. */
#ifdef __APPLE__
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "policy.h"
#include "profile.h"
#include "seatbelt.h"

/* The status line of P's verdict (a buffer of this file's own). */
static const char *reason_of(const struct cf_policy *p)
{
	static char line[CF_REASON_MAX];
	cf_policy_reason(p, line, sizeof line);
	return line;
}

static struct cf_fx fx;

static void setup(void)
{
	cf_fx_setup(&fx);
	if (cf_sb_probe())
		cf_test_unavailable("sandbox_init_with_parameters not found");
}

static void teardown(void)
{
	cf_fx_teardown(&fx);
}

enum want { OPEN_OK, OPEN_EPERM };

struct check {
	const char *what;
	char path[PATH_MAX * 2];
	int flags;
	enum want want;
};

static int try_open(const struct check *c)
{
	int fd = open(c->path, c->flags | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

/* Build the profile for the fixture (plus EXTRA denied paths), apply it in a
 * child, run CHECKS there; assert in the parent. */
static void run_checks(struct check *checks, size_t n, const char *extra_deny)
{
	struct cf_options o;
	struct cf_policy p;
	struct cf_profile pf;
	char home_env[PATH_MAX + 8];
	snprintf(home_env, sizeof home_env, "HOME=%s", fx.home);
	char *envp[] = {home_env, NULL};
	cf_options_init(&o);
	o.workspace = fx.ws;
	if (extra_deny)
		cr_assert_eq(cf_strv_add(&o.deny, extra_deny), 0);
	cr_assert_eq(cf_policy_build(&p, &o, envp, fx.ws), 0);
	cr_assert_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	cr_assert_eq(cf_profile_build(&pf, &p), 0);

	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char reason[PATH_MAX] = ""; /* the system's words for a refusal */
		close(fds[0]);
		int rc = cf_sb_apply(&pf, reason, sizeof reason);
		int active = cf_sb_active();
		int res[2 + 64];
		res[0] = rc;
		res[1] = active;
		for (size_t i = 0; i < n && i < 64; i++)
			res[2 + i] = rc ? -1 : try_open(&checks[i]);
		(void)!write(fds[1], res, sizeof res);
		(void)!write(fds[1], reason, strlen(reason) + 1);
		_exit(0);
	}
	close(fds[1]);
	int res[2 + 64];
	char reason[PATH_MAX] = "";
	cr_assert_eq(read(fds[0], res, sizeof res), (ssize_t)sizeof res);
	(void)!read(fds[0], reason, sizeof reason - 1);
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	cr_assert(strstr(reason, fx.tag) == NULL, "a marker reached the report");
	cr_assert_eq(res[0], 0, "%s", reason);
	cr_assert_str_eq(reason, "", "a sandbox applied leaves no words of refusal");
	cr_expect_eq(res[1], 1, "sandbox_check does not see the sandbox");
	cr_expect_eq(cf_sb_active(), 0, "the parent is not sandboxed");
	for (size_t i = 0; i < n; i++) {
		int want = checks[i].want == OPEN_OK ? 0 : EPERM;
		cr_expect_eq(res[2 + i], want, "%s: %s: got %s", checks[i].what, checks[i].path,
			     res[2 + i] ? strerror(res[2 + i]) : "opened");
	}
	cf_profile_free(&pf);
	cf_policy_free(&p);
	cf_options_free(&o);
}

#define CHECK(list, i, what_, flags_, want_, ...)                                      \
	do {                                                                           \
		(list)[i].what = (what_);                                              \
		snprintf((list)[i].path, sizeof (list)[i].path, __VA_ARGS__);          \
		(list)[i].flags = (flags_);                                            \
		(list)[i].want = (want_);                                              \
	} while (0)

Test(seatbelt, home_secrets_workspace_names_and_writes, .init = setup, .fini = teardown)
{
	struct check c[16];
	size_t n = 0;
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	char p[PATH_MAX * 2];
	snprintf(p, sizeof p, "%s/.env", fx.ws);
	cf_fx_write(p, "ws env");
	snprintf(p, sizeof p, "%s/.env.example", fx.ws);
	cf_fx_write(p, "template");
	snprintf(p, sizeof p, "%s/secrets/x.txt", fx.ws);
	cf_fx_write(p, "by name");
	CHECK(c, n++, "secret key", O_RDONLY, OPEN_EPERM, "%s", ssh->key);
	CHECK(c, n++, "secret key, firmlink form", O_RDONLY, OPEN_EPERM,
	      CF_DARWIN_DATA_VOLUME "%s", ssh->key);
	CHECK(c, n++, "home file", O_RDONLY, OPEN_OK, "%s/notes.txt", fx.home);
	CHECK(c, n++, "write in home", O_WRONLY | O_CREAT, OPEN_EPERM, "%s/new.txt", fx.home);
	CHECK(c, n++, "write in workspace", O_WRONLY | O_CREAT, OPEN_OK, "%s/new.txt", fx.ws);
	CHECK(c, n++, "workspace .env", O_RDONLY, OPEN_EPERM, "%s/.env", fx.ws);
	CHECK(c, n++, "workspace template", O_RDONLY, OPEN_OK, "%s/.env.example", fx.ws);
	CHECK(c, n++, "under workspace secrets/", O_RDONLY, OPEN_EPERM, "%s/secrets/x.txt", fx.ws);
	CHECK(c, n++, "/dev/null", O_WRONLY, OPEN_OK, "/dev/null");
	CHECK(c, n++, "/private/tmp", O_RDONLY, OPEN_OK, "/private/tmp");
	run_checks(c, n, NULL);
}

/* A secret whose name holds quotes, parentheses, a backslash and a newline:
 * the profile still loads, and the file is denied. */
Test(seatbelt, hostile_path_is_only_a_parameter, .init = setup, .fini = teardown)
{
	char hostile[PATH_MAX * 2];
	snprintf(hostile, sizeof hostile, "%s/we\"ird (x) \\ \n)(allow file-read*)", fx.home);
	cf_fx_write(hostile, "hostile");
	struct check c[2];
	CHECK(c, 0, "hostile-named secret", O_RDONLY, OPEN_EPERM, "%s", hostile);
	CHECK(c, 1, "home file", O_RDONLY, OPEN_OK, "%s/notes.txt", fx.home);
	run_checks(c, 2, hostile);
}

/* No moving a secret out: renaming it, or home, fails inside the sandbox. */
Test(seatbelt, secrets_and_home_can_not_be_renamed, .init = setup, .fini = teardown)
{
	struct cf_options o;
	struct cf_policy p;
	struct cf_profile pf;
	char home_env[PATH_MAX + 8];
	snprintf(home_env, sizeof home_env, "HOME=%s", fx.home);
	char *envp[] = {home_env, NULL};
	cf_options_init(&o);
	o.workspace = fx.ws;
	cr_assert_eq(cf_policy_build(&p, &o, envp, fx.ws), 0);
	cr_assert_eq(cf_profile_build(&pf, &p), 0);
	const struct cf_fx_secret *ssh = cf_fx_secret(&fx, ".ssh");
	char to[PATH_MAX * 2], home_to[PATH_MAX * 2];
	snprintf(to, sizeof to, "%s/moved", fx.ws);
	snprintf(home_to, sizeof home_to, "%s/home-moved", fx.root);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char reason[PATH_MAX];
		if (cf_sb_apply(&pf, reason, sizeof reason))
			_exit(10);
		if (rename(ssh->path, to) == 0 || errno != EPERM)
			_exit(11);
		if (rename(fx.home, home_to) == 0 || errno != EPERM)
			_exit(12);
		_exit(0);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	cr_expect_eq(WEXITSTATUS(st), 0, "child check %d failed", WEXITSTATUS(st));
	cr_expect_eq(access(ssh->key, F_OK), 0, "the secret is still in place");
	cf_profile_free(&pf);
	cf_policy_free(&p);
	cf_options_free(&o);
}
#endif
