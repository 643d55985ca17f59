/* The supervisor's serving: see sup_serve.h.
 *
 * Threads: the main thread polls the listening socket, the keeper's pidfd, the
 * clients handing over their listener, and every listener.
 *
 * Since Linux 6.6 (sup_handover.c) each listener has receiver threads of its
 * own, waiting in its RECV: the trapped thread wakes one of them on its own
 * CPU, and that thread decides the call and answers it, a connect included,
 * with no hand-over to another thread (a wake-up of another thread cost
 * about half of a loopback connect's round trip; issue 22). A receiver that
 * is about to connect a blocking socket, which may wait for its peer (a full
 * backlog, a remote host), first makes sure that another receiver waits, so
 * that the listener's other calls are still served: a listener that is used
 * keeps two, one deciding and one waiting, and one that comes back and finds
 * two others waiting ends. (The kernel wakes every waiting receiver for a
 * call and one of them gets it: in a bare round trip, a second waiting one
 * cost 2 to 5 us; the hand-over it replaces cost 25 to 60 us.) The main
 * thread then only watches the listener for its end.
 *
 * Before 6.6 (and with the test switch CF_TEST_NO_RECEIVERS=1) the main
 * thread receives each notification and decides metadata calls and binds
 * itself (they do not wait on another process); a connect() on a blocking
 * socket goes to a pool of worker threads, which grows on demand: the main
 * thread never waits on a fenced process. */
#include "sup_serve.h"

#include <limits.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "protected_match.h"
#include "sup_caller.h"
#include "sup_denied.h"
#include "sup_dgram.h"
#include "sup_handover.h"
#include "sup_meta.h"
#include "sup_socket.h"
#include "supervisor_pty.h"
#include "sup_prof.h"

#ifdef CF_SUP_PROF
_Atomic long long cf_prof_ns[CF_PROF_N], cf_prof_n[CF_PROF_N];
_Thread_local long long cf_prof_last;
_Atomic int cf_prof_h[CF_PROF_N][CF_PROF_BUCKETS];
/* The Q-quantile of STEP's times, in us, from its histogram. */
static double cf_prof_q(int step, double q)
{
	long long want = (long long)(q * (double)cf_prof_n[step]), seen = 0;
	for (int b = 0; b < CF_PROF_BUCKETS; b++)
		if ((seen += cf_prof_h[step][b]) > want)
			return b / 10.0;
	return CF_PROF_BUCKETS / 10.0;
}
void cf_prof_dump(void)
{
	static const char *names[] = {
#define CF_PROF_NAME(n) #n,
		CF_PROF_STEPS(CF_PROF_NAME)};
	FILE *f = fopen("/tmp/cf-prof.txt", "w");
	if (!f)
		return;
	for (int i = 0; i < CF_PROF_N; i++)
		if (cf_prof_n[i])
			fprintf(f, "cf-prof %-14s %8lld calls median %7.1f us  p10 %7.1f  p90 %7.1f  mean %7.2f\n",
				names[i], (long long)cf_prof_n[i], cf_prof_q(i, 0.5), cf_prof_q(i, 0.1),
				cf_prof_q(i, 0.9), (double)cf_prof_ns[i] / (double)cf_prof_n[i] / 1000.0);
	fclose(f);
}
#endif

#if defined(__x86_64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_AARCH64
#else
#define AUDIT_ARCH_NATIVE 0 /* no filter there (ipc.c): nothing arrives */
#endif

#define WORKERS_MAX 64
#define RECEIVERS_MAX 256
#define CLIENT_DEADLINE_NS (CF_IPC_ANSWER_TIMEOUT * 1000000000LL)

void cf_sup_job_done(struct job *j, long result)
{
	CF_PROF_MARK();
	if (cf_sup_valid(&j->c))
		cf_sup_respond(j->c.lfd, j->c.id, result, false);
	CF_PROF(respond);
	cf_sup_close(j->sock);
	cf_sup_caller_close(&j->c);
	cf_sup_listener_put(j->c.sup, j->l);
	free(j);
	CF_PROF(close_free);
#ifdef CF_SUP_PROF
	static _Atomic long jobs;
	if (++jobs % 5000 == 0)
		cf_prof_dump();
#endif
}

static void *worker(void *arg)
{
	struct sup *sup = arg;
	pthread_mutex_lock(&sup->lock);
	for (;;) {
		while (!sup->head) {
			sup->idle++;
			pthread_cond_wait(&sup->work, &sup->lock);
			sup->idle--;
		}
		struct job *j = sup->head;
		sup->head = j->next;
		if (!sup->head)
			sup->tail = NULL;
		pthread_mutex_unlock(&sup->lock);
#ifdef CF_SUP_PROF
		CF_PROF_FROM(worker_wake, j->t);
#endif
		cf_sup_job_done(j, cf_sup_connect_judged(j));
		pthread_mutex_lock(&sup->lock);
	}
	return NULL;
}

