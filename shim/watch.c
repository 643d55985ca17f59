/* The harness's IPC supervisor, watched from the harness. A fenced process
 * of the same user can kill it (SECURITY.md says why signals stay open); its
 * children can then no longer be fenced, and the harness must know it: the
 * next launch would otherwise fail in the child only, one refusal at a time,
 * and the waiter above the harness is the only one that would say why. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "shim.h"
#include "sys.h"

static void log_ended(const struct cf_fence *f, int sup_pid)
{
	char line[256];
	size_t len = 0;
	int fd = cf_fence_log_open(f);
	if (fd < 0)
		return;
	cf_json_raw(line, sizeof line, &len, "{\"event\":\"supervisor_ended\",\"pid\":");
	cf_json_num(line, sizeof line, &len, getpid());
	cf_json_raw(line, sizeof line, &len, ",\"supervisor\":");
	cf_json_num(line, sizeof line, &len, sup_pid);
	cf_json_raw(line, sizeof line, &len, "}\n");
	(void)!write(fd, line, len);
	close(fd);
}

void cf_shim_watch_supervisor(const struct cf_fence *f)
{
	if (cf_shim.role != CF_ROLE_HARNESS || !f || f->inherited || f->ipc.sup_pid <= 0 ||
	    __atomic_load_n(&cf_shim.supervisor_ended, __ATOMIC_ACQUIRE) ||
	    cf_ipc_supervisor_alive(&f->ipc))
		return;
	if (__atomic_exchange_n(&cf_shim.supervisor_ended, 1, __ATOMIC_ACQ_REL))
		return; /* another thread saw it first and says it */
	int e = errno;
	fprintf(stderr,
		"credfence: the IPC supervisor of this harness (pid %d) has ended; every command the "
		"harness starts from now on is refused. Start the harness again.\n",
		f->ipc.sup_pid);
	log_ended(f, f->ipc.sup_pid);
	errno = e;
}
