/* cf-nsharness: a harness (run under `credfence harness`) that starts
 * `/bin/sh -c SCRIPT` one way and exits with its status, so that the tests
 * of the mount namespace of the fenced tree reach a harness child by each
 * launch path the shim intercepts.
 *
 *   cf-nsharness fork|vfork|spawn|system|popen|closefds|closerange|clobber|moved|dlnext|
 *                reexec SCRIPT
 *
 * closefds: fork, close every descriptor above 2 one by one with close(),
 * then execve: the documented fallback. closerange: the same with one
 * close_range(3, ~0U, 0), as CPython's close_fds does in its child: the
 * shim closes around the namespace's descriptors. clobber: fork, put
 * /dev/null in the place of the namespace's two descriptors, then execve:
 * the child must see that they are not the namespaces.
 *
 * dlnext: fork, then the execve that dlsym(RTLD_NEXT, "execve") finds from
 * a library of its own (libcf-nsnext.so, loaded after the shim): libc's,
 * which the shim does not see; /bin/sh then fences itself (self mode).
 * reexec: the harness closes every descriptor above 2 one by one and
 * execs itself again (the harness again, as a relaunch), then forks as
 * "fork". reexec-failexec: the same, and the new image first makes an exec
 * of its own that fails (CF_T_NOSHEBANG, an executable file without #!:
 * ENOEXEC; "FAILEXEC ERRNO-NAME"), then forks as "fork".
 * CF_T_CLOSE_FIRST=1: the harness closes every descriptor above 2
 * one by one in itself before any way, so that each launch finds the
 * namespace's descriptors gone (issue 31: they come from the supervisor).
 *
 * moved: fork, then execve with KUBECONFIG=$CF_T_MOVED added to the
 * environment: it moves a secret, so the shim relaunches the child through
 * credfence run.
 *
 *   cf-nsharness reach PID|-
 *
 * Tries to reach the keeper of the namespace (PID, or -: the last field of
 * CREDFENCE_FENCED_NS): opens /proc/PID/mem and /proc/PID/environ and
 * reads them, and attaches with ptrace. One line each, "DENIED WHAT ERRNO"
 * or "LEAK WHAT"; exits 1 when one got through. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/ptrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int reach(const char *arg)
{
	const char *v = getenv("CREDFENCE_FENCED_NS");
	const char *last = v ? strrchr(v, ',') : NULL;
	int pid = atoi(strcmp(arg, "-") ? arg : last ? last + 1 : "0");
	int leaks = 0;
	char path[64];
	if (pid <= 0) {
		printf("NOKEEPER\n");
		return 1;
	}
	printf("KEEPER %d\n", pid);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "/proc/%d/%s", pid, i ? "environ" : "mem");
		/* Opened and read: /proc/PID/environ checks at open and read. */
		char b[64];
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t got = fd < 0 ? -1 : i ? read(fd, b, sizeof b) : pread(fd, b, 8, 0x400000);
		if (got > 0) {
			printf("LEAK %s\n", path);
			leaks++;
		} else {
			printf("DENIED %s %s\n", path, got ? strerrorname_np(errno) : "empty");
		}
		if (fd >= 0)
			close(fd);
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) == 0) {
		printf("LEAK ptrace\n");
		leaks++;
	} else {
		printf("DENIED ptrace %s\n", strerrorname_np(errno));
	}
	return leaks ? 1 : 0;
}

/* From libcf-nsnext.so: execve as dlsym(RTLD_NEXT) finds it there. */
int cf_nsnext_execve(const char *path, char *const argv[], char *const envp[]);

