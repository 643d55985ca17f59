/* The exec family. glibc's execv*, execl* and fexecve reach the kernel through
 * internal calls that no interposed symbol sees, so each is caught here on its
 * own: fence the child, then make the real call, by raw system calls with
 * glibc's semantics (its PATH search, the ENOEXEC shell fallback, errno):
 * nothing to resolve, so the calls are the same before the constructor. All
 * of it may run between fork and exec: stack memory and raw syscalls only. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
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

/* execvp's PATH search and the shell for a file without #!, as glibc makes
 * them, with raw system calls: the same before the constructor (which has
 * resolved nothing then) and in a vfork child. */
#define CF_SHELL "/bin/sh"
#define CF_DEFAULT_PATH "/bin:/usr/bin" /* glibc's CS_PATH */

/* glibc's fallback for a file the kernel will not execute (ENOEXEC): the same
 * arguments to the shell, FILE in place of argv[0]. Returns -errno. The new
 * argv is on the stack, so it is bounded as cf_shim_relaunch bounds its own
 * (glibc's allows INT_MAX - 1 arguments). */
#define CF_SCRIPT_ARGS_MAX 16384
static int exec_script(const char *file, char *const argv[], char *const envp[])
{
	size_t argc = 0;
	while (argv && argv[argc])
		argc++;
	if (argc > CF_SCRIPT_ARGS_MAX)
		return -E2BIG;
	char *sh_argv[argc + 3];
	size_t n = 0;
	sh_argv[n++] = cf_unconst(CF_SHELL);
	sh_argv[n++] = cf_unconst(file);
	for (size_t i = 1; i < argc; i++)
		sh_argv[n++] = argv[i];
	sh_argv[n] = NULL;
	return (int)cf_sys3(SYS_execve, CF_SHELL, sh_argv, envp);
}

static int exec_one(const char *path, char *const argv[], char *const envp[])
{
	int rc = (int)cf_sys3(SYS_execve, path, argv, envp);
	return rc == -ENOEXEC ? exec_script(path, argv, envp) : rc;
}

/* execvpe as glibc's does it (PATH search, the shell for a file without #!),
 * by raw system calls; PATH_VAR NULL for glibc's default. Returns -errno. */
static int raw_execvpe(const char *file, char *const argv[], char *const envp[],
		       const char *path_var)
{
	size_t fl = 0;
	bool slash = false;
	if (!*file)
		return -ENOENT;
	for (; file[fl]; fl++)
		slash = slash || file[fl] == '/';
	if (slash)
		return exec_one(file, argv, envp);
	if (fl > NAME_MAX)
		return -ENAMETOOLONG;
	const char *p = path_var ? path_var : CF_DEFAULT_PATH;
	bool eacces = false;
	for (;;) {
		const char *end = p;
		while (*end && *end != ':')
			end++;
		size_t dl = (size_t)(end - p);
		char buf[PATH_MAX + NAME_MAX + 2];
		/* An entry longer than PATH_MAX is skipped, as glibc skips it. */
		if (dl < PATH_MAX) {
			size_t at = 0;
			for (; at < dl; at++)
				buf[at] = p[at];
			if (dl) /* an empty entry is the current directory */
				buf[at++] = '/';
			for (size_t i = 0; i <= fl; i++)
				buf[at + i] = file[i];
			int rc = exec_one(buf, argv, envp);
			if (rc == -EACCES)
				eacces = true;
			else if (rc != -ENOENT && rc != -ESTALE && rc != -ENOTDIR && rc != -ENODEV &&
				 rc != -ETIMEDOUT)
				return rc;
		}
		if (!*end)
			break;
		p = end + 1;
	}
	return eacces ? -EACCES : -ENOENT;
}

/* The real calls, as glibc makes them (fexecve's checks included), by raw
 * system calls: nothing to resolve, so they are the same before the
 * constructor and in a vfork child. -errno. */
static int exec_path(const struct cf_child *c, char *const env[])
{
	return (int)cf_sys3(SYS_execve, c->path, c->argv, env);
}

static int exec_search(const struct cf_child *c, char *const env[])
{
	return raw_execvpe(c->path, c->argv, env, search_path());
}

static int exec_fd(const struct cf_child *c, char *const env[])
{
	if (c->dirfd < 0 || !opaque(c->argv) || !opaque(env))
		return -EINVAL;
	return (int)cf_sys5(SYS_execveat, c->dirfd, "", c->argv, env, AT_EMPTY_PATH);
}

static int exec_at(const struct cf_child *c, char *const env[])
{
	return (int)cf_sys5(SYS_execveat, c->dirfd, c->path, c->argv, env, c->flags);
}

/* Each entry describes its call and hands it to the one child-launch
 * function (child.c); -1 with errno, as the real call. */
static int launch(const struct cf_child *c)
{
	errno = -cf_shim_child_call(c);
	return -1;
}

static int by_path(const char *path, char *const argv[], char *const envp[])
{
	return launch(&(struct cf_child){.dirfd = AT_FDCWD, .path = opaque(path), .argv = argv,
					 .envp = envp, .call = exec_path,
					 .how = CF_CHILD_OWN | CF_CHILD_PROBE | CF_CHILD_RELAUNCH_OK});
}

static int by_search(const char *file, char *const argv[], char *const envp[])
{
	const char *path = search_path();
	return launch(&(struct cf_child){.dirfd = AT_FDCWD, .path = opaque(file),
					 .search = path ? path : CF_DEFAULT_PATH, .argv = argv,
					 .envp = envp, .call = exec_search,
					 .how = CF_CHILD_OWN | CF_CHILD_RELAUNCH_OK});
}

CF_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return by_path(path, argv, envp);
}

/* execv and execvp are execve and execvpe with environ, exactly as in glibc. */
CF_EXPORT int execv(const char *path, char *const argv[])
{
	return by_path(path, argv, environ);
}

CF_EXPORT int execvp(const char *file, char *const argv[])
{
	return by_search(file, argv, environ);
}

CF_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return by_search(file, argv, envp);
}

CF_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char *const *av = opaque(argv);
	return launch(&(struct cf_child){.dirfd = fd, .path = "", .flags = AT_EMPTY_PATH,
					 .program = av && av[0] ? av[0] : "fexecve", .argv = argv,
					 .envp = envp, .call = exec_fd, .how = CF_CHILD_OWN});
}

CF_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	return launch(&(struct cf_child){.dirfd = dirfd, .path = opaque(path), .flags = flags,
					 .argv = argv, .envp = envp, .call = exec_at,
					 .how = CF_CHILD_OWN});
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
