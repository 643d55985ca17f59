/* The supervisor's side of a handover: see sup_handover.h. */
#include "sup_handover.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sup_denied.h"
#include "supervisor_wire.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS /* linux/seccomp.h of Linux 6.6 */
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS _IOW('!', 4, uint64_t)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

void cf_sup_policy_free(struct policy *p)
{
	for (size_t i = 0; i < p->nw; i++)
		free(p->w[i]);
	for (size_t i = 0; i < p->nsp; i++)
		free(p->sp[i]);
	for (size_t i = 0; i < p->nd; i++)
		free(p->d[i]);
	for (size_t i = 0; i < p->nlift; i++)
		free(p->lift[i]);
	free(p->lift);
	free(p->home);
	free(p->account_home);
	free(p->cwd);
	free(p->d);
	free(p->w);
	free(p->sp);
	free(p->spid);
	free(p->sa);
}

static bool name_in(const struct policy *p, const struct name *n)
{
	for (size_t i = 0; i < p->nsa; i++)
		if (p->sa[i].len == n->len && memcmp(p->sa[i].b, n->b, n->len) == 0)
			return true;
	return false;
}

/* The sockets the first fence allowed, each with the identity it had then.
 * That fence's blob comes from whoever started the tree (credfence run, the
 * harness at its start, self mode) before any fenced process of this
 * supervisor runs: a fenced program can later move the agent's socket aside
 * and put a link to tmux's in its place, or start a child whose environment
 * names another socket; neither widens what is allowed. A later fence may
 * only narrow: what it allows outside this first list is dropped.
 * Under sup->lock. */
static int pin_allowed(struct sup *sup, struct policy *p)
{
	if (!(p->spid = calloc(p->nsp + 1, sizeof *p->spid)))
		return -ENOMEM;
	if (!sup->first_set) {
		for (size_t i = 0; i < p->nsp; i++)
			if (stat(p->sp[i], &p->spid[i]) != 0 || !S_ISSOCK(p->spid[i].st_mode))
				memset(&p->spid[i], 0, sizeof p->spid[i]);
		struct policy *u = &sup->first;
		u->sp = calloc(p->nsp + 1, sizeof *u->sp);
		u->spid = calloc(p->nsp + 1, sizeof *u->spid);
		u->sa = calloc(p->nsa + 1, sizeof *u->sa);
		if (!u->sp || !u->spid || !u->sa)
			return -ENOMEM;
		for (size_t i = 0; i < p->nsp; i++) {
			if (!(u->sp[i] = strdup(p->sp[i])))
				return -ENOMEM;
			u->spid[i] = p->spid[i];
			u->nsp++;
		}
		memcpy(u->sa, p->sa, p->nsa * sizeof *p->sa);
		u->nsa = p->nsa;
		sup->first_set = true;
		return 0;
	}
	size_t k = 0;
	for (size_t i = 0; i < p->nsp; i++) {
		size_t j = 0;
		while (j < sup->first.nsp && strcmp(sup->first.sp[j], p->sp[i]) != 0)
			j++;
		if (j == sup->first.nsp) {
			free(p->sp[i]);
			continue;
		}
		p->sp[k] = p->sp[i];
		p->spid[k++] = sup->first.spid[j];
	}
	p->nsp = k;
	k = 0;
	for (size_t i = 0; i < p->nsa; i++)
		if (name_in(&sup->first, &p->sa[i]))
			p->sa[k++] = p->sa[i];
	p->nsa = k;
	return 0;
}

