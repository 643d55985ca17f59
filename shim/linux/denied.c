/* A denial explains itself: the open family, stat and access, interposed so
 * that a read or a write refused because of credfence's policy is named on
 * the process's own stderr, once per path, with the option that would allow
 * it (issue 24).
 *
 * On success each call is the real call and nothing else. On EACCES or EPERM
 * (EROFS for a write) the first denial builds the policy from the
 * environment (as the constructor would) and judges the path: at or under a
 * secret location, or a write outside every writable location, while the
 * kernel's permission bits would have allowed it. errno is given back as the
 * real call left it.
 *
 * A real function not resolved yet (a call made before the constructor, from
 * another library's constructor, an IFUNC resolver, or dlsym/malloc itself)
 * is made with the raw system call instead: dlsym is never called from inside
 * an open. fopen, freopen and opendir have no system call of their own; they
 * resolve on first use (normal context, never reached from dlsym). */
/* Each symbol is defined under its own name: the 64-bit file offset
 * redirection of the headers (open to open64, stat to stat64) must not apply
 * here, where both names are defined. */
#undef _FILE_OFFSET_BITS
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <utime.h>

#include "judge.h"
#include "shim.h"
#include "sys.h"

#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif

/* ---- the real calls ---- */

static struct {
	int (*open)(const char *, int, ...);
	int (*openat)(int, const char *, int, ...);
	int (*stat)(const char *, struct stat *);
	int (*lstat)(const char *, struct stat *);
	int (*fstatat)(int, const char *, struct stat *, int);
	int (*access)(const char *, int);
	int (*faccessat)(int, const char *, int, int);
	FILE *(*fopen)(const char *, const char *);
	FILE *(*freopen)(const char *, const char *, FILE *);
	DIR *(*opendir)(const char *);
	int (*connect)(int, const struct sockaddr *, socklen_t);
} real;

#define LOAD(name) __atomic_load_n(&real.name, __ATOMIC_ACQUIRE)
#define STORE(name) __atomic_store_n(&real.name, (__typeof__(real.name))dlsym(RTLD_NEXT, #name), \
				     __ATOMIC_RELEASE)

/* Before init.c's constructor (priority 101 runs before the default): the
 * role it decides then keeps the shim in what a fenced child gets. Until
 * this ran, the raw calls stand in for the real ones. libcredfence-fenced.so
 * (CF_FENCED_LIB, fenced_lib.c) has no constructor: a fenced program's
 * start pays for no dlsym (33 of them were some 15 us of each start, issue
 * 36), and each call below takes its raw call, or resolves the real one
 * on first use, as before this ran. */
#ifndef CF_FENCED_LIB
__attribute__((constructor(101))) static void resolve_denied(void)
{
	cf_env_keep_shim(true);
	STORE(open);
	STORE(openat);
	STORE(stat);
	STORE(lstat);
	STORE(fstatat);
	STORE(access);
	STORE(faccessat);
	STORE(fopen);
	STORE(freopen);
	STORE(opendir);
	STORE(connect);
}
#endif

/* The raw call's -errno as a libc result. */
static long ret(long r)
{
	if ((unsigned long)r > -4096UL) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

static int do_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	__typeof__(real.openat) f = LOAD(openat);
	if (f)
		return f(dirfd, path, flags, mode);
	return (int)ret(cf_sys4(SYS_openat, dirfd, path, flags | O_LARGEFILE, mode));
}

static int do_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	__typeof__(real.fstatat) f = LOAD(fstatat);
	if (f)
		return f(dirfd, path, st, flags);
	return (int)ret(cf_sys4(SYS_newfstatat, dirfd, path, st, flags));
}

static int do_faccessat(int dirfd, const char *path, int mode, int flags)
{
	__typeof__(real.faccessat) f = LOAD(faccessat);
	if (f)
		return f(dirfd, path, mode, flags);
	if (flags)
		return (int)ret(cf_sys4(SYS_faccessat2, dirfd, path, mode, flags));
	return (int)ret(cf_sys3(SYS_faccessat, dirfd, path, mode));
}

/* ---- the judge (judge.h), asked after a failure that may be the fence's ---- */

