/* The Landlock backend: rights by ABI, masking for files, the words for faults,
 * and, on a kernel with Landlock, that masked rights are what the kernel takes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "landlock/landlock.h"

#define R_EXEC (1ULL << 0)
#define R_WRITE_FILE (1ULL << 1)
#define R_READ_FILE (1ULL << 2)
#define R_READ_DIR (1ULL << 3)
#define R_MAKE_REG (1ULL << 8)
#define R_MAKE_ALL (0x1fc0ULL) /* MAKE_CHAR .. MAKE_SYM */
#define R_REMOVE (0x30ULL)
#define R_REFER (1ULL << 13)
#define R_TRUNCATE (1ULL << 14)
#define R_IOCTL_DEV (1ULL << 15)
#define R_FILE (R_EXEC | R_WRITE_FILE | R_READ_FILE | R_TRUNCATE | R_IOCTL_DEV)

Test(landlock_rights, handled_follows_the_abi)
{
	cr_expect_eq(cf_ll_handled(0), 0);
	cr_expect_eq(cf_ll_handled(-ENOSYS), 0);
	uint64_t v1 = cf_ll_handled(1), v2 = cf_ll_handled(2), v3 = cf_ll_handled(3),
		 v5 = cf_ll_handled(5), v7 = cf_ll_handled(7);
	cr_expect_eq(v1, 0x1fffULL, "ABI 1: the 13 first rights");
	cr_expect_eq(v2, v1 | R_REFER);
	cr_expect_eq(v3, v2 | R_TRUNCATE);
	cr_expect_eq(cf_ll_handled(4), v3);
	cr_expect_eq(v5, v3 | R_IOCTL_DEV);
	cr_expect_eq(v7, v5, "no network or scope rights are filesystem rights");
}

Test(landlock_rights, files_get_only_file_rights)
{
	uint64_t h = cf_ll_handled(5);
	for (int kind = CF_RULE_READ; kind <= CF_RULE_DEV; kind++) {
		uint64_t f = cf_ll_rights(kind, 0, h);
		cr_expect_eq(f & ~R_FILE, 0, "kind %d: directory rights on a file: %#llx", kind,
			     (unsigned long long)f);
		cr_expect_eq(f & ~h, 0, "kind %d: rights not handled", kind);
	}
	cr_expect_eq(cf_ll_rights(CF_RULE_READ, 0, h), R_EXEC | R_READ_FILE);
	cr_expect_eq(cf_ll_rights(CF_RULE_READ, 1, h), R_EXEC | R_READ_FILE | R_READ_DIR);
	cr_expect_eq(cf_ll_rights(CF_RULE_WRITE, 1, h), h);
	cr_expect_eq(cf_ll_rights(CF_RULE_WRITE, 0, h), R_FILE);
}

Test(landlock_rights, dev_creates_nothing)
{
	uint64_t h = cf_ll_handled(5);
	uint64_t d = cf_ll_rights(CF_RULE_DEV, 1, h);
	cr_expect_eq(d & (R_MAKE_ALL | R_REMOVE | R_REFER), 0);
	cr_expect(d & R_WRITE_FILE && d & R_READ_FILE && d & R_IOCTL_DEV);
	cr_expect_eq(cf_ll_rights(CF_RULE_DEV, 1, cf_ll_handled(1)) & R_IOCTL_DEV, 0,
		     "masked to the ABI");
}

Test(landlock_rights, words_for_each_fault)
{
	char r[512];
	cf_ll_reason(-EOPNOTSUPP, 7, r, sizeof r);
	cr_expect_str_eq(r, "read isolation is not effective: landlock unavailable (disabled at boot: "
			    "EOPNOTSUPP)");
	cf_ll_reason(-EPERM, 7, r, sizeof r);
	cr_expect_str_eq(r, "read isolation is not effective: landlock unavailable (blocked by seccomp "
			    "or a container policy: EPERM)");
	cf_ll_reason(-E2BIG, 7, r, sizeof r);
	cr_expect(strstr(r, "16") && strstr(r, "E2BIG)"), "%s", r);
	cf_ll_reason(-EINVAL, 7, r, sizeof r);
	cr_expect_str_eq(r, "read isolation is not effective: landlock unavailable (Invalid argument)");
	struct cf_why w;
	cf_ll_verdict(-ENOSYS, 7, &w);
	cr_expect(w.id == CF_WHY_LANDLOCK && w.err == ENOSYS, "decoded as data: %d %d", w.id, w.err);
	cf_ll_reason(-ENOSYS, -ENOSYS, r, sizeof r);
	cr_expect_str_eq(r, "read isolation is not effective: landlock unavailable (not built into "
			    "this kernel: ENOSYS)");
	cf_ll_reason(0, 0, r, sizeof r);
	cr_expect_str_eq(r, "read isolation is not effective: landlock unavailable (kernel ABI too "
			    "old: 0, need 1)");
}

/* In a child: a rule with RIGHTS on PATH is accepted (0) or the errno. */
static int kernel_takes(const char *path, uint64_t handled, uint64_t rights)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct {
			uint64_t allowed;
			int32_t fd;
		} __attribute__((packed)) attr = {rights, open(path, O_PATH | O_CLOEXEC)};
		long rs = syscall(SYS_landlock_create_ruleset, &handled, sizeof handled, 0);
		if (rs < 0 || attr.fd < 0)
			_exit(100);
		_exit(syscall(SYS_landlock_add_rule, rs, 1, &attr, 0) ? errno : 0);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 101;
}

Test(landlock_kernel, masked_file_rights_are_accepted_and_dir_rights_on_files_are_not)
{
	cf_test_require_landlock();
	int abi = cf_ll_abi();
	uint64_t h = cf_ll_handled(abi);
	const char *file = "/etc/hostname";
	if (access(file, F_OK))
		file = "/bin/sh";
	for (int kind = CF_RULE_READ; kind <= CF_RULE_DEV; kind++)
		cr_expect_eq(kernel_takes(file, h, cf_ll_rights(kind, 0, h)), 0, "kind %d", kind);
	cr_expect_eq(kernel_takes(file, h, h), EINVAL, "the kernel rejects directory rights on files");
	cr_expect_eq(kernel_takes("/usr", h, cf_ll_rights(CF_RULE_WRITE, 1, h)), 0);
}

Test(landlock_kernel, probe_leaves_the_caller_free)
{
	cf_test_require_landlock();
	cr_expect_eq(cf_ll_probe(), 0);
	cr_expect_eq(cf_ll_fenced(), 0, "the probe must not fence its caller");
	cr_expect_eq(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0, "nor set no_new_privs");
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	cr_expect_geq(fd, 0);
	close(fd);
}
