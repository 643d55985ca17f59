/* The fenced tree's Unix datagram sockets before Landlock ABI 6 (sup_dgram.c).
 *
 * A Unix datagram socket reaches any abstract name by sendto() or sendmsg()
 * with no connect() for the supervisor to judge, and before ABI 6 Landlock
 * has no scope to stop it: a fenced program could send to a deputy bound
 * outside the fence and read its answer. Abstract names are kept per
 * network namespace, fixed when a socket is made; so the supervisor makes
 * every Unix datagram socket (and socketpair) of the tree it serves in a
 * network namespace of that tree's own, held by a small helper process, and
 * puts it into the caller (SECCOMP_IOCTL_NOTIF_ADDFD). Its abstract names
 * are then those the fenced tree bound, and nothing outside; a file-bound
 * (pathname) socket is reached as before. Where no such namespace can be
 * made (user namespaces refused), the call is refused (EACCES) and logged.
 * Private to the supervisor. */
#ifndef CF_SUP_DGRAM_H
#define CF_SUP_DGRAM_H

#include <linux/seccomp.h>
#include <stdbool.h>

#include "sup_state.h"

/* Whether the notification N is a socket() or socketpair() the filter sends
 * here (a Unix datagram one). */
bool cf_sup_is_dgram(const struct seccomp_data *d);
/* Make the socket(s) in the tree's namespace, put them into C's process and
 * answer its call; refuse with EACCES (logged) where there is no namespace.
 * Closes C, always. */
void cf_sup_handle_dgram(struct caller *c, const struct seccomp_notif *n);
/* Whether the socket S lives in the tree's namespace: any abstract name it
 * reaches was bound by the fenced tree. */
bool cf_sup_dgram_inside(struct sup *sup, int s);
/* The UNIX_DIAG socket of that namespace (the lookups of sup_socket.c for a
 * socket in it), or -1. */
int cf_sup_dgram_diag(struct sup *sup);

#endif
