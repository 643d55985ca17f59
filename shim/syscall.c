/* syscall(SYS_execve, ...) and syscall(SYS_execveat, ...) are execs too. */
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "shim.h"

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
		return cf_shim.real.syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	int e = n == SYS_execve ? 2 : 3; /* where envp is */
	const char *program = (const char *)(n == SYS_execve ? a[0] : a[1]);
	CF_ENTER_CHILD(program, (char *const *)a[e], env);
	a[e] = (long)env;
	return cf_shim.real.syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
