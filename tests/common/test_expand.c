/* The deny-to-allow expansion over temporary trees. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expand.h"
#include "fixture.h"
#include "paths.h"
#include "policy.h"

/* The status line of P's verdict (a buffer of this file's own). */
static const char *reason_of(const struct cf_policy *p)
{
	static char line[CF_REASON_MAX];
	cf_policy_reason(p, line, sizeof line);
	return line;
}

struct rule {
	char path[PATH_MAX];
	int is_dir;
	enum cf_rule_kind kind;
	mode_t mode;
};

struct rules {
	struct rule *v;
	size_t n;
	int fail_at; /* > 0: return -EIO at that call */
};

static int record(void *vctx, int fd, int is_dir, enum cf_rule_kind kind)
{
	struct rules *r = vctx;
	if (r->fail_at && (int)r->n + 1 == r->fail_at)
		return -EIO;
	r->v = realloc(r->v, (r->n + 1) * sizeof *r->v);
	cr_assert(r->v);
	struct rule *x = &r->v[r->n++];
	char link[64];
	struct stat st;
	cf_fx_fmt(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, x->path, sizeof x->path - 1);
	cr_assert(n > 0);
	x->path[n] = '\0';
	cr_assert(fstat(fd, &st) == 0);
	x->mode = st.st_mode;
	x->is_dir = is_dir;
	x->kind = kind;
	return 0;
}

static const struct rule *find(const struct rules *r, const char *path, enum cf_rule_kind kind)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].path, path) == 0 && r->v[i].kind == kind)
			return &r->v[i];
	return NULL;
}

static bool any_rule(const struct rules *r, const char *path)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].path, path) == 0)
			return true;
	return false;
}

static struct cf_fx fx;
static struct cf_options o;
static struct cf_policy p;
static struct cf_plan pl;
static struct rules got;
static char buf[16384];

#define at cf_fx_at

static void setup(void)
{
	cf_fx_setup(&fx);
	cf_fx_mkdirs(at(fx.home, ".config/other"));
	cr_assert(symlink(at(fx.home, "notes.txt"), at(fx.home, "link")) == 0);
	cr_assert(symlink("/etc", at(fx.home, "dirlink")) == 0);
	cf_options_init(&o);
	o.home = fx.home;
	o.workspace = fx.ws;
	char *envp[] = {NULL};
	cr_assert_eq(cf_policy_build(&p, &o, envp, fx.ws), 0);
	cr_assert_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	cr_assert_eq(cf_plan_prepare(&pl, &p), 0);
	memset(&got, 0, sizeof got);
}

static void teardown(void)
{
	free(got.v);
	cf_plan_free(&pl);
	cf_policy_free(&p);
	cf_options_free(&o);
	cf_fx_teardown(&fx);
}

TestSuite(expand, .init = setup, .fini = teardown, .timeout = 30 * CF_TIMEOUT_SCALE);

static void expand_all(void)
{
	struct cf_expand_result res;
	int rc = cf_expand(&pl, buf, sizeof buf, record, &got, &res, NULL);
	cr_assert_eq(rc, 0, "cf_expand: %d", rc);
	cr_expect_eq(res.rules, got.n, "the rule count is the number of callbacks");
	cr_expect_null(res.over_dir);
}

Test(expand, plan_has_every_ancestor_and_skips_secrets_and_ancestors)
{
	const struct cf_ancestor *home = NULL;
	bool root = false;
	for (size_t i = 0; i < pl.n_anc; i++) {
		if (strcmp(pl.anc[i].path, fx.home) == 0)
			home = &pl.anc[i];
		root = root || strcmp(pl.anc[i].path, "/") == 0;
	}
	cr_assert(home, "the home is an ancestor");
	cr_expect(root, "/ is an ancestor");
	const char *must[] = {".ssh", ".aws", ".config", ".local", ".docker", ".cargo", ".netrc"};
	for (size_t k = 0; k < sizeof must / sizeof *must; k++) {
		bool seen = false;
		for (size_t j = 0; j < home->n_skip; j++)
			seen = seen || strcmp(home->skip[j], must[k]) == 0;
		cr_expect(seen, "%s is skipped in home", must[k]);
	}
	for (size_t j = 0; j < home->n_skip; j++)
		cr_expect(strcmp(home->skip[j], "notes.txt") != 0);
	for (size_t i = 0; i < pl.n_anc; i++)
		for (size_t j = 0; j < pl.n_anc; j++)
			cr_expect(i == j || strcmp(pl.anc[i].path, pl.anc[j].path) != 0);
}

