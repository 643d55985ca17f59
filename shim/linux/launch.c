/* posix_spawn's work, done by the shim in harness mode: a child of our own
 * (clone with CLONE_VM|CLONE_VFORK, as glibc's posix_spawn makes it) that
 * fences itself, applies the attributes and file actions, and execs.
 *
 * Why not the real posix_spawn from a fenced thread: the child would then
 * share that thread's Landlock domain, and Landlock lets a domain trace its
 * own members, so the child could read and write the harness's memory through
 * the thread (/proc/PPID/task/TID/mem, pidfd_getfd, process_vm_writev). A
 * child that restricts itself gets a domain of its own, which no thread of
 * the free harness is in.
 *
 * The child runs on its own stack, shares the harness's memory and has every
 * signal blocked: raw syscalls, stack memory and read-only use of what the
 * parent prepared, nothing else. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "envsnap.h"
#include "launch.h"
#include "nolibc.h"
#include "real.h"
#include "shim.h"
#include "sys.h"


extern char **environ;

#define CF_LAUNCH_STACK (512 * 1024)

/* Under ThreadSanitizer (the build-tsan run of scripts/test): its clone
 * interceptor supports no CLONE_VM. It detaches the calling thread's state
 * before the call and attaches it again in the child and in the parent, and
 * with shared memory the two attach the same state (a CHECK failure in
 * tsan_rtl.cpp). The child below borrows the calling thread, which is blocked
 * until the exec (CLONE_VFORK), as glibc's posix_spawn does, so libc's own
 * clone is called, past the interceptor, as glibc calls its own. */
#if defined(__SANITIZE_THREAD__)
#define CF_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CF_TSAN 1
#endif
#endif
typedef int clone_fn(int (*)(void *), void *, int, void *, ...);
static clone_fn *clone_call(void)
{
#ifdef CF_TSAN
	/* In the parent, before the clone: normal context. */
	static struct {
		clone_fn *clone;
	} tsan_real;
	clone_fn *libc = CF_REAL(tsan_real, clone, CF_RESOLVE);
	if (libc)
		return libc;
#endif
	return clone;
}
#define CF_SIGSET_BYTES 8 /* the kernel's sigset_t */

/* glibc's posix_spawn_file_actions_t points at an array of these (its
 * spawn_int.h; the tags only ever grew at the end). Decoded in the parent,
 * checked there, read in the child. */
struct glibc_action {
	enum {
		ACT_CLOSE,
		ACT_DUP2,
		ACT_OPEN,
		ACT_CHDIR,
		ACT_FCHDIR,
		ACT_CLOSEFROM,
		ACT_TCSETPGRP,
		ACT_KNOWN
	} tag;
	union {
		struct {
			int fd;
		} close;
		struct {
			int fd, newfd;
		} dup2;
		struct {
			int fd;
			char *path;
			int oflag;
			mode_t mode;
		} open;
		struct {
			char *path;
		} chdir;
		struct {
			int fd;
		} fchdir;
		struct {
			int from;
		} closefrom;
		struct {
			int fd;
		} tcsetpgrp;
	} u;
};

/* The kernel's struct sigaction (x86_64 and aarch64 both have sa_restorer). */
struct k_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

struct launch {
	const char *file;
	bool search;          /* posix_spawnp: look FILE up in PATH */
	const char *path_var; /* the caller's PATH, for the search */
	const char *program;  /* for the log: FILE as the search will find it */
	const struct glibc_action *acts;
	int n_acts;
	short flags;
	pid_t pgroup;
	int policy;
	struct sched_param param;
	sigset_t sigdefault, sigmask, oldmask;
	char *const *argv, *const *envp;
	const struct cf_fence *fence; /* borrowed from the cache, or the launch's own */
	bool checked;
	int err; /* the child's errno when it could not exec, 0 when it did */
};

static bool in_set(const sigset_t *s, int sig)
{
	const unsigned long *w = (const unsigned long *)s;
	unsigned bits = 8 * sizeof *w;
	return (w[(sig - 1) / bits] >> ((sig - 1) % bits)) & 1;
}

/* A handler of the harness must never run in the child: it would run on the
 * harness's memory. Each caught signal goes back to its default (as exec
 * would do anyway); those the attributes name too. */
static void reset_signals(const struct launch *l)
{
	struct k_sigaction dfl = {0}, old;
	for (int sig = 1; sig < 65; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		bool reset = (l->flags & POSIX_SPAWN_SETSIGDEF) && in_set(&l->sigdefault, sig);
		if (!reset) {
			if (cf_sys4(SYS_rt_sigaction, sig, NULL, &old, CF_SIGSET_BYTES))
				continue;
			reset = old.handler != SIG_IGN && old.handler != SIG_DFL;
		}
		if (reset)
			(void)cf_sys4(SYS_rt_sigaction, sig, &dfl, NULL, CF_SIGSET_BYTES);
	}
}

