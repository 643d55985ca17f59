/* The harness's fence cache: the fence for the next child, rebuilt when the
 * one at hand is no longer current, and the fork handlers that check it
 * before a fork. No thread of the harness is ever fenced: a child that shared
 * a thread's Landlock domain could trace that thread, and so the harness. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "envsnap.h"
#include "shim.h"


extern char **environ;

/* Fences replaced while children may still read them (a vfork child of another
 * thread) are kept a while before they are freed. */
struct retired {
	struct cf_fence *f;
	struct cf_envsnap *snap;
	time_t when;
	struct retired *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct retired *graveyard;
static struct cf_envsnap *snap; /* what of environ the current fence was built from */

const struct cf_envsnap *cf_shim_snap(void)
{
	return __atomic_load_n(&snap, __ATOMIC_ACQUIRE);
}

/* Current, and built from the environment the harness has now: a harness
 * that sets GNUPGHOME after it started gets a fence that denies it. */
static bool fits(const struct cf_fence *f)
{
	const struct cf_envsnap *s = cf_shim_snap();
	return cf_fence_current(f) && s && s->fence == f && cf_envsnap_same(s, environ);
}

#define CF_RETIRE_SECONDS 10

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
		cf_fence_free(r->f);
		free(r->f);
		cf_envsnap_free(r->snap);
		free(r);
	}
}

struct cf_fence *cf_shim_fence_now(void)
{
	bool current;
	return cf_shim_fence_now_checked(&current);
}

struct cf_fence *cf_shim_fence_now_checked(bool *current)
{
	struct cf_fence *cur = __atomic_load_n(&cf_shim.fence, __ATOMIC_ACQUIRE);
	if ((*current = fits(cur)))
		return cur;
	pthread_mutex_lock(&lock);
	cur = cf_shim.fence;
	if ((*current = fits(cur))) {
		/* another thread rebuilt it meanwhile */
	} else {
		struct cf_fence *f = calloc(1, sizeof *f);
		struct retired *r = calloc(1, sizeof *r);
		struct cf_envsnap *s = NULL;
		if (f && r) {
			if (cf_fence_prepare(f, cf_shim_harness_options(), environ, NULL) == 0 &&
			    (s = cf_envsnap_take(f, environ))) {
				time_t now = time(NULL);
				/* Close the old ruleset now: a child still holding the old
				 * fence then finds its fd closed (or another file's) and
				 * builds its own; the fence's memory stays a while for it. */
				if (cur->ruleset >= 0) {
					int old = cur->ruleset;
					/* atomic: read unlocked by those children (fence.c) */
					__atomic_store_n(&cur->ruleset, -1, __ATOMIC_RELAXED);
					close(old);
				}
				r->f = cur;
				r->snap = snap;
				r->when = now;
				r->next = graveyard;
				graveyard = r;
				r = NULL;
				__atomic_store_n(&snap, s, __ATOMIC_RELEASE);
				__atomic_store_n(&cf_shim.fence, f, __ATOMIC_RELEASE);
				cur = f;
				f = NULL;
				s = NULL;
				*current = cf_fence_current(cur);
				free_old(now);
			}
		}
		/* On failure keep the old fence: children then build their own from it. */
		cf_envsnap_free(s);
		if (f) {
			cf_fence_free(f);
			free(f);
		}
		free(r);
	}
	pthread_mutex_unlock(&lock);
	return cur;
}

/* fork(): the prepare handler checks the fence in normal context, so the
 * child need not. */
__thread struct cf_checked cf_shim_checked __attribute__((tls_model("initial-exec")));

static void before_fork(void)
{
	if (cf_shim.role == CF_ROLE_HARNESS) {
		cf_shim_checked.fence = cf_shim_fence_now();
		cf_shim_checked.at_ns = cf_shim_now_ns();
	}
	pthread_mutex_lock(&lock);
}

static void after_fork_parent(void)
{
	cf_shim_checked.fence = NULL;
	pthread_mutex_unlock(&lock);
}

static void after_fork_child(void)
{
	pthread_mutex_unlock(&lock);
}

void cf_shim_thread_init(void)
{
	/* Out of memory: no snapshot, and every launch then rebuilds and
	 * finds out for itself. */
	snap = cf_envsnap_take(cf_shim.fence, environ);
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}
