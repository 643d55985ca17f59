/* What every system's fence has, through the door (fence.h): the struct is
 * each backend's own (fence_state.h, found in its folder), the fields these
 * read are in both. Written once, compiled into each backend's fence.c
 * (the one a build has), after its fence_state.h: so that a child's launch
 * reads them in the file it runs. Safe between fork and exec: field reads
 * only (cf_fence_destroy, in the parent, frees). */
#ifndef CF_FENCE_FIELDS_H
#define CF_FENCE_FIELDS_H

#include <stdlib.h>

void cf_fence_destroy(struct cf_fence *f)
{
	if (!f)
		return;
	cf_fence_free(f);
	free(f);
}

const struct cf_policy *cf_fence_policy(const struct cf_fence *f)
{
	return &f->pol;
}

bool cf_fence_ready(const struct cf_fence *f)
{
	return f->ready;
}

bool cf_fence_inherited(const struct cf_fence *f)
{
	return f->inherited;
}

size_t cf_fence_rules(const struct cf_fence *f)
{
	return f->res.rules;
}

#endif
