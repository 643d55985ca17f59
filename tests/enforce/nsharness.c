/* cf-nsharness: a harness (run under `credfence harness`) that starts
 * `/bin/sh -c SCRIPT` one way and exits with its status, so that the tests
 * of the mount namespace of the fenced tree reach a harness child by each
 * launch path the shim intercepts.
 *
 *   cf-nsharness fork|vfork|spawn|system|closefds SCRIPT
 *
 * closefds: fork, close every descriptor above 2 (as CPython's close_fds
 * does in its child), then execve: the documented fallback. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cf-nsharness fork|vfork|spawn|system|closefds SCRIPT\n");
		return 2;
	}
	const char *how = argv[1];
	char *av[] = {"/bin/sh", "-c", argv[2], NULL};
	pid_t pid = -1;
	int st;
	fflush(stdout);
	if (!strcmp(how, "system")) {
		st = system(argv[2]);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	} else if (!strcmp(how, "spawn")) {
		int rc = posix_spawn(&pid, av[0], NULL, NULL, av, environ);
		if (rc) {
			fprintf(stderr, "cf-nsharness: posix_spawn: %s\n", strerror(rc));
			return 127;
		}
	} else if (!strcmp(how, "vfork")) {
		pid = vfork();
		if (pid == 0) {
			execve(av[0], av, environ);
			_exit(127);
		}
	} else if (!strcmp(how, "fork") || !strcmp(how, "closefds")) {
		pid = fork();
		if (pid == 0) {
			if (!strcmp(how, "closefds"))
				closefrom(3);
			execve(av[0], av, environ);
			_exit(127);
		}
	} else {
		fprintf(stderr, "cf-nsharness: unknown way %s\n", how);
		return 2;
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}
