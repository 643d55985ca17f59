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
 *   ttyprobe deny-seccomp CMD [ARG...]  make seccomp(2) fail with EINVAL, then
 *                                       exec CMD (a kernel without filters) */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pty.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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
	if (argc >= 3 && strcmp(argv[1], "deny-seccomp") == 0)
		return deny_seccomp(argv + 2);
	fprintf(stderr, "usage: see the top of tests/enforce/ttyprobe.c\n");
	return 2;
}