Test(expand, siblings_are_allowed_read_only)
{
	expand_all();
	const struct rule *r = find(&got, at(fx.home, "notes.txt"), CF_RULE_READ);
	cr_expect(r && !r->is_dir, "notes.txt: a read rule for a file");
	r = find(&got, at(fx.home, ".bashrc"), CF_RULE_READ);
	cr_expect(r && !r->is_dir, ".bashrc: a read rule for a file");
	r = find(&got, at(fx.home, ".config/other"), CF_RULE_READ);
	cr_expect(r && r->is_dir, ".config/other: a read rule for a directory");
	r = find(&got, at(fx.home, ".aws/credentials"), CF_RULE_READ);
	cr_expect_null(r, "inside a secret: no rule");
	cr_expect(find(&got, "/usr", CF_RULE_READ), "siblings of / are allowed");
	cr_expect(find(&got, fx.ws, CF_RULE_WRITE), "the workspace is writable");
	cr_expect(find(&got, "/tmp", CF_RULE_WRITE));
	cr_expect(find(&got, "/dev/null", CF_RULE_DEV));
	cr_expect(find(&got, "/dev/shm", CF_RULE_WRITE), "/dev/shm stays writable");
	cr_expect(find(&got, at(fx.home, ".cache"), CF_RULE_WRITE));
}

Test(expand, secrets_and_ancestors_get_no_rule)
{
	expand_all();
	const char *none[] = {"/", fx.root, fx.home, at(fx.home, ".config"), at(fx.home, ".local"),
			      at(fx.home, ".local/share")};
	for (size_t i = 0; i < sizeof none / sizeof *none; i++)
		cr_expect(!any_rule(&got, none[i]), "ancestor %s got a rule", none[i]);
	for (size_t s = 0; s < p.n_denied; s++)
		for (size_t i = 0; i < got.n; i++)
			cr_expect(!cf_path_within(p.denied[s].path, got.v[i].path),
				  "rule %s covers secret %s", got.v[i].path, p.denied[s].path);
}

Test(expand, symlink_entries_are_skipped)
{
	expand_all();
	cr_expect(!any_rule(&got, at(fx.home, "link")));
	cr_expect(!any_rule(&got, at(fx.home, "dirlink")));
	for (size_t i = 0; i < got.n; i++)
		cr_expect(!S_ISLNK(got.v[i].mode), "a rule for the symlink %s", got.v[i].path);
}

Test(expand, dir_flag_matches_the_entry)
{
	expand_all();
	cr_assert_gt(got.n, 5);
	for (size_t i = 0; i < got.n; i++)
		cr_expect_eq(got.v[i].is_dir, S_ISDIR(got.v[i].mode) ? 1 : 0, "%s", got.v[i].path);
}

/* The rules inside this fixture (other tests add and remove siblings of it). */
static size_t ours(const struct rules *r, const struct rule **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		if (cf_path_within(r->v[i].path, fx.root) && n < max)
			out[n++] = &r->v[i];
	return n;
}

Test(expand, small_buffer_gives_the_same_rules)
{
	expand_all();
	struct rules small = {0};
	struct cf_expand_result res;
	char tiny[512];
	cr_assert_eq(cf_expand(&pl, tiny, sizeof tiny, record, &small, &res, NULL), 0);
	const struct rule *a[256], *b[256];
	size_t na = ours(&got, a, 256), nb = ours(&small, b, 256);
	cr_expect_gt(na, 5);
	cr_expect_eq(na, nb);
	for (size_t i = 0; i < na && i < nb; i++)
		cr_expect_str_eq(a[i]->path, b[i]->path);
	free(small.v);
}

Test(expand, callback_error_stops_the_walk)
{
	struct cf_expand_result res;
	got.fail_at = 3;
	cr_expect_eq(cf_expand(&pl, buf, sizeof buf, record, &got, &res, NULL), -EIO);
	cr_expect_eq(got.n, 2);
}

