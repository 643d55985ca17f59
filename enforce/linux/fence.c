/* The fence on Linux as each launch runs it (fence.h, fence_state.h): the
 * harness's check that its fence is current (the stamps, or the watch
 * fence_watch.c set), and in the child, between fork and exec, its entry:
 * the prepared Landlock ruleset (or one built there), the filters and the
 * handover to the supervisor; with the door's accessors and /proc's facts
 * (proc.h). One file, so that a launch touches few (issue 34); what the
 * parent prepares once a generation is fence_prepare.c. */
#include "fence_state.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "event.h"
#include "landlock/landlock.h"
#include "nolibc.h"
#include "proc.h"
#include "sys.h"


/* The failure RC of building or entering F's ruleset as a verdict. */
static void decode(const struct cf_fence *f, int rc, const struct cf_expand_result *res,
		   struct cf_why *w)
{
	if (cf_err_kind(rc) == CF_ERR_TOOMANY)
		*w = (struct cf_why){.id = CF_WHY_TOO_MANY, .n = (long long)res->over_count,
				     .limit = (long long)f->pol.max_entries, .arg = {res->over_dir}};
	else if (rc == -ESTALE)
		*w = (struct cf_why){.id = CF_WHY_STALE};
	else
		cf_ll_verdict(rc, f->abi, w);
}

void cf_fence_refuse_rc(struct cf_fence *f, int rc, const struct cf_expand_result *res)
{
	struct cf_why w;
	decode(f, rc, res, &w);
	cf_policy_verdict(&f->pol, &w);
	f->ready = false;
}

int cf_fence_abi(const struct cf_fence *f)
{
	return f->abi;
}

bool cf_fence_racy(const struct cf_fence *f)
{
	return f->racy;
}

bool cf_fence_protect_planned(const struct cf_fence *f)
{
	return f->ns.planned;
}

int cf_fence_write_protect(const struct cf_fence *f)
{
	return f->ns.write_protect;
}

size_t cf_fence_protect_held(const struct cf_fence *f)
{
	return f->ns.held;
}

size_t cf_fence_protect_private_copies(const struct cf_fence *f)
{
	size_t n = 0;
	for (size_t i = 0; i < f->ns.plan.n_items; i++)
		n += f->ns.plan.items[i].row->private_copy;
	return n;
}

const char *cf_fence_protect_off_why(const struct cf_fence *f)
{
	return f->ns.off_why;
}

int cf_fence_take_ruleset(struct cf_fence *f)
{
	int fd = f->ruleset;
	/* atomic: read unlocked by those children (cf_fence_enter) */
	__atomic_store_n(&f->ruleset, -1, __ATOMIC_RELAXED);
	return fd;
}

bool cf_fence_watch_tried(const struct cf_fence *f)
{
	return f->watch || f->watch_tried;
}

/* The accessors of the door, written once for both systems. */
#include "fence_fields.h"

/* Every failure of the IPC fence reads as one, whatever step failed. */
static int ipc_code(int rc)
{
	return cf_err_as(CF_ERR_IPC, rc);
}

struct ipc_step {
	const struct cf_ipc *ipc;
	int *pending; /* the handover's socket, awaiting the supervisor's answer */
};

/* Between the terminal filter and the Landlock layer: the IPC fence, up to
 * the handover (the supervisor's abstract socket is out of reach once the
 * Landlock layer is on). */
static int ipc_between(const void *ctx)
{
	const struct ipc_step *st = ctx;
	return ipc_code(st->ipc->addr[0] ? cf_ipc_enter_begin(st->ipc, st->pending) : -ENOTCONN);
}

/* The whole fence on the calling thread, with IPC's supervisor, RULESET's
 * Landlock layer last. The supervisor's answer to the handover is waited
 * for after the Landlock layer, so that the two processes' work overlaps
 * (the layer costs about 0.5 us a rule); nothing runs before the answer is
 * in, and an IPC failure wins over the layer's result, as it did when it
 * came first. */
