/* The supervisor's state (enforce/linux/notify/supervisor.c and its sup_*.c parts),
 * private to them: one struct sup per supervisor process, made as it starts
 * and passed to every part, and the records each part works on.
 *
 * Threads: the main thread serves (sup_serve.c); the worker threads of the
 * pool connect on a caller's behalf. What they share is under sup->lock. */
#ifndef CF_SUP_STATE_H
#define CF_SUP_STATE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "supervisor_wire.h"

/* An abstract socket name. */
struct name {
	size_t len; /* bytes of sun_path, from its leading NUL on */
	char b[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* What one fence allows (its blob, sup_handover.c). */
struct policy {
	char **w; /* writable locations */
	size_t nw;
	char **sp; /* allowed socket files */
	size_t nsp;
	struct stat *spid; /* each one's identity, pinned when the supervisor first heard of it
			      (st_ino 0: absent then, never matches) */
	struct name *sa; /* allowed abstract names */
	size_t nsa;
	char **d; /* secrets, "HOLDS\tPATH" (sup_denied.h) */
	size_t nd;
	/* The write protection's scope (sup_denied.h): home, account home and
	 * working directory (canonical, or NULL), lifted locations. */
	char *home, *account_home, *cwd;
	char **lift;
	size_t nlift;
};

/* A notification listener handed over by a fenced child, and its fence. */
struct listener {
	int fd;
	atomic_int refs; /* cf_sup_listener_get/put (sup_serve.c) */
	struct policy pol;
	/* Linux 6.6 and later (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP was set):
	 * the listener's own receiver threads wait in its RECV and decide
	 * each call where it arrived (sup_serve.c); IDLE of them are waiting. */
	bool receivers;
	atomic_int idle;
};

/* A socket bound by a fenced process: its identity (inode and cookie, which
 * no other socket can share while it lives), and once the bind is done, what
 * it is bound to. */
struct record {
	uint32_t ino;
	uint64_t cookie;
	long long since;
	bool fence_ns; /* made in the fenced tree's network namespace (sup_dgram.h) */
	int bound; /* 0 not yet, 1 a file (dev, vino), 2 an abstract name */
	dev_t dev;
	ino_t vino;
	struct name name;
};

struct sup;
struct sup_dgram;

/* The trapped thread of one notification. */
struct caller {
	struct sup *sup;
	int lfd;
	uint64_t id;
	pid_t tid, tgid;
	int pidfd;
	bool creds_read; /* tgid and creds read (sup_caller.c, caller_creds) */
	int creds_rc;
	char creds[1024];
	const struct policy *pol;
};

/* A connect handed to the worker pool. */
struct job {
	struct job *next;
	struct listener *l;
	struct caller c;
	int sock;
	struct sockaddr_storage sa;
	socklen_t len;
#ifdef CF_SUP_PROF
	long long t;
#endif
};

struct sup {
	int log_fd;
	char own_creds[1024];
	uid_t uid;
	pthread_mutex_t lock; /* records, the queue, the counters */
	pthread_cond_t work;
	struct record *rec;
	size_t nrec, caprec;
	int diag_fd; /* the UNIX_DIAG lookups' netlink socket, or -1 (sup_socket.c) */
	struct sup_dgram *dgram; /* the fenced tree's datagram sockets (sup_dgram.c), or NULL */
	uint32_t diag_seq;
	struct job *head, *tail;
	int workers, idle, listeners;
	int receivers; /* the listeners' receiver threads (sup_serve.c) */
	/* CF_TEST_NO_RECEIVERS=1 (a test switch): the main thread serves every
	 * listener, as before Linux 6.6, so that this way stays tested. */
	bool poll_only;
	/* Above mode (cf_supervisor_start_above): the waiter's pipe, to which
	 * the keeper's end is reported; -1 otherwise. */
	int status_fd;
	/* The sockets the first fence allowed (sup_handover.c, pin_allowed). */
	bool first_set;
	struct policy first;
	/* The process the supervisor started to go on as the caller (above
	 * mode; 0 otherwise): the only one whose namespace it takes. */
	pid_t keeper_pid;
	/* The mount namespace of the harness's children, given once by the
	 * keeper (supervisor_wire.h): NS_FDS[0..NS.nfds) while NS_GIVEN. */
	bool ns_given;
	struct cf_ns_wire ns;
	int ns_fds[3];
	/* The user's terminal: this process's stderr as it started (above
	 * mode), kept until the keeper ends, or -1; SAID lines written. */
	int user_err;
	int said;
	/* A client's message, as it is received (sup_handover.c). */
	char blob[CF_IPC_BLOB_MAX + 1];
};

static inline long long cf_sup_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline void cf_sup_close(int fd)
{
	int e = errno;
	if (fd >= 0)
		close(fd);
	errno = e;
}

#endif
