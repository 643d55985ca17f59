/* The harness's fence cache: the fence for the next child, rebuilt when the
 * one at hand is no longer current, with the environment it was built from
 * (the snapshot, envsnap.h) and its IPC supervisor watched; and the fork
 * handlers that check it before a fork. No thread of the harness is ever
 * fenced: a child that shared a thread's Landlock domain could trace that
 * thread, and so the harness. A child reads the cache (cf_shim_snap, the
 * snapshot's compare) and may report the supervisor's end here: those
 * parts are raw system calls and the stack, as their comments say.
 *
 * Ownership: the cache owns the current generation (a fence and the
 * environment it was built from, published in cf_shim.fence and cf_shim.snap for
 * readers that take no lock); a launch only borrows it (struct
 * cf_fence_loan). A replaced generation moves into the graveyard, which owns
 * it until it is freed, CF_RETIRE_SECONDS later. Only rebuild() moves a
 * generation, under LOCK.
 *
 * Each generation is watched (enforce/linux/fence_watch.c): its check at a
 * launch is a poll while nothing changed. WATCH_LOCK serializes the checks
 * (the mount table's poll reports a change to one caller only) and keeps a
 * replaced generation's watch from being closed under one. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "envsnap.h"
#include "secret_env.h"
#include "json.h"
#include "nolibc.h"
#include "shim.h"
#include "sys.h"
#include "vars.h"

extern char **environ;

/* ---- The environment snapshot (envsnap.h) ----
 * The harness's environment as its fence saw it: what moves a secret and
 * the CREDFENCE_* options, taken with each generation; a child compares its
 * own environment with it (child.c). */

#define OPT_PREFIX "CREDFENCE_"

static int push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof **v);
	if (!nv)
		return -1;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -1;
	(*n)++;
	return 0;
}

struct cf_envsnap *cf_envsnap_take(const struct cf_fence *f, char *const envp[])
{
	struct cf_envsnap *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->fence = f;
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *e = envp[i];
		size_t k = cf_env_name_len(e);
		if (!e[k] || !e[k + 1])
			continue; /* unset and empty move nothing alike */
		int rc = 0;
		if (!strncmp(e, OPT_PREFIX, strlen(OPT_PREFIX)))
			rc = push(&s->opts, &s->n_opts, e);
		else if (cf_envsnap_moves_secret(e, k))
			rc = push(&s->moves, &s->n_moves, e);
		if (rc) {
			cf_envsnap_free(s);
			return NULL;
		}
	}
	const char *l = getenv(cf_var_name(CF_VAR_LAUNCHER));
	if (l && l[0] == '/' && !(s->launcher = strdup(l))) {
		cf_envsnap_free(s);
		return NULL;
	}
	return s;
}

void cf_envsnap_free(struct cf_envsnap *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_moves; i++)
		free(s->moves[i]);
	for (size_t i = 0; i < s->n_opts; i++)
		free(s->opts[i]);
	free(s->moves);
	free(s->opts);
	free(s->launcher);
	free(s);
}

/* ---- The cache ---- */

struct generation {
	struct cf_fence *fence;
	struct cf_envsnap *snap; /* what of environ FENCE was built from; NULL when out of memory */
};

/* A replaced generation: children may still read it (a vfork child of another
 * thread, which holds no lock), so it is kept a while before it is freed. */
struct retired {
	struct generation g;
	time_t when;
	struct retired *next;
};

#define CF_RETIRE_SECONDS 10

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Taken after LOCK when both are. */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct retired *graveyard;

/* Under WATCH_LOCK: the generation checked last. */
static const struct cf_fence *checked_once;

static bool current(const struct cf_fence *f)
{
	pthread_mutex_lock(&watch_lock);
	/* The current generation is watched at its second check: setting the
	 * watch costs a few checks by the stats (145 us against 22 to 56,
	 * docs/bench.md), which a generation used once (a wrapper that execs
	 * the real harness, a home that changes between launches) would not
	 * win back. */
	struct cf_fence *cur = __atomic_load_n(&cf_shim.fence, __ATOMIC_ACQUIRE);
	if (cur == f && !cf_fence_watch_tried(f)) {
		if (checked_once == f && cf_fence_watch(cur) == 0) {
			int fds[4];
			cf_fence_watch_fds(cur, fds);
			for (int i = 0; i < 4; i++)
				__atomic_store_n(&cf_shim.watch_fds[i], fds[i], __ATOMIC_RELEASE);
		}
		checked_once = f;
	}
	bool c = cf_fence_current_watched(f);
	pthread_mutex_unlock(&watch_lock);
	return c;
}

