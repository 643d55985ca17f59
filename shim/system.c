/* system() and popen(): glibc spawns their shell through internal calls, so
 * each is caught here and the real one runs on a fenced thread. SIGINT and
 * SIGQUIT handling is the real call's own; SIGCHLD stays blocked in the caller
 * while it waits, as the real call would block it. */
#include <errno.h>
#include <stdio.h>

#include "shim.h"

struct system_call {
	const char *cmd;
	int rc;
};

static void call_system(void *p)
{
	struct system_call *c = p;
	c->rc = cf_shim.real.system(c->cmd);
}

CF_EXPORT int system(const char *cmd)
{
	if (cf_shim.role != CF_ROLE_HARNESS)
		return cf_shim.real.system(cmd);
	struct system_call c = {cmd, -1};
	int rc = cf_shim_on_fenced_thread(call_system, &c, "/bin/sh");
	if (rc) {
		errno = -rc;
		return -1;
	}
	return c.rc;
}

struct popen_call {
	const char *cmd, *mode;
	FILE *fp;
	int err;
};

static void call_popen(void *p)
{
	struct popen_call *c = p;
	c->fp = cf_shim.real.popen(c->cmd, c->mode);
	c->err = c->fp ? 0 : errno;
}

CF_EXPORT FILE *popen(const char *cmd, const char *mode)
{
	if (cf_shim.role != CF_ROLE_HARNESS)
		return cf_shim.real.popen(cmd, mode);
	struct popen_call c = {cmd, mode, NULL, 0};
	int rc = cf_shim_on_fenced_thread(call_popen, &c, "/bin/sh");
	if (rc) {
		errno = -rc;
		return NULL;
	}
	if (!c.fp)
		errno = c.err;
	return c.fp;
}