Test(expand, missing_writable_and_ancestor_are_not_errors)
{
	expand_all();
	cr_expect(!any_rule(&got, at(fx.home, ".cargo/registry")), "does not exist: no rule");
	struct cf_ancestor a = {.path = at(fx.root, "no/such/dir")};
	struct cf_plan one = {.anc = &a, .n_anc = 1, .max_entries = 10};
	struct cf_expand_result res;
	struct rules r = {0};
	cr_expect_eq(cf_expand(&one, buf, sizeof buf, record, &r, &res, NULL), 0);
	cr_expect_eq(r.n, 0);
	free(r.v);
}

/* A directory D with ten files and one secret name, as its only ancestor. */
static size_t bound(size_t max, int *rc, struct cf_expand_result *res)
{
	const char *d = at(fx.root, "wide");
	for (int i = 0; i < 10; i++) {
		char name[32];
		cf_fx_fmt(name, sizeof name, "f%d", i);
		cf_fx_write(at(d, name), "x\n");
	}
	cf_fx_write(at(d, "secret"), "s\n");
	static char dir[PATH_MAX];
	cf_fx_fmt(dir, sizeof dir, "%s", d);
	static const char *const skip[] = {"secret"};
	struct cf_ancestor a = {.path = dir, .skip = skip, .n_skip = 1};
	struct cf_plan one = {.anc = &a, .n_anc = 1, .max_entries = max};
	struct rules r = {0};
	*rc = cf_expand(&one, buf, sizeof buf, record, &r, res, NULL);
	for (size_t i = 0; i < r.n; i++)
		cr_expect(strcmp(cf_path_base(r.v[i].path), "secret") != 0);
	size_t n = r.n;
	free(r.v);
	return n;
}

Test(expand, bound_at_the_limit_is_fine)
{
	int rc;
	struct cf_expand_result res;
	size_t n = bound(11, &rc, &res);
	cr_expect_eq(rc, 0);
	cr_expect_eq(n, 10, "every entry but the secret");
	cr_expect_null(res.over_dir);
}

Test(expand, bound_exceeded_gives_etoomany_with_dir_and_count)
{
	int rc;
	struct cf_expand_result res;
	bound(10, &rc, &res);
	cr_expect_eq(rc, CF_ERR(CF_ERR_TOOMANY, 0));
	cr_assert_not_null(res.over_dir);
	cr_expect_str_eq(res.over_dir, at(fx.root, "wide"));
	cr_expect_eq(res.over_count, 11);
}

/* Stamps alike: the fence (enforce/linux/fence.c, cf_stamp_equal) compares
 * these with its own stamps of the same paths; tests/enforce/reuse. */
static bool same_stamp(const struct cf_stamp *a, const struct cf_stamp *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec &&
	       a->ctime_sec == b->ctime_sec && a->ctime_nsec == b->ctime_nsec;
}

Test(expand, stamps_change_when_an_ancestor_changes)
{
	struct cf_stamp *st = calloc(pl.n_anc, sizeof *st), *again = calloc(pl.n_anc, sizeof *again);
	struct cf_expand_result res;
	cr_assert_eq(cf_expand(&pl, buf, sizeof buf, record, &got, &res, st), 0);
	size_t h = pl.n_anc;
	for (size_t i = 0; i < pl.n_anc; i++)
		if (strcmp(pl.anc[i].path, fx.home) == 0)
			h = i;
	cr_assert_lt(h, pl.n_anc);
	cr_expect(st[h].present);
	struct stat now;
	struct cf_stamp by_stat = {0};
	cr_assert_eq(lstat(fx.home, &now), 0);
	cf_stamp_from(&now, &by_stat);
	cr_expect(same_stamp(&by_stat, &st[h]), "unchanged: equal");
	cf_fx_write(at(fx.home, "new-entry"), "x\n");
	cr_assert_eq(cf_expand(&pl, buf, sizeof buf, record, &got, &res, again), 0);
	cr_expect(!same_stamp(&again[h], &st[h]), "an entry was created: not equal");
	free(st);
	free(again);
}

/* ---- devices ---- */

/* A plan of its own: the fixture's policy plus DENY and WRITABLE (may be NULL)
 * and ALLOW_PTYS; its rules in R. */
static struct cf_options o2;
static struct cf_policy p2;
static struct cf_plan pl2;

