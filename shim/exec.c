/* The exec family. glibc's execv*, execl* and fexecve reach the kernel through
 * internal calls that no interposed symbol sees, so each is caught here on its
 * own: fence the child, then make the real call, whose semantics (PATH search,
 * the ENOEXEC shell fallback, errno) are then exactly the real ones. */
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include "shim.h"

extern char **environ;

/* glibc declares these arguments nonnull, yet callers pass NULL; hide the
 * pointer from the optimizer so that the check is really made. */
static inline const void *opaque(const void *p)
{
	__asm__("" : "+r"(p));
	return p;
}

CF_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	CF_ENTER_CHILD(path, envp, env);
	return cf_shim.real.execve(path, argv, env);
}

/* execv and execvp are execve and execvpe with environ, exactly as in glibc. */
CF_EXPORT int execv(const char *path, char *const argv[])
{
	CF_ENTER_CHILD(path, environ, env);
	return cf_shim.real.execve(path, argv, env);
}

CF_EXPORT int execvp(const char *file, char *const argv[])
{
	CF_ENTER_CHILD(file, environ, env);
	return cf_shim.real.execvpe(file, argv, env);
}

CF_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	CF_ENTER_CHILD(file, envp, env);
	return cf_shim.real.execvpe(file, argv, env);
}

CF_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char *const *av = opaque(argv);
	CF_ENTER_CHILD(av && av[0] ? av[0] : "fexecve", envp, env);
	return cf_shim.real.fexecve(fd, argv, env);
}

CF_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	CF_ENTER_CHILD(path, envp, env);
	return cf_shim.real.execveat(dirfd, path, argv, env, flags);
}

/* The variadic forms gather their arguments in two passes into a stack array:
 * count, then copy. No allocation: this runs after fork. */
#define GATHER(first, ap, argv)                              \
	size_t n_ = 0;                                       \
	if (opaque(first)) {                                 \
		n_ = 1;                                      \
		va_start(ap, first);                         \
		while (va_arg(ap, char *))                   \
			n_++;                                \
		va_end(ap);                                  \
	}                                                    \
	char *argv[n_ + 1];                                  \
	argv[0] = (char *)(first);                           \
	va_start(ap, first);                                 \
	for (size_t i_ = 1; i_ <= n_; i_++)                  \
		argv[i_] = va_arg(ap, char *);

CF_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	GATHER(arg, ap, argv);
	va_end(ap);
	CF_ENTER_CHILD(path, environ, env);
	return cf_shim.real.execve(path, argv, env);
}

CF_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	GATHER(arg, ap, argv);
	va_end(ap);
	CF_ENTER_CHILD(file, environ, env);
	return cf_shim.real.execvpe(file, argv, env);
}

CF_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	GATHER(arg, ap, argv);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	CF_ENTER_CHILD(path, envp, env);
	return cf_shim.real.execve(path, argv, env);
}
