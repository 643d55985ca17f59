/* The supervisor's socket judgement (sup_socket.c): the AF_UNIX sockets
 * fenced processes bind (recorded by inode and cookie), and each connect,
 * judged on a copy of its address and made on the caller's behalf on its
 * own socket. Private to the supervisor. */
#ifndef CF_SUP_SOCKET_H
#define CF_SUP_SOCKET_H

#include <linux/seccomp.h>

#include "sup_state.h"

/* A connect of L's caller C (notification N): copies the address, takes
 * the socket, and either connects at once (a non-blocking socket) or hands
 * the job to the worker pool. Answers the caller and closes C, always. */
void cf_sup_handle_connect(struct listener *l, struct caller *c, const struct seccomp_notif *n);
/* Judge the job's address and connect its socket: the caller's result. */
long cf_sup_connect_judged(struct job *j);
/* A bind: record the socket, let the call go on. Answers and closes C. */
void cf_sup_handle_bind(struct caller *c, const struct seccomp_notif *n);

#endif
