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
 * rule), whatever their environment says.
 *
 * Here: the rules learnt in the harness's constructor (follow.h), and the
 * harness's own exec judged. The child's side, which compares and executes,
 * is in child.c, on the path every launch takes. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "follow.h"
#include "nolibc.h"
#include "protocol.h"
#include "shim.h"
#include "sys.h"

extern char **environ;

struct cf_follow cf_shim_follow;
/* The rules being learnt: written here only, in the constructor. */
static struct cf_follow *const fl = &cf_shim_follow;

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
	    !cf_shim_file_id(AT_FDCWD, "/proc/self/exe", 0, &fl->exe, &regular) ||
	    !getcwd(cwd, sizeof cwd))
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
	const char *script = cf_shim_first_operand(argv);
	struct cf_file_id sid;
	if (!script || !cf_shim_file_id(AT_FDCWD, script, 0, &sid, &regular) || !regular)
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
	fl->script_abs = strdup(abs);
	fl->script_canon = strdup(canon);
	fl->interpreted = fl->script_abs && fl->script_canon;
}

/* Rule (b): the programs, as credfence harness judged and exported them
 * (canonical, outside every writable location); judged again here. */
static void find_programs(const struct cf_fence *f, const struct cf_options *o)
{
	if (!o->harness_programs.n ||
	    !(fl->programs = calloc(o->harness_programs.n, sizeof *fl->programs)))
		return;
	for (size_t i = 0; i < o->harness_programs.n; i++) {
		char canon[PATH_MAX], why[PATH_MAX * 4];
		bool regular;
		const char *p = o->harness_programs.v[i];
		if (p[0] != '/' ||
		    cf_policy_outside_writable(cf_fence_policy(f), p, "/", canon, sizeof canon, why,
					       sizeof why) ||
		    !cf_shim_file_id(AT_FDCWD, canon, 0, &fl->programs[fl->n_programs], &regular) ||
		    !regular)
			continue;
		fl->n_programs++;
	}
}

/* What a followed child gets besides its own environment: the harness's
 * options as they were at its start, so that it fences its children as this
 * harness does, and the shim. */
static void keep_environment(void)
{
	size_t n = 0;
	for (char **e = environ; e && *e; e++)
		n++;
	if (!(fl->opts = calloc(n + 1, sizeof *fl->opts)))
		return;
	for (char **e = environ; e && *e; e++) {
		if (cf_nl_has_prefix(*e, CF_PRELOAD_EQ) && !fl->preload)
			fl->preload = strdup(*e);
		else if (cf_nl_has_prefix(*e, "CREDFENCE_") && !cf_nl_has_prefix(*e, "CREDFENCE_HARNESS="))
			if ((fl->opts[fl->n_opts] = strdup(*e)))
				fl->n_opts++;
	}
}

void cf_shim_follow_init(void)
{
	const struct cf_fence *f = cf_shim.fence;
	const struct cf_options *o = cf_shim_harness_options();
	find_script(f);
	find_programs(f, o);
	keep_environment();
	fl->any = (fl->interpreted || fl->n_programs) && fl->opts && fl->preload;
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
