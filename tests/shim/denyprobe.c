/* cf-denyprobe KEY OTHER ALLOWED: the C calls a fenced program makes on a
 * secret, each line "CALL errno-name": open KEY twice (one notice, not two),
 * fopen OTHER, stat KEY, open ALLOWED (no notice). errno is printed as the
 * call left it: the shim must not change it.
 *
 * cf-denyprobe forge read|write PATH...: the shim's report for each PATH,
 * made by hand (a fenced program forging one); prints "forge errno-name".
 * cf-denyprobe forge write-row N PATH...: the same, naming row N (1 and up:
 * 1 + an index of the protected table) as the shim does for a file the plan
 * found.
 *
 * cf-denyprobe late KEY OTHER: what the shim of a fenced program does at the
 * first call, not in its constructor (issue 22), made first from a fork
 * child and from a thread: a fork child's first denial (open KEY) and
 * system(); a thread's first denial (open OTHER), posix_spawnp and popen.
 * Prints "CALL result" lines. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "notify/denial_wire.h"

static void say(const char *call, int ok)
{
	int e = errno;
	printf("%s %s\n", call, ok ? "OK" : strerrorname_np(e));
}

extern char **environ;

static void *late_thread(void *other)
{
	int fd = open(other, O_RDONLY);
	say("thread-open", fd >= 0);
	pid_t pid;
	char *argv[] = {"sh", "-c", "exit 5", NULL};
	int rc = posix_spawnp(&pid, "sh", NULL, NULL, argv, environ), status = -1;
	if (rc == 0)
		waitpid(pid, &status, 0);
	printf("thread-spawn %d\n", rc == 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	char line[64] = "";
	FILE *p = popen("echo popened", "r");
	if (p && !fgets(line, sizeof line, p))
		line[0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	printf("thread-popen %s %d\n", line, p ? pclose(p) : -1);
	return NULL;
}

static int late(const char *key, const char *other)
{
	pid_t c = fork();
	if (c == 0) {
		int fd = open(key, O_RDONLY);
		say("fork-open", fd >= 0);
		int st = system("exit 7");
		printf("fork-system %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		fflush(stdout);
		_exit(0);
	}
	int status;
	if (c < 0 || waitpid(c, &status, 0) != c)
		return 1;
	pthread_t t;
	if (pthread_create(&t, NULL, late_thread, (void *)other) || pthread_join(t, NULL))
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "forge") == 0) {
		bool row = strcmp(argv[2], "write-row") == 0;
		for (int i = row ? 4 : 3; i < argc; i++) {
			struct cf_denial_report r = {.access = row || strcmp(argv[2], "write") == 0,
						     .reserved = row ? (uint32_t)atoi(argv[3]) : 0};
			snprintf(r.path, sizeof r.path, "%s", argv[i]);
			int rc = ioctl(-1, CF_DENIAL_IOCTL, &r);
			printf("forge %s\n", rc == 0 ? "OK" : strerrorname_np(errno));
		}
		return 0;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 4 && strcmp(argv[1], "late") == 0)
		return late(argv[2], argv[3]);
	if (argc != 4)
		return 2;
	int fd = open(argv[1], O_RDONLY);
	say("open", fd >= 0);
	fd = openat(AT_FDCWD, argv[1], O_RDONLY);
	say("openat-again", fd >= 0);
	FILE *f = fopen(argv[2], "r");
	say("fopen", f != NULL);
	struct stat st;
	say("stat", stat(argv[1], &st) == 0);
	fd = open(argv[3], O_RDONLY);
	say("open-allowed", fd >= 0);
	return 0;
}
