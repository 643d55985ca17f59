/* The mount namespace of the fenced tree, made once for a harness's
 * children and handed to the harness and its supervisor: the parent's
 * part of shared_ns.h. Each child enters it with harness_ns.c. */
#include "shared_ns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "high_fd.h"
#include "notify/supervisor.h"
#include "notify/supervisor_wire.h"
#include "sys.h"
#include "userns.h"

/* What the helper tells the guard. */
struct result {
	int rc;
	size_t held;
	char why[512];
};

/* The helper's id maps, written by the guard (which holds CAP_SETUID over
 * the helper's parent namespace; the helper does not). Root: every id
 * mapped to itself, so that chown, tar -p and cp -a as root keep their
 * owners. Else the user's own ids, with setgroups denied (as userns.c). */
static int write_maps(pid_t pid, bool root, char *why, size_t n)
{
	char path[64], map[64];
	int rc = 0;
	if (!root) {
		snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
		if ((rc = cf_userns_write(path, "deny")))
			return snprintf(why, n, "can not write %s: %s", path, strerror(-rc)), rc;
	}
	for (int g = 0; g < 2; g++) {
		unsigned id = g ? (unsigned)getegid() : (unsigned)geteuid();
		snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, g ? "gid_map" : "uid_map");
		if (root)
			snprintf(map, sizeof map, "0 0 4294967295");
		else
			snprintf(map, sizeof map, "%u %u 1", id, id);
		if ((rc = cf_userns_write(path, map)))
			return snprintf(why, n, "can not write %s: %s", path, strerror(-rc)), rc;
	}
	return 0;
}

static bool read_all(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, (char *)buf + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return true;
}

/* The helper's last step, once the guard holds its namespaces ('k' on
 * IN): a grandchild, reparented away from the harness (GUARD, which
 * becomes the harness by exec), keeps the namespace; its pid goes up on
 * OUT. */
static void start_keeper(struct cf_tree_ns *ns, pid_t guard, int out, int sock)
{
	int pidfd = (int)cf_sys2(SYS_pidfd_open, guard, 0);
	if (pidfd < 0 || getppid() != guard)
		_exit(0);
	pid_t pid = fork();
	if (pid != 0)
		_exit(0);
	int me = (int)getpid();
	(void)!write(out, &me, sizeof me);
	cf_keeper(&ns->plan, pidfd, sock);
}

/* The helper: a user and a mount namespace of its own, its maps from the
 * guard, then the namespace of tree_ns.h; its result on OUT; then, told
 * so, it starts the keeper; else it waits to be killed (the guard opens
 * its namespaces meanwhile). */
static void helper(struct cf_tree_ns *ns, pid_t guard, int in, int out, int sock)
{
	struct result r = {0};
	char go;
	r.rc = cf_userns_unshare(CLONE_NEWUSER | CLONE_NEWNS);
	(void)!write(out, &r.rc, sizeof r.rc);
	if (r.rc || !read_all(in, &go, 1))
		_exit(0);
	r.rc = cf_userns_slave();
	if (r.rc) {
		snprintf(r.why, sizeof r.why, "can not make the mounts private: %s",
			 strerror(-r.rc));
		cf_userns_cause_words(r.rc, CF_USERNS_SLAVE, r.why, sizeof r.why);
	} else if ((r.rc = cf_tree_ns_mount(ns)))
		cf_tree_ns_words(ns, r.rc, r.why, sizeof r.why);
	r.held = ns->held;
	(void)!write(out, &r, sizeof r);
	if (!r.rc && read(in, &go, 1) == 1 && go == 'k')
		start_keeper(ns, guard, out, sock);
	_exit(0);
}

static int open_ns(pid_t pid, const char *which, unsigned long long *ino,
		   unsigned long long *dev, char *why, size_t n)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, which);
	/* Inherited by the harness: no O_CLOEXEC. */
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		int rc = -errno;
		if (fd >= 0)
			close(fd);
		return snprintf(why, n, "can not open %s: %s", path, strerror(-rc)), rc;
	}
	*ino = (unsigned long long)st.st_ino;
	*dev = (unsigned long long)st.st_dev;
	return fd;
}

