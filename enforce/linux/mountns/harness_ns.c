/* The mount namespace of the fenced tree for a harness's children
 * (shared_ns.h), the children's side: the door's calls (fence.h,
 * cf_fence_harness_ns_*) over the one struct cf_shared_ns of the process,
 * kept here in static storage so that neither the CLI nor the shim names
 * the keeper (credfence harness, whose guard makes it, and the harness's
 * shim, which adopts it and whose children enter it); and what a child
 * runs, between fork and exec, to enter the namespace: a vfork child reads
 * the static, as it read the shim's own before, and nothing here allocates
 * there. Kept in one file so that a launch touches one (issue 34); the
 * namespace's making and adoption, in the parent, are shared_ns.c. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "fence_state.h"
#include "notify/supervisor.h"
#include "notify/supervisor_wire.h"
#include "shared_ns.h"
#include "sys.h"
#include "userns.h"

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

/* ---- In the child: entering the namespace (shared_ns.h's "In the child
 * too" part), raw system calls and the stack only ---- */

bool cf_shared_ns_fd_is(int fd, unsigned long long ino, unsigned long long dev)
{
	struct stat st;
	if (fd < 0 || cf_sys4(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH))
		return false;
	return (unsigned long long)st.st_ino == ino && (unsigned long long)st.st_dev == dev;
}

void cf_shared_ns_close_copies(const struct cf_shared_ns *k)
{
	struct stat st;
	int u = k->user_fd, m = k->mnt_fd, s = k->keeper_fd;
	if (u > 2 && cf_shared_ns_fd_is(u, k->user_ino, k->dev))
		cf_sys_close(u);
	if (m > 2 && cf_shared_ns_fd_is(m, k->mnt_ino, k->dev))
		cf_sys_close(m);
	if (s > 2 && cf_sys4(SYS_newfstatat, s, "", &st, AT_EMPTY_PATH) == 0 && S_ISSOCK(st.st_mode))
		cf_sys_close(s);
}

/* A child's capabilities before it enters the user namespace, where setns
 * gives it every one: taken back afterwards, so that its credentials stay
 * those of the harness's other children (the supervisor serves only a
 * caller whose CapEff equals its own, sup_caller.h). Root keeps root's
 * less what the guard dropped (bounding set included); any other user
 * holds none. Raw system calls. */
struct caps {
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct d[2];
	unsigned long long bounding;
};

static int caps_save(struct caps *c, bool root)
{
	c->h = (struct __user_cap_header_struct){_LINUX_CAPABILITY_VERSION_3, 0};
	c->bounding = 0;
	if (!root) {
		c->d[0] = c->d[1] = (struct __user_cap_data_struct){0, 0, 0};
		return 0;
	}
	for (int cap = 0; cap < 64; cap++) {
		long in = cf_sys2(SYS_prctl, PR_CAPBSET_READ, cap);
		if (in < 0)
			break; /* past the kernel's last capability */
		if (in)
			c->bounding |= 1ull << cap;
	}
	return (int)cf_sys2(SYS_capget, &c->h, c->d);
}

static int caps_restore(struct caps *c, bool root)
{
	int rc;
	for (int cap = 0; root && cap < 64; cap++) {
		if (c->bounding & (1ull << cap))
			continue;
		rc = (int)cf_sys2(SYS_prctl, PR_CAPBSET_DROP, cap);
		if (rc == -EINVAL)
			break;
		if (rc)
			return rc;
	}
	c->h = (struct __user_cap_header_struct){_LINUX_CAPABILITY_VERSION_3, 0};
	return (int)cf_sys2(SYS_capset, &c->h, c->d);
}

