#include "sup_denied.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "denial.h"
#include "json.h"
#include "paths.h"
#include "policy.h"
#include "proc.h"
#include "protected.h"
#include "protected_match.h"
#include "strv.h"
#include "supervisor_wire.h"
#include "sys.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

int cf_sup_denied_blob(char **blob, size_t *len, const struct cf_denied *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t h = strlen(d[i].holds), p = strlen(d[i].path);
		if (strchr(d[i].holds, '\t') || *len + h + p + 3 > CF_IPC_BLOB_MAX - 4096)
			continue;
		char *b = realloc(*blob, *len + h + p + 3);
		if (!b)
			return -ENOMEM;
		*blob = b;
		b += *len;
		*b++ = CF_IPC_REC_DENIED;
		memcpy(b, d[i].holds, h);
		b[h] = '\t';
		memcpy(b + h + 1, d[i].path, p + 1);
		*len += h + p + 3;
	}
	return 0;
}

/* One record, when it fits (see cf_sup_protect_blob). */
static int add_record(char **blob, size_t *len, char kind, const char *s)
{
	size_t n = strlen(s);
	if (s[0] != '/' || *len + n + 2 > CF_IPC_BLOB_MAX - 4096)
		return 0;
	char *b = realloc(*blob, *len + n + 2);
	if (!b)
		return -ENOMEM;
	*blob = b;
	b[*len] = kind;
	memcpy(b + *len + 1, s, n + 1);
	*len += n + 2;
	return 0;
}

int cf_sup_protect_blob(char **blob, size_t *len, const struct cf_policy *pol, const char *cwd,
			const struct cf_strv *lifts)
{
	int rc = 0;
	if (pol->home)
		rc = add_record(blob, len, CF_IPC_REC_HOME, pol->home);
	if (!rc && pol->account_home)
		rc = add_record(blob, len, CF_IPC_REC_ACCOUNT_HOME, pol->account_home);
	if (!rc && cwd)
		rc = add_record(blob, len, CF_IPC_REC_CWD, cwd);
	for (size_t i = 0; !rc && lifts && i < lifts->n; i++)
		rc = add_record(blob, len, CF_IPC_REC_LIFT, lifts->v[i]);
	return rc;
}

bool cf_sup_is_denial(const struct seccomp_data *d)
{
	return d->nr == SYS_ioctl && (uint32_t)d->args[0] == CF_DENIAL_FD &&
	       (uint32_t)d->args[1] == (uint32_t)CF_DENIAL_IOCTL;
}

/* A path as the shim reports it: absolute, with no "." or ".." component
 * and no empty one, so that a lexical comparison means what it says. */
