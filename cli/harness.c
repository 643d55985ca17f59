#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "known_harness.h"
#include "machinery.h"
#include "vars.h"
#ifdef __linux__
#include "json.h"
#include "tmpdir.h"
#endif

#ifdef __APPLE__
#include <mach-o/dyld.h>
#include <stdint.h>
#else
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#endif

#ifndef CF_SHIM_INSTALLED
#define CF_SHIM_INSTALLED "/usr/local/lib/libcredfence.so"
#endif

/* This program's own path, symlinks resolved, into EXE (N bytes, NUL not
 * counted in the result); -1 when it is not known. */
static ssize_t self_exe(char *exe, size_t n)
{
#ifdef __APPLE__
	char raw[PATH_MAX];
	uint32_t size = sizeof raw;
	if (n < PATH_MAX || _NSGetExecutablePath(raw, &size) != 0 || !realpath(raw, exe))
		return -1;
	return (ssize_t)strlen(exe);
#else
	return readlink("/proc/self/exe", exe, n - 1);
#endif
}

/* Where the shim is: next to this program (installed or build tree), or installed. */
const char *cf_cli_find_shim(void)
{
	static char found[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = self_exe(exe, sizeof exe);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			static const char *const rel[] = {"/" CF_SHIM_FILE, "/../shim/" CF_SHIM_FILE,
							   "/../lib/" CF_SHIM_FILE};
			for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
				char cand[PATH_MAX * 2];
				snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
				if (access(cand, R_OK) == 0 && realpath(cand, found))
					return found;
			}
		}
	}
	if (access(CF_SHIM_INSTALLED, R_OK) == 0 && realpath(CF_SHIM_INSTALLED, found))
		return found;
	return NULL;
}

const char *cf_cli_fenced_shim(const char *shim)
{
#ifdef CF_FENCED_SHIM_FILE
	static char fenced[PATH_MAX];
	char judge[PATH_MAX];
	const char *slash = shim ? strrchr(shim, '/') : NULL;
	if (slash && (size_t)snprintf(fenced, sizeof fenced, "%.*s/%s", (int)(slash - shim), shim,
				      CF_FENCED_SHIM_FILE) < sizeof fenced &&
	    (size_t)snprintf(judge, sizeof judge, "%.*s/%s", (int)(slash - shim), shim,
			     CF_JUDGE_FILE) < sizeof judge &&
	    access(fenced, R_OK) == 0 && access(judge, R_OK) == 0)
		return fenced;
#endif
	return shim;
}

/* PATH taken from the directory the harness starts in, once: exported as
 * written, a relative path would be taken from wherever the harness (or a
 * program it runs as itself) stands at each rebuild of its plan. Lexical
 * only: the policy resolves symlinks itself at each build, so that a secret
 * reached through a retargeted symlink is denied at its new target. */
static char *absolute(const char *path, const char *cwd)
{
	char *out;
	if (!cwd || path[0] == '/' || !*path) /* no CWD: taken as given */
		return strdup(path);
	size_t n = strlen(cwd) + strlen(path) + 2;
	if (!(out = malloc(n)))
		return NULL;
	snprintf(out, n, "%s/%s", cwd, path);
	return out;
}

static int set_list(const char *name, const struct cf_strv *v, const char *cwd)
{
	struct cf_strv abs = {0};
	int rc = 0;
	for (size_t i = 0; !rc && i < v->n; i++) {
		char *a = absolute(v->v[i], cwd);
		rc = !a || cf_strv_add(&abs, a) ? -1 : 0;
		free(a);
	}
	char *s = rc ? NULL : cf_twin_list_join(&abs);
	rc = s ? setenv(name, s, 1) : -1;
	free(s);
	cf_strv_free(&abs);
	return rc;
}

/* Row R of O as its twin, when O sets it; relative paths of a path list
 * taken from CWD. */
static int export_twin(const struct cf_var_row *r, const struct cf_options *o, const char *cwd)
{
	const char *slot = (const char *)o + r->slot, *v = NULL;
	char num[32];
	switch (r->kind) {
	case CF_KIND_PATH:
		v = *(const char *const *)slot;
		v = v && *v ? v : NULL;
		break;
	case CF_KIND_PATHS:
	case CF_KIND_LIST: {
		const struct cf_strv *l = (const struct cf_strv *)(const void *)slot;
		/* The harness programs are canonical by now (judged at start). */
		bool rel = r->kind == CF_KIND_PATHS && r != &cf_vars[CF_VAR_HARNESS_PROGRAM];
		return l->n ? set_list(r->name, l, rel ? cwd : NULL) : 0;
	}
	case CF_KIND_SWITCH: {
		int on = *(const int *)(const void *)slot;
		v = on < 0 ? NULL : on ? "1" : "0";
		break;
	}
	case CF_KIND_MODE: {
		int mode = *(const int *)(const void *)slot;
		v = mode < 0 ? NULL : cf_mode_word(mode);
		break;
	}
	case CF_KIND_PROTECT: {
		/* A word given (on the command line, in a twin, in a policy
		 * file); none for the default. */
		int w = *(const int *)(const void *)slot;
		v = cf_write_protect_word(w);
		break;
	}
	case CF_KIND_NUMBER:
		if (*(const long *)(const void *)slot > 0) {
			snprintf(num, sizeof num, "%ld", *(const long *)(const void *)slot);
			v = num;
		}
		break;
	default:
		break;
	}
	return v && setenv(r->name, v, 1) ? -1 : 0;
}