static int parse_blob(const char *b, size_t len, struct policy *p)
{
	memset(p, 0, sizeof *p);
	if (len < sizeof CF_IPC_MAGIC || memcmp(b, CF_IPC_MAGIC, sizeof CF_IPC_MAGIC) != 0)
		return -EINVAL;
	size_t at = sizeof CF_IPC_MAGIC, nrec = 0;
	for (size_t i = at; i < len; i++)
		nrec += b[i] == '\0';
	p->w = calloc(nrec + 1, sizeof *p->w);
	p->sp = calloc(nrec + 1, sizeof *p->sp);
	p->sa = calloc(nrec + 1, sizeof *p->sa);
	p->d = calloc(nrec + 1, sizeof *p->d);
	p->lift = calloc(nrec + 1, sizeof *p->lift);
	if (!p->w || !p->sp || !p->sa || !p->d || !p->lift)
		return -ENOMEM;
	while (at < len) {
		char kind = b[at++];
		const char *s = b + at;
		const char *z = memchr(s, '\0', len - at);
		if (!z)
			return -EINVAL;
		size_t n = (size_t)(z - s);
		at += n + 1;
		if (kind == 'w' && s[0] == '/') {
			if (!(p->w[p->nw++] = strdup(s)))
				return -ENOMEM;
		} else if (kind == 's' && s[0] == '/') {
			if (!(p->sp[p->nsp++] = strdup(s)))
				return -ENOMEM;
		} else if (kind == 's' && s[0] == '@' && n >= 2 && n <= sizeof p->sa[0].b) {
			struct name *a = &p->sa[p->nsa++];
			a->b[0] = '\0';
			memcpy(a->b + 1, s + 1, n - 1);
			a->len = n;
		} else if (kind == CF_IPC_REC_DENIED && strchr(s, '\t')) {
			if (!(p->d[p->nd++] = strdup(s)))
				return -ENOMEM;
		} else if (kind == CF_IPC_REC_LIFT && s[0] == '/') {
			if (!(p->lift[p->nlift++] = strdup(s)))
				return -ENOMEM;
		} else if (kind == CF_IPC_REC_HOME || kind == CF_IPC_REC_ACCOUNT_HOME ||
			   kind == CF_IPC_REC_CWD) {
			char **slot = kind == CF_IPC_REC_HOME	       ? &p->home
				      : kind == CF_IPC_REC_ACCOUNT_HOME ? &p->account_home
									: &p->cwd;
			if (s[0] != '/' || *slot)
				return -EINVAL;
			if (!(*slot = strdup(s)))
				return -ENOMEM;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

static bool is_listener(int fd)
{
	char p[64], l[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(p, l, sizeof l - 1);
	if (n < 0)
		return false;
	l[n] = '\0';
	return strcmp(l, "anon_inode:seccomp notify") == 0;
}

/* ---- the namespace of the harness's children, and the user's terminal ---- */

/* Whether FD is a namespace of TYPE (CLONE_NEWUSER, CLONE_NEWNS). */
static bool is_ns_of(int fd, int type)
{
	return ioctl(fd, NS_GET_NSTYPE) == type;
}

/* "cfnsg1": the keeper's, once; FDS (N) are closed unless taken. */
static int ns_give(struct sup *sup, int cfd, const struct cf_ns_wire *w, int *fds, int n)
{
	struct ucred cr;
	socklen_t l = sizeof cr;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0 || sup->keeper_pid <= 0 ||
	    cr.pid != sup->keeper_pid)
		return -EPERM;
	if (sup->ns_given)
		return -EEXIST;
	if (w->nfds < 2 || w->nfds > 3 || n != w->nfds || !is_ns_of(fds[0], CLONE_NEWUSER) ||
	    !is_ns_of(fds[1], CLONE_NEWNS))
		return -EINVAL;
	struct stat st;
	if (n == 3 && (fstat(fds[2], &st) || !S_ISSOCK(st.st_mode)))
		return -EINVAL;
	sup->ns = *w;
	for (int i = 0; i < n; i++) {
		sup->ns_fds[i] = fds[i];
		fds[i] = -1;
	}
	sup->ns_given = true;
	return 0;
}

/* Whether the caller on CFD is in the namespace already: every fenced
 * process that entered it is, and has no use for its descriptors (the user
 * namespace gives back every capability in it, which a child of the
 * harness takes back at once: cf_shared_ns_enter). A child that lost
 * them asks from the mount namespace of the harness's guard. */
static bool caller_inside(const struct sup *sup, int cfd)
{
	struct ucred cr;
	socklen_t l = sizeof cr;
	char path[64];
	struct stat st;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0 || cr.pid <= 0)
		return true;
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)cr.pid);
	if (stat(path, &st))
		return true; /* can not tell: nothing given */
	return (unsigned long long)st.st_ino == sup->ns.mnt_ino &&
	       (unsigned long long)st.st_dev == sup->ns.dev;
}

/* "cfnsq1": the descriptors, -ENOENT (none held) or -EALREADY (the caller
 * is inside, or can not be told from one that is). */
static void ns_answer(struct sup *sup, int cfd)
{
	struct cf_ns_wire w = {.rc = -ENOENT};
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * 3)];
	} cm;
	struct iovec iov = {&w, sizeof w};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	if (sup->ns_given && caller_inside(sup, cfd)) {
		w.rc = -EALREADY;
	} else if (sup->ns_given) {
		w = sup->ns;
		w.rc = 0;
		m.msg_control = cm.b;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)w.nfds);
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)w.nfds);
		memcpy(CMSG_DATA(h), sup->ns_fds, sizeof(int) * (size_t)w.nfds);
	}
	memcpy(w.magic, CF_NS_ASK_MAGIC, sizeof CF_NS_ASK_MAGIC);
	(void)!sendmsg(cfd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* At most this many refusals reach the user's terminal; the log has them all. */
#define SAY_MAX 20

/* S with every byte that is not printable ASCII as '?': a fenced process
 * names the program and may fill the reason, and the user's terminal must
 * not take its escape sequences. */
static void printable(char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			*s = '?';
}

/* "cfsay1": one line on the user's terminal. */
static int say(struct sup *sup, int cfd, struct cf_say_wire *w)
{
	struct ucred cr = {0};
	socklen_t l = sizeof cr;
	if (sup->user_err < 0)
		return -ENOENT;
	(void)getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &l);
	w->program[sizeof w->program - 1] = '\0';
	w->why[sizeof w->why - 1] = '\0';
	printable(w->program);
	printable(w->why);
	char line[sizeof w->program + sizeof w->why + 256];
	int k;
	if (sup->said < SAY_MAX)
		k = snprintf(line, sizeof line, "credfence: a command of the harness was refused: %s "
			     "(pid %d): %s. Nothing was run.\n", w->program, (int)cr.pid, w->why);
	else if (sup->said == SAY_MAX)
		k = snprintf(line, sizeof line, "credfence: more commands of the harness were "
			     "refused; --log FILE has each one (sandbox_status)\n");
	else
		return 0;
	sup->said++;
	if (k > 0)
		(void)!write(sup->user_err, line, (size_t)k < sizeof line ? (size_t)k : sizeof line - 1);
	return 0;
}

