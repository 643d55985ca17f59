/* A denial's report, from the shim in a fenced program to the supervisor
 * (issue 24; the supervisor's side is enforce/linux/notify/sup_denied.h): the shim
 * reports a read or write it was refused with
 * ioctl(-1, CF_DENIAL_IOCTL, &report); the IPC filter traps exactly that
 * call (fd -1, this command) and the supervisor judges the path against the
 * fence's own lists, never the caller's word, writes one "denied" line a
 * path a run, and answers EPERM. A fenced process can not write the log, and
 * a report of a path the fence does not deny writes nothing.
 *
 * The command: _IOW('Y', 0xc4, struct cf_denial_report). No ioctl of the
 * kernel's uapi headers uses the type 'Y' (Debian 12's linux-libc-dev,
 * checked with grep -rE "_IO[RW]*\(\s*'Y'" /usr/include), and the call is
 * made on descriptor -1, so no driver ever sees it: without a supervisor it
 * fails with EBADF and nothing is logged. Linux only. */
#ifndef CF_DENIAL_WIRE_H
#define CF_DENIAL_WIRE_H

#include <linux/ioctl.h>
#include <stdint.h>

struct cf_denial_report {
	uint32_t access; /* 0 read, 1 write */
	uint32_t reserved; /* a write protection's row: 1 + its index in
			      cf_protected_table, 0 none (sup_denied.c) */
	char path[4088]; /* absolute, NUL-terminated */
};

#define CF_DENIAL_IOCTL _IOW('Y', 0xc4, struct cf_denial_report)
#define CF_DENIAL_FD 0xffffffffU /* -1, as the filter sees the low word */

#endif
