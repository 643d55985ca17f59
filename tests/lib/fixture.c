#include "fixture.h"

#ifdef __APPLE__
#define CF_FX_SHIM_FILE "libcredfence.dylib"
#else
#define CF_FX_SHIM_FILE "libcredfence.so"
#define CF_FX_FENCED_SHIM_FILE "libcredfence-fenced.so"
#define CF_FX_JUDGE_FILE "libcredfence-judge.so"
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#endif
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "secrets.h"

#define DEFAULT_ROOT "/var/lib/credfence-tests"

/* Rows that are directories. Any row that is the parent of another row is one too. */
static const char *const dir_rows[] = {
	".ssh", ".aws", ".gnupg", ".kube", ".config/gh", ".config/gcloud", ".azure",
	".config/op", ".password-store", ".local/share/keyrings", ".config/rclone",
	".mozilla", ".config/google-chrome", ".config/chromium",
};

static bool row_is_dir(const char *rel)
{
	size_t n = strlen(rel);
	for (size_t i = 0; i < sizeof dir_rows / sizeof *dir_rows; i++)
		if (strcmp(dir_rows[i], rel) == 0)
			return true;
	for (size_t i = 0; i < cf_secret_count; i++)
		if (strncmp(cf_secret_table[i].rel, rel, n) == 0 && cf_secret_table[i].rel[n] == '/')
			return true;
	return false;
}

static const char *inner_name(const char *rel)
{
	if (strcmp(rel, ".ssh") == 0)
		return "id_ed25519";
	if (strcmp(rel, ".kube") == 0)
		return "config";
	return "cf-key";
}

void cf_fx_fmt(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(out, n, fmt, ap);
	va_end(ap);
	cr_assert(k >= 0 && (size_t)k < n, "path too long: %s...", out);
}

const char *cf_fx_at(const char *dir, const char *rel)
{
	static char ring[16][PATH_MAX];
	static unsigned k;
	char *b = ring[k++ % 16];
	char tmp[PATH_MAX];
	cf_fx_fmt(tmp, sizeof tmp, "%s/%s", dir, rel); /* DIR may be a ring buffer */
	memcpy(b, tmp, sizeof tmp);
	return b;
}

void cf_fx_mkdirs(const char *path)
{
	char buf[PATH_MAX];
	cr_assert(strlen(path) < sizeof buf, "path too long: %s", path);
	strcpy(buf, path);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				cr_assert_fail("mkdir %s: %s", buf, strerror(errno));
			*p = c;
			if (!c)
				break;
		}
	}
}

void cf_fx_write(const char *path, const char *text)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		cf_fx_mkdirs(dir);
	}
	FILE *f = fopen(path, "w");
	cr_assert(f, "can not write %s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert(fclose(f) == 0, "write %s: %s", path, strerror(errno));
}

char *cf_fx_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	cr_assert(buf);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			cr_assert(buf);
		}
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static void rmtree_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		DIR *d = fdopendir(fd);
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				rmtree_at(fd, e->d_name);
		if (d)
			closedir(d);
		else
			close(fd);
		unlinkat(dirfd, name, AT_REMOVEDIR);
	} else {
		unlinkat(dirfd, name, 0);
	}
}

void cf_fx_rmtree(const char *path)
{
	rmtree_at(AT_FDCWD, path);
}

/* PATH is DIR or under it (both canonical). */
static bool within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static void check_root(const char *root)
{
	const char *bad[] = {"/tmp", "/var/tmp", "/dev/shm", getenv("TMPDIR"),
			     getenv("CREDFENCE_SOURCE"), getenv("CREDFENCE_BUILD")};
	const char *what[] = {"/tmp", "/var/tmp", "/dev/shm", "$TMPDIR", "the checkout",
			      "the build tree"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char canon[PATH_MAX];
		if (!bad[i] || !*bad[i] || !realpath(bad[i], canon))
			continue;
		if (within(root, canon) || within(canon, root))
			cr_assert_fail("the fixture root %s overlaps %s (%s): fake homes must lie "
				       "outside every writable location; set CREDFENCE_TEST_ROOT to a "
				       "directory elsewhere (default " DEFAULT_ROOT ")",
				       root, what[i], canon);
	}
}

