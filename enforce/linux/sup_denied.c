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

int cf_sup_denied(int log_fd, long pid, const char *program, const struct cf_denial_report *report,
		   char *const *denied, size_t n_denied, char *const *writable, size_t n_writable)
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
	if (!holds) {
		/* Not a secret: only a write outside every writable location. */
		if (!wr)
			return -EPERM;
		for (size_t i = 0; i < n_writable; i++)
			if (cf_path_within(path, writable[i]))
				return -EPERM;
	}
	if (!first_time(path))
		return -EALREADY;
	if (log_fd < 0)
		return 0;
	char row[512], allow[sizeof path + 32], line[3 * sizeof path + 1024];
	size_t len = 0;
	if (holds)
		snprintf(row, sizeof row, "%.*s", (int)holds_len, holds);
	const char *a = cf_denial_allow(allow, sizeof allow, path, wr, holds != NULL, NULL);
	cf_json_raw(line, sizeof line, &len, "{\"event\":\"denied\",\"pid\":");
	cf_json_num(line, sizeof line, &len, pid);
	cf_json_raw(line, sizeof line, &len, ",\"program\":");
	cf_json_str(line, sizeof line, &len, program);
	cf_json_raw(line, sizeof line, &len, ",\"path\":");
	cf_json_str(line, sizeof line, &len, path);
	cf_json_raw(line, sizeof line, &len, ",\"access\":");
	cf_json_str(line, sizeof line, &len, wr ? "write" : "read");
	cf_json_raw(line, sizeof line, &len, ",\"row\":");
	cf_json_str(line, sizeof line, &len, holds ? row : cf_denial_row(path));
	cf_json_raw(line, sizeof line, &len, ",\"allow\":");
	cf_json_str(line, sizeof line, &len, a ? a : "");
	cf_json_raw(line, sizeof line, &len, "}\n");
	if (len + 1 >= sizeof line) /* cut: still one line */
		memcpy(line + sizeof line - 3, "}\n", 3), len = sizeof line - 1;
	ssize_t w = write(log_fd, line, len);
	(void)w;
	return 0;
}