int cf_shared_ns_make(struct cf_shared_ns *k, struct cf_tree_ns *ns)
{
	int down[2], up[2], sv[2], rc;
	struct result r = {0};
	memset(k, 0, sizeof *k);
	k->user_fd = k->mnt_fd = k->keeper_fd = -1;
	k->root = geteuid() == 0;
	k->write_protect = ns->write_protect;
	if (ns->plan.rw.n > CF_NS_MAX_RW) {
		ns->fail_step = CF_NS_TOO_MANY;
		cf_tree_ns_words(ns, -E2BIG, k->off_why, sizeof k->off_why);
		return -E2BIG;
	}
	if (pipe2(down, O_CLOEXEC))
		return rc = -errno, snprintf(k->off_why, sizeof k->off_why, "pipe: %s",
					     strerror(-rc)), rc;
	if (pipe2(up, O_CLOEXEC)) {
		rc = -errno;
		close(down[0]);
		close(down[1]);
		return snprintf(k->off_why, sizeof k->off_why, "pipe: %s", strerror(-rc)), rc;
	}
	/* The keeper's socket: no keeper without it (today's check alone). */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		sv[0] = sv[1] = -1;
	pid_t guard = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		if (sv[0] >= 0)
			close(sv[0]);
		helper(ns, guard, down[0], up[1], sv[1]);
	}
	close(down[0]);
	close(up[1]);
	if (sv[1] >= 0)
		close(sv[1]);
	if (pid < 0) {
		rc = -errno;
		snprintf(k->off_why, sizeof k->off_why, "fork: %s", strerror(-rc));
		goto out;
	}
	int unshared;
	if (!read_all(up[0], &unshared, sizeof unshared)) {
		rc = -EIO;
		snprintf(k->off_why, sizeof k->off_why, "the helper that makes it ended early");
		goto out;
	}
	if (unshared) {
		rc = unshared;
		/* EINVAL: the helper runs more than one thread (a sanitizer's
		 * runtime starts one in every forked child), as for userns.c. */
		if (rc == -EINVAL)
			snprintf(k->off_why, sizeof k->off_why,
				 "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: %s: the kernel gives a user "
				 "namespace only to a process of one thread, and the helper that makes "
				 "it runs more (something loaded into credfence started them: a "
				 "sanitizer's runtime, such as ThreadSanitizer's, or a library in "
				 "LD_PRELOAD); run credfence without it",
				 strerror(-rc));
		else if (k->root)
			snprintf(k->off_why, sizeof k->off_why,
				 "unshare(CLONE_NEWUSER|CLONE_NEWNS) failed: %s", strerror(-rc)),
			cf_userns_cause_words(rc, CF_USERNS_UNSHARE, k->off_why, sizeof k->off_why);
		else
			cf_userns_words(rc, CF_USERNS_UNSHARE, k->off_why, sizeof k->off_why);
		goto out;
	}
	if ((rc = write_maps(pid, k->root, k->off_why, sizeof k->off_why)))
		goto out;
	if (write(down[1], "g", 1) != 1 || !read_all(up[0], &r, sizeof r)) {
		rc = -EIO;
		snprintf(k->off_why, sizeof k->off_why, "the helper that makes it ended early");
		goto out;
	}
	if ((rc = r.rc)) {
		snprintf(k->off_why, sizeof k->off_why, "%s", r.why);
		goto out;
	}
	k->held = r.held;
	if ((rc = open_ns(pid, "user", &k->user_ino, &k->dev, k->off_why, sizeof k->off_why)) < 0)
		goto out;
	k->user_fd = rc;
	if ((rc = open_ns(pid, "mnt", &k->mnt_ino, &k->dev, k->off_why, sizeof k->off_why)) < 0) {
		close(k->user_fd);
		k->user_fd = -1;
		goto out;
	}
	k->mnt_fd = rc;
	rc = 0;
	int keeper;
	if (sv[0] >= 0 && write(down[1], "k", 1) == 1 && read_all(up[0], &keeper, sizeof keeper)) {
		/* Inherited by the harness, as the namespaces' descriptors. */
		k->keeper_fd = sv[0];
		k->keeper_pid = keeper;
		sv[0] = -1;
		(void)fcntl(k->keeper_fd, F_SETFD, 0);
	}
out:
	if (pid > 0) {
		if (k->keeper_fd < 0)
			kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (sv[0] >= 0)
		close(sv[0]);
	close(down[1]);
	close(up[0]);
	return rc;
}

void cf_shared_ns_value(const struct cf_shared_ns *k, char *buf, size_t n)
{
	if (k->user_fd < 0 || k->mnt_fd < 0)
		snprintf(buf, n, "off:%s", k->off_why);
	else
		snprintf(buf, n, "%05d,%05d,%llu,%llu,%llu,%zu,%d,%05d,%d", k->user_fd, k->mnt_fd,
			 k->user_ino, k->mnt_ino, k->dev, k->held, k->root ? 1 : 0, k->keeper_fd,
			 k->keeper_pid);
}

