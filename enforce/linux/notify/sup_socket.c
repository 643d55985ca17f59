/* The supervisor's socket judgement: see sup_socket.h.
 *
 * A connect is never continued (SECCOMP_USER_NOTIF_FLAG_CONTINUE): the
 * kernel would read the caller's address again, after a thread of the
 * caller could have rewritten it. It is made here, on the caller's own
 * socket (pidfd_getfd), with the copy that was judged. Only bind() is
 * continued: it is recorded, and the record allows nothing by itself. */
#include "sup_socket.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "sup_caller.h"
#include "sup_dgram.h"
#include "sup_serve.h"
#include "sup_prof.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

#define RECORD_UNBOUND_NS 2000000000LL

/* The socket INO with COOKIE, by an exact UNIX_DIAG lookup: 1 and what it is
 * bound to in R, 0 when it is gone, or -errno. Under sup->lock.
 *
 * One netlink socket serves every lookup (a Unix connect makes two):
 * making and closing one cost about 5.7 us of CPU each time. The kernel
 * answers a request within its sendto(), one message, with the request's
 * sequence number; a message with another number (left by a lookup that
 * failed half-way) is dropped, and a socket that failed is closed, to be
 * made again by the next lookup. */
static int diag_lookup(struct sup *sup, struct record *r)
{
	/* A socket of the fenced tree's network namespace is looked up there
	 * (sup_dgram.h), with the helper's socket, which stays. */
	int s = r->fence_ns ? cf_sup_dgram_diag(sup) : sup->diag_fd;
	if (r->fence_ns && s < 0)
		return 0;
	if (s < 0 &&
	    (s = sup->diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) < 0)
		return -errno;
	uint32_t seq = ++sup->diag_seq;
	struct {
		struct nlmsghdr h;
		struct unix_diag_req q;
	} req;
	memset(&req, 0, sizeof req);
	req.h.nlmsg_len = sizeof req;
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = seq;
	req.q.sdiag_family = AF_UNIX;
	req.q.udiag_states = ~0U;
	req.q.udiag_ino = r->ino;
	req.q.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS;
	req.q.udiag_cookie[0] = (uint32_t)r->cookie;
	req.q.udiag_cookie[1] = (uint32_t)(r->cookie >> 32);
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
	long buf[2048];
	ssize_t n;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	if (sendto(s, &req, sizeof req, 0, (struct sockaddr *)&nl, sizeof nl) < 0)
		goto failed;
	for (;;) {
		n = recv(s, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto failed; /* EAGAIN too: no answer came within the sendto() */
		if (NLMSG_OK(h, (size_t)n) && h->nlmsg_seq == seq)
			break;
	}
	if (h->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *err = NLMSG_DATA(h);
		return err->error == -ENOENT ? 0 : (err->error ? err->error : -EIO);
	}
	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return -EIO;
	struct unix_diag_msg *m = NLMSG_DATA(h);
	if (m->udiag_ino != r->ino)
		return -EIO;
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
	r->bound = 0;
	for (struct nlattr *a = (struct nlattr *)(m + 1); len >= (int)sizeof *a && a->nla_len >= sizeof *a &&
							  a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len), a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
		void *d = (char *)a + NLA_HDRLEN;
		size_t dl = a->nla_len - NLA_HDRLEN;
		if (a->nla_type == UNIX_DIAG_VFS && dl >= sizeof(struct unix_diag_vfs)) {
			struct unix_diag_vfs *v = d;
			/* The kernel's dev_t: major << 20 | minor. */
			r->dev = makedev(v->udiag_vfs_dev >> 20, v->udiag_vfs_dev & 0xfffff);
			r->vino = v->udiag_vfs_ino;
			r->bound = 1;
		} else if (a->nla_type == UNIX_DIAG_NAME && dl > 0 && dl <= sizeof r->name.b &&
			   ((char *)d)[0] == '\0' && r->bound != 1) {
			memcpy(r->name.b, d, dl);
			r->name.len = dl;
			r->bound = 2;
		}
	}
	return 1;
failed:;
	int e = -errno;
	if (!r->fence_ns) {
		close(s);
		sup->diag_fd = -1;
	}
	return e;
}

static void record_drop(struct sup *sup, size_t i)
{
	sup->rec[i] = sup->rec[--sup->nrec];
}

/* Whether a live socket bound inside is bound to the file (DEV, INO), or to
 * the abstract name NAME. Each candidate is looked up again before it counts:
 * a cached match of a socket that has gone could be a new file with a reused
 * inode number. Under sup->lock. */
