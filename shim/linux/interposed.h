/* The calls the shim interposes on Linux, as lists: the one place each name
 * is written. A list is a macro that calls its arguments once a row
 * (X-macros); from the rows come the tables of real functions (real.h),
 * the wrappers whose shape allows it (denied.c), and the linker's version
 * scripts (libcredfence.map.in and libcredfence-fenced.map.in, run through
 * the C preprocessor at build time: shim/linux/meson.build). So this file
 * holds macros only, and includes nothing: the types in the rows are mere
 * words until a C file that has their headers expands them. */
#ifndef CF_SHIM_INTERPOSED_H
#define CF_SHIM_INTERPOSED_H

/* The launch family (libcredfence.so only): exec.c, syscall.c, spawn.c,
 * system.c, fdkeep.c, each wrapper written by hand (each hands off to
 * cf_shim_child_call or the shim's own launch, or to fdkeep.c).
 *   CALL(name): no real function; the shim makes the system call itself,
 *     as glibc does (nothing to resolve wherever it is called).
 *   REAL(name, ret, params): the real one is reached for a call that is
 *     not the harness's to make (cf_real_launch, real.h). */
#define CF_LAUNCH_FAMILY(CALL, REAL)                                                               \
	CALL(execve) CALL(execv) CALL(execvp) CALL(execvpe) CALL(execl) CALL(execlp)               \
	CALL(execle) CALL(fexecve) CALL(execveat)                                                  \
	REAL(posix_spawn, int, (pid_t *, const char *, const posix_spawn_file_actions_t *,         \
				const posix_spawnattr_t *, char *const[], char *const[]))          \
	REAL(posix_spawnp, int, (pid_t *, const char *, const posix_spawn_file_actions_t *,        \
				 const posix_spawnattr_t *, char *const[], char *const[]))         \
	REAL(pidfd_spawn, int, (int *, const char *, const posix_spawn_file_actions_t *,           \
				const posix_spawnattr_t *, char *const[], char *const[]))          \
	REAL(pidfd_spawnp, int, (int *, const char *, const posix_spawn_file_actions_t *,          \
				 const posix_spawnattr_t *, char *const[], char *const[]))         \
	REAL(system, int, (const char *))                                                          \
	REAL(popen, FILE *, (const char *, const char *))                                          \
	REAL(pclose, int, (FILE *))                                                                \
	CALL(syscall)                                                                              \
	/* a harness's close-everything keeps the namespace's descriptors */                       \
	CALL(close_range) CALL(closefrom)

/* The open family, stat, access and connect (denied.c): a denial explains
 * itself.
 *   REAL(name, ret, params, how): a real function the wrappers reach, and
 *     how they take it when it is not resolved yet (CF_REAL, real.h).
 *     CF_NO_DLSYM: until the constructor of libcredfence.so resolved it
 *     (and always in libcredfence-fenced.so, which has none), its raw
 *     system call stands in: never dlsym from inside an open, which dlsym
 *     and malloc make themselves. CF_RESOLVE: resolved at its first call
 *     (no system call of its own; normal context, never reached from dlsym).
 *   WRAP(name, ret, params, call): exported; the wrapper returns CALL, the
 *     helper that makes the real call and explains a failure of the path
 *     arguments it is given.
 *   HAND(name): exported, the wrapper written by hand: open, open64, openat
 *     and openat64 take their mode from the variadic arguments. */