int cf_cli_export_options(const struct cf_cli *c, const struct cf_policy *pol, const char *cwd,
			  unsigned set_by)
{
	struct cf_options o = c->opts;
	/* The workspace is fixed at start, canonical: the harness may change
	 * directory later, and its plan is rebuilt with the environment. The
	 * log is canonical too. */
	o.workspace = pol->workspace;
	o.log = pol->log;
	/* The sockets as the policy resolved them (--ssh-agent included): a
	 * harness that changes SSH_AUTH_SOCK later does not widen the fence. */
	o.allow_sockets = pol->allow_sockets;
	/* The reads as the policy resolved them, by where they point: a symlink
	 * retargeted later does not move what the children read. */
	struct cf_strv reads = {0};
	for (size_t i = 0; i < pol->allow_read.n + pol->allow_rows.n; i++)
		if (cf_strv_add(&reads, i < pol->allow_read.n ? pol->allow_read.v[i]
							     : pol->allow_rows.v[i - pol->allow_read.n])) {
			cf_strv_free(&reads);
			return -1;
		}
	o.allow_read = reads;
	int rc = 0;
	for (size_t i = 0; !rc && i < CF_VAR_COUNT; i++)
		if ((cf_vars[i].set_by & set_by) && export_twin(&cf_vars[i], &o, cwd))
			rc = -1;
	cf_strv_free(&reads);
	if (rc)
		return rc;
	if ((set_by & CF_SET_EXPORT) && pol->allow_sockets.n &&
	    unsetenv(cf_var_name(CF_VAR_SSH_AGENT)))
		return -1;
	return 0;
}

/* Whether LIST (LD_PRELOAD: entries separated by spaces and colons, as
 * ld.so reads it) has an entry that is exactly PATH. A longer name that holds
 * it (".../libcredfence.so.old") is another library. */
static bool preload_has(const char *list, const char *path)
{
	size_t n = strlen(path);
	while (*list) {
		size_t k = strcspn(list, CF_PRELOAD_SEPS);
		if (k == n && strncmp(list, path, n) == 0)
			return true;
		list += k;
		if (*list)
			list++;
	}
	return false;
}

int cf_cli_preload(const char *shim)
{
	const char *old = getenv(CF_PRELOAD_VAR);
	if (!old || !*old)
		return setenv(CF_PRELOAD_VAR, shim, 1);
	if (preload_has(old, shim))
		return 0;
	size_t n = strlen(shim) + strlen(old) + 2;
	char *v = malloc(n);
	if (!v)
		return -1;
	snprintf(v, n, "%s:%s", shim, old);
	int rc = setenv(CF_PRELOAD_VAR, v, 1);
	free(v);
	return rc;
}

#ifdef __linux__
/* The ELF class, machine and whether there is a PT_INTERP (a program the
 * dynamic loader starts). -1: not an ELF file we can read. */
static int elf_info(int fd, unsigned char *cls, unsigned *machine, bool *interp)
{
	union {
		Elf64_Ehdr e64;
		Elf32_Ehdr e32;
	} h;
	if (pread(fd, &h, sizeof h, 0) < (ssize_t)sizeof h.e32 ||
	    memcmp(h.e64.e_ident, ELFMAG, SELFMAG) != 0)
		return -1;
	*cls = h.e64.e_ident[EI_CLASS];
	*interp = false;
	off_t off;
	size_t num, size;
	if (*cls == ELFCLASS64) {
		*machine = h.e64.e_machine;
		off = (off_t)h.e64.e_phoff, num = h.e64.e_phnum, size = h.e64.e_phentsize;
	} else if (*cls == ELFCLASS32) {
		*machine = h.e32.e_machine;
		off = (off_t)h.e32.e_phoff, num = h.e32.e_phnum, size = h.e32.e_phentsize;
	} else {
		return -1;
	}
	for (size_t i = 0; i < num && i < 4096; i++) {
		uint32_t type;
		if (size < sizeof type || pread(fd, &type, sizeof type, off + (off_t)(i * size)) !=
						   (ssize_t)sizeof type)
			return -1;
		if (type == PT_INTERP)
			*interp = true;
	}
	return 0;
}

/* Why the dynamic loader would start PROG without the shim (written to WHY),
 * or false when it would load it, or when this can not tell (then the exec
 * goes on: a file that is not ELF nor a script fails to execute anyway). */