void cf_sup_enqueue(struct sup *sup, struct job *j)
{
	pthread_mutex_lock(&sup->lock);
	j->next = NULL;
	if (sup->tail)
		sup->tail->next = j;
	else
		sup->head = j;
	sup->tail = j;
	if (sup->idle == 0 && sup->workers < WORKERS_MAX) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&a, 256 * 1024);
		if (pthread_create(&t, &a, worker, sup) == 0)
			sup->workers++;
		pthread_attr_destroy(&a);
	}
	pthread_cond_signal(&sup->work);
	pthread_mutex_unlock(&sup->lock);
}

/* ---- a notification ---- */

/* A listener's references are atomic, not under sup->lock: a connect takes
 * and drops two on the main thread and one on a worker, and a lock the main
 * thread and a worker both take each time cost futex calls when they met
 * (strace -f -c: 5 futex calls a Unix connect). */
void cf_sup_listener_get(struct sup *sup, struct listener *l)
{
	(void)sup;
	atomic_fetch_add_explicit(&l->refs, 1, memory_order_relaxed);
}

void cf_sup_listener_put(struct sup *sup, struct listener *l)
{
	if (atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) != 1)
		return;
	pthread_mutex_lock(&sup->lock);
	sup->listeners--;
	pthread_mutex_unlock(&sup->lock);
	close(l->fd);
	cf_sup_policy_free(&l->pol);
	free(l);
}

union notif {
	struct seccomp_notif n;
	char b[512];
};

/* Decide one notification of L and answer it. */
static void decide(struct sup *sup, struct listener *l, union notif u)
{
	struct caller c = {.sup = sup, .lfd = l->fd, .id = u.n.id, .tid = (pid_t)u.n.pid, .pidfd = -1, .pol = &l->pol};
	long r = cf_sup_caller_open(&c);
	CF_PROF(caller_open);
	if (r < 0) {
		cf_sup_respond(l->fd, c.id, r == -ENOENT ? -ESRCH : -EPERM, false);
		cf_sup_caller_close(&c);
		return;
	}
	if (u.n.data.arch != AUDIT_ARCH_NATIVE) {
		cf_sup_respond(l->fd, c.id, -EPERM, false);
		cf_sup_caller_close(&c);
		return;
	}
	if (cf_sup_is_denial(&u.n.data)) { /* a denial's report (sup_denied.h) */
		struct cf_denial_report rep;
		char prog[PATH_MAX];
		long said = -EPERM;
		if (cf_sup_peek(&c, u.n.data.args[2], &rep, sizeof rep) == 0 && cf_sup_valid(&c)) {
			cf_sup_program_of(&c, prog, sizeof prog); /* reads the thread group too */
			struct cf_protect_scope scope = {
				.writable = l->pol.w, .n_writable = l->pol.nw,
				.home = l->pol.home, .account_home = l->pol.account_home,
				.cwd = l->pol.cwd, .lifted = l->pol.lift, .n_lifted = l->pol.nlift};
			said = cf_sup_denied(sup->log_fd, c.tgid, prog, &rep, l->pol.d, l->pol.nd,
					     &scope);
		}
		cf_sup_respond(l->fd, c.id, said, false);
		cf_sup_caller_close(&c);
		return;
	}
	if (cf_pty_is_peer_call(&u.n.data)) {
		r = cf_sup_same_creds(&c) ? cf_pty_give_peer(l->fd, c.id, c.pidfd, &u.n.data) : -EACCES;
		if (r < 0)
			cf_sup_respond(l->fd, c.id, r, false);
		cf_sup_caller_close(&c);
		return;
	}
	if (cf_sup_is_dgram(&u.n.data)) {
		cf_sup_handle_dgram(&c, &u.n);
		return;
	}
	switch (u.n.data.nr) {
	case SYS_connect:
		cf_sup_listener_get(sup, l);
		cf_sup_handle_connect(l, &c, &u.n);
		cf_sup_listener_put(sup, l);
		return;
	case SYS_bind:
		cf_sup_handle_bind(&c, &u.n);
		return;
	default:
		r = cf_sup_handle_meta(&c, &u.n);
		if (cf_sup_valid(&c))
			cf_sup_respond(l->fd, c.id, r, false);
		cf_sup_caller_close(&c);
	}
}

