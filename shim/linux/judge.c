/* The judge of a denial (judge.h): built at the first call that may be the
 * fence's, from the environment as the CLI reads it; says one line on
 * stderr for each path the fence refused, once a run (the supervisor keeps
 * the count, sup_denied.h). Linked into libcredfence.so; for a fenced
 * program it is libcredfence-judge.so, loaded at the first such call
 * (judge_load.c), so that a program that meets no denial never pays for
 * it (issue 36). Its own opens and stats go through the shim's wrappers,
 * which let them pass while it judges. */
#undef _FILE_OFFSET_BITS
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "denial.h"
#include "fence.h"
#include "judge.h"
#include "options.h"
#include "paths.h"
#include "policy.h"
#include "protect_plan.h"
#include "protected_match.h"
#include "sys.h"

#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif

extern char **environ;

static struct {
	pthread_once_t once;
	bool on;    /* the policy was built, and this process may explain */
	bool quiet; /* --quiet-denials */
	struct cf_policy pol;
	char cwd[PATH_MAX];   /* canonical, at the first denial */
	struct cf_strv lifts; /* --allow-write-protected, canonical */
	struct cf_protect_scope scope;
	struct cf_denial_own own; /* what is credfence's own (denial.h), into OWN_AT */
	char own_at[4][PATH_MAX];
	pthread_mutex_t lock;
	uint64_t said[256]; /* paths already explained, by hash; 0: free */
	char agent[PATH_MAX]; /* canonical $SSH_AUTH_SOCK, "" when none */
	bool ssh_keys_said;   /* ssh: its key files get one notice a process */
	pthread_once_t plan_once;
	bool plan_on;         /* the plan was built */
	struct cf_protect_plan plan; /* what the mounts hold, git's own files included */
} judge = {.once = PTHREAD_ONCE_INIT,
	   .lock = PTHREAD_MUTEX_INITIALIZER,
	   .plan_once = PTHREAD_ONCE_INIT};

/* PATH canonical into judge.own_at[I], or NULL when it can not be. */
static const char *own_at(int i, const char *path)
{
	if (!path || path[0] != '/' ||
	    cf_canon(path, NULL, judge.own_at[i], sizeof judge.own_at[i], NULL, NULL) != 0)
		return NULL;
	return judge.own_at[i];
}

/* Where credfence keeps what is its own (cli/tmpdir.c makes the harness's
 * private TMPDIR in $XDG_RUNTIME_DIR or in its state directory). */
static void own_places(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	char base[PATH_MAX];
	if (state && state[0] == '/')
		snprintf(base, sizeof base, "%s/credfence", state);
	else
		snprintf(base, sizeof base, "%s/.local/state/credfence", judge.pol.home);
	judge.own = (struct cf_denial_own){
		.tmpdir = own_at(0, getenv("CREDFENCE_HARNESS_TMPDIR")),
		.runtime = own_at(1, getenv("XDG_RUNTIME_DIR")),
		.state = own_at(2, base),
		.log = own_at(3, judge.pol.log),
	};
}

static bool judge_harness; /* the caller is a harness's shim (cf_judge_ops) */

static void build_judge(void)
{
	struct cf_options o;
	char cwd[PATH_MAX];
	/* Only a fenced process explains: elsewhere an EACCES is the kernel's
	 * permission bits or another program's policy, and the harness's stderr
	 * is the agent's screen. */
	if (judge_harness || cf_fence_fenced() != 1)
		return;
	/* The credfence command fenced (a relaunch, check or status inside a
	 * fence) probes secrets on purpose and words its own findings. */
	if (strcmp(program_invocation_short_name, "credfence") == 0)
		return;
	cf_options_init(&o);
	if (!getcwd(cwd, sizeof cwd) || cf_options_from_env(&o, environ, &(const char *){NULL}))
		return;
	o.account_home = cf_account_home();
	judge.quiet = o.quiet_denials > 0;
	if (cf_policy_build(&judge.pol, &o, environ, cwd) != 0 || !judge.pol.home)
		return;
	/* The write protection's scope (protected_match.h): a lift that can not
	 * be made canonical lifts nothing here (the CLI refused it). */
	const char *bad;
	if (cf_canon(cwd, NULL, judge.cwd, sizeof judge.cwd, NULL, NULL) != 0)
		judge.cwd[0] = '\0';
	(void)cf_protected_canon_lifts(&o.allow_write_protected, judge.cwd[0] ? judge.cwd : cwd,
				       &judge.lifts, &bad);
	cf_protect_scope_of(&judge.scope, &judge.pol, judge.cwd[0] ? judge.cwd : NULL, &judge.lifts);
	own_places();
	const char *agent = getenv("SSH_AUTH_SOCK");
	if (!agent || agent[0] != '/' ||
	    cf_canon(agent, NULL, judge.agent, sizeof judge.agent, NULL, NULL) != 0)
		judge.agent[0] = '\0';
	judge.on = true;
}