/* The attributes that change the process itself, in glibc's order. */
static int apply_attributes(const struct launch *l)
{
	long rc = 0;
	if ((l->flags & POSIX_SPAWN_SETSCHEDULER))
		rc = cf_sys3(SYS_sched_setscheduler, 0, l->policy, &l->param);
	else if ((l->flags & POSIX_SPAWN_SETSCHEDPARAM))
		rc = cf_sys2(SYS_sched_setparam, 0, &l->param);
	if (!rc && (l->flags & POSIX_SPAWN_SETSID))
		rc = cf_sys0(SYS_setsid) < 0 ? -EPERM : 0;
	if (!rc && (l->flags & POSIX_SPAWN_SETPGROUP))
		rc = cf_sys2(SYS_setpgid, 0, l->pgroup);
	if (!rc && (l->flags & POSIX_SPAWN_RESETIDS)) {
		rc = cf_sys1(SYS_setgid, cf_sys0(SYS_getgid));
		if (!rc)
			rc = cf_sys1(SYS_setuid, cf_sys0(SYS_getuid));
	}
	return rc < 0 ? (int)rc : 0;
}

static bool fd_in_range(int fd)
{
	struct rlimit lim;
	if (fd < 0)
		return false;
	if (cf_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &lim))
		return true;
	return (rlim_t)fd < lim.rlim_cur;
}

static int apply_action(const struct glibc_action *a)
{
	long rc = 0;
	switch (a->tag) {
	case ACT_CLOSE:
		/* As glibc: an error is one only for a descriptor out of range. */
		if (cf_sys_close(a->u.close.fd) && !fd_in_range(a->u.close.fd))
			rc = -EBADF;
		break;
	case ACT_OPEN: {
		(void)cf_sys_close(a->u.open.fd); /* POSIX: closed before the open */
		long fd = cf_sys4(SYS_openat, AT_FDCWD, a->u.open.path, a->u.open.oflag, a->u.open.mode);
		if (fd < 0 || fd == a->u.open.fd) {
			rc = fd < 0 ? fd : 0;
			break;
		}
		rc = cf_sys3(SYS_dup3, fd, a->u.open.fd, 0);
		(void)cf_sys_close((int)fd);
		rc = rc < 0 ? rc : 0;
		break;
	}
	case ACT_DUP2:
		if (a->u.dup2.fd != a->u.dup2.newfd) {
			rc = cf_sys3(SYS_dup3, a->u.dup2.fd, a->u.dup2.newfd, 0);
		} else {
			/* dup2 onto itself: the descriptor is kept across exec. */
			rc = cf_sys2(SYS_fcntl, a->u.dup2.fd, F_GETFD);
			if (rc >= 0)
				rc = cf_sys3(SYS_fcntl, a->u.dup2.fd, F_SETFD, rc & ~FD_CLOEXEC);
		}
		rc = rc < 0 ? rc : 0;
		break;
	case ACT_CHDIR:
		rc = cf_sys1(SYS_chdir, a->u.chdir.path);
		break;
	case ACT_FCHDIR:
		rc = cf_sys1(SYS_fchdir, a->u.fchdir.fd);
		break;
	case ACT_CLOSEFROM:
		rc = cf_sys3(SYS_close_range, a->u.closefrom.from, ~0U, 0);
		break;
	case ACT_TCSETPGRP: {
		pid_t pgrp = (pid_t)cf_sys1(SYS_getpgid, 0);
		rc = cf_sys3(SYS_ioctl, a->u.tcsetpgrp.fd, TIOCSPGRP, &pgrp);
		break;
	}
	default:
		rc = -EINVAL; /* refused in the parent already */
	}
	return (int)rc;
}

/* execvp's search, without its shell fallback (as glibc's posix_spawnp):
 * the first entry that execs wins; EACCES is remembered, "not here" errors
 * go on to the next entry, anything else ends the search. */
static int exec_search(const struct launch *l, char *const *env)
{
	const char *f = l->file;
	size_t fl = cf_nl_strlen(f);
	bool slash = false;
	for (size_t i = 0; i < fl; i++)
		slash = slash || f[i] == '/';
	if (!l->search || !*f || slash)
		return (int)cf_sys3(SYS_execve, f, l->argv, env);
	bool eacces = false;
	char buf[PATH_MAX];
	for (const char *p = l->path_var; p;) {
		if (!cf_nl_path_next(&p, f, fl, buf, sizeof buf))
			continue;
		long rc = cf_sys3(SYS_execve, buf, l->argv, env);
		if (rc == -EACCES)
			eacces = true;
		else if (rc != -ENOENT && rc != -ENOTDIR && rc != -ESTALE && rc != -ENODEV &&
			 rc != -ETIMEDOUT)
			return (int)rc;
	}
	return eacces ? -EACCES : -ENOENT;
}

/* The file actions, after the fence: the child runs them fenced. */
static int run_actions(const struct cf_child *c)
{
	const struct launch *l = c->arg;
	int rc = 0;
	for (int i = 0; !rc && i < l->n_acts; i++)
		rc = apply_action(&l->acts[i]);
	return rc;
}

static int exec_call(const struct cf_child *c, char *const env[])
{
	return exec_search(c->arg, env);
}

