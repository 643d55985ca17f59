/* cf-guardprobe: a "harness" started by credfence harness, attacking the
 * guard over its own reads (enforce/linux/mountns/harness_guard.h) in every way a harness's file
 * tools, or a model steering them, could try. One line per attempt:
 * "NAME RESULT", RESULT the errno name of the failure, or "read" followed by
 * what was read (so that a leak shows its marker in the output).
 *
 * Usage: cf-guardprobe HOME WORKSPACE KEY  (KEY: a secret file under HOME,
 * in a directory that is a secret location, e.g. HOME/.ssh/id_ed25519), or
 * cf-guardprobe --read FILE...: read each FILE ("read:FILE RESULT"). */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case EROFS: return "EROFS";
	case ENOSYS: return "ENOSYS";
	case EBUSY: return "EBUSY";
	case ELOOP: return "ELOOP";
	case EXDEV: return "EXDEV";
	case ENOTDIR: return "ENOTDIR";
	default: return "EOTHER";
	}
}

/* Read FD to the end and print what it holds on one line. */
static void show(const char *name, int fd)
{
	char buf[512];
	if (fd < 0) {
		printf("%s %s\n", name, ename(errno));
		return;
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	int e = errno;
	close(fd);
	if (n < 0) {
		printf("%s %s\n", name, ename(e));
		return;
	}
	buf[n] = '\0';
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	printf("%s read %s\n", name, buf);
}

static int ring_open(const char *path)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	int r = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (r < 0)
		return -1;
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, r, IORING_OFF_SQ_RING);
	char *cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, r, IORING_OFF_CQ_RING);
	struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof *sqes, PROT_READ | PROT_WRITE,
					 MAP_SHARED, r, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		close(r);
		errno = ENOSYS;
		return -1;
	}
	memset(&sqes[0], 0, sizeof sqes[0]);
	sqes[0].opcode = IORING_OP_OPENAT;
	sqes[0].fd = AT_FDCWD;
	sqes[0].addr = (unsigned long)path;
	sqes[0].open_flags = O_RDONLY;
	unsigned *tail = (unsigned *)(sq + p.sq_off.tail);
	unsigned *array = (unsigned *)(sq + p.sq_off.array);
	array[*tail & *(unsigned *)(sq + p.sq_off.ring_mask)] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, r, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		close(r);
		return -1;
	}
	unsigned head = *(unsigned *)(cq + p.cq_off.head);
	struct io_uring_cqe *cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes) +
				   (head & *(unsigned *)(cq + p.cq_off.ring_mask));
	int res = cqe->res;
	close(r);
	if (res < 0) {
		errno = -res;
		return -1;
	}
	return res;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--read") == 0) {
		for (int i = 2; i < argc; i++) {
			char name[4200];
			snprintf(name, sizeof name, "read:%s", argv[i]);
			show(name, open(argv[i], O_RDONLY));
		}
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: cf-guardprobe HOME WORKSPACE KEY\n");
		return 2;
	}
	const char *home = argv[1], *ws = argv[2], *key = argv[3];
	char p[4096], dir[4096];
	setvbuf(stdout, NULL, _IOLBF, 0);

	show("open", open(key, O_RDONLY));
	snprintf(p, sizeof p, "%s/.ssh/../%s", home, key + strlen(home) + 1);
	show("dotdot", open(p, O_RDONLY));
	snprintf(p, sizeof p, "/proc/self/root%s", key);
	show("proc-self-root", open(p, O_RDONLY));
	snprintf(p, sizeof p, "/proc/%d/root%s", (int)getppid(), key);
	show("proc-parent-root", open(p, O_RDONLY));
	snprintf(p, sizeof p, "/proc/1/root%s", key);
	show("proc-1-root", open(p, O_RDONLY));
	snprintf(p, sizeof p, "/proc/%d/cwd", (int)getppid());
	show("proc-parent-cwd", open(p, O_RDONLY | O_DIRECTORY));
	int hfd = open(home, O_RDONLY | O_DIRECTORY);
	show("openat-dirfd", openat(hfd, key + strlen(home) + 1, O_RDONLY));
	struct open_how how = {.flags = O_RDONLY, .resolve = RESOLVE_NO_SYMLINKS};
	show("openat2", (int)syscall(SYS_openat2, AT_FDCWD, key, &how, sizeof how));
	show("raw-openat", (int)syscall(SYS_openat, AT_FDCWD, key, O_RDONLY, 0));
	snprintf(p, sizeof p, "%s/link-to-key", ws);
	if (symlink(key, p) == 0)
		show("symlink", open(p, O_RDONLY));
	else
		printf("symlink %s\n", ename(errno));
	snprintf(p, sizeof p, "%s/hardlink-to-key", ws);
	printf("hardlink %s\n", link(key, p) == 0 ? "made" : ename(errno));
	show("io_uring", ring_open(key));
	snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(key, '/') - key), key);
	show("opendir", open(dir, O_RDONLY | O_DIRECTORY));
	printf("chmod %s\n", chmod(dir, 0755) == 0 ? "done" : ename(errno));
	printf("umount %s\n", umount2(dir, MNT_DETACH) == 0 ? "done" : ename(errno));
	printf("ptrace-parent %s\n",
	       ptrace(PTRACE_ATTACH, getppid(), 0, 0) == 0 ? "attached" : ename(errno));
	/* A user and mount namespace of its own, where the covers could be
	 * taken off, or the home bound elsewhere without them. */
	pid_t c = fork();
	if (c == 0) {
		uid_t uid = geteuid();
		gid_t gid = getegid();
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
			printf("userns %s\n", ename(errno));
			_exit(0);
		}
		/* Its own ids as 0 inside: every capability over its own files. */
		char map[64];
		int m = open("/proc/self/setgroups", O_WRONLY);
		if (m >= 0) {
			(void)!write(m, "deny", 4);
			close(m);
		}
		snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
		m = open("/proc/self/uid_map", O_WRONLY);
		printf("userns-map %s\n", m >= 0 && write(m, map, strlen(map)) > 0 ? "done" : ename(errno));
		if (m >= 0)
			close(m);
		snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
		m = open("/proc/self/gid_map", O_WRONLY);
		if (m >= 0) {
			(void)!write(m, map, strlen(map));
			close(m);
		}
		printf("userns-umount %s\n", umount2(dir, MNT_DETACH) == 0 ? "done" : ename(errno));
		printf("userns-bind %s\n",
		       mount(home, ws, NULL, MS_BIND, NULL) == 0 ? "done" : ename(errno));
		show("userns-open", open(key, O_RDONLY));
		snprintf(p, sizeof p, "%s/%s", ws, key + strlen(home) + 1);
		show("userns-bound-open", open(p, O_RDONLY));
		_exit(0);
	}
	waitpid(c, NULL, 0);
	/* The harness's own state: it writes and reads back where it likes. */
	snprintf(p, sizeof p, "%s/.harness-state-new", home);
	int w = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (w >= 0) {
		(void)!write(w, "state-ok\n", 9);
		close(w);
	}
	show("state", open(p, O_RDONLY));
	return 0;
}