static bool shim_would_be_skipped(const char *prog, const char *shim, char *why, size_t n)
{
	char path[PATH_MAX];
	unsigned char shim_cls, cls;
	unsigned shim_machine, machine;
	bool interp;
	struct statvfs vfs;

	if (statvfs(shim, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
		snprintf(why, n, "the shim %s lies on a file system mounted noexec, so the loader "
			 "can not map it", shim);
		return true;
	}
	int sfd = open(shim, O_RDONLY | O_CLOEXEC);
	if (sfd < 0)
		return false;
	int rc = elf_info(sfd, &shim_cls, &shim_machine, &interp);
	close(sfd);
	if (rc || !cf_cli_which(prog, path, sizeof path))
		return false;
	/* A script runs its interpreter, which may be a script itself (the
	 * kernel follows a few levels). */
	for (int depth = 0; depth < 5; depth++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		char head[PATH_MAX + 2];
		ssize_t got = pread(fd, head, sizeof head - 1, 0);
		if (got >= 2 && head[0] == '#' && head[1] == '!') {
			close(fd);
			head[got] = '\0';
			char *p = head + 2;
			p += strspn(p, " \t");
			size_t k = strcspn(p, " \t\n");
			if (!k || k >= sizeof path)
				return false;
			snprintf(path, sizeof path, "%.*s", (int)k, p);
			continue;
		}
		struct stat st;
		rc = elf_info(fd, &cls, &machine, &interp) || fstat(fd, &st);
		bool caps = fgetxattr(fd, "security.capability", NULL, 0) > 0;
		close(fd);
		if (rc)
			return false;
		if (!interp)
			snprintf(why, n, "%s is statically linked: no dynamic loader runs for it, so "
				 "nothing loads the shim into it", path);
		else if (cls != shim_cls || machine != shim_machine)
			snprintf(why, n, "%s is built for another ELF class or machine than the "
				 "shim %s, so the loader skips the shim", path, shim);
		else if ((st.st_mode & S_ISUID && st.st_uid != geteuid()) ||
			 (st.st_mode & S_ISGID && st.st_gid != getegid()) || caps)
			snprintf(why, n, "%s is set-user-ID, set-group-ID or has file "
				 "capabilities, so the loader ignores " CF_PRELOAD_VAR " for it", path);
		else
			return false;
		return true;
	}
	return false;
}
#endif

#ifdef __linux__
/* --harness-may-read, canonical (a path that does not exist yet: as given,
 * made absolute), into OUT. 0, or CF_EXIT_FAIL after saying what is wrong. */
static int may_read_paths(const struct cf_options *o, const struct cf_fence *f,
			  const char *cwd, struct cf_strv *out)
{
	for (size_t i = 0; i < o->harness_may_read.n; i++) {
		char canon[PATH_MAX];
		char *a = absolute(o->harness_may_read.v[i], cwd);
		int rc = !a ? -1 : cf_strv_add(out, realpath(a, canon) ? canon : a);
		free(a);
		if (rc) {
			cf_err("out of memory");
			return CF_EXIT_FAIL;
		}
	}
	long k = cf_fence_guard_may_read_inside(f, out);
	if (k >= 0) {
		cf_err("harness: --harness-may-read (CREDFENCE_HARNESS_MAY_READ) '%s' lies inside a "
		       "secret location, and the harness's guard covers a location as a whole; name "
		       "the location itself (credfence status lists them). Nothing was run.",
		       cf_cli_esc(out->v[k]));
		return CF_EXIT_FAIL;
	}
	return 0;
}

static void log_guard(const struct cf_fence *f, const struct cf_fence_guard_report *r, bool applied,
		      const char *why)
{
	int fd = cf_fence_log_open(f);
	if (fd < 0)
		return;
	char buf[4096];
	size_t len = 0;
	buf[0] = '\0';
	cf_json_raw(buf, sizeof buf, &len, "{\"event\":\"harness_guard\",\"pid\":");
	cf_json_num(buf, sizeof buf, &len, getpid());
	cf_json_raw(buf, sizeof buf, &len, applied ? ",\"applied\":true" : ",\"applied\":false");
	cf_json_raw(buf, sizeof buf, &len, ",\"covered\":");
	cf_json_num(buf, sizeof buf, &len, (long long)r->covered);
	cf_json_raw(buf, sizeof buf, &len, ",\"absent\":");
	cf_json_num(buf, sizeof buf, &len, (long long)r->absent);
	cf_json_raw(buf, sizeof buf, &len, ",\"may_read\":");
	cf_json_num(buf, sizeof buf, &len, (long long)r->may_read);
	if (!applied && r->no_ns)
		cf_json_raw(buf, sizeof buf, &len, ",\"no_namespace\":true");
	if (why) {
		cf_json_raw(buf, sizeof buf, &len, ",\"reason\":");
		cf_json_str(buf, sizeof buf, &len, why);
	}
	cf_json_raw(buf, sizeof buf, &len, "}\n");
	if (write(fd, buf, len) < 0) {
		/* The log is best kept; the guard stands either way. */
	}
	close(fd);
}

/* The harness's own reads (fence.h, cf_fence_guard_harness): in required mode a guard that can not
 * be set up stops the harness; best-effort says so and goes on. */
/* The mount namespace of the fenced tree for the harness's children
 * (cf_fence_harness_ns_*), made by the guard: its descriptors and inodes go to the
 * shim in CREDFENCE_FENCED_NS. Without it the children run with the read
 * fence alone and metadata goes through the supervisor (a warning), or,
 * under --write-protect=require, nothing runs. */
static int keep_children_ns(const struct cf_fence *f)
{
	static char value[600];
	cf_fence_harness_ns_value(value, sizeof value);
	if (setenv(cf_var_name(CF_VAR_FENCED_NS), value, 1)) {
		cf_err("can not set the environment: %s", strerror(errno));
		return CF_EXIT_FAIL;
	}
	if (cf_fence_harness_ns_held()) {
		/* The supervisor holds them too: a child whose harness closed
		 * them (or that the shim never saw start) gets them there. */
		const char *t = getenv("CF_TEST_NO_NS_HANDOVER"); /* a test switch */
		if (t && !strcmp(t, "1"))
			return 0;
		int rc = cf_fence_harness_ns_give(f);
		if (rc)
			cf_warn("harness: the supervisor could not take the namespace of the harness's "
				"children (%s); a child that loses its descriptors is refused",
				rc > -4096 ? strerror(-rc) : "not reached");
		return 0;
	}
	if (cf_fence_write_protect(f) == CF_WRITE_PROTECT_REQUIRE) {
		cf_err("harness: write protection can not be made for the harness's children: %s; "
		       "run with --write-protect=warn to run with the read fence alone. Nothing was "
		       "run.", cf_fence_harness_ns_off_why());
		return CF_EXIT_FAIL;
	}
	cf_warn("harness: write protection is off for the harness's children: %s; the files that "
		"your own tools run later (.git/hooks, .git/config, ...) stay writable to them, and "
		"metadata changes go through the supervisor%s", cf_fence_harness_ns_off_why(),
		cf_fence_abi(f) > 0 && cf_fence_abi(f) < 3
			? "; and with this Landlock ABI, truncate() of your files outside the "
			  "writable locations is not refused"
			: "");
	return 0;
}

/* No mount namespace can be had here (user namespaces off or restricted, a
 * container's seccomp profile: issue 33). The harness starts, in every
 * mode: each program it starts is fenced by Landlock as anywhere, and the
 * supervisor decides their metadata changes. What needs the namespace is
 * said in one line: the guard over the harness's own reads and the write
 * protection of its children. --write-protect=require still refuses (the
 * user asked for it). WHY: the failure, with its cause and remedy. */
static int without_namespace(const struct cf_fence *f, const char *why)
{
	if (cf_fence_protect_planned(f)) {
		static char value[600];
		cf_fence_harness_ns_value(value, sizeof value);
		if (setenv(cf_var_name(CF_VAR_FENCED_NS), value, 1)) {
			cf_err("can not set the environment: %s", strerror(errno));
			return CF_EXIT_FAIL;
		}
		if (cf_fence_write_protect(f) == CF_WRITE_PROTECT_REQUIRE) {
			cf_err("harness: write protection can not be made for the harness's children: "
			       "%s; run with --write-protect=warn to run with the read fence alone. "
			       "Nothing was run.", why);
			return CF_EXIT_FAIL;
		}
	}
	cf_warn("harness: no mount namespace (%s): off: the guard over the harness's own reads of "
		"the secrets%s; on: every program it starts is fenced (Landlock), metadata changes "
		"by the supervisor (credfence status)", why,
		cf_fence_protect_planned(f) ? ", write protection of what your tools run later "
					      "(.git/hooks, .git/config, ...)" : "");
	return 0;
}

static int guard_harness(const struct cf_cli *c, struct cf_fence *f, const char *cwd)
{
	struct cf_strv may = {0};
	struct cf_fence_guard_report r;
	char why[PATH_MAX + 512];
	int rc = may_read_paths(&c->opts, f, cwd, &may);
	if (rc) {
		cf_strv_free(&may);
		return rc;
	}
	if (cf_fence_protect_prepare(f, &c->opts, cwd)) {
		cf_strv_free(&may);
		cf_err("out of memory while planning the write protection");
		return CF_EXIT_FAIL;
	}
	int err = cf_fence_guard_harness(f, &may, &r, why, sizeof why);
	cf_strv_free(&may);
	log_guard(f, &r, err == 0, err ? why : NULL);
	if (err && r.no_ns)
		return without_namespace(f, why);
	if (cf_fence_protect_planned(f) && (rc = keep_children_ns(f)))
		return rc;
	if (!err)
		return 0;
	if (cf_fence_policy(f)->mode == CF_MODE_REQUIRED) {
		cf_err("harness: the harness's own reads of the secrets can not be guarded: %s. "
		       "Run with --best-effort to start it unguarded (its children stay fenced). "
		       "Nothing was run.",
		       why);
		return CF_EXIT_FAIL;
	}
	cf_warn("harness: the harness's own reads of the secrets are not guarded: %s "
		"(best-effort mode; its children stay fenced)",
		why);
	return 0;
}
#endif

static bool is_shell(const char *prog)
{
	static const char *const shells[] = {"sh",  "bash", "dash", "zsh",  "ksh", "ksh93", "mksh",
					     "pdksh", "ash", "hush", "yash", "posh", "fish", "csh",
					     "tcsh"};
	const char *base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	for (size_t i = 0; i < sizeof shells / sizeof *shells; i++)
		if (strcmp(base, shells[i]) == 0)
			return true;
	return false;
}

#ifdef __linux__
/* Set when the table of known harnesses accepted a static harness program
 * (Codex's), its shell's environment judged to keep the shim. */
static bool static_by_table;

/* A harness that loads no shim (static, or the loader skips it) fences
 * nothing at launch: only a dynamic child that keeps LD_PRELOAD and the
 * CREDFENCE_* variables fences itself (self mode). Refused in required mode
 * unless the user accepts it with --static-harness. PROG is CMD, or a
 * --harness-program when IS_PROGRAM. */
static int judge_static(const struct cf_cli *c, const struct cf_policy *pol, const char *prog,
			const char *shim, bool is_program)
{
	char why[PATH_MAX * 2 + 128];
	if (!shim_would_be_skipped(prog, shim, why, sizeof why))
		return 0;
	const char *as = is_program ? " (--harness-program)" : "";
	if (pol->mode == CF_MODE_BEST_EFFORT) {
		cf_warn("harness: %s%s; its children are not fenced unless they load the shim "
			"and fence themselves (best-effort mode)", why, as);
		return 0;
	}
	if (static_by_table)
		return 0; /* a known harness whose shell's environment was judged */
	if (c->opts.static_harness > 0) {
		cf_warn("harness: %s%s; accepted with --static-harness: the programs it starts are "
			"fenced only when they are dynamic and keep LD_PRELOAD and the CREDFENCE_* "
			"variables (they fence themselves); those it starts with a trimmed environment "
			"run free", why, as);
		return 0;
	}
	cf_err("harness: %s%s, and the programs it starts are not fenced at launch. Only a dynamic "
	       "program it starts with LD_PRELOAD and the CREDFENCE_* variables kept (its shell) "
	       "fences itself; a harness that drops them for its commands (Codex's "
	       "shell_environment_policy inherit = \"core\") runs its commands free. If its shell "
	       "keeps them (for Codex, in ~/.codex/config.toml: [shell_environment_policy] set = { "
	       "LD_PRELOAD = \"%s\", CREDFENCE_WORKSPACE = \"%s\" }), pass --static-harness "
	       "(CREDFENCE_STATIC_HARNESS=1) to accept this; else give its commands to credfence "
	       "run. Nothing was run.",
	       why, as, shim, pol->workspace ? pol->workspace : "/path/to/project");
	return CF_EXIT_FAIL;
}

/* Programs that run whatever they are given: as a harness program, every
 * script or command line the harness runs with them would run free. */
static bool runs_anything(const char *prog)
{
	static const char *const names[] = {"node", "nodejs", "bun", "deno", "env", "python",
					    "pypy", "ruby", "perl", "php", "busybox", "npx",
					    "npm"};
	const char *base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		size_t n = strlen(names[i]);
		if (strncmp(base, names[i], n) == 0 && strspn(base + n, "0123456789.") == strlen(base + n))
			return true;
	}
	return is_shell(prog);
}

