/* cf-matrix: the exec matrix. Run as a harness (under `credfence harness`) with
 * argument "fenced", or with no shim at all with argument "free". It calls
 * every interposed entry point through ffi_call (the variadic ones through
 * ffi_prep_cif_var, with 0 to 64 extra arguments) and checks what each child
 * (cf-probe) could read: every key denied when fenced, readable when free.
 *
 * Output lines:
 *   OK <case> / FAIL <case>: <why>   the verdict on one launch
 *   ERR <case> rc=<r> errno=<E>      a failing call's result: the test compares
 *                                    these lines between the two runs
 *   HARNESS_READ ok|<why>            the harness itself can read its own login (CF_T_OWN)
 *   LAUNCHES <n>                     launches that must each log one line
 * Exit status: 0 when no FAIL line was printed.
 *
 * Environment: CF_T_KEYS, CF_T_KEY (the harness reads it), CF_T_ALLOWED,
 * CF_T_PROBE (path of cf-probe), CF_T_BIN (a directory with cf-noexec, a file
 * without x bit, and cf-script, an executable script without #!), and PATH
 * with CF_T_BIN and the probe's directory first. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ffi.h>
#include <libgen.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static bool fenced;
static int expect_probe; /* exit status of cf-probe: 0 fenced, 10 free */
static int failures, launches;
static const char *probe, *bindir;
static char probe_dir[4096], noexec[4096], script[4096];
static char **probe_env; /* no LD_PRELOAD, no CREDFENCE_*: the fence must come from the kernel */

#define P (&ffi_type_pointer)
#define I (&ffi_type_sint)
#define L (&ffi_type_slong)

static void fail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *name, const char *fmt, ...)
{
	va_list ap;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures++;
}

static void ok(const char *name)
{
	printf("OK %s\n", name);
	fflush(stdout);
}

/* The shim's function when fenced, libc's when free: the matrix must test the wrapper. */
static void *entry(const char *name)
{
	void *fn = dlsym(RTLD_DEFAULT, name);
	Dl_info info;
	if (!fn) {
		fail(name, "no such symbol");
		return NULL;
	}
	if (!dladdr(fn, &info) || !info.dli_fname) {
		fail(name, "dladdr found no object");
		return fn;
	}
	bool from_shim = strstr(info.dli_fname, "libcredfence") != NULL;
	if (from_shim != fenced)
		fail(name, "resolved to %s", info.dli_fname);
	return fn;
}

/* ffi_call of NAME with N arguments, of which NFIXED are fixed (variadic when
 * NFIXED < N or VARIADIC). Returns the result as a long; errno is the call's. */
static long call(const char *name, ffi_type *rt, bool variadic, unsigned nfixed, unsigned n,
		 ffi_type **types, void **values)
{
	ffi_cif cif;
	void *fn = entry(name);
	ffi_status st = variadic ? ffi_prep_cif_var(&cif, FFI_DEFAULT_ABI, nfixed, n, rt, types)
				 : ffi_prep_cif(&cif, FFI_DEFAULT_ABI, n, rt, types);
	if (!fn || st != FFI_OK) {
		fail(name, "ffi_prep_cif failed (%d)", (int)st);
		errno = ENOSYS;
		return -1;
	}
	union {
		ffi_sarg i;
		void *p;
	} rv;
	errno = 0;
	ffi_call(&cif, FFI_FN(fn), &rv, values);
	int e = errno;
	long r = rt == P ? (long)rv.p : rt == L ? (long)rv.i : (long)(int)rv.i;
	errno = e;
	return r;
}

/* ---- the exec family, called in a forked child ---- */

enum target { T_PROBE, T_MISSING, T_NOEXEC, T_SCRIPT, T_NULL };

static const char *target_path(enum target t)
{
	switch (t) {
	case T_PROBE:
		return probe;
	case T_MISSING:
		return "/nonexistent-cf/cf-missing";
	case T_NOEXEC:
		return noexec;
	case T_SCRIPT:
		return script;
	case T_NULL:
		return NULL;
	}
	return NULL;
}

/* For the PATH searching forms: a bare name found on PATH. */
static const char *target_name(enum target t)
{
	switch (t) {
	case T_PROBE:
		return "cf-probe";
	case T_MISSING:
		return "cf-no-such-program";
	case T_NOEXEC:
		return "cf-noexec";
	case T_SCRIPT:
		return "cf-script";
	case T_NULL:
		return NULL;
	}
	return NULL;
}

