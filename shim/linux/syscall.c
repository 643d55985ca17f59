/* syscall(): made by the shim itself with the system call instruction, so
 * that it needs nothing resolved and works wherever it is called (before the
 * constructor, in an IFUNC resolver, a vfork child or a signal handler).
 * syscall(SYS_execve, ...) and syscall(SYS_execveat, ...) are execs too. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h> /* declares the syscall() replaced here */

#include "shim.h"
#include "sys.h"

/* The system call, with the real syscall()'s return: -1 and errno for an
 * error (a result between -4095 and -1), the result otherwise. */
static long raw(long n, const long a[6])
{
	long r = cf_sys6(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	if ((unsigned long)r > -4096UL) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

static long fail(int err)
{
	errno = err;
	return -1;
}

static long exec_call(long n, long a[6])
{
	int e = n == SYS_execve ? 2 : 3; /* where envp is */
	const char *program = (const char *)(n == SYS_execve ? a[0] : a[1]);
	char *const *envp = (char *const *)a[e];
	if (cf_shim_early()) {
		int rc = cf_shim_early_gate(program);
		return rc ? fail(-rc) : raw(n, a);
	}
	/* The harness started again (follow.c): executed as the harness. */
	int h = n == SYS_execve
			? cf_shim_exec_if_harness(AT_FDCWD, program, 0, (char *const *)a[1], envp)
			: cf_shim_exec_if_harness((int)a[0], program, (int)a[4], (char *const *)a[2], envp);
	if (h < 0)
		return fail(-h);
	int fenced = cf_shim_child_enter_env(program, envp);
	if (fenced == CF_CHILD_RELAUNCH && n == SYS_execve)
		return fail(-cf_shim_relaunch(program, false, (char *const *)a[1], envp));
	if (fenced < 0 || fenced == CF_CHILD_RELAUNCH)
		return fail(EPERM);
	unsigned drop = (fenced ? CF_ENV_DROP_SHIM : 0) |
			(cf_shim_harness_child() ? CF_ENV_DROP_SECRETS : 0);
	size_t envn = drop ? cf_env_count(envp) + 1 : 1;
	if (envn > CF_CHILD_ENV_MAX && (drop & CF_ENV_DROP_SECRETS))
		return fail(-cf_shim_env_too_big());
	if (envn > CF_CHILD_ENV_MAX)
		envn = 1;
	char *envbuf[envn];
	char ld[fenced ? 4096 : 1];
	if (envn > 1)
		a[e] = (long)cf_env_for_child(envp, drop, envbuf, envn, ld, sizeof ld);
	return raw(n, a);
}

CF_EXPORT long syscall(long n, ...)
{
	va_list ap;
	long a[6];
	/* Like the real syscall(): six register-sized arguments are taken, whether
	 * or not the caller passed them. */
	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n != SYS_execve && n != SYS_execveat)
		return raw(n, a);
	return exec_call(n, a);
}