static void real_home(char *out, size_t n)
{
	struct passwd *pw = getpwuid(getuid());
	snprintf(out, n, "%s", pw && pw->pw_dir ? pw->pw_dir : "/");
}

static void marker_for(char *out, size_t n, const char *tag, const char *rel)
{
	int k = snprintf(out, n, "%s-", tag);
	for (const char *p = rel; *p && (size_t)k + 1 < n; p++)
		out[k++] = (*p == '/' || *p == '.') ? '_' : *p;
	out[k] = '\0';
}

/* The credfence under test, copied to ROOT/bin with its shim in ROOT/lib (the
 * installed layout): credfence refuses to fence with a binary or a shim that
 * lies in a writable location, and the checkout may lie in /tmp. */
static char installed_bin[PATH_MAX];

static void copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	cr_assert(in >= 0, "open %s: %s", from, strerror(errno));
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	cr_assert(out >= 0, "create %s: %s", to, strerror(errno));
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		cr_assert(write(out, buf, (size_t)n) == n, "write %s: %s", to, strerror(errno));
	cr_assert(n == 0, "read %s: %s", from, strerror(errno));
	close(in);
	cr_assert(close(out) == 0);
}

static void install_machinery(const struct cf_fx *fx)
{
	const char *bin = getenv("CREDFENCE_BIN"), *build = getenv("CREDFENCE_BUILD");
	installed_bin[0] = '\0';
	if (!bin || !*bin)
		return;
	cf_fx_mkdirs(cf_fx_at(fx->root, "bin"));
	cf_fx_mkdirs(cf_fx_at(fx->root, "lib"));
	copy_file(bin, cf_fx_at(fx->root, "bin/credfence"));
	if (build && *build) {
		char shim[PATH_MAX];
		cf_fx_fmt(shim, sizeof shim, "%s/shim/%s", build, CF_FX_SHIM_FILE);
		if (access(shim, R_OK) == 0)
			copy_file(shim, cf_fx_at(fx->root, "lib/" CF_FX_SHIM_FILE));
#ifdef CF_FX_FENCED_SHIM_FILE
		/* What fenced programs load, beside it (issue 36). */
		cf_fx_fmt(shim, sizeof shim, "%s/shim/%s", build, CF_FX_FENCED_SHIM_FILE);
		if (access(shim, R_OK) == 0)
			copy_file(shim, cf_fx_at(fx->root, "lib/" CF_FX_FENCED_SHIM_FILE));
		cf_fx_fmt(shim, sizeof shim, "%s/shim/%s", build, CF_FX_JUDGE_FILE);
		if (access(shim, R_OK) == 0)
			copy_file(shim, cf_fx_at(fx->root, "lib/" CF_FX_JUDGE_FILE));
#endif
	}
	cf_fx_fmt(installed_bin, sizeof installed_bin, "%s/bin/credfence", fx->root);
}

/* Whether UID:GID can execute PATH: asked of a child that takes those ids
 * (root only; another user's run is that user's own). */
static bool executable_by(const char *path, unsigned uid, unsigned gid)
{
	if (geteuid() != 0)
		return access(path, X_OK) == 0;
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid((gid_t)gid) || setuid((uid_t)uid))
			_exit(2);
		_exit(access(path, X_OK) == 0 ? 0 : 1);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 2, "can not take uid %u", uid);
	return WEXITSTATUS(st) == 0;
}

