/* A static harness, as Codex's native program is: it loads no shim, and
 * keeps only descriptors 0-2 for what it starts (issue 31). Built by the
 * test with musl-gcc -static (test_fenced_ns.c).
 *
 *   static-harness [--core] SCRIPT
 *
 * Closes every descriptor above 2, then forks and execs /bin/sh -c SCRIPT
 * (dynamic: it loads the shim from LD_PRELOAD and fences itself), and exits
 * with its status. --core: the shell gets only HOME, PATH, LD_PRELOAD and
 * CREDFENCE_WORKSPACE, as Codex's [shell_environment_policy] inherit =
 * "core" with the set line credfence asks for: no CREDFENCE_SUPERVISOR, no
 * CREDFENCE_FENCED_NS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char **core_env(void)
{
	static const char *keep[] = {"HOME=", "PATH=", "LD_PRELOAD=", "CREDFENCE_WORKSPACE="};
	static char *out[8];
	size_t n = 0;
	for (char **e = environ; *e && n < 7; e++)
		for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
			if (!strncmp(*e, keep[i], strlen(keep[i])))
				out[n++] = *e;
	out[n] = NULL;
	return out;
}

int main(int argc, char **argv)
{
	int core = argc == 3 && !strcmp(argv[1], "--core");
	if (argc != 2 + core) {
		fputs("usage: static-harness [--core] SCRIPT\n", stderr);
		return 2;
	}
	for (long fd = 3, max = sysconf(_SC_OPEN_MAX); fd < max && fd < 65536; fd++)
		close((int)fd);
	char *av[] = {"/bin/sh", "-c", argv[1 + core], NULL};
	char **env = core ? core_env() : environ;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execve(av[0], av, env);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}