int cf_shared_ns_enter(const struct cf_shared_ns *k, bool *changed, const char **why)
{
	char cwd[4096];
	int rc;
	*changed = false;
	if (k->user_fd < 0 || k->mnt_fd < 0) {
		*why = k->off_why;
		return -ENOENT;
	}
	/* A harness that closed the descriptors one by one before this
	 * child's exec (a close_range over them is closed around them,
	 * shim/linux/fdkeep.c), or put another file in their place. */
	if (!cf_shared_ns_fd_is(k->user_fd, k->user_ino, k->dev) || !cf_shared_ns_fd_is(k->mnt_fd, k->mnt_ino, k->dev)) {
		*why = "the descriptors of the namespace were closed or replaced before this "
		       "child's exec";
		return -EBADF;
	}
	rc = (int)cf_sys2(SYS_getcwd, cwd, sizeof cwd);
	if (rc < 0 || cwd[0] != '/') {
		*why = "the working directory has no path from the root";
		return rc < 0 ? rc : -ENOENT;
	}
	struct caps saved;
	if ((rc = caps_save(&saved, k->root))) {
		*why = "can not read this child's capabilities";
		return rc;
	}
	if ((rc = cf_userns_setns(k->user_fd, CLONE_NEWUSER))) {
		*why = "setns into the namespace's user namespace failed";
		return rc;
	}
	*changed = true;
	if ((rc = cf_userns_setns(k->mnt_fd, CLONE_NEWNS))) {
		*why = "setns into the mount namespace failed";
		return rc;
	}
	/* setns put the root and the working directory at the namespace's
	 * root: walk back by the path (a descriptor of the old directory
	 * would lead into the old, writable, mounts). */
	if ((rc = (int)cf_sys1(SYS_chdir, cwd))) {
		*why = "can not enter the working directory again in the namespace";
		return rc;
	}
	if ((rc = caps_restore(&saved, k->root))) {
		*why = "can not give up the capabilities of the namespace";
		return rc;
	}
	return 0;
}

static void keep_copy(struct cf_shared_ns *to, const struct cf_shared_ns *from)
{
	const char *f = (const char *)from;
	char *t = (char *)to;
	for (size_t i = 0; i < sizeof *to; i++)
		t[i] = f[i];
}

int cf_shared_ns_fetch(const struct cf_shared_ns *k, const struct cf_ipc *ipc,
			 struct cf_shared_ns *out, const char **why)
{
	struct cf_ns_wire w;
	int fds[3];
	int rc = cf_ipc_ns_get(ipc, &w, fds);
	keep_copy(out, k);
	out->user_fd = out->mnt_fd = out->keeper_fd = -1;
	if (rc == -ENOENT) {
		*why = "the supervisor holds no namespace for the harness's children";
		return rc;
	}
	if (rc == -EALREADY) {
		*why = "the supervisor gives the namespace only to a process outside it";
		return rc;
	}
	if (rc) {
		*why = cf_err_kind(rc) == CF_ERR_IPC_ENDED ? "the supervisor has ended"
					     : "the supervisor could not be asked for it";
		return rc < 0 && cf_err_kind(rc) == CF_ERR_ERRNO ? rc : -ECONNREFUSED;
	}
	if (k->made && (w.user_ino != k->user_ino || w.mnt_ino != k->mnt_ino || w.dev != k->dev)) {
		for (int i = 0; i < 3; i++)
			if (fds[i] >= 0)
				cf_sys_close(fds[i]);
		*why = "the supervisor's namespace is not the one the harness was given";
		return -ESTALE;
	}
	/* Checked by what they are, as inherited ones are. */
	if (!cf_shared_ns_fd_is(fds[0], w.user_ino, w.dev) || !cf_shared_ns_fd_is(fds[1], w.mnt_ino, w.dev)) {
		for (int i = 0; i < 3; i++)
			if (fds[i] >= 0)
				cf_sys_close(fds[i]);
		*why = "the supervisor's descriptors are not the namespaces it names";
		return -EBADF;
	}
	out->made = true;
	out->user_fd = fds[0];
	out->mnt_fd = fds[1];
	out->keeper_fd = fds[2];
	out->user_ino = w.user_ino;
	out->mnt_ino = w.mnt_ino;
	out->dev = w.dev;
	out->held = (size_t)w.held;
	out->root = w.root == 1;
	out->keeper_pid = fds[2] >= 0 ? w.keeper_pid : 0;
	return 0;
}