static bool bound_inside(struct sup *sup, const struct stat *file, const struct name *name)
{
	long long now = cf_sup_now_ns();
	for (size_t i = 0; i < sup->nrec;) {
		struct record *r = &sup->rec[i];
		if (r->bound == 0) {
			int k = diag_lookup(sup, r);
			if (k == 0 || (k > 0 && r->bound == 0 && now - r->since > RECORD_UNBOUND_NS)) {
				record_drop(sup, i); /* gone, or its bind failed: a new bind records it again */
				continue;
			}
		}
		bool match = file ? r->bound == 1 && r->dev == file->st_dev && r->vino == file->st_ino
				  : r->bound == 2 && r->name.len == name->len &&
					    memcmp(r->name.b, name->b, name->len) == 0;
		if (match) {
			struct record again = *r;
			int k = diag_lookup(sup, &again);
			if (k > 0 && again.bound == r->bound) {
				*r = again;
				return true;
			}
			if (k == 0) {
				record_drop(sup, i);
				continue;
			}
		}
		i++;
	}
	return false;
}

static void shown_name(const struct name *n, char *out, size_t cap)
{
	size_t k = 0;
	out[k++] = '@';
	for (size_t i = 1; i < n->len && k + 1 < cap; i++)
		out[k++] = n->b[i] ? n->b[i] : '@';
	out[k] = '\0';
}

/* Judge a copied AF_UNIX address and connect SOCK on its behalf. The result
 * of the call, as the caller's connect() would return it. */
