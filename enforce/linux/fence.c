#include "fence_state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "event.h"
#include "json.h"
#include "paths.h"
#include "proc.h"
#include "landlock/landlock.h"
#include "protected_match.h"
#include "notify/sup_denied.h"
#include "sys.h"
#include "mountns/userns.h"


/* A directory changed so shortly before it was read that a next change could
 * get the same timestamp. Times with nanoseconds come from the kernel's clock,
 * whose coarse tick is at most 10 ms (HZ >= 100): 50 ms is safe. Times in whole
 * seconds may come from a filesystem that keeps only seconds (or two): wait 2 s. */
static bool recent_time(int64_t sec, int64_t nsec, const struct timespec *now)
{
	int64_t ago_ns = ((int64_t)now->tv_sec - sec) * 1000000000LL + ((int64_t)now->tv_nsec - nsec);
	return ago_ns < (nsec == 0 ? 2000000000LL : 50000000LL);
}

static bool recent(const struct cf_stamp *st, const struct timespec *now)
{
	return st->present == 1 && (recent_time(st->mtime_sec, st->mtime_nsec, now) ||
				    recent_time(st->ctime_sec, st->ctime_nsec, now));
}

/* Stamp the directories the policy was resolved in, then make sure the policy
 * still holds for what was stamped. */
static int stamp_lookups(struct cf_fence *f)
{
	struct timespec now;
	const struct cf_strv *l = &f->pol.lookups;
	f->lookup_stamps = calloc(l->n ? l->n : 1, sizeof *f->lookup_stamps);
	if (!f->lookup_stamps)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		bool ancestor = false;
		for (size_t k = 0; k < f->plan.n_anc && !ancestor; k++)
			ancestor = strcmp(f->plan.anc[k].path, l->v[i]) == 0;
		if (ancestor)
			f->lookup_stamps[i].present = CF_STAMP_SKIP; /* its ancestor stamp covers it */
		else
			cf_stamp_path(l->v[i], &f->lookup_stamps[i]);
	}
	clock_gettime(CLOCK_REALTIME, &now);
	for (size_t i = 0; i < f->plan.n_anc && !f->racy; i++)
		f->racy = recent(&f->stamps[i], &now);
	for (size_t i = 0; i < l->n && !f->racy; i++)
		f->racy = recent(&f->lookup_stamps[i], &now);
	if (!cf_policy_resolves_same(&f->pol))
		f->racy = true; /* changed while we looked: never reuse this one */
	return 0;
}

/* A secret the enclosing fence lets us at, or NULL. An existing secret must
 * refuse to open (nothing is read); a missing one must have its nearest
 * existing parent unlistable, so that it can not be created either. */
static const char *uncovered(const struct cf_policy *p)
{
	char dir[PATH_MAX];
	for (size_t i = 0; i < p->n_denied; i++) {
		const char *s = p->denied[i].path;
		int fd = open(s, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return s;
		}
		if (errno == EACCES)
			continue;
		snprintf(dir, sizeof dir, "%s", s);
		for (;;) {
			char up[PATH_MAX];
			cf_path_parent(dir, up, sizeof up);
			snprintf(dir, sizeof dir, "%s", up);
			fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd >= 0) {
				close(fd);
				return s;
			}
			if (errno == EACCES)
				break;
			if (strcmp(dir, "/") == 0)
				return s;
		}
	}
	return NULL;
}

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

/* F is not ready, for the failure RC (RES: the expansion's, or NULL). */
static void refuse(struct cf_fence *f, int rc, const struct cf_expand_result *res)
{
	struct cf_why w;
	decode(f, rc, res, &w);
	cf_policy_verdict(&f->pol, &w);
	f->ready = false;
}

/* The write protection's scope into F's blob (sup_denied.h): a lift that can
 * not be made canonical is left out (the CLI refuses it before this). */
static int protect_blob(struct cf_fence *f, const struct cf_options *o, const char *cwd)
{
	struct cf_strv lifts = {0};
	const char *bad;
	char c[PATH_MAX];
	bool canon = cf_canon(cwd, NULL, c, sizeof c, NULL, NULL) == 0;
	int rc = cf_protected_canon_lifts(&o->allow_write_protected, canon ? c : cwd, &lifts, &bad);
	if (rc == -ENOMEM) {
		cf_strv_free(&lifts);
		return rc;
	}
	rc = cf_sup_protect_blob(&f->ipc.blob, &f->ipc.blob_len, &f->pol, canon ? c : NULL, &lifts);
	cf_strv_free(&lifts);
	return rc;
}

