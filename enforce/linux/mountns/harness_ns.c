/* The mount namespace of the fenced tree for a harness's children
 * (shared_ns.h), as one process holds it: credfence harness, whose guard
 * makes it, and the harness's shim, which adopts it and whose children
 * enter it. The door's calls (fence.h, cf_fence_harness_ns_*) over the one
 * struct cf_shared_ns of the process, kept here in static storage so
 * that neither the CLI nor the shim names the keeper: a vfork child reads
 * it, as it read the shim's own static before, and nothing here allocates
 * between fork and exec. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "fence_state.h"
#include "shared_ns.h"
#include "sys.h"

/* Zero, as the shim's static was: nothing here before the constructor (or
 * the guard) fills it. */
static struct cf_shared_ns keep;

struct cf_shared_ns *cf_harness_keep(void)
{
	return &keep;
}

void cf_fence_harness_ns_value(char *buf, size_t n)
{
	cf_shared_ns_value(&keep, buf, n);
}

bool cf_fence_harness_ns_held(void)
{
	return keep.user_fd >= 0;
}

const char *cf_fence_harness_ns_off_why(void)
{
	return keep.off_why;
}

int cf_fence_harness_ns_give(const struct cf_fence *f)
{
	return cf_fence_supervisor(f) ? cf_shared_ns_give(&keep, &f->ipc) : -ENOTCONN;
}

const char *cf_fence_harness_ns_adopt(const struct cf_fence *f, const char *given,
				      int write_protect, char *buf, size_t n)
{
	const char *v = cf_shared_ns_adopt(&keep, given, write_protect, buf, n);
	/* Started without them (a relaunch that closed them, or that dropped
	 * the variable): the supervisor holds them (issue 31). */
	if ((!given || keep.made) && keep.user_fd < 0 && cf_fence_supervisor(f) &&
	    !cf_shared_ns_recover(&keep, &f->ipc)) {
		cf_shared_ns_value(&keep, buf, n);
		v = buf;
	}
	return v;
}

int cf_fence_harness_ns_plan(const struct cf_fence *f, const struct cf_strv *allow,
			     const char *cwd)
{
	static struct cf_protect_plan held;
	return cf_shared_ns_plan(&keep, &held, &f->pol, allow, cwd);
}

void cf_fence_harness_ns_close_copies(void)
{
	cf_shared_ns_close_copies(&keep);
}

void cf_fence_harness_ns_fds(int out[3])
{
	out[0] = keep.user_fd;
	out[1] = keep.mnt_fd;
	out[2] = keep.keeper_fd;
}

void cf_fence_harness_ns_pass(bool on)
{
	cf_shared_ns_pass(&keep, on);
}

/* A..., joined into OUT (CAP bytes), cut to fit. */
static void join(char *out, size_t cap, const char *a, const char *b, const char *c)
{
	const char *parts[3] = {a, b, c};
	size_t n = 0;
	for (size_t i = 0; i < 3; i++)
		for (const char *p = parts[i]; p && *p && n + 1 < cap; p++)
			out[n++] = *p;
	out[n] = '\0';
}

/* A child of the harness enters the mount namespace the harness's guard
 * made for its children, before its own fence: by the descriptors the
 * harness holds, or, when they are gone (a harness that closed them, or
 * put other files in their place), by those the supervisor holds, asked
 * over the connection whose peer is checked (issue 31). GOT: room for the
 * supervisor's copy of the namespace (this stack). As
 * cf_fence_harness_ns_enter. */
static int enter_by(const struct cf_fence *f, struct cf_fence_ns_state *ns, char *reason,
		    size_t cap, char *lostwhy, size_t lostcap, struct cf_shared_ns *got)
{
	const struct cf_shared_ns *k = &keep;
	bool changed;
	const char *why;
	if (f->inherited)
		return 0;
	ns->held = k->held;
	int rc = cf_shared_ns_enter(k, &changed, &why);
	if (rc && !changed && k->made) {
		const char *fwhy;
		if (!cf_shared_ns_fetch(k, &f->ipc, got, &fwhy)) {
			k = got;
			ns->held = k->held;
			rc = cf_shared_ns_enter(k, &changed, &why);
		} else {
			join(lostwhy, lostcap, why, "; and from the supervisor: ", fwhy);
			why = lostwhy;
		}
	}
	if (!rc) {
		ns->metadata = "mounts";
		const char *lost = cf_shared_ns_lost(k);
		if (!lost)
			return 1;
		/* Replaced from outside by a rename, or removed: its mount is
		 * gone in this namespace too, and it can not be made again
		 * here (the harness's Landlock domain refuses mounts). The
		 * keeper can: asked, it binds it again, unless it is gone. */
		int asked = cf_shared_ns_ask(k);
		if (!asked || !(lost = cf_shared_ns_lost(k)))
			return 1;
		join(lostwhy, lostcap, lost, " was replaced or removed from outside since the harness "
			     "started, and is no longer held read-only",
		     asked == -EPIPE ? " (the keeper that binds it again is gone: start the harness "
				       "again)"
				     : " (the keeper that binds it again did not answer in time)");
		ns->off_why = lostwhy;
		if (k->write_protect == CF_WRITE_PROTECT_REQUIRE) {
			join(reason, cap, "write protection can not be kept for this child: ", lostwhy,
			     "");
			return -CF_FENCE_NS_REFUSED;
		}
		join(reason, cap, "warning: ", lostwhy, "");
		return 1;
	}
	ns->metadata = "supervisor";
	ns->held = 0;
	ns->off_why = why;
	if (changed) {
		join(reason, cap, "this child was left half-way into the mount namespace of the "
			     "fenced tree: ", why, "");
		return -CF_FENCE_NS_REFUSED;
	}
	if (k->write_protect == CF_WRITE_PROTECT_REQUIRE) {
		join(reason, cap, "write protection can not be made for this child: ", why,
		     "; run the harness with --write-protect=warn to run it with the read fence "
		     "alone");
		return -CF_FENCE_NS_REFUSED;
	}
	if (k->made && k->write_protect != CF_WRITE_PROTECT_WARN) {
		join(reason, cap, CF_WP_OWED_WORDS, why, CF_WP_OWED_HINT);
		return -CF_FENCE_NS_REFUSED;
	}
	return 0;
}

/* The supervisor's descriptors are closed once entered: the launch's file
 * actions after the fence must find the numbers as the caller left them. */
int cf_fence_harness_ns_enter(const struct cf_fence *f, struct cf_fence_ns_state *ns,
			      char *reason, size_t cap, char *lostwhy, size_t lostcap)
{
	struct cf_shared_ns got;
	got.user_fd = got.mnt_fd = got.keeper_fd = -1;
	if (cap)
		reason[0] = '\0';
	int rc = enter_by(f, ns, reason, cap, lostwhy, lostcap, &got);
	int fds[3] = {got.user_fd, got.mnt_fd, got.keeper_fd};
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			cf_sys_close(fds[i]);
	return rc;
}