/* Each --harness-program: found as execvp finds it, canonical, an ELF
 * program (its relaunch is executed by descriptor), not a program that runs
 * whatever it is given, outside every writable location (a fenced program
 * could replace it, and the harness would start the replacement free), and
 * judged as CMD is when the loader would not load the shim into it. The list
 * is exported canonical. */
static int judge_harness_programs(struct cf_cli *c, const struct cf_policy *pol, const char *shim,
				  const char *cwd)
{
	struct cf_options *o = &c->opts;
	for (size_t i = 0; i < o->harness_programs.n; i++) {
		const char *prog = o->harness_programs.v[i];
		char found[PATH_MAX], canon[PATH_MAX], why[PATH_MAX * 4];
		unsigned char cls;
		unsigned machine;
		bool interp;
		struct stat st = {0};
		errno = ENOENT;
		if (!cf_cli_which(prog, found, sizeof found) || stat(found, &st) != 0 ||
		    !S_ISREG(st.st_mode) || access(found, X_OK) != 0) {
			cf_err("harness: --harness-program '%s' is not an executable file (%s); give the "
			       "path of the program the harness starts. Nothing was run.",
			       cf_cli_esc(prog), S_ISDIR(st.st_mode) ? "a directory" : strerror(errno));
			return CF_EXIT_FAIL;
		}
		int rc = cf_policy_outside_writable(pol, found, cwd, canon, sizeof canon, why, sizeof why);
		if (rc == -EACCES) {
			cf_err("harness: --harness-program %s: a fenced program could replace it and the "
			       "harness would start the replacement free; install it outside every "
			       "writable location. Nothing was run.", cf_cli_esc(why));
			return CF_EXIT_FAIL;
		}
		if (rc) {
			cf_err("harness: --harness-program '%s' can not be resolved (%s). Nothing was run.",
			       cf_cli_esc(found), strerror(-rc));
			return CF_EXIT_FAIL;
		}
		int fd = open(canon, O_RDONLY | O_CLOEXEC);
		rc = fd < 0 ? -1 : elf_info(fd, &cls, &machine, &interp);
		if (fd >= 0)
			close(fd);
		if (rc) {
			cf_err("harness: --harness-program %s is not an ELF program; name the compiled "
			       "program that the harness starts (a script the harness runs as itself "
			       "is followed without this option). Nothing was run.", cf_cli_esc(canon));
			return CF_EXIT_FAIL;
		}
		if (runs_anything(canon)) {
			cf_err("harness: --harness-program %s runs whatever it is given (a shell, an "
			       "interpreter or a launcher): every command or script the harness starts "
			       "with it would run free; name the harness's own program. Nothing was run.",
			       cf_cli_esc(canon));
			return CF_EXIT_FAIL;
		}
		free(o->harness_programs.v[i]);
		if (!(o->harness_programs.v[i] = strdup(canon))) {
			cf_err("out of memory");
			return CF_EXIT_FAIL;
		}
		if ((rc = judge_static(c, pol, canon, shim, true)))
			return rc;
	}
	return 0;
}
#endif