static int restrict_fenced(const struct cf_ipc *ipc, int ruleset)
{
	int pending = -1;
	int rc = cf_ll_restrict_with(ruleset, ipc_between, &(struct ipc_step){ipc, &pending});
	if (pending >= 0) {
		int answer = ipc_code(cf_ipc_enter_end(ipc, pending));
		if (answer)
			rc = answer;
	}
	return rc;
}

const char *cf_fence_supervisor(const struct cf_fence *f)
{
	return f->ipc.addr[0] ? f->ipc.addr : NULL;
}

bool cf_fence_needs_supervisor(const struct cf_fence *f)
{
	return f->ready && !f->inherited && !f->ipc.addr[0];
}

void cf_fence_words(const struct cf_fence *f, int rc, const struct cf_expand_result *res,
		    char *out, size_t cap)
{
	struct cf_why w = f->pol.why;
	if (f->ready || cf_err_kind(rc) == CF_ERR_TOOMANY)
		decode(f, rc, res, &w);
	cf_why_words(&w, out, cap);
}

bool cf_fence_refuses_always(const struct cf_fence *f, int rc)
{
	struct cf_why w = f->pol.why;
	struct cf_expand_result none = {0};
	if (f->ready || cf_err_kind(rc) == CF_ERR_TOOMANY)
		decode(f, rc, &none, &w);
	return cf_why_refuses_always(w.id);
}

void cf_fence_reason(const struct cf_fence *f, char *out, size_t cap)
{
	cf_policy_reason(&f->pol, out, cap);
}

void cf_fence_refuse(struct cf_fence *f, const struct cf_why *w)
{
	cf_policy_verdict(&f->pol, w);
	f->ready = false;
}

int cf_fence_fenced(void)
{
	return cf_ll_fenced();
}

int cf_fence_close_parents_fds(const struct cf_fence *f)
{
	int rc = (int)cf_sys1(SYS_unshare, CLONE_FILES);
	if (rc || f->inherited)
		return rc;
	/* Each number checked for what it should hold: in a vfork child
	 * another thread of the parent may have replaced it since the clone,
	 * and the number may hold a file of the caller's in this table. */
	int rs = __atomic_load_n(&f->ruleset, __ATOMIC_RELAXED);
	if (rs > 2 && cf_ll_is_ruleset(rs))
		cf_sys_close(rs);
	if (f->joining)
		cf_shared_ns_close_copies(&f->join);
	return 0;
}

int cf_fence_apply(struct cf_fence *f)
{
	if (!f->ready)
		return -EPERM;
	if (f->inherited)
		return 0;
	int rc = restrict_fenced(&f->ipc, f->ruleset);
	if (rc)
		cf_fence_refuse_rc(f, rc, NULL);
	return rc;
}

