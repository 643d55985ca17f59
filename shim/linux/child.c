/* The moment between fork and exec, in a child of the harness. Only raw
 * syscalls, stack memory, and read-only use of the prepared fence: the child
 * may be a vfork child sharing the memory of a multithreaded parent. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "envsnap.h"
#include "event.h"
#include "follow.h"
#include "json.h"
#include "nolibc.h"
#include "protocol.h"
#include "secret_env.h"
#include "secrets.h"
#include "shim.h"
#include "sys.h"

/* The status line for a failure RC of cf_fence_enter: the fence's words. */
void cf_shim_reason(const struct cf_fence *f, int rc, const struct cf_expand_result *res,
		    char *out, size_t cap)
{
	cf_fence_words(f, rc, res, out, cap);
}

/* One line on stderr with raw write. */
void cf_shim_say(const char *reason, const char *tail)
{
	struct {
		const char *p;
		size_t n;
	} iov[3] = {{"credfence: ", 11}, {reason, cf_nl_strlen(reason)}, {tail, cf_nl_strlen(tail)}};
	(void)cf_sys3(SYS_writev, 2, iov, 3);
}

/* The harness's descriptors in this fenced child (fence.h,
 * cf_fence_close_parents_fds): F's, and those of the namespace of the
 * harness's children (cf_fence_harness_ns_fds), whose numbers fdkeep.c
 * spares from a close_range. */
static void close_harness_fds(const struct cf_fence *f)
{
	/* Only in a table of this child's own (it made it so). */
	if (cf_fence_close_parents_fds(f) != 0)
		return;
	cf_fence_harness_ns_close_copies();
	int w[4];
	for (int i = 0; i < 4; i++)
		w[i] = __atomic_load_n(&cf_shim.watch_fds[i], __ATOMIC_ACQUIRE);
	cf_fence_close_watch_copies(w);
}

/* Fence the calling thread for PROGRAM and report. 1 when fenced, 0 when it
 * goes on unfenced (best effort), -EPERM when it must not run. CHECKED: the
 * caller verified in normal context that F is current. The log, opened
 * before the fence goes up, also gets the env_withheld line for ENVP. */
int cf_shim_fence_thread_env(const struct cf_fence *f, const char *program, bool checked,
			     const struct cf_child_env *ce)
{
	const struct cf_policy *pol = cf_fence_policy(f);
	char buf[8192], reason[1024 + PATH_MAX], lostwhy[1024];
	struct cf_expand_result res = {0};
	/* Opened before the namespace: the log lies outside every writable
	 * location, read-only in it. */
	int logfd = cf_fence_log_open(f);
	/* The harness saw its supervisor end: nothing is handed to whatever
	 * holds its address now, and nothing runs unfenced for it. */
	bool ended = __atomic_load_n(&cf_shim.supervisor_ended, __ATOMIC_ACQUIRE);
	struct cf_fence_ns_state ns = {NULL, 0, NULL};
	int rc = !cf_fence_ready(f) ? -EPERM
		 : ended   ? -CF_FENCE_SUPERVISOR_ENDED
			   : cf_fence_harness_ns_enter(f, &ns, reason, sizeof reason, lostwhy,
						       sizeof lostwhy);
	bool in_ns = rc > 0;
	if (in_ns && reason[0])
		cf_shim_say(reason, "\n"); /* a path lost: the warning */
	if (in_ns)
		rc = 0;
	if (!rc)
		rc = in_ns ? cf_fence_enter_in_ns(f, checked, buf, sizeof buf, &res)
		     : checked ? cf_fence_enter_checked(f, buf, sizeof buf, &res)
			       : cf_fence_enter(f, buf, sizeof buf, &res);
	else if (rc == -CF_FENCE_NS_REFUSED)
		goto refused; /* worded by cf_fence_harness_ns_enter */
	if (rc == -CF_FENCE_SUPERVISOR_ENDED && !ended)
		cf_shim_supervisor_ended_log(f, logfd); /* found here first: a vfork child, a raw clone */
	if (rc)
		cf_shim_reason(f, rc, &res, reason, sizeof reason);
refused:;
	pid_t pid = (pid_t)cf_sys0(SYS_getpid);
	cf_fence_log_ns(f, &ns, logfd, pid, program, rc == 0, rc == 0 ? CF_STATUS_APPLIED : reason,
			rc == 0 ? res.rules : 0, buf, sizeof buf);
	/* Only with a log: without one, the line's writer (common/event.c)
	 * would return at once, and the child need not walk it. */
	if (logfd >= 0 && ce && (rc == 0 || pol->mode == CF_MODE_BEST_EFFORT)) {
		if (ce->judged)
			(void)cf_event_withheld_write(logfd, pid, program, ce->out + ce->kept + 1,
						      ce->withheld, buf, sizeof buf);
		else
			(void)cf_event_env_write(logfd, pid, program, ce->envp, cf_env_rules(), buf,
						 sizeof buf);
	}
	if (logfd >= 0)
		cf_sys_close(logfd);
	if (rc == 0) {
		/* The harness's own descriptors, which this child carries until
		 * its exec: gone now, for a child that goes on without one (bash
		 * runs a script with no #! in it). */
		if (cf_shim_harness_child())
			close_harness_fds(f);
		return 1;
	}
	if (pol->mode == CF_MODE_BEST_EFFORT && rc != -CF_FENCE_NS_REFUSED &&
	    !cf_fence_refuses_always(f, rc))
		return 0;
	cf_shim_say(reason, ". Nothing was run.\n");
	/* This stderr is the harness's, which shows it to the model: the
	 * user's terminal is the supervisor's to write. */
	if (rc == -CF_FENCE_NS_REFUSED)
		cf_fence_tell_user(f, program, reason);
	return -EPERM;
}