static int child(void *p)
{
	struct launch *l = p;
	reset_signals(l);
	int rc = apply_attributes(l);
	if (!rc) {
		/* Followed as what the search found, when it holds a slash or no
		 * search was made (child.c, cf_shim_follows). */
		bool slash = false;
		for (const char *s = l->program; *s; s++)
			slash = slash || *s == '/';
		rc = cf_shim_child_call(&(struct cf_child){
			.dirfd = AT_FDCWD,
			.path = slash || !l->search ? l->program : NULL,
			.program = l->program,
			.argv = l->argv,
			.envp = l->envp,
			.fence = l->fence,
			.checked = l->checked,
			.sigmask = (l->flags & POSIX_SPAWN_SETSIGMASK) ? &l->sigmask : &l->oldmask,
			.ready = run_actions,
			.call = exec_call,
			.arg = l,
		});
	}
	l->err = rc < 0 ? -rc : ECHILD;
	return 127;
}

/* The attributes, read through the public getters. */
static int read_attributes(struct launch *l, const posix_spawnattr_t *attr)
{
	static const short known = POSIX_SPAWN_RESETIDS | POSIX_SPAWN_SETPGROUP |
				   POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
				   POSIX_SPAWN_SETSCHEDPARAM | POSIX_SPAWN_SETSCHEDULER |
				   POSIX_SPAWN_USEVFORK | POSIX_SPAWN_SETSID;
	if (!attr)
		return 0;
	posix_spawnattr_getflags(attr, &l->flags);
	if (l->flags & ~known)
		return EINVAL; /* a flag this shim can not honour (a cgroup): refuse */
	posix_spawnattr_getpgroup(attr, &l->pgroup);
	posix_spawnattr_getsigdefault(attr, &l->sigdefault);
	posix_spawnattr_getsigmask(attr, &l->sigmask);
	posix_spawnattr_getschedpolicy(attr, &l->policy);
	posix_spawnattr_getschedparam(attr, &l->param);
	return 0;
}

static int read_actions(struct launch *l, const posix_spawn_file_actions_t *fa)
{
	if (!fa || fa->__used <= 0)
		return 0;
#ifdef __GLIBC__
	l->acts = (const struct glibc_action *)fa->__actions;
	l->n_acts = fa->__used;
	for (int i = 0; i < l->n_acts; i++)
		if ((unsigned)l->acts[i].tag >= ACT_KNOWN)
			return ENOTSUP; /* an action newer than this shim: run nothing */
	return 0;
#else
	return ENOTSUP;
#endif
}

static int spawn(struct launch *l, pid_t *pid, int *pidfd);

int cf_shim_launch(pid_t *pid, int *pidfd, const char *file, bool search,
		   const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		   char *const argv[], char *const envp[])
{
	struct launch l = {.file = file, .program = file, .search = search, .argv = argv, .envp = envp};
	char found[PATH_MAX];
	int err = read_attributes(&l, attr);
	if (!err)
		err = read_actions(&l, fa);
	if (err)
		return err;
	if (search) {
		l.path_var = getenv("PATH");
		if (!l.path_var)
			l.path_var = "/bin:/usr/bin";
		l.program = cf_shim_which(file, l.path_var, found, sizeof found);
	}
	struct cf_fence_loan loan = cf_shim_fence_lend();
	const struct cf_envsnap *snap = cf_shim_snap();
	if (snap && snap->fence == loan.fence && cf_envsnap_same(snap, envp)) {
		l.fence = loan.fence;
		l.checked = loan.current;
		return spawn(&l, pid, pidfd);
	}
	/* A child whose environment moves a secret elsewhere than the harness's
	 * gets a fence built from its own: here, before the launch, it can be.
	 * This launch owns it. */
	struct cf_fence *own = cf_fence_new();
	int rc = own ? cf_fence_prepare(own, cf_shim_harness_options(), envp, NULL) : -ENOMEM;
	if (rc == 0) {
		l.fence = own;
		l.checked = cf_fence_ready(own) && !cf_fence_racy(own);
		err = spawn(&l, pid, pidfd);
	} else {
		err = -rc;
	}
	cf_fence_destroy(own);
	return err;
}

static int spawn(struct launch *l, pid_t *pid, int *pidfd)
{
	int err;

	long page = sysconf(_SC_PAGESIZE);
	size_t size = CF_LAUNCH_STACK + (size_t)page;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			   -1, 0);
	if (stack == MAP_FAILED)
		return errno;
	(void)mprotect(stack, (size_t)page, PROT_NONE); /* a guard below the stack */

	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &l->oldmask);
	int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | (pidfd ? CLONE_PIDFD : 0);
	int fdout = -1;
	pid_t c = clone_call()(child, stack + size, flags, l, pidfd ? &fdout : NULL);
	err = c < 0 ? errno : l->err;
	pthread_sigmask(SIG_SETMASK, &l->oldmask, NULL);
	munmap(stack, size);

	if (c > 0 && err) {
		/* It exited without exec: reap it, as posix_spawn does. */
		while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
			;
		if (fdout >= 0)
			close(fdout);
	}
	if (err)
		return err;
	if (pidfd)
		*pidfd = fdout;
	else if (pid)
		*pid = c;
	return 0;
}