/* Whether CMD is a shell given a command string (sh -c, bash -ec, busybox sh
 * -c, fish --command=...): the options before the first operand hold a c. */
static bool shell_with_c(char **cmd)
{
	const char *base = strrchr(cmd[0], '/');
	base = base ? base + 1 : cmd[0];
	if (strcmp(base, "busybox") == 0 && cmd[1])
		cmd++; /* the applet */
	if (!is_shell(cmd[0]))
		return false;
	for (char **a = cmd + 1; *a; a++) {
		const char *s = *a;
		if (strcmp(s, "--") == 0 || strcmp(s, "-") == 0 || (s[0] != '-' && s[0] != '+'))
			return false;
		if (strncmp(s, "--", 2) == 0) {
			if (strcmp(s, "--command") == 0 || strncmp(s, "--command=", 10) == 0)
				return true;
			if ((strcmp(s, "--rcfile") == 0 || strcmp(s, "--init-file") == 0) && a[1])
				a++;
			continue;
		}
		if (s[0] == '-' && strchr(s, 'c'))
			return true;
		if ((strchr(s, 'o') || strchr(s, 'O')) && a[1])
			a++; /* -o OPTION */
	}
	return false;
}

#ifdef __linux__
static bool path_beneath(const char *root, const char *path)
{
	size_t n = strlen(root);
	while (n > 1 && root[n - 1] == '/')
		n--;
	if (n == 1 && root[0] == '/')
		return true;
	return strncmp(root, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* A directory descriptor the harness inherits (4<"$HOME", an O_PATH
 * descriptor of ~/.ssh) belongs to the mount namespace outside the guard,
 * where no cover lies: openat(4, ".ssh/id_ed25519") from the harness would
 * read the key. Refused rather than closed: the harness or a wrapper may
 * rely on the descriptor, and a silent close would break it in a way nobody
 * could tell; the user closes it in one word (4<&-). Its children need no
 * such check: Landlock judges a path opened through an inherited directory
 * descriptor by where it resolves (tests/enforce/test_guard.c). 0 or
 * CF_EXIT_FAIL after a message. */
static int refuse_inherited_dirs(const struct cf_policy *pol)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		cf_err("harness: can not list this process's descriptors (/proc/self/fd: %s), which "
		       "must not reach a secret past the harness's guard; mount /proc. Nothing was "
		       "run.", strerror(errno));
		return CF_EXIT_FAIL;
	}
	int rc = 0;
	for (struct dirent *e; !rc && (e = readdir(d));) {
		char link[64], dir[PATH_MAX];
		struct stat st;
		int fd = atoi(e->d_name);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd < 3 || fd == dirfd(d) ||
		    fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, dir, sizeof dir - 1);
		if (n <= 0 || dir[0] != '/')
			continue;
		dir[n] = '\0';
		for (size_t i = 0; i < pol->n_denied && !rc; i++) {
			const char *sec = pol->denied[i].path;
			bool above = path_beneath(dir, sec), inside = path_beneath(sec, dir);
			if (!above && !inside)
				continue;
			cf_err("harness: descriptor %d is the directory %s, which %s secret %s (%s): the "
			       "harness could open the secret through it, past its guard. Close it for "
			       "the harness (add %d<&- to the command line) or start the harness "
			       "without it. Nothing was run.",
			       fd, dir, strcmp(dir, sec) == 0 ? "is" : inside ? "lies in" : "holds",
			       sec, pol->denied[i].holds, fd);
			rc = CF_EXIT_FAIL;
		}
	}
	closedir(d);
	return rc;
}

