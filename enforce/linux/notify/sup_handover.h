/* The supervisor's side of a handover (sup_handover.c): a fenced child's
 * message, its notification listener and the blob of its fence's lists
 * (supervisor_wire.h), turned into a listener and its policy, and answered.
 * Private to the supervisor. */
#ifndef CF_SUP_HANDOVER_H
#define CF_SUP_HANDOVER_H

#include "sup_state.h"

/* Read a client's message on CFD and answer it. 1 done (answered or
 * refused), 0 not there yet; the new listener (one reference) in *OUT. */
int cf_sup_client_in(struct sup *sup, int cfd, struct listener **out);
void cf_sup_policy_free(struct policy *p);

#endif
