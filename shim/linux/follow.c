/* The harness role follows the harness through its own relaunches and
 * wrappers, and to no other process (SECURITY.md, "Which processes are the
 * harness"). A child that the free harness starts is the harness again when
 *  (a) the harness is an interpreter running a script, and the child runs
 *      the same interpreter (same file) with the same script as its first
 *      operand (Gemini CLI's relaunch: node with new options, same script);
 *  (b) the child runs a program the user named with --harness-program
 *      (same file), whatever its arguments (Codex's node wrapper starting
 *      its native binary).
 * Such a child is not fenced, and gets a marker of its own
 * (CREDFENCE_HARNESS=PID:STARTTIME), written in the child, where its pid is
 * known: raw syscalls and stack memory only (it may be a vfork child). It is
 * executed by descriptor, the very file that was compared, so no rename
 * between the check and the exec can slip another program in. A fenced
 * process never gets here: its children inherit its fence (the kernel's
 * rule), whatever their environment says. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nolibc.h"
#include "protocol.h"
#include "shim.h"
#include "sys.h"

extern char **environ;

struct file_id {
	unsigned maj, min;
	unsigned long long ino;
};

/* Set once by cf_shim_follow_init, in the harness's constructor, before any
 * thread: read only afterwards (children read it between fork and exec). */
static struct {
	bool any;               /* a rule can match */
	bool interpreted;       /* rule (a) */
	struct file_id exe;     /* the harness's interpreter */
	char *script_abs;       /* its script as given, made absolute */
	char *script_canon;     /* the same, canonical */
	struct file_id *programs; /* rule (b) */
	size_t n_programs;
	char **opts;            /* the harness's CREDFENCE_* at its start, less the marker */
	size_t n_opts;
	char *preload;          /* its LD_PRELOAD entry at its start */
} fl;

static bool id_of(int dirfd, const char *path, int flags, struct file_id *id, bool *regular)
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

static bool same_id(const struct file_id *a, const struct file_id *b)
{
	return a->maj == b->maj && a->min == b->min && a->ino == b->ino;
}

/* Interpreters whose first operand is the script they run. */
static bool is_interpreter(const char *base)
{
	static const char *const names[] = {"node", "nodejs", "bun", "deno", "python", "pypy",
					    "ruby", "perl", "php"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		size_t n = strlen(names[i]);
		if (strncmp(base, names[i], n) == 0 &&
		    strspn(base + n, "0123456789.") == strlen(base + n))
			return true;
	}
	return false;
}

/* The first operand of ARGV (after argv[0]): the first argument that is not
 * an option, or the one after "--". Options with a separate value (-X utf8)
 * make their value the operand: it then names no script, and the child is
 * fenced (fail closed). NULL when there is none. */
static const char *first_operand(char *const argv[])
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

/* Rule (a)'s script: the harness's first operand, when the harness is an
 * interpreter and it names a regular file that lies (with each symlink on the
 * way) outside every writable location. */