/* The harness's TMPDIR is PRIV; its children get the user's back (shim/env.c,
 * CREDFENCE_CHILD_TMPDIR, unset when the user had none). */
static int export_tmpdir(const char *priv)
{
	const char *old = getenv("TMPDIR");
	bool had = old && *old;
	if (had ? setenv("CREDFENCE_CHILD_TMPDIR", old, 1) : unsetenv("CREDFENCE_CHILD_TMPDIR"))
		return -1;
	/* Claude Code hands its Bash tool's shell a file to write in its own
	 * temporary directory (claude-ID-cwd, where the shell ends up), which is
	 * CLAUDE_CODE_TMPDIR when set: there, the children's one. */
	if (!getenv("CLAUDE_CODE_TMPDIR") && setenv("CLAUDE_CODE_TMPDIR", had ? old : "/tmp", 1))
		return -1;
	/* Bun extracts the native libraries of a compiled program (opencode) to
	 * BUN_TMPDIR before TMPDIR: unset, it takes the private one. */
	if (unsetenv("BUN_TMPDIR") || setenv("CREDFENCE_HARNESS_TMPDIR", priv, 1) ||
	    setenv("TMPDIR", priv, 1))
		return -1;
	return 0;
}

/* The private TMPDIR into PRIV, its removal left to the waiter above the
 * harness. 0, or CF_EXIT_FAIL after a message; PRIV stays empty when the
 * harness keeps the user's TMPDIR (best-effort mode). */