void cf_stamp_path(const char *path, struct cf_stamp *out)
{
	struct stat st;
	memset(out, 0, sizeof *out);
	if (cf_sys4(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
		cf_stamp_from(&st, out);
}

int cf_stamp_equal(const struct cf_stamp *a, const struct cf_stamp *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec &&
	       a->ctime_sec == b->ctime_sec && a->ctime_nsec == b->ctime_nsec;
}

bool cf_fence_current(const struct cf_fence *f)
{
	struct cf_stamp now;
	if (f->inherited)
		return true;
	if (!f->ready || f->racy)
		return false;
	for (size_t i = 0; i < f->plan.n_anc; i++) {
		cf_stamp_path(f->plan.anc[i].path, &now);
		if (!cf_stamp_equal(&now, &f->stamps[i]))
			return false;
	}
	for (size_t i = 0; i < f->pol.lookups.n; i++) {
		if (f->lookup_stamps[i].present == CF_STAMP_SKIP)
			continue;
		cf_stamp_path(f->pol.lookups.v[i], &now);
		if (!cf_stamp_equal(&now, &f->lookup_stamps[i]))
			return false;
	}
	return true;
}

/* ---- the harness's check at each launch, by the watch fence_watch.c set
 * once a generation (normal context); and the child's closing of its copies
 * of the watch's descriptors (raw system calls and the stack) ---- */

bool cf_fence_same_file(int fd, const struct stat *was)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == was->st_dev && st.st_ino == was->st_ino;
}

const char *cf_fence_stamped_at(const struct cf_fence *f, size_t i, const struct cf_stamp **st)
{
	if (i < f->plan.n_anc) {
		*st = &f->stamps[i];
		return f->plan.anc[i].path;
	}
	i -= f->plan.n_anc;
	*st = &f->lookup_stamps[i];
	return (*st)->present == CF_STAMP_SKIP ? NULL : f->pol.lookups.v[i];
}

/* The watch is ours still, and heard nothing. */
static bool quiet(struct cf_fence_watch *w)
{
	if (w->changed)
		return false;
	pid_t self = getpid();
	int queued = -1;
	struct pollfd p[2] = {{w->ino, POLLIN, 0}, {w->mounts, POLLPRI, 0}};
	/* The identity after the poll: a stand-in put there before it
	 * (another file, or none) is still there now. An anonymous inode
	 * (inotify's is shared with eventfd, epoll, timerfd ...) that answers
	 * FIONREAD, twice at our two numbers: an inotify instance, ours
	 * unless the harness put one of its own at both (SECURITY.md). */
	if (self != w->owner || poll(p, 2, 0) != 0 || !cf_fence_same_file(w->ino, &w->ino_st) ||
	    ioctl(w->ino, FIONREAD, &queued) != 0 || queued != 0 ||
	    cf_sys5(SYS_kcmp, self, self, KCMP_FILE, w->ino, w->twin) != 0 ||
	    !cf_fence_same_file(w->mounts, &w->mounts_st))
		w->changed = true;
	return !w->changed;
}

bool cf_fence_current_watched(const struct cf_fence *f)
{
	struct cf_fence_watch *w = f->watch;
	if (f->inherited)
		return true;
	if (!f->ready || f->racy)
		return false;
	if (!w || !quiet(w))
		return cf_fence_current(f);
	for (size_t k = 0; k < w->n_stat; k++) {
		const struct cf_stamp *st;
		struct cf_stamp now;
		const char *p = cf_fence_stamped_at(f, w->stat_at[k], &st);
		cf_stamp_path(p, &now);
		if (!cf_stamp_equal(&now, st))
			return false;
	}
	return true;
}

int cf_fence_supervisor_watched(const struct cf_fence *f)
{
	const struct cf_fence_watch *w = f->watch;
	if (!w || w->sup < 0 || getpid() != w->owner)
		return -1;
	struct pollfd p = {w->sup, POLLIN, 0};
	int n = poll(&p, 1, 0);
	if (n < 0 || (p.revents & POLLNVAL) || !cf_fence_same_file(w->sup, &w->sup_st))
		return -1;
	return n == 0;
}

/* FD's /proc/self/fd link into BUF (CAP bytes, NUL-ended): its length, or
 * -1. Raw system calls and stack. */
static long fd_link(int fd, char *buf, size_t cap)
{
	char link[32] = "/proc/self/fd/", digits[12];
	size_t n = 0, at = sizeof "/proc/self/fd/" - 1;
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) && n < sizeof digits);
	while (n)
		link[at++] = digits[--n];
	link[at] = '\0';
	long r = cf_sys4(SYS_readlinkat, AT_FDCWD, link, buf, cap - 1);
	if (r < 0)
		return -1;
	buf[r] = '\0';
	return r;
}

void cf_fence_close_watch_copies(const int fds[4])
{
	static const char tail[] = "/mountinfo";
	for (int i = 0; i < 4; i++) {
		char got[64];
		long n = fds[i] > 2 ? fd_link(fds[i], got, sizeof got) : -1;
		bool ours = n > 0 && (cf_nl_streq(got, "anon_inode:inotify") ||
				      cf_nl_streq(got, "anon_inode:[pidfd]") ||
				      (cf_nl_has_prefix(got, "/proc/") && (size_t)n >= sizeof tail - 1 &&
				       cf_nl_streq(got + n - (sizeof tail - 1), tail)));
		if (ours)
			cf_sys_close(fds[i]);
	}
}