static void find_script(const struct cf_fence *f)
{
	char exe[PATH_MAX], cwd[PATH_MAX], canon[PATH_MAX], why[PATH_MAX * 4];
	static char cmdline[64 * 1024];
	char *argv[256];
	bool regular;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	const char *base = strrchr(exe, '/');
	if (!is_interpreter(base ? base + 1 : exe) ||
	    !id_of(AT_FDCWD, "/proc/self/exe", 0, &fl.exe, &regular) || !getcwd(cwd, sizeof cwd))
		return;
	FILE *cl = fopen("/proc/self/cmdline", "re");
	if (!cl)
		return;
	size_t len = fread(cmdline, 1, sizeof cmdline - 1, cl);
	fclose(cl);
	cmdline[len] = '\0';
	size_t argc = 0;
	for (size_t at = 0; at < len && argc + 1 < sizeof argv / sizeof *argv; at += strlen(cmdline + at) + 1)
		argv[argc++] = cmdline + at;
	argv[argc] = NULL;
	const char *script = first_operand(argv);
	struct file_id sid;
	if (!script || !id_of(AT_FDCWD, script, 0, &sid, &regular) || !regular)
		return;
	int rc = cf_policy_outside_writable(cf_fence_policy(f), script, cwd, canon, sizeof canon,
					    why, sizeof why);
	if (rc) {
		if (rc == -EACCES)
			fprintf(stderr, "credfence: warning: the harness's script %s, so a fenced program "
					"could change it: a relaunch of the harness (%s %s) will be fenced\n",
				why, exe, script);
		return;
	}
	char abs[PATH_MAX * 2];
	snprintf(abs, sizeof abs, "%s%s%s", script[0] == '/' ? "" : cwd, script[0] == '/' ? "" : "/",
		 script);
	fl.script_abs = strdup(abs);
	fl.script_canon = strdup(canon);
	fl.interpreted = fl.script_abs && fl.script_canon;
}

/* Rule (b): the programs, as credfence harness judged and exported them
 * (canonical, outside every writable location); judged again here. */
static void find_programs(const struct cf_fence *f, const struct cf_options *o)
{
	if (!o->harness_programs.n || !(fl.programs = calloc(o->harness_programs.n, sizeof *fl.programs)))
		return;
	for (size_t i = 0; i < o->harness_programs.n; i++) {
		char canon[PATH_MAX], why[PATH_MAX * 4];
		bool regular;
		const char *p = o->harness_programs.v[i];
		if (p[0] != '/' ||
		    cf_policy_outside_writable(cf_fence_policy(f), p, "/", canon, sizeof canon, why,
					       sizeof why) ||
		    !id_of(AT_FDCWD, canon, 0, &fl.programs[fl.n_programs], &regular) || !regular)
			continue;
		fl.n_programs++;
	}
}

static bool is_opt_entry(const char *e)
{
	return cf_nl_has_prefix(e, "CREDFENCE_");
}

static bool is_preload_entry(const char *e)
{
	return cf_nl_has_prefix(e, CF_PRELOAD_EQ);
}

/* What a followed child gets besides its own environment: the harness's
 * options as they were at its start, so that it fences its children as this
 * harness does, and the shim. */
static void keep_environment(void)
{
	size_t n = 0;
	for (char **e = environ; e && *e; e++)
		n++;
	if (!(fl.opts = calloc(n + 1, sizeof *fl.opts)))
		return;
	for (char **e = environ; e && *e; e++) {
		if (is_preload_entry(*e) && !fl.preload)
			fl.preload = strdup(*e);
		else if (is_opt_entry(*e) && !cf_nl_has_prefix(*e, "CREDFENCE_HARNESS="))
			if ((fl.opts[fl.n_opts] = strdup(*e)))
				fl.n_opts++;
	}
}

void cf_shim_follow_init(void)
{
	const struct cf_fence *f = cf_shim.fence;
	const struct cf_options *o = cf_shim_harness_options();
	find_script(f);
	find_programs(f, o);
	keep_environment();
	fl.any = (fl.interpreted || fl.n_programs) && fl.opts && fl.preload;
}

