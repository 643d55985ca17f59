/* cf-reach: a fenced child attacks the harness that started it (issue 8,
 * finding 1).
 *
 *   cf-reach harness   run as the harness: keeps its own login CF_T_OWN (the
 *                      one secret a harness reads, enforce/linux/mountns/harness_guard.h) open
 *                      and in memory, puts its marker in its environment, runs
 *                      a second thread, then starts `cf-reach attack` once by
 *                      each launch path: posix_spawn, posix_spawnp, system,
 *                      popen, fork+execv, vfork+execv.
 *   cf-reach attack    the child: tries every way into its parent and each of
 *                      its threads: /proc/PPID/task/TID/{mem,environ,maps},
 *                      pidfd_getfd (of the process and, where the kernel has
 *                      PIDFD_THREAD, of each thread), process_vm_readv and
 *                      process_vm_writev, ptrace(PTRACE_SEIZE).
 *
 * Output lines (the attack's on stdout, which every path shares):
 *   DENIED <path> <what> <errno name>   one attempt refused
 *   LEAK <path> <what>: <bytes>         one attempt got through, with what it read
 *   ATTACK <path> tried=<n> leaks=<n>   the child's total
 *   LAUNCH <path> status=<s>            the harness's view of the child
 * Exit status of the attack: 0 when nothing leaked, 1 otherwise. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static const char *how;
static int tried, leaks;
static char secret[4096]; /* the harness's copy of the key */
static uintptr_t target;  /* its address in the harness (CF_T_SECRET_ADDR) */

static void denied(const char *what, int err)
{
	tried++;
	printf("DENIED %s %s %s\n", how, what, strerrorname_np(err));
}

static void leak(const char *what, const char *buf, ssize_t n)
{
	tried++;
	leaks++;
	printf("LEAK %s %s: %.*s\n", how, what, (int)(n > 0 ? n : 0), buf);
}

static void try_proc(const char *ppid, const char *tid, const char *file)
{
	char path[256], what[128], buf[8192];
	snprintf(path, sizeof path, "/proc/%s/task/%s/%s", ppid, tid, file);
	snprintf(what, sizeof what, "task/%s/%s", tid, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return denied(what, errno);
	ssize_t n;
	if (!strcmp(file, "mem")) {
		n = pread(fd, buf, sizeof buf, (off_t)target);
		if (n < 0) {
			n = snprintf(buf, sizeof buf, "(opened; pread: %s)", strerror(errno));
		}
	} else {
		n = read(fd, buf, sizeof buf);
	}
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0' || buf[i] == '\n')
			buf[i] = ' ';
	leak(what, buf, n);
	close(fd);
}

static void try_getfd(int pidfd, const char *what)
{
	int got = 0, last = 0;
	for (int fd = 0; fd < 64; fd++) {
		int nfd = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		if (nfd < 0) {
			if (errno != EBADF)
				last = errno;
			continue;
		}
		char buf[512], w[128];
		ssize_t n = pread(nfd, buf, sizeof buf, 0);
		snprintf(w, sizeof w, "%s fd %d", what, fd);
		leak(w, buf, n);
		got++;
		close(nfd);
	}
	if (!got)
		denied(what, last ? last : EBADF);
}

static void try_vm(pid_t pid, const char *what, int write)
{
	char buf[256] = "overwritten-by-the-child";
	struct iovec local = {buf, sizeof buf}, remote = {(void *)target, sizeof buf};
	ssize_t n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
			  : process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return denied(what, errno);
	leak(what, buf, n);
}

static int attack(void)
{
	pid_t ppid = getppid();
	char spid[32];
	snprintf(spid, sizeof spid, "%d", ppid);
	how = getenv("CF_T_HOW") ? getenv("CF_T_HOW") : "?";
	target = getenv("CF_T_SECRET_ADDR") ? strtoull(getenv("CF_T_SECRET_ADDR"), NULL, 16) : 0;

	/* Fenced at all? If not, the rest says nothing about the fence. */
	int kfd = open(getenv("CF_T_KEY"), O_RDONLY | O_CLOEXEC);
	if (kfd >= 0) {
		char buf[256];
		ssize_t n = read(kfd, buf, sizeof buf);
		leak("key", buf, n);
		close(kfd);
	} else {
		denied("key", errno);
	}

	char tdir[64];
	snprintf(tdir, sizeof tdir, "/proc/%d/task", ppid);
	DIR *d = opendir(tdir);
	if (!d) {
		denied("task-list", errno);
	} else {
		for (struct dirent *e; (e = readdir(d));) {
			if (e->d_name[0] == '.')
				continue;
			try_proc(spid, e->d_name, "mem");
			try_proc(spid, e->d_name, "environ");
			try_proc(spid, e->d_name, "maps");
			pid_t tid = atoi(e->d_name);
			char w[64];
			int tfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
			snprintf(w, sizeof w, "pidfd_getfd-thread-%d", tid);
			if (tfd >= 0) {
				try_getfd(tfd, w);
				close(tfd);
			}
			snprintf(w, sizeof w, "ptrace-%d", tid);
			if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) == 0) {
				leak(w, "attached", 8);
				ptrace(PTRACE_DETACH, tid, NULL, NULL);
			} else {
				denied(w, errno);
			}
		}
		closedir(d);
	}
	int pfd = (int)syscall(SYS_pidfd_open, ppid, 0);
	if (pfd < 0) {
		denied("pidfd_open", errno);
	} else {
		try_getfd(pfd, "pidfd_getfd");
		close(pfd);
	}
	try_vm(ppid, "process_vm_readv", 0);
	try_vm(ppid, "process_vm_writev", 1);
	printf("ATTACK %s tried=%d leaks=%d\n", how, tried, leaks);
	fflush(stdout);
	return leaks ? 1 : 0;
}

