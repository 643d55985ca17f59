/* The fence on Linux, prepared in the parent (normal context: it
 * allocates, forks and uses the C library): the policy built and judged,
 * the Landlock ruleset and the stamps of what it was built from, the
 * supervisor started, the namespace of the fenced tree planned. A harness
 * does this once a generation of its fence (at its start, and when a
 * stamped directory changed), any other process once. What each launch
 * runs, in the harness and in the child, is fence.c. */
#include "fence_state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "event.h"
#include "paths.h"
#include "landlock/landlock.h"
#include "protected_match.h"
#include "notify/sup_denied.h"
#include "mountns/userns.h"

#ifndef CF_DATADIR
#define CF_DATADIR "/usr/local/share/credfence"
#endif

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
		cf_fence_refuse_rc(f, f->abi < 0 ? f->abi : 0, NULL);
		return 0;
	}
	if ((rc = cf_plan_prepare(&f->plan, &f->pol)))
		return rc;
	f->stamps = calloc(f->plan.n_anc ? f->plan.n_anc : 1, sizeof *f->stamps);
	if (!f->stamps)
		return -ENOMEM;
	rc = cf_ll_build(&f->plan, f->abi, scratch, sizeof scratch, &f->res, f->stamps);
	if (rc < 0) {
		cf_fence_refuse_rc(f, rc, &f->res);
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
		cf_fence_refuse_rc(f, rc, NULL);
	}
	return rc;
}

int cf_fence_probe(struct cf_fence *f)
{
	int probe = cf_ll_probe();
	int ipc = probe ? 0 : cf_ipc_probe();
	if (probe || ipc)
		cf_fence_refuse_rc(f, probe ? probe : cf_ipc_err(ipc), NULL);
	return probe ? probe : ipc;
}

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