int cf_shim_supervisor_watched(const struct cf_fence *f)
{
	pthread_mutex_lock(&watch_lock);
	int alive = cf_fence_supervisor_watched(f);
	pthread_mutex_unlock(&watch_lock);
	return alive;
}

/* Current, and built from the environment the harness has now: a harness
 * that sets GNUPGHOME after it started gets a fence that denies it. */
static bool fits(const struct cf_fence *f)
{
	const struct cf_envsnap *s = cf_shim_snap();
	return current(f) && s && s->fence == f && cf_envsnap_same(s, environ);
}

static void free_generation(struct generation g)
{
	cf_fence_destroy(g.fence);
	cf_envsnap_free(g.snap);
}

static void free_old(time_t now)
{
	struct retired **p = &graveyard;
	while (*p) {
		struct retired *r = *p;
		if (now - r->when < CF_RETIRE_SECONDS) {
			p = &r->next;
			continue;
		}
		*p = r->next;
		free_generation(r->g);
		free(r);
	}
}

/* A generation prepared now, from the harness's options and environment,
 * into *OUT (the caller owns it). false when out of memory: nothing held. */
static bool build(struct generation *out)
{
	struct cf_fence *f = cf_fence_new();
	struct cf_envsnap *s;
	if (!f)
		return false;
	if (cf_fence_prepare(f, cf_shim_harness_options(), environ, NULL) == 0 &&
	    (s = cf_envsnap_take(f, environ))) {
		*out = (struct generation){.fence = f, .snap = s};
		return true;
	}
	cf_fence_destroy(f);
	return false;
}

/* FD is a Landlock ruleset still: a harness that closed every descriptor
 * (a daemon's start, a harness's own loop) may hold another file at its
 * number now, which the cache must not close under it. */
static bool is_ruleset(int fd)
{
	char path[32], link[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof link - 1);
	if (n < 0)
		return errno != ENOENT; /* no /proc to tell: as before */
	link[n] = '\0';
	return strcmp(link, "anon_inode:[landlock-ruleset]") == 0; /* security/landlock/syscalls.c */
}

/* OLD, replaced, into the graveyard at SLOT (allocated beforehand, so that
 * this can not fail), which owns it from now on. Its ruleset is closed now: a
 * child still holding the old fence then finds its fd closed (or another
 * file's) and builds its own; the fence's memory stays a while for it. */
static void bury(struct retired *slot, struct generation old, time_t now)
{
	/* Its inotify instance back to the user now (128 by default, for all
	 * of the user's programs), not when it is freed. */
	pthread_mutex_lock(&watch_lock);
	cf_fence_unwatch(old.fence);
	pthread_mutex_unlock(&watch_lock);
	int fd = cf_fence_take_ruleset(old.fence);
	if (fd >= 0 && is_ruleset(fd))
		close(fd);
	*slot = (struct retired){.g = old, .when = now, .next = graveyard};
	graveyard = slot;
}

/* FRESH becomes the current generation, which the cache owns. The snapshot
 * first: a reader that sees the new fence sees its snapshot too. */
static void publish(struct generation fresh)
{
	__atomic_store_n(&cf_shim.snap, fresh.snap, __ATOMIC_RELEASE);
	__atomic_store_n(&cf_shim.fence, fresh.fence, __ATOMIC_RELEASE);
}

/* Under LOCK: replace the current generation with one built now. false when
 * out of memory: the old one stays, and children build their own from it. */
static bool rebuild(void)
{
	struct retired *slot = calloc(1, sizeof *slot);
	struct generation fresh;
	if (!slot || !build(&fresh)) {
		free(slot);
		return false;
	}
	time_t now = time(NULL);
	bury(slot, (struct generation){.fence = cf_shim.fence, .snap = cf_shim.snap}, now);
	publish(fresh);
	free_old(now);
	return true;
}

struct cf_fence_loan cf_shim_fence_lend(void)
{
	const struct cf_fence *f = __atomic_load_n(&cf_shim.fence, __ATOMIC_ACQUIRE);
	cf_shim_watch_supervisor(f);
	if (fits(f))
		return (struct cf_fence_loan){.fence = f, .current = true};
	pthread_mutex_lock(&lock);
	/* It may fit now: another thread rebuilt it meanwhile. */
	struct cf_fence_loan loan = {.fence = cf_shim.fence, .current = fits(cf_shim.fence)};
	if (!loan.current && rebuild()) {
		loan.fence = cf_shim.fence;
		loan.current = cf_fence_current(loan.fence);
	}
	pthread_mutex_unlock(&lock);
	return loan;
}

