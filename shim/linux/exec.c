/* The exec family. glibc's execv*, execl* and fexecve reach the kernel through
 * internal calls that no interposed symbol sees, so each is caught here on its
 * own: fence the child, then make the real call, whose semantics (PATH search,
 * the ENOEXEC shell fallback, errno) are then exactly the real ones. All of it
 * may run between fork and exec: stack memory and raw syscalls only. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <unistd.h>

#include "shim.h"
#include "sys.h"

extern char **environ;

/* glibc declares these arguments nonnull, yet callers pass NULL; hide the
 * pointer from the optimizer so that the check is really made. */
static inline const void *opaque(const void *p)
{
	__asm__("" : "+r"(p));
	return p;
}

enum how { BY_PATH, BY_SEARCH, BY_FD, BY_AT };

struct call {
	enum how how;
	int fd, flags;          /* BY_FD, BY_AT */
	const char *path;       /* the path, or the name to search */
	char *const *argv, *const *envp;
};

/* PATH as glibc's execvp reads it: from environ, not from the new
 * environment; NULL (its default) when unset. */
static const char *search_path(void)
{
	for (char **e = environ; e && *e; e++) {
		const char *s = *e;
		if (s[0] == 'P' && s[1] == 'A' && s[2] == 'T' && s[3] == 'H' && s[4] == '=')
			return s + 5;
	}
	return NULL;
}

/* The call itself, as glibc makes it (fexecve's checks included), by raw
 * system calls: nothing to resolve, so it is the same before the constructor
 * and in a vfork child. -1 with errno, as the real call. */
static int real_exec(const struct call *c, char *const *env)
{
	long rc;
	switch (c->how) {
	case BY_PATH:
		rc = cf_sys3(SYS_execve, c->path, c->argv, env);
		break;
	case BY_SEARCH:
		rc = cf_shim_raw_execvpe(c->path, c->argv, env, search_path());
		break;
	case BY_FD:
		rc = c->fd < 0 || !opaque(c->argv) || !opaque(env)
			     ? -EINVAL
			     : cf_sys5(SYS_execveat, c->fd, "", c->argv, env, AT_EMPTY_PATH);
		break;
	default:
		rc = cf_sys5(SYS_execveat, c->fd, c->path, c->argv, env, c->flags);
	}
	errno = (int)-rc;
	return -1;
}

static bool has_slash(const char *s)
{
	for (; *s; s++)
		if (*s == '/')
			return true;
	return false;
}

/* In a child of the harness: when the call starts the harness again (a
 * relaunch, a --harness-program), it is executed as the harness here
 * (follow.c). 0 when it is not; -errno when that exec failed. PROGRAM is
 * what a PATH search found. */
static int follow(const struct call *c, const char *program)
{
	int own = c->how == BY_FD ? cf_shim_judge_own_exec(c->fd, "", AT_EMPTY_PATH)
		  : c->how == BY_AT ? cf_shim_judge_own_exec(c->fd, c->path, c->flags)
		  : c->how == BY_PATH || has_slash(program) ? cf_shim_judge_own_exec(AT_FDCWD, program, 0)
							    : 0;
	if (own)
		return own;
	switch (c->how) {
	case BY_PATH:
		return cf_shim_exec_if_harness(AT_FDCWD, c->path, 0, c->argv, c->envp);
	case BY_SEARCH:
		/* Not found in PATH: the real call says so. */
		return has_slash(program) ? cf_shim_exec_if_harness(AT_FDCWD, program, 0, c->argv, c->envp)
					  : 0;
	case BY_FD:
		return cf_shim_exec_if_harness(c->fd, "", AT_EMPTY_PATH, c->argv, c->envp);
	default:
		return cf_shim_exec_if_harness(c->fd, c->path, c->flags, c->argv, c->envp);
	}
}

/* Fence the child (or refuse with EPERM), then the real call with the
 * environment less the shim, which a fenced child no longer needs. */
