/* seccomp-fault ERRNO CMD [ARG...]: make the three Landlock system calls fail
 * with ERRNO (ENOSYS, EOPNOTSUPP or EPERM), then exec CMD. Test use only: it is
 * how a kernel without Landlock, one with Landlock disabled at boot, and a
 * container whose seccomp policy blocks it look to credfence.
 * seccomp-fault NOTIFY CMD [ARG...]: make seccomp() refuse a filter that asks
 * for a user-notification listener with EINVAL, as a kernel older than 5.0
 * (or one built without it) does; Landlock stays.
 * seccomp-fault FILTER CMD [ARG...]: make seccomp() refuse a plain filter (no
 * flags: the terminal filter, ttyfilter.h) with EPERM, as an outer seccomp or
 * container policy may; a listener's filter and Landlock stay.
 * seccomp-fault SYS=NR,ERRNO[,MASK] CMD [ARG...]: make the system call NR fail
 * with ERRNO (numbers), as a kernel or a policy that refuses that one call
 * does: a step of the fenced tree's mount namespace (move_mount,
 * mount_setattr); with MASK, only a call whose first argument has one of
 * its bits (unshare with CLONE_NEWUSER). ERRNO KILL: the process that
 * makes the call is killed (SIGSYS) instead, as by a policy whose action
 * is to kill (systemd's SystemCallFilter= without SystemCallErrorNumber=). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "add the audit arch of this machine"
#endif

int main(int argc, char **argv)
{
	int err, one_nr = -1;
	unsigned mask = 0;
	bool kill = false;
	if (argc < 3) {
		fprintf(stderr, "usage: seccomp-fault ENOSYS|EOPNOTSUPP|EPERM CMD [ARG...]\n");
		return 2;
	}
	if (sscanf(argv[1], "SYS=%d,%d,%i", &one_nr, &err, &mask) >= 2 && one_nr >= 0 && err > 0)
		;
	else if (sscanf(argv[1], "SYS=%d,KILL,%i", &one_nr, &mask) >= 1 && one_nr >= 0 &&
		 strstr(argv[1], ",KILL"))
		kill = true, err = 1;
	else if (strcmp(argv[1], "ENOSYS") == 0)
		err = ENOSYS;
	else if (strcmp(argv[1], "EOPNOTSUPP") == 0)
		err = EOPNOTSUPP;
	else if (strcmp(argv[1], "EPERM") == 0)
		err = EPERM;
	else if (strcmp(argv[1], "NOTIFY") == 0)
		err = 0;
	else if (strcmp(argv[1], "FILTER") == 0)
		err = -1;
	else {
		fprintf(stderr, "seccomp-fault: unknown errno %s\n", argv[1]);
		return 2;
	}
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __NR_landlock_create_ruleset, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, __NR_landlock_restrict_self, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	/* seccomp(op, flags, args): flags is args[1]; its low word holds them. */
	struct sock_filter notify[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_seccomp, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EINVAL & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter plain[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_seccomp, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_SET_MODE_FILTER, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter one[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)one_nr, 0, 3),
		/* args[0], its low word (little-endian); no MASK: every call. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		mask ? (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1)
		     : (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
		BPF_STMT(BPF_RET | BPF_K, kill ? SECCOMP_RET_KILL_PROCESS
					       : SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof *f, .filter = f};
	if (one_nr >= 0) {
		prog.len = sizeof one / sizeof *one;
		prog.filter = one;
	} else if (err == 0) {
		prog.len = sizeof notify / sizeof *notify;
		prog.filter = notify;
	} else if (err < 0) {
		prog.len = sizeof plain / sizeof *plain;
		prog.filter = plain;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp-fault: install the filter");
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror("seccomp-fault: exec");
	return 127;
}