struct exec_case {
	const char *name;
	const char *fn;
	enum target target;
	int extra; /* extra arguments for the variadic forms and the argv */
};

/* Argument vectors of the probe: "cf-probe", then "N:1".."N:N". */
static char **probe_argv(int n, char *store, size_t storesz)
{
	char **av = calloc((size_t)n + 2, sizeof *av);
	size_t off = 0;
	av[0] = "cf-probe";
	for (int i = 1; i <= n; i++) {
		int k = snprintf(store + off, storesz - off, "%d:%d", n, i) + 1;
		av[i] = store + off;
		off += (size_t)k;
	}
	return av;
}

/* In the child: make the call. Returns only when it failed. */
static long child_call(const struct exec_case *c, int *err)
{
	char store[1024];
	char **av = probe_argv(c->extra, store, sizeof store);
	const char *path = target_path(c->target), *file = target_name(c->target);
	char **ev = probe_env;
	long r = -2;
	const char *fn = c->fn;

	if (!strcmp(fn, "execve")) {
		void *a[] = {&path, &av, &ev};
		ffi_type *t[] = {P, P, P};
		r = call(fn, I, false, 3, 3, t, a);
	} else if (!strcmp(fn, "execv")) {
		void *a[] = {&path, &av};
		ffi_type *t[] = {P, P};
		r = call(fn, I, false, 2, 2, t, a);
	} else if (!strcmp(fn, "execvp")) {
		void *a[] = {&file, &av};
		ffi_type *t[] = {P, P};
		r = call(fn, I, false, 2, 2, t, a);
	} else if (!strcmp(fn, "execvp-path")) {
		void *a[] = {&path, &av};
		ffi_type *t[] = {P, P};
		r = call("execvp", I, false, 2, 2, t, a);
	} else if (!strcmp(fn, "execvpe")) {
		void *a[] = {&file, &av, &ev};
		ffi_type *t[] = {P, P, P};
		r = call(fn, I, false, 3, 3, t, a);
	} else if (!strcmp(fn, "execl") || !strcmp(fn, "execlp") || !strcmp(fn, "execle")) {
		/* path, arg0, then EXTRA strings, the NULL, and for execle the envp. */
		bool le = !strcmp(fn, "execle");
		const char *first = !strcmp(fn, "execlp") ? file : path;
		unsigned n = 2 + (unsigned)c->extra + 1 + (le ? 1 : 0);
		ffi_type *t[80];
		void *a[80];
		void *nul = NULL;
		t[0] = P, a[0] = &first;
		t[1] = P, a[1] = &av[0];
		for (int i = 1; i <= c->extra; i++)
			t[1 + i] = P, a[1 + i] = &av[i];
		t[2 + c->extra] = P, a[2 + c->extra] = &nul;
		if (le)
			t[3 + c->extra] = P, a[3 + c->extra] = &ev;
		r = call(fn, I, true, 2, n, t, a);
	} else if (!strcmp(fn, "execle-noarg")) {
		/* No argument at all: the NULL first, then the envp (callers do
		 * pass an empty argv; the kernel then gives argv[0] ""). */
		void *nul = NULL;
		void *a[] = {&path, &nul, &ev};
		ffi_type *t[] = {P, P, P};
		r = call("execle", I, true, 2, 3, t, a);
	} else if (!strcmp(fn, "fexecve")) {
		int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
		void *a[] = {&fd, &av, &ev};
		ffi_type *t[] = {I, P, P};
		r = call(fn, I, false, 3, 3, t, a);
	} else if (!strcmp(fn, "execveat")) {
		int dfd = open(c->target == T_PROBE ? probe_dir : bindir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		const char *rel = c->target == T_PROBE ? "cf-probe" : file;
		int flags = 0;
		void *a[] = {&dfd, &rel, &av, &ev, &flags};
		ffi_type *t[] = {I, P, P, P, I};
		r = call(fn, I, false, 5, 5, t, a);
	} else if (!strcmp(fn, "execveat-empty")) {
		int fd = open(path, O_PATH | O_CLOEXEC);
		const char *empty = "";
		int flags = AT_EMPTY_PATH;
		void *a[] = {&fd, &empty, &av, &ev, &flags};
		ffi_type *t[] = {I, P, P, P, I};
		r = call("execveat", I, false, 5, 5, t, a);
	} else if (!strcmp(fn, "execveat-badfd")) {
		int dfd = -1, flags = 0;
		void *a[] = {&dfd, &file, &av, &ev, &flags};
		ffi_type *t[] = {I, P, P, P, I};
		r = call("execveat", I, false, 5, 5, t, a);
	} else if (!strcmp(fn, "SYS_execve")) {
		long nr = SYS_execve;
		void *a[] = {&nr, &path, &av, &ev};
		ffi_type *t[] = {L, P, P, P};
		r = call("syscall", L, true, 1, 4, t, a);
	} else if (!strcmp(fn, "SYS_execveat")) {
		long nr = SYS_execveat;
		int dfd = c->target == T_PROBE ? open(probe_dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : AT_FDCWD;
		const char *rel = c->target == T_PROBE ? "cf-probe" : path;
		int flags = 0;
		void *a[] = {&nr, &dfd, &rel, &av, &ev, &flags};
		ffi_type *t[] = {L, I, P, P, P, I};
		r = call("syscall", L, true, 1, 6, t, a);
	}
	*err = errno;
	free(av);
	return r;
}

/* A failing exec by path of a file that is not there or not executable fails
 * before anything is fenced, with no log line (a hand-made PATH search tries
 * such candidates by the dozen, issue 12); every other launch logs one. */
static bool logs_a_line(const struct exec_case *c, bool expect_exec)
{
	static const char *const by_path[] = {"execve", "execv", "execl", "execle"};
	if (expect_exec || (c->target != T_MISSING && c->target != T_NOEXEC))
		return true;
	for (size_t i = 0; i < sizeof by_path / sizeof *by_path; i++)
		if (!strcmp(c->fn, by_path[i]))
			return false;
	return true;
}

/* Fork, make the call in the child, wait. EXPECT_EXEC: the call must succeed
 * and the probe report as expected; else the call must fail with WANT_ERRNO
 * (the ERR line is also compared with the run without the shim). */
static void exec_case(const struct exec_case *c, bool expect_exec, int want_errno)
{
	char name[128];
	int pfd[2];
	snprintf(name, sizeof name, "%s/%s/%d", c->fn,
		 (const char *[]){"probe", "missing", "noexec", "script", "null"}[c->target], c->extra);
	if (pipe2(pfd, O_CLOEXEC)) {
		fail(name, "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fail(name, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		int err = 0;
		long r = child_call(c, &err);
		int msg[2] = {(int)r, err};
		(void)!write(pfd[1], msg, sizeof msg);
		_exit(99);
	}
	close(pfd[1]);
	int msg[2] = {0, 0};
	ssize_t got = read(pfd[0], msg, sizeof msg);
	close(pfd[0]);
	int st;
	waitpid(pid, &st, 0);
	if (fenced && logs_a_line(c, expect_exec))
		launches++;
	if (got == (ssize_t)sizeof msg) {
		/* The call returned: it failed. */
		printf("ERR %s rc=%d errno=%s\n", name, msg[0], strerrorname_np(msg[1]) ?: "0");
		if (expect_exec)
			fail(name, "the exec failed: rc %d, %s", msg[0], strerror(msg[1]));
		else if (msg[0] != -1 || msg[1] != want_errno)
			fail(name, "rc %d errno %s, expected -1 %s", msg[0], strerrorname_np(msg[1]),
			     strerrorname_np(want_errno));
		else
			ok(name);
		return;
	}
	if (!expect_exec) {
		fail(name, "the exec succeeded, expected %s", strerrorname_np(want_errno));
		return;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != expect_probe)
		fail(name, "cf-probe ended with status %d (signal %d), expected %d",
		     WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0,
		     expect_probe);
	else
		ok(name);
}

static void exec_family(void)
{
	static const char *const fns[] = {"execve", "execv", "execvp", "execvpe", "fexecve",
					  "execveat", "execveat-empty", "SYS_execve", "SYS_execveat"};
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
		for (int extra = 0; extra <= 3; extra += 3)
			exec_case(&(struct exec_case){fns[i], fns[i], T_PROBE, extra}, true, 0);
	/* The variadic forms: 0 to 64 extra arguments. */
	static const char *const var[] = {"execl", "execlp", "execle"};
	for (size_t i = 0; i < 3; i++)
		for (int extra = 0; extra <= 64; extra++)
			exec_case(&(struct exec_case){var[i], var[i], T_PROBE, extra}, true, 0);
	/* execle with no argument: the list ends at once, and the envp after
	 * it reaches the child (seed 41's exec.c:128: one argument counted
	 * too many, the envp was taken for it). The shim's own: glibc's
	 * execle reads an argument after the first whatever it is, so the
	 * free run would pass the envp as argv[1] and garbage as the envp. */
	if (fenced)
		exec_case(&(struct exec_case){"execle-noarg", "execle-noarg", T_PROBE, 0}, true, 0);
	/* The ENOEXEC shell fallback of the PATH searching forms. */
	exec_case(&(struct exec_case){"execvp", "execvp", T_SCRIPT, 0}, true, 0);
	exec_case(&(struct exec_case){"execvpe", "execvpe", T_SCRIPT, 0}, true, 0);
	exec_case(&(struct exec_case){"execlp", "execlp", T_SCRIPT, 0}, true, 0);
	exec_case(&(struct exec_case){"execvp-path", "execvp-path", T_SCRIPT, 0}, true, 0);

	/* Failing execs: the same result and errno as without the shim. */
	static const struct {
		const char *fn;
		enum target t;
		int err;
	} bad[] = {
		{"execve", T_MISSING, ENOENT},     {"execve", T_NOEXEC, EACCES},
		{"execve", T_SCRIPT, ENOEXEC},     {"execve", T_NULL, EFAULT},
		{"execv", T_MISSING, ENOENT},      {"execv", T_NOEXEC, EACCES},
		{"execvp", T_MISSING, ENOENT},     {"execvp", T_NOEXEC, EACCES},
		{"execvp-path", T_MISSING, ENOENT}, {"execvp-path", T_NOEXEC, EACCES},
		{"execvpe", T_MISSING, ENOENT},    {"execvpe", T_NOEXEC, EACCES},
		{"execl", T_MISSING, ENOENT},      {"execl", T_NOEXEC, EACCES},
		{"execlp", T_MISSING, ENOENT},     {"execlp", T_NOEXEC, EACCES},
		{"execle", T_MISSING, ENOENT},     {"execle", T_NOEXEC, EACCES},
		{"fexecve", T_NOEXEC, EACCES},     {"fexecve", T_NULL, EINVAL},
		{"execveat", T_MISSING, ENOENT},   {"execveat", T_NOEXEC, EACCES},
		{"execveat-badfd", T_MISSING, EBADF},
		{"SYS_execve", T_MISSING, ENOENT}, {"SYS_execve", T_NOEXEC, EACCES},
		{"SYS_execveat", T_MISSING, ENOENT}, {"SYS_execveat", T_NOEXEC, EACCES},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		exec_case(&(struct exec_case){bad[i].fn, bad[i].fn, bad[i].t, 2}, false, bad[i].err);
}

/* Failing execs in the harness process itself: it stays the harness, free. */
static void exec_in_harness(void)
{
	static const struct exec_case cs[] = {
		{"harness-execve", "execve", T_MISSING, 1},
		{"harness-execvp", "execvp", T_MISSING, 1},
		{"harness-execl", "execl", T_NOEXEC, 1},
		{"harness-SYS_execve", "SYS_execve", T_MISSING, 1},
	};
	for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
		int err = 0;
		long r = child_call(&cs[i], &err);
		printf("ERR %s rc=%ld errno=%s\n", cs[i].name, r, strerrorname_np(err) ?: "0");
	}
}

/* ---- posix_spawn and posix_spawnp ---- */

static void spawn_case(const char *fn, enum target t, bool expect_ok, int want)
{
	char name[128], store[64];
	snprintf(name, sizeof name, "%s/%s", fn,
		 (const char *[]){"probe", "missing", "noexec", "script", "null"}[t]);
	bool p = !strcmp(fn, "posix_spawnp");
	const char *what = p ? target_name(t) : target_path(t);
	char **av = probe_argv(2, store, sizeof store);
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC)) {
		fail(name, "pipe: %s", strerror(errno));
		return;
	}
	/* A file action and two attributes that must reach the child. */
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t mask;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 3);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
	posix_spawnattr_setpgroup(&at, 0);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	posix_spawnattr_setsigmask(&at, &mask);
	size_t ne = 0;
	while (probe_env[ne])
		ne++;
	char **ev = calloc(ne + 4, sizeof *ev);
	memcpy(ev, probe_env, ne * sizeof *ev);
	ev[ne] = "CF_T_FD3=1", ev[ne + 1] = "CF_T_PGRP=1", ev[ne + 2] = "CF_T_SIGMASK=1";

	pid_t pid = -1;
	pid_t *pp = &pid;
	posix_spawn_file_actions_t *fap = &fa;
	posix_spawnattr_t *atp = &at;
	void *a[] = {&pp, &what, &fap, &atp, &av, &ev};
	ffi_type *ty[] = {P, P, P, P, P, P};
	long r = call(fn, I, false, 6, 6, ty, a);
	close(pfd[1]);
	if (fenced)
		launches++;
	printf("ERR %s rc=%ld errno=%s\n", name, r, r > 0 ? strerrorname_np((int)r) : "0");
	if (r != 0) {
		if (expect_ok)
			fail(name, "returned %s", strerror((int)r));
		else if (r != want)
			fail(name, "returned %s, expected %s", strerrorname_np((int)r), strerrorname_np(want));
		else
			ok(name);
	} else {
		int st;
		char buf[16] = {0};
		waitpid(pid, &st, 0);
		ssize_t n = read(pfd[0], buf, sizeof buf - 1);
		if (!expect_ok)
			fail(name, "succeeded, expected %s", strerrorname_np(want));
		else if (!WIFEXITED(st) || WEXITSTATUS(st) != expect_probe)
			fail(name, "cf-probe ended with status %d, expected %d",
			     WIFEXITED(st) ? WEXITSTATUS(st) : -1, expect_probe);
		else if (n != 6)
			fail(name, "nothing came through the fd 3 file action");
		else
			ok(name);
	}
	close(pfd[0]);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(ev);
	free(av);
}