static int plan_with(const char *deny, const char *writable, bool allow_ptys, struct rules *r)
{
	struct cf_expand_result res;
	char *envp[] = {NULL};
	cf_options_init(&o2);
	o2.home = fx.home;
	o2.workspace = fx.ws;
	if (deny)
		cr_assert_eq(cf_strv_add(&o2.deny, deny), 0);
	if (writable)
		cr_assert_eq(cf_strv_add(&o2.writable, writable), 0);
	cr_assert_eq(cf_policy_build(&p2, &o2, envp, fx.ws), 0);
	cr_assert_eq(p2.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p2));
	p2.allow_ptys = allow_ptys;
	cr_assert_eq(cf_plan_prepare(&pl2, &p2), 0);
	return cf_expand(&pl2, buf, sizeof buf, record, r, &res, NULL);
}

static void plan_free(void)
{
	cf_plan_free(&pl2);
	cf_policy_free(&p2);
	cf_options_free(&o2);
}

static char *canon(const char *path)
{
	static char out[PATH_MAX];
	cr_assert_eq(cf_canon(path, NULL, out, sizeof out, NULL, NULL), 0);
	return out;
}

/* Rules that open a terminal other than the caller's own (none here). */
static size_t terminal_rules(const struct rules *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		if (cf_path_within(r->v[i].path, "/dev/pts") &&
		    strcmp(r->v[i].path, canon("/dev/ptmx")) != 0)
			n++;
	return n;
}

/* FD 0-2 of this test process made /dev/null, restored by restore_std(). */
static int saved[3];

static void std_to(int fd)
{
	for (int i = 0; i <= 2; i++) {
		saved[i] = dup(i);
		cr_assert(saved[i] >= 0 && dup2(fd, i) == i);
	}
}

static void restore_std(void)
{
	for (int i = 0; i <= 2; i++) {
		dup2(saved[i], i);
		close(saved[i]);
	}
}

Test(expand, devices_one_by_one_and_no_other_terminal)
{
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	std_to(nul);
	int rc = plan_with(NULL, NULL, false, &got);
	restore_std();
	close(nul);
	cr_assert_eq(rc, 0);
	const char *dev[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
			     "/dev/tty", "/dev/ptmx"};
	for (size_t i = 0; i < sizeof dev / sizeof *dev; i++) {
		const struct rule *r = find(&got, canon(dev[i]), CF_RULE_DEV);
		cr_expect(r && !r->is_dir && S_ISCHR(r->mode), "%s: one file rule", dev[i]);
	}
	cr_expect(!any_rule(&got, "/dev"), "all of /dev");
	cr_expect(!any_rule(&got, "/dev/pts"), "every terminal");
	cr_expect_eq(terminal_rules(&got), 0);
	cr_expect(find(&got, "/dev/shm", CF_RULE_WRITE), "/dev/shm stays writable");
	for (size_t i = 0; i < got.n; i++)
		cr_expect(!cf_path_within(got.v[i].path, "/dev") || got.v[i].kind != CF_RULE_READ,
			  "a read rule in /dev: %s", got.v[i].path);
	plan_free();
}

Test(expand, own_terminal_gets_a_rule)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
	char pts[64];
	cr_assert(ptsname_r(m, pts, sizeof pts) == 0);
	int s = open(pts, O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert(s >= 0);
	std_to(s);
	int rc = plan_with(NULL, NULL, false, &got);
	restore_std();
	cr_assert_eq(rc, 0);
	const struct rule *r = find(&got, pts, CF_RULE_DEV);
	cr_expect(r && !r->is_dir, "the caller's own %s", pts);
	cr_expect_eq(terminal_rules(&got), 1, "only the own terminal");
	cr_expect(!any_rule(&got, "/dev/pts"));
	close(s);
	close(m);
	plan_free();
}

Test(expand, allow_ptys_gives_all_of_dev_pts)
{
	cr_assert_eq(plan_with(NULL, NULL, true, &got), 0);
	const struct rule *r = find(&got, "/dev/pts", CF_RULE_DEV);
	cr_expect(r && r->is_dir, "/dev/pts: one directory rule");
	plan_free();
}