static bool plain_absolute(const char *p)
{
	if (p[0] != '/')
		return false;
	for (const char *s = p; *s;) {
		s++; /* past the slash */
		size_t n = strcspn(s, "/");
		if ((n == 0 && s[0] == '/') || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += n;
	}
	return true;
}

/* Paths already logged, by hash: one line a path a run. A ring: when it is
 * full the oldest path gives way (and would be logged again), so that no
 * number of reports stops the lines that come after them (issue 31: a full
 * table used to silence every later denial of the run). */
#define SEEN_MAX 4096
/* Each process's budget: the new paths it may have logged. A fenced
 * process can make reports of its own (any path the fence denies, real or
 * not: sup_denied.h); past its budget its reports are dropped, one
 * "denials_dropped" line says so, and every other process keeps its own.
 * Processes by pid and start time (a pid reused is another process); the
 * oldest gives way when the table is full. */
#define BUDGET CF_DENIAL_BUDGET
#define PROCS_MAX 512
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t seen[SEEN_MAX];
static size_t seen_next;
static struct proc_budget {
	long pid;
	unsigned long long start;
	unsigned used;
	bool dropped; /* its "denials_dropped" line is written */
} procs[PROCS_MAX];
static size_t procs_next;

/* Under seen_lock: PID's row, made (and the oldest given way) when new. */
static struct proc_budget *budget_of(long pid, unsigned long long start)
{
	for (size_t i = 0; i < PROCS_MAX; i++)
		if (procs[i].pid == pid && procs[i].start == start)
			return &procs[i];
	struct proc_budget *p = &procs[procs_next];
	procs_next = (procs_next + 1) % PROCS_MAX;
	*p = (struct proc_budget){pid, start, 0, false};
	return p;
}

enum judged { FIRST, SAID, OVER, OVER_SAY };

/* Whether PATH is new in the run and PID (started at START) may log it. */
static enum judged first_time(const char *path, long pid, unsigned long long start)
{
	uint64_t h = cf_path_hash(path);
	enum judged j = FIRST;
	pthread_mutex_lock(&seen_lock);
	for (size_t i = 0; i < SEEN_MAX && j == FIRST; i++)
		if (seen[i] == h && h)
			j = SAID;
	if (j == FIRST) {
		struct proc_budget *p = budget_of(pid, start);
		if (p->used >= BUDGET) {
			j = p->dropped ? OVER : OVER_SAY;
			p->dropped = true;
		} else {
			p->used++;
			seen[seen_next] = h;
			seen_next = (seen_next + 1) % SEEN_MAX;
		}
	}
	pthread_mutex_unlock(&seen_lock);
	return j;
}

/* The line for PATH, cut to one line when too long. */
static void write_line(int log_fd, char *line, size_t cap, size_t len)
{
	if (len + 1 >= cap) /* cut: still one line */
		memcpy(line + cap - 3, "}\n", 3), len = cap - 1;
	ssize_t w = write(log_fd, line, len);
	(void)w;
}

static void line_head(char *line, size_t cap, size_t *len, const char *event, long pid,
		      const char *program, const char *path)
{
	cf_json_raw(line, cap, len, "{\"event\":\"");
	cf_json_raw(line, cap, len, event);
	cf_json_raw(line, cap, len, "\",\"pid\":");
	cf_json_num(line, cap, len, pid);
	cf_json_raw(line, cap, len, ",\"program\":");
	cf_json_str(line, cap, len, program);
	cf_json_raw(line, cap, len, ",\"path\":");
	cf_json_str(line, cap, len, path);
}

/* The writable location of S that PATH lies in (the deepest), or NULL. */
static const char *writable_of(const struct cf_protect_scope *s, const char *path)
{
	const char *best = NULL;
	for (size_t i = 0; i < s->n_writable; i++)
		if (cf_path_within(path, s->writable[i]) &&
		    (!best || strlen(s->writable[i]) > strlen(best)))
			best = s->writable[i];
	return best;
}

/* PATH (absolute) opened O_PATH as process PID sees it: in its mount
 * namespace, below its root, no symlink followed. */
static int open_as(int root, const char *path)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS};
	long fd = cf_sys4(SYS_openat2, root, path, &how, sizeof how);
	return fd < 0 ? -1 : (int)fd;
}

