/* The IPC filter as enforce/linux/notify/ipc.c installs it (filters.h, compiled
 * by libseccomp at the build; test_filter_gen.c holds every answer of it to
 * the program it replaced): its paths short for every native number, the
 * kernel taking the program and answering real calls with it, Unix datagram
 * sockets, and mount_setattr through int 0x80. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf_run.h"
#include "filter_reference.h"
#include "notify/filters.h"
#include "fixture.h"
#include "notify/supervisor_wire.h"

#if defined(__x86_64__)

static const struct sock_filter *program(bool mounts, bool dgram, unsigned *len)
{
	unsigned short n;
	const struct sock_filter *f = cf_ipc_filter(mounts, dgram, &n);
	cr_assert(f && n > 0, "no program (mounts %d, dgram %d)", mounts, dgram);
	*len = n;
	return f;
}

/* Every native number reaches its answer in a few instructions, in the
 * kernel's cache run and at run time: libseccomp's tree, whose leaves test
 * up to four numbers, against the interval tree typed by hand before
 * (filter_reference.h), logged. */
static void short_paths(bool mounts, unsigned most)
{
	unsigned nb, nr = ref_ipc[CF_IPC_BPF_INDEX(mounts, false)].len;
	const struct sock_filter *built = program(mounts, false, &nb), *ref = ref_ipc[CF_IPC_BPF_INDEX(mounts, false)].f;
	unsigned long walk_new = 0, walk_old = 0;
	unsigned worst = 0;
	for (uint32_t n = 0; n < 512; n++) {
		walk_new += bpf_cache_walk(built, nb, AUDIT_ARCH_X86_64, n);
		walk_old += bpf_cache_walk(ref, nr, AUDIT_ARCH_X86_64, n);
		struct seccomp_data d = {.nr = (int)n, .arch = AUDIT_ARCH_X86_64};
		unsigned s = bpf_run(built, nb, &d).steps;
		if (n != 16 && n != 157 && s > worst) /* ioctl, prctl: their arguments decide */
			worst = s;
	}
	cr_log_info("mounts %d: the cache run walks %lu instructions for native 0..511 (hand-typed "
		    "tree: %lu); the longest path to an answer %u",
		    mounts, walk_new, walk_old, worst);
	cr_expect_leq(worst, most, "a native number takes %u instructions to its answer", worst);
}

Test(ipc_filter, native_numbers_take_a_short_path)
{
	short_paths(false, 12); /* arch, its test, nr, 4 splits, a leaf of 4, the return */
}

Test(ipc_filter, native_numbers_take_a_short_path_with_meta_left_to_mounts)
{
	short_paths(true, 12);
}

/* ---- the kernel takes it ---- */

static int child_installs(bool mounts, int *e)
{
	struct sock_fprog prog;
	prog.filter = (struct sock_filter *)(uintptr_t)cf_ipc_filter(mounts, false, &prog.len);
	char path[] = "/tmp/cf-ipc-filter-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 2;
	long l = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (l < 0)
		return 3;
	close((int)l); /* nobody listens: a trapped call fails with ENOSYS */
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, "/nonexistent/cf-ipc-filter");
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	e[0] = connect(s, (struct sockaddr *)&sa, sizeof sa) < 0 ? errno : 0;
	e[1] = chmod(path, 0600) < 0 ? errno : 0;
	e[2] = syscall(SYS_io_uring_setup, 1, NULL) < 0 ? errno : 0;
	e[3] = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ? errno : 0;
	e[4] = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); /* not done: still 1 */
	e[5] = syscall(SYS_mount_setattr, -1, "", 0, NULL, 0) < 0 ? errno : 0;
	e[6] = getpid() > 0 ? 0 : 1;
	unlink(path);
	return 0;
}

static void kernel_takes(bool mounts, const int want[7])
{
	int *e = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert(e != MAP_FAILED);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0)
		_exit(child_installs(mounts, e));
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child: status %#x", st);
	static const char *what[] = {"connect", "chmod", "io_uring_setup", "prctl(PR_SET_DUMPABLE, 0)",
				     "PR_GET_DUMPABLE after it", "mount_setattr(-1)", "getpid"};
	for (int i = 0; i < 7; i++)
		cr_expect_eq(e[i], want[i], "mounts %d, %s: %d (%s), want %d", mounts, what[i], e[i],
			     strerror(e[i]), want[i]);
	munmap(e, 4096);
}

