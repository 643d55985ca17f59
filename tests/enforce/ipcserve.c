/* cf-ipcserve: a deputy that reads files for whoever connects (issue 10).
 *
 *   cf-ipcserve [-d] [-g] SOCK COUNTFILE
 *
 * Listens on the Unix stream socket SOCK: a path, or "@name" for an abstract
 * name. For each connection it appends one line "accept" to COUNTFILE, reads
 * one line (a path), sends back that file's contents (or "ERR <errno>\n"), and
 * closes. With -g it is a datagram socket: each datagram (a path) counts as
 * an accept, and the file's first 8 KiB go back to its sender. Once listening it prints "ready <pid>" on stdout and closes stdout.
 *
 * Started by a test (outside every fence) it is the attacker's target: the
 * server of systemd --user, tmux or docker that reads a key for a fenced
 * program. Started by a fenced command with -d it is a dev server of the
 * workspace: it goes to the background in its own session and the foreground
 * exits 0 once it is ready.
 *
 * It never outlives a test for long: it exits after 60 s, and without -d it is
 * killed when its parent dies. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static socklen_t address(const char *sock, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	size_t n = strlen(sock);
	if (n + 1 > sizeof sa->sun_path) {
		fprintf(stderr, "cf-ipcserve: socket name too long: %s\n", sock);
		exit(2);
	}
	if (sock[0] == '@') {
		memcpy(sa->sun_path + 1, sock + 1, n - 1); /* sun_path[0] stays '\0' */
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	}
	memcpy(sa->sun_path, sock, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

static void count(const char *file)
{
	int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "accept\n", 7) != 7)
		fprintf(stderr, "cf-ipcserve: %s: %s\n", file, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void serve_one(int c)
{
	char req[4096];
	size_t len = 0;
	while (len < sizeof req - 1) {
		ssize_t n = read(c, req + len, 1);
		if (n <= 0 || req[len] == '\n')
			break;
		len++;
	}
	req[len] = '\0';
	int fd = open(req, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		dprintf(c, "ERR %s\n", strerror(errno));
		return;
	}
	char buf[8192];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		if (write(c, buf, (size_t)n) != n)
			break;
	close(fd);
}

/* Answer datagrams on S for ever. */
static int serve_dgram(int s, const char *file)
{
	for (;;) {
		char req[4096], buf[8192];
		struct sockaddr_un from;
		socklen_t fl = sizeof from;
		ssize_t n = recvfrom(s, req, sizeof req - 1, 0, (struct sockaddr *)&from, &fl);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		req[n] = '\0';
		count(file);
		int fd = open(req, O_RDONLY | O_CLOEXEC);
		ssize_t k = fd < 0 ? snprintf(buf, sizeof buf, "ERR %s\n", strerror(errno))
				   : read(fd, buf, sizeof buf);
		if (fd >= 0)
			close(fd);
		if (k > 0 && fl > sizeof(sa_family_t))
			sendto(s, buf, (size_t)k, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
	}
}

int main(int argc, char **argv)
{
	int daemon = argc > 1 && strcmp(argv[1], "-d") == 0;
	int dgram = argc > 1 + daemon && strcmp(argv[1 + daemon], "-g") == 0;
	if (argc != 3 + daemon + dgram) {
		fputs("usage: cf-ipcserve [-d] [-g] SOCK COUNTFILE\n", stderr);
		return 2;
	}
	const char *sock = argv[1 + daemon + dgram], *file = argv[2 + daemon + dgram];
	signal(SIGPIPE, SIG_IGN);

	int ready[2];
	if (daemon) {
		if (pipe(ready))
			return 1;
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid > 0) {
			/* The foreground: wait for the grandchild's word, pass it on. */
			close(ready[1]);
			char line[64];
			ssize_t n = read(ready[0], line, sizeof line);
			waitpid(pid, NULL, 0);
			if (n <= 0)
				return 1;
			fwrite(line, 1, (size_t)n, stdout);
			return 0;
		}
		close(ready[0]);
		setsid();
		if (fork() != 0)
			_exit(0);
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
	} else {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ready[1] = dup(1);
	}
	alarm(60);

	struct sockaddr_un sa;
	socklen_t len = address(sock, &sa);
	int s = socket(AF_UNIX, (dgram ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	if (sock[0] != '@')
		unlink(sock);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, len) || (!dgram && listen(s, 64))) {
		dprintf(2, "cf-ipcserve: %s: %s\n", sock, strerror(errno));
		dprintf(ready[1], "failed %s\n", strerror(errno));
		return 1;
	}
	dprintf(ready[1], "ready %d\n", (int)getpid());
	close(ready[1]);
	int nul = open("/dev/null", O_WRONLY);
	dup2(nul, 1);
	if (dgram)
		return serve_dgram(s, file);

	for (;;) {
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		count(file);
		struct timeval tv = {2, 0};
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		serve_one(c);
		close(c);
	}
}
