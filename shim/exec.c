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

#define ENTER_OR_FAIL(program)                     \
	do {                                       \
		if (cf_shim_child_enter(program)) { \
			errno = EPERM;             \
			return -1;                 \
		}                                  \
	} while (0)

CF_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	ENTER_OR_FAIL(path);
	return cf_shim.real.execve(path, argv, envp);
}

CF_EXPORT int execv(const char *path, char *const argv[])
{
	ENTER_OR_FAIL(path);
	return cf_shim.real.execv(path, argv);
}

CF_EXPORT int execvp(const char *file, char *const argv[])
{
	ENTER_OR_FAIL(file);
	return cf_shim.real.execvp(file, argv);
}

CF_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	ENTER_OR_FAIL(file);
	return cf_shim.real.execvpe(file, argv, envp);
}

CF_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char *const *av = opaque(argv);
	ENTER_OR_FAIL(av && av[0] ? av[0] : "fexecve");
	return cf_shim.real.fexecve(fd, argv, envp);
}

CF_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	ENTER_OR_FAIL(path);
	return cf_shim.real.execveat(dirfd, path, argv, envp, flags);
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
	ENTER_OR_FAIL(path);
	return cf_shim.real.execve(path, argv, environ);
}

CF_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	GATHER(arg, ap, argv);
	va_end(ap);
	ENTER_OR_FAIL(file);
	return cf_shim.real.execvp(file, argv);
}

CF_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	GATHER(arg, ap, argv);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	ENTER_OR_FAIL(path);
	return cf_shim.real.execve(path, argv, envp);
}
