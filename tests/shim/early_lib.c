/* libcf-early.so: calls every interposed function before the shim's
 * constructor has run (issue 19 item 1). Loaded before the shim
 * (LD_PRELOAD=this:shim, or as a library the program needs, whose
 * constructors run before a preloaded library's) or after it. Its
 * constructor calls syscall() with several numbers, from a signal handler,
 * a thread and a vfork child too, each exec form, posix_spawn, system and
 * popen; an IFUNC resolver, which runs while the program is relocated,
 * before any constructor, calls syscall() and starts a shell through it.
 * One line a call on stdout:
 *   SYSCALL name ok|bad ...   the result is the real one
 *   EXEC name refused errno=N the shim refused the launch (N: the errno)
 *   RAN name                  the launched shell ran (it also tried to cat
 *                             $CF_T_KEY: the test looks for the marker)
 * Plain write(2) and raw results only: stdio may not be set up yet. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)!write(1, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* The IFUNC: its resolver runs while cf-early is relocated, before every
 * constructor, when libc's environ is not set yet. It calls syscall(), and
 * starts a shell with syscall(SYS_clone) and syscall(SYS_execve) (libc is not
 * initialized: raw calls only), which tries the key named by CF_T_KEY (read
 * from /proc/self/environ) and says RAN ifunc-execve. The child exits 100
 * when the exec was refused with EPERM. */
static long resolver_pid, resolver_bad, resolver_exec = -1;
static char resolver_key[4096];

static void resolver_read_key(void)
{
	static char env[65536];
	long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/environ", O_RDONLY | O_CLOEXEC);
	long n = fd < 0 ? -1 : syscall(SYS_read, fd, env, sizeof env - 1);
	if (fd >= 0)
		syscall(SYS_close, fd);
	for (long i = 0; n > 0 && i < n; i += (long)strlen(env + i) + 1)
		if (strncmp(env + i, "CF_T_KEY=", 9) == 0)
			snprintf(resolver_key, sizeof resolver_key, "%s", env + i + 9);
}

static void resolver_exec_shell(void)
{
	static char *argv[] = {"sh", "-c", "cat \"$0\" 2>&1; echo RAN ifunc-execve", resolver_key, NULL};
	static char *envp[] = {NULL};
	resolver_read_key();
	long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) {
		syscall(SYS_execve, "/bin/sh", argv, envp);
		syscall(SYS_exit_group, errno == EPERM ? 100 : 101);
	}
	int st = 0;
	if (pid > 0 && syscall(SYS_wait4, pid, &st, 0, 0) == pid)
		resolver_exec = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static long early_ifunc_impl(void)
{
	return resolver_pid;
}
/* used: clang does not count the ifunc attribute as a use. */
__attribute__((used)) static long (*resolve_early_ifunc(void))(void)
{
	resolver_pid = syscall(SYS_getpid);
	if (resolver_pid != getpid())
		resolver_bad = 1;
	errno = 0;
	if (syscall(SYS_close, -1) != -1 || errno != EBADF)
		resolver_bad = 2;
	resolver_exec_shell();
	return early_ifunc_impl;
}
long cf_early_ifunc(void) __attribute__((ifunc("resolve_early_ifunc")));

long cf_early_resolver_bad(void);
long cf_early_resolver_bad(void)
{
	return resolver_bad;
}

/* The exit status of the resolver's shell: 0 it ran, 100 refused (EPERM). */
long cf_early_resolver_exec(void);
long cf_early_resolver_exec(void)
{
	return resolver_exec;
}

static void check(const char *name, int ok, long got, long want)
{
	say("SYSCALL %s %s got=%ld want=%ld\n", name, ok ? "ok" : "bad", got, want);
}

static void syscalls(const char *where)
{
	char name[64], cwd[4096] = "", raw[4096] = "";
	snprintf(name, sizeof name, "%s-getpid", where);
	long r = syscall(SYS_getpid);
	check(name, r == getpid(), r, getpid());
	snprintf(name, sizeof name, "%s-gettid", where);
	r = syscall(SYS_gettid);
	check(name, r == gettid(), r, gettid());
	/* n=2, the call that crashed Claude Code: open(2), then close(2). */
	snprintf(name, sizeof name, "%s-open", where);
	long fd = syscall(SYS_open, "/dev/null", O_RDONLY | O_CLOEXEC);
	check(name, fd >= 0 && fcntl((int)fd, F_GETFD) >= 0, fd, 3);
	snprintf(name, sizeof name, "%s-close", where);
	r = syscall(SYS_close, fd);
	check(name, r == 0 && fcntl((int)fd, F_GETFD) < 0, r, 0);
	snprintf(name, sizeof name, "%s-ebadf", where);
	errno = 0;
	r = syscall(SYS_close, -1);
	check(name, r == -1 && errno == EBADF, errno, EBADF);
	snprintf(name, sizeof name, "%s-getcwd", where);
	long want = getcwd(cwd, sizeof cwd) ? (long)strlen(cwd) + 1 : -1;
	r = syscall(SYS_getcwd, raw, sizeof raw);
	check(name, r == want && strcmp(cwd, raw) == 0, r, want);
}

