/* syscall(): made by the shim itself with the system call instruction, so
 * that it needs nothing resolved and works wherever it is called (before the
 * constructor, in an IFUNC resolver, a vfork child or a signal handler).
 * syscall(SYS_execve, ...) and syscall(SYS_execveat, ...) are execs too;
 * syscall(SYS_close_range, ...) is fdkeep.c's. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h> /* declares the syscall() replaced here */

#include "shim.h"
#include "sys.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

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

struct exec_args {
	long n;        /* SYS_execve or SYS_execveat */
	const long *a; /* the caller's six arguments */
};

/* The exec itself, with the child's environment in place of the caller's:
 * -errno. */
static int exec_raw(const struct cf_child *c, char *const env[])
{
	const struct exec_args *x = c->arg;
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = x->a[i];
	a[x->n == SYS_execve ? 2 : 3] = (long)env;
	return (int)cf_sys6(x->n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static long exec_call(long n, const long a[6])
{
	struct exec_args x = {n, a};
	struct cf_child c = {.arg = &x, .call = exec_raw};
	if (n == SYS_execve) {
		c.dirfd = AT_FDCWD;
		c.path = (const char *)a[0];
		c.argv = (char *const *)a[1];
		c.envp = (char *const *)a[2];
		c.how = CF_CHILD_RELAUNCH_OK;
	} else {
		c.dirfd = (int)a[0];
		c.path = (const char *)a[1];
		c.argv = (char *const *)a[2];
		c.envp = (char *const *)a[3];
		c.flags = (int)a[4];
	}
	return fail(-cf_shim_child_call(&c));
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
	if (n == SYS_close_range) {
		long rc = cf_shim_close_range((unsigned)a[0], (unsigned)a[1], (unsigned)a[2]);
		return rc < 0 ? fail((int)-rc) : rc;
	}
	if (n != SYS_execve && n != SYS_execveat)
		return raw(n, a);
	return exec_call(n, a);
}