const char *cf_fx_helper_for(const struct cf_fx *fx, const char *path, unsigned uid, unsigned gid)
{
	const char *name = strrchr(path, '/');
	name = name ? name + 1 : path;
	cf_fx_mkdirs(cf_fx_at(fx->root, "bin"));
	const char *copy = cf_fx_at(fx->root, "bin");
	static char out[PATH_MAX];
	cf_fx_fmt(out, sizeof out, "%s/%s", copy, name);
	copy_file(path, out);
	cr_assert(chmod(out, 0755) == 0, "chmod %s: %s", out, strerror(errno));
	if (!executable_by(out, uid, gid))
		cf_test_unavailable("uid %u can not execute %s: the fixture root lies where that user "
				    "can not reach it; set CREDFENCE_TEST_ROOT to a directory every "
				    "user can traverse (default " DEFAULT_ROOT ")",
				    uid, out);
	return out;
}

/* DIR, made if missing, as a directory of this user's own that no one else
 * can write to: 0 or the reason it can not be one (into WHY). */
static int own_dir(const char *dir, mode_t mode, char *why, size_t n)
{
	struct stat st;
	if (mkdir(dir, mode) != 0 && errno != EEXIST) {
		snprintf(why, n, "%s: can not create it (%s)", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, n, "%s: not a directory", dir);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, n, "%s: owned by uid %u, not by this user (uid %u)", dir,
			 (unsigned)st.st_uid, (unsigned)geteuid());
		return -1;
	}
	if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
		snprintf(why, n, "%s: others can write to it", dir);
		return -1;
	}
	return 0;
}

/* The fixture root of this user (see fixture.h), into OUT; false with the
 * reasons in WHY when there is none. A root run makes DEFAULT_ROOT sticky and
 * open to all (mode 1777, like /tmp): every user then gets DEFAULT_ROOT/uid-N
 * of their own there, and a root run never blocks a later run of another user. */