static long connect_unix(struct job *j)
{
	const struct sockaddr_un *sa = (const struct sockaddr_un *)&j->sa;
	const struct policy *pol = j->c.pol;
	struct sup *sup = j->c.sup;
	size_t plen = j->len - offsetof(struct sockaddr_un, sun_path);
	char shown[PATH_MAX + 8];
	bool ok = false;
	if (j->len <= offsetof(struct sockaddr_un, sun_path) || j->len > sizeof(struct sockaddr_un))
		return connect(j->sock, (const struct sockaddr *)sa, j->len) < 0 ? -errno : 0;
	if (sa->sun_path[0] == '\0') {
		struct name n = {.len = plen};
		memcpy(n.b, sa->sun_path, plen);
		for (size_t i = 0; i < pol->nsa && !ok; i++)
			ok = pol->sa[i].len == n.len && memcmp(pol->sa[i].b, n.b, n.len) == 0;
		/* A socket of the fenced tree's network namespace reaches only
		 * the names the tree bound there (sup_dgram.h). */
		if (!ok)
			ok = cf_sup_dgram_inside(sup, j->sock);
		if (!ok) {
			pthread_mutex_lock(&sup->lock);
			ok = bound_inside(sup, NULL, &n);
			pthread_mutex_unlock(&sup->lock);
		}
		if (!ok) {
			shown_name(&n, shown, sizeof shown);
			cf_sup_log_denial(&j->c, "ipc_denied", NULL, "socket", shown, NULL);
			return -EACCES;
		}
		if (!cf_sup_same_creds(&j->c)) {
			shown_name(&n, shown, sizeof shown);
			cf_sup_log_denial(&j->c, "ipc_denied", NULL, "socket", shown, "credentials");
			return -EACCES;
		}
		return connect(j->sock, (const struct sockaddr *)sa, j->len) < 0 ? -errno : 0;
	}
	/* The kernel reads the path up to its first NUL or the end of the address. */
	char path[sizeof sa->sun_path + 1];
	memcpy(path, sa->sun_path, plen);
	path[plen] = '\0';
	struct stat st;
	CF_PROF_MARK();
	int p = cf_sup_pin(&j->c, AT_FDCWD, path, true, false);
	if (p < 0)
		return p;
	CF_PROF(unix_pin);
	if (fstat(p, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		close(p);
		return -ECONNREFUSED;
	}
	CF_PROF(unix_fstat);
	for (size_t i = 0; i < pol->nsp && !ok; i++)
		ok = pol->spid[i].st_ino != 0 && pol->spid[i].st_dev == st.st_dev &&
		     pol->spid[i].st_ino == st.st_ino;
	CF_PROF(unix_policy);
	if (!ok) {
		pthread_mutex_lock(&sup->lock);
		ok = bound_inside(sup, &st, NULL);
		pthread_mutex_unlock(&sup->lock);
	}
	CF_PROF(unix_bound);
	bool same = ok && cf_sup_same_creds(&j->c);
	CF_PROF(unix_creds);
	if (!ok || !same) {
		char where[PATH_MAX], link[64];
		snprintf(link, sizeof link, "/proc/self/fd/%d", p);
		ssize_t n = readlink(link, where, sizeof where - 1);
		where[n > 0 ? n : 0] = '\0';
		cf_sup_log_denial(&j->c, "ipc_denied", NULL, "socket", n > 0 ? where : path,
			   ok ? "credentials" : NULL);
		close(p);
		return -EACCES;
	}
	/* Connect to the pinned file, never to the path again. */
	struct sockaddr_un to = {.sun_family = AF_UNIX};
	snprintf(to.sun_path, sizeof to.sun_path, "/proc/self/fd/%d", p);
	long r = connect(j->sock, (const struct sockaddr *)&to, sizeof to) < 0 ? -errno : 0;
	close(p);
	CF_PROF(connect);
	return r;
}

long cf_sup_connect_judged(struct job *j)
{
	if (j->len >= sizeof(sa_family_t) && j->sa.ss_family == AF_UNIX)
		return connect_unix(j);
	/* Any other family is connected here too, with the copy: continued, a
	 * thread of the caller could rewrite it to AF_UNIX first. */
	CF_PROF_MARK();
	long r = connect(j->sock, (const struct sockaddr *)&j->sa, j->len) < 0 ? -errno : 0;
	CF_PROF(connect);
	return r;
}

void cf_sup_handle_connect(struct listener *l, struct caller *c, const struct seccomp_notif *n)
{
	struct job *j = calloc(1, sizeof *j);
	long r;
	if (!j) {
		cf_sup_respond(c->lfd, c->id, -ENOMEM, false);
		cf_sup_caller_close(c);
		return;
	}
	struct sup *sup = c->sup;
	j->c = *c;
	j->l = l;
	j->sock = -1;
	uint64_t len = n->data.args[2] & 0xffffffffU; /* socklen_t */
	if (len > sizeof j->sa) {
		r = -EINVAL; /* as the kernel's move_addr_to_kernel() */
		goto done;
	}
	j->len = (socklen_t)len;
	CF_PROF(dispatch);
	if ((r = cf_sup_peek(c, n->data.args[1], &j->sa, len)) < 0)
		goto done;
	CF_PROF(peek);
	if ((r = cf_sup_take_fd(c, (int)n->data.args[0])) < 0)
		goto done;
	CF_PROF(take_fd);
	j->sock = (int)r;
	if (!cf_sup_valid(c)) {
		r = -ENOENT;
		goto done;
	}
	CF_PROF(valid);
	int fl = fcntl(j->sock, F_GETFL);
	cf_sup_listener_get(sup, l);
	CF_PROF(fcntl);
	/* A non-blocking socket can not wait on its peer; a blocking one is
	 * connected here when another receiver serves the listener meanwhile,
	 * else by a worker. */
	if ((fl >= 0 && (fl & O_NONBLOCK)) || cf_sup_may_wait_here(sup, l)) {
		cf_sup_job_done(j, cf_sup_connect_judged(j));
		return;
	}
#ifdef CF_SUP_PROF
	j->t = cf_prof_now();
#endif
	cf_sup_enqueue(sup, j);
	CF_PROF(enqueue);
	return;
done:
	cf_sup_listener_get(sup, l);
	cf_sup_job_done(j, r);
}

/* Record an AF_UNIX socket a fenced process binds, then let the bind go on:
 * Landlock decides where a socket file may be created, and the record allows
 * nothing by itself: a connect is allowed only when the socket it would reach
 * is this very socket (its inode and cookie), alive. */
void cf_sup_handle_bind(struct caller *c, const struct seccomp_notif *n)
{
	int s = cf_sup_take_fd(c, (int)n->data.args[0]);
	int dom = 0;
	socklen_t dl = sizeof dom;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	struct sup *sup = c->sup;
	struct stat st;
	uint64_t cookie = 0;
	socklen_t cl = sizeof cookie;
	if (s >= 0 && getsockopt(s, SOL_SOCKET, SO_DOMAIN, &dom, &dl) == 0 && dom == AF_UNIX &&
	    getsockname(s, (struct sockaddr *)&ss, &sl) == 0 && sl <= sizeof(sa_family_t) &&
	    getsockopt(s, SOL_SOCKET, SO_COOKIE, &cookie, &cl) == 0 && fstat(s, &st) == 0 &&
	    cf_sup_valid(c)) {
		pthread_mutex_lock(&sup->lock);
		bool known = false;
		for (size_t i = 0; i < sup->nrec && !known; i++)
			known = sup->rec[i].cookie == cookie;
		if (!known && sup->nrec == sup->caprec) {
			size_t cap = sup->caprec ? 2 * sup->caprec : 64;
			struct record *nr = realloc(sup->rec, cap * sizeof *nr);
			if (nr) {
				sup->rec = nr;
				sup->caprec = cap;
			}
		}
		if (!known && sup->nrec < sup->caprec)
			sup->rec[sup->nrec++] = (struct record){.ino = (uint32_t)st.st_ino, .cookie = cookie,
							  .since = cf_sup_now_ns(),
							  .fence_ns = cf_sup_dgram_inside(sup, s)};
		pthread_mutex_unlock(&sup->lock);
	}
	cf_sup_close(s);
	cf_sup_respond(c->lfd, c->id, 0, true);
	cf_sup_caller_close(c);
}
