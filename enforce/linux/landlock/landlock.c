#include "landlock.h"

#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errwords.h"
#include "notify/supervisor.h"
#include "json.h"
#include "sys.h"
#include "notify/ttyfilter.h"

/* Our own copies of the UAPI, so that headers older than the kernel still build. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_REMOVE_DIR (1ULL << 4)
#define FS_REMOVE_FILE (1ULL << 5)
#define FS_MAKE_CHAR (1ULL << 6)
#define FS_MAKE_DIR (1ULL << 7)
#define FS_MAKE_REG (1ULL << 8)
#define FS_MAKE_SOCK (1ULL << 9)
#define FS_MAKE_FIFO (1ULL << 10)
#define FS_MAKE_BLOCK (1ULL << 11)
#define FS_MAKE_SYM (1ULL << 12)
#define FS_REFER (1ULL << 13)
#define FS_TRUNCATE (1ULL << 14)
#define FS_IOCTL_DEV (1ULL << 15)

#define FS_FILE_RIGHTS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)
#define FS_WRITE_RIGHTS                                                                  \
	(FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR |  \
	 FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM |       \
	 FS_REFER | FS_TRUNCATE)

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};

/* No scope (ABI 6) is asked for. LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET would
 * refuse a send or connect to an abstract socket whose file was opened
 * outside the domain: the supervisor judges every connect (and makes it,
 * outside any domain, so the scope never sees it), and makes every Unix
 * datagram socket in the fenced tree's own network namespace
 * (sup_dgram.h), on every ABI; the scope would refuse those to their own
 * tree (their file is the supervisor's helper's), and a harness's children
 * (a domain each) each other's. LANDLOCK_SCOPE_SIGNAL is not asked either:
 * a fenced command may signal what an earlier one started (SECURITY.md). */

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#ifdef CF_TEST_ABI_SWITCH
/* Test builds only (meson -Dtest_abi_switch=true): CF_TEST_LANDLOCK_ABI=N
 * (1 to 9) caps the ABI this process uses at N. Read once as the program or
 * the shim is loaded (normal context); every child inherits the variable
 * and so the same cap. */
static int abi_cap;

__attribute__((constructor)) static void read_abi_cap(void)
{
	const char *v = getenv("CF_TEST_LANDLOCK_ABI");
	if (v && v[0] >= '1' && v[0] <= '9' && v[1] == '\0')
		abi_cap = v[0] - '0';
}
#endif

int cf_ll_abi(void)
{
	int abi = (int)cf_sys3(SYS_landlock_create_ruleset, 0, 0, LL_CREATE_RULESET_VERSION);
#ifdef CF_TEST_ABI_SWITCH
	if (abi_cap && abi > abi_cap)
		abi = abi_cap;
#endif
	return abi;
}

uint64_t cf_ll_handled(int abi)
{
	uint64_t all = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR |
		       FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK |
		       FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM | FS_REFER | FS_TRUNCATE |
		       FS_IOCTL_DEV;
	/* Best effort: drop what older ABIs do not know, newest first. */
	switch (abi) {
	case 1:
		all &= ~FS_REFER;
		__attribute__((fallthrough));
	case 2:
		all &= ~FS_TRUNCATE;
		__attribute__((fallthrough));
	case 3:
	case 4:
		all &= ~FS_IOCTL_DEV;
		break;
	default:
		if (abi < 1)
			return 0;
	}
	return all;
}

uint64_t cf_ll_rights(enum cf_rule_kind kind, int is_dir, uint64_t handled)
{
	uint64_t r;
	switch (kind) {
	case CF_RULE_WRITE:
		r = handled;
		break;
	case CF_RULE_DEV:
		r = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR | FS_WRITE_FILE | FS_TRUNCATE |
		    FS_IOCTL_DEV;
		break;
	default:
		r = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
		break;
	}
	r &= handled;
	if (!is_dir)
		r &= FS_FILE_RIGHTS; /* the kernel rejects directory rights on files */
	return r;
}

struct build_ctx {
	int ruleset;
	uint64_t handled;
};

static int add_rule(void *vctx, int fd, int is_dir, enum cf_rule_kind kind)
{
	struct build_ctx *ctx = vctx;
	struct ll_path_beneath_attr attr = {
		.allowed_access = cf_ll_rights(kind, is_dir, ctx->handled),
		.parent_fd = fd,
	};
	if (!attr.allowed_access)
		return 0;
	return (int)cf_sys4(SYS_landlock_add_rule, ctx->ruleset, LL_RULE_PATH_BENEATH, &attr, 0);
}