static int enter(const struct cf_fence *f, char *buf, size_t bufsz, struct cf_expand_result *out,
		 bool checked, bool by_mounts)
{
	struct cf_expand_result res = {0};
	*out = res;
	if (f->inherited)
		return 0;
	/* F may be the harness's shared copy: this child's own copy of the IPC
	 * fence says whether it is in the namespace (shared_ns.h). */
	struct cf_ipc ipc = f->ipc;
	ipc.meta_by_mounts = ipc.meta_by_mounts || by_mounts;
	if (f->abi <= 0)
		return f->abi < 0 ? f->abi : -ENOSYS;
	bool between_done = false;
	if (checked || cf_fence_current(f)) {
		/* The harness's fence cache closes a replaced fence's ruleset
		 * (shim/linux/fence_cache.c, bury) while a vfork child of another thread may
		 * read it: one atomic load, of a valid fd or -1. */
		int ruleset = __atomic_load_n(&f->ruleset, __ATOMIC_RELAXED);
		int rc = restrict_fenced(&ipc, ruleset);
		if (rc == 0) {
			out->rules = f->res.rules;
			return 0;
		}
		if (rc != -EBADF && rc != -EBADFD && rc != -EINVAL)
			return rc;
		/* The prepared fd was closed or replaced (close_fds): build our own.
		 * The filters and the IPC fence are in place already. */
		between_done = true;
	} else if (!cf_policy_resolves_same(&f->pol)) {
		/* A symlink on the way to a secret changed: the plan would deny the
		 * old target. Only the parent can re-resolve; refuse here. */
		return -ESTALE;
	}
	int fd = cf_ll_build(&f->plan, f->abi, buf, bufsz, &res, NULL);
	*out = res;
	if (fd < 0)
		return fd;
	int rc = between_done ? cf_ll_restrict_self(fd)
			      : restrict_fenced(&ipc, fd);
	cf_sys_close(fd);
	return rc;
}

/* pol.log is canonical and lies outside every writable location (the policy
 * refuses it otherwise), so no fenced program can change the directories on
 * its way; O_NOFOLLOW keeps a symlink the user puts in its place later from
 * sending the line elsewhere. */
