/* system(), popen() and pclose() in the harness. glibc spawns their shell
 * through internal calls that no interposed symbol sees, so each is made here
 * as glibc makes it, on the shim's own launch (launch.c): the shell fences
 * itself before it runs. Outside the harness the real calls run. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "real.h"
#include "shim.h"
#include "sys.h"

extern char **environ;

#define SHELL_PATH "/bin/sh"

static pid_t wait_for(pid_t pid, int *status)
{
	pid_t r;
	while ((r = waitpid(pid, status, 0)) < 0 && errno == EINTR)
		;
	return r;
}

/* Threads calling system() at once share one "SIGINT and SIGQUIT ignored"
 * period: the last one out restores them (as glibc does). */
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned sig_users;
static struct sigaction saved_int, saved_quit;

static int run_shell(const char *cmd)
{
	struct sigaction ign = {.sa_handler = SIG_IGN};
	sigset_t chld, old, reset;
	posix_spawnattr_t attr;
	pid_t pid;
	int status = -1;

	sigemptyset(&ign.sa_mask);
	pthread_mutex_lock(&sig_lock);
	if (sig_users++ == 0) {
		sigaction(SIGINT, &ign, &saved_int);
		sigaction(SIGQUIT, &ign, &saved_quit);
	}
	pthread_mutex_unlock(&sig_lock);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);

	/* The shell gets back the dispositions the caller had. */
	sigemptyset(&reset);
	if (saved_int.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGINT);
	if (saved_quit.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGQUIT);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &old);
	posix_spawnattr_setsigdefault(&attr, &reset);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	char *argv[] = {"sh", "-c", "--", cf_unconst(cmd), NULL};
	int err = cf_shim_launch(&pid, NULL, SHELL_PATH, false, NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	if (!err && wait_for(pid, &status) != pid)
		status = -1;

	pthread_mutex_lock(&sig_lock);
	if (--sig_users == 0) {
		sigaction(SIGINT, &saved_int, NULL);
		sigaction(SIGQUIT, &saved_quit, NULL);
	}
	pthread_mutex_unlock(&sig_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		/* A launch refused by the fence reads as system() failing (EPERM),
		 * not as a shell that ran and said 127. */
		errno = err;
		return -1;
	}
	return status;
}

/* Before the constructor (cf_shim_early_gate), only a fenced process may
 * start a shell. */
static int early_refusal(void)
{
	int rc = cf_shim_early() ? cf_shim_early_gate(SHELL_PATH) : 0;
	if (rc)
		errno = -rc;
	return rc;
}

CF_EXPORT int system(const char *cmd)
{
	if (early_refusal())
		return cmd ? -1 : 0; /* system(NULL): no shell to be had */
	if (cf_shim.role != CF_ROLE_HARNESS) {
		int (*real)(const char *) = CF_REAL(cf_real_launch, system, CF_RESOLVE);
		if (!real) {
			errno = ENOSYS;
			return -1;
		}
		return real(cmd);
	}
	if (!cmd)
		return run_shell("exit 0") == 0;
	return run_shell(cmd);
}

/* The streams popen() made, for pclose() and so that each later child closes
 * them (POSIX asks it of popen). */
struct popened {
	FILE *fp;
	int fd;
	pid_t pid;
	struct popened *next;
};
static pthread_mutex_t popen_lock = PTHREAD_MUTEX_INITIALIZER;
static struct popened *popened;

static int parse_mode(const char *mode, bool *reading, bool *cloexec)
{
	if (!mode || (mode[0] != 'r' && mode[0] != 'w'))
		return EINVAL;
	*reading = mode[0] == 'r';
	*cloexec = false;
	for (const char *m = mode + 1; *m; m++) {
		if (*m != 'e')
			return EINVAL;
		*cloexec = true;
	}
	return 0;
}

/* Under popen_lock: the shell on one end of FDS, every earlier popen stream
 * closed in it. */
static int spawn_piped(const char *cmd, int child_end, int child_std, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int err = posix_spawn_file_actions_init(&fa);
	if (err)
		return err;
	/* dup2 onto itself clears close-on-exec, which pipe2 set. */
	err = posix_spawn_file_actions_adddup2(&fa, child_end, child_std);
	for (struct popened *p = popened; !err && p; p = p->next)
		if (p->fd != child_std)
			err = posix_spawn_file_actions_addclose(&fa, p->fd);
	char *argv[] = {"sh", "-c", "--", cf_unconst(cmd), NULL};
	if (!err)
		err = cf_shim_launch(pid, NULL, SHELL_PATH, false, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return err;
}

static FILE *open_piped(const char *cmd, const char *mode)
{
	bool reading, cloexec;
	int fds[2], err = parse_mode(mode, &reading, &cloexec);
	struct popened *rec = NULL;
	FILE *fp = NULL;
	pid_t pid;

	if (err || !(rec = malloc(sizeof *rec))) {
		errno = err ? err : ENOMEM;
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		free(rec);
		return NULL;
	}
	int parent_end = reading ? fds[0] : fds[1];
	int child_end = reading ? fds[1] : fds[0];
	int child_std = reading ? STDOUT_FILENO : STDIN_FILENO;
	if (parent_end == child_std) {
		/* stdin or stdout was closed: keep our end out of the child's way. */
		int moved = fcntl(parent_end, F_DUPFD_CLOEXEC, 3);
		close(parent_end);
		parent_end = moved;
	}
	pthread_mutex_lock(&popen_lock);
	err = parent_end < 0 ? errno : spawn_piped(cmd, child_end, child_std, &pid);
	close(child_end);
	if (!err && !cloexec)
		fcntl(parent_end, F_SETFD, 0);
	if (!err && !(fp = fdopen(parent_end, reading ? "r" : "w"))) {
		err = errno;
		close(parent_end);
		wait_for(pid, NULL);
	} else if (err && parent_end >= 0) {
		close(parent_end);
	}
	if (fp) {
		*rec = (struct popened){fp, parent_end, pid, popened};
		popened = rec;
		rec = NULL;
	}
	pthread_mutex_unlock(&popen_lock);
	free(rec);
	if (!fp)
		errno = err;
	return fp;
}

CF_EXPORT FILE *popen(const char *cmd, const char *mode)
{
	if (early_refusal())
		return NULL;
	if (cf_shim.role != CF_ROLE_HARNESS) {
		FILE *(*real)(const char *, const char *) = CF_REAL(cf_real_launch, popen, CF_RESOLVE);
		if (!real) {
			errno = ENOSYS;
			return NULL;
		}
		return real(cmd, mode);
	}
	return open_piped(cmd, mode);
}

CF_EXPORT int pclose(FILE *fp)
{
	struct popened *rec = NULL;
	pthread_mutex_lock(&popen_lock);
	for (struct popened **p = &popened; *p; p = &(*p)->next)
		if ((*p)->fp == fp) {
			rec = *p;
			*p = rec->next;
			break;
		}
	pthread_mutex_unlock(&popen_lock);
	if (!rec) {
		int (*real)(FILE *) = CF_REAL(cf_real_launch, pclose, CF_RESOLVE);
		if (!real) {
			errno = ENOSYS;
			return -1;
		}
		return real(fp);
	}
	int status = -1;
	fclose(fp);
	if (wait_for(rec->pid, &status) != rec->pid)
		status = -1;
	free(rec);
	return status;
}