int cf_fence_prepare(struct cf_fence *f, const struct cf_options *o, char *const envp[],
		     const char *cwd)
{
	char here[PATH_MAX];
	char scratch[16384];
	int rc;

	memset(f, 0, sizeof *f);
	f->ruleset = -1;
	if (!cwd)
		cwd = getcwd(here, sizeof here) ? here : "/";
	/* The kernel's ABI whatever the verdict: status shows it. */
	f->abi = cf_ll_abi();
	if ((rc = cf_policy_build(&f->pol, o, envp, cwd)))
		return rc;
	if (!(f->lists_json = cf_event_lists(&f->pol)))
		return -ENOMEM;
	if (f->pol.verdict != CF_VERDICT_APPLIED)
		return 0;
	if (f->abi > 0 && cf_ll_fenced()) {
		/* Fenced already (a nested run, or the shim loaded into us): the
		 * enclosing fence stays in force and can not be widened; the
		 * directories to expand can not even be listed. Add no layer, but
		 * only when the enclosing fence denies everything this policy does,
		 * IPC included: its supervisor's listener is in our seccomp chain. */
		f->inherited = f->ready = cf_policy_inherit(&f->pol, uncovered(&f->pol));
		if (f->ready && cf_ipc_covered() != 1) {
			cf_policy_verdict(&f->pol, &(struct cf_why){.id = CF_WHY_NESTED_NO_IPC});
			f->inherited = f->ready = false;
		}
		return 0;
	}
	if ((rc = cf_ipc_prepare(&f->ipc, &f->pol.writable, &f->pol.allow_sockets, o->supervisor)))
		return rc;
	/* The supervisor makes the Unix datagram sockets (sup_dgram.h), on
	 * every ABI: before 6 Landlock has no scope for abstract sockets, and
	 * from 6 on its scope would keep a harness's children (a domain each)
	 * from each other's. */
	f->ipc.dgram_by_sup = true;
	/* The secrets, for the supervisor's denied lines (sup_denied.h). */
	if ((rc = cf_sup_denied_blob(&f->ipc.blob, &f->ipc.blob_len, f->pol.denied, f->pol.n_denied)))
		return rc;
	/* And the write protection's scope, for its write_protected lines. */
	if ((rc = protect_blob(f, o, cwd)))
		return rc;
	if (f->abi < 0 || f->abi < CF_LANDLOCK_MIN_ABI) {
		refuse(f, f->abi < 0 ? f->abi : 0, NULL);
		return 0;
	}
	if ((rc = cf_plan_prepare(&f->plan, &f->pol)))
		return rc;
	f->stamps = calloc(f->plan.n_anc ? f->plan.n_anc : 1, sizeof *f->stamps);
	if (!f->stamps)
		return -ENOMEM;
	rc = cf_ll_build(&f->plan, f->abi, scratch, sizeof scratch, &f->res, f->stamps);
	if (rc < 0) {
		refuse(f, rc, &f->res);
		f->res.rules = 0;
		return 0;
	}
	f->ruleset = rc;
	f->ready = true;
	return stamp_lookups(f);
}