static int private_tmpdir(const struct cf_fence *f, char *priv, size_t n)
{
	const struct cf_policy *pol = cf_fence_policy(f);
	char why[PATH_MAX * 4];
	priv[0] = '\0';
	if (cf_cli_private_tmpdir(pol, priv, n, why, sizeof why) == 0) {
		cf_fence_at_end(cf_cli_remove_tmpdir, priv);
		return 0;
	}
	priv[0] = '\0';
	if (pol->mode == CF_MODE_REQUIRED) {
		cf_err("harness: no place for the harness's private temporary directory, which no "
		       "fenced program may write (%s); set XDG_RUNTIME_DIR or XDG_STATE_HOME to a "
		       "directory of yours outside every writable location. Nothing was run.", why);
		return CF_EXIT_FAIL;
	}
	cf_warn("harness: no place for the harness's private temporary directory (%s); it shares "
		"TMPDIR with the programs it starts, which can change what it writes there "
		"(best-effort mode)", why);
	return 0;
}
#endif

/* Setups that start but fence less than the user may think: say so. */
static void warn_harness(char **cmd)
{
	if (shell_with_c(cmd))
		cf_warn("harness: %s is a shell given -c: the shell itself is the free harness, so "
			"its own redirections (> FILE, < FILE) and the last command, which it may exec "
			"in place, are not fenced; to fence the whole command line use 'credfence run "
			"-- %s -c ...', or start the agent itself with 'credfence harness -- AGENT'",
			cmd[0], cmd[0]);
	cf_cli_warn_root("harness");
}

