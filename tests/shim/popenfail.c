/* cf-popenfail: a harness (under `credfence harness`) whose stream for a
 * popen can not be made: its own fdopen, which the shim's popen calls
 * (shim/linux/system.c), fails once with ENOMEM, as the C library's does
 * when memory is out. Built with --export-dynamic, so that the shim's call
 * binds to this definition. For each mode ("w", then "r") it says:
 *   POPEN-<mode> NULL errno=<name> | POPEN-<mode> stream
 *   LEAKED-<mode> <n>   pipes open now less before the popen
 * then WORKS from a popen that fdopen lets through, and DONE. The child
 * of the "w" popen reads its stdin to the end and says CHILD-ENDED: were
 * the harness's end of the pipe left open, it would never end, and the
 * popen would wait for it forever (an alarm ends this after 20 s). */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static bool fail_next;

FILE *fdopen(int fd, const char *mode)
{
	if (fail_next) {
		fail_next = false;
		errno = ENOMEM;
		return NULL;
	}
	FILE *(*real)(int, const char *) = (FILE * (*)(int, const char *)) dlsym(RTLD_NEXT, "fdopen");
	if (!real) {
		errno = ENOSYS;
		return NULL;
	}
	return real(fd, mode);
}

/* The pipes this process holds (the shim's own descriptors, the fence's
 * watch among them, come and go with its launches: not counted). */
static int open_pipes(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1000;
	while ((e = readdir(d))) {
		char p[300], t[64];
		snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
		ssize_t k = readlink(p, t, sizeof t - 1);
		if (k > 5 && !strncmp(t, "pipe:", 5))
			n++;
	}
	closedir(d);
	return n;
}

static void failed_popen(const char *cmd, const char *mode)
{
	int before = open_pipes();
	fail_next = true;
	FILE *p = popen(cmd, mode);
	int e = errno;
	if (p)
		printf("POPEN-%s stream\n", mode);
	else
		printf("POPEN-%s NULL errno=%s\n", mode, strerrorname_np(e) ? strerrorname_np(e) : "?");
	printf("LEAKED-%s %d\n", mode, open_pipes() - before);
	fflush(stdout);
	if (p)
		pclose(p);
}

int main(void)
{
	alarm(20);
	failed_popen("cat >/dev/null; echo CHILD-ENDED", "w");
	failed_popen("echo CHILD-ENDED", "r");
	FILE *p = popen("echo WORKS", "r");
	char line[64] = "";
	if (p && fgets(line, sizeof line, p))
		fputs(line, stdout);
	if (p)
		pclose(p);
	puts("DONE");
	return 0;
}
