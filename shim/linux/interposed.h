/* The calls the shim interposes on Linux, as lists: the one place each name
 * is written. A list is a macro that calls its arguments once a row
 * (X-macros); from the rows come the tables of real functions (real.h).
 * This file holds macros only, and includes nothing: the types in the rows
 * are mere words until a C file that has their headers expands them. */
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

/* A row that makes nothing. */
#define CF_ROW_NONE(...)

#endif