#define CF_OPEN_FAMILY(REAL, WRAP, HAND)                                                           \
	REAL(openat, int, (int, const char *, int, ...), CF_NO_DLSYM)                              \
	REAL(fstatat, int, (int, const char *, struct stat *, int), CF_NO_DLSYM)                   \
	REAL(faccessat, int, (int, const char *, int, int), CF_NO_DLSYM)                           \
	REAL(connect, int, (int, const struct sockaddr *, socklen_t), CF_NO_DLSYM)                 \
	REAL(fopen, FILE *, (const char *, const char *), CF_RESOLVE)                              \
	REAL(freopen, FILE *, (const char *, const char *, FILE *), CF_RESOLVE)                    \
	REAL(opendir, DIR *, (const char *), CF_RESOLVE)                                           \
	HAND(open) HAND(open64) HAND(openat) HAND(openat64)                                        \
	/* _FORTIFY_SOURCE's forms: no mode (the compiler saw none was needed) */                  \
	WRAP(__open_2, int, (const char *path, int flags), open_at(AT_FDCWD, path, flags, 0))      \
	WRAP(__open64_2, int, (const char *path, int flags),                                       \
	     open_at(AT_FDCWD, path, flags | O_LARGEFILE, 0))                                      \
	WRAP(__openat_2, int, (int dirfd, const char *path, int flags),                            \
	     open_at(dirfd, path, flags, 0))                                                       \
	WRAP(__openat64_2, int, (int dirfd, const char *path, int flags),                          \
	     open_at(dirfd, path, flags | O_LARGEFILE, 0))                                         \
	WRAP(creat, int, (const char *path, mode_t mode),                                          \
	     open_at(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode))                          \
	WRAP(creat64, int, (const char *path, mode_t mode),                                        \
	     open_at(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC | O_LARGEFILE, mode))            \
	WRAP(fopen, FILE *, (const char *path, const char *mode), fopen_at(path, mode))            \
	WRAP(fopen64, FILE *, (const char *path, const char *mode), fopen_at(path, mode))          \
	WRAP(freopen, FILE *, (const char *path, const char *mode, FILE *stream),                  \
	     freopen_at(path, mode, stream))                                                       \
	WRAP(freopen64, FILE *, (const char *path, const char *mode, FILE *stream),                \
	     freopen_at(path, mode, stream))                                                       \
	WRAP(opendir, DIR *, (const char *path), REAL_EXPLAINED(opendir, (path), path, ACC_READ))  \
	WRAP(stat, int, (const char *path, struct stat *st), stat_at(AT_FDCWD, path, st, 0))       \
	WRAP(stat64, int, (const char *path, struct stat64 *st),                                   \
	     stat_at(AT_FDCWD, path, (struct stat *)st, 0))                                        \
	WRAP(lstat, int, (const char *path, struct stat *st),                                      \
	     stat_at(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW))                                     \
	WRAP(lstat64, int, (const char *path, struct stat64 *st),                                  \
	     stat_at(AT_FDCWD, path, (struct stat *)st, AT_SYMLINK_NOFOLLOW))                      \
	WRAP(fstatat, int, (int dirfd, const char *path, struct stat *st, int flags),              \
	     stat_at(dirfd, path, st, flags))                                                      \
	WRAP(fstatat64, int, (int dirfd, const char *path, struct stat64 *st, int flags),          \
	     stat_at(dirfd, path, (struct stat *)st, flags))                                       \
	WRAP(access, int, (const char *path, int mode), access_at(AT_FDCWD, path, mode, 0))        \
	WRAP(faccessat, int, (int dirfd, const char *path, int mode, int flags),                   \
	     access_at(dirfd, path, mode, flags))                                                  \
	WRAP(connect, int, (int fd, const struct sockaddr *sa, socklen_t len),                     \
	     connect_to(fd, sa, len))

/* The write family (denied.c): what write protection refuses (issue 23).
 * Every wrapper is generated: the real call (resolved on first use when
 * the constructor has not), then after a refusal the path arguments named.
 *   X(name, ret, params, args, how, at, other)
 *     ARGS: PARAMS' names, as the real call takes them;
 *     HOW: CF_W_WRITE (a name made, removed or replaced), CF_W_META (a
 *     metadata change), CF_W_RENAME (a rename, which is done by removing
 *     OLD when NEW holds the same bytes: denied.c, rename_unchanged);
 *     AT: (dirfd, path) explained after a refusal; OTHER: the second one,
 *     the old name of a rename, or (AT_FDCWD, NULL). */