int cf_shim_fence_thread(const struct cf_fence *f, const char *program, bool checked)
{
	return cf_shim_fence_thread_env(f, program, checked, NULL);
}

bool cf_shim_harness_child(void)
{
	return cf_shim.role == CF_ROLE_HARNESS && cf_sys0(SYS_getpid) != cf_shim.harness_pid;
}

int cf_shim_env_too_big(void)
{
	cf_shim_say("this child's environment has more than 4096 variables", "; credfence can not "
		    "withhold the secret ones among them. Nothing was run.\n");
	return -E2BIG;
}

long long cf_shim_now_ns(void)
{
	struct timespec t;
	if (cf_sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &t))
		return 0;
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* X_OK as exec judges it (the effective ids, where the kernel has
 * faccessat2): 0 or -errno. Raw syscalls only. */
int cf_shim_can_exec(const char *path)
{
	long rc = -ENOSYS;
#ifdef SYS_faccessat2
	rc = cf_sys4(SYS_faccessat2, AT_FDCWD, path, X_OK, AT_EACCESS);
#endif
	if (rc == -ENOSYS)
		rc = cf_sys3(SYS_faccessat, AT_FDCWD, path, X_OK);
	return (int)rc;
}

bool cf_shim_exec_would_fail(const char *path, int *err)
{
	int rc = cf_shim_can_exec(path);
	if (rc != -ENOENT && rc != -ENOTDIR && rc != -EACCES)
		return false;
	*err = -rc;
	return true;
}

const char *cf_shim_which(const char *file, const char *path_var, char *buf, size_t cap)
{
	size_t fl = cf_nl_strlen(file);
	for (size_t i = 0; i < fl; i++)
		if (file[i] == '/')
			return file;
	if (!fl || !path_var)
		return file;
	for (const char *p = path_var; p;)
		if (cf_nl_path_next(&p, file, fl, buf, cap) && cf_shim_can_exec(buf) == 0)
			return buf;
	return file;
}

/* ---- The environment against the fence's snapshot (envsnap.h) ----
 * Whether a child's environment moves a secret elsewhere than the harness's
 * fence saw: then it needs a fence of its own (a relaunch). The snapshot is
 * taken in the parent (fence_cache.c). */

/* Names whose value moves a secret. The policy reads HOME and
 * XDG_CONFIG_HOME besides the table's own variables. */
