/* The harness's IPC supervisor, watched from the harness. A fenced process
 * of the same user can kill it (SECURITY.md says why signals stay open); its
 * children can then no longer be fenced, and the harness must know it: the
 * next launch would otherwise fail in the child only, one refusal at a time,
 * and the waiter above the harness is the only one that would say why.
 *
 * Raw syscalls and stack only: a vfork child (which runs no atfork handler)
 * finds the death itself, in cf_ipc_enter, and reports it here, in the
 * harness's memory. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "shim.h"
#include "sys.h"

void cf_shim_supervisor_ended(const struct cf_fence *f)
{
	cf_shim_supervisor_ended_log(f, -1);
}

void cf_shim_supervisor_ended_log(const struct cf_fence *f, int logfd)
{
	char line[256];
	size_t len = 0;
	int pid = (int)cf_sys0(SYS_getpid);
	if (__atomic_exchange_n(&cf_shim.supervisor_ended, 1, __ATOMIC_ACQ_REL))
		return; /* told already */
	cf_json_raw(line, sizeof line, &len, "credfence: the IPC supervisor of this harness (pid ");
	cf_json_num(line, sizeof line, &len, cf_fence_supervisor_pid(f));
	cf_json_raw(line, sizeof line, &len, ") has ended; every command the harness starts from now "
					     "on is refused. Start the harness again.\n");
	(void)cf_sys3(SYS_write, 2, line, len);
	int fd = logfd >= 0 ? logfd : cf_fence_log_open(f);
	if (fd < 0)
		return;
	len = 0;
	cf_json_raw(line, sizeof line, &len, "{\"event\":\"supervisor_ended\",\"pid\":");
	cf_json_num(line, sizeof line, &len, cf_shim.harness_pid ? cf_shim.harness_pid : pid);
	cf_json_raw(line, sizeof line, &len, ",\"supervisor\":");
	cf_json_num(line, sizeof line, &len, cf_fence_supervisor_pid(f));
	cf_json_raw(line, sizeof line, &len, "}\n");
	(void)cf_sys3(SYS_write, fd, line, len);
	if (fd != logfd)
		cf_sys_close(fd);
}

void cf_shim_watch_supervisor(const struct cf_fence *f)
{
	if (cf_shim.role != CF_ROLE_HARNESS || !f || cf_fence_inherited(f) ||
	    cf_fence_supervisor_pid(f) <= 0 ||
	    __atomic_load_n(&cf_shim.supervisor_ended, __ATOMIC_ACQUIRE))
		return;
	/* Its pidfd, polled, where the fence's watch holds one; else its
	 * /proc/PID/stat (8.5 us, docs/bench.md). */
	int alive = cf_shim_supervisor_watched(f);
	if (alive == 1 || (alive < 0 && cf_fence_supervisor_alive(f)))
		return;
	int e = errno;
	cf_shim_supervisor_ended(f);
	errno = e;
}