int cf_fence_log_open(const struct cf_fence *f)
{
	if (!f->pol.log)
		return -1;
	return (int)cf_sys4(SYS_openat, AT_FDCWD, f->pol.log,
			    O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
}

int cf_fence_enter(const struct cf_fence *f, char *buf, size_t bufsz, struct cf_expand_result *out)
{
	return enter(f, buf, bufsz, out, false, false);
}

int cf_fence_enter_checked(const struct cf_fence *f, char *buf, size_t bufsz,
			   struct cf_expand_result *out)
{
	return enter(f, buf, bufsz, out, f->ready && !f->racy, false);
}

int cf_fence_enter_in_ns(const struct cf_fence *f, bool checked, char *buf, size_t bufsz,
			 struct cf_expand_result *out)
{
	return enter(f, buf, bufsz, out, checked && f->ready && !f->racy, true);
}

bool cf_fence_protect_owed(const struct cf_fence *f)
{
	return f->ns.planned && !f->inherited && f->join.made && !f->ns.in_force;
}


pid_t cf_fence_supervisor_pid(const struct cf_fence *f)
{
	return f->ipc.sup_pid;
}

bool cf_fence_supervisor_alive(const struct cf_fence *f)
{
	return cf_ipc_supervisor_alive(&f->ipc);
}

void cf_fence_supervisor_without_root_caps(void)
{
	cf_ipc_serve_without_root_caps();
}

void cf_fence_at_end(void (*fn)(const char *), const char *arg)
{
	cf_supervisor_at_end(fn, arg);
}

void cf_fence_tell_user(const struct cf_fence *f, const char *program, const char *why)
{
	cf_ipc_say(&f->ipc, program, why);
}

/* Enter the namespace cf_fence_protect_join found, and check that each path
 * this run's plan protects is a mount point in it (a file replaced by a
 * rename outside since the harness started is not; so is a row this run's
 * environment adds, HOME moved into a writable location). 1: not entered,
 * nothing changed (make one instead); 0 entered (WHY: a warning, or "");
 * -errno: refused (*CHANGED: left half-way; else --write-protect=require
 * and a path is not held). */
static int join(struct cf_fence *f, bool *changed, char *why, size_t n)
{
	const char *words;
	int rc = cf_shared_ns_enter(&f->join, changed, &words);
	if (rc) {
		if (!*changed)
			return 1;
		snprintf(why, n, "%s: %s", words, strerror(-rc));
		return rc;
	}
	f->join.plan = &f->ns.plan;
	const char *lost = cf_shared_ns_lost(&f->join);
	f->ns.in_force = true;
	f->ns.held = f->join.held;
	f->ipc.meta_by_mounts = true;
	if (!lost)
		return 0;
	snprintf(f->ns.off_why, sizeof f->ns.off_why,
		 "%s is not held read-only in the namespace the harness made at its start (replaced "
		 "or removed from outside since, or not there then); start the harness again", lost);
	snprintf(why, n, "%s", f->ns.off_why);
	/* Entered, but the caller refuses under require (its words say
	 * why): nothing runs in it. */
	if (f->ns.write_protect == CF_WRITE_PROTECT_REQUIRE)
		return -ESTALE;
	return 0;
}

int cf_fence_protect(struct cf_fence *f, bool *changed, char *why, size_t n)
{
	*changed = false;
	if (n)
		why[0] = '\0';
	if (!f->ns.planned || f->inherited)
		return 0;
	if (f->joining) {
		int jr = join(f, changed, why, n);
		if (jr <= 0)
			return jr;
	}
	int rc = cf_tree_ns_enter(&f->ns);
	if (rc) {
		/* Up to the read-only step (all or nothing) the namespace is a
		 * copy of the one we came from: the command may run in it. */
		*changed = f->ns.fail_step > CF_NS_RDONLY;
		cf_tree_ns_words(&f->ns, rc, why, n);
		if (f->join.made && !*changed) {
			/* Below a harness that has one: say why it was not
			 * entered first. */
			char own[512];
			snprintf(own, sizeof own, "%s", why);
			snprintf(why, n, "the harness's namespace can not be entered (%s), and one of "
				 "its own can not be made (%s)",
				 f->join.off_why[0] ? f->join.off_why : "its descriptors are gone", own);
		}
		snprintf(f->ns.off_why, sizeof f->ns.off_why, "%s", why);
		return rc;
	}
	f->ipc.meta_by_mounts = true;
	return 0;
}

const char *cf_fence_metadata_by(const struct cf_fence *f)
{
	return f->ns.in_force ? "mounts" : "supervisor";
}

const char *cf_fence_abi_note(const struct cf_fence *f)
{
	switch (f->abi) {
	case 1:
		return "Landlock ABI 1: truncate() outside the writable locations is refused by the "
		       "read-only mounts alone (Landlock: ABI 3); renames and links across "
		       "directories fail with EXDEV (ABI 2); device ioctls: the terminal filter "
		       "alone (ABI 5)";
	case 2:
		return "Landlock ABI 2: truncate() outside the writable locations is refused by the "
		       "read-only mounts alone (Landlock: ABI 3); device ioctls: the terminal filter "
		       "alone (ABI 5)";
	case 3:
		return "Landlock ABI 3: device ioctls: the terminal filter alone (ABI 5)";
	case 4:
		return "Landlock ABI 4: device ioctls: the terminal filter alone (ABI 5)";
	default:
		return NULL;
	}
}

void cf_fence_log(const struct cf_fence *f, int fd, pid_t pid, const char *program, bool applied,
		  const char *reason, size_t rules, char *buf, size_t bufsz)
{
	struct cf_fence_ns_state ns = {NULL, 0, NULL};
	if (f->ns.planned) {
		ns.metadata = cf_fence_metadata_by(f);
		ns.held = f->ns.held;
		ns.off_why = f->ns.in_force && !f->ns.off_why[0] ? NULL : f->ns.off_why;
	}
	cf_fence_log_ns(f, &ns, fd, pid, program, applied, reason, rules, buf, bufsz);
}

void cf_fence_log_ns(const struct cf_fence *f, const struct cf_fence_ns_state *ns, int fd,
		     pid_t pid, const char *program, bool applied, const char *reason, size_t rules,
		     char *buf, size_t bufsz)
{
	if (fd < 0)
		return; /* no log: the writer's file is not entered */
	struct cf_event e = {pid,  program, "landlock", f->abi, applied, reason, f->pol.mode, rules,
			     ns->metadata, ns->held, ns->off_why};
	cf_event_write(fd, &e, f->lists_json, buf, bufsz);
}

/* ---- /proc (proc.h): facts about a process, raw system calls and the
 * stack only, read in the child as in the parent ---- */

unsigned long long cf_proc_self_starttime(void)
{
	return cf_proc_starttime(0);
}

unsigned long long cf_proc_starttime(int pid)
{
	char state;
	return cf_proc_starttime_state(pid, &state);
}

unsigned long long cf_proc_starttime_state(int pid, char *state)
{
	struct cf_proc_stat st;
	*state = 0;
	if (cf_proc_stat(pid, &st) < 0)
		return 0;
	*state = st.state;
	return st.start;
}

/* Field N (N >= 3) of the stat line P points into, after the last ')'. */
static unsigned long long field(const char *p, int n)
{
	int at = 2;
	while (*p && at < n) {
		if (*p == ' ') {
			at++;
			while (*p == ' ')
				p++;
			continue;
		}
		p++;
	}
	unsigned long long v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (unsigned long long)(*p++ - '0');
	return v;
}

int cf_proc_stat(int pid, struct cf_proc_stat *st)
{
	char buf[1024], path[32] = "/proc/self/stat";
	if (pid > 0) {
		char digits[12];
		int nd = 0, at = 6; /* after "/proc/" */
		do
			digits[nd++] = (char)('0' + pid % 10);
		while ((pid /= 10) && nd < (int)sizeof digits);
		while (nd)
			path[at++] = digits[--nd];
		for (const char *t = "/stat"; *t; t++)
			path[at++] = *t;
		path[at] = '\0';
	}
	int fd = cf_sys_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fd;
	long n = cf_sys3(SYS_read, fd, buf, sizeof buf - 1);
	cf_sys_close(fd);
	if (n <= 0)
		return n < 0 ? (int)n : -EIO;
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: fields start after the last ')'. */
	char *p = 0;
	for (char *q = buf; *q; q++)
		if (*q == ')')
			p = q;
	if (!p || p[1] != ' ')
		return -EIO;
	p++;
	st->state = p[1];                       /* field 3 */
	st->ppid = (int)field(p, 4);            /* field 4 */
	st->start = field(p, 22);               /* field 22, clock ticks since boot */
	st->env_start = (unsigned long)field(p, 50); /* fields 50 and 51 (Linux 3.5) */
	st->env_end = (unsigned long)field(p, 51);
	return st->start ? 0 : -EIO;
}

int cf_proc_self_env_area(unsigned long *lo, unsigned long *hi)
{
	struct cf_proc_stat st;
	*lo = *hi = 0;
	if (cf_proc_stat(0, &st) < 0 || !st.env_start || st.env_end <= st.env_start)
		return -1;
	*lo = st.env_start;
	*hi = st.env_end;
	return 0;
}