int cf_cmd_harness(int argc, char **argv)
{
	struct cf_cli c;
	struct cf_fence *f = NULL;
	char cwd[PATH_MAX];
	int rc = cf_cli_parse(&c, "harness", argc, argv, true, false);
	if (rc || (rc = cf_cli_finish(&c)))
		return rc;
	if (!getcwd(cwd, sizeof cwd)) {
		cf_err("harness: can not read the current directory (%s); start it from a directory "
		       "that exists", strerror(errno));
		return CF_EXIT_FAIL;
	}
	/* A harness of the table: what it needs, before its fence is built. */
	const struct cf_harness_kind *kind = cf_harness_kind(c.cmd[0]);
	if (kind && (rc = cf_known_prepare(&c, kind, cwd)))
		return rc;
	if (!(f = cf_fence_new()) || cf_fence_prepare(f, &c.opts, environ, cwd)) {
		cf_err("out of memory while building the policy");
		return CF_EXIT_FAIL;
	}
	const struct cf_policy *pol = cf_fence_policy(f);
	if ((rc = cf_cli_check_config(&c, f, cwd)) || (rc = cf_cli_check_log(f)) ||
	    (rc = cf_cli_judge_lifts(&c, f, NULL)) ||
	    (rc = cf_cli_check_allow_read(f, "harness")))
		return rc;
	if (!pol->workspace) {
		cf_err("harness: the workspace '%s' can not be resolved; pass --workspace DIR with a "
		       "directory", c.opts.workspace ? c.opts.workspace : cwd);
		return CF_EXIT_FAIL;
	}
	if (!cf_fence_ready(f)) {
		int logfd = cf_fence_log_open(f);
		cf_cli_log(f, logfd, c.cmd[0], false);
		if (pol->mode == CF_MODE_REQUIRED) {
			cf_err("%s; %s. Nothing was run.", cf_cli_reason(f), cf_cli_hint(pol->verdict));
			return CF_EXIT_FAIL;
		}
		cf_err("%s; the harness runs and its children run without isolation "
		       "(best-effort mode)", cf_cli_reason(f));
	}
	const char *shim = cf_cli_find_shim();
	if ((rc = cf_cli_check_machinery(pol, shim))) {
		cf_fence_destroy(f);
		return rc;
	}
	if (!shim) {
		cf_err("can not find " CF_SHIM_FILE " next to this program or at %s; "
		       "install credfence (meson install) so that both are in place",
		       CF_SHIM_INSTALLED);
		return CF_EXIT_FAIL;
	}
#ifdef __linux__
	int was_static = c.opts.static_harness;
#endif
	if (kind && (rc = cf_known_judge_shell(&c, kind, pol, shim, cwd))) {
		cf_fence_destroy(f);
		return rc;
	}
#ifdef __linux__
	static_by_table = was_static < 0 && c.opts.static_harness > 0;
	if ((rc = judge_harness_programs(&c, pol, shim, cwd)) ||
	    (rc = judge_static(&c, pol, c.cmd[0], shim, false)) ||
	    (cf_fence_ready(f) && !cf_fence_inherited(f) && (rc = refuse_inherited_dirs(pol)))) {
		cf_fence_destroy(f);
		return rc;
	}
#else
	if (c.opts.harness_programs.n) {
		cf_err("harness: --harness-program (CREDFENCE_HARNESS_PROGRAM) is supported on Linux "
		       "only; leave it out. Nothing was run.");
		return CF_EXIT_FAIL;
	}
#endif
	/* One supervisor for the whole harness: a socket bound by one fenced
	 * child is reachable from the next. It outlives this process image (the
	 * harness execs in its place) and serves until the harness and every
	 * fenced process are gone. macOS has no IPC fence yet, so no supervisor
	 * (fence.h). */
#ifdef __linux__
	/* static: the waiter, a copy of this process, removes it at the end. */
	static char priv[PATH_MAX];
	priv[0] = '\0';
	if (cf_fence_needs_supervisor(f) && (rc = private_tmpdir(f, priv, sizeof priv)))
		return rc;
	/* The waiter this process becomes keeps its first environment: the
	 * secrets leave it first (the harness gets them from environ). */
	if ((rc = cf_cli_hide_env(&c.opts)))
		return rc;
	if (cf_fence_needs_supervisor(f)) {
		int logfd = cf_fence_log_open(f);
		/* A root harness gives up capabilities in its guard; so does
		 * the supervisor that acts for its children. */
		if (geteuid() == 0 && cf_fence_ready(f) && !cf_fence_inherited(f))
			cf_fence_supervisor_without_root_caps();
		int sup = cf_fence_start_supervisor(f, getpid(), logfd, true);
		if (sup)
			cf_cli_log(f, logfd, c.cmd[0], false);
		if (logfd >= 0)
			close(logfd);
		if (sup && priv[0]) { /* no waiter: nobody else removes it */
			cf_cli_remove_tmpdir(priv);
			priv[0] = '\0';
		}
		if (sup) {
			if (pol->mode == CF_MODE_REQUIRED) {
				cf_err("%s; %s. Nothing was run.", cf_cli_reason(f),
				       cf_cli_hint(pol->verdict));
				return CF_EXIT_FAIL;
			}
			cf_err("%s; the harness runs and its children run without isolation "
			       "(best-effort mode)", cf_cli_reason(f));
		} else if (setenv("CREDFENCE_SUPERVISOR", cf_fence_supervisor(f), 1)) {
			cf_err("can not set the environment: %s", strerror(errno));
			return CF_EXIT_FAIL;
		}
	}
	/* Here, in the process that becomes the harness (the supervisor, when
	 * there is one, was started above it and stays outside the guard). A
	 * process fenced already reads no secret: nothing to guard. */
	cf_cli_warn_container("harness", f);
	if (cf_fence_ready(f) && !cf_fence_inherited(f) && (rc = guard_harness(&c, f, cwd)))
		return rc;
	/* What this kernel's Landlock can not say, and what holds it. */
	if (cf_fence_ready(f) && !cf_fence_inherited(f) && cf_fence_abi_note(f))
		cf_err("note: harness: %s", cf_fence_abi_note(f));
#else
	cf_warn("harness: on macOS the harness's own reads of the secrets are not guarded yet "
		"(SECURITY.md): only the programs it starts are fenced");
#endif
	static char marker[64]; /* putenv keeps it */
	if (!cf_harness_marker_self(marker, sizeof marker)) {
		cf_err("harness: can not read this process's start time (/proc/self/stat), which "
		       "names the harness to the shim; mount /proc. Nothing was run.");
		return CF_EXIT_FAIL;
	}
	/* The shim sends a child whose environment moves a secret through this
	 * program (credfence run), which builds that child's fence. */
	char self[PATH_MAX];
	ssize_t sn = self_exe(self, sizeof self);
	if (sn > 0)
		self[sn] = '\0';
	if (cf_cli_export_options(&c, pol, cwd, CF_SET_EXPORT) || cf_cli_preload(shim) ||
#ifdef __linux__
	    (priv[0] && export_tmpdir(priv)) ||
#endif
	    putenv(marker) ||
	    (sn > 0 && setenv("CREDFENCE_LAUNCHER", self, 1))) {
		cf_err("can not set the environment: %s", strerror(errno));
		return CF_EXIT_FAIL;
	}
	cf_fence_destroy(f);
	warn_harness(c.cmd);
	cf_cli_exec(c.cmd);
}