bool cf_envsnap_moves_secret(const char *e, size_t namelen)
{
	if ((namelen == 4 && !strncmp(e, "HOME", 4)) ||
	    (namelen == 15 && !strncmp(e, "XDG_CONFIG_HOME", 15)))
		return true;
	for (size_t i = 0; i < cf_secret_count; i++) {
		const char *v = cf_secret_table[i].env;
		if (v && strlen(v) == namelen && !strncmp(e, v, namelen))
			return true;
	}
	return false;
}

static bool eq_name(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return b[n] == '=';
}

static const char *find(char *const v[], size_t n, const char *e, size_t k)
{
	for (size_t i = 0; v && (n ? i < n : v[i] != NULL); i++)
		if (eq_name(e, v[i], k))
			return v[i];
	return NULL;
}

bool cf_envsnap_moves(const struct cf_envsnap *s, const char *e)
{
	/* Each variable the child sets must be in S with the same value. One
	 * that it leaves unset moves nothing: the secret's default location and
	 * the harness's own setting are denied by the harness's fence anyway. */
	size_t k = cf_env_name_len(e);
	if (!e[k] || !e[k + 1] || !cf_envsnap_moves_secret(e, k))
		return false;
	const char *t = find(s->moves, s->n_moves, e, k);
	return !t || !cf_nl_streq(t, e);
}

const char *cf_envsnap_first_change(const struct cf_envsnap *s, char *const envp[])
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (cf_envsnap_moves(s, envp[i]))
			return envp[i];
	return NULL;
}

bool cf_envsnap_same(const struct cf_envsnap *s, char *const envp[])
{
	return cf_envsnap_first_change(s, envp) == NULL;
}

/* ---- Before the constructor ----
 * Calls that reach the shim before its constructor has decided this
 * process's role. The constructor of libcredfence.so runs after those of the
 * libraries the program itself needs, and a program's IFUNC resolvers and
 * malloc run before any constructor: Claude Code 2.1.332 calls syscall() from
 * its own malloc while the shim's constructor is still resolving the real
 * functions. So nothing here needs the constructor's work: raw system calls
 * and stack memory, which also covers a vfork child, a signal handler and a
 * thread started before the constructor. (The exec family's real calls,
 * exec.c, need nothing resolved either.) */

bool cf_shim_early(void)
{
	return !__atomic_load_n(&cf_shim.ready, __ATOMIC_ACQUIRE);
}

/* Before the role is decided, a child can be neither fenced at its launch
 * (the harness's fence is not prepared) nor left to fence itself (a program
 * that drops LD_PRELOAD or is static would not): only a process that is
 * fenced already may start one, since its child inherits the fence. */
int cf_shim_early_gate(const char *program)
{
	if (cf_fence_fenced())
		return 0;
	cf_shim_say(program ? program : "a program",
		    " was to be started before credfence's shim had set up this process (from "
		    "a library's constructor or an IFUNC resolver), while the process is not "
		    "fenced yet: refused; start it from main() or run the program under "
		    "`credfence run`. Nothing was run.\n");
	return -EPERM;
}

/* ---- The harness again ----
 * A child that runs the harness again (its relaunch, a --harness-program) is
 * executed as the harness, unfenced, by the rules the constructor learnt
 * (follow.c, which says why they are safe). */

bool cf_shim_file_id(int dirfd, const char *path, int flags, struct cf_file_id *id,
		     bool *regular)
{
	struct statx sx;
	if (cf_sys5(SYS_statx, dirfd, path, flags, STATX_TYPE | STATX_INO, &sx))
		return false;
	id->maj = sx.stx_dev_major;
	id->min = sx.stx_dev_minor;
	id->ino = sx.stx_ino;
	*regular = S_ISREG(sx.stx_mode);
	return true;
}

static bool same_id(const struct cf_file_id *a, const struct cf_file_id *b)
{
	return a->maj == b->maj && a->min == b->min && a->ino == b->ino;
}

