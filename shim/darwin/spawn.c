/* posix_spawn on macOS is one system call: there is no moment in the child
 * where the shim runs, and a Seatbelt sandbox binds a whole process (no
 * fenced-thread trick as on Linux). So in the harness:
 *
 *   fork; in the child apply the sandbox, then call the real posix_spawn with
 *   POSIX_SPAWN_SETEXEC, which execs in place with the caller's file actions
 *   and attributes; an error before or at the exec is written to a
 *   close-on-exec pipe and the child exits. The parent reads the pipe: end of
 *   file means the exec happened and the child's pid is the caller's; an
 *   errno means it did not, the child is reaped, and the caller gets that
 *   errno, the same error as without the shim.
 *
 * libuv, Rust's std::process, make and libSystem's own system() and popen()
 * spawn this way. Differences from the real call, all invisible to the
 * program: the caller's pthread_atfork handlers run, and the spawn costs a
 * fork. Outside the harness (fenced already, best effort without isolation)
 * the real call is made as is. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard.h"
#include "interpose.h"
#include "shim.h"

/* Above the descriptors callers name in their file actions, so a dup2 of
 * theirs does not land on the error pipe. */
#define CF_ERR_FD_MIN 512

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);

struct spawn_call {
	spawn_fn real;
	pid_t *pid;
	const char *path;
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
	char *const *argv, *const *envp;
};

/* The real spawn, with the environment cf_shim_child_call gives. */
struct spawn_now {
	const struct spawn_call *c;
	const posix_spawnattr_t *attr;
	pid_t *pid;
};

static int call_spawn(char *const env[], const void *arg)
{
	const struct spawn_now *n = arg;
	const struct spawn_call *c = n->c;
	return c->real(n->pid, c->path, c->fa, n->attr, c->argv, env);
}

/* Fence this process and exec. Returns an errno value (only on failure), or
 * -1 with errno EPERM when the child must not run. */
static int fenced_spawn(const struct spawn_call *c, const posix_spawnattr_t *attr, pid_t *pid)
{
	struct spawn_now n = {c, attr, pid};
	return cf_shim_child_call(c->path, c->envp, call_spawn, &n);
}

static int errno_of(int rc)
{
	return rc == -1 ? (errno ? errno : EPERM) : rc;
}

/* In the fork child: the caller's attributes plus POSIX_SPAWN_SETEXEC, set
 * on a copy of the caller's posix_spawnattr_t. On macOS that is a handle: the
 * copy names the caller's attribute object, which is this process's own copy
 * of the parent's memory, so setting a flag on it changes nothing in the
 * parent. */
static int child_spawn(const struct spawn_call *c)
{
	posix_spawnattr_t attr;
	short flags = 0;
	int rc;
	if (!c->attr) {
		if ((rc = posix_spawnattr_init(&attr)))
			return rc;
	} else {
		attr = *c->attr;
		if ((rc = posix_spawnattr_getflags(&attr, &flags)))
			return rc;
	}
	if ((rc = posix_spawnattr_setflags(&attr, flags | POSIX_SPAWN_SETEXEC)))
		return rc;
	return errno_of(fenced_spawn(c, &attr, NULL));
}

static __attribute__((noreturn)) void child(const struct spawn_call *c, int wfd)
{
	int high = fcntl(wfd, F_DUPFD_CLOEXEC, CF_ERR_FD_MIN);
	if (high >= 0) {
		close(wfd);
		wfd = high;
	}
	int err = child_spawn(c);
	if (!err)
		err = EINVAL; /* SETEXEC returned success without exec: never expected */
	ssize_t n;
	do
		n = write(wfd, &err, sizeof err);
	while (n < 0 && errno == EINTR);
	_exit(127);
}

static int close_on_exec(int fd)
{
	int fl = fcntl(fd, F_GETFD);
	return fl < 0 ? -1 : fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

static int spawn_forked(const struct spawn_call *c)
{
	int fds[2], err = 0;
	/* No pipe2 on macOS: a fork on another thread between pipe and fcntl
	 * could inherit the write end and delay our end of file until its own
	 * exec. The window is two system calls wide. */
	if (pipe(fds))
		return errno;
	if (close_on_exec(fds[0]) || close_on_exec(fds[1])) {
		err = errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	pid_t pid = fork();
	if (pid < 0) {
		err = errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0) {
		close(fds[0]);
		child(c, fds[1]);
	}
	close(fds[1]);
	ssize_t n;
	do
		n = read(fds[0], &err, sizeof err);
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == (ssize_t)sizeof err) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return err;
	}
	if (c->pid)
		*c->pid = pid;
	return 0;
}

static int spawn(const struct spawn_call *c)
{
	short flags = 0;
	if (c->attr && posix_spawnattr_getflags(c->attr, &flags) == 0 &&
	    (flags & POSIX_SPAWN_SETEXEC)) /* the caller's own exec: as execve */
		return errno_of(fenced_spawn(c, c->attr, c->pid));
	if (cf_shim.role != CF_ROLE_HARNESS)
		return c->real(c->pid, c->path, c->fa, c->attr, c->argv, c->envp);
	return spawn_forked(c);
}

static int guarded(const struct spawn_call *c)
{
	int e = errno, rc;
	if (cf_guard_enter())
		rc = c->real(c->pid, c->path, c->fa, c->attr, c->argv, c->envp);
	else
		rc = spawn(c);
	cf_guard_leave();
	errno = e; /* posix_spawn reports by its return value, not errno */
	return rc;
}

static int cf_darwin_posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
				 const posix_spawnattr_t *attr, char *const argv[],
				 char *const envp[])
{
	struct spawn_call c = {posix_spawn, pid, path, fa, attr, argv, envp};
	return guarded(&c);
}

static int cf_darwin_posix_spawnp(pid_t *pid, const char *file,
				  const posix_spawn_file_actions_t *fa,
				  const posix_spawnattr_t *attr, char *const argv[],
				  char *const envp[])
{
	struct spawn_call c = {posix_spawnp, pid, file, fa, attr, argv, envp};
	return guarded(&c);
}

CF_INTERPOSE(cf_darwin_posix_spawn, posix_spawn);
CF_INTERPOSE(cf_darwin_posix_spawnp, posix_spawnp);