static void close_above_2(void)
{
	for (long fd = 3, max = sysconf(_SC_OPEN_MAX); fd < max && fd < 65536; fd++)
		close((int)fd);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "reach"))
		return reach(argv[2]);
	const char *first = getenv("CF_T_CLOSE_FIRST");
	if (first && !strcmp(first, "1"))
		close_above_2();
	if (argc != 3) {
		fprintf(stderr, "usage: cf-nsharness fork|vfork|spawn|system|popen|closefds|closerange|"
				"clobber|moved|dlnext|reexec|reexec-failexec SCRIPT\n");
		return 2;
	}
	const char *how = argv[1];
	char *av[] = {"/bin/sh", "-c", argv[2], NULL};
	pid_t pid = -1;
	int st;
	fflush(stdout);
	if (!strcmp(how, "failexec")) {
		const char *f = getenv("CF_T_NOSHEBANG");
		char *fav[] = {(char *)(f ? f : "/nonexistent-cf"), NULL};
		execve(fav[0], fav, environ);
		printf("FAILEXEC %s\n", strerrorname_np(errno));
		fflush(stdout);
		how = "fork";
	}
	if (!strcmp(how, "system")) {
		st = system(argv[2]);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	} else if (!strcmp(how, "popen")) {
		FILE *p = popen(argv[2], "r");
		char line[4096];
		if (!p) {
			fprintf(stderr, "cf-nsharness: popen: %s\n", strerror(errno));
			return 127;
		}
		while (fgets(line, sizeof line, p))
			fputs(line, stdout);
		st = pclose(p);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	} else if (!strcmp(how, "reexec") || !strcmp(how, "reexec-failexec")) {
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		if (n <= 0)
			return 127;
		self[n] = '\0';
		close_above_2();
		char *again[] = {self, strcmp(how, "reexec") ? "failexec" : "fork", argv[2], NULL};
		execve(self, again, environ);
		fprintf(stderr, "cf-nsharness: execve %s: %s\n", self, strerror(errno));
		return 127;
	} else if (!strcmp(how, "dlnext")) {
		pid = fork();
		if (pid == 0) {
			cf_nsnext_execve(av[0], av, environ);
			_exit(127);
		}
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
	} else if (!strcmp(how, "moved")) {
		static char kube[4096];
		const char *to = getenv("CF_T_MOVED");
		size_t n = 0;
		while (environ[n])
			n++;
		char **env = calloc(n + 2, sizeof *env);
		if (!env || !to || snprintf(kube, sizeof kube, "KUBECONFIG=%s", to) >= (int)sizeof kube) {
			fprintf(stderr, "cf-nsharness: moved needs CF_T_MOVED\n");
			return 2;
		}
		for (size_t i = 0; i < n; i++)
			env[i] = environ[i];
		env[n] = kube;
		pid = fork();
		if (pid == 0) {
			execve(av[0], av, env);
			_exit(127);
		}
		free(env);
	} else if (!strcmp(how, "clobber")) {
		/* Another file put in the place of the namespace's descriptors
		 * (their numbers: the first two fields of CREDFENCE_FENCED_NS,
		 * which the shim rewrote when it moved them). */
		const char *v = getenv("CREDFENCE_FENCED_NS");
		int ufd = -1, mfd = -1;
		if (!v || sscanf(v, "%d,%d", &ufd, &mfd) != 2 || ufd < 3 || mfd < 3) {
			fprintf(stderr, "cf-nsharness: clobber needs CREDFENCE_FENCED_NS (%s)\n",
				v ? v : "unset");
			return 2;
		}
		pid = fork();
		if (pid == 0) {
			int nul = open("/dev/null", O_RDONLY);
			if (nul < 0 || dup2(nul, ufd) < 0 || dup2(nul, mfd) < 0)
				_exit(126);
			execve(av[0], av, environ);
			_exit(127);
		}
	} else if (!strcmp(how, "fork") || !strcmp(how, "closefds") ||
		   !strcmp(how, "closerange")) {
		pid = fork();
		if (pid == 0) {
			/* One by one, as an older CPython or a harness's own loop:
			 * the fallback. */
			if (!strcmp(how, "closefds"))
				for (long fd = 3, max = sysconf(_SC_OPEN_MAX); fd < max; fd++)
					close((int)fd);
			/* As CPython's close_fds since 3.10 on glibc 2.34+. */
			if (!strcmp(how, "closerange"))
				close_range(3, ~0U, 0);
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