static void spawn_family(void)
{
	for (int i = 0; i < 3; i++) {
		spawn_case("posix_spawn", T_PROBE, true, 0);
		spawn_case("posix_spawnp", T_PROBE, true, 0);
	}
	spawn_case("posix_spawn", T_MISSING, false, ENOENT);
	spawn_case("posix_spawn", T_NOEXEC, false, EACCES);
	spawn_case("posix_spawnp", T_MISSING, false, ENOENT);
	spawn_case("posix_spawnp", T_NOEXEC, false, EACCES);
}

/* ---- system and popen ---- */

static long do_system(const char *cmd)
{
	void *a[] = {&cmd};
	ffi_type *t[] = {P};
	return call("system", I, false, 1, 1, t, a);
}

static void system_case(const char *name, const char *cmd, long want)
{
	long r = do_system(cmd);
	int e = errno;
	if (fenced)
		launches++;
	/* A probe's status differs by design between the runs: compare the rest. */
	if (!strstr(name, "/probe"))
		printf("ERR %s rc=%ld errno=%s\n", name, r, r == -1 ? strerrorname_np(e) : "0");
	if (r != want)
		fail(name, "system returned %ld, expected %ld", r, want);
	else
		ok(name);
}

static void system_family(void)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "exec '%s' 1:1", probe);
	system_case("system/probe", cmd, expect_probe << 8);
	system_case("system/exit", "exit 7", 7 << 8);
	system_case("system/missing", "/nonexistent-cf/cf-missing 2>/dev/null", 127 << 8);
	snprintf(cmd, sizeof cmd, "'%s' 2>/dev/null", noexec);
	system_case("system/noexec", cmd, 126 << 8);
	/* system(NULL): is there a shell. */
	long r = do_system(NULL);
	if (fenced)
		launches++;
	printf("ERR system/NULL rc=%ld\n", r);
	if (r == 0)
		fail("system/NULL", "no shell");
	/* SIGINT sent by the child to the caller is ignored while system() waits. */
	system_case("system/sigint", "kill -INT $PPID; exit 3", 3 << 8);

	/* popen, both directions. */
	snprintf(cmd, sizeof cmd, "exec '%s' 1:1", probe);
	const char *modes[] = {"r", "re", "w"};
	for (size_t i = 0; i < 3; i++) {
		char name[64];
		snprintf(name, sizeof name, "popen/%s", modes[i]);
		const char *c = cmd, *m = modes[i];
		void *a[] = {&c, &m};
		ffi_type *t[] = {P, P};
		FILE *fp = (FILE *)call("popen", P, false, 2, 2, t, a);
		if (fenced)
			launches++;
		if (!fp) {
			fail(name, "popen: %s", strerror(errno));
			continue;
		}
		if (m[0] == 'r') {
			/* Forward what the probe printed: the marker check sees it. */
			char buf[4096];
			size_t n;
			while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
				fwrite(buf, 1, n, stdout);
		}
		int st = pclose(fp);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != expect_probe)
			fail(name, "cf-probe ended with status %d, expected %d",
			     WIFEXITED(st) ? WEXITSTATUS(st) : -1, expect_probe);
		else
			ok(name);
	}
	/* Failing popen: a bad mode, a missing command. */
	{
		const char *c = "true", *m = "x";
		void *a[] = {&c, &m};
		ffi_type *t[] = {P, P};
		FILE *fp = (FILE *)call("popen", P, false, 2, 2, t, a);
		int e = errno;
		/* Refused before any child is made: no launch, no log line. */
		printf("ERR popen/badmode rc=%s errno=%s\n", fp ? "FILE" : "NULL",
		       fp ? "0" : strerrorname_np(e));
		if (fp)
			pclose(fp);
	}
	{
		const char *c = "/nonexistent-cf/cf-missing 2>/dev/null", *m = "r";
		void *a[] = {&c, &m};
		ffi_type *t[] = {P, P};
		FILE *fp = (FILE *)call("popen", P, false, 2, 2, t, a);
		if (fenced)
			launches++;
		int st = fp ? pclose(fp) : -1;
		printf("ERR popen/missing rc=%d\n", st);
		if (st != 127 << 8)
			fail("popen/missing", "pclose returned %d", st);
	}
}

