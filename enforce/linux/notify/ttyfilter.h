/* The seccomp filter against terminal injection, installed with the fence.
 *
 * A fenced command that shares the user's terminal could push a command line
 * into its input with ioctl(TIOCSTI) (or paste a console selection with
 * TIOCLINUX): the user's own, unfenced shell would read and run it after the
 * command exits. Landlock can not refuse an ioctl on a descriptor that was
 * open before the fence, so a seccomp filter makes both ioctls fail with EPERM.
 * The same filter refuses open_by_handle_at with EPERM (issue 36): a file
 * handle opened through any mount of its file system reaches its inode
 * wherever it lies, past Landlock's path rules, for a holder of
 * CAP_DAC_READ_SEARCH (root). Filters are inherited across fork and exec
 * and can not be removed. The code is in ipc.c, beside the IPC filter the
 * child installs after this one; the program is filter_gen.c's. */
#ifndef CF_TTYFILTER_H
#define CF_TTYFILTER_H

/* Install the filter on the calling thread only (no TSYNC: like Landlock, the
 * fence belongs to the thread that enters it). The caller has set
 * no_new_privs. Raw syscalls and stack only: safe between fork and exec.
 * Returns 0 or -errno (-ENOSYS on an architecture the filter does not know). */
int cf_ttyfilter_install(void);

/* The program itself and its length, for tests that run it on made-up calls
 * (the other system call tables of this machine). NULL where there is none. */
struct sock_filter;
const struct sock_filter *cf_ttyfilter_program(unsigned short *len);

#endif