Test(ipc_filter, the_kernel_takes_it_and_answers_with_it)
{
	/* connect and chmod trapped (ENOSYS: the listener is closed),
	 * io_uring_setup refused, PR_SET_DUMPABLE said done and not done,
	 * mount_setattr to the kernel (EINVAL: a size of 0). */
	kernel_takes(false, (const int[7]){ENOSYS, ENOSYS, ENOSYS, 0, 1, EINVAL, 0});
}

Test(ipc_filter, the_kernel_takes_it_with_meta_left_to_mounts)
{
	/* chmod to the kernel, mount_setattr refused. */
	kernel_takes(true, (const int[7]){ENOSYS, 0, ENOSYS, 0, 1, EPERM, 0});
}

/* ---- Unix datagram sockets (sup_dgram.h) ---- */

static uint32_t answer(const struct sock_filter *f, unsigned len, uint32_t arch, uint32_t nr,
		       uint64_t a0, uint64_t a1)
{
	struct seccomp_data d = {.nr = (int)nr, .arch = arch, .args = {a0, a1}};
	return bpf_run(f, len, &d).ret;
}

Test(ipc_filter, unix_datagram_sockets_go_to_the_supervisor)
{
	for (int mounts = 0; mounts < 2; mounts++) {
		unsigned n, np;
		const struct sock_filter *f = program(mounts, true, &n), *plain = program(mounts, false, &np);
		const uint32_t x64 = AUDIT_ARCH_X86_64, i386 = AUDIT_ARCH_I386, x32 = 0x40000000U;
		const uint32_t notif = SECCOMP_RET_USER_NOTIF, allow = SECCOMP_RET_ALLOW,
			       eperm = SECCOMP_RET_ERRNO | EPERM;
		/* socket(41) and socketpair(53), natively: Unix datagram ones, with
		 * any flags, trapped; the rest, and without DGRAM, the kernel's. */
		for (uint32_t nr = 41; nr <= 53; nr += 12) {
			cr_expect_eq(answer(f, n, x64, nr, AF_UNIX, SOCK_DGRAM), notif);
			cr_expect_eq(answer(f, n, x64, nr, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK),
				     notif);
			cr_expect_eq(answer(f, n, x64, nr, AF_UNIX | 0x100000000ULL, SOCK_DGRAM), notif,
				     "only the low word of the domain counts");
			cr_expect_eq(answer(f, n, x64, nr, AF_UNIX, SOCK_STREAM), allow);
			cr_expect_eq(answer(f, n, x64, nr, AF_UNIX, SOCK_SEQPACKET), allow);
			cr_expect_eq(answer(f, n, x64, nr, AF_INET, SOCK_DGRAM), allow);
			cr_expect_eq(answer(plain, np, x64, nr, AF_UNIX, SOCK_DGRAM), allow);
			/* x32: any Unix socket refused (its bind and connect are). */
			cr_expect_eq(answer(f, n, x64, nr | x32, AF_UNIX, SOCK_STREAM), eperm);
			cr_expect_eq(answer(f, n, x64, nr | x32, AF_INET, SOCK_DGRAM), allow);
		}
		/* i386: socket(359), socketpair(360) of a Unix socket refused, and
		 * socketcall's SYS_SOCKET and SYS_SOCKETPAIR (the domain in memory). */
		cr_expect_eq(answer(f, n, i386, 359, AF_UNIX, SOCK_STREAM), eperm);
		cr_expect_eq(answer(f, n, i386, 360, AF_UNIX, SOCK_DGRAM), eperm);
		cr_expect_eq(answer(f, n, i386, 359, AF_INET, SOCK_STREAM), allow);
		cr_expect_eq(answer(f, n, i386, 102, 1, 0), eperm);
		cr_expect_eq(answer(f, n, i386, 102, 8, 0), eperm);
		cr_expect_eq(answer(f, n, i386, 102, 9 /* SYS_SEND */, 0), allow);
		cr_expect_eq(answer(plain, np, i386, 102, 1, 0), allow);
		/* What does not concern sockets answers as without the arms. */
		for (uint32_t nr = 0; nr < 470; nr++)
			if (nr != 41 && nr != 53)
				cr_expect_eq(answer(f, n, x64, nr, 3, 0x5401), answer(plain, np, x64, nr, 3, 0x5401),
					     "native %u", nr);
	}
}

/* ---- mount_setattr through int 0x80 ---- */

