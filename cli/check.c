#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "paths.h"
#include "protect_plan.h"
#include "protected_match.h"

#ifdef __APPLE__
/* macOS has no strerrorname_np: the names a check can meet. */
static const char *errname(int err)
{
	switch (err) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EEXIST: return "EEXIST";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case EINVAL: return "EINVAL";
	case ETXTBSY: return "ETXTBSY";
	case EROFS: return "EROFS";
	case ELOOP: return "ELOOP";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ENOSYS: return "ENOSYS";
	default: return NULL;
	}
}
#else
#define errname(err) strerrorname_np(err)
#endif

/* The probe opens without reading and creates nothing that gets a name:
 * O_TMPFILE makes an unnamed inode that vanishes at close, so a directory's
 * contents and times stay as they were. macOS has no O_TMPFILE: there the
 * sandbox itself is asked whether a create would be allowed. */
static const char *word(int err, char *buf, size_t n)
{
	if (err == 0)
		return "allowed";
	snprintf(buf, n, "denied (%s)", errname(err) ? errname(err) : strerror(err));
	return buf;
}

static int try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Whether a file could be created in DIR (as PATH, when the caller asks about
 * a path that is missing): 0 or an errno value. */
static int try_create(const char *dir, const char *path)
{
#ifdef __APPLE__
	char probe[4096 + 32];
	if (!path) {
		snprintf(probe, sizeof probe, "%s/.credfence-check-probe", dir);
		path = probe;
	}
	return -cf_fence_may_create(path);
#else
	(void)path;
	return try_open(dir, O_TMPFILE | O_WRONLY);
#endif
}

static int pipe_cloexec(int fds[2])
{
#ifdef __APPLE__
	if (pipe(fds))
		return -1;
	if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) || fcntl(fds[1], F_SETFD, FD_CLOEXEC)) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		errno = e;
		return -1;
	}
	return 0;
#else
	return pipe2(fds, O_CLOEXEC);
#endif
}

/* The sockets the fence lets a program connect to although they were bound
 * outside it: the supervisor's rule (enforce/linux/notify/supervisor.h), judged by identity. A socket
 * bound by a fenced program is reachable from its tree too, but `check` has no
 * such tree. */
static const struct cf_strv *check_allowed;

static __attribute__((unused)) bool socket_allowed(const struct stat *st)
{
	struct stat a;
	for (size_t i = 0; check_allowed && i < check_allowed->n; i++)
		if (check_allowed->v[i][0] == '/' && stat(check_allowed->v[i], &a) == 0 &&
		    a.st_dev == st->st_dev && a.st_ino == st->st_ino)
			return true;
	return false;
}

/* The policy, for the words of a read that --allow-read lets through. */
static const struct cf_policy *check_policy;

static const char *read_word(int err, const char *path, char *buf, size_t n)
{
	char canon[PATH_MAX];
	const struct cf_policy *p = check_policy;
	bool lifted = false;
	if (err || !p || !realpath(path, canon))
		return word(err, buf, n);
	for (size_t i = 0; i < p->allow_rows.n; i++)
		lifted = lifted || cf_path_within(canon, p->allow_rows.v[i]);
	if (!lifted && !cf_policy_allowed_read(p, canon))
		return word(err, buf, n);
	snprintf(buf, n, "allowed (--allow-read)");
	return buf;
}

/* Every line that is not a result starts with this: the exit status is 1 then. */
#define NOT_PROBED "not probed: "

/* What write protection (common/protected.h) says of one path, judged
 * before the probe child forks: the row that covers it, or whether a lift
 * uncovered it. */
struct protect_answer {
	const struct cf_protected_row *row; /* NULL: none covers it now */
	bool lifted;                        /* a row would, but --allow-write-protected lifts it */
	bool unborn;                        /* lifted inside a held row, but absent: ROW set,
					       creating it is refused */
	bool absent;                        /* a row would, but its location is absent and gets no
					       placeholder: creating it is not refused */
};

