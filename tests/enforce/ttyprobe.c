/* ttyprobe: terminal attacks and uses, one result line each ("WHAT: OK" or
 * "WHAT: ENAME"), for tests/enforce/test_terminals.c. Test use only.
 *
 *   ttyprobe on-tty SLAVE CMD [ARG...]  new session, SLAVE as controlling
 *                                       terminal and fds 0-2, then exec CMD
 *   ttyprobe sti MARK                   push MARK into fd 0's input with
 *                                       TIOCSTI, every way a process can call
 *                                       ioctl; TIOCLINUX too
 *   ttyprobe open PATH...               open each for reading (print what a
 *                                       terminal has pending) and for writing
 *   ttyprobe own                        write to /dev/tty and to fd 0's own pts
 *   ttyprobe openpty                    a new pty: master, slave, openpty()
 *   ttyprobe newpty                     a new pty by TIOCGPTPEER, used: data
 *                                       both ways, the flags honoured, the
 *                                       slave by its name, TIOCSTI on it
 *   ttyprobe peer-of FD...              TIOCGPTPEER on inherited descriptors
 *   ttyprobe peer-bad                   TIOCGPTPEER on what is not a master
 *   ttyprobe peer-race FD N             N calls of TIOCGPTPEER on a number
 *                                       that a thread keeps switching between
 *                                       a new master and FD: which slaves came
 *   ttyprobe other-devpts FD CMD...     a master of a new devpts instance at
 *                                       FD (inherited), then exec CMD
 *   ttyprobe deny-seccomp CMD [ARG...]  make seccomp(2) fail with EINVAL, then
 *                                       exec CMD (a kernel without filters) */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char *name(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

static void report(const char *what, int err)
{
	printf("%s: %s\n", what, err ? name(err) : "OK");
	fflush(stdout);
}

static int on_tty(char **argv)
{
	if (setsid() < 0) {
		perror("ttyprobe: setsid");
		return 2;
	}
	int fd = open(argv[0], O_RDWR);
	if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0) {
		perror("ttyprobe: the controlling terminal");
		return 2;
	}
	for (int i = 0; i <= 2; i++)
		dup2(fd, i);
	if (fd > 2)
		close(fd);
	execvp(argv[1], argv + 1);
	perror("ttyprobe: exec");
	return 127;
}

/* Each variant pushes MARK and its own tag, so a leak names its way in. */
typedef long (*ioctl_fn)(int fd, unsigned long cmd, char *c);

static long native(int fd, unsigned long cmd, char *c)
{
	return syscall(SYS_ioctl, fd, cmd, c);
}

static long high_bits(int fd, unsigned long cmd, char *c)
{
	return syscall(SYS_ioctl, fd, cmd | (1UL << 32), c);
}

#if defined(__x86_64__)
static long x32_a(int fd, unsigned long cmd, char *c)
{
	return syscall(0x40000000L | 16, fd, cmd, c);
}

static long x32_b(int fd, unsigned long cmd, char *c)
{
	return syscall(0x40000000L | 514, fd, cmd, c);
}

/* The i386 table from a 64-bit process: arguments are 32 bits wide. */
static long i386(int fd, unsigned long cmd, char *c)
{
	long ret;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(54L), "b"((long)fd), "c"((long)(unsigned)cmd), "d"((long)(uintptr_t)c)
			 : "memory", "r8", "r9", "r10", "r11");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
#endif

static void push(const char *what, ioctl_fn fn, int fd, const char *mark, char tag, char *cell)
{
	int err = 0;
	char text[256];
	snprintf(text, sizeof text, "%s%c", mark, tag);
	for (const char *p = text; *p && !err; p++) {
		*cell = *p;
		if (fn(fd, TIOCSTI, cell) < 0)
			err = errno;
	}
	report(what, err);
}

static int sti(const char *mark)
{
	/* The i386 call takes a 32-bit pointer: the byte lives below 4 GiB. */
	char *cell = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS
#ifdef MAP_32BIT
				  | MAP_32BIT
#endif
			  , -1, 0);
	if (cell == MAP_FAILED) {
		perror("ttyprobe: mmap");
		return 2;
	}
	push("sti native", native, 0, mark, 'N', cell);
	push("sti high bits", high_bits, 0, mark, 'H', cell);