static long int80(long nr, long a, long b, long c, long d, long e)
{
	long r;
	__asm__ volatile("int $0x80"
			 : "=a"(r)
			 : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
			 : "r8", "r9", "r10", "r11", "memory");
	return r;
}

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
struct mount_attr_ {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static bool write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* A user namespace with our ids mapped, and a mount namespace, for a caller
 * that is not root. */
static bool own_user_ns(void)
{
	char map[64];
	unsigned uid = getuid(), gid = getgid();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
		return false;
	snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
	if (!write_file("/proc/self/setgroups", "deny") || !write_file("/proc/self/uid_map", map))
		return false;
	snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
	return write_file("/proc/self/gid_map", map);
}

/* In a mount namespace of its own, a tmpfs at DIR, its mount read-only;
 * then, with the
 * filter of the mounts mode or none, mount_setattr through the i386
 * table to make it writable, and a file created there. e[0]: its errno, e[1]: the
 * create's errno, e[2]: the native call's errno. 3: no namespace here. */
static int child_remounts(const char *dir, bool filtered, int *e)
{
	char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	char file[4096];
	if (low == MAP_FAILED)
		return 2;
	if (unshare(CLONE_NEWNS) != 0 && !own_user_ns())
		return 3;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("cf-ipc-filter", dir, "tmpfs", 0, "size=64k") != 0)
		return 3;
	strcpy(low, dir);
	struct mount_attr_ *attr = (struct mount_attr_ *)(low + 2048);
	memset(attr, 0, sizeof *attr);
	attr->attr_set = MOUNT_ATTR_RDONLY; /* the mount read-only, as tree_ns.c makes them */
	if (syscall(SYS_mount_setattr, AT_FDCWD, dir, 0, attr, sizeof *attr) != 0)
		return 3;
	attr->attr_set = 0;
	attr->attr_clr = MOUNT_ATTR_RDONLY;
	if (filtered) {
		struct sock_fprog prog;
		prog.filter = (struct sock_filter *)(uintptr_t)cf_ipc_filter(true, false, &prog.len);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
			return 2;
		e[2] = syscall(SYS_mount_setattr, AT_FDCWD, dir, 0, attr, sizeof *attr) < 0 ? errno : 0;
	}
	long r = int80(442, AT_FDCWD, (long)(uintptr_t)low, 0, (long)(uintptr_t)attr, sizeof *attr);
	e[0] = r < 0 ? (int)-r : 0;
	snprintf(file, sizeof file, "%s/made", dir);
	int fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	e[1] = fd < 0 ? errno : 0;
	return 0;
}

static int remount(const char *dir, bool filtered, int *e)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0)
		_exit(child_remounts(dir, filtered, e));
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the child: status %#x", st);
	return WEXITSTATUS(st);
}

static int child_int80_getpid(void)
{
	return int80(20, 0, 0, 0, 0, 0) > 0 ? 0 : 1;
}

Test(ipc_filter, mount_setattr_through_int80_keeps_the_mounts_read_only)
{
	char dir[] = "/tmp/cf-ipc-filter-mnt-XXXXXX";
	int *e = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert(e != MAP_FAILED && mkdtemp(dir));
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0)
		_exit(child_int80_getpid());
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		rmdir(dir);
		cr_log_info("int 0x80 faults here (no ia32 emulation): nothing to call through it; "
			    "the interpreter test holds the program");
		return;
	}
	/* The control: the call makes the mount writable. */
	int rc = remount(dir, false, e);
	if (rc == 3) {
		rmdir(dir);
		cf_test_unavailable("no mount namespace of our own here (unshare: user and mount "
				  "namespaces off?)");
	}
	cr_assert_eq(rc, 0);
	cr_assert_eq(e[0], 0, "control: i386 mount_setattr: %s", strerror(e[0]));
	cr_assert_eq(e[1], 0, "control: the create after it: %s", strerror(e[1]));
	memset(e, 0, 4096);
	cr_assert_eq(remount(dir, true, e), 0);
	cr_expect_eq(e[2], EPERM, "native mount_setattr: %s", strerror(e[2]));
	cr_expect_eq(e[0], EPERM, "i386 mount_setattr: %s", strerror(e[0]));
	cr_expect_eq(e[1], EROFS, "the create after it: %s", strerror(e[1]));
	rmdir(dir);
	munmap(e, 4096);
}

#else

Test(ipc_filter, x86_64_only)
{
	cr_skip_test("these checks are x86_64's (test_filter_gen.c checks aarch64's programs)");
}

#endif