Test(expand, secret_under_dev_allows_no_entry_there)
{
	char deny[128];
	cf_fx_fmt(deny, sizeof deny, "/dev/cf-absent-%s", fx.tag + 7);
	cr_assert_eq(plan_with(deny, NULL, false, &got), 0);
	bool anc = false;
	for (size_t i = 0; i < pl2.n_anc; i++)
		anc = anc || strcmp(pl2.anc[i].path, "/dev") == 0;
	cr_assert(anc, "/dev is an ancestor here");
	for (size_t i = 0; i < got.n; i++)
		cr_expect(!cf_path_within(got.v[i].path, "/dev") || got.v[i].kind != CF_RULE_READ,
			  "a read rule in /dev: %s", got.v[i].path);
	cr_expect(!any_rule(&got, "/dev/pts"));
	cr_expect(find(&got, "/dev/null", CF_RULE_DEV));
	cr_expect(find(&got, "/dev/shm", CF_RULE_WRITE));
	plan_free();
}

/* ---- a symlink swapped in after the policy was resolved ---- */

Test(expand, symlink_swapped_into_a_rule_path_fails)
{
	char dir[PATH_MAX], keep[PATH_MAX];
	cf_fx_fmt(dir, sizeof dir, "%s", at(fx.root, "tw"));
	cf_fx_fmt(keep, sizeof keep, "%s", at(fx.root, "tw/inner"));
	cf_fx_mkdirs(keep);
	struct cf_expand_result res;
	cr_assert_eq(plan_with(NULL, keep, false, &got), 0);
	cr_assert(find(&got, keep, CF_RULE_WRITE), "a rule of its own, before the swap");

	/* The location itself becomes a symlink to a secret. */
	cr_assert(rename(keep, at(fx.root, "tw/inner.old")) == 0);
	cr_assert(symlink(cf_fx_secret(&fx, ".ssh")->path, keep) == 0);
	struct rules r = {0};
	cr_expect_eq(cf_expand(&pl2, buf, sizeof buf, record, &r, &res, NULL), -ELOOP);
	for (size_t i = 0; i < r.n; i++)
		cr_expect(!cf_path_within(r.v[i].path, cf_fx_secret(&fx, ".ssh")->path),
			  "a rule on the target %s", r.v[i].path);
	free(r.v);

	/* A directory on the way becomes a symlink to one holding the same name. */
	cr_assert(unlink(keep) == 0 && rename(at(fx.root, "tw/inner.old"), keep) == 0);
	cf_fx_mkdirs(at(fx.root, "elsewhere/inner"));
	cr_assert(rename(dir, at(fx.root, "tw.old")) == 0);
	cr_assert(symlink(at(fx.root, "elsewhere"), at(fx.root, "tw")) == 0);
	memset(&r, 0, sizeof r);
	cr_expect_eq(cf_expand(&pl2, buf, sizeof buf, record, &r, &res, NULL), -ELOOP);
	cr_expect(!any_rule(&r, at(fx.root, "elsewhere/inner")));
	free(r.v);
	plan_free();
}

Test(expand, symlink_swapped_for_an_entry_gets_no_rule)
{
	/* The workspace is an entry of an ancestor: read from the directory, a
	 * symlink there is skipped like any symlink entry. */
	cr_assert(rename(fx.ws, at(fx.root, "ws.old")) == 0);
	cr_assert(symlink(cf_fx_secret(&fx, ".ssh")->path, fx.ws) == 0);
	expand_all();
	cr_expect(!any_rule(&got, fx.ws));
	for (size_t i = 0; i < got.n; i++)
		cr_expect(!cf_path_within(got.v[i].path, cf_fx_secret(&fx, ".ssh")->path),
			  "a rule on the target %s", got.v[i].path);
	cr_assert(unlink(fx.ws) == 0 && rename(at(fx.root, "ws.old"), fx.ws) == 0);
}

/* The plan again, for the policy of O as it is now. */
static void rebuild(void)
{
	char *envp[] = {NULL};
	cf_plan_free(&pl);
	cf_policy_free(&p);
	cr_assert_eq(cf_policy_build(&p, &o, envp, fx.ws), 0);
	cr_assert_eq(p.verdict, CF_VERDICT_APPLIED, "%s", reason_of(&p));
	cr_assert_null(p.allow_read_refused, "%s", p.allow_read_refused);
	cr_assert_eq(cf_plan_prepare(&pl, &p), 0);
	free(got.v);
	memset(&got, 0, sizeof got);
}

/* --allow-read ~/.ssh/known_hosts: that file gets a read rule, and ~/.ssh
 * becomes an ancestor where nothing else does: not the key, not the
 * directory, not an entry created after the plan was made. */