/* The plan of the mount namespace (protect_plan.h), built at the first write
 * refused inside a writable location that no row of the table names: the
 * files git's own files lead to (a submodule's config, .git/commondir's
 * target) are held by the plan, not by a name. */
static void build_plan(void)
{
	judge.plan_on = judge.cwd[0] &&
			cf_protect_plan_build(&judge.plan, &judge.pol, &judge.lifts, judge.cwd) == 0;
}

static const struct cf_protected_row *held_by_plan(const char *abs, char *loc, size_t cap)
{
	pthread_once(&judge.plan_once, build_plan);
	const struct cf_protect_item *it = judge.plan_on ? cf_protect_plan_find(&judge.plan, abs)
							 : NULL;
	if (!it || !it->row || it->row->private_copy || strlen(it->path) >= cap)
		return NULL;
	strcpy(loc, it->path);
	return it->row;
}

/* PATH (relative to DIRFD) made absolute and canonical in OUT; false when it
 * can not be. */
static bool absolute(int dirfd, const char *path, char *out, size_t cap)
{
	char base[PATH_MAX];
	if (path[0] != '/') {
		if (dirfd == AT_FDCWD) {
			if (!getcwd(base, sizeof base))
				return false;
		} else {
			char link[64];
			snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
			ssize_t n = readlink(link, base, sizeof base - 1);
			if (n <= 0 || base[0] != '/')
				return false;
			base[n] = '\0';
		}
	}
	return cf_canon(path, path[0] == '/' ? NULL : base, out, cap, NULL, NULL) == 0;
}

/* Whether the permission bits (and every check but Landlock's, which
 * access(2) does not consult) would allow ACC of PATH: then the denial is the
 * fence's. A file that is not there is judged by its directory. */
static bool bits_allow(const char *path, enum cf_judge_access acc)
{
	int mode = acc == ACC_READ ? R_OK : W_OK;
	long r = cf_sys4(SYS_faccessat2, AT_FDCWD, path, mode, AT_EACCESS);
	if (r == -ENOENT && acc == ACC_WRITE) {
		char dir[PATH_MAX];
		cf_path_parent(path, dir, sizeof dir);
		r = cf_sys4(SYS_faccessat2, AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS);
	}
	return r == 0;
}

static const struct cf_denied *secret_of(const char *path)
{
	for (size_t i = 0; i < judge.pol.n_denied; i++)
		if (cf_path_within(path, judge.pol.denied[i].path))
			return &judge.pol.denied[i];
	return NULL;
}

static bool in_writable(const char *path)
{
	for (size_t i = 0; i < judge.pol.writable.n; i++)
		if (cf_path_within(path, judge.pol.writable.v[i]))
			return true;
	return false;
}

/* True the first time PATH is seen (the table full: never again). */
static bool first_time(const char *path)
{
	uint64_t h = cf_path_hash(path);
	bool first = false;
	pthread_mutex_lock(&judge.lock);
	for (size_t i = 0; i < sizeof judge.said / sizeof *judge.said; i++) {
		if (judge.said[i] == h)
			break;
		if (judge.said[i] == 0) {
			judge.said[i] = h;
			first = true;
			break;
		}
	}
	pthread_mutex_unlock(&judge.lock);
	return first;
}

/* The log line is the supervisor's (sup_denied.h): it judges the path
 * itself, and answers whether the notice is still to be said: 0 the first
 * time in the run, -EALREADY after (a run says it once, not each of its
 * processes: npm reads ~/.npmrc at every start), -EPERM when the fence did
 * not deny it. Without a supervisor the call fails with EBADF, nothing is
 * logged, and the notice is said once a process. */
static bool report(const char *abs, enum cf_judge_access acc, const struct cf_protected_row *row)
{
	/* The row: for a file the plan found, which the supervisor can see is
	 * held but not why (sup_denied.c). */
	long said = cf_fence_report_denial(acc != ACC_READ,
					   row ? (unsigned)(row - cf_protected_table) + 1 : 0, abs);
	if (said == -ENAMETOOLONG)
		return true;
	return said == 0 || said == -EBADF;
}

