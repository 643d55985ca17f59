/* The supervisor's serving (sup_serve.c): the loop of its main thread, the
 * notifications it receives and dispatches, the listeners it holds, and the
 * pool of worker threads that connect on a caller's behalf. Private to the
 * supervisor. */
#ifndef CF_SUP_SERVE_H
#define CF_SUP_SERVE_H

#include "sup_state.h"

void cf_sup_listener_get(struct sup *sup, struct listener *l);
/* The last reference closes the listener and frees its policy. */
void cf_sup_listener_put(struct sup *sup, struct listener *l);
/* Answer the job's caller with RESULT, and free the job. */
void cf_sup_job_done(struct job *j, long result);
/* Hand a connect that may wait on its peer to the worker pool. */
void cf_sup_enqueue(struct sup *sup, struct job *j);

#endif
