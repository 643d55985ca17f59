/* The supervisor's serving (sup_serve.c): the loop of its main thread, the
 * notifications it receives and dispatches, the listeners it holds, and the
 * pool of worker threads that connect on a caller's behalf. Private to the
 * supervisor. */
#ifndef CF_SUP_SERVE_H
#define CF_SUP_SERVE_H

#include <stdbool.h>
#include <sys/types.h>

#include "sup_state.h"

void cf_sup_listener_get(struct sup *sup, struct listener *l);
/* The last reference closes the listener and frees its policy. */
void cf_sup_listener_put(struct sup *sup, struct listener *l);
/* Answer the job's caller with RESULT, and free the job. */
void cf_sup_job_done(struct job *j, long result);
/* Whether the thread deciding a call of L may wait on a fenced process's
 * peer: a receiver thread of L, once another one waits for L's next call
 * (started here when none does). False on the main thread. */
bool cf_sup_may_wait_here(struct sup *sup, struct listener *l);
/* Hand a connect that may wait on its peer to the worker pool. */
void cf_sup_enqueue(struct sup *sup, struct job *j);

/* The main thread's loop, until the keeper (KEEPER, a pidfd; KEEPER_PID) has
 * exited and no listener or client is left; then _exit(0). LS: the
 * listening socket; SFD: a signalfd of SIGCHLD (above mode) or -1; WAITER:
 * the waiter's pidfd (above mode) or -1. */
_Noreturn void cf_sup_serve(struct sup *sup, int ls, int keeper, int sfd, pid_t keeper_pid, int waiter);

#endif
