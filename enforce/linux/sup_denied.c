#include "sup_denied.h"

#include <errno.h>
#include <linux/seccomp.h>
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
#include "protected_match.h"
#include "strv.h"
#include "supervisor_wire.h"

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

/* Paths already logged, by hash: one line a path a run. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t seen[1024];

static bool first_time(const char *path)
{
	uint64_t h = cf_path_hash(path);
	bool first = false;
	pthread_mutex_lock(&seen_lock);
	for (size_t i = 0; i < sizeof seen / sizeof *seen; i++) {
		if (seen[i] == h)
			break;
		if (seen[i] == 0) {
			seen[i] = h;
			first = true;
			break;
		}
	}
	pthread_mutex_unlock(&seen_lock);
	return first;
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

static bool in_writable(const struct cf_protect_scope *s, const char *path)
{
	for (size_t i = 0; i < s->n_writable; i++)
		if (cf_path_within(path, s->writable[i]))
			return true;
	return false;
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
		if (in_writable(scope, path) &&
		    !(row = cf_protected_match(scope, path, loc, sizeof loc)))
			return -EPERM;
	}
	if (!first_time(path))
		return -EALREADY;
	if (log_fd < 0)
		return 0;
	char rw[512], allow[sizeof path + 32], line[3 * sizeof path + 1024];
	size_t len = 0;
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