const char *cf_shared_ns_lost(const struct cf_shared_ns *k)
{
	const struct cf_protect_plan *pp = k->plan;
	struct statx stx;
	for (size_t i = 0; pp && i < pp->n_items; i++) {
		const char *p = pp->items[i].path;
		long rc = cf_sys5(SYS_statx, AT_FDCWD, p, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
				  STATX_TYPE, &stx);
		if (rc || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
			return rc ? p : NULL; /* the kernel does not say: not checked */
		if (!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
			return p;
	}
	return NULL;
}

static long now_ms(void)
{
	struct timespec ts;
	if (cf_sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &ts))
		return 0;
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cf_shared_ns_ask(const struct cf_shared_ns *k)
{
	int fd = k->keeper_fd;
	char b;
	struct stat st;
	/* The descriptor may have been closed or reused before this child. */
	if (fd < 0 || cf_sys4(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH) || !S_ISSOCK(st.st_mode))
		return -EPIPE;
	long end = now_ms() + CF_KEEPER_WAIT_MS;
	/* Answers are not addressed: any child may read any. Each answer
	 * follows a pass over the plan; a stale one only makes this ask
	 * again. */
	for (;;) {
		long rc = cf_sys6(SYS_sendto, fd, (long)"?", 1, MSG_DONTWAIT | MSG_NOSIGNAL, 0, 0);
		if (rc == -EPIPE || rc == -ECONNRESET || rc == -ENOTCONN)
			return -EPIPE;
		long left = end - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pf = {fd, POLLIN, 0};
		struct timespec ts = {left / 1000, (left % 1000) * 1000000};
		rc = cf_sys5(SYS_ppoll, &pf, 1, &ts, NULL, 0);
		if (rc == 0)
			return -ETIMEDOUT;
		if (rc < 0 && rc != -EINTR)
			return (int)rc;
		if (pf.revents & (POLLHUP | POLLERR))
			return -EPIPE;
		rc = cf_sys6(SYS_recvfrom, fd, (long)&b, 1, MSG_DONTWAIT, 0, 0);
		if (rc == 0)
			return -EPIPE;
		if (!cf_shared_ns_lost(k))
			return 0;
	}
}

void cf_shared_ns_pass(const struct cf_shared_ns *k, bool on)
{
	if (k->keeper_fd >= 0)
		(void)cf_sys3(SYS_fcntl, k->keeper_fd, F_SETFD, on ? 0 : FD_CLOEXEC);
	if (k->user_fd < 0 || k->mnt_fd < 0)
		return;
	(void)cf_sys3(SYS_fcntl, k->user_fd, F_SETFD, on ? 0 : FD_CLOEXEC);
	(void)cf_sys3(SYS_fcntl, k->mnt_fd, F_SETFD, on ? 0 : FD_CLOEXEC);
}

/* ---- the test switch of user namespaces (userns.h), read here because
 * a child entering the namespace asks it ---- */

#ifdef CF_TEST_USERNS_SWITCH
static int fault;

__attribute__((constructor(101))) static void read_fault(void)
{
	static const char *const words[] = {"", "sysctl", "maxns", "seccomp", "apparmor"};
	const char *v = getenv("CF_TEST_USERNS"), *old = getenv("CF_TEST_NO_USERNS");
	for (int i = 1; v && i < (int)(sizeof words / sizeof *words); i++)
		if (strcmp(v, words[i]) == 0)
			fault = i;
	if (!fault && old && strcmp(old, "1") == 0)
		fault = CF_USERNS_FAULT_SECCOMP;
}
#endif

int cf_userns_fault(void)
{
#ifdef CF_TEST_USERNS_SWITCH
	return fault;
#else
	return CF_USERNS_REAL;
#endif
}

int cf_userns_setns(int fd, int type)
{
	if (cf_userns_fault() == CF_USERNS_FAULT_SECCOMP)
		return -EPERM;
	return (int)cf_sys2(SYS_setns, fd, type);
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
