/* Calls that reach the shim before its constructor has decided this
 * process's role. The constructor of libcredfence.so runs after those of the
 * libraries the program itself needs, and a program's IFUNC resolvers and
 * malloc run before any constructor: Claude Code 2.1.332 calls syscall() from
 * its own malloc while the shim's constructor is still resolving the real
 * functions. So nothing here needs the constructor's work: raw system calls
 * and stack memory, which also covers a vfork child, a signal handler and a
 * thread started before the constructor. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "shim.h"
#include "sys.h"

#define CF_SHELL "/bin/sh"
#define CF_DEFAULT_PATH "/bin:/usr/bin" /* glibc's CS_PATH */

bool cf_shim_early(void)
{
	return !__atomic_load_n(&cf_shim.ready, __ATOMIC_ACQUIRE);
}

/* Before the role is decided, a child can be neither fenced at its launch
 * (the harness's fence is not prepared) nor left to fence itself (a program
 * that drops LD_PRELOAD or is static would not): only a process that is
 * fenced already may start one, since its child inherits the fence. */
int cf_shim_early_gate(const char *program)
{
	if (cf_fence_fenced())
		return 0;
	cf_shim_say(program ? program : "a program",
		    " was to be started before credfence's shim had set up this process (from "
		    "a library's constructor or an IFUNC resolver), while the process is not "
		    "fenced yet: refused; start it from main() or run the program under "
		    "`credfence run`. Nothing was run.\n");
	return -EPERM;
}

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

int cf_shim_raw_execvpe(const char *file, char *const argv[], char *const envp[],
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