static void explain(int dirfd, const char *path, int access, int err, bool harness)
{
	char abs[PATH_MAX], loc[PATH_MAX], line[3 * PATH_MAX + 256];
	enum cf_judge_access acc = (enum cf_judge_access)access;
	judge_harness = harness;
	pthread_once(&judge.once, build_judge);
	if (!judge.on || !absolute(dirfd, path, abs, sizeof abs))
		goto out;
	const struct cf_denied *d = secret_of(abs);
	const struct cf_protected_row *row = NULL;
	if (!d && acc == ACC_READ)
		goto out;
	if (acc == ACC_META && (d || !in_writable(abs) || (err != EROFS && err != EBUSY)))
		goto out;
	/* A write inside a writable location is the fence's only where a row
	 * of the protected table covers it (a read-only mount: EROFS, EBUSY
	 * for a mount point renamed over or removed). */
	if (!d && in_writable(abs) && !(row = cf_protected_match(&judge.scope, abs, loc, sizeof loc)) &&
	    !(acc != ACC_READ && (err == EROFS || err == EBUSY) &&
	      (row = held_by_plan(abs, loc, sizeof loc))))
		goto out;
	/* A secret is the fence's whatever the bits say (in a harness's mount
	 * namespace access(2) is refused too); a write elsewhere only when
	 * the bits would allow it. */
	if (!d && err != EROFS && !(row && err == EBUSY) && !bits_allow(abs, acc))
		goto out;
	/* ssh tries each of its key files (a dozen names): one notice, with
	 * the agent as the way (issue 36), not an --allow-read of a key. */
	bool ssh_key = d && acc == ACC_READ && strcmp(program_invocation_short_name, "ssh") == 0 &&
		       cf_denial_ssh_key(abs, d->path);
	if (!first_time(abs))
		goto out;
	if (!report(abs, acc, row) || judge.quiet || (ssh_key && judge.ssh_keys_said))
		goto out;
	judge.ssh_keys_said |= ssh_key;
	/* Credfence's own (the harness's private TMPDIR, its log): said so,
	 * with no option to name (issue 36). */
	const char *own = !d && !row ? cf_denial_own_row(&judge.own, abs) : NULL;
	bool agent = judge.agent[0] && cf_strv_has(&judge.pol.allow_sockets, judge.agent);
	size_t n = ssh_key ? cf_denial_ssh_key_words(line, sizeof line, abs, d->holds, agent,
						     judge.pol.home)
		   : own ? cf_denial_own_words(line, sizeof line, abs, own, judge.pol.home)
		   : row ? cf_denial_protected_words(line, sizeof line, abs, row->runs, loc,
						     judge.pol.home)
			 : cf_denial_words(line, sizeof line, abs, acc == ACC_WRITE,
					   d ? d->holds : NULL, judge.pol.home);
	(void)cf_sys3(SYS_write, 2, line, n);
out:
	return;
}

/* connect: a Unix socket the IPC fence refused (EACCES), at PATH, when it is
 * one credfence knows the option for: the ssh agent's, gpg-agent's (issue
 * 36: ssh said only "Error connecting to agent: Permission denied"). The
 * supervisor logs every refused connect itself. */
static void explain_connect(const char *path, bool harness)
{
	char abs[PATH_MAX], line[3 * PATH_MAX];
	size_t n;
	judge_harness = harness;
	pthread_once(&judge.once, build_judge);
	if (judge.on && !judge.quiet && absolute(AT_FDCWD, path, abs, sizeof abs) &&
	    cf_sys4(SYS_faccessat2, AT_FDCWD, abs, W_OK, AT_EACCESS) == 0 &&
	    (n = cf_denial_connect_words(line, sizeof line, abs, judge.agent[0] ? judge.agent : NULL,
					 judge.pol.home)) &&
	    first_time(abs))
		(void)cf_sys3(SYS_write, 2, line, n);
}


/* The judge's two calls; exported from libcredfence-judge.so by this name
 * (libcredfence-judge.map), hidden in libcredfence.so. */
#ifdef CF_JUDGE_LIB
__attribute__((visibility("default")))
#endif
const struct cf_judge_ops cf_judge_ops = {.explain = explain, .connect = explain_connect};

#ifndef CF_JUDGE_LIB
const struct cf_judge_ops *cf_judge(void)
{
	return &cf_judge_ops;
}
#endif