/* syscall() for anything but an exec keeps its meaning. */
static void syscall_plain(void)
{
	long nr = SYS_getpid;
	void *a[] = {&nr};
	ffi_type *t[] = {L};
	long r = call("syscall", L, true, 1, 1, t, a);
	if (r != getpid())
		fail("syscall/getpid", "returned %ld, expected %ld", r, (long)getpid());
	nr = SYS_close;
	long fd = -1;
	void *b[] = {&nr, &fd};
	ffi_type *u[] = {L, L};
	r = call("syscall", L, true, 1, 2, u, b);
	printf("ERR syscall/close(-1) rc=%ld errno=%s\n", r, strerrorname_np(errno));
}

static void harness_reads(const char *when)
{
	const char *key = getenv("CF_T_OWN");
	char buf[64] = {0};
	int fd = fenced ? open(getenv("CF_T_KEY"), O_RDONLY | O_CLOEXEC) : -1;
	if (fenced && (fd >= 0 || errno != EACCES)) {
		printf("HARNESS_READ %s: the harness read the key (harness_guard.h)\n", when);
		failures++;
		if (fd >= 0)
			close(fd);
	}
	fd = open(key, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("HARNESS_READ %s: %s\n", when, strerror(errno));
		failures++;
		return;
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n > 0 && strncmp(buf, "CFMARK-", 7) == 0) {
		printf("HARNESS_READ ok\n");
	} else {
		printf("HARNESS_READ %s: unexpected content\n", when);
		failures++;
	}
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "fenced") && strcmp(argv[1], "free"))) {
		fprintf(stderr, "usage: cf-matrix fenced|free\n");
		return 2;
	}
	fenced = !strcmp(argv[1], "fenced");
	expect_probe = fenced ? 0 : 10;
	probe = getenv("CF_T_PROBE");
	bindir = getenv("CF_T_BIN");
	if (!probe || !bindir || !getenv("CF_T_KEYS") || !getenv("CF_T_KEY") ||
	    !getenv("CF_T_ALLOWED")) {
		fprintf(stderr, "cf-matrix: CF_T_PROBE, CF_T_BIN, CF_T_KEYS, CF_T_KEY, CF_T_ALLOWED must be set\n");
		return 2;
	}
	snprintf(probe_dir, sizeof probe_dir, "%s", probe);
	dirname(probe_dir);
	snprintf(noexec, sizeof noexec, "%s/cf-noexec", bindir);
	snprintf(script, sizeof script, "%s/cf-script", bindir);
	static char e1[70000], e2[8192], e3[8192];
	snprintf(e1, sizeof e1, "CF_T_KEYS=%s", getenv("CF_T_KEYS"));
	snprintf(e2, sizeof e2, "CF_T_ALLOWED=%s", getenv("CF_T_ALLOWED"));
	/* cf-script, run by /bin/sh, execs "$CF_T_PROBE". */
	snprintf(e3, sizeof e3, "CF_T_PROBE=%s", probe);
	static char *env[] = {e1, e2, e3, "PATH=/usr/bin:/bin", NULL};
	probe_env = env;
	setvbuf(stdout, NULL, _IOLBF, 0);

	harness_reads("at start");
	exec_family();
	exec_in_harness();
	spawn_family();
	system_family();
	syscall_plain();
	harness_reads("at the end");
	printf("LAUNCHES %d\n", launches);
	printf("FAILURES %d\n", failures);
	return failures ? 1 : 0;
}
