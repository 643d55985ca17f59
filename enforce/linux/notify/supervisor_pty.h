/* New ptys inside the fence (Linux), the supervisor's side.
 *
 * A fenced program may open /dev/ptmx (a new pty's master), but not /dev/pts:
 * a Landlock rule there would open every terminal of the user. The slave of a
 * new pty is reached by ioctl(master, TIOCGPTPEER, flags) (glibc's openpty
 * and forkpty try it first), and the kernel checks that open too: it is a
 * dentry_open of /dev/pts/N with the caller's credentials, which goes through
 * Landlock's file_open hook and fails with EACCES. So the notification filter
 * (ipc.c) sends TIOCGPTPEER to the supervisor, which takes the master from
 * the caller (pidfd_getfd), judges that very file, makes the ioctl itself on
 * it, and installs the slave in the caller (SECCOMP_IOCTL_NOTIF_ADDFD) as the
 * call's result. What was judged is what is done: a descriptor the caller
 * swaps after the trap is not looked at again.
 *
 * Judged: the file must be a pty master (a character device 5:2 opened for
 * reading or writing, not O_PATH), the flags only those the kernel gives
 * meaning to here (access mode, O_NOCTTY, O_NONBLOCK, O_CLOEXEC), and the
 * slave the supervisor got must be that master's peer, in the devpts instance
 * of /dev/pts (a master of another instance came from outside the fence: no
 * fenced program can mount one). */
#ifndef CF_SUPERVISOR_PTY_H
#define CF_SUPERVISOR_PTY_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>

/* The notification's answer was given by SECCOMP_ADDFD_FLAG_SEND. */
#define CF_PTY_ANSWERED 1

/* Whether the trapped call D is ioctl(fd, TIOCGPTPEER, flags) of this
 * machine's native table. */
bool cf_pty_is_peer_call(const struct seccomp_data *d);

/* Give the caller of notification ID on listener LFD (its thread's pidfd:
 * PIDFD) the peer of its master. CF_PTY_ANSWERED when the caller got its
 * descriptor (the notification is answered), otherwise -errno to answer
 * with. */
long cf_pty_give_peer(int lfd, uint64_t id, int pidfd, const struct seccomp_data *d);

#endif