#if defined(__x86_64__)
	push("sti x32 16", x32_a, 0, mark, 'X', cell);
	push("sti x32 514", x32_b, 0, mark, 'Y', cell);
	/* A kernel without 32-bit calls may kill the caller for trying. */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		push("sti i386", i386, 0, mark, 'I', cell);
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		printf("sti i386: SIG%s\n", sigabbrev_np(WTERMSIG(st)));
#endif
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY);
	if (tty < 0)
		report("sti /dev/tty open", errno);
	else
		push("sti /dev/tty", native, tty, mark, 'T', cell);
	cell[0] = 3; /* TIOCL_PASTESEL: paste the console selection as input */
	report("tioclinux", native(0, TIOCLINUX, cell) < 0 ? errno : 0);
	report("tioclinux high bits", high_bits(0, TIOCLINUX, cell) < 0 ? errno : 0);
	return 0;
}

static void try_open(const char *path)
{
	char what[4200], buf[4096];
	snprintf(what, sizeof what, "read %s", path);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	report(what, fd < 0 ? errno : 0);
	if (fd >= 0) {
		ssize_t n = isatty(fd) ? read(fd, buf, sizeof buf - 1) : 0;
		if (n > 0) {
			buf[n] = '\0';
			printf("pending: %s\n", buf);
		}
		close(fd);
	}
	snprintf(what, sizeof what, "write %s", path);
	fd = open(path, O_WRONLY | O_NOCTTY);
	report(what, fd < 0 ? errno : 0);
	if (fd >= 0) {
		(void)!write(fd, "CFWRITE-by-ttyprobe\n", 20);
		close(fd);
	}
}

static int own(void)
{
	char what[4200];
	int fd = open("/dev/tty", O_WRONLY);
	report("own /dev/tty", fd < 0 ? errno : 0);
	if (fd >= 0 && write(fd, "own-tty-ok\n", 11) != 11)
		report("own /dev/tty write", errno);
	if (fd >= 0)
		close(fd);
	const char *pts = ttyname(0);
	if (!pts) {
		report("own ttyname", errno);
		return 0;
	}
	snprintf(what, sizeof what, "own %s", pts);
	fd = open(pts, O_WRONLY | O_NOCTTY);
	report(what, fd < 0 ? errno : 0);
	if (fd >= 0 && write(fd, "own-pts-ok\n", 11) != 11)
		report("own pts write", errno);
	if (fd >= 0)
		close(fd);
	return 0;
}

static int new_pty(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	report("ptmx", m < 0 ? errno : 0);
	if (m >= 0) {
		if (grantpt(m) || unlockpt(m))
			report("unlockpt", errno);
		int s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
		report("peer", s < 0 ? errno : 0);
		if (s >= 0)
			close(s);
		close(m);
	}
	int mm, ss;
	int rc = openpty(&mm, &ss, NULL, NULL, NULL);
	report("openpty", rc < 0 ? errno : 0);
	return 0;
}

/* Whether S is the slave of master M: the same pty number, the devpts of
 * /dev/pts. */
static bool is_peer(int m, int s)
{
	unsigned int n;
	struct stat st, pts;
	if (ioctl(m, TIOCGPTN, &n) < 0 || fstat(s, &st) < 0 || stat("/dev/pts", &pts) < 0)
		return false;
	unsigned int maj = major(st.st_rdev), min = minor(st.st_rdev);
	return S_ISCHR(st.st_mode) && maj >= 136 && maj < 144 && (maj - 136) * 256 + min == n &&
	       st.st_dev == pts.st_dev;
}

/* BYTES written on W arrive on R (a pty in raw mode echoes nothing). */
static int carries(int w, int r, const char *bytes)
{
	char buf[64];
	size_t n = strlen(bytes);
	if (write(w, bytes, n) != (ssize_t)n)
		return errno;
	struct timespec pause = {0, 10 * 1000 * 1000};
	for (int i = 0; i < 100; i++) {
		ssize_t k = read(r, buf, sizeof buf - 1);
		if (k > 0) {
			buf[k] = '\0';
			return strstr(buf, bytes) ? 0 : EPROTO;
		}
		if (k < 0 && errno != EAGAIN)
			return errno;
		nanosleep(&pause, NULL);
	}
	return ETIMEDOUT;
}