Test(expand, allow_read_inside_a_secret_allows_that_entry_alone)
{
	const char *ssh = at(fx.home, ".ssh");
	cf_fx_write(at(ssh, "known_hosts"), "host key\n");
	cf_fx_write(at(ssh, "config"), "Host x\n");
	cr_assert(cf_strv_add(&o.allow_read, at(ssh, "known_hosts")) == 0);
	rebuild();
	expand_all();
	const struct rule *r = find(&got, at(ssh, "known_hosts"), CF_RULE_READ);
	cr_expect(r && !r->is_dir, "known_hosts: a read rule for a file");
	cr_expect(!any_rule(&got, ssh), "~/.ssh itself got a rule");
	cr_expect(!any_rule(&got, at(ssh, "id_ed25519")), "the key got a rule");
	cr_expect(!any_rule(&got, at(ssh, "config")), "config was not allowed, yet got a rule");
	for (size_t i = 0; i < got.n; i++)
		cr_expect(!cf_path_within(got.v[i].path, ssh) ||
				  strcmp(got.v[i].path, at(ssh, "known_hosts")) == 0,
			  "%s got a rule", got.v[i].path);
	/* Created after the plan: the next launch's expansion denies it too. */
	cf_fx_write(at(ssh, "id_later"), "later key\n");
	free(got.v);
	memset(&got, 0, sizeof got);
	expand_all();
	cr_expect(!any_rule(&got, at(ssh, "id_later")), "a key created later got a rule");
	cr_expect(find(&got, at(ssh, "known_hosts"), CF_RULE_READ));
}

/* Deeper: only the way to the allowed path is an ancestor, and a directory
 * allowed is allowed whole. */
Test(expand, allow_read_deeper_allows_only_the_way_to_it)
{
	const char *ssh = at(fx.home, ".ssh");
	cf_fx_write(at(ssh, "sub/shared/a"), "a\n");
	cf_fx_write(at(ssh, "sub/other"), "o\n");
	cr_assert(cf_strv_add(&o.allow_read, at(ssh, "sub/shared")) == 0);
	rebuild();
	expand_all();
	const struct rule *r = find(&got, at(ssh, "sub/shared"), CF_RULE_READ);
	cr_expect(r && r->is_dir, "sub/shared: a read rule for a directory");
	cr_expect(!any_rule(&got, at(ssh, "sub")), "the way got a rule");
	cr_expect(!any_rule(&got, at(ssh, "sub/other")), "a sibling on the way got a rule");
	cr_expect(!any_rule(&got, at(ssh, "id_ed25519")));
}

/* An allowed path that does not exist yet gets its rule once it does, and
 * a symlink put at its name gets none. */
Test(expand, allow_read_missing_then_created_then_a_symlink)
{
	const char *ssh = at(fx.home, ".ssh");
	cr_assert(cf_strv_add(&o.allow_read, at(ssh, "known_hosts")) == 0);
	rebuild();
	expand_all();
	cr_expect(!any_rule(&got, at(ssh, "known_hosts")));
	cf_fx_write(at(ssh, "known_hosts"), "h\n");
	free(got.v);
	memset(&got, 0, sizeof got);
	expand_all();
	cr_expect(find(&got, at(ssh, "known_hosts"), CF_RULE_READ));
	cr_assert(unlink(at(ssh, "known_hosts")) == 0);
	cr_assert(symlink(at(ssh, "id_ed25519"), at(ssh, "known_hosts")) == 0);
	free(got.v);
	memset(&got, 0, sizeof got);
	expand_all();
	cr_expect(!any_rule(&got, at(ssh, "known_hosts")));
	cr_expect(!any_rule(&got, at(ssh, "id_ed25519")), "the symlink's target got a rule");
}

/* A whole row named: it is no secret any more, and its entries are read
 * like any sibling. */
Test(expand, allow_read_of_a_whole_row_lifts_it)
{
	const char *aws = at(fx.home, ".aws");
	cr_assert(cf_strv_add(&o.allow_read, aws) == 0);
	rebuild();
	expand_all();
	cr_expect(find(&got, aws, CF_RULE_READ), ".aws: a read rule");
	cr_expect(!any_rule(&got, at(fx.home, ".ssh")));
}