/* A client's message: a listener and its blob, or one of the messages
 * above. 1 done (answered or refused), 0 not there yet, and a new listener
 * in *OUT. */
int cf_sup_client_in(struct sup *sup, int cfd, struct listener **out)
{
	char *buf = sup->blob;
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * 4)];
	} cm;
	struct iovec iov = {buf, sizeof sup->blob};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			   .msg_controllen = sizeof cm.b};
	*out = NULL;
	ssize_t n = recvmsg(cfd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	int fds[4], nfd = 0, answer = 0;
	for (struct cmsghdr *h = n > 0 ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
			if (nfd < 4)
				fds[nfd++] = fd;
			else
				close(fd);
		}
	}
	int lfd = nfd ? fds[0] : -1;
	if (n > 0 && !(m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && (size_t)n >= 8 &&
	    (!memcmp(buf, CF_NS_GIVE_MAGIC, sizeof CF_NS_GIVE_MAGIC) ||
	     !memcmp(buf, CF_NS_ASK_MAGIC, sizeof CF_NS_ASK_MAGIC) ||
	     !memcmp(buf, CF_SAY_MAGIC, sizeof CF_SAY_MAGIC))) {
		if (!memcmp(buf, CF_NS_ASK_MAGIC, sizeof CF_NS_ASK_MAGIC)) {
			for (int i = 0; i < nfd; i++)
				close(fds[i]);
			ns_answer(sup, cfd);
			return 1;
		}
		if (!memcmp(buf, CF_SAY_MAGIC, sizeof CF_SAY_MAGIC))
			answer = (size_t)n == sizeof(struct cf_say_wire)
					 ? say(sup, cfd, (struct cf_say_wire *)(void *)buf)
					 : -EINVAL;
		else if ((size_t)n == sizeof(struct cf_ns_wire)) {
			struct cf_ns_wire w;
			memcpy(&w, buf, sizeof w);
			answer = ns_give(sup, cfd, &w, fds, nfd);
		} else
			answer = -EINVAL;
		for (int i = 0; i < nfd; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		(void)!send(cfd, &answer, sizeof answer, MSG_NOSIGNAL | MSG_DONTWAIT);
		return 1;
	}
	for (int i = 1; i < nfd; i++)
		close(fds[i]);
	if (n <= 0)
		answer = -ECONNRESET;
	else if (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		answer = -EMSGSIZE;
	else if (lfd < 0 || !is_listener(lfd))
		answer = -EBADF;
	struct listener *l = NULL;
	if (answer == 0) {
		l = calloc(1, sizeof *l);
		answer = l ? parse_blob(buf, (size_t)n, &l->pol) : -ENOMEM;
		if (answer == 0) {
			pthread_mutex_lock(&sup->lock);
			answer = pin_allowed(sup, &l->pol);
			pthread_mutex_unlock(&sup->lock);
		}
	}
	if (answer == 0) {
		/* Linux 6.6: the trapped thread wakes the supervisor, and the
		 * answer wakes it, on the waker's own CPU, so that a round trip
		 * is two switches on one CPU, not two cross-CPU wake-ups. The
		 * answer is the same; before 6.6 (EINVAL) it is only slower.
		 * Since the same release a thread waiting in RECV returns when
		 * the filter's last process has gone, which the listener's own
		 * receiver threads need (sup_serve.c); before it, the main
		 * thread serves the listener. */
		l->receivers = ioctl(lfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0;
		l->receivers = l->receivers && !sup->poll_only;
		l->fd = lfd;
		atomic_init(&l->refs, 1);
		atomic_init(&l->idle, 0);
		pthread_mutex_lock(&sup->lock);
		sup->listeners++;
		pthread_mutex_unlock(&sup->lock);
		*out = l;
	} else {
		if (l) {
			cf_sup_policy_free(&l->pol);
			free(l);
		}
		cf_sup_close(lfd);
	}
	if (n > 0)
		(void)!send(cfd, &answer, sizeof answer, MSG_NOSIGNAL | MSG_DONTWAIT);
	return 1;
}