static int newpty(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK);
	report("ptmx", m < 0 ? errno : 0);
	if (m < 0)
		return 0;
	if (grantpt(m) || unlockpt(m))
		report("unlockpt", errno);
	int s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_NONBLOCK);
	report("peer", s < 0 ? errno : 0);
	if (s < 0)
		return 0;
	report("peer is the slave", is_peer(m, s) ? 0 : EPROTO);
	struct termios tio;
	if (tcgetattr(s, &tio) == 0) {
		cfmakeraw(&tio);
		tcsetattr(s, TCSANOW, &tio);
	}
	report("slave to master", carries(s, m, "from-slave"));
	report("master to slave", carries(m, s, "from-master"));
	report("peer O_NONBLOCK", fcntl(s, F_GETFL) & O_NONBLOCK ? 0 : EPROTO);
	report("peer no FD_CLOEXEC", fcntl(s, F_GETFD) & FD_CLOEXEC ? EPROTO : 0);
	report("peer O_RDWR", (fcntl(s, F_GETFL) & O_ACCMODE) == O_RDWR ? 0 : EPROTO);
	int c = ioctl(m, TIOCGPTPEER, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	report("peer O_CLOEXEC", c < 0 ? errno : fcntl(c, F_GETFD) & FD_CLOEXEC ? 0 : EPROTO);
	if (c >= 0) {
		report("peer O_WRONLY", (fcntl(c, F_GETFL) & O_ACCMODE) == O_WRONLY ? 0 : EPROTO);
		close(c);
	}
	c = ioctl(m, TIOCGPTPEER, O_RDWR | O_APPEND);
	report("peer O_APPEND", c < 0 ? errno : 0);
	char name[64];
	if (ptsname_r(m, name, sizeof name) == 0) {
		int byname = open(name, O_RDWR | O_NOCTTY);
		report("slave by name", byname < 0 ? errno : 0);
		if (byname >= 0)
			close(byname);
		/* The kernel's own answer, past the shim's open (ptyname.c). */
		long raw = syscall(SYS_openat, AT_FDCWD, name, O_RDWR | O_NOCTTY);
		report("slave by name, raw", raw < 0 ? errno : 0);
		if (raw >= 0)
			close((int)raw);
	}
	char ch = 'x';
	report("sti new pty", ioctl(s, TIOCSTI, &ch) < 0 ? errno : 0);
	close(s);
	close(m);
	return 0;
}

static int peer_of(char **fds, int n)
{
	for (int i = 0; i < n; i++) {
		char what[64];
		snprintf(what, sizeof what, "peer-of %s", fds[i]);
		int s = ioctl(atoi(fds[i]), TIOCGPTPEER, O_RDWR | O_NOCTTY);
		report(what, s < 0 ? errno : 0);
		if (s >= 0)
			close(s);
	}
	return 0;
}

static void peer_try(const char *what, int fd)
{
	int s = fd < 0 ? -1 : ioctl(fd, TIOCGPTPEER, O_RDWR | O_NOCTTY);
	report(what, fd < 0 ? EBADF : s < 0 ? errno : 0);
	if (s >= 0)
		close(s);
}

static int peer_bad(void)
{
	int p[2];
	peer_try("peer-bad /dev/null", open("/dev/null", O_RDWR));
	peer_try("peer-bad pipe", pipe(p) == 0 ? p[0] : -1);
	peer_try("peer-bad file", open("/proc/self/exe", O_RDONLY));
	peer_try("peer-bad O_PATH ptmx", open("/dev/ptmx", O_PATH));
	peer_try("peer-bad closed", 1000);
	int m = posix_openpt(O_RDWR | O_NOCTTY), s = -1;
	if (m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0)
		s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
	peer_try("peer-bad slave", s);
	if (isatty(0))
		peer_try("peer-bad own terminal", 0);
	return 0;
}

/* The race: a thread keeps putting the new master and FD by turns at one
 * number while the other asks for that number's peer. */
static struct {
	int at, good, other;
	volatile int stop;
} R;

static void *switcher(void *arg)
{
	(void)arg;
	while (!R.stop) {
		dup2(R.good, R.at);
		dup2(R.other, R.at);
	}
	return NULL;
}