static bool is_opt_entry(const char *e)
{
	return cf_nl_has_prefix(e, "CREDFENCE_");
}

static bool is_preload_entry(const char *e)
{
	return cf_nl_has_prefix(e, CF_PRELOAD_EQ);
}

const char *cf_shim_first_operand(char *const argv[])
{
	if (!argv || !argv[0])
		return NULL;
	for (size_t i = 1; argv[i]; i++) {
		if (cf_nl_streq(argv[i], "--"))
			return argv[i + 1];
		if (argv[i][0] != '-' || !argv[i][1])
			return argv[i];
	}
	return NULL;
}

/* Whether the file FD (O_PATH) with ARGV is the harness again. */
static bool matches(int fd, char *const argv[])
{
	const struct cf_follow *fl = &cf_shim_follow;
	struct cf_file_id id;
	bool regular;
	if (!cf_shim_file_id(fd, "", AT_EMPTY_PATH, &id, &regular) || !regular)
		return false;
	for (size_t i = 0; i < fl->n_programs; i++)
		if (same_id(&id, &fl->programs[i]))
			return true;
	if (!fl->interpreted || !same_id(&id, &fl->exe))
		return false;
	const char *s = cf_shim_first_operand(argv);
	if (!s)
		return false;
	if (s[0] == '/')
		return cf_nl_streq(s, fl->script_abs) || cf_nl_streq(s, fl->script_canon);
	/* Relative: taken from the child's own directory, as the interpreter will. */
	char abs[PATH_MAX * 2];
	long n = cf_sys2(SYS_getcwd, abs, PATH_MAX);
	size_t sl = cf_nl_strlen(s);
	if (n <= 0 || (size_t)n - 1 + 1 + sl + 1 > sizeof abs)
		return false;
	size_t at = (size_t)n - 1; /* the kernel counts the NUL */
	abs[at++] = '/';
	for (size_t i = 0; i <= sl; i++)
		abs[at + i] = s[i];
	return cf_nl_streq(abs, fl->script_abs);
}

