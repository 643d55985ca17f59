/* The shim's side of a denial's report (denial_wire.h): the one ioctl that
 * the IPC filter traps for the supervisor. A file of its own: the judge
 * (shim/linux/judge.c, libcredfence-judge.so) links this and nothing else
 * of the IPC fence. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "denial_wire.h"
#include "fence.h"
#include "sys.h"

int cf_fence_report_denial(bool write, unsigned row, const char *path)
{
	struct cf_denial_report r = {.access = write, .reserved = row};
	size_t n = strlen(path);
	if (n >= sizeof r.path)
		return -ENAMETOOLONG;
	memcpy(r.path, path, n + 1);
	return (int)cf_sys3(SYS_ioctl, -1, CF_DENIAL_IOCTL, &r);
}