static void judge_protect(const struct cf_policy *pol, const struct cf_strv *lifts,
			  const struct cf_protect_plan *pp, const char *path,
			  struct protect_answer *a)
{
	char cwd[PATH_MAX], canon[PATH_MAX], loc[PATH_MAX], parent[PATH_MAX];
	struct cf_protect_scope all, free_;
	struct stat st;
	memset(a, 0, sizeof *a);
	if (!getcwd(cwd, sizeof cwd) || cf_canon(path, cwd, canon, sizeof canon, NULL, NULL))
		return;
	cf_protect_scope_of(&all, pol, cwd, NULL);
	cf_protect_scope_of(&free_, pol, cwd, lifts);
	const struct cf_protected_row *r = cf_protected_match(&all, canon, loc, sizeof loc);
	/* What the mounts hold (placeholders and git's own files included). */
	const struct cf_protect_item *held = pp ? cf_protect_plan_find(pp, canon) : NULL;
	if (r && !cf_protected_match(&free_, canon, NULL, 0)) {
		a->row = cf_protected_lift_unborn(&all, canon, loc, sizeof loc);
		a->unborn = a->row != NULL;
		a->lifted = !a->unborn;
		return;
	}
	if (held) {
		a->row = held->row;
		return;
	}
	if (!r)
		return;
	if (pp) {
		a->absent = true; /* a row names it, the mounts do not hold it */
		return;
	}
	cf_path_parent(loc, parent, sizeof parent);
	if (lstat(loc, &st) != 0 && !(r->placeholder && stat(parent, &st) == 0 && S_ISDIR(st.st_mode))) {
		a->absent = true;
		return;
	}
	a->row = r;
}

/* The word for a write or create under A, else the probe's own (ERR). */
static const char *write_word(const struct protect_answer *a, int err, char *buf, size_t n)
{
	if (a->unborn) {
		snprintf(buf, n, "denied (runs unfenced later: %s; --allow-write-protected keeps it "
			 "writable only once it exists: create it yourself first)", a->row->runs);
		return buf;
	}
	if (a->row && a->row->private_copy) {
		/* Written inside, into the fence's own copy (an overlay). */
		snprintf(buf, n, "allowed (into the fence's own copy; %s outside never runs it)",
			 a->row->runs);
		return buf;
	}
	if (a->row) {
		snprintf(buf, n, "denied (runs unfenced later: %s)", a->row->runs);
		return buf;
	}
	const char *w = word(err, buf, n);
	if (err == 0 && (a->lifted || a->absent)) {
		snprintf(buf, n, "allowed (%s)",
			 a->lifted ? "--allow-write-protected"
				   : "not write-protected while it does not exist");
		return buf;
	}
	return w;
}

static void probe_one(const char *path, const struct protect_answer *pa, FILE *out)
{
	struct stat st;
	char a[64], b[PATH_MAX + 64], c[PATH_MAX + 64];
	if (strlen(path) >= PATH_MAX) {
		fprintf(out, NOT_PROBED "longer than PATH_MAX (ENAMETOOLONG)\n");
		return;
	}
	int e = stat(path, &st) == 0 ? 0 : errno;
	if (e && e != ENOENT) {
		fprintf(out, NOT_PROBED "it can not be looked up (%s)\n",
			errname(e) ? errname(e) : strerror(e));
		return;
	}
	if (e == ENOENT) {
		/* Not there: can it be created? Ask the nearest existing parent. */
		char parent[PATH_MAX];
		snprintf(parent, sizeof parent, "%s", path);
		for (;;) {
			char *slash = strrchr(parent, '/');
			if (!slash) {
				snprintf(parent, sizeof parent, ".");
				break;
			}
			if (slash == parent) {
				parent[1] = '\0';
				break;
			}
			*slash = '\0';
			if (stat(parent, &st) == 0)
				break;
		}
		int w = try_create(parent, path);
		char cw[PATH_MAX + 64];
		fprintf(out, "does not exist (%s); create: %s\n", errname(e),
			write_word(pa, w, cw, sizeof cw));
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		int l = try_open(path, O_RDONLY | O_DIRECTORY);
		int w = try_create(path, NULL);
		fprintf(out, "directory; list: %s; create inside: %s\n", read_word(l, path, a, sizeof a),
			write_word(pa, w, b, sizeof b));
	} else if (S_ISREG(st.st_mode)) {
		int r = try_open(path, O_RDONLY);
		int w = try_open(path, O_WRONLY);
		fprintf(out, "file; read: %s; write: %s\n", read_word(r, path, a, sizeof a),
			write_word(pa, w, c, sizeof c));
#ifdef __linux__
	} else if (S_ISSOCK(st.st_mode)) {
		fprintf(out, "socket; connect: %s\n",
			socket_allowed(&st) ? "allowed (--allow-socket)"
					    : "denied (bound outside the fence)");
#endif
	} else {
		fprintf(out, NOT_PROBED "a device, socket or fifo (opening it could act on it)\n");
	}
}