static int peer_race(const char *fd, const char *count)
{
	R.other = atoi(fd);
	R.good = posix_openpt(O_RDWR | O_NOCTTY);
	if (R.good < 0 || grantpt(R.good) || unlockpt(R.good)) {
		report("race master", errno);
		return 0;
	}
	R.at = fcntl(R.good, F_DUPFD, 100);
	pthread_t th;
	if (pthread_create(&th, NULL, switcher, NULL)) {
		report("race thread", EAGAIN);
		return 0;
	}
	int ok = 0, refused = 0, wrong = 0;
	for (int i = 0, n = atoi(count); i < n; i++) {
		int s = ioctl(R.at, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (s < 0) {
			refused++;
			continue;
		}
		if (is_peer(R.good, s))
			ok++;
		else
			wrong++;
		close(s);
	}
	R.stop = 1;
	pthread_join(th, NULL);
	printf("race: ok %d refused %d wrong %d\n", ok, refused, wrong);
	return 0;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* In a child: a mount namespace (in a user namespace of its own unless
 * root), a new devpts instance on DIR, its ptmx opened and sent back. */
static void other_instance_child(int sock, const char *dir)
{
	char map[64], ptmx[64];
	uid_t uid = getuid();
	gid_t gid = getgid();
	if (unshare(uid ? CLONE_NEWUSER | CLONE_NEWNS : CLONE_NEWNS))
		_exit(11);
	if (uid) {
		snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
		if (write_file("/proc/self/setgroups", "deny") || write_file("/proc/self/uid_map", map))
			_exit(12);
		snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
		if (write_file("/proc/self/gid_map", map))
			_exit(12);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("devpts", dir, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666"))
		_exit(13);
	snprintf(ptmx, sizeof ptmx, "%s/ptmx", dir);
	int m = open(ptmx, O_RDWR | O_NOCTTY);
	if (m < 0 || unlockpt(m))
		_exit(14);
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c;
	char byte = 'm';
	struct iovec iov = {&byte, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.b,
			     .msg_controllen = sizeof c.b};
	struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &m, sizeof m);
	_exit(sendmsg(sock, &msg, 0) == 1 ? 0 : 15);
}

static int other_devpts(char **argv)
{
	int sv[2], at = atoi(argv[0]), st = 0;
	char dir[] = "/tmp/ttyprobe-devpts-XXXXXX";
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) || !mkdtemp(dir)) {
		perror("ttyprobe: socketpair or mkdtemp");
		return 2;
	}
	pid_t pid = fork();
	if (pid == 0)
		other_instance_child(sv[1], dir);
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c;
	char byte;
	struct iovec iov = {&byte, 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.b,
			     .msg_controllen = sizeof c.b};
	waitpid(pid, &st, 0);
	rmdir(dir); /* the instance lived in the child's namespace only */
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || recvmsg(sv[0], &msg, MSG_DONTWAIT) != 1) {
		fprintf(stderr, "ttyprobe: no devpts instance of our own (step %d)\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 3;
	}
	int m;
	memcpy(&m, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof m);
	if (dup2(m, at) < 0) {
		perror("ttyprobe: dup2");
		return 2;
	}
	execvp(argv[1], argv + 1);
	perror("ttyprobe: exec");
	return 127;
}

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#endif

static int deny_seccomp(char **argv)
{
#ifdef ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof *f, .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("ttyprobe: install the filter");
		return 2;
	}
	execvp(argv[0], argv);
	perror("ttyprobe: exec");
	return 127;
#else
	(void)argv;
	fprintf(stderr, "ttyprobe: add the audit arch of this machine\n");
	return 2;
#endif
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "on-tty") == 0)
		return on_tty(argv + 2);
	if (argc == 3 && strcmp(argv[1], "sti") == 0)
		return sti(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "open") == 0) {
		for (int i = 2; i < argc; i++)
			try_open(argv[i]);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "own") == 0)
		return own();
	if (argc == 2 && strcmp(argv[1], "openpty") == 0)
		return new_pty();
	if (argc == 2 && strcmp(argv[1], "newpty") == 0)
		return newpty();
	if (argc >= 3 && strcmp(argv[1], "peer-of") == 0)
		return peer_of(argv + 2, argc - 2);
	if (argc == 2 && strcmp(argv[1], "peer-bad") == 0)
		return peer_bad();
	if (argc == 4 && strcmp(argv[1], "peer-race") == 0)
		return peer_race(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "other-devpts") == 0)
		return other_devpts(argv + 2);
	if (argc >= 3 && strcmp(argv[1], "deny-seccomp") == 0)
		return deny_seccomp(argv + 2);
	fprintf(stderr, "usage: see the top of tests/enforce/ttyprobe.c\n");
	return 2;
}
