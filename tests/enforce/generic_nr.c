/* The numbers of the generic table (include/uapi/asm-generic/unistd.h, as
 * Debian 12's linux-libc-dev has it), which aarch64 uses: a translation unit
 * of its own, since this machine's <sys/syscall.h> defines the same names
 * with x86_64's numbers. For test_filter_gen.c's check of the aarch64
 * programs filter_gen.c writes on this machine. */
#include <asm-generic/unistd.h>

#include "generic_nr.h"

/* Newer than those headers (Linux 6.6, 6.13, 6.17). */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
#ifndef __NR_file_setattr
#define __NR_file_setattr 469
#endif

#define NR(name) {#name, __NR_##name},
const struct generic_nr generic_nr[] = {
	NR(ioctl) NR(prctl) NR(socket) NR(socketpair) NR(io_uring_setup) NR(file_setattr)
	NR(mount_setattr) NR(open_by_handle_at) NR(read)
	/* the calls the IPC filter traps, in the order of filter_gen.c's list */
	NR(connect) NR(bind) NR(fchmod) NR(fchmodat) NR(fchmodat2) NR(fchown) NR(fchownat)
	NR(utimensat) NR(setxattr) NR(lsetxattr) NR(fsetxattr) NR(removexattr) NR(lremovexattr)
	NR(fremovexattr) NR(setxattrat) NR(removexattrat)
	{0, 0},
};