static void on_signal(int sig)
{
	(void)sig;
	syscalls("signal");
}

static void *thread_main(void *arg)
{
	(void)arg;
	syscalls("thread");
	return NULL;
}

/* The shell line each launch runs: it tries the key, then says it ran. */
static void line(char *buf, size_t n, const char *name)
{
	const char *key = getenv("CF_T_KEY");
	snprintf(buf, n, "cat '%s' 2>&1; echo RAN %s", key ? key : "/nonexistent", name);
}

static void reap(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

enum how { E_EXECVE, E_EXECV, E_EXECVP, E_EXECVPE, E_EXECL, E_EXECLP, E_EXECLE, E_FEXECVE,
	   E_EXECVEAT, E_SYSCALL_EXECVE, E_SYSCALL_EXECVEAT, E_VFORK_EXECVE };
static const char *const how_name[] = {"execve", "execv", "execvp", "execvpe", "execl",
				       "execlp", "execle", "fexecve", "execveat",
				       "syscall-execve", "syscall-execveat", "vfork-execve"};

static void exec_as(enum how h, const char *cmd)
{
	char *argv[] = {"sh", "-c", (char *)cmd, NULL};
	int fd;
	switch (h) {
	case E_EXECVE:
	case E_VFORK_EXECVE:
		execve("/bin/sh", argv, environ);
		break;
	case E_EXECV:
		execv("/bin/sh", argv);
		break;
	case E_EXECVP:
		execvp("sh", argv);
		break;
	case E_EXECVPE:
		execvpe("sh", argv, environ);
		break;
	case E_EXECL:
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		break;
	case E_EXECLP:
		execlp("sh", "sh", "-c", cmd, (char *)NULL);
		break;
	case E_EXECLE:
		execle("/bin/sh", "sh", "-c", cmd, (char *)NULL, environ);
		break;
	case E_FEXECVE:
		fd = open("/bin/sh", O_RDONLY);
		fexecve(fd, argv, environ);
		break;
	case E_EXECVEAT:
		execveat(AT_FDCWD, "/bin/sh", argv, environ, 0);
		break;
	case E_SYSCALL_EXECVE:
		syscall(SYS_execve, "/bin/sh", argv, environ);
		break;
	case E_SYSCALL_EXECVEAT:
		syscall(SYS_execveat, AT_FDCWD, "/bin/sh", argv, environ, 0);
		break;
	}
}

static void execs(void)
{
	for (int h = E_EXECVE; h <= E_VFORK_EXECVE; h++) {
		char cmd[4096 + 64];
		line(cmd, sizeof cmd, how_name[h]);
		pid_t pid = h == E_VFORK_EXECVE ? vfork() : fork();
		if (pid == 0) {
			exec_as((enum how)h, cmd);
			int e = errno;
			if (h != E_VFORK_EXECVE) /* a vfork child reports by its status */
				say("EXEC %s refused errno=%d\n", how_name[h], e);
			_exit(e == EPERM ? 100 : 101);
		}
		if (pid > 0) {
			int st = 0;
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			if (h == E_VFORK_EXECVE && WIFEXITED(st) && WEXITSTATUS(st) >= 100)
				say("EXEC %s refused errno=%d\n", how_name[h],
				    WEXITSTATUS(st) == 100 ? EPERM : -1);
		}
	}
}

static void spawns(void)
{
	char cmd[4096 + 64];
	pid_t pid;

	line(cmd, sizeof cmd, "posix_spawn");
	char *argv[] = {"sh", "-c", cmd, NULL};
	int rc = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
	if (rc)
		say("EXEC posix_spawn refused errno=%d\n", rc);
	else
		reap(pid);

	line(cmd, sizeof cmd, "posix_spawnp");
	rc = posix_spawnp(&pid, "sh", NULL, NULL, argv, environ);
	if (rc)
		say("EXEC posix_spawnp refused errno=%d\n", rc);
	else
		reap(pid);

	line(cmd, sizeof cmd, "system");
	errno = 0;
	rc = system(cmd);
	if (rc == -1)
		say("EXEC system refused errno=%d\n", errno);

	line(cmd, sizeof cmd, "popen");
	errno = 0;
	FILE *p = popen(cmd, "r");
	if (!p) {
		say("EXEC popen refused errno=%d\n", errno);
	} else {
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof buf, p)) > 0)
			(void)!write(1, buf, n);
		pclose(p);
	}
}

__attribute__((constructor)) static void early_ctor(void)
{
	/* Only in cf-early: the shells it starts load this library too. */
	if (strcmp(program_invocation_short_name, "cf-early") != 0)
		return;
	syscalls("ctor");
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	pthread_t t;
	if (pthread_create(&t, NULL, thread_main, NULL) == 0)
		pthread_join(t, NULL);
	execs();
	spawns();
	say("CTOR done\n");
}