struct cf_fence *cf_fence_new(void)
{
	struct cf_fence *f = calloc(1, sizeof *f);
	if (f)
		f->ruleset = -1;
	return f;
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

void cf_fence_free(struct cf_fence *f)
{
	cf_fence_unwatch(f);
	if (f->ruleset >= 0)
		close(f->ruleset);
	free(f->stamps);
	free(f->lookup_stamps);
	free(f->lists_json);
	cf_ipc_free(&f->ipc);
	if (f->ns.planned)
		cf_tree_ns_free(&f->ns);
	if (f->joining) {
		close(f->join.user_fd);
		close(f->join.mnt_fd);
	}
	cf_plan_free(&f->plan);
	cf_policy_free(&f->pol);
	memset(f, 0, sizeof *f);
	f->ruleset = -1;
}

void cf_fence_destroy(struct cf_fence *f)
{
	if (!f)
		return;
	cf_fence_free(f);
	free(f);
}

/* The accessors of the door: field reads only, safe between fork and exec. */
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

int cf_fence_start_supervisor(struct cf_fence *f, pid_t keeper, int logfd, bool above)
{
	char addr[CF_IPC_ADDR_MAX];
	int scope = cf_ipc_ptrace_blocked("/proc/sys/kernel/yama/ptrace_scope", above);
	int rc = scope ? CF_ERR(CF_ERR_IPC_PTRACE, scope)
		 : above ? cf_supervisor_start_above(logfd, addr)
			 : cf_supervisor_start(keeper, logfd, addr);
	if (!rc)
		rc = cf_ipc_set_addr(&f->ipc, addr);
	f->ipc.sup_beside = !above;
	if (rc) {
		rc = cf_err_as(CF_ERR_IPC_START, rc); /* the start failed */
		refuse(f, rc, NULL);
	}
	return rc;
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

int cf_fence_probe(struct cf_fence *f)
{
	int probe = cf_ll_probe();
	int ipc = probe ? 0 : cf_ipc_probe();
	if (probe || ipc)
		refuse(f, probe ? probe : cf_ipc_err(ipc), NULL);
	return probe ? probe : ipc;
}

#ifndef CF_DATADIR
#define CF_DATADIR "/usr/local/share/credfence"
#endif

int cf_fence_container_gap(char *why, size_t n)
{
	struct cf_why w;
	if (!cf_userns_under_seccomp())
		return 0;
	int rc = cf_ipc_probe();
	cf_ipc_verdict(rc, &w);
	if (!rc || w.id != CF_WHY_IPC_PIDFD)
		return 0;
	int err = w.err ? w.err : EPERM;
	snprintf(why, n, "pidfd_getfd unavailable (%s): a seccomp filter refuses it (a container's "
		 "default profile: Docker's allows it only with CAP_SYS_PTRACE), so every Unix socket "
		 "connect and bind of a fenced program fails with EPERM; add pidfd_getfd to the "
		 "container's seccomp profile (" CF_DATADIR "/seccomp/credfence-rule.json, README, "
		 "\"Containers\")", strerror(err));
	return -err;
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
		refuse(f, rc, NULL);
	return rc;
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
		 * (shim/linux/thread.c, bury) while a vfork child of another thread may
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

int cf_fence_protect_prepare(struct cf_fence *f, const struct cf_options *o, const char *cwd)
{
	char here[PATH_MAX];
	if (!f->ready || f->inherited)
		return 0;
	if (!cwd)
		cwd = getcwd(here, sizeof here) ? here : "/";
	return cf_tree_ns_prepare(&f->ns, &f->pol, &o->allow_write_protected, o->write_protect,
				    cwd);
}

/* Neither the namespace nor a supervisor named by the environment (a
 * static harness that passes its shell a few variables: Codex's inherit =
 * "core"): a supervisor among this process's ancestors that holds one,
 * which then serves this fence too. */
static void join_above(struct cf_fence *f)
{
	char names[4][CF_IPC_ADDR_MAX];
	size_t n = cf_ipc_supervisors_above(names, 4);
	for (size_t i = 0; i < n; i++) {
		struct cf_ipc sup = {0};
		if (cf_ipc_set_addr(&sup, names[i]) || cf_shared_ns_recover(&f->join, &sup))
			continue;
		(void)cf_ipc_set_addr(&f->ipc, names[i]);
		return;
	}
}

void cf_fence_protect_join(struct cf_fence *f, const char *value)
{
	char buf[600];
	/* Moved to FD_CLOEXEC whatever the plan: the command never gets them. */
	cf_shared_ns_adopt(&f->join, value, f->ns.write_protect, buf, sizeof buf);
	/* Not there: a supervisor given by the environment (a harness's, not
	 * one of ours yet) holds them when its harness made them. */
	if ((!value || f->join.made) && f->join.user_fd < 0 && f->ns.planned && !f->inherited &&
	    f->ipc.addr[0])
		(void)cf_shared_ns_recover(&f->join, &f->ipc);
	else if (!value && f->ns.planned && !f->inherited && !f->ipc.addr[0])
		join_above(f);
	f->joining = f->join.user_fd >= 0 && f->join.mnt_fd >= 0;
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

int cf_fence_protect_probe(struct cf_fence *f, char *why, size_t n)
{
	if (!f->ns.planned || f->inherited)
		return -ENOENT;
	struct {
		int rc;
		size_t held;
		char why[512];
	} r = {0};
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -EAGAIN;
	}
	if (pid == 0) {
		close(p[0]);
		f->ns.dry = true;
		r.rc = cf_tree_ns_enter(&f->ns);
		r.held = f->ns.held;
		if (r.rc)
			cf_tree_ns_words(&f->ns, r.rc, r.why, sizeof r.why);
		(void)!write(p[1], &r, sizeof r);
		_exit(0);
	}
	close(p[1]);
	ssize_t got = read(p[0], &r, sizeof r);
	close(p[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof r) {
		/* Killed before it answered (a policy that kills a process
		 * making a namespace): what it would have found is not known,
		 * and is not said to be held. */
		if (WIFSIGNALED(st))
			snprintf(f->ns.off_why, sizeof f->ns.off_why,
				 "the child that tries the namespace was killed by signal %d (%s) "
				 "before it answered",
				 WTERMSIG(st), strsignal(WTERMSIG(st)));
		else
			snprintf(f->ns.off_why, sizeof f->ns.off_why,
				 "the child that tries the namespace ended before it answered");
		snprintf(why, n, "%s", f->ns.off_why);
		return -EIO;
	}
	f->ns.held = r.held;
	if (r.rc)
		snprintf(f->ns.off_why, sizeof f->ns.off_why, "%s", r.why);
	snprintf(why, n, "%s", r.why);
	return r.rc;
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
