/* libcf-forkthread.so: preloaded into credfence by test_guard.c. It starts a
 * thread in every child made by fork, as ThreadSanitizer's runtime does
 * (compiler-rt's ForkChildAfter starts its background thread), so that the
 * process that guards the harness is never one of one thread. */
#include <pthread.h>
#include <unistd.h>

static void *idle(void *arg)
{
	for (;;)
		pause();
	return arg;
}

static void in_child(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, idle, NULL) == 0)
		pthread_detach(t);
}

__attribute__((constructor)) static void start(void)
{
	pthread_atfork(NULL, NULL, in_child);
}
