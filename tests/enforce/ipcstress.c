/* cf-ipcstress ROOT [ROUNDS]: the IPC supervisor's 16-thread stress
 * (test_ipc_engine.c, sixteen_threads_of_four_fenced_processes) as a plain
 * program, for the ThreadSanitizer run (tests/tsan.sh): criterion can not run
 * under TSan (its shared arena is mapped at a random address in the range
 * TSan reserves for its shadow, and criterion gives up).
 *
 * A supervisor started by cf_supervisor_start, a fenced server in ROOT/ws, an
 * outside server on ROOT/outside.sock (a process: the driver stays single-
 * threaded, so its forks may start threads under TSan), and four fenced
 * processes of four threads that each ROUNDS times connect to the inside
 * server, to the outside one (must be refused with EACCES) and chmod a file
 * of the workspace. ROOT must lie outside /tmp (the fence's other writable
 * location). Exit 0 when every call had the expected result. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "notify/supervisor.h"
#include "strv.h"
#include "notify/supervisor_wire.h"

/* The status line of an IPC failure ERR. */
static const char *ipc_words(int err)
{
	static char line[512];
	struct cf_why w;
	cf_ipc_verdict(err, &w);
	cf_why_words(&w, line, sizeof line);
	return line;
}

struct shared {
	atomic_int inside_failed, outside_reached, chmod_failed, outside_accepts, enter;
};
static struct shared *sh;
static int rounds = 150;
static const char *inside, *outside, *file;

static int addr_of(struct sockaddr_un *sa, socklen_t *len, const char *where)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	size_t n = strlen(where);
	if (n >= sizeof sa->sun_path)
		return -1;
	memcpy(sa->sun_path, where, n);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

static int listen_on(const char *where)
{
	struct sockaddr_un sa;
	socklen_t len;
	if (addr_of(&sa, &len, where))
		return -1;
	unlink(where);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 64) < 0) {
		fprintf(stderr, "cf-ipcstress: listen on %s: %s\n", where, strerror(errno));
		return -1;
	}
	return fd;
}

static int try_connect(const char *where, char *got, size_t cap)
{
	struct sockaddr_un sa;
	socklen_t len;
	if (addr_of(&sa, &len, where))
		return EINVAL;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	int r = connect(s, (struct sockaddr *)&sa, len) < 0 ? errno : 0;
	if (got) {
		got[0] = '\0';
		if (r == 0) {
			ssize_t n = read(s, got, cap - 1);
			got[n > 0 ? n : 0] = '\0';
		}
	}
	close(s);
	return r;
}

/* Answer REPLY to every connection on FD until DONE is readable. */
static void serve(int fd, int done, const char *reply, atomic_int *count)
{
	struct pollfd pf[2] = {{fd, POLLIN, 0}, {done, POLLIN, 0}};
	while (poll(pf, 2, 60000) > 0 && !pf[1].revents) {
		int c = accept(fd, NULL, NULL);
		if (c < 0)
			continue;
		if (count)
			atomic_fetch_add(count, 1);
		(void)!write(c, reply, strlen(reply));
		close(c);
	}
}

static pid_t fenced(const struct cf_ipc *ipc, int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(120);
		int r = cf_ipc_enter(ipc);
		if (r < 0) {
			sh->enter = r;
			_exit(121);
		}
		_exit(fn(arg));
	}
	return pid;
}