/* Receive and decide one notification of L (the main thread's way). */
static void notification(struct sup *sup, struct listener *l)
{
	union notif u;
	memset(&u, 0, sizeof u);
	CF_PROF_MARK();
	if (ioctl(l->fd, SECCOMP_IOCTL_NOTIF_RECV, &u.n) < 0)
		return; /* ENOENT: the caller went away first */
	CF_PROF(recv);
	decide(sup, l, u);
}

/* ---- the receiver threads (Linux 6.6 and later) ---- */

struct receiver {
	struct sup *sup;
	struct listener *l;
};

/* Whether every process of L's filter has exited. */
static bool listener_ended(const struct listener *l)
{
	struct pollfd p = {.fd = l->fd, .events = POLLIN};
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

static void *receiver(void *arg)
{
	struct receiver rc = *(struct receiver *)arg;
	struct listener *l = rc.l;
	free(arg);
	for (;;) {
		union notif u;
		memset(&u, 0, sizeof u);
		atomic_fetch_add_explicit(&l->idle, 1, memory_order_acq_rel);
		CF_PROF_MARK();
		int r = ioctl(l->fd, SECCOMP_IOCTL_NOTIF_RECV, &u.n) < 0 ? -errno : 0;
		atomic_fetch_sub_explicit(&l->idle, 1, memory_order_acq_rel);
		if (r == -EINTR)
			continue;
		if (r == -ENOENT && !listener_ended(l))
			continue; /* the caller went away first */
		if (r < 0)
			break; /* ENOENT: every process of the filter has exited */
		CF_PROF(recv);
		decide(rc.sup, l, u);
		/* Two others wait (one took over while this one connected):
		 * this one is not needed. */
		if (atomic_load_explicit(&l->idle, memory_order_acquire) > 1)
			break;
	}
	pthread_mutex_lock(&rc.sup->lock);
	rc.sup->receivers--;
	pthread_mutex_unlock(&rc.sup->lock);
	cf_sup_listener_put(rc.sup, l);
	return NULL;
}

/* Start a receiver thread for L; 0 or -errno. */
static int receiver_start(struct sup *sup, struct listener *l)
{
	struct receiver *rc = malloc(sizeof *rc);
	if (!rc)
		return -ENOMEM;
	*rc = (struct receiver){sup, l};
	pthread_mutex_lock(&sup->lock);
	int r = -EAGAIN;
	if (sup->receivers < RECEIVERS_MAX) {
		pthread_t t;
		pthread_attr_t a;
		cf_sup_listener_get(sup, l); /* the thread's */
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&a, 256 * 1024);
		r = -pthread_create(&t, &a, receiver, rc);
		pthread_attr_destroy(&a);
		if (r == 0)
			sup->receivers++;
		else
			atomic_fetch_sub_explicit(&l->refs, 1, memory_order_relaxed); /* never the last: ours */
	}
	pthread_mutex_unlock(&sup->lock);
	if (r < 0)
		free(rc);
	return r;
}

bool cf_sup_may_wait_here(struct sup *sup, struct listener *l)
{
	if (!l->receivers)
		return false; /* the main thread: never */
	return atomic_load_explicit(&l->idle, memory_order_acquire) > 0 || receiver_start(sup, l) == 0;
}

/* ---- the loop ---- */

enum kind { K_LISTEN, K_KEEPER, K_CLIENT, K_NOTIF, K_CHILD, K_WAITER };

/* Above mode: tell the waiter how the keeper (our child) ended. */
static void report_keeper(struct sup *sup, int keeper)
{
	siginfo_t si = {0};
	if (sup->status_fd < 0)
		return;
	int msg[2] = {-1, 0};
	if (waitid((idtype_t)P_PIDFD, (id_t)keeper, &si, WEXITED) == 0) {
		msg[0] = si.si_code; /* CLD_EXITED, CLD_KILLED, CLD_DUMPED */
		msg[1] = si.si_status;
	}
	(void)!write(sup->status_fd, msg, sizeof msg);
	close(sup->status_fd);
	sup->status_fd = -1;
	/* The harness has ended: the user's terminal is not ours to hold
	 * (a pipe's reader waits for its last writer). */
	if (sup->user_err >= 0)
		close(sup->user_err);
	sup->user_err = -1;
}

/* Above mode: we are a child subreaper; reap the orphans that came to us,
 * never the keeper before its end is reported. */
static void reap(struct sup *sup, int sfd, pid_t keeper_pid)
{
	struct signalfd_siginfo ssi;
	while (read(sfd, &ssi, sizeof ssi) == sizeof ssi)
		;
	for (;;) {
		siginfo_t si = {0};
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
			return;
		if (si.si_pid == keeper_pid && sup->status_fd >= 0)
			return; /* the keeper's slot collects it */
		(void)waitpid(si.si_pid, NULL, WNOHANG);
	}
}