/* fork(): the prepare handler checks the fence in normal context, so the
 * child need not. */
__thread struct cf_checked cf_shim_checked __attribute__((tls_model("initial-exec")));

static void before_fork(void)
{
	if (cf_shim.role == CF_ROLE_HARNESS) {
		struct cf_fence_loan loan = cf_shim_fence_lend();
		/* Not current (a rebuild failed): the child checks for itself. */
		cf_shim_checked.fence = loan.current ? loan.fence : NULL;
		cf_shim_checked.at_ns = cf_shim_now_ns();
	}
	pthread_mutex_lock(&lock);
	pthread_mutex_lock(&watch_lock);
}

static void after_fork_parent(void)
{
	cf_shim_checked.fence = NULL;
	pthread_mutex_unlock(&watch_lock);
	pthread_mutex_unlock(&lock);
}

static void after_fork_child(void)
{
	pthread_mutex_unlock(&watch_lock);
	pthread_mutex_unlock(&lock);
}

void cf_shim_fence_cache_init(void)
{
	/* The cache takes the fence the harness role prepared (role.c) as its
	 * first generation. Out of memory: no snapshot, and every launch then
	 * rebuilds and finds out for itself. */
	cf_shim.snap = cf_envsnap_take(cf_shim.fence, environ);
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* ---- The supervisor's watch ----
 * The harness's IPC supervisor, watched from the harness. A fenced process
 * of the same user can kill it (SECURITY.md says why signals stay open); its
 * children can then no longer be fenced, and the harness must know it: the
 * next launch would otherwise fail in the child only, one refusal at a time,
 * and the waiter above the harness is the only one that would say why.
 *
 * Raw syscalls and stack only: a vfork child (which runs no atfork handler)
 * finds the death itself, in cf_ipc_enter, and reports it here, in the
 * harness's memory. */

void cf_shim_supervisor_ended(const struct cf_fence *f)
{
	cf_shim_supervisor_ended_log(f, -1);
}

void cf_shim_supervisor_ended_log(const struct cf_fence *f, int logfd)
{
	char line[256];
	size_t len = 0;
	int pid = (int)cf_sys0(SYS_getpid);
	if (__atomic_exchange_n(&cf_shim.supervisor_ended, 1, __ATOMIC_ACQ_REL))
		return; /* told already */
	cf_json_raw(line, sizeof line, &len, "credfence: the IPC supervisor of this harness (pid ");
	cf_json_num(line, sizeof line, &len, cf_fence_supervisor_pid(f));
	cf_json_raw(line, sizeof line, &len, ") has ended; every command the harness starts from now "
					     "on is refused. Start the harness again.\n");
	(void)cf_sys3(SYS_write, 2, line, len);
	int fd = logfd >= 0 ? logfd : cf_fence_log_open(f);
	if (fd < 0)
		return;
	len = 0;
	cf_json_raw(line, sizeof line, &len, "{\"event\":\"supervisor_ended\",\"pid\":");
	cf_json_num(line, sizeof line, &len, cf_shim.harness_pid ? cf_shim.harness_pid : pid);
	cf_json_raw(line, sizeof line, &len, ",\"supervisor\":");
	cf_json_num(line, sizeof line, &len, cf_fence_supervisor_pid(f));
	cf_json_raw(line, sizeof line, &len, "}\n");
	(void)cf_sys3(SYS_write, fd, line, len);
	if (fd != logfd)
		cf_sys_close(fd);
}

void cf_shim_watch_supervisor(const struct cf_fence *f)
{
	if (cf_shim.role != CF_ROLE_HARNESS || !f || cf_fence_inherited(f) ||
	    cf_fence_supervisor_pid(f) <= 0 ||
	    __atomic_load_n(&cf_shim.supervisor_ended, __ATOMIC_ACQUIRE))
		return;
	/* Its pidfd, polled, where the fence's watch holds one; else its
	 * /proc/PID/stat (8.5 us, docs/bench.md). */
	int alive = cf_shim_supervisor_watched(f);
	if (alive == 1 || (alive < 0 && cf_fence_supervisor_alive(f)))
		return;
	int e = errno;
	cf_shim_supervisor_ended(f);
	errno = e;
}