int cf_cmd_check(int argc, char **argv)
{
	struct cf_cli c;
	struct cf_fence *f = NULL;
	int rc = cf_cli_parse_env(&c, "check", argc, argv, false, false, true);
	if (rc || (rc = cf_cli_finish(&c)))
		return rc;
	if (c.n_paths == 0 && !c.env) {
		cf_err("check: no path given; usage: credfence check [options] PATH..., or "
		       "credfence check --env");
		return CF_EXIT_FAIL;
	}
	if (c.env) {
		/* Names and rules only: a value is never printed. */
		cf_cli_print_env(&c.opts, stdout, "env: ");
		if (c.n_paths == 0) {
			cf_cli_free(&c);
			return 0;
		}
	}
	for (int i = 0; i < c.n_paths; i++)
		if (!c.paths[i][0]) {
			cf_err("check: an empty PATH names no file; give a path (. for the current "
			       "directory)");
			return CF_EXIT_FAIL;
		}
	if (!(f = cf_fence_new()) || cf_fence_prepare(f, &c.opts, environ, NULL)) {
		cf_err("out of memory while building the policy");
		return CF_EXIT_FAIL;
	}
	const struct cf_policy *pol = cf_fence_policy(f);
	if ((rc = cf_cli_check_config(&c, f, NULL)) || (rc = cf_cli_check_allow_read(f, "check")))
		return rc;
	if (!cf_fence_ready(f)) {
		cf_err("%s; %s", cf_cli_reason(f), cf_cli_hint(pol->verdict));
		return CF_EXIT_FAIL;
	}
#ifdef __linux__
	if (cf_fence_needs_supervisor(f) && cf_fence_start_supervisor(f, getpid(), -1, true)) {
		cf_err("%s; %s", cf_cli_reason(f), cf_cli_hint(pol->verdict));
		return CF_EXIT_FAIL;
	}
#endif
	check_allowed = &pol->allow_sockets;
	check_policy = pol;
	struct cf_strv lifts = {0};
	if ((rc = cf_cli_judge_lifts(&c, f, &lifts)))
		return rc;
	struct protect_answer *pa = calloc((size_t)c.n_paths + 1, sizeof *pa);
	if (!pa) {
		cf_err("out of memory");
		return CF_EXIT_FAIL;
	}
	/* The plan the mounts are made from, in this working directory: what
	 * check answers is what the kernel refuses. */
	char here[PATH_MAX];
	struct cf_protect_plan plan;
	bool planned = getcwd(here, sizeof here) &&
		       cf_protect_plan_build(&plan, pol, &lifts, here) == 0;
	for (int i = 0; i < c.n_paths; i++)
		judge_protect(pol, &lifts, planned ? &plan : NULL, c.paths[i], &pa[i]);
	if (planned)
		cf_protect_plan_free(&plan);
	int pfd[2];
	if (pipe_cloexec(pfd)) {
		cf_err("pipe: %s", strerror(errno));
		return CF_EXIT_FAIL;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		cf_err("fork: %s", strerror(errno));
		return CF_EXIT_FAIL;
	}
	if (pid == 0) {
		close(pfd[0]);
		FILE *out = fdopen(pfd[1], "w");
		if (!out)
			_exit(CF_EXIT_FAIL);
		if (cf_fence_apply(f)) {
			fprintf(out, "!%s\n", cf_cli_esc(cf_cli_reason(f)));
			fclose(out);
			_exit(CF_EXIT_FAIL);
		}
		for (int i = 0; i < c.n_paths; i++)
			probe_one(c.paths[i], &pa[i], out);
		fclose(out);
		_exit(0);
	}
	close(pfd[1]);
	FILE *in = fdopen(pfd[0], "r");
	char line[8192];
	int i = 0;
	bool not_probed = false;
	while (in && fgets(line, sizeof line, in)) {
		if (line[0] == '!') {
			cf_err("%s", line + 1);
			rc = CF_EXIT_FAIL;
			continue;
		}
		if (i < c.n_paths)
			printf("%s: %s", cf_cli_esc(c.paths[i++]), line);
		if (strncmp(line, NOT_PROBED, strlen(NOT_PROBED)) == 0)
			not_probed = true;
	}
	if (in)
		fclose(in);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!rc && (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || i != c.n_paths)) {
		cf_err("check: the probe child failed; nothing was reported for some paths");
		rc = CF_EXIT_FAIL;
	}
	if (!rc && not_probed)
		rc = 1;
	free(pa);
	cf_strv_free(&lifts);
	cf_fence_destroy(f);
	cf_cli_free(&c);
	return rc;
}
