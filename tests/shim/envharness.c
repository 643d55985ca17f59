/* cf-envharness: a C harness that starts `sh -c "$CF_T_CHILD" WAY` on every
 * launch path it has (issue 20): fork + execve, vfork + execve, posix_spawn
 * and execvpe with an environment it builds by hand, posix_spawnp, execle,
 * syscall(SYS_execve), fexecve, execveat, system, popen, a pipeline. The child prints its
 * environment and /proc/self and /proc/PPID's. At the end the harness says
 * how many of its own variables hold the fake tag (it keeps them all) and
 * how many its own /proc/self/environ still shows (none: moved out).
 * Usage: cf-envharness TAG TAG_UPPER (the fixture's tag, and its hex in
 * upper case, as the fake values hold them). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Static: a vfork child shares this frame, and nothing here may be clobbered. */
static char **env;

static char **handbuilt(void)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **e = calloc(n + 2, sizeof(char *));
	if (!e)
		abort();
	for (size_t i = 0; i < n; i++)
		e[i] = environ[i];
	e[n] = "CF_T_HANDBUILT=1";
	return e;
}

static void wait_for(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		;
}

static char *child(void)
{
	char *c = getenv("CF_T_CHILD");
	if (!c)
		abort();
	return c;
}

static size_t holding(const char *hay, size_t len, const char *tag)
{
	size_t n = 0, k = strlen(tag);
	for (size_t i = 0; i + k <= len; i++)
		n += memcmp(hay + i, tag, k) == 0;
	return n;
}

int main(int argc, char **argv)
{
	env = handbuilt();
	char *c = child();
	pid_t pid;
	fflush(stdout);

	if ((pid = fork()) == 0) {
		execve("/bin/sh", (char *[]){"sh", "-c", c, "c-fork-execve", NULL}, env);
		_exit(127);
	}
	wait_for(pid);
	if ((pid = vfork()) == 0) {
		execve("/bin/sh", (char *[]){"sh", "-c", c, "c-vfork-execve", NULL}, env);
		_exit(127);
	}
	wait_for(pid);
	if (posix_spawn(&pid, "/bin/sh", NULL, NULL, (char *[]){"sh", "-c", c, "c-posix_spawn", NULL},
			env) == 0)
		wait_for(pid);
	if (posix_spawnp(&pid, "sh", NULL, NULL, (char *[]){"sh", "-c", c, "c-posix_spawnp", NULL},
			 environ) == 0)
		wait_for(pid);
	if ((pid = fork()) == 0) {
		execvpe("sh", (char *[]){"sh", "-c", c, "c-execvpe", NULL}, env);
		_exit(127);
	}
	wait_for(pid);
	if ((pid = fork()) == 0) {
		execle("/bin/sh", "sh", "-c", c, "c-execle", (char *)NULL, env);
		_exit(127);
	}
	wait_for(pid);
	if ((pid = fork()) == 0) {
		syscall(SYS_execve, "/bin/sh", (char *[]){"sh", "-c", c, "c-syscall", NULL}, env);
		_exit(127);
	}
	wait_for(pid);
	int shfd = open("/bin/sh", O_RDONLY | O_CLOEXEC);
	if ((pid = fork()) == 0) {
		fexecve(shfd, (char *[]){"sh", "-c", c, "c-fexecve", NULL}, env);
		_exit(127);
	}
	wait_for(pid);
	if ((pid = fork()) == 0) {
		execveat(AT_FDCWD, "/bin/sh", (char *[]){"sh", "-c", c, "c-execveat", NULL}, env, 0);
		_exit(127);
	}
	wait_for(pid);
	close(shfd);
	fflush(stdout);
	/* A launch that fails says so: the test then shows why. */
	int rc = system("sh -c \"$CF_T_CHILD\" c-system");
	if (rc)
		fprintf(stderr, "envharness: system: %d (%s)\n", rc, strerror(errno));
	rc = system("sh -c \"$CF_T_CHILD\" c-pipeline | cat");
	if (rc)
		fprintf(stderr, "envharness: system, a pipeline: %d (%s)\n", rc, strerror(errno));
	FILE *p = popen("sh -c \"$CF_T_CHILD\" c-popen", "r");
	if (!p)
		fprintf(stderr, "envharness: popen: %s\n", strerror(errno));
	char line[8192];
	while (p && fgets(line, sizeof line, p))
		fputs(line, stdout);
	if (p)
		pclose(p);

	/* The harness's own environment: every fake variable still there. */
	/* The tag comes as arguments: no child prints them. */
	const char *tag = argc > 2 ? argv[1] : NULL, *up = argc > 2 ? argv[2] : NULL;
	size_t own = 0;
	for (char **e = environ; tag && up && *e; e++)
		own += strstr(*e, tag) || strstr(*e, up);
	printf("HARNESS-HAS %zu\n", own);
	char buf[1 << 16];
	int fd = open("/proc/self/environ", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
	if (fd >= 0)
		close(fd);
	printf("HARNESS-PROC-HAS %zu\n",
	       n > 0 && tag && up ? holding(buf, (size_t)n, tag) + holding(buf, (size_t)n, up) : 999);
	/* The supervisor and the waiter above the harness (credfence harness's
	 * process, when there is a supervisor): how many fake values their
	 * /proc/PID/environ show (counted, never printed: above them are the
	 * test runner's own). Unreadable counts as none. */
	size_t above = 0;
	pid_t anc = getppid();
	for (int up_level = 0; up_level < 2 && anc > 1 && tag && up; up_level++) {
		char path[64], st[512];
		snprintf(path, sizeof path, "/proc/%d/environ", (int)anc);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
		if (fd >= 0)
			close(fd);
		if (n > 0)
			above += holding(buf, (size_t)n, tag) + holding(buf, (size_t)n, up);
		snprintf(path, sizeof path, "/proc/%d/stat", (int)anc);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, st, sizeof st - 1);
		if (fd >= 0)
			close(fd);
		st[n > 0 ? n : 0] = '\0';
		char *r = strrchr(st, ')');
		anc = r ? (pid_t)atoi(r + 4) : 0; /* ") S PPID" */
	}
	printf("ABOVE-HAS %zu\n", above);
	free(env);
	return 0;
}