/* ---- the harness ---- */

static const char *self;

static void *idle(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

static char **env_for(const char *path)
{
	static char buf[64];
	size_t n = 0;
	while (environ[n])
		n++;
	char **e = calloc(n + 2, sizeof *e);
	memcpy(e, environ, n * sizeof *e);
	snprintf(buf, sizeof buf, "CF_T_HOW=%s", path);
	e[n] = buf;
	return e;
}

static void report(const char *path, int status)
{
	printf("LAUNCH %s status=%d\n", path, status);
	fflush(stdout);
}

static void by_spawn(const char *path, int p)
{
	char *argv[] = {(char *)self, "attack", NULL};
	char **e = env_for(path);
	pid_t pid;
	int st = -1;
	int rc = p ? posix_spawnp(&pid, self, NULL, NULL, argv, e)
		   : posix_spawn(&pid, self, NULL, NULL, argv, e);
	if (rc == 0)
		waitpid(pid, &st, 0);
	report(path, rc ? -rc : st);
	free(e);
}

static void by_shell(const char *path, int use_popen)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "CF_T_HOW=%s exec '%s' attack", path, self);
	int st;
	if (use_popen) {
		FILE *fp = popen(cmd, "r");
		if (!fp)
			return report(path, -errno);
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
			fwrite(buf, 1, n, stdout);
		st = pclose(fp);
	} else {
		fflush(stdout);
		st = system(cmd);
	}
	report(path, st);
}

static void by_fork(const char *path, int use_vfork)
{
	char *argv[] = {(char *)self, "attack", NULL};
	char **e = env_for(path);
	char **old = environ;
	fflush(stdout);
	environ = e;
	pid_t pid = use_vfork ? vfork() : fork();
	if (pid == 0) {
		execv(self, argv);
		_exit(127);
	}
	environ = old;
	int st = -1;
	if (pid > 0)
		waitpid(pid, &st, 0);
	report(path, st);
	free(e);
}

static int harness(void)
{
	const char *key = getenv("CF_T_OWN");
	int kfd = key ? open(key, O_RDONLY) : -1; /* kept open: pidfd_getfd's target */
	if (kfd < 0 || read(kfd, secret, sizeof secret - 1) <= 0) {
		fprintf(stderr, "cf-reach: the harness can not read CF_T_OWN\n");
		return 2;
	}
	secret[strcspn(secret, "\n")] = '\0';
	setenv("CF_T_HARNESS_SECRET", secret, 1);
	char addr[32];
	snprintf(addr, sizeof addr, "%lx", (unsigned long)(uintptr_t)secret);
	setenv("CF_T_SECRET_ADDR", addr, 1);
	pthread_t t;
	pthread_create(&t, NULL, idle, NULL);

	by_spawn("posix_spawn", 0);
	by_spawn("posix_spawnp", 1);
	by_shell("system", 0);
	by_shell("popen", 1);
	by_fork("fork", 0);
	by_fork("vfork", 1);
	return 0;
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc == 2 && !strcmp(argv[1], "attack"))
		return attack();
	if (argc == 2 && !strcmp(argv[1], "harness"))
		return harness();
	fprintf(stderr, "usage: cf-reach harness|attack\n");
	return 2;
}
