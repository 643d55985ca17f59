/* The benchmark driver: what a whole-process timer is too coarse for.
 *
 *   cf-bench launch N spawn|fork|vfork CMD [ARG...]
 *       start CMD N times one after the other, each waited for; print the
 *       per-launch times in microseconds: "min median max mean"
 *   cf-bench plan HOME WORKSPACE N
 *       build the plan and ruleset N times fresh, and check it N times for
 *       reuse; print "fresh_us reuse_us rules"
 *   cf-bench rss CMD [ARG...]
 *       run CMD once; print its peak resident set in KiB
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fence.h"

extern char **environ;

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void stats(double *v, int n)
{
	double sum = 0;
	qsort(v, (size_t)n, sizeof *v, cmp);
	for (int i = 0; i < n; i++)
		sum += v[i];
	printf("%.1f %.1f %.1f %.1f\n", v[0], v[n / 2], v[n - 1], sum / n);
}

static pid_t start(const char *how, char **cmd)
{
	pid_t pid;
	if (strcmp(how, "spawn") == 0) {
		int e = posix_spawnp(&pid, cmd[0], NULL, NULL, cmd, environ);
		if (e) {
			errno = e;
			return -1;
		}
		return pid;
	}
	pid = strcmp(how, "vfork") == 0 ? vfork() : fork();
	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	return pid;
}

static int launch(int n, const char *how, char **cmd)
{
	double *t = calloc((size_t)n, sizeof *t);
	if (!t)
		return 1;
	for (int i = 0; i < n; i++) {
		int status;
		double a = now_us();
		pid_t pid = start(how, cmd);
		if (pid < 0 || waitpid(pid, &status, 0) < 0) {
			perror("cf-bench: launch");
			return 1;
		}
		t[i] = now_us() - a;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "cf-bench: %s exited with status %d\n", cmd[0], status);
			return 1;
		}
	}
	stats(t, n);
	return 0;
}

static int plan(const char *home, const char *ws, int n)
{
	struct cf_options o;
	struct cf_fence f;
	double fresh = 0, reuse = 0;
	size_t rules = 0;
	cf_options_init(&o);
	o.home = home;
	o.workspace = ws;
	for (int i = 0; i < n; i++) {
		double a = now_us();
		if (cf_fence_prepare(&f, &o, environ, ws) || !f.ready) {
			fprintf(stderr, "cf-bench: %s\n", f.pol.reason);
			return 1;
		}
		fresh += now_us() - a;
		rules = f.res.rules;
		a = now_us();
		volatile bool cur = cf_fence_current(&f);
		reuse += now_us() - a;
		(void)cur;
		cf_fence_free(&f);
	}
	printf("%.1f %.2f %zu\n", fresh / n, reuse / n, rules);
	return 0;
}

static int rss(char **cmd)
{
	struct rusage ru;
	int status;
	pid_t pid = start("fork", cmd);
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
		perror("cf-bench: rss");
		return 1;
	}
	printf("%ld\n", ru.ru_maxrss);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "launch") == 0)
		return launch(atoi(argv[2]), argv[3], argv + 4);
	if (argc == 5 && strcmp(argv[1], "plan") == 0)
		return plan(argv[2], argv[3], atoi(argv[4]));
	if (argc >= 3 && strcmp(argv[1], "rss") == 0)
		return rss(argv + 2);
	fputs("usage: cf-bench launch N spawn|fork|vfork CMD... | plan HOME WS N | rss CMD...\n",
	      stderr);
	return 2;
}