/* Set while this thread judges: the judge's own opens and stats (and, in a
 * fenced program, the loader's as it loads the judge) go straight through. */
static __thread bool judging __attribute__((tls_model("initial-exec")));

static void explain(int dirfd, const char *path, enum cf_judge_access acc, int err)
{
	if (!path || judging || !cf_shim.ready)
		return;
	judging = true;
	const struct cf_judge_ops *j = cf_judge();
	if (j)
		j->explain(dirfd, path, acc, err, cf_shim.role == CF_ROLE_HARNESS);
	judging = false;
}

/* After a failed call: explain it when it may be the fence's, errno kept. */
static void after(int dirfd, const char *path, enum cf_judge_access acc)
{
	int e = errno;
	if (e == EACCES || e == EPERM || (acc != ACC_READ && (e == EROFS || e == EBUSY)))
		explain(dirfd, path, acc, e);
	errno = e;
}

static enum cf_judge_access open_access(int flags)
{
	return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) ? ACC_WRITE : ACC_READ;
}

static enum cf_judge_access mode_access(const char *mode)
{
	return mode && strpbrk(mode, "wa+") ? ACC_WRITE : ACC_READ;
}

/* ---- the interposed calls ---- */

#define TAKE_MODE(flags, last)                                                                    \
	mode_t mode = 0;                                                                          \
	if ((flags) & (O_CREAT | __O_TMPFILE)) {                                                  \
		va_list ap;                                                                       \
		va_start(ap, last);                                                               \
		mode = va_arg(ap, mode_t);                                                        \
		va_end(ap);                                                                       \
	}

static int open_at(int dirfd, const char *path, int flags, mode_t mode)
{
	int r = do_openat(dirfd, path, flags, mode);
	if (r < 0 && errno == EACCES && path && path[0] == '/' && cf_sys_fenced()) {
		/* A terminal it holds, by name (ptyname.c). */
		int t = cf_shim_pty_by_name(path, flags);
		if (t >= 0)
			return t;
		errno = EACCES;
	}
	if (r < 0)
		after(dirfd, path, open_access(flags));
	return r;
}

CF_EXPORT int open(const char *path, int flags, ...)
{
	TAKE_MODE(flags, flags);
	return open_at(AT_FDCWD, path, flags, mode);
}

CF_EXPORT int open64(const char *path, int flags, ...)
{
	TAKE_MODE(flags, flags);
	return open_at(AT_FDCWD, path, flags | O_LARGEFILE, mode);
}

CF_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	TAKE_MODE(flags, flags);
	return open_at(dirfd, path, flags, mode);
}

CF_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	TAKE_MODE(flags, flags);
	return open_at(dirfd, path, flags | O_LARGEFILE, mode);
}

/* _FORTIFY_SOURCE's forms: no mode (the compiler saw none was needed). */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
CF_EXPORT int __open_2(const char *path, int flags)
{
	return open_at(AT_FDCWD, path, flags, 0);
}

CF_EXPORT int __open64_2(const char *path, int flags)
{
	return open_at(AT_FDCWD, path, flags | O_LARGEFILE, 0);
}

CF_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return open_at(dirfd, path, flags, 0);
}

CF_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return open_at(dirfd, path, flags | O_LARGEFILE, 0);
}

CF_EXPORT int creat(const char *path, mode_t mode)
{
	return open_at(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

CF_EXPORT int creat64(const char *path, mode_t mode)
{
	return open_at(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC | O_LARGEFILE, mode);
}

static FILE *fopen_real(const char *path, const char *mode)
{
	__typeof__(real.fopen) f = LOAD(fopen);
	if (!f) {
		STORE(fopen);
		f = LOAD(fopen);
	}
	if (!f) {
		errno = ENOSYS;
		return NULL;
	}
	FILE *r = f(path, mode);
	if (!r)
		after(AT_FDCWD, path, mode_access(mode));
	return r;
}

CF_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return fopen_real(path, mode);
}

CF_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return fopen_real(path, mode);
}

