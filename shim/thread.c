/* Where there is no moment in the child to act (posix_spawn, system, popen),
 * act on a thread: Landlock restricts the calling thread only, and a child
 * created from a restricted thread is restricted. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

int cf_shim_fence_thread(const struct cf_fence *f, const char *program, bool checked);

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
				/* Close the old ruleset now: a child still holding the old
				 * fence then finds its fd closed (or another file's) and
				 * builds its own; the fence's memory stays a while for it. */
				if (cur->ruleset >= 0) {
					close(cur->ruleset);
					cur->ruleset = -1;
				}
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

static inline void cf_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

struct job {
	void (*fn)(void *);
	void *arg;
	const struct cf_fence *fence;
	const char *program;
	sigset_t mask;
	int rc;
	bool done;
};

static void *fenced(void *p)
{
	struct job *j = p;
	/* The caller blocked SIGCHLD while it waits; the work runs with its mask. */
	pthread_sigmask(SIG_SETMASK, &j->mask, NULL);
	/* cf_shim_fence_now() has just checked the fence, in this process. */
	int rc = cf_shim_fence_thread(j->fence, j->program, true);
	j->rc = rc < 0 ? rc : 0;
	if (rc >= 0)
		j->fn(j->arg);
	return NULL;
}

static int on_fresh_thread(struct job *j)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, fenced, j);
	if (err)
		return -err;
	pthread_join(t, NULL);
	return j->rc;
}

/* The spawner: one thread fenced once per fence, reused for every launch
 * while the fence is current, so that a launch costs no ruleset build and no
 * restrict. A child inherits the calling thread's signal mask and CPU
 * affinity: the spawner takes the caller's mask for each job, and is used only
 * when its affinity is the caller's. */
struct spawner {
	pthread_t t;
	const struct cf_fence *fence;
	pthread_mutex_t m;
	pthread_cond_t cv;
	struct job *job;
	cpu_set_t affinity;
	size_t rules;
	int state; /* 0 starting, 1 fenced, -1 could not fence, 2 gone */
	bool busy, quit;
};

static struct spawner *spawner;

static void *spawner_main(void *p)
{
	struct spawner *sp = p;
	char buf[8192];
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	struct cf_expand_result res;
	int rc = cf_fence_enter(sp->fence, buf, sizeof buf, &res);
	pthread_mutex_lock(&sp->m);
	sp->rules = res.rules;
	sp->state = rc == 0 ? 1 : -1;
	pthread_cond_broadcast(&sp->cv);
	while (sp->state == 1) {
		while (!sp->job && !sp->quit)
			pthread_cond_wait(&sp->cv, &sp->m);
		if (!sp->job) {
			/* Replaced: a caller that took it before then finds it gone and
			 * uses a fresh thread. */
			sp->state = 2;
			break;
		}
		struct job *j = sp->job;
		pthread_mutex_unlock(&sp->m);
		pthread_sigmask(SIG_SETMASK, &j->mask, NULL);
		j->fn(j->arg);
		pthread_sigmask(SIG_SETMASK, &all, NULL);
		pthread_mutex_lock(&sp->m);
		j->rc = 0;
		sp->job = NULL;
		__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&sp->cv);
	}
	pthread_mutex_unlock(&sp->m);
	return NULL;
}

/* Under `lock`: the spawner for F, started if needed; NULL when it is busy or
 * can not be had (then the caller uses a fresh thread). */
static struct spawner *take_spawner(const struct cf_fence *f)
{
	struct spawner *sp = spawner;
	if (sp && sp->fence != f) {
		pthread_mutex_lock(&sp->m);
		sp->quit = true; /* it ends once idle; its memory stays for stragglers */
		pthread_cond_broadcast(&sp->cv);
		pthread_mutex_unlock(&sp->m);
		spawner = sp = NULL;
	}
	if (!sp) {
		sp = calloc(1, sizeof *sp);
		if (!sp)
			return NULL;
		sp->fence = f;
		pthread_mutex_init(&sp->m, NULL);
		pthread_cond_init(&sp->cv, NULL);
		sched_getaffinity(0, sizeof sp->affinity, &sp->affinity);
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		int err = pthread_create(&sp->t, &attr, spawner_main, sp);
		pthread_attr_destroy(&attr);
		if (err) {
			free(sp);
			return NULL;
		}
		spawner = sp;
	}
	if (sp->busy)
		return NULL;
	sp->busy = true;
	return sp;
}

static int on_spawner(struct spawner *sp, struct job *j)
{
	int rc;
	pthread_mutex_lock(&sp->m);
	while (sp->state == 0)
		pthread_cond_wait(&sp->cv, &sp->m);
	if (sp->state != 1) {
		rc = 1; /* not fenced, or gone: a fresh thread does the job */
	} else {
		sp->job = j;
		pthread_cond_broadcast(&sp->cv);
		pthread_mutex_unlock(&sp->m);
		/* A launch takes about a tenth of a millisecond: wait for it awake
		 * for up to a millisecond (a sleeping wait costs a wake-up, tens of
		 * microseconds on a virtual machine), then asleep. */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		long long until = ts.tv_sec * 1000000000LL + ts.tv_nsec + 1000000LL;
		for (unsigned k = 1; !__atomic_load_n(&j->done, __ATOMIC_ACQUIRE); k++) {
			cf_cpu_relax();
			if ((k & 63) == 0) {
				clock_gettime(CLOCK_MONOTONIC, &ts);
				if (ts.tv_sec * 1000000000LL + ts.tv_nsec > until)
					break;
			}
		}
		pthread_mutex_lock(&sp->m);
		while (!j->done)
			pthread_cond_wait(&sp->cv, &sp->m);
		rc = 0;
	}
	pthread_mutex_unlock(&sp->m);
	if (rc == 0) {
		/* Logged here, by the free caller: the log may lie outside every
		 * writable location, where the fenced spawner can not write. */
		char buf[8192];
		int logfd = cf_fence_log_open(j->fence);
		cf_fence_log(j->fence, logfd, getpid(), j->program, true, CF_STATUS_APPLIED,
			     sp->rules, buf, sizeof buf);
		if (logfd >= 0)
			close(logfd);
	}
	pthread_mutex_lock(&lock);
	sp->busy = false;
	pthread_mutex_unlock(&lock);
	return rc;
}

int cf_shim_on_fenced_thread(void (*fn)(void *), void *arg, const char *program)
{
	struct job j = {.fn = fn, .arg = arg, .program = program};
	sigset_t chld, old;
	cpu_set_t mine;

	j.fence = cf_shim_fence_now();
	/* While the helper works, SIGCHLD stays blocked here, as the real call
	 * would block it in the calling thread: a handler must not reap the child
	 * before the call that made it does. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	j.mask = old;

	struct spawner *sp = NULL;
	if (j.fence->ready && !j.fence->inherited &&
	    sched_getaffinity(0, sizeof mine, &mine) == 0) {
		pthread_mutex_lock(&lock);
		sp = take_spawner(j.fence);
		pthread_mutex_unlock(&lock);
		if (sp && !CPU_EQUAL(&mine, &sp->affinity)) {
			pthread_mutex_lock(&lock);
			sp->busy = false;
			pthread_mutex_unlock(&lock);
			sp = NULL;
		}
	}
	int rc = sp ? on_spawner(sp, &j) : 1;
	if (rc == 1)
		rc = on_fresh_thread(&j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* fork(): the child has no spawner thread, and must not wait for one. */
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
	spawner = NULL;
	pthread_mutex_unlock(&lock);
}

void cf_shim_thread_init(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}