struct slot {
	enum kind kind;
	struct listener *l;
	long long since;
};

struct table {
	struct pollfd *p;
	struct slot *s;
	size_t n, cap;
};

static int add(struct table *t, int fd, enum kind kind, struct listener *l)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct pollfd *p = realloc(t->p, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		t->p = p;
		struct slot *s = realloc(t->s, cap * sizeof *s);
		if (!s)
			return -ENOMEM;
		t->s = s;
		t->cap = cap;
	}
	t->p[t->n] = (struct pollfd){.fd = fd, .events = POLLIN};
	t->s[t->n] = (struct slot){kind, l, cf_sup_now_ns()};
	t->n++;
	return 0;
}

static void accept_client(struct sup *sup, struct table *t, int ls)
{
	int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c < 0)
		return;
	struct ucred cr;
	socklen_t l = sizeof cr;
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0 || cr.uid != sup->uid ||
	    add(t, c, K_CLIENT, NULL) < 0)
		close(c);
}

_Noreturn void cf_sup_serve(struct sup *sup, int ls, int keeper, int sfd, pid_t keeper_pid, int waiter)
{
	struct table t = {0};
	bool keeper_gone = false;
	sup->keeper_pid = keeper_pid;
	if (add(&t, ls, K_LISTEN, NULL) < 0 || add(&t, keeper, K_KEEPER, NULL) < 0 ||
	    (sfd >= 0 && add(&t, sfd, K_CHILD, NULL) < 0) ||
	    (waiter >= 0 && add(&t, waiter, K_WAITER, NULL) < 0))
		_exit(1);
	for (;;) {
		size_t clients = 0;
		for (size_t i = 0; i < t.n; i++)
			clients += t.s[i].kind == K_CLIENT;
		pthread_mutex_lock(&sup->lock);
		int live = sup->listeners;
		pthread_mutex_unlock(&sup->lock);
		if (keeper_gone && live == 0 && clients == 0)
			break;
		int k = poll(t.p, t.n, clients || keeper_gone ? 1000 : -1);
		if (k < 0 && errno != EINTR)
			_exit(1);
		long long now = cf_sup_now_ns();
		size_t n = t.n; /* slots added by this round wait for the next */
		for (size_t i = 0; i < n; i++) {
			short ev = t.p[i].revents;
			int fd = t.p[i].fd;
			struct slot *s = &t.s[i];
			if (s->kind == K_CLIENT && !ev && now - s->since > CLIENT_DEADLINE_NS) {
				close(fd);
				t.p[i].fd = -1;
				continue;
			}
			if (!ev)
				continue;
			if (s->kind == K_LISTEN) {
				accept_client(sup, &t, fd);
			} else if (s->kind == K_CHILD) {
				reap(sup, fd, keeper_pid);
			} else if (s->kind == K_WAITER) {
				/* The waiter died before the command (SIGKILL, which it
				 * can not pass on): whoever killed it meant the command. */
				if (!keeper_gone)
					kill(keeper_pid, SIGKILL);
				close(fd);
				t.p[i].fd = -1;
			} else if (s->kind == K_KEEPER) {
				report_keeper(sup, fd);
				keeper_gone = true;
				close(fd);
				t.p[i].fd = -1;
			} else if (s->kind == K_CLIENT) {
				struct listener *l;
				if (cf_sup_client_in(sup, fd, &l) == 0 && !(ev & (POLLHUP | POLLERR)))
					continue;
				close(fd);
				t.p[i].fd = -1;
				if (l && add(&t, l->fd, K_NOTIF, l) < 0) {
					cf_sup_listener_put(sup, l);
				} else if (l && l->receivers) {
					/* Its receivers serve it; this thread
					 * watches only for its end (POLLHUP). */
					if (receiver_start(sup, l) == 0)
						t.p[t.n - 1].events = 0;
					else
						l->receivers = false;
				}
			} else if (ev & POLLIN) {
				notification(sup, s->l);
			} else if (ev & (POLLHUP | POLLERR | POLLNVAL)) {
				/* Every process of that filter has exited. */
				t.p[i].fd = -1;
				cf_sup_listener_put(sup, s->l);
			}
		}
		size_t w = 0;
		for (size_t i = 0; i < t.n; i++)
			if (t.p[i].fd >= 0) {
				t.p[w] = t.p[i];
				t.s[w++] = t.s[i];
			}
		t.n = w;
	}
	_exit(0);
}