CF_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	__typeof__(real.freopen) f = LOAD(freopen);
	if (!f) {
		STORE(freopen);
		f = LOAD(freopen);
	}
	if (!f) {
		errno = ENOSYS;
		return NULL;
	}
	FILE *r = f(path, mode, stream);
	if (!r)
		after(AT_FDCWD, path, mode_access(mode));
	return r;
}

CF_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	return freopen(path, mode, stream);
}

CF_EXPORT DIR *opendir(const char *path)
{
	__typeof__(real.opendir) f = LOAD(opendir);
	if (!f) {
		STORE(opendir);
		f = LOAD(opendir);
	}
	if (!f) {
		errno = ENOSYS;
		return NULL;
	}
	DIR *r = f(path);
	if (!r)
		after(AT_FDCWD, path, ACC_READ);
	return r;
}

/* connect: a Unix socket the IPC fence refused (EACCES); the judge says it
 * when it is one credfence knows the option for (judge.c). */
static void explain_connect(const struct sockaddr_un *sa, socklen_t len)
{
	char path[sizeof sa->sun_path + 1];
	size_t n = len - offsetof(struct sockaddr_un, sun_path);
	if (judging || !cf_shim.ready || n == 0 || n > sizeof sa->sun_path || !sa->sun_path[0])
		return;
	memcpy(path, sa->sun_path, n);
	path[n] = '\0';
	judging = true;
	const struct cf_judge_ops *j = cf_judge();
	if (j)
		j->connect(path, cf_shim.role == CF_ROLE_HARNESS);
	judging = false;
}

CF_EXPORT int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	__typeof__(real.connect) f = LOAD(connect);
	int r = f ? f(fd, sa, len) : (int)ret(cf_sys3(SYS_connect, fd, sa, len));
	if (r < 0 && errno == EACCES && sa && len > sizeof(sa_family_t) && sa->sa_family == AF_UNIX) {
		int e = errno;
		explain_connect((const struct sockaddr_un *)sa, len);
		errno = e;
	}
	return r;
}

/* The stat family: a path lookup Landlock does not refuse, but the mount
 * namespace of a harness and other LSMs may. */
static int stat_at(int dirfd, const char *path, struct stat *st, int flags)
{
	int r = do_fstatat(dirfd, path, st, flags);
	if (r < 0)
		after(dirfd, path, ACC_READ);
	return r;
}

CF_EXPORT int stat(const char *path, struct stat *st)
{
	return stat_at(AT_FDCWD, path, st, 0);
}

CF_EXPORT int stat64(const char *path, struct stat64 *st)
{
	return stat_at(AT_FDCWD, path, (struct stat *)st, 0);
}

CF_EXPORT int lstat(const char *path, struct stat *st)
{
	return stat_at(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

CF_EXPORT int lstat64(const char *path, struct stat64 *st)
{
	return stat_at(AT_FDCWD, path, (struct stat *)st, AT_SYMLINK_NOFOLLOW);
}

CF_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return stat_at(dirfd, path, st, flags);
}

CF_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	return stat_at(dirfd, path, (struct stat *)st, flags);
}

CF_EXPORT int access(const char *path, int mode)
{
	int r = do_faccessat(AT_FDCWD, path, mode, 0);
	if (r < 0)
		after(AT_FDCWD, path, (mode & W_OK) ? ACC_WRITE : ACC_READ);
	return r;
}

CF_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	int r = do_faccessat(dirfd, path, mode, flags);
	if (r < 0)
		after(dirfd, path, (mode & W_OK) ? ACC_WRITE : ACC_READ);
	return r;
}

/* ---- the write family: what write protection refuses (issue 23) ----
 *
 * Inside a writable location a read-only mount over a protected path refuses
 * a create, rename, unlink, chmod or link there with EROFS (EBUSY for the
 * mount point itself renamed over or removed: git's config.lock renamed
 * over .git/config); these calls name it, and the supervisor logs it. The
 * real ones are resolved in the constructor (unlink and rename are
 * async-signal-safe: a handler that cleans up must not meet dlsym), and on
 * first use before it ran (no dlsym, malloc or open makes them). */

