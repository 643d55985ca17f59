/* Where there is no moment in the child to act (posix_spawn, system, popen),
 * act on a thread: Landlock restricts the calling thread only, and a child
 * created from a restricted thread is restricted. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

int cf_shim_options(struct cf_options *o);
int cf_shim_fence_thread(const struct cf_fence *f, const char *program);

extern char **environ;

/* Fences replaced while children may still read them (a vfork child of another
 * thread) are kept a while before they are freed. */
struct retired {
	struct cf_fence *f;
	time_t when;
	struct retired *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct retired *graveyard;

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
		free(r);
	}
}

struct cf_fence *cf_shim_fence_now(void)
{
	struct cf_fence *cur = __atomic_load_n(&cf_shim.fence, __ATOMIC_ACQUIRE);
	if (cf_fence_current(cur))
		return cur;
	pthread_mutex_lock(&lock);
	cur = cf_shim.fence;
	if (!cf_fence_current(cur)) {
		struct cf_options o;
		struct cf_fence *f = calloc(1, sizeof *f);
		struct retired *r = calloc(1, sizeof *r);
		if (f && r && cf_shim_options(&o) == 0) {
			if (cf_fence_prepare(f, &o, environ, NULL) == 0) {
				time_t now = time(NULL);
				r->f = cur;
				r->when = now;
				r->next = graveyard;
				graveyard = r;
				r = NULL;
				__atomic_store_n(&cf_shim.fence, f, __ATOMIC_RELEASE);
				cur = f;
				f = NULL;
				free_old(now);
			}
			cf_options_free(&o);
		}
		/* On failure keep the old fence: children then build their own from it. */
		if (f) {
			cf_fence_free(f);
			free(f);
		}
		free(r);
	}
	pthread_mutex_unlock(&lock);
	return cur;
}

struct job {
	void (*fn)(void *);
	void *arg;
	const struct cf_fence *fence;
	const char *program;
	sigset_t mask;
	int rc;
};

static void *fenced(void *p)
{
	struct job *j = p;
	/* The caller blocked SIGCHLD while it waits; the work runs with its mask. */
	pthread_sigmask(SIG_SETMASK, &j->mask, NULL);
	j->rc = cf_shim_fence_thread(j->fence, j->program);
	if (j->rc == 0)
		j->fn(j->arg);
	return NULL;
}

int cf_shim_on_fenced_thread(void (*fn)(void *), void *arg, const char *program)
{
	struct job j = {.fn = fn, .arg = arg, .program = program};
	sigset_t chld, old;
	pthread_t t;

	j.fence = cf_shim_fence_now();
	/* While the helper works, SIGCHLD stays blocked here, as the real call
	 * would block it in the calling thread: a handler must not reap the child
	 * before the call that made it does. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	j.mask = old;
	int err = pthread_create(&t, NULL, fenced, &j);
	if (err == 0)
		pthread_join(t, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	return j.rc;
}
