/* libcf-nsnext.so: a harness's launch through dlsym(RTLD_NEXT, "execve")
 * from a library loaded after the shim (a dependency of cf-nsharness: the
 * loader puts LD_PRELOAD's libraries before it), which finds libc's execve
 * and not the shim's: the child starts without the shim's launch (issue 31). */
#include <dlfcn.h>
#include <errno.h>

int cf_nsnext_execve(const char *path, char *const argv[], char *const envp[]);

int cf_nsnext_execve(const char *path, char *const argv[], char *const envp[])
{
	int (*next)(const char *, char *const[], char *const[]) =
		(int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	return next(path, argv, envp);
}
