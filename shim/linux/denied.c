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
#include "real.h"
#include "shim.h"
#include "sys.h"

#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif

/* ---- the real calls (real.h) ---- */

static struct {
	CF_OPEN_FAMILY(CF_REAL_SLOT, CF_ROW_NONE, CF_ROW_NONE)
} real;

/* real_NAME(): the real NAME, taken as its row says (NULL: make the raw
 * system call). */
#define REAL_OF(name, ret, params, how)                                                            \
	static inline __typeof__(real.name) real_##name(void)                                      \
	{                                                                                          \
		return CF_REAL(real, name, how);                                                   \
	}
CF_OPEN_FAMILY(REAL_OF, CF_ROW_NONE, CF_ROW_NONE)

/* Before init.c's constructor (priority 101 runs before the default): the
 * role it decides then keeps the shim in what a fenced child gets. Until
 * this ran, the raw calls stand in for the real ones. libcredfence-fenced.so
 * (CF_FENCED_LIB, fenced_lib.c) has no constructor: a fenced program's
 * start pays for no dlsym (33 of them were some 15 us of each start, issue
 * 36), and each call below takes its raw call, or resolves the real one
 * on first use, as before this ran. */
#ifndef CF_FENCED_LIB
#define RESOLVE(name, ...) (void)CF_REAL(real, name, CF_RESOLVE);
__attribute__((constructor(101))) static void resolve_denied(void)
{
	cf_env_keep_shim(true);
	CF_OPEN_FAMILY(RESOLVE, CF_ROW_NONE, CF_ROW_NONE)
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
	__typeof__(real.openat) f = real_openat();
	if (f)
		return f(dirfd, path, flags, mode);
	return (int)ret(cf_sys4(SYS_openat, dirfd, path, flags | O_LARGEFILE, mode));
}

static int do_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	__typeof__(real.fstatat) f = real_fstatat();
	if (f)
		return f(dirfd, path, st, flags);
	return (int)ret(cf_sys4(SYS_newfstatat, dirfd, path, st, flags));
}

static int do_faccessat(int dirfd, const char *path, int mode, int flags)
{
	__typeof__(real.faccessat) f = real_faccessat();
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

#define TAKE_MODE(flags, last)                                                                     \
	mode_t mode = 0;                                                                           \
	if ((flags) & (O_CREAT | __O_TMPFILE)) {                                                   \
		va_list ap;                                                                        \
		va_start(ap, last);                                                                \
		mode = va_arg(ap, mode_t);                                                         \
		va_end(ap);                                                                        \
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

/* The wrappers whose mode comes from the variadic arguments. */
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

/* The streams and directories (WRAP rows of interposed.h): the real NAME
 * (resolved on first use) called with ARGS; a failure (NULL) of PATH
 * explained as ACC. */
#define REAL_EXPLAINED(name, args, path, acc)                                                      \
	({                                                                                         \
		__typeof__(real.name) f_ = real_##name();                                          \
		__typeof__(f_ args) r_ = NULL;                                                     \
		if (!f_)                                                                           \
			errno = ENOSYS;                                                            \
		else if (!(r_ = f_ args))                                                          \
			after(AT_FDCWD, path, acc);                                                \
		r_;                                                                                \
	})

/* One copy each, which both names of a row call (fopen and fopen64,
 * freopen and freopen64). */
__attribute__((noinline)) static FILE *fopen_at(const char *path, const char *mode)
{
	return REAL_EXPLAINED(fopen, (path, mode), path, mode_access(mode));
}

__attribute__((noinline)) static FILE *freopen_at(const char *path, const char *mode,
						      FILE *stream)
{
	return REAL_EXPLAINED(freopen, (path, mode, stream), path, mode_access(mode));
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

static int connect_to(int fd, const struct sockaddr *sa, socklen_t len)
{
	__typeof__(real.connect) f = real_connect();
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

static int access_at(int dirfd, const char *path, int mode, int flags)
{
	int r = do_faccessat(dirfd, path, mode, flags);
	if (r < 0)
		after(dirfd, path, (mode & W_OK) ? ACC_WRITE : ACC_READ);
	return r;
}

/* The wrappers of the other rows of the open family (interposed.h); the
 * declaration first, for the names no header declares (__open_2 and the
 * other forms of _FORTIFY_SOURCE). */
#define WRAP(name, ret, params, call)                                                              \
	ret name params;                                                                           \
	CF_EXPORT ret name params                                                                  \
	{                                                                                          \
		return call;                                                                       \
	}
CF_OPEN_FAMILY(CF_ROW_NONE, WRAP, CF_ROW_NONE)

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
	CF_WRITE_FAMILY(CF_REAL_SLOT)
} wreal;

#ifndef CF_FENCED_LIB
#define WRESOLVE(name, ...) (void)CF_REAL(wreal, name, CF_RESOLVE);
__attribute__((constructor(101))) static void resolve_writes(void)
{
	CF_WRITE_FAMILY(WRESOLVE)
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

/* What a row of the write family does (interposed.h). */
enum { CF_W_WRITE, CF_W_META, CF_W_RENAME };

/* After a refused write (HOW) of PATH (relative to DIRFD), and of OTHER
 * (relative to ODIRFD; NULL: none): the other side of a rename. */
static void refused(int how, int dirfd, const char *path, int odirfd, const char *other)
{
	enum cf_judge_access acc = how == CF_W_META ? ACC_META : ACC_WRITE;
	after(dirfd, path, acc);
	if (other)
		after(odirfd, other, acc);
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

#define CF_UNPAREN(...) __VA_ARGS__
/* A wrapper of the write family: the real call (ENOSYS when there is
 * none), a rename that changes nothing done (CF_W_RENAME), a refusal
 * explained. Nothing instrumented is called before a refusal but for a
 * rename (CF_UNTRACKED above). */
#define WRAP_WRITE(name, ret, params, args, how, at, other)                                        \
	CF_EXPORT CF_UNTRACKED ret name params                                                     \
	{                                                                                          \
		__typeof__(wreal.name) f = CF_REAL(wreal, name, CF_RESOLVE);                       \
		if (!f) {                                                                          \
			errno = ENOSYS;                                                            \
			return -1;                                                                 \
		}                                                                                  \
		ret r = f args;                                                                    \
		if ((how) == CF_W_RENAME)                                                          \
			r = rename_unchanged(r, CF_UNPAREN other, CF_UNPAREN at);                  \
		if (r < 0 && WORTH(errno))                                                         \
			refused(how, CF_UNPAREN at, CF_UNPAREN other);                             \
		return r;                                                                          \
	}
CF_WRITE_FAMILY(WRAP_WRITE)
