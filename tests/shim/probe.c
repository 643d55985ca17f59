/* cf-probe: the program every launch of the shim tests runs. It reports, by
 * its exit status, what it could read:
 *   0  every key in CF_T_KEYS was denied with EACCES and CF_T_ALLOWED was read
 *  10  some key could be read (its content is copied to stdout, so that the
 *      marker check of the test sees it too)
 *  11  some key failed with an errno other than EACCES
 *  12  the allowed file could not be read
 *  13  the arguments were not the ones the caller passed
 *  14-16 a posix_spawn file action or attribute was lost
 *  20  the environment it needs is missing
 * Its arguments describe themselves: with N of them, argument I is "N:I". */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int args_ok(int argc, char **argv)
{
	char want[32];
	for (int i = 1; i < argc; i++) {
		snprintf(want, sizeof want, "%d:%d", argc - 1, i);
		if (strcmp(argv[i], want) != 0) {
			fprintf(stderr, "cf-probe: argument %d is '%s', expected '%s'\n", i, argv[i], want);
			return 0;
		}
	}
	return 1;
}

/* 1 readable (copied to stdout), 0 denied with EACCES, -1 other error. */
static int try_key(const char *key)
{
	int fd = open(key, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == EACCES)
			return 0;
		fprintf(stderr, "cf-probe: %s: %s (expected EACCES)\n", key, strerror(errno));
		return -1;
	}
	char buf[4096];
	ssize_t n;
	while (!getenv("CF_T_QUIET") && (n = read(fd, buf, sizeof buf)) > 0)
		if (write(1, buf, (size_t)n) != n)
			break;
	close(fd);
	return 1;
}

static int allowed_ok(const char *path)
{
	char buf[256] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cf-probe: allowed file %s: %s\n", path, strerror(errno));
		return 0;
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0 || strncmp(buf, "allowed-", 8) != 0) {
		fprintf(stderr, "cf-probe: allowed file %s: unexpected content\n", path);
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	const char *keys = getenv("CF_T_KEYS"), *allowed = getenv("CF_T_ALLOWED");
	if (!keys || !allowed) {
		fprintf(stderr, "cf-probe: CF_T_KEYS and CF_T_ALLOWED must be set\n");
		return 20;
	}
	if (!args_ok(argc, argv))
		return 13;
	if (getenv("CF_T_FD3") && write(3, "fd3-ok", 6) != 6) {
		fprintf(stderr, "cf-probe: fd 3 (a posix_spawn file action) is missing\n");
		return 14;
	}
	if (getenv("CF_T_PGRP") && getpgrp() != getpid()) {
		fprintf(stderr, "cf-probe: POSIX_SPAWN_SETPGROUP was lost\n");
		return 15;
	}
	if (getenv("CF_T_SIGMASK")) {
		sigset_t m;
		sigprocmask(SIG_SETMASK, NULL, &m);
		if (!sigismember(&m, SIGUSR1)) {
			fprintf(stderr, "cf-probe: POSIX_SPAWN_SETSIGMASK was lost\n");
			return 16;
		}
	}
	int readable = 0, other = 0;
	char list[65536];
	snprintf(list, sizeof list, "%s", keys);
	for (char *save, *k = strtok_r(list, ":", &save); k; k = strtok_r(NULL, ":", &save)) {
		int r = try_key(k);
		readable += r == 1;
		other += r < 0;
	}
	if (!allowed_ok(allowed))
		return 12;
	if (readable)
		return 10;
	return other ? 11 : 0;
}
