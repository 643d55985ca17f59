/* The exec family on macOS. execve is what libSystem's other forms end in,
 * and it is interposed too, but the outer forms are caught on their own so a
 * child is fenced once, before the PATH search, and with the environment the
 * fence wants (the shim's variables dropped). macOS has no execvpe: execvp and
 * execvP read environ, so the child's environ is switched for the call and
 * put back when the call fails. This runs in fork children only (vfork is
 * turned into fork, see vfork.c), so switching environ touches no parent. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "environ.h"
#include "guard.h"
#include "interpose.h"
#include "shim.h"

/* One exec call: the file (or PATH) to run, execvP's search path, the
 * arguments. The environment is cf_shim_child_call's. */
struct exec_call {
	const char *file, *search_path;
	char *const *argv;
};

static int call_execve(char *const env[], const void *arg)
{
	const struct exec_call *c = arg;
	return execve(c->file, c->argv, env);
}

static int call_exect(char *const env[], const void *arg)
{
	const struct exec_call *c = arg;
	return exect(c->file, c->argv, env);
}

/* execvp and execvP read environ: ENV for the call, the old one back when
 * it fails (errno kept). */
static char **environ_set(char *const env[])
{
	char **saved = environ;
	environ = (char **)(uintptr_t)env;
	return saved;
}

static int environ_back(char **saved, int r)
{
	int e = errno;
	environ = saved;
	errno = e;
	return r;
}

static int call_execvp(char *const env[], const void *arg)
{
	const struct exec_call *c = arg;
	char **saved = environ_set(env);
	return environ_back(saved, execvp(c->file, c->argv));
}

static int call_execvP(char *const env[], const void *arg)
{
	const struct exec_call *c = arg;
	char **saved = environ_set(env);
	return environ_back(saved, execvP(c->file, c->search_path, c->argv));
}

/* The end of a guarded call (guard.h): the guard left, the call's own errno
 * kept, its result returned. */
static int guard_left(int r)
{
	int e = errno;
	cf_guard_leave();
	errno = e;
	return r;
}

/* Each replacement: the outermost call on the thread fences the child, a
 * nested one (execvp reaching execve) is the real call. */
static int cf_darwin_execve(const char *path, char *const argv[], char *const envp[])
{
	struct exec_call c = {path, NULL, argv};
	bool nested = cf_guard_enter();
	return guard_left(nested ? execve(path, argv, envp)
				 : cf_shim_child_call(path, envp, call_execve, &c));
}

static int cf_darwin_exect(const char *path, char *const argv[], char *const envp[])
{
	struct exec_call c = {path, NULL, argv};
	bool nested = cf_guard_enter();
	return guard_left(nested ? exect(path, argv, envp)
				 : cf_shim_child_call(path, envp, call_exect, &c));
}

static int cf_darwin_execv(const char *path, char *const argv[])
{
	struct exec_call c = {path, NULL, argv};
	bool nested = cf_guard_enter();
	return guard_left(nested ? execv(path, argv)
				 : cf_shim_child_call(path, environ, call_execve, &c));
}

static int cf_darwin_execvp(const char *file, char *const argv[])
{
	struct exec_call c = {file, NULL, argv};
	bool nested = cf_guard_enter();
	return guard_left(nested ? execvp(file, argv)
				 : cf_shim_child_call(file, environ, call_execvp, &c));
}

static int cf_darwin_execvP(const char *file, const char *search_path, char *const argv[])
{
	struct exec_call c = {file, search_path, argv};
	bool nested = cf_guard_enter();
	return guard_left(nested ? execvP(file, search_path, argv)
				 : cf_shim_child_call(file, environ, call_execvP, &c));
}

CF_INTERPOSE(cf_darwin_execve, execve);
CF_INTERPOSE(cf_darwin_exect, exect);
CF_INTERPOSE(cf_darwin_execv, execv);
CF_INTERPOSE(cf_darwin_execvp, execvp);
CF_INTERPOSE(cf_darwin_execvP, execvP);
/* execl, execle and execlp build an argv and call execve or execvp across a
 * dylib boundary in libSystem, so they arrive at the replacements above. */
