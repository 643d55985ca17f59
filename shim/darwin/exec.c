/* The exec family on macOS. execve is what libSystem's other forms end in,
 * and it is interposed too, but the outer forms are caught on their own so a
 * child is fenced once, before the PATH search, and with the environment the
 * fence wants (the shim's variables dropped). macOS has no execvpe: execvp and
 * execvP read environ, so the child's environ is switched for the call and
 * put back when the call fails. This runs in fork children only (vfork is
 * turned into fork, see vfork.c), so switching environ touches no parent. */
#include <errno.h>
#include <unistd.h>

#include "environ.h"
#include "guard.h"
#include "interpose.h"
#include "shim.h"

/* A guarded call: the outermost runs FENCED, a nested one runs REAL. errno
 * is the call's own on return. */
#define GUARDED(real, fenced)                 \
	int r_, e_;                           \
	if (cf_guard_enter())                 \
		r_ = (real);                  \
	else                                  \
		r_ = (fenced);                \
	e_ = errno;                           \
	cf_guard_leave();                     \
	errno = e_;                           \
	return r_

static int with_environ(char *const *env, int (*call)(const void *), const void *arg)
{
	char **saved = environ;
	environ = (char **)env;
	int r = call(arg);
	int e = errno;
	environ = saved;
	errno = e;
	return r;
}

static int fenced_execve(const char *path, char *const argv[], char *const envp[])
{
	CF_ENTER_CHILD(path, envp, env);
	return execve(path, argv, env);
}

static int fenced_exect(const char *path, char *const argv[], char *const envp[])
{
	CF_ENTER_CHILD(path, envp, env);
	return exect(path, argv, env);
}

struct vp_call {
	const char *file, *search_path;
	char *const *argv;
};

static int call_execvp(const void *arg)
{
	const struct vp_call *c = arg;
	return execvp(c->file, c->argv);
}

static int call_execvP(const void *arg)
{
	const struct vp_call *c = arg;
	return execvP(c->file, c->search_path, c->argv);
}

static int fenced_environ_exec(const char *file, int (*call)(const void *), const void *arg)
{
	CF_ENTER_CHILD(file, environ, env);
	return with_environ(env, call, arg);
}

static int cf_darwin_execve(const char *path, char *const argv[], char *const envp[])
{
	GUARDED(execve(path, argv, envp), fenced_execve(path, argv, envp));
}

static int cf_darwin_exect(const char *path, char *const argv[], char *const envp[])
{
	GUARDED(exect(path, argv, envp), fenced_exect(path, argv, envp));
}

static int cf_darwin_execv(const char *path, char *const argv[])
{
	GUARDED(execv(path, argv), fenced_execve(path, argv, environ));
}

static int cf_darwin_execvp(const char *file, char *const argv[])
{
	struct vp_call c = {file, NULL, argv};
	GUARDED(execvp(file, argv), fenced_environ_exec(file, call_execvp, &c));
}

static int cf_darwin_execvP(const char *file, const char *search_path, char *const argv[])
{
	struct vp_call c = {file, search_path, argv};
	GUARDED(execvP(file, search_path, argv), fenced_environ_exec(file, call_execvP, &c));
}

CF_INTERPOSE(cf_darwin_execve, execve);
CF_INTERPOSE(cf_darwin_exect, exect);
CF_INTERPOSE(cf_darwin_execv, execv);
CF_INTERPOSE(cf_darwin_execvp, execvp);
CF_INTERPOSE(cf_darwin_execvP, execvP);
/* execl, execle and execlp build an argv and call execve or execvp across a
 * dylib boundary in libSystem, so they arrive at the replacements above. */