static struct {
	int (*rename)(const char *, const char *);
	int (*renameat)(int, const char *, int, const char *);
	int (*renameat2)(int, const char *, int, const char *, unsigned);
	int (*unlink)(const char *);
	int (*unlinkat)(int, const char *, int);
	int (*rmdir)(const char *);
	int (*remove)(const char *);
	int (*mkdir)(const char *, mode_t);
	int (*mkdirat)(int, const char *, mode_t);
	int (*symlink)(const char *, const char *);
	int (*symlinkat)(const char *, int, const char *);
	int (*link)(const char *, const char *);
	int (*linkat)(int, const char *, int, const char *, int);
	int (*chmod)(const char *, mode_t);
	int (*fchmodat)(int, const char *, mode_t, int);
	int (*chown)(const char *, uid_t, gid_t);
	int (*lchown)(const char *, uid_t, gid_t);
	int (*fchownat)(int, const char *, uid_t, gid_t, int);
	int (*truncate)(const char *, off_t);
	int (*truncate64)(const char *, off64_t);
	int (*utimensat)(int, const char *, const struct timespec[2], int);
	int (*utimes)(const char *, const struct timeval[2]);
	int (*utime)(const char *, const struct utimbuf *);
} wreal;

#define WSTORE(name)                                                                              \
	__atomic_store_n(&wreal.name, (__typeof__(wreal.name))dlsym(RTLD_NEXT, #name),            \
			 __ATOMIC_RELEASE)

#ifndef CF_FENCED_LIB
__attribute__((constructor(101))) static void resolve_writes(void)
{
	WSTORE(rename);
	WSTORE(renameat);
	WSTORE(renameat2);
	WSTORE(unlink);
	WSTORE(unlinkat);
	WSTORE(rmdir);
	WSTORE(remove);
	WSTORE(mkdir);
	WSTORE(mkdirat);
	WSTORE(symlink);
	WSTORE(symlinkat);
	WSTORE(link);
	WSTORE(linkat);
	WSTORE(chmod);
	WSTORE(fchmodat);
	WSTORE(chown);
	WSTORE(lchown);
	WSTORE(fchownat);
	WSTORE(truncate);
	WSTORE(truncate64);
	WSTORE(utimensat);
	WSTORE(utimes);
	WSTORE(utime);
}
#endif

/* ThreadSanitizer's runtime calls mkdir() while it starts (each directory
 * of its log_path), before it can track a thread: the instrumentation at a
 * function's entry then crashes, and the crash deadlocks in its report. So
 * the write family carries none (clang's disable_sanitizer_instrumentation;
 * the sanitized builds are clang's), and calls into the instrumented code
 * only after a failure worth explaining. */
#if defined(__has_attribute)
#if __has_attribute(disable_sanitizer_instrumentation)
#define CF_UNTRACKED __attribute__((disable_sanitizer_instrumentation))
#endif
#endif
#ifndef CF_UNTRACKED
#define CF_UNTRACKED
#endif
#define WORTH(e) ((e) == EACCES || (e) == EPERM || (e) == EROFS || (e) == EBUSY)

/* The real NAME (resolved now if the constructor has not run yet); a failed
 * call with ENOSYS when there is none. */
#define WREAL(name, ...)                                                                          \
	__typeof__(wreal.name) f = __atomic_load_n(&wreal.name, __ATOMIC_ACQUIRE);                \
	if (!f) {                                                                                 \
		f = (__typeof__(wreal.name))dlsym(RTLD_NEXT, #name);                              \
		__atomic_store_n(&wreal.name, f, __ATOMIC_RELEASE);                               \
	}                                                                                         \
	if (!f) {                                                                                 \
		errno = ENOSYS;                                                                   \
		return -1;                                                                        \
	}                                                                                         \
	int r = f(__VA_ARGS__)

/* After a failed write of PATH (relative to DIRFD), and of OTHER (relative to
 * ODIRFD; NULL: none): the other side of a rename. */
static int wrote(int r, int dirfd, const char *path, int odirfd, const char *other)
{
	if (r < 0) {
		after(dirfd, path, ACC_WRITE);
		if (other)
			after(odirfd, other, ACC_WRITE);
	}
	return r;
}

/* After a failed metadata change of PATH. */
static int changed(int r, int dirfd, const char *path)
{
	if (r < 0)
		after(dirfd, path, ACC_META);
	return r;
}

/* git writes a file again when nothing in it changes: `git submodule
 * update` sets the submodule's core.worktree to the value it has at every
 * run (ensure_core_worktree, builtin/submodule--helper.c in git 2.39.5),
 * writing .git/modules/SUB/config.lock and renaming it over the config,
 * which write protection holds (a read-only mount point: EBUSY). When the
 * two files hold the same bytes the rename changes nothing git or anyone
 * reads later (only the inode and its times): it is done by removing OLD,
 * and the held file is not touched. Only in a fenced process, only regular
 * files of at most 1 MiB, raw system calls and the stack only (rename is
 * async-signal-safe). A different content stays refused, and explained. */
static int open_regular(int dirfd, const char *path, struct stat *st)
{
	int fd = cf_sys_openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (cf_sys2(SYS_fstat, fd, st) < 0 || !S_ISREG(st->st_mode) || st->st_size > (1 << 20)) {
		cf_sys_close(fd);
		return -1;
	}
	return fd;
}

static bool read_full(int fd, char *buf, size_t n)
{
	while (n) {
		long r = cf_sys3(SYS_read, fd, buf, n);
		if (r == -EINTR)
			continue;
		if (r <= 0)
			return false;
		buf += r;
		n -= (size_t)r;
	}
	return true;
}

static bool same_bytes(int ofd, const char *old, int nfd, const char *new)
{
	struct stat so, sn;
	char a[2048], b[2048];
	if (!old || !new || cf_sys_fenced() != 1)
		return false;
	int fo = open_regular(ofd, old, &so);
	if (fo < 0)
		return false;
	int fn = open_regular(nfd, new, &sn);
	bool same = fn >= 0 && so.st_size == sn.st_size &&
		    (so.st_dev != sn.st_dev || so.st_ino != sn.st_ino);
	for (off_t left = same ? so.st_size : 0; left > 0;) {
		size_t n = left < (off_t)sizeof a ? (size_t)left : sizeof a;
		if (!read_full(fo, a, n) || !read_full(fn, b, n) || memcmp(a, b, n) != 0) {
			same = false;
			break;
		}
		left -= (off_t)n;
	}
	cf_sys_close(fo);
	if (fn >= 0)
		cf_sys_close(fn);
	return same;
}

/* After a rename refused with EBUSY (R < 0, errno EBUSY): 0 when OLD held
 * what NEW holds, and OLD is now removed; else R with errno as it was. */
static int rename_unchanged(int r, int ofd, const char *old, int nfd, const char *new)
{
	int e = errno;
	if (r < 0 && e == EBUSY && same_bytes(ofd, old, nfd, new) &&
	    cf_sys3(SYS_unlinkat, ofd, old, 0) == 0)
		return 0;
	errno = e;
	return r;
}

CF_EXPORT CF_UNTRACKED int rename(const char *old, const char *new)
{
	WREAL(rename, old, new);
	r = rename_unchanged(r, AT_FDCWD, old, AT_FDCWD, new);
	if (r < 0 && WORTH(errno))
		wrote(r, AT_FDCWD, new, AT_FDCWD, old);
	return r;
}

CF_EXPORT CF_UNTRACKED int renameat(int ofd, const char *old, int nfd, const char *new)
{
	WREAL(renameat, ofd, old, nfd, new);
	r = rename_unchanged(r, ofd, old, nfd, new);
	if (r < 0 && WORTH(errno))
		wrote(r, nfd, new, ofd, old);
	return r;
}

CF_EXPORT CF_UNTRACKED int renameat2(int ofd, const char *old, int nfd, const char *new, unsigned flags)
{
	WREAL(renameat2, ofd, old, nfd, new, flags);
	/* RENAME_EXCHANGE keeps both names; RENAME_NOREPLACE never replaces. */
	if (flags == 0)
		r = rename_unchanged(r, ofd, old, nfd, new);
	if (r < 0 && WORTH(errno))
		wrote(r, nfd, new, ofd, old);
	return r;
}

CF_EXPORT CF_UNTRACKED int unlink(const char *path)
{
	WREAL(unlink, path);
	if (r < 0 && WORTH(errno))
		wrote(r, AT_FDCWD, path, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int unlinkat(int dirfd, const char *path, int flags)
{
	WREAL(unlinkat, dirfd, path, flags);
	if (r < 0 && WORTH(errno))
		wrote(r, dirfd, path, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int rmdir(const char *path)
{
	WREAL(rmdir, path);
	if (r < 0 && WORTH(errno))
		wrote(r, AT_FDCWD, path, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int remove(const char *path)
{
	WREAL(remove, path);
	if (r < 0 && WORTH(errno))
		wrote(r, AT_FDCWD, path, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int mkdir(const char *path, mode_t mode)
{
	WREAL(mkdir, path, mode);
	if (r < 0 && WORTH(errno))
		wrote(r, AT_FDCWD, path, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int mkdirat(int dirfd, const char *path, mode_t mode)
{
	WREAL(mkdirat, dirfd, path, mode);
	if (r < 0 && WORTH(errno))
		wrote(r, dirfd, path, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int symlink(const char *target, const char *path)
{
	WREAL(symlink, target, path);
	if (r < 0 && WORTH(errno))
		wrote(r, AT_FDCWD, path, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int symlinkat(const char *target, int dirfd, const char *path)
{
	WREAL(symlinkat, target, dirfd, path);
	if (r < 0 && WORTH(errno))
		wrote(r, dirfd, path, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int link(const char *old, const char *new)
{
	WREAL(link, old, new);
	if (r < 0 && WORTH(errno))
		wrote(r, AT_FDCWD, new, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int linkat(int ofd, const char *old, int nfd, const char *new, int flags)
{
	WREAL(linkat, ofd, old, nfd, new, flags);
	if (r < 0 && WORTH(errno))
		wrote(r, nfd, new, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int chmod(const char *path, mode_t mode)
{
	WREAL(chmod, path, mode);
	if (r < 0 && WORTH(errno))
		changed(r, AT_FDCWD, path);
	return r;
}

CF_EXPORT CF_UNTRACKED int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
	WREAL(fchmodat, dirfd, path, mode, flags);
	if (r < 0 && WORTH(errno))
		changed(r, dirfd, path);
	return r;
}

CF_EXPORT CF_UNTRACKED int chown(const char *path, uid_t uid, gid_t gid)
{
	WREAL(chown, path, uid, gid);
	if (r < 0 && WORTH(errno))
		changed(r, AT_FDCWD, path);
	return r;
}

CF_EXPORT CF_UNTRACKED int lchown(const char *path, uid_t uid, gid_t gid)
{
	WREAL(lchown, path, uid, gid);
	if (r < 0 && WORTH(errno))
		changed(r, AT_FDCWD, path);
	return r;
}

CF_EXPORT CF_UNTRACKED int fchownat(int dirfd, const char *path, uid_t uid, gid_t gid, int flags)
{
	WREAL(fchownat, dirfd, path, uid, gid, flags);
	if (r < 0 && WORTH(errno))
		changed(r, dirfd, path);
	return r;
}

CF_EXPORT CF_UNTRACKED int truncate(const char *path, off_t len)
{
	WREAL(truncate, path, len);
	if (r < 0 && WORTH(errno))
		wrote(r, AT_FDCWD, path, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int truncate64(const char *path, off64_t len)
{
	WREAL(truncate64, path, len);
	if (r < 0 && WORTH(errno))
		wrote(r, AT_FDCWD, path, AT_FDCWD, NULL);
	return r;
}

CF_EXPORT CF_UNTRACKED int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
	WREAL(utimensat, dirfd, path, times, flags);
	if (r < 0 && WORTH(errno))
		changed(r, dirfd, path);
	return r;
}

CF_EXPORT CF_UNTRACKED int utimes(const char *path, const struct timeval times[2])
{
	WREAL(utimes, path, times);
	if (r < 0 && WORTH(errno))
		changed(r, AT_FDCWD, path);
	return r;
}

CF_EXPORT CF_UNTRACKED int utime(const char *path, const struct utimbuf *times)
{
	WREAL(utime, path, times);
	if (r < 0 && WORTH(errno))
		changed(r, AT_FDCWD, path);
	return r;
}