static bool mount_of(int fd, uint64_t *id, bool *root)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) != 0 || !(sx.stx_mask & STATX_MNT_ID))
		return false;
	*id = sx.stx_mnt_id;
	*root = (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
		(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	return true;
}

/* Whether PATH (canonical), inside writable location W, is held by write
 * protection as process PID sees it: the nearest mount root at or above
 * PATH, below W, is read-only and not W's own mount (what the fenced
 * tree's namespace binds over a row of the table or a file git's own
 * files name, common/protect_plan.h). Its path into LOC. The supervisor
 * has not the plan; it looks at the caller's mounts instead, so that a
 * report can not make it log a path the fence did not hold. A file more
 * than 64 levels below its nearest mount root is not found (no line). */
static bool held_by_mount(long pid, const char *path, const char *w, char *loc, size_t cap)
{
	char p[PATH_MAX], proc[64];
	bool held = false;
	uint64_t wid, id;
	bool wroot, mroot;
	if (strlen(path) >= sizeof p)
		return false;
	snprintf(proc, sizeof proc, "/proc/%ld/root", pid);
	int root = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return false;
	int wfd = open_as(root, w);
	if (wfd < 0 || !mount_of(wfd, &wid, &wroot))
		goto out;
	strcpy(p, path);
	/* At most 64 steps up: a forged report of a deep path that is not
	 * there must not cost the supervisor a walk of thousands. */
	for (int steps = 0; steps < 64 && strcmp(p, w) != 0 && cf_path_within(p, w); steps++) {
		int fd = open_as(root, p);
		struct statfs fs;
		if (fd >= 0) {
			/* Not there: its directory. A mount root: the answer. */
			bool known = mount_of(fd, &id, &mroot);
			held = known && mroot && fstatfs(fd, &fs) == 0 && (fs.f_flags & ST_RDONLY) &&
			       id != wid && strlen(p) < cap;
			if (held)
				strcpy(loc, p);
			close(fd);
			if (!known || mroot)
				break;
		}
		char up[PATH_MAX];
		cf_path_parent(p, up, sizeof up);
		strcpy(p, up);
	}
out:
	if (wfd >= 0)
		close(wfd);
	close(root);
	return held;
}

int cf_sup_denied(int log_fd, long pid, const char *program, const struct cf_denial_report *report,
		   char *const *denied, size_t n_denied, const struct cf_protect_scope *scope)
{
	char path[sizeof report->path];
	if (report->access > 1 || !memchr(report->path, '\0', sizeof report->path))
		return -EPERM;
	memcpy(path, report->path, sizeof path);
	if (!plain_absolute(path))
		return -EPERM;
	bool wr = report->access == 1;
	const char *holds = NULL;
	size_t holds_len = 0;
	for (size_t i = 0; i < n_denied && !holds; i++) {
		const char *tab = strchr(denied[i], '\t');
		if (tab && cf_path_within(path, tab + 1)) {
			holds = denied[i];
			holds_len = (size_t)(tab - denied[i]);
		}
	}
	const struct cf_protected_row *row = NULL;
	char loc[sizeof path];
	if (!holds) {
		/* Not a secret: a write outside every writable location, or
		 * one inside that a row of the protected table covers. */
		if (!wr)
			return -EPERM;
		/* A file the plan found (git's own files name it), held by a
		 * read-only mount: the row is the one the caller's plan gave
		 * (report->reserved, 1 and up), words only. */
		const char *w = writable_of(scope, path);
		if (w && !(row = cf_protected_match(scope, path, loc, sizeof loc)) &&
		    !(report->reserved >= 1 && report->reserved <= cf_protected_count &&
		      held_by_mount(pid, path, w, loc, sizeof loc) &&
		      (row = &cf_protected_table[report->reserved - 1])))
			return -EPERM;
	}
	char rw[512], allow[sizeof path + 32], line[3 * sizeof path + 1024];
	size_t len = 0;
	switch (first_time(path, pid, cf_proc_starttime((int)pid))) {
	case SAID:
		return -EALREADY;
	case OVER:
		return -EDQUOT;
	case OVER_SAY:
		if (log_fd >= 0) {
			cf_json_raw(line, sizeof line, &len, "{\"event\":\"denials_dropped\",\"pid\":");
			cf_json_num(line, sizeof line, &len, pid);
			cf_json_raw(line, sizeof line, &len, ",\"program\":");
			cf_json_str(line, sizeof line, &len, program);
			cf_json_raw(line, sizeof line, &len, ",\"budget\":");
			cf_json_num(line, sizeof line, &len, BUDGET);
			cf_json_raw(line, sizeof line, &len, "}\n");
			write_line(log_fd, line, sizeof line, len);
		}
		return -EDQUOT;
	case FIRST:
		break;
	}
	if (log_fd < 0)
		return 0;
	if (row) {
		line_head(line, sizeof line, &len, "write_protected", pid, program, path);
		cf_json_raw(line, sizeof line, &len, ",\"row\":");
		cf_json_str(line, sizeof line, &len, row->runs);
		cf_json_raw(line, sizeof line, &len, ",\"allow\":");
		cf_json_str(line, sizeof line, &len,
			    cf_denial_protected_allow(allow, sizeof allow, loc, NULL));
		cf_json_raw(line, sizeof line, &len, "}\n");
		write_line(log_fd, line, sizeof line, len);
		return 0;
	}
	if (holds)
		snprintf(rw, sizeof rw, "%.*s", (int)holds_len, holds);
	const char *a = cf_denial_allow(allow, sizeof allow, path, wr, holds != NULL, NULL);
	line_head(line, sizeof line, &len, "denied", pid, program, path);
	cf_json_raw(line, sizeof line, &len, ",\"access\":");
	cf_json_str(line, sizeof line, &len, wr ? "write" : "read");
	cf_json_raw(line, sizeof line, &len, ",\"row\":");
	cf_json_str(line, sizeof line, &len, holds ? rw : cf_denial_row(path));
	cf_json_raw(line, sizeof line, &len, ",\"allow\":");
	cf_json_str(line, sizeof line, &len, a ? a : "");
	cf_json_raw(line, sizeof line, &len, "}\n");
	write_line(log_fd, line, sizeof line, len);
	return 0;
}