/* O_PATH descriptor of DIRFD/PATH as execveat(FLAGS) would take it, or -errno. */
static int open_target(int dirfd, const char *path, int flags)
{
	if ((flags & AT_EMPTY_PATH) && path && !*path)
		return (int)cf_sys3(SYS_fcntl, dirfd, F_DUPFD_CLOEXEC, 0);
	int o = O_PATH | O_CLOEXEC | ((flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0);
	return (int)cf_sys4(SYS_openat, dirfd, path, o, 0);
}

bool cf_shim_follows(int dirfd, const char *path, int flags, char *const argv[])
{
	const struct cf_follow *fl = &cf_shim_follow;
	if (!fl->any || cf_shim.role != CF_ROLE_HARNESS || !path ||
	    cf_sys0(SYS_getpid) == cf_shim.harness_pid)
		return false;
	int fd = open_target(dirfd, path, flags);
	if (fd < 0)
		return false;
	bool yes = matches(fd, argv) && !cf_fence_fenced();
	cf_sys_close(fd);
	return yes;
}

int cf_shim_exec_if_harness(int dirfd, const char *path, int flags, char *const argv[],
			    char *const envp[])
{
	const struct cf_follow *fl = &cf_shim_follow;
	if (!fl->any || cf_shim.role != CF_ROLE_HARNESS || !path ||
	    cf_sys0(SYS_getpid) == cf_shim.harness_pid)
		return 0;
	int fd = open_target(dirfd, path, flags);
	if (fd < 0)
		return 0; /* the real exec says why */
	if (!matches(fd, argv) || cf_fence_fenced()) {
		cf_sys_close(fd);
		return 0;
	}
	size_t envc = cf_env_count(envp);
	char marker[64];
	if (envc + fl->n_opts + 3 > CF_CHILD_ENV_MAX || !cf_harness_marker_self(marker, sizeof marker)) {
		cf_sys_close(fd);
		return 0; /* fenced then, as any child */
	}
	/* Its own environment, less every CREDFENCE_* (the harness's options
	 * and this child's marker replace them) and less an LD_PRELOAD without
	 * the shim (the harness's own replaces it: a harness without the shim
	 * would fence nothing). */
	char *env[envc + fl->n_opts + 3];
	size_t k = 0;
	bool preload_kept = false;
	for (size_t i = 0; i < envc; i++) {
		if (is_opt_entry(envp[i]))
			continue;
		if (is_preload_entry(envp[i])) {
			if (cf_env_preload_has_shim(envp[i]) && !preload_kept) {
				env[k++] = envp[i];
				preload_kept = true;
			}
			continue;
		}
		env[k++] = envp[i];
	}
	for (size_t i = 0; i < fl->n_opts; i++)
		env[k++] = fl->opts[i];
	if (!preload_kept)
		env[k++] = fl->preload;
	env[k++] = marker;
	env[k] = NULL;
	/* The harness again keeps the namespace its children enter. */
	cf_fence_harness_ns_pass(true);
	long rc = cf_sys5(SYS_execveat, fd, "", argv, env, AT_EMPTY_PATH);
	cf_fence_harness_ns_pass(false);
	cf_sys_close(fd);
	return (int)rc;
}

/* ---- A child of the harness: fenced, relaunched or refused ---- */

/* The last refusal, so that the next exec attempt of the same launch (a
 * Python subprocess tries every PATH entry that holds the program) is refused
 * again without a second line in the log and on stderr. In a vfork child this
 * memory is the parent's: the child's pid, the fence and a short time make a
 * record that no other launch matches (a pid is not reused within it); a
 * record torn by two children at once costs at worst one more line. Only the
 * line is saved: the answer is the one the fence gave. */
static struct {
	int pid;
	const void *fence;
	long long at_ns;
	int answer;
} last_refusal;
#define CF_REFUSAL_NS 2000000000LL

static int refused_before(int pid, const struct cf_fence *f)
{
	if (__atomic_load_n(&last_refusal.pid, __ATOMIC_RELAXED) != pid ||
	    __atomic_load_n(&last_refusal.fence, __ATOMIC_RELAXED) != f ||
	    cf_shim_now_ns() - __atomic_load_n(&last_refusal.at_ns, __ATOMIC_RELAXED) > CF_REFUSAL_NS)
		return 1; /* no record: fence and report */
	return cf_fence_policy(f)->mode == CF_MODE_BEST_EFFORT ? 0 : -EPERM;
}

static int refusal(int pid, const struct cf_fence *f, int answer)
{
	if (answer <= 0) {
		__atomic_store_n(&last_refusal.at_ns, cf_shim_now_ns(), __ATOMIC_RELAXED);
		__atomic_store_n(&last_refusal.fence, f, __ATOMIC_RELAXED);
		__atomic_store_n(&last_refusal.pid, pid, __ATOMIC_RELAXED);
	}
	return answer;
}

int cf_shim_child_enter(const char *program)
{
	return cf_shim_child_enter_env(program, NULL);
}

int cf_shim_child_enter_env(const char *program, const struct cf_child_env *ce)
{
	if (cf_shim.role != CF_ROLE_HARNESS)
		return 0;
	/* The harness replacing its own image stays the harness. */
	if (cf_sys0(SYS_getpid) == cf_shim.harness_pid)
		return 0;
	/* Fenced already (a second exec attempt, or fenced by a parent). */
	if (cf_fence_fenced())
		return 1;
	const struct cf_fence *f = __atomic_load_n(&cf_shim.fence, __ATOMIC_ACQUIRE);
	int pid = (int)cf_sys0(SYS_getpid);
	int before = refused_before(pid, f);
	if (before <= 0)
		return before;
	if (ce && ce->envp) {
		/* The harness's fence was built from the harness's environment: a
		 * child whose own moves a secret (KUBECONFIG=...) needs one built
		 * from its own, which only a new process can make: credfence run. */
		const struct cf_envsnap *s = ce->snap;
		const char *moved = !s || s->fence != f ? "the environment"
				    : ce->judged    ? ce->moved
						    : cf_envsnap_first_change(s, ce->envp);
		if (moved) {
			if (s && s->launcher)
				return CF_CHILD_RELAUNCH;
			cf_shim_say(moved, " in this child's environment moves a secret away from where the "
					   "harness's fence denies it, and no credfence command is known to "
					   "fence it (CREDFENCE_LAUNCHER). Nothing was run.\n");
			return refusal(pid, f, -EPERM);
		}
	}
	bool checked = cf_shim_checked.fence == f &&
		       cf_shim_now_ns() - cf_shim_checked.at_ns < CF_CHECK_TRUST_NS;
	return refusal(pid, f, cf_shim_fence_thread_env(f, program, checked, ce));
}

/* CE's kept entries as a fenced child gets them: less the shim, in place
 * (LDBUF holds the LD_PRELOAD values without it). Only the noted entries are
 * looked at; when there were more than the notes hold, all are, once more. */
static char *const *less_shim(struct cf_child_env *ce, char *ldbuf, size_t ldcap)
{
	if (ce->n_shim > CF_ENV_SHIM_NOTES)
		return cf_env_for_child(ce->out, CF_ENV_DROP_SHIM, ce->out, ce->kept + 1, ldbuf, ldcap);
	size_t used = 0, note = 0, k = ce->n_shim ? ce->shim[0] : ce->kept;
	for (size_t i = k; i < ce->kept; i++) {
		char *e = ce->out[i];
		if (note < ce->n_shim && ce->shim[note] == i) {
			note++;
			if (!(e = cf_env_entry_less_shim(e, ldbuf, &used, ldcap)))
				continue;
		}
		ce->out[k++] = e;
	}
	ce->out[k] = NULL;
	return ce->out;
}

/* execve(LAUNCHER, [LAUNCHER, "run", "--", FILE, ARGV[1]...], ENV), ENV being
 * CE's kept entries with the harness's own CREDFENCE_* options: credfence
 * run then builds the fence from the child's environment and execs FILE
 * (searched in PATH when SEARCH; argv[0] becomes FILE). Returns -errno when
 * the exec fails. */
int cf_shim_relaunch(const char *file, bool search, char *const argv[], struct cf_child_env *ce)
{
	const struct cf_envsnap *s = cf_shim_snap();
	if (!file)
		return -EFAULT; /* as the kernel answers execve(NULL, ...) */
	size_t argc = 0;
	while (argv && argv[argc])
		argc++;
	if (!s || !s->launcher || argc > 16384 || !ce->judged)
		return -E2BIG;
	char here[PATH_MAX + 3];
	bool slash = false;
	for (const char *p = file; *p; p++)
		slash = slash || *p == '/';
	if (!search && !slash) {
		/* execve("prog") names ./prog; credfence run would search PATH. */
		size_t n = cf_nl_strlen(file);
		if (n + 3 > sizeof here)
			return -ENAMETOOLONG;
		here[0] = '.', here[1] = '/';
		for (size_t i = 0; i <= n; i++)
			here[2 + i] = file[i];
		file = here;
	}
	char *av[argc + 5];
	size_t n = 0;
	av[n++] = s->launcher;
	av[n++] = "run";
	av[n++] = "--";
	av[n++] = cf_unconst(file);
	for (size_t i = 1; i < argc; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	/* Without the shim: loaded into credfence run, it would fence that
	 * process in self mode before credfence run could open its log. The
	 * secrets go here, as judged once for this launch by the rules the
	 * harness read at its start (the CREDFENCE_* options below are the
	 * harness's current ones), and are logged here: credfence run then
	 * finds none. */
	const struct cf_fence *f = __atomic_load_n(&cf_shim.fence, __ATOMIC_ACQUIRE);
	int logfd = f ? cf_fence_log_open(f) : -1;
	if (logfd >= 0) {
		char line[2048];
		(void)cf_event_withheld_write(logfd, cf_sys0(SYS_getpid), file, ce->out + ce->kept + 1,
					      ce->withheld, line, sizeof line);
		cf_sys_close(logfd);
	}
	char ld[4096], ld2[4096];
	size_t used2 = 0;
	char *const *kept = less_shim(ce, ld, sizeof ld);
	size_t envc = cf_env_count(kept);
	char *ev[envc + s->n_opts + 1];
	n = 0;
	for (size_t i = 0; i < envc; i++) {
		const char *e = kept[i], *p = "CREDFENCE_";
		while (*p && *e == *p)
			p++, e++;
		/* The shim too, even where fenced children keep it: credfence
		 * run preloads it again once CMD is fenced. */
		char *k = *p ? cf_env_entry_drop_shim(kept[i], ld2, &used2, sizeof ld2) : NULL;
		if (k) /* not one of ours: the harness's options win */
			ev[n++] = k;
	}
	for (size_t i = 0; i < s->n_opts; i++)
		ev[n++] = s->opts[i];
	ev[n] = NULL;
	/* credfence run enters the namespace the harness's guard made, by
	 * these descriptors (CREDFENCE_FENCED_NS is among the harness's
	 * options): inside the guard it can not make one. This child's
	 * descriptor table is its own (no CLONE_FILES). */
	cf_fence_harness_ns_pass(true);
	int rc = (int)cf_sys3(SYS_execve, s->launcher, av, ev);
	cf_fence_harness_ns_pass(false);
	return rc;
}

static bool has_slash(const char *s)
{
	for (; *s; s++)
		if (*s == '/')
			return true;
	return false;
}

/* The call with the signal mask C asks for. */
static int make_call(const struct cf_child *c, char *const env[])
{
	if (c->sigmask)
		(void)cf_sys4(SYS_rt_sigprocmask, SIG_SETMASK, c->sigmask, NULL, 8);
	return c->call(c, env);
}

/* Fence the child, or relaunch it through credfence run, or refuse: 1 when
 * fenced, 0 when it goes on unfenced, -errno when it must not run (or the
 * relaunch failed). */
static int enter(const struct cf_child *c, const char *program, struct cf_child_env *ce)
{
	if (c->fence)
		return cf_shim_fence_thread_env(c->fence, program, c->checked, ce);
	int fenced = cf_shim_child_enter_env(program, ce);
	if (fenced == CF_CHILD_RELAUNCH && (c->how & CF_CHILD_RELAUNCH_OK))
		return cf_shim_relaunch(c->path, c->search != NULL, c->argv, ce);
	return fenced < 0 || fenced == CF_CHILD_RELAUNCH ? -EPERM : fenced;
}

/* The one pass over a child's N entries: OUT gets the kept ones from the
 * front, the withheld ones from the back (then put in order after the
 * NULL); the entries the shim's removal touches are noted; and, against
 * CE's snapshot, the first that moves a secret. */
static void judge_env(struct cf_child_env *ce, char **out, size_t n)
{
	ce->judged = true;
	ce->out = out;
	for (size_t i = 0; i < n; i++) {
		char *e = ce->envp[i];
		if (ce->snap && !ce->moved && cf_envsnap_moves(ce->snap, e))
			ce->moved = e;
		unsigned d = cf_env_entry_drop(e);
		if (d & CF_ENV_DROP_SECRETS) {
			out[n - ce->withheld++] = e;
			continue;
		}
		if ((d & CF_ENV_DROP_SHIM) && ce->n_shim < CF_ENV_SHIM_NOTES)
			ce->shim[ce->n_shim] = ce->kept;
		ce->n_shim += !!(d & CF_ENV_DROP_SHIM);
		out[ce->kept++] = e;
	}
	out[ce->kept] = NULL;
	for (size_t a = ce->kept + 1, b = n; a < b; a++, b--) {
		char *t = out[a];
		out[a] = out[b];
		out[b] = t;
	}
}

/* The fenced child's environment, on a frame of its own made after the
 * fence: its LD_PRELOAD buffer is not on the stack while the fence is
 * entered. */
static __attribute__((noinline)) int call_fenced(const struct cf_child *c, struct cf_child_env *ce)
{
	char ld[4096];
	return make_call(c, less_shim(ce, ld, sizeof ld));
}

/* A child of the harness: its environment judged once, before the fence
 * (which logs what it withholds and may relaunch it); then the call. */
static __attribute__((noinline)) int call_judged(const struct cf_child *c, const char *program)
{
	size_t n = cf_env_count(c->envp);
	struct cf_child_env ce = {.envp = c->envp, .snap = c->fence ? NULL : cf_shim_snap()};
	char *out[n <= CF_CHILD_ENV_MAX ? n + 1 : 1];
	if (n <= CF_CHILD_ENV_MAX)
		judge_env(&ce, out, n);
	int rc, fenced = enter(c, program, &ce);
	if (fenced < 0)
		return fenced;
	if (c->ready && (rc = c->ready(c)))
		return rc;
	if (n + 1 > CF_CHILD_ENV_MAX)
		return cf_shim_env_too_big();
	if (!c->envp)
		return make_call(c, NULL);
	return fenced ? call_fenced(c, &ce) : make_call(c, ce.out);
}

int cf_shim_child_call(const struct cf_child *c)
{
	const char *program = c->program ? c->program : c->path;
	const char *path = c->path;
	char found[PATH_MAX];
	int rc;
	if (cf_shim_early()) {
		rc = cf_shim_early_gate(program);
		return rc ? rc : c->call(c, c->envp);
	}
	bool harness = cf_shim.role == CF_ROLE_HARNESS, again = false;
	if (harness && path && (c->how & CF_CHILD_PROBE)) {
		/* A PATH search made by hand (CPython's subprocess, a shell) tries
		 * each candidate with execve: one that is not there fails here as
		 * the kernel would fail it, unfenced and unlogged, since nothing
		 * runs. The log then names the candidate that ran, once. */
		int err;
		if (cf_shim_exec_would_fail(path, &err))
			return -err;
	}
	if (harness && path && c->search) {
		/* Followed and logged as what the search finds; a name not found
		 * is not followed (the real call says why). */
		program = cf_shim_which(path, c->search, found, sizeof found);
		path = has_slash(program) ? program : NULL;
	}
	if (harness && path && c->ready) {
		/* Decided before READY, which a fenced child runs fenced; checked
		 * again after it, below. */
		again = cf_shim_follows(c->dirfd, path, c->flags, c->argv);
	} else if (harness && path) {
		/* The harness's own new image is judged in normal context
		 * (follow.c); a child of the harness never goes there. */
		rc = (c->how & CF_CHILD_OWN) && cf_sys0(SYS_getpid) == cf_shim.harness_pid
			     ? cf_shim_judge_own_exec(c->dirfd, path, c->flags)
			     : 0;
		if (!rc)
			rc = cf_shim_exec_if_harness(c->dirfd, path, c->flags, c->argv, c->envp);
		if (rc < 0)
			return rc;
	}
	if (again) {
		/* The harness again: no fence, its environment whole (follow.c).
		 * A child that is no longer the harness after READY (its
		 * directory changed, the file was replaced) runs nothing. */
		if ((rc = c->ready(c)))
			return rc;
		if (c->sigmask)
			(void)cf_sys4(SYS_rt_sigprocmask, SIG_SETMASK, c->sigmask, NULL, 8);
		rc = cf_shim_exec_if_harness(c->dirfd, path, c->flags, c->argv, c->envp);
		return rc ? rc : -EACCES;
	}
	if (c->fence || cf_shim_harness_child())
		return call_judged(c, program);
	/* The harness replacing its own image, or a process that fences no
	 * child (this one is fenced, or best effort without isolation): its
	 * environment as it is. */
	if (c->ready && (rc = c->ready(c)))
		return rc;
	/* The harness's own new image keeps the namespace its children enter
	 * (its shim finds the descriptors again by CREDFENCE_FENCED_NS). */
	bool own = harness && cf_sys0(SYS_getpid) == cf_shim.harness_pid;
	if (own)
		cf_fence_harness_ns_pass(true);
	rc = make_call(c, c->envp);
	if (own)
		cf_fence_harness_ns_pass(false);
	return rc;
}