#define CF_WRITE_FAMILY(X)                                                                         \
	X(rename, int, (const char *old, const char *new), (old, new), CF_W_RENAME,                \
	  (AT_FDCWD, new), (AT_FDCWD, old))                                                        \
	X(renameat, int, (int ofd, const char *old, int nfd, const char *new),                     \
	  (ofd, old, nfd, new), CF_W_RENAME, (nfd, new), (ofd, old))                               \
	/* RENAME_EXCHANGE keeps both names; RENAME_NOREPLACE never replaces */                    \
	X(renameat2, int, (int ofd, const char *old, int nfd, const char *new, unsigned flags),    \
	  (ofd, old, nfd, new, flags), (flags ? CF_W_WRITE : CF_W_RENAME), (nfd, new), (ofd, old)) \
	X(unlink, int, (const char *path), (path), CF_W_WRITE, (AT_FDCWD, path), (AT_FDCWD, NULL)) \
	X(unlinkat, int, (int dirfd, const char *path, int flags), (dirfd, path, flags),           \
	  CF_W_WRITE, (dirfd, path), (AT_FDCWD, NULL))                                             \
	X(rmdir, int, (const char *path), (path), CF_W_WRITE, (AT_FDCWD, path), (AT_FDCWD, NULL))  \
	X(remove, int, (const char *path), (path), CF_W_WRITE, (AT_FDCWD, path), (AT_FDCWD, NULL)) \
	X(mkdir, int, (const char *path, mode_t mode), (path, mode), CF_W_WRITE,                   \
	  (AT_FDCWD, path), (AT_FDCWD, NULL))                                                      \
	X(mkdirat, int, (int dirfd, const char *path, mode_t mode), (dirfd, path, mode),           \
	  CF_W_WRITE, (dirfd, path), (AT_FDCWD, NULL))                                             \
	X(symlink, int, (const char *target, const char *path), (target, path), CF_W_WRITE,        \
	  (AT_FDCWD, path), (AT_FDCWD, NULL))                                                      \
	X(symlinkat, int, (const char *target, int dirfd, const char *path),                       \
	  (target, dirfd, path), CF_W_WRITE, (dirfd, path), (AT_FDCWD, NULL))                      \
	X(link, int, (const char *old, const char *new), (old, new), CF_W_WRITE,                   \
	  (AT_FDCWD, new), (AT_FDCWD, NULL))                                                       \
	X(linkat, int, (int ofd, const char *old, int nfd, const char *new, int flags),            \
	  (ofd, old, nfd, new, flags), CF_W_WRITE, (nfd, new), (AT_FDCWD, NULL))                   \
	X(chmod, int, (const char *path, mode_t mode), (path, mode), CF_W_META,                    \
	  (AT_FDCWD, path), (AT_FDCWD, NULL))                                                      \
	X(fchmodat, int, (int dirfd, const char *path, mode_t mode, int flags),                    \
	  (dirfd, path, mode, flags), CF_W_META, (dirfd, path), (AT_FDCWD, NULL))                  \
	X(chown, int, (const char *path, uid_t uid, gid_t gid), (path, uid, gid), CF_W_META,       \
	  (AT_FDCWD, path), (AT_FDCWD, NULL))                                                      \
	X(lchown, int, (const char *path, uid_t uid, gid_t gid), (path, uid, gid), CF_W_META,      \
	  (AT_FDCWD, path), (AT_FDCWD, NULL))                                                      \
	X(fchownat, int, (int dirfd, const char *path, uid_t uid, gid_t gid, int flags),           \
	  (dirfd, path, uid, gid, flags), CF_W_META, (dirfd, path), (AT_FDCWD, NULL))              \
	X(truncate, int, (const char *path, off_t len), (path, len), CF_W_WRITE,                   \
	  (AT_FDCWD, path), (AT_FDCWD, NULL))                                                      \
	X(truncate64, int, (const char *path, off64_t len), (path, len), CF_W_WRITE,               \
	  (AT_FDCWD, path), (AT_FDCWD, NULL))                                                      \
	X(utimensat, int, (int dirfd, const char *path, const struct timespec times[2], int flags), \
	  (dirfd, path, times, flags), CF_W_META, (dirfd, path), (AT_FDCWD, NULL))                 \
	X(utimes, int, (const char *path, const struct timeval times[2]), (path, times),           \
	  CF_W_META, (AT_FDCWD, path), (AT_FDCWD, NULL))                                           \
	X(utime, int, (const char *path, const struct utimbuf *times), (path, times), CF_W_META,   \
	  (AT_FDCWD, path), (AT_FDCWD, NULL))

/* A row's name and a semicolon, for the version scripts; a row that makes
 * nothing. */
#define CF_ROW_NAME(...) CF_ROW_FIRST_(__VA_ARGS__, ~);
#define CF_ROW_FIRST_(name, ...) name
#define CF_ROW_NONE(...)

#endif