static int reap(pid_t pid)
{
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int inside_server(void *arg)
{
	int *pipes = arg; /* ready[1], done[0] */
	int fd = listen_on(inside);
	if (fd < 0)
		return 10;
	(void)!write(pipes[0], "r", 1);
	serve(fd, pipes[1], "inside", NULL);
	return 0;
}

static void *stress_thread(void *arg)
{
	(void)arg;
	char got[16];
	for (int i = 0; i < rounds; i++) {
		if (try_connect(inside, got, sizeof got) != 0 || strcmp(got, "inside") != 0)
			atomic_fetch_add(&sh->inside_failed, 1);
		if (try_connect(outside, NULL, 0) != EACCES)
			atomic_fetch_add(&sh->outside_reached, 1);
		if (chmod(file, 0600 | (mode_t)(i & 1) << 6) != 0)
			atomic_fetch_add(&sh->chmod_failed, 1);
	}
	return NULL;
}

static int stress_child(void *arg)
{
	(void)arg;
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, stress_thread, NULL))
			return 2;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: cf-ipcstress ROOT [ROUNDS]\n");
		return 2;
	}
	if (argc == 3)
		rounds = atoi(argv[2]);
	static char ws[4096], in[4200], out[4200], f[4200], logp[4200];
	if (strlen(argv[1]) > 4000) {
		fprintf(stderr, "cf-ipcstress: ROOT too long\n");
		return 2;
	}
	snprintf(ws, sizeof ws, "%s/ws", argv[1]);
	snprintf(in, sizeof in, "%s/srv.sock", ws);
	snprintf(out, sizeof out, "%s/outside.sock", argv[1]);
	snprintf(f, sizeof f, "%s/f", ws);
	snprintf(logp, sizeof logp, "%s/ipc.log", argv[1]);
	inside = in, outside = out, file = f;
	if ((mkdir(ws, 0755) && errno != EEXIST) || close(open(f, O_WRONLY | O_CREAT, 0600))) {
		fprintf(stderr, "cf-ipcstress: %s: %s\n", ws, strerror(errno));
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	alarm(240); /* a deadlock ends the run with SIGALRM */
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	memset(sh, 0, sizeof *sh);

	int stop[2], ready[2];
	if (pipe(stop) || pipe(ready))
		return 2;
	int ofd = listen_on(outside);
	if (ofd < 0)
		return 2;
	pid_t outside_pid = fork();
	if (outside_pid == 0) {
		serve(ofd, stop[0], "bad", &sh->outside_accepts);
		_exit(0);
	}
	close(ofd);

	char addr[CF_IPC_ADDR_MAX];
	int log = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int r = cf_supervisor_start(getpid(), log, addr);
	close(log);
	if (r) {
		fprintf(stderr, "cf-ipcstress: cf_supervisor_start: %s\n", strerror(-r));
		return 2;
	}
	struct cf_strv w = {0}, a = {0};
	struct cf_ipc ipc;
	if (cf_strv_add(&w, ws) || cf_strv_add(&w, "/tmp") || cf_ipc_prepare(&ipc, &w, &a, addr)) {
		fprintf(stderr, "cf-ipcstress: cf_ipc_prepare failed\n");
		return 2;
	}
	ipc.sup_beside = true; /* cf_supervisor_start: beside us, not above */
	cf_strv_free(&w);
	cf_strv_free(&a);

	int pipes[2] = {ready[1], stop[0]};
	pid_t server = fenced(&ipc, inside_server, pipes);
	char c;
	if (read(ready[0], &c, 1) != 1) {
		fprintf(stderr, "cf-ipcstress: the inside server did not start (%d: %s)\n",
			reap(server), ipc_words(sh->enter));
		return 1;
	}
	pid_t kids[4];
	for (int i = 0; i < 4; i++)
		kids[i] = fenced(&ipc, stress_child, NULL);
	int bad = 0;
	for (int i = 0; i < 4; i++) {
		int st = reap(kids[i]);
		if (st) {
			fprintf(stderr, "cf-ipcstress: fenced process %d ended with %d (%s)\n", i, st,
				st == 121 ? ipc_words(sh->enter) : "");
			bad++;
		}
	}
	(void)!write(stop[1], "d", 1);
	close(stop[1]);
	reap(server);
	reap(outside_pid);
	cf_ipc_free(&ipc);
	printf("IPCSTRESS calls=%d inside_failed=%d outside_reached=%d chmod_failed=%d "
	       "outside_accepts=%d\n",
	       16 * rounds, sh->inside_failed, sh->outside_reached, sh->chmod_failed,
	       sh->outside_accepts);
	bad += sh->inside_failed + sh->outside_reached + sh->chmod_failed + sh->outside_accepts;
	return bad ? 1 : 0;
}