const char *cf_shared_ns_adopt(struct cf_shared_ns *k, const char *value, int write_protect,
				 char *buf, size_t n)
{
	int ufd, mfd, root, kfd;
	memset(k, 0, sizeof *k);
	k->user_fd = k->mnt_fd = k->keeper_fd = -1;
	k->write_protect = write_protect;
	if (!value) {
		snprintf(k->off_why, sizeof k->off_why,
			 "the harness was started without it (no CREDFENCE_FENCED_NS)");
		return NULL;
	}
	if (strncmp(value, "off:", 4) == 0) {
		snprintf(k->off_why, sizeof k->off_why, "%s", value + 4);
		return value;
	}
	if (sscanf(value, "%d,%d,%llu,%llu,%llu,%zu,%d,%d,%d", &ufd, &mfd, &k->user_ino,
		   &k->mnt_ino, &k->dev, &k->held, &root, &kfd, &k->keeper_pid) != 9 ||
	    k->user_ino == k->mnt_ino) {
		snprintf(k->off_why, sizeof k->off_why, "CREDFENCE_FENCED_NS is malformed");
		return NULL;
	}
	k->root = root == 1;
	k->made = true;
	if (!cf_shared_ns_fd_is(ufd, k->user_ino, k->dev) || !cf_shared_ns_fd_is(mfd, k->mnt_ino, k->dev)) {
		snprintf(k->off_why, sizeof k->off_why,
			 "the harness was started without its descriptors (something closed them "
			 "before it ran)");
		return NULL;
	}
	k->user_fd = cf_high_fd(ufd);
	k->mnt_fd = cf_high_fd(mfd);
	if (k->user_fd < 0 || k->mnt_fd < 0) {
		snprintf(k->off_why, sizeof k->off_why, "can not move its descriptors: %s",
			 strerror(errno));
		if (k->user_fd >= 0)
			close(k->user_fd);
		if (k->mnt_fd >= 0)
			close(k->mnt_fd);
		k->user_fd = k->mnt_fd = -1;
		return NULL;
	}
	/* The keeper's socket, when it is one (else: no keeper, today's
	 * check alone). */
	struct stat st;
	if (kfd >= 0 && !fstat(kfd, &st) && S_ISSOCK(st.st_mode))
		k->keeper_fd = cf_high_fd(kfd);
	if (k->keeper_fd < 0)
		k->keeper_pid = 0;
	cf_shared_ns_value(k, buf, n);
	return buf;
}

int cf_shared_ns_give(const struct cf_shared_ns *k, const struct cf_ipc *ipc)
{
	if (k->user_fd < 0 || k->mnt_fd < 0)
		return -ENOENT;
	struct cf_ns_wire w = {.nfds = k->keeper_fd >= 0 ? 3 : 2,
			       .user_ino = k->user_ino,
			       .mnt_ino = k->mnt_ino,
			       .dev = k->dev,
			       .held = k->held,
			       .root = k->root,
			       .keeper_pid = k->keeper_pid};
	int fds[3] = {k->user_fd, k->mnt_fd, k->keeper_fd};
	return cf_ipc_ns_give(ipc, &w, fds);
}

int cf_shared_ns_recover(struct cf_shared_ns *k, const struct cf_ipc *ipc)
{
	struct cf_shared_ns got;
	const char *why;
	if (k->user_fd >= 0 && k->mnt_fd >= 0)
		return 0;
	int rc = cf_shared_ns_fetch(k, ipc, &got, &why);
	if (rc) {
		if (k->made || rc != -ENOENT) {
			size_t u = strlen(k->off_why);
			if (u + 8 < sizeof k->off_why)
				snprintf(k->off_why + u, sizeof k->off_why - u, "%s%s", u ? "; " : "", why);
		}
		return rc;
	}
	int u = cf_high_fd(got.user_fd), m = cf_high_fd(got.mnt_fd);
	int kf = got.keeper_fd >= 0 ? cf_high_fd(got.keeper_fd) : -1;
	if (u < 0 || m < 0) {
		rc = -errno;
		if (u >= 0)
			close(u);
		if (m >= 0)
			close(m);
		if (kf >= 0)
			close(kf);
		snprintf(k->off_why, sizeof k->off_why, "can not move its descriptors: %s",
			 strerror(-rc));
		return rc;
	}
	if (k->keeper_fd >= 0 && kf >= 0) {
		close(kf);
		kf = k->keeper_fd;
	}
	got.user_fd = u;
	got.mnt_fd = m;
	got.keeper_fd = kf;
	if (kf < 0)
		got.keeper_pid = 0;
	got.off_why[0] = '\0';
	got.plan = k->plan;
	*k = got;
	return 0;
}

int cf_shared_ns_plan(struct cf_shared_ns *k, struct cf_protect_plan *plan,
			const struct cf_policy *pol, const struct cf_strv *allow, const char *cwd)
{
	if (!k->made)
		return 0;
	int rc = cf_protect_plan_build(plan, pol, allow, cwd);
	if (!rc)
		k->plan = plan;
	return rc;
}
