/* Built with musl-gcc -static at test time: a program the shim can not load
 * into. It reads the key itself, then starts `cat KEY` and `cat ALLOWED` with
 * musl's fork and execve. Both must be fenced by inheritance. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int run(const char *a, const char *b)
{
	int st;
	pid_t pid = fork();
	if (pid == 0) {
		execve(a, (char *[]){(char *)a, (char *)b, NULL}, (char *[]){NULL});
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	const char *key = getenv("CF_T_KEY"), *allowed = getenv("CF_T_ALLOWED");
	if (!key || !allowed)
		return 2;
	int fd = open(key, O_RDONLY);
	if (fd >= 0) {
		char buf[256];
		ssize_t n = read(fd, buf, sizeof buf);
		if (n > 0)
			fwrite(buf, 1, (size_t)n, stdout);
		printf("MUSL_OPEN readable\n");
	} else {
		printf("MUSL_OPEN %s\n", errno == EACCES ? "EACCES" : strerror(errno));
	}
	fflush(stdout);
	int deny = run("/bin/cat", key);
	int legit = run("/bin/cat", allowed);
	printf("CASE musl deny=%d legit=%d\n", deny, legit);
	return 0;
}
