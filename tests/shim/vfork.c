/* cf-vfork: a C harness that starts its children with vfork + execve while
 * another thread allocates and frees (the vfork child shares the memory of a
 * multithreaded parent). Each round: `bash -c 'cat "$CF_T_KEY"'` (denied,
 * status 1), `cat "$CF_T_ALLOWED"` (status 0), cf-probe without LD_PRELOAD in
 * its environment (status 0: fenced by the kernel). Prints one CASE line each. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static atomic_int stop;

static void *churn(void *arg)
{
	(void)arg;
	while (!stop) {
		void *p[64];
		for (int i = 0; i < 64; i++)
			p[i] = malloc((size_t)(16 + i * 24));
		for (int i = 0; i < 64; i++)
			free(p[i]);
	}
	return NULL;
}

static int run(char *const argv[], char *const envp[])
{
	int st;
	pid_t pid = vfork();
	if (pid == 0) {
		execve(argv[0], argv, envp);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	const char *probe = getenv("CF_T_PROBE"), *allowed = getenv("CF_T_ALLOWED");
	if (!probe || !allowed || !getenv("CF_T_KEYS") || !getenv("CF_T_KEY")) {
		fprintf(stderr, "cf-vfork: CF_T_PROBE, CF_T_KEY, CF_T_KEYS, CF_T_ALLOWED must be set\n");
		return 2;
	}
	static char e1[70000], e2[8192];
	snprintf(e1, sizeof e1, "CF_T_KEYS=%s", getenv("CF_T_KEYS"));
	snprintf(e2, sizeof e2, "CF_T_ALLOWED=%s", allowed);
	char *probe_env[] = {e1, e2, "PATH=/usr/bin:/bin", NULL};
	pthread_t t;
	pthread_create(&t, NULL, churn, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < rounds; i++) {
		int deny = run((char *[]){"/bin/bash", "-c", "cat \"$CF_T_KEY\"", NULL}, environ);
		int legit = run((char *[]){"/bin/cat", (char *)allowed, NULL}, environ);
		int pr = run((char *[]){(char *)probe, NULL}, probe_env);
		printf("CASE vfork deny=%d legit=%d probe=%d\n", deny, legit, pr);
	}
	stop = 1;
	pthread_join(t, NULL);
	return 0;
}
