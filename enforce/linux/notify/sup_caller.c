/* The supervisor's reach into the caller of one notification: see
 * sup_caller.h. Every reach is made on a pidfd or a thread id that the
 * notification is checked to be still pending after (cf_sup_valid), so that
 * a reused thread id can not stand in for the caller. */
#include "sup_caller.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "json.h"
#include "sys.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

bool cf_sup_valid(const struct caller *c)
{
	return ioctl(c->lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &c->id) == 0;
}

void cf_sup_respond(int lfd, uint64_t id, long result, bool cont)
{
	char buf[256];
	struct seccomp_notif_resp *r = (struct seccomp_notif_resp *)buf;
	memset(buf, 0, sizeof buf);
	r->id = id;
	if (cont)
		r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	else if (result < 0)
		r->error = (int32_t)result;
	else
		r->val = result;
	/* ENOENT: the caller is gone or was interrupted; nothing to answer. */
	while (ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, r) < 0 && errno == EINTR)
		;
}

/* The lines of /proc/TID/status the kernel decides permissions by, and the
 * thread group. */
int cf_sup_read_creds(const char *status_path, pid_t *tgid, char *out, size_t cap)
{
	char buf[8192];
	int fd = open(status_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	ssize_t k;
	while (n < sizeof buf - 1 && (k = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)k;
	close(fd);
	buf[n] = '\0';
	size_t len = 0;
	out[0] = '\0';
	for (char *p = buf; p && *p;) {
		char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (tgid && strncmp(p, "Tgid:", 5) == 0)
			*tgid = (pid_t)atol(p + 5);
		if (strncmp(p, "Uid:", 4) == 0 || strncmp(p, "Gid:", 4) == 0 ||
		    strncmp(p, "Groups:", 7) == 0 || strncmp(p, "CapEff:", 7) == 0) {
			if (len + l + 2 > cap)
				return -E2BIG;
			memcpy(out + len, p, l);
			len += l;
			out[len++] = '\n';
			out[len] = '\0';
		}
		p = e ? e + 1 : NULL;
	}
	return len ? 0 : -EIO;
}

/* The caller's thread group and credentials, read once, when a decision
 * first needs them: /proc/TID/status is the dearest step of a round trip
 * (about 30 us of a 145 us loopback TCP connect; issue 22), and a connect
 * of another family than AF_UNIX, a bind, or a connect refused before its
 * credentials count needs neither. The notification is checked to be still
 * pending after the read: its thread was in the call, alive, for the whole
 * read, so TID named it and no other. 0 or -errno, the same each time. */
static int caller_creds(struct caller *c)
{
	char p[64];
	if (c->creds_read)
		return c->creds_rc;
	c->creds_read = true;
	snprintf(p, sizeof p, "/proc/%d/status", (int)c->tid);
	c->creds_rc = cf_sup_read_creds(p, &c->tgid, c->creds, sizeof c->creds);
	if (c->creds_rc == 0 && !cf_sup_valid(c))
		c->creds_rc = -ENOENT;
	if (c->creds_rc < 0)
		c->creds[0] = '\0';
	return c->creds_rc;
}

/* pidfd of the trapped thread (notif.pid is a thread id); then the
 * notification is checked to be still pending, so that the thread id was not
 * reused by another process meanwhile. */
int cf_sup_caller_open(struct caller *c)
{
	c->tgid = c->tid;
	c->creds_read = false;
	int fd = (int)cf_sys2(SYS_pidfd_open, c->tid, PIDFD_THREAD);
	if (fd == -EINVAL) { /* before 6.9: the thread group leader */
		int r = caller_creds(c);
		if (r < 0)
			return r;
		fd = (int)cf_sys2(SYS_pidfd_open, c->tgid, 0);
	}
	if (fd < 0)
		return fd;
	c->pidfd = fd;
	return cf_sup_valid(c) ? 0 : -ENOENT;
}

void cf_sup_caller_close(struct caller *c)
{
	cf_sup_close(c->pidfd);
	c->pidfd = -1;
}

int cf_sup_take_fd(const struct caller *c, int fd)
{
	return (int)cf_sys3(SYS_pidfd_getfd, c->pidfd, fd, 0);
}

/* LEN bytes of the caller's memory at ADDR, all of them, or -EFAULT. */
int cf_sup_peek(const struct caller *c, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
	if (len == 0)
		return 0;
	ssize_t n = process_vm_readv(c->tid, &l, 1, &r, 1, 0);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

/* A NUL-terminated string of the caller, read page by page (a string may end
 * just before an unmapped page). -EFAULT, or TOOLONG when CAP bytes hold no NUL. */
int cf_sup_peek_str(const struct caller *c, uint64_t addr, char *buf, size_t cap, int toolong)
{
	size_t n = 0;
	while (n < cap) {
		size_t chunk = 4096 - ((addr + n) & 4095);
		if (chunk > cap - n)
			chunk = cap - n;
		if (cf_sup_peek(c, addr + n, buf + n, chunk) < 0)
			return -EFAULT;
		char *z = memchr(buf + n, '\0', chunk);
		if (z)
			return 0;
		n += chunk;
	}
	return -toolong;
}

void cf_sup_program_of(struct caller *c, char *out, size_t cap)
{
	(void)caller_creds(c); /* the thread group; else the thread's */
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/exe", (int)c->tgid);
	ssize_t n = readlink(p, out, cap - 1);
	if (n > 0) {
		out[n] = '\0';
		return;
	}
	snprintf(p, sizeof p, "/proc/%d/comm", (int)c->tid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, out, cap - 1) : -1;
	cf_sup_close(fd);
	if (n < 0)
		n = 0;
	while (n > 0 && out[n - 1] == '\n')
		n--;
	out[n] = '\0';
}

/* One JSON line: {"event":EVENT,"pid":N,"program":P,(KEY2:V2,)KEY:WHAT(,"reason":R)}. */
void cf_sup_log_denial(struct caller *c, const char *event, const char *call, const char *key,
		       const char *what, const char *reason)
{
	const struct sup *sup = c->sup;
	if (sup->log_fd < 0)
		return;
	char prog[PATH_MAX], line[4 * PATH_MAX + 512];
	size_t len = 0;
	cf_sup_program_of(c, prog, sizeof prog);
	cf_json_raw(line, sizeof line, &len, "{\"event\":");
	cf_json_str(line, sizeof line, &len, event);
	cf_json_raw(line, sizeof line, &len, ",\"pid\":");
	cf_json_num(line, sizeof line, &len, c->tgid);
	cf_json_raw(line, sizeof line, &len, ",\"program\":");
	cf_json_str(line, sizeof line, &len, prog);
	if (call) {
		cf_json_raw(line, sizeof line, &len, ",\"call\":");
		cf_json_str(line, sizeof line, &len, call);
	}
	cf_json_raw(line, sizeof line, &len, ",\"");
	cf_json_raw(line, sizeof line, &len, key);
	cf_json_raw(line, sizeof line, &len, "\":");
	cf_json_str(line, sizeof line, &len, what);
	if (reason) {
		cf_json_raw(line, sizeof line, &len, ",\"reason\":");
		cf_json_str(line, sizeof line, &len, reason);
	}
	cf_json_raw(line, sizeof line, &len, "}\n");
	if (len + 1 >= sizeof line) /* cut: still one line */
		memcpy(line + sizeof line - 3, "}\n", 3), len = sizeof line - 1;
	ssize_t w = write(sup->log_fd, line, len);
	(void)w;
}

/* The supervisor acts with its own credentials: a caller whose credentials
 * differ (a root process that dropped to another user, or dropped
 * capabilities) would act with more than it has. */
bool cf_sup_same_creds(struct caller *c)
{
	return caller_creds(c) == 0 && strcmp(c->creds, c->sup->own_creds) == 0;
}

/* Paths that name the caller itself mean the supervisor here: say them with
 * the caller's pid. Other roads into /proc/self still resolve here, and are
 * still judged by the object they reach, so they can not widen anything. */
static int caller_path(struct caller *c, const char *in, char *out, size_t cap)
{
	static const struct {
		const char *from;
		const char *to; /* %d: tgid, %d: tid */
	} map[] = {
		{"/proc/self/", "/proc/%d/"},        {"/proc/thread-self/", "/proc/%d/task/%d/"},
		{"/dev/fd/", "/proc/%d/fd/"},        {"/dev/stdin", "/proc/%d/fd/0"},
		{"/dev/stdout", "/proc/%d/fd/1"},    {"/dev/stderr", "/proc/%d/fd/2"},
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
		size_t n = strlen(map[i].from);
		bool dir = map[i].from[n - 1] == '/';
		if (strncmp(in, map[i].from, n) != 0 || (!dir && in[n] && in[n] != '/'))
			continue;
		int r = caller_creds(c); /* the thread group */
		if (r < 0)
			return r;
		int k = snprintf(out, cap, map[i].to, (int)c->tgid, (int)c->tid);
		if (k < 0 || (size_t)k >= cap || (size_t)k + strlen(in + n) >= cap)
			return -ENAMETOOLONG;
		strcat(out, in + n);
		return 0;
	}
	if (strlen(in) >= cap)
		return -ENAMETOOLONG;
	strcpy(out, in);
	return 0;
}

/* The directory a relative path of the caller starts from. */
static int caller_dir(const struct caller *c, int dirfd)
{
	if (dirfd != AT_FDCWD)
		return cf_sup_take_fd(c, dirfd);
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/cwd", (int)c->tid);
	int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Pin what the caller names: an O_PATH descriptor of the object itself,
 * resolved once. An absolute path resolves in the supervisor's root (a
 * chrooted caller's paths may miss; what they reach is judged all the same). */
int cf_sup_pin(struct caller *c, int dirfd, const char *path, bool follow, bool empty_ok)
{
	char p[PATH_MAX + 64];
	int r;
	if (!path[0]) {
		if (!empty_ok)
			return -ENOENT;
		return caller_dir(c, dirfd);
	}
	if ((r = caller_path(c, path, p, sizeof p)) < 0)
		return r;
	int base = p[0] == '/' ? AT_FDCWD : caller_dir(c, dirfd);
	if (base < 0 && base != AT_FDCWD)
		return base;
	int fd = openat(base, p, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		fd = -errno;
	if (base >= 0)
		close(base);
	return fd;
}