static int create_ruleset(uint64_t handled, int abi)
{
	(void)abi;
	struct ll_ruleset_attr attr = {.handled_access_fs = handled};
	size_t size = offsetof(struct ll_ruleset_attr, handled_access_net);
	return (int)cf_sys3(SYS_landlock_create_ruleset, &attr, size, 0);
}

int cf_ll_build(const struct cf_plan *pl, int abi, char *buf, size_t bufsz,
		struct cf_expand_result *res, struct cf_stamp *stamps)
{
	struct build_ctx ctx = {.handled = cf_ll_handled(abi)};
	ctx.ruleset = create_ruleset(ctx.handled, abi);
	if (ctx.ruleset < 0)
		return ctx.ruleset;
	int rc = cf_expand(pl, buf, bufsz, add_rule, &ctx, res, stamps);
	if (rc) {
		cf_sys_close(ctx.ruleset);
		return rc;
	}
	return ctx.ruleset;
}

int cf_ll_restrict_with(int ruleset_fd, int (*between)(const void *), const void *ctx)
{
	long rc = cf_sys5(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (rc)
		return (int)rc;
	/* Before the Landlock layer, on this thread only: every fenced process
	 * then has the filter, inherited by all it starts. */
	if ((rc = cf_ttyfilter_install()))
		return CF_ERR(CF_ERR_TTYFILTER, -rc);
	if (between && (rc = between(ctx)))
		return (int)rc;
	return (int)cf_sys2(SYS_landlock_restrict_self, ruleset_fd, 0);
}

int cf_ll_restrict_self(int ruleset_fd)
{
	return (int)cf_sys2(SYS_landlock_restrict_self, ruleset_fd, 0);
}

int cf_ll_restrict(int ruleset_fd)
{
	return cf_ll_restrict_with(ruleset_fd, NULL, NULL);
}

int cf_ll_probe(void)
{
	int abi = cf_ll_abi();
	if (abi < 0)
		return abi;
	int fd = create_ruleset(FS_WRITE_FILE | FS_MAKE_REG, 1);
	if (fd < 0)
		return fd;
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC)) {
		int e = -errno;
		close(fd);
		return e;
	}
	pid_t pid = fork();
	if (pid == 0) {
		int r = cf_ll_restrict(fd);
		(void)!write(pipefd[1], &r, sizeof r);
		_exit(0);
	}
	int r = pid < 0 ? -errno : -EIO;
	close(pipefd[1]);
	close(fd);
	if (pid > 0) {
		if (read(pipefd[0], &r, sizeof r) != sizeof r)
			r = -EIO;
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(pipefd[0]);
	return r;
}

int cf_ll_fenced(void)
{
	return cf_sys_fenced();
}

bool cf_ll_is_ruleset(int fd)
{
	static const char want[] = "anon_inode:[landlock-ruleset]";
	char link[32] = "/proc/self/fd/", digits[12], got[sizeof want + 1];
	size_t n = 0, at = sizeof "/proc/self/fd/" - 1;
	if (fd < 0)
		return false;
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) && n < sizeof digits);
	while (n)
		link[at++] = digits[--n];
	link[at] = '\0';
	long r = cf_sys4(SYS_readlinkat, AT_FDCWD, link, got, sizeof got);
	return r == (long)sizeof want - 1 && memcmp(got, want, sizeof want - 1) == 0;
}

static bool is_ipc(int err)
{
	return cf_err_kind(err) >= CF_ERR_IPC && cf_err_kind(err) <= CF_ERR_PIDFD;
}

void cf_ll_verdict(int err, int abi, struct cf_why *w)
{
	*w = (struct cf_why){.id = CF_WHY_LANDLOCK, .err = -err};
	if (is_ipc(err))
		cf_ipc_verdict(err, w);
	else if (cf_err_kind(err) == CF_ERR_TTYFILTER)
		*w = (struct cf_why){.id = CF_WHY_TTYFILTER, .err = cf_err_detail(err)};
	else if (err == -ELOOP)
		w->id = CF_WHY_LOOP;
	else if (err == 0 && abi < CF_LANDLOCK_MIN_ABI)
		*w = (struct cf_why){.id = CF_WHY_LANDLOCK_ABI, .n = abi, .limit = CF_LANDLOCK_MIN_ABI};
}

void cf_ll_reason(int err, int abi, char *out, size_t outsz)
{
	struct cf_why w;
	cf_ll_verdict(err, abi, &w);
	cf_why_words(&w, out, outsz);
}