static bool pick_root(char *out, size_t n, char *why, size_t wn)
{
	const char *env = getenv("CREDFENCE_TEST_ROOT");
	char tried[2][PATH_MAX + 128] = {"", ""};
	struct stat st;
	if (env && *env) {
		cr_assert(env[0] == '/', "CREDFENCE_TEST_ROOT must be absolute, not '%s'", env);
		cf_fx_fmt(out, n, "%s", env);
		if (mkdir(out, 0755) != 0 && errno != EEXIST)
			cr_assert_fail("can not create the fixture root %s (%s); create it (mode 0755) "
				       "or set CREDFENCE_TEST_ROOT to a directory outside /tmp, /var/tmp, "
				       "/dev/shm, $TMPDIR and the checkout", out, strerror(errno));
		return true;
	}
	if (geteuid() == 0 && mkdir(DEFAULT_ROOT, 01777) == 0)
		chmod(DEFAULT_ROOT, 01777); /* mkdir masks the mode with the umask */
	if (geteuid() == 0 && lstat(DEFAULT_ROOT, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == 0 && (st.st_mode & 07777) != 01777)
		chmod(DEFAULT_ROOT, 01777); /* made 0755 by an older run: open it */
	cf_fx_fmt(out, n, DEFAULT_ROOT "/uid-%u", (unsigned)geteuid());
	if (own_dir(out, 0755, tried[0], sizeof tried[0]) == 0)
		return true;
	const char *run = getenv("XDG_RUNTIME_DIR");
	if (run && run[0] == '/') {
		cf_fx_fmt(out, n, "%s/credfence-tests", run);
		if (own_dir(out, 0755, tried[1], sizeof tried[1]) == 0)
			return true;
	} else {
		snprintf(tried[1], sizeof tried[1], "$XDG_RUNTIME_DIR is not set");
	}
	snprintf(why, wn,
		 "no fixture root for this user (uid %u): %s; %s. Fake homes must lie outside "
		 "/tmp, /var/tmp, /dev/shm, $TMPDIR and the checkout: let root open the shared "
		 "root once (sudo install -d -m 1777 " DEFAULT_ROOT "), or set CREDFENCE_TEST_ROOT "
		 "to a directory of yours elsewhere",
		 (unsigned)geteuid(), tried[0], tried[1]);
	return false;
}

const char *cf_fx_root_dir(void)
{
	static char root[PATH_MAX];
	char why[3 * PATH_MAX];
	if (!pick_root(root, sizeof root, why, sizeof why))
		cf_test_unavailable("%s", why);
	return root;
}

/* The fixtures of this test (criterion runs each test in a process of its
 * own): a skipped test gets no .fini, so cf_test_unavailable removes them. */
static struct cf_fx *live[8];

static void live_set(struct cf_fx *fx, bool on)
{
	for (size_t i = 0; i < sizeof live / sizeof *live; i++)
		if (on ? !live[i] : live[i] == fx) {
			live[i] = on ? fx : NULL;
			return;
		}
}

void cf_fx_setup(struct cf_fx *fx)
{
	char base[PATH_MAX], canon[PATH_MAX];
	unsigned char rnd[6];

	memset(fx, 0, sizeof *fx);
	const char *root = cf_fx_root_dir();
	cr_assert(realpath(root, canon), "fixture root %s: %s", root, strerror(errno));
	check_root(canon);
	cf_fx_fmt(base, sizeof base, "%s/cf-XXXXXX", canon);
	cr_assert(mkdtemp(base), "mkdtemp under %s: %s", canon, strerror(errno));
	chmod(base, 0755);
	cf_fx_fmt(fx->root, sizeof fx->root, "%s", base);
	live_set(fx, true);
	cf_fx_fmt(fx->home, sizeof fx->home, "%s/home", base);
	cf_fx_fmt(fx->ws, sizeof fx->ws, "%s/ws", base);
	real_home(fx->real_home, sizeof fx->real_home);
	cf_fx_mkdirs(fx->home);
	cf_fx_mkdirs(fx->ws);

#ifdef __linux__
	cr_assert(getrandom(rnd, sizeof rnd, 0) == (ssize_t)sizeof rnd);
#else
	arc4random_buf(rnd, sizeof rnd);
#endif
	snprintf(fx->tag, sizeof fx->tag, "CFMARK-%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
		 rnd[3], rnd[4], rnd[5]);

	cr_assert(cf_secret_count <= CF_FX_MAX_SECRETS, "raise CF_FX_MAX_SECRETS");
	for (size_t i = 0; i < cf_secret_count; i++) {
		struct cf_fx_secret *s = &fx->s[fx->n++];
		s->rel = cf_secret_table[i].rel;
		s->is_dir = row_is_dir(s->rel);
		cf_fx_fmt(s->path, sizeof s->path, "%s/%s", fx->home, s->rel);
		marker_for(s->marker, sizeof s->marker, fx->tag, s->rel);
		if (s->is_dir) {
			cf_fx_mkdirs(s->path);
			cf_fx_fmt(s->key, sizeof s->key, "%s/%s", fx->home, s->rel);
			cf_fx_fmt(s->key + strlen(s->key), sizeof s->key - strlen(s->key), "/%s",
				  inner_name(s->rel));
		} else {
			cf_fx_fmt(s->key, sizeof s->key, "%s/%s", fx->home, s->rel);
		}
		char text[256];
		cf_fx_fmt(text, sizeof text, "%s\n", s->marker);
		cf_fx_write(s->key, text);
	}
	install_machinery(fx);
	/* What a real home has beside its secrets. */
	cf_fx_write(cf_fx_at(fx->home, ".bashrc"), "# fake bashrc\n");
	cf_fx_write(cf_fx_at(fx->home, "notes.txt"), "plain notes\n");
	cf_fx_mkdirs(cf_fx_at(fx->home, ".cache"));
	cf_fx_mkdirs(cf_fx_at(fx->home, ".npm"));
}

void cf_fx_teardown(struct cf_fx *fx)
{
	if (fx->root[0])
		cf_fx_rmtree(fx->root);
	fx->root[0] = '\0';
	live_set(fx, false);
}

const struct cf_fx_secret *cf_fx_secret(const struct cf_fx *fx, const char *rel)
{
	for (size_t i = 0; i < fx->n; i++)
		if (strcmp(fx->s[i].rel, rel) == 0)
			return &fx->s[i];
	cr_assert_fail("no fixture secret %s", rel);
	return NULL;
}

/* ---- environment ---- */

static void env_put(char ***env, size_t *n, const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t k = eq ? (size_t)(eq - entry) + 1 : strlen(entry);
	for (size_t i = 0; i < *n; i++)
		if (strncmp((*env)[i], entry, k) == 0) {
			free((*env)[i]);
			(*env)[i] = strdup(entry);
			return;
		}
	*env = realloc(*env, (*n + 2) * sizeof **env);
	cr_assert(*env);
	(*env)[(*n)++] = strdup(entry);
	(*env)[*n] = NULL;
}

static void env_putf(char ***env, size_t *n, const char *name, const char *fallback_rel,
		     const struct cf_fx *fx)
{
	char buf[PATH_MAX + 64];
	const char *v = getenv(name);
	if (v && *v)
		cf_fx_fmt(buf, sizeof buf, "%s=%s", name, v);
	else
		snprintf(buf, sizeof buf, "%s=%s/%s", name, fx->real_home, fallback_rel);
	env_put(env, n, buf);
}

char **cf_fx_env(const struct cf_fx *fx, const char *const *extra)
{
	char **env = NULL, buf[PATH_MAX + 64];
	size_t n = 0;
	const char *path = getenv("PATH");
	snprintf(buf, sizeof buf, "PATH=%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	env_put(&env, &n, buf);
	snprintf(buf, sizeof buf, "HOME=%s", fx->home);
	env_put(&env, &n, buf);
	/* A run of the suite with user namespaces refused (a test build's
	 * switch, enforce/linux/mountns/userns.c): the programs under test take it. */
	if (getenv("CF_TEST_USERNS")) {
		snprintf(buf, sizeof buf, "CF_TEST_USERNS=%s", getenv("CF_TEST_USERNS"));
		env_put(&env, &n, buf);
	}
	env_put(&env, &n, "LANG=C");
	env_put(&env, &n, "LC_ALL=C");
	env_put(&env, &n, "TERM=dumb");
	if (cf_test_ci())
		env_put(&env, &n, "CI=true");
	env_putf(&env, &n, "PYENV_ROOT", ".pyenv", fx);
	env_putf(&env, &n, "RUSTUP_HOME", ".rustup", fx);
	env_putf(&env, &n, "CARGO_HOME", ".cargo", fx);
	if (getenv("RUSTUP_TOOLCHAIN")) {
		snprintf(buf, sizeof buf, "RUSTUP_TOOLCHAIN=%s", getenv("RUSTUP_TOOLCHAIN"));
		env_put(&env, &n, buf);
	}
	/* A run of the suite at an older Landlock ABI (a test build's switch,
	 * enforce/linux/landlock/landlock.c): the programs under test take it too. */
	if (getenv("CF_TEST_LANDLOCK_ABI")) {
		snprintf(buf, sizeof buf, "CF_TEST_LANDLOCK_ABI=%s", getenv("CF_TEST_LANDLOCK_ABI"));
		env_put(&env, &n, buf);
	}
	for (size_t i = 0; extra && extra[i]; i++)
		env_put(&env, &n, extra[i]);
	return env;
}

void cf_fx_env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* ---- running programs ---- */

struct sink {
	char *buf;
	size_t len, cap;
};

static void sink_add(struct sink *s, const char *data, size_t n)
{
	if (s->len + n + 1 > s->cap) {
		s->cap = (s->len + n + 1) * 2;
		s->buf = realloc(s->buf, s->cap);
		cr_assert(s->buf);
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	s->buf[s->len] = '\0';
}

#ifdef __linux__
static int pipe_cloexec(int fds[2])
{
	return pipe2(fds, O_CLOEXEC);
}

static void exec_env(char *const argv[], char *const envp[])
{
	execvpe(argv[0], argv, envp);
}
#else
/* No pipe2 on macOS; the tests start their children from one thread. */
static int pipe_cloexec(int fds[2])
{
	if (pipe(fds))
		return -1;
	return fcntl(fds[0], F_SETFD, FD_CLOEXEC) | fcntl(fds[1], F_SETFD, FD_CLOEXEC);
}

/* No execvpe on macOS: in this fork child, set environ and search PATH. */
static void exec_env(char *const argv[], char *const envp[])
{
	extern char **environ;
	environ = (char **)envp;
	execvp(argv[0], argv);
}
#endif

void cf_fx_run(struct cf_fx_out *o, const char *cwd, char *const envp[], const char *stdin_text,
	       char *const argv[])
{
	int in[2], out[2], err[2];
	cr_assert(pipe_cloexec(in) == 0 && pipe_cloexec(out) == 0 && pipe_cloexec(err) == 0);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		dup2(stdin_text ? in[0] : nul, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		if (cwd && chdir(cwd) != 0) {
			dprintf(2, "cf_fx_run: chdir %s: %s\n", cwd, strerror(errno));
			_exit(127);
		}
		if (envp)
			exec_env(argv, envp);
		else
			execvp(argv[0], argv);
		dprintf(2, "cf_fx_run: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	if (!stdin_text) {
		close(in[1]);
		in[1] = -1;
	} else {
		fcntl(in[1], F_SETFL, O_NONBLOCK);
	}
	struct sink so = {0}, se = {0};
	sink_add(&so, "", 0);
	sink_add(&se, "", 0);
	size_t in_off = 0, in_len = stdin_text ? strlen(stdin_text) : 0;
	time_t deadline = time(NULL) + 120 * CF_TIMEOUT_SCALE;
	bool killed = false;
	for (int open_fds = 2; open_fds > 0;) {
		struct pollfd p[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
		int np = in[1] >= 0 ? 3 : 2;
		int r = poll(p, (nfds_t)np, 1000);
		if (r < 0 && errno == EINTR)
			continue;
		if (time(NULL) > deadline && !killed) {
			kill(pid, SIGKILL);
			killed = true;
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char chunk[8192];
			ssize_t n = read(p[i].fd, chunk, sizeof chunk);
			if (n > 0) {
				sink_add(i == 0 ? &so : &se, chunk, (size_t)n);
			} else if (n == 0 || errno != EINTR) {
				close(p[i].fd);
				if (i == 0)
					out[0] = -1;
				else
					err[0] = -1;
				open_fds--;
			}
		}
		if (np == 3 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t n = (p[2].revents & POLLOUT)
					    ? write(in[1], stdin_text + in_off, in_len - in_off)
					    : -1;
			if (n > 0)
				in_off += (size_t)n;
			if (n < 0 || in_off == in_len) {
				close(in[1]);
				in[1] = -1;
			}
		}
	}
	if (in[1] >= 0)
		close(in[1]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	o->out = so.buf;
	o->err = se.buf;
	cr_assert(!killed, "%s did not finish within %d s", argv[0], 120 * CF_TIMEOUT_SCALE);
}

void cf_fx_credfence(struct cf_fx_out *o, const struct cf_fx *fx, const char *sub,
		     const char *const *env_extra, char *const args[])
{
	size_t n = 0;
	while (args && args[n])
		n++;
	char **argv = calloc(n + 7, sizeof *argv);
	cr_assert(argv);
	size_t k = 0;
	argv[k++] = (char *)cf_fx_bin();
	argv[k++] = (char *)sub;
	argv[k++] = "--home";
	argv[k++] = (char *)fx->home;
	argv[k++] = "--workspace";
	argv[k++] = (char *)fx->ws;
	for (size_t i = 0; i < n; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	char **env = cf_fx_env(fx, env_extra);
	cf_fx_run(o, fx->ws, env, NULL, argv);
	cf_fx_env_free(env);
	free(argv);
}

void cf_fx_out_free(struct cf_fx_out *o)
{
	free(o->out);
	free(o->err);
	o->out = o->err = NULL;
}

void cf_fx_assert_no_marker(const struct cf_fx *fx, const struct cf_fx_out *o)
{
	/* The tag without its first character too, in case output is cut or escaped. */
	const char *tag_hex = fx->tag + strlen("CFMARK-");
	cr_assert(!strstr(o->out, fx->tag) && !strstr(o->out, tag_hex),
		  "a fake key's marker (%s) leaked to stdout:\n%s", fx->tag, o->out);
	cr_assert(!strstr(o->err, fx->tag) && !strstr(o->err, tag_hex),
		  "a fake key's marker (%s) leaked to stderr:\n%s", fx->tag, o->err);
}

const char *cf_fx_bin(void)
{
	const char *b = getenv("CREDFENCE_BIN");
	cr_assert(b && *b, "CREDFENCE_BIN is not set; run the tests with meson test");
	return installed_bin[0] ? installed_bin : b;
}

/* ---- availability ---- */

bool cf_test_ci(void)
{
	const char *ci = getenv("CI");
	return ci && strcmp(ci, "true") == 0;
}

/* The live fixtures torn down (a skipped test gets no .fini), then a skip, or
 * under CI=true a failure when CI_FAILS. */
static void __attribute__((noreturn)) end_test(bool ci_fails, const char *msg)
{
	for (size_t i = 0; i < sizeof live / sizeof *live; i++)
		if (live[i])
			cf_fx_teardown(live[i]);
	if (ci_fails && cf_test_ci())
		cr_assert_fail("CI=true, so this must not be skipped: %s", msg);
	criterion_skip_test("%s", msg);
}

#define END_TEST(ci_fails, fmt)                       \
	do {                                          \
		char msg_[1024];                      \
		va_list ap_;                          \
		va_start(ap_, fmt);                   \
		vsnprintf(msg_, sizeof msg_, fmt, ap_); \
		va_end(ap_);                          \
		end_test(ci_fails, msg_);             \
	} while (0)

void cf_test_unavailable(const char *fmt, ...)
{
	END_TEST(true, fmt);
}

void cf_test_skip(const char *fmt, ...)
{
	END_TEST(false, fmt);
}

#ifdef __linux__
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self 446
#endif

void cf_test_require_landlock(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1UL /* VERSION */);
	if (abi < 1)
		cf_test_unavailable("Landlock is not available here (%s)", strerror(errno));
	/* Can a layer actually be applied? Ask a child, which is thrown away. */
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		unsigned long long handled = 1ULL << 11; /* MAKE_BLOCK: harmless */
		long fd = syscall(SYS_landlock_create_ruleset, &handled, sizeof handled, 0);
		if (fd < 0)
			_exit(10 + (errno & 0x7f) % 100);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(2);
		_exit(syscall(SYS_landlock_restrict_self, fd, 0) ? 3 : 0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		cf_test_unavailable("a Landlock layer can not be applied here (ABI %ld, probe status %d)",
				    abi, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}
#else
void cf_test_require_landlock(void)
{
	cf_test_unavailable("Landlock is Linux only");
}
#endif

void cf_test_require_userns_switch(void)
{
#ifndef CF_TEST_USERNS_SWITCH
	cf_test_unavailable("this build has no user namespace test switch (CF_TEST_USERNS: meson "
			    "setup -Dtest_userns_switch=true, as scripts/test builds)");
#endif
}

const char *cf_test_require_tool(const char *name)
{
	static char found[PATH_MAX];
	if (name[0] == '/') {
		if (access(name, X_OK) == 0)
			return name;
		cf_test_unavailable("%s is not installed (run scripts/setup)", name);
	}
	const char *path = getenv("PATH");
	char copy[8192];
	snprintf(copy, sizeof copy, "%s", path ? path : "/usr/bin:/bin");
	for (char *save, *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(found, sizeof found, "%s/%s", dir, name);
		if (access(found, X_OK) == 0)
			return found;
	}
	cf_test_unavailable("%s is not on PATH (run scripts/setup)", name);
}