static int fenced_exec(const struct call *c)
{
	const char *program = c->path;
	char found[PATH_MAX];
	if (c->how == BY_FD) {
		char *const *av = opaque(c->argv);
		program = av && av[0] ? av[0] : "fexecve";
	}
	if (cf_shim_early()) {
		int rc = cf_shim_early_gate(opaque(program) ? program : NULL);
		if (rc) {
			errno = -rc;
			return -1;
		}
		return real_exec(c, c->envp);
	}
	if (cf_shim.role == CF_ROLE_HARNESS && opaque(c->path)) {
		int err;
		/* A PATH search made by hand (CPython's subprocess, a shell) tries
		 * each candidate with execve: one that is not there fails here as
		 * the kernel would fail it, unfenced and unlogged, since nothing
		 * runs. The log then names the candidate that ran, once. */
		if (c->how == BY_PATH && cf_shim_exec_would_fail(c->path, &err)) {
			errno = err;
			return -1;
		}
		if (c->how == BY_SEARCH)
			program = cf_shim_which(c->path, search_path() ? search_path() : "/bin:/usr/bin",
						found, sizeof found);
	}
	if (cf_shim.role == CF_ROLE_HARNESS && (c->how == BY_FD || opaque(c->path))) {
		int rc = follow(c, program);
		if (rc < 0) {
			errno = -rc;
			return -1;
		}
	}
	int fenced = cf_shim_child_enter_env(program, c->envp);
	if (fenced == CF_CHILD_RELAUNCH) {
		if (c->how == BY_PATH || c->how == BY_SEARCH) {
			errno = -cf_shim_relaunch(c->path, c->how == BY_SEARCH, c->argv, c->envp);
			return -1;
		}
		fenced = -EPERM; /* a descriptor can not be handed to credfence run */
	}
	if (fenced < 0) {
		errno = EPERM;
		return -1;
	}
	unsigned drop = (fenced ? CF_ENV_DROP_SHIM : 0) |
			(cf_shim_harness_child() ? CF_ENV_DROP_SECRETS : 0);
	if (!drop)
		return real_exec(c, c->envp);
	size_t n = cf_env_count(c->envp) + 1;
	if (n > CF_CHILD_ENV_MAX && (drop & CF_ENV_DROP_SECRETS)) {
		errno = -cf_shim_env_too_big();
		return -1;
	}
	if (n > CF_CHILD_ENV_MAX)
		return real_exec(c, c->envp);
	char *buf[n];
	char ld[4096];
	return real_exec(c, cf_env_for_child(c->envp, drop, buf, n, ld, sizeof ld));
}

CF_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return fenced_exec(&(struct call){.how = BY_PATH, .path = path, .argv = argv, .envp = envp});
}

/* execv and execvp are execve and execvpe with environ, exactly as in glibc. */
CF_EXPORT int execv(const char *path, char *const argv[])
{
	return fenced_exec(&(struct call){.how = BY_PATH, .path = path, .argv = argv, .envp = environ});
}

CF_EXPORT int execvp(const char *file, char *const argv[])
{
	return fenced_exec(&(struct call){.how = BY_SEARCH, .path = file, .argv = argv, .envp = environ});
}

CF_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return fenced_exec(&(struct call){.how = BY_SEARCH, .path = file, .argv = argv, .envp = envp});
}

CF_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	return fenced_exec(&(struct call){.how = BY_FD, .fd = fd, .argv = argv, .envp = envp});
}

CF_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	return fenced_exec(&(struct call){.how = BY_AT, .fd = dirfd, .path = path, .argv = argv,
					  .envp = envp, .flags = flags});
}

/* The variadic forms gather their arguments in two passes into a stack array:
 * count, then copy. No allocation: this runs after fork. */
static size_t count_args(const char *first, va_list ap)
{
	size_t n = 0;
	if (opaque(first)) {
		n = 1;
		while (va_arg(ap, char *))
			n++;
	}
	return n;
}

static void copy_args(char **argv, size_t n, const char *first, va_list ap)
{
	argv[0] = cf_unconst(first);
	for (size_t i = 1; i <= n; i++)
		argv[i] = va_arg(ap, char *);
}

CF_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t n = count_args(arg, ap);
	va_end(ap);
	char *argv[n + 1];
	va_start(ap, arg);
	copy_args(argv, n, arg, ap);
	va_end(ap);
	return execve(path, argv, environ);
}

CF_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t n = count_args(arg, ap);
	va_end(ap);
	char *argv[n + 1];
	va_start(ap, arg);
	copy_args(argv, n, arg, ap);
	va_end(ap);
	return execvpe(file, argv, environ);
}

CF_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t n = count_args(arg, ap);
	va_end(ap);
	char *argv[n + 1];
	va_start(ap, arg);
	copy_args(argv, n, arg, ap);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}