/* Whether the file FD (O_PATH) with ARGV is the harness again. */
static bool matches(int fd, char *const argv[])
{
	struct file_id id;
	bool regular;
	if (!id_of(fd, "", AT_EMPTY_PATH, &id, &regular) || !regular)
		return false;
	for (size_t i = 0; i < fl.n_programs; i++)
		if (same_id(&id, &fl.programs[i]))
			return true;
	if (!fl.interpreted || !same_id(&id, &fl.exe))
		return false;
	const char *s = first_operand(argv);
	if (!s)
		return false;
	if (s[0] == '/')
		return cf_nl_streq(s, fl.script_abs) || cf_nl_streq(s, fl.script_canon);
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
	return cf_nl_streq(abs, fl.script_abs);
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
	if (!fl.any || cf_shim.role != CF_ROLE_HARNESS || !path ||
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
	if (!fl.any || cf_shim.role != CF_ROLE_HARNESS || !path ||
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
	if (envc + fl.n_opts + 3 > CF_CHILD_ENV_MAX || !cf_harness_marker_self(marker, sizeof marker)) {
		cf_sys_close(fd);
		return 0; /* fenced then, as any child */
	}
	/* Its own environment, less every CREDFENCE_* (the harness's options
	 * and this child's marker replace them) and less an LD_PRELOAD without
	 * the shim (the harness's own replaces it: a harness without the shim
	 * would fence nothing). */
	char *env[envc + fl.n_opts + 3];
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
	for (size_t i = 0; i < fl.n_opts; i++)
		env[k++] = fl.opts[i];
	if (!preload_kept)
		env[k++] = fl.preload;
	env[k++] = marker;
	env[k] = NULL;
	/* The harness again keeps the namespace its children enter. */
	cf_fence_harness_ns_pass(true);
	long rc = cf_sys5(SYS_execveat, fd, "", argv, env, AT_EMPTY_PATH);
	cf_fence_harness_ns_pass(false);
	cf_sys_close(fd);
	return (int)rc;
}

#if defined(__x86_64__)
#define CF_EM EM_X86_64
#elif defined(__aarch64__)
#define CF_EM EM_AARCH64
#endif

/* Whether the ELF file FD would run without the shim: no PT_INTERP (no
 * loader), or another ELF class or machine (the loader skips the shim). False
 * for anything else: a script's interpreter is judged at its own exec. */
static bool loads_no_shim(int fd)
{
	Elf64_Ehdr h;
	if (pread(fd, &h, sizeof h, 0) < (ssize_t)sizeof(Elf32_Ehdr) ||
	    memcmp(h.e_ident, ELFMAG, SELFMAG) != 0)
		return false;
#ifdef CF_EM
	if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_machine != CF_EM)
		return true;
#endif
	if (h.e_phentsize < sizeof(Elf64_Phdr))
		return false;
	for (size_t i = 0; i < h.e_phnum && i < 4096; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(h.e_phoff + i * h.e_phentsize)) != (ssize_t)sizeof ph)
			return false;
		if (ph.p_type == PT_INTERP)
			return false;
	}
	return true;
}

int cf_shim_judge_own_exec(int dirfd, const char *path, int flags)
{
	if (cf_shim.role != CF_ROLE_HARNESS || cf_sys0(SYS_getpid) != cf_shim.harness_pid)
		return 0;
	const struct cf_options *o = cf_shim_harness_options();
	int fd = (flags & AT_EMPTY_PATH) && path && !*path
			 ? fcntl(dirfd, F_DUPFD_CLOEXEC, 0)
			 : openat(dirfd, path, O_RDONLY | O_CLOEXEC |
						       ((flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0));
	if (fd < 0)
		return 0; /* the real exec says why */
	bool is_static = loads_no_shim(fd);
	close(fd);
	if (!is_static || o->static_harness > 0)
		return 0;
	const char *shown = path && *path ? path : "a program";
	if (cf_shim.fence && cf_fence_policy(cf_shim.fence)->mode == CF_MODE_BEST_EFFORT) {
		fprintf(stderr, "credfence: warning: the harness replaces itself with %s, which "
				"loads no shim (statically linked, or another ELF class or machine): "
				"its children are not fenced unless they load the shim "
				"and fence themselves (best-effort mode)\n", shown);
		return 0;
	}
	fprintf(stderr, "credfence: the harness replaces itself with %s, which loads no shim "
			"(statically linked, or another ELF class or machine), so the programs it starts would not be "
			"fenced at launch; name it with --harness-program and pass --static-harness to "
			"accept this, or give its commands to credfence run. Nothing was run.\n", shown);
	return -EPERM;
}
