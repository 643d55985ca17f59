#include "ttyfilter.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

#include "filters.h"
#include "sys.h"

/* A process reaches ioctl through every system call table its kernel has,
 * so each one is checked: a 64-bit program may still make 32-bit calls (int
 * 0x80 on x86_64, or a 32-bit program it execs), and x32 calls carry the
 * native arch with a flag in the number (its own ioctl, and the 64-bit one
 * older kernels let it reach). The same for open_by_handle_at. The kernel
 * truncates an ioctl's cmd to unsigned int, so only the low word of args[1]
 * decides: 0x100005412 is TIOCSTI as well. An arch this kernel can not
 * produce here: killed, not guessed. The program is compiled by libseccomp
 * when credfence is built (filter_gen.c, tty_rules), with the numbers of each
 * table from libseccomp's; the 32-bit table's part starts with a load the
 * answer does not depend on, that ends the kernel's action cache run for
 * every 32-bit call, in this filter and in the IPC filter installed after
 * it (ipc.c): those calls run the filters each time, as a 32-bit ioctl did. */
#ifdef CF_TTY_BPF

const struct sock_filter *cf_ttyfilter_program(unsigned short *len)
{
	*len = CF_TTY_BPF.len;
	return CF_TTY_BPF.len ? CF_TTY_BPF.f : NULL;
}

int cf_ttyfilter_install(void)
{
	if (!CF_TTY_BPF.len)
		return -ENOSYS; /* built where filter_gen could not make it: fail closed */
	/* The kernel copies the program; it never writes through this pointer. */
	struct sock_fprog prog = {.len = CF_TTY_BPF.len, .filter = (struct sock_filter *)(uintptr_t)CF_TTY_BPF.f};
	return (int)cf_sys3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

#else

const struct sock_filter *cf_ttyfilter_program(unsigned short *len)
{
	*len = 0;
	return NULL;
}

int cf_ttyfilter_install(void)
{
	return -ENOSYS; /* no filter for this machine yet: fail closed */
}

#endif
