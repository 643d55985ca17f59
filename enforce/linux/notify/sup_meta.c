/* The supervisor's metadata judgement: see sup_meta.h. The arguments are
 * copied once (parse_meta), the object is pinned (an O_PATH descriptor, or
 * the caller's own descriptor), judged by where it lies, and the call is
 * made on the pinned object with the copy: what was judged is what is
 * changed. */
#include "sup_meta.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sup_caller.h"
#include "supervisor_wire.h"
#include "sys.h"

#define NR_FCHMODAT2 452
#define NR_SETXATTRAT 463
#define NR_REMOVEXATTRAT 466
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

static bool beneath(const char *root, const char *path)
{
	size_t n = strlen(root);
	while (n > 1 && root[n - 1] == '/')
		n--;
	if (n == 1 && root[0] == '/')
		return path[0] == '/';
	return strncmp(root, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Where the object of FD lies, into WHERE; 1 when it lies beneath a writable
 * location of POL (or has no place: a pipe, a socket, an unlinked file). */
static int located_inside(const struct policy *pol, int fd, char *where, size_t cap)
{
	char p[64];
	struct stat st;
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(p, where, cap - 1);
	if (n < 0 || fstat(fd, &st) < 0)
		return -errno;
	where[n] = '\0';
	if (where[0] != '/')
		return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
	if (st.st_nlink == 0)
		return 1;
	for (size_t i = 0; i < pol->nw; i++)
		if (beneath(pol->w[i], where))
			return 1;
	return 0;
}

enum op { OP_CHMOD, OP_CHOWN, OP_UTIMES, OP_SETXATTR, OP_REMOVEXATTR, OP_IOCTL };

struct meta {
	const char *call;
	enum op op;
	int fd;    /* >= 0: the call names a descriptor (fchmod, ...) */
	int dirfd; /* else a path from dirfd */
	uint64_t path;
	bool follow, empty_ok;
	unsigned mode;
	uint32_t uid, gid;
	struct timespec ts[2];
	bool ts_null;
	char name[XATTR_NAME_MAX + 1];
	uint64_t value;
	size_t size;
	int xflags;
	unsigned cmd;
	union {
		int flags;
		struct fsxattr fsx;
	} io;
};

static int read_times(const struct caller *c, struct meta *m, uint64_t addr, int kind)
{
	m->ts_null = addr == 0;
	if (m->ts_null)
		return 0;
	if (kind == 0) { /* struct utimbuf */
		long t[2];
		if (cf_sup_peek(c, addr, t, sizeof t) < 0)
			return -EFAULT;
		m->ts[0] = (struct timespec){t[0], 0};
		m->ts[1] = (struct timespec){t[1], 0};
	} else if (kind == 1) { /* struct timeval[2] */
		struct timeval tv[2];
		if (cf_sup_peek(c, addr, tv, sizeof tv) < 0)
			return -EFAULT;
		for (int i = 0; i < 2; i++) {
			if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
				return -EINVAL;
			m->ts[i] = (struct timespec){tv[i].tv_sec, tv[i].tv_usec * 1000};
		}
	} else if (cf_sup_peek(c, addr, m->ts, sizeof m->ts) < 0) {
		return -EFAULT;
	}
	return 0;
}

static int read_xattr_name(const struct caller *c, struct meta *m, uint64_t addr)
{
	int r = cf_sup_peek_str(c, addr, m->name, sizeof m->name, ERANGE);
	if (r == 0 && !m->name[0])
		r = -ERANGE;
	return r;
}

#define A(i) (n->data.args[i])
#define AINT(i) ((int)(uint32_t)n->data.args[i])

/* The arguments of the call, copied once. */
static int parse_meta(const struct caller *c, const struct seccomp_notif *n, struct meta *m)
{
	int nr = n->data.nr, r = 0;
	memset(m, 0, sizeof *m);
	m->fd = -1;
	m->dirfd = AT_FDCWD;
	m->follow = true;
	switch (nr) {
#ifdef SYS_chmod
	case SYS_chmod:
		*m = (struct meta){.call = "chmod", .op = OP_CHMOD, .fd = -1, .dirfd = AT_FDCWD,
				   .path = A(0), .follow = true, .mode = (unsigned)A(1)};
		return 0;
#endif
	case SYS_fchmod:
		m->call = "fchmod", m->op = OP_CHMOD, m->fd = AINT(0), m->mode = (unsigned)A(1);
		return 0;
	case SYS_fchmodat:
		m->call = "fchmodat", m->op = OP_CHMOD, m->dirfd = AINT(0), m->path = A(1);
		m->mode = (unsigned)A(2);
		return 0;
	case NR_FCHMODAT2:
		m->call = "fchmodat2", m->op = OP_CHMOD, m->dirfd = AINT(0), m->path = A(1);
		m->mode = (unsigned)A(2);
		if (A(3) & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return -EINVAL;
		m->follow = !(A(3) & AT_SYMLINK_NOFOLLOW);
		m->empty_ok = A(3) & AT_EMPTY_PATH;
		return 0;
#ifdef SYS_chown
	case SYS_chown:
	case SYS_lchown:
		m->call = nr == SYS_chown ? "chown" : "lchown", m->op = OP_CHOWN, m->path = A(0);
		m->follow = nr == SYS_chown, m->uid = (uint32_t)A(1), m->gid = (uint32_t)A(2);
		return 0;
#endif
	case SYS_fchown:
		m->call = "fchown", m->op = OP_CHOWN, m->fd = AINT(0);
		m->uid = (uint32_t)A(1), m->gid = (uint32_t)A(2);
		return 0;
	case SYS_fchownat:
		m->call = "fchownat", m->op = OP_CHOWN, m->dirfd = AINT(0), m->path = A(1);
		m->uid = (uint32_t)A(2), m->gid = (uint32_t)A(3);
		if (A(4) & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return -EINVAL;
		m->follow = !(A(4) & AT_SYMLINK_NOFOLLOW);
		m->empty_ok = A(4) & AT_EMPTY_PATH;
		return 0;
#ifdef SYS_utime
	case SYS_utime:
		m->call = "utime", m->op = OP_UTIMES, m->path = A(0);
		return read_times(c, m, A(1), 0);
	case SYS_utimes:
		m->call = "utimes", m->op = OP_UTIMES, m->path = A(0);
		return read_times(c, m, A(1), 1);
	case SYS_futimesat:
		m->call = "futimesat", m->op = OP_UTIMES, m->dirfd = AINT(0), m->path = A(1);
		if (!m->path && m->dirfd != AT_FDCWD)
			m->fd = m->dirfd;
		return read_times(c, m, A(2), 1);
#endif
	case SYS_utimensat:
		m->call = "utimensat", m->op = OP_UTIMES, m->dirfd = AINT(0), m->path = A(1);
		if (A(3) & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return -EINVAL;
		m->follow = !(A(3) & AT_SYMLINK_NOFOLLOW);
		m->empty_ok = A(3) & AT_EMPTY_PATH;
		if (!m->path) { /* futimens(), as the kernel's do_utimes() */
			if (m->dirfd == AT_FDCWD)
				return -EFAULT;
			if (A(3))
				return -EINVAL;
			m->fd = m->dirfd;
		}
		return read_times(c, m, A(2), 2);
	case SYS_setxattr:
	case SYS_lsetxattr:
	case SYS_fsetxattr:
		m->call = nr == SYS_setxattr ? "setxattr" : nr == SYS_lsetxattr ? "lsetxattr" : "fsetxattr";
		m->op = OP_SETXATTR;
		if (nr == SYS_fsetxattr)
			m->fd = AINT(0);
		else
			m->path = A(0);
		m->follow = nr != SYS_lsetxattr;
		m->value = A(2), m->size = A(3), m->xflags = AINT(4);
		return read_xattr_name(c, m, A(1));
	case NR_SETXATTRAT: {
		struct {
			uint64_t value;
			uint32_t size, flags;
		} xa;
		m->call = "setxattrat", m->op = OP_SETXATTR, m->dirfd = AINT(0), m->path = A(1);
		if (A(2) & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return -EINVAL;
		m->follow = !(A(2) & AT_SYMLINK_NOFOLLOW);
		m->empty_ok = A(2) & AT_EMPTY_PATH;
		if (A(5) < sizeof xa)
			return -EINVAL;
		if (A(5) > 4096)
			return -E2BIG;
		if (cf_sup_peek(c, A(4), &xa, sizeof xa) < 0)
			return -EFAULT;
		for (uint64_t at = sizeof xa; at < A(5); at++) { /* copy_struct_from_user() */
			char z;
			if (cf_sup_peek(c, A(4) + at, &z, 1) < 0)
				return -EFAULT;
			if (z)
				return -E2BIG;
		}
		m->value = xa.value, m->size = xa.size, m->xflags = (int)xa.flags;
		return read_xattr_name(c, m, A(3));
	}
	case SYS_removexattr:
	case SYS_lremovexattr:
	case SYS_fremovexattr:
		m->call = nr == SYS_removexattr	   ? "removexattr"
			  : nr == SYS_lremovexattr ? "lremovexattr"
						   : "fremovexattr";
		m->op = OP_REMOVEXATTR;
		if (nr == SYS_fremovexattr)
			m->fd = AINT(0);
		else
			m->path = A(0);
		m->follow = nr != SYS_lremovexattr;
		return read_xattr_name(c, m, A(1));
	case NR_REMOVEXATTRAT:
		m->call = "removexattrat", m->op = OP_REMOVEXATTR, m->dirfd = AINT(0), m->path = A(1);
		if (A(2) & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return -EINVAL;
		m->follow = !(A(2) & AT_SYMLINK_NOFOLLOW);
		m->empty_ok = A(2) & AT_EMPTY_PATH;
		return read_xattr_name(c, m, A(3));
	case SYS_ioctl:
		/* Only the TRAP rows of CF_META_IOCTLS arrive: each takes an int
		 * (the kernel reads an int for the long forms too), or struct
		 * fsxattr. Called again with our copy, on the caller's descriptor. */
		m->call = "ioctl", m->op = OP_IOCTL, m->fd = AINT(0), m->cmd = (uint32_t)A(1);
		if (m->cmd == CF_IOC_FSSETXATTR)
			r = cf_sup_peek(c, A(2), &m->io.fsx, sizeof m->io.fsx);
		else
			r = cf_sup_peek(c, A(2), &m->io.flags, sizeof m->io.flags);
		return r;
	default:
		return -ENOSYS;
	}
}

static long act_meta(struct meta *m, int t, bool is_pin)
{
	char p[64];
	long r;
	snprintf(p, sizeof p, "/proc/self/fd/%d", t);
	switch (m->op) {
	case OP_CHMOD:
		if (!is_pin)
			return fchmod(t, m->mode) < 0 ? -errno : 0;
		r = cf_sys4(NR_FCHMODAT2, t, "", m->mode, AT_EMPTY_PATH);
		if (r == -ENOSYS) /* before 6.6: through the pinned file's magic link */
			r = chmod(p, m->mode) < 0 ? -errno : 0;
		return r < 0 ? r : 0;
	case OP_CHOWN:
		if (!is_pin)
			return fchown(t, m->uid, m->gid) < 0 ? -errno : 0;
		return fchownat(t, "", m->uid, m->gid, AT_EMPTY_PATH) < 0 ? -errno : 0;
	case OP_UTIMES: {
		const struct timespec *ts = m->ts_null ? NULL : m->ts;
		if (!is_pin)
			return cf_sys4(SYS_utimensat, t, NULL, ts, 0);
		r = cf_sys4(SYS_utimensat, t, "", ts, AT_EMPTY_PATH);
		if (r == -EINVAL)
			r = cf_sys4(SYS_utimensat, AT_FDCWD, p, ts, 0);
		return r;
	}
	case OP_SETXATTR:
		return -ENOSYS; /* setxattr_with_value: the value is copied first */
	case OP_REMOVEXATTR:
		r = is_pin ? removexattr(p, m->name) : fremovexattr(t, m->name);
		return r < 0 ? -errno : 0;
	case OP_IOCTL:
		return ioctl(t, m->cmd, &m->io) < 0 ? -errno : 0;
	}
	return -ENOSYS;
}

static long setxattr_with_value(const struct caller *c, struct meta *m, int t, bool is_pin)
{
	char p[64];
	if (m->size > XATTR_SIZE_MAX)
		return -E2BIG;
	void *v = m->size ? malloc(m->size) : NULL;
	if (m->size && !v)
		return -ENOMEM;
	long r = cf_sup_peek(c, m->value, v, m->size);
	if (r == 0 && !cf_sup_valid(c))
		r = -ENOENT;
	if (r == 0) {
		snprintf(p, sizeof p, "/proc/self/fd/%d", t);
		r = is_pin ? setxattr(p, m->name, v, m->size, m->xflags)
			   : fsetxattr(t, m->name, v, m->size, m->xflags);
		if (r < 0)
			r = -errno;
	}
	free(v);
	return r;
}

long cf_sup_handle_meta(struct caller *c, const struct seccomp_notif *n)
{
	struct meta m;
	char path[PATH_MAX], where[PATH_MAX];
	long r = parse_meta(c, n, &m);
	if (r < 0)
		return r;
	int t;
	bool is_pin = m.fd < 0;
	if (!is_pin) {
		t = cf_sup_take_fd(c, m.fd);
	} else {
		if (m.path) {
			if ((r = cf_sup_peek_str(c, m.path, path, sizeof path, ENAMETOOLONG)) < 0)
				return r;
		} else {
			path[0] = '\0';
		}
		t = cf_sup_pin(c, m.dirfd, path, m.follow, m.empty_ok);
	}
	if (t < 0)
		return t;
	if (!cf_sup_valid(c)) {
		close(t);
		return -ENOENT;
	}
	int in = located_inside(c->pol, t, where, sizeof where);
	if (in <= 0 || !cf_sup_same_creds(c)) {
		cf_sup_log_denial(c, "metadata_denied", m.call, "path", in < 0 ? path : where,
			   in > 0 ? "credentials" : NULL);
		close(t);
		return -EACCES;
	}
	if (m.op == OP_SETXATTR)
		r = setxattr_with_value(c, &m, t, is_pin);
	else
		r = act_meta(&m, t, is_pin);
	close(t);
	return r;
}
