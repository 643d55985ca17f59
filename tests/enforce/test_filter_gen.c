/* The filters filter_gen.c has libseccomp compile (filters.h), held to the
 * programs they replace: the same answer for every call that can matter,
 * run in an interpreter (bpf_run.h): every number 0..1023 of each table,
 * x32's too, numbers past them, each arch a process can show (x86_64, i386,
 * aarch64, arm, one nobody has), and the arguments that decide (each ioctl
 * cmd of the tables and its neighbours, with and without high bits, each
 * socket type with flags, socketcall's calls, PR_SET_DUMPABLE 0 and 1).
 * The reference is the hand-typed programs' output, recorded
 * (filter_reference.h). The aarch64 programs, compiled on this machine, are
 * held to the generic table's numbers (generic_nr.c) and to what the filters
 * say they do. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/net.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "bpf_run.h"
#include "notify/denial_wire.h"
#include "filter_reference.h"
#include "notify/filters.h"
#include "generic_nr.h"
#include "notify/supervisor_wire.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER 0x5441U
#endif

#if defined(CF_HAVE_FILTER_REFERENCE)

/* ---- the reference: the programs the generated ones replace ---- */

enum { REF_TTY = 4 };

static const struct sock_filter *ref_program(int which, unsigned *len)
{
	if (which == REF_TTY) {
		*len = sizeof ref_tty / sizeof *ref_tty;
		return ref_tty;
	}
	*len = ref_ipc[which].len;
	return ref_ipc[which].f;
}

static const struct cf_bpf *new_program(int which)
{
	return which == REF_TTY ? &cf_tty_bpf_x86_64 : &cf_ipc_bpf_x86_64[which];
}

/* The arguments that decide, and some that decide nothing. */
static unsigned args_of(uint64_t (*out)[2], unsigned cap)
{
	static const uint32_t cmds[] = {
#define CMD(name, cmd, what) (uint32_t)(cmd),
		CF_META_IOCTLS(CMD)
#undef CMD
		(uint32_t)TIOCGPTPEER, (uint32_t)CF_DENIAL_IOCTL, TIOCSTI, TIOCLINUX, 0x5401 /* TCGETS */,
		(uint32_t)FS_IOC_GETFLAGS, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0xffffffffU,
	};
	/* a0: fds, domains, socketcall's calls, prctl's options */
	static const uint64_t a0s[] = {0, 1, 2, 3, 4, 5, 8, 9, 10, 0xffffffffULL, 0x1ffffffffULL,
				       0x100000004ULL, 0x100000001ULL, 0xfffffffffffffffeULL};
	/* a1 besides the cmds: socket types with flags, PR_SET_DUMPABLE's values */
	static const uint64_t a1s[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RAW,
				       SOCK_DGRAM | SOCK_CLOEXEC, SOCK_DGRAM | SOCK_NONBLOCK,
				       SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0x12, 0x100000000ULL,
				       0x100000002ULL};
	unsigned n = 0;
	for (size_t i = 0; i < sizeof a0s / sizeof *a0s; i++) {
		for (size_t j = 0; j < sizeof cmds / sizeof *cmds; j++)
			for (int d = -1; d <= 1; d++)
				for (int high = 0; high < 2; high++) {
					cr_assert(n < cap);
					out[n][0] = a0s[i];
					out[n][1] = (uint64_t)(uint32_t)(cmds[j] + (uint32_t)d) |
						    (high ? 1ULL << 32 : 0);
					n++;
				}
		for (size_t j = 0; j < sizeof a1s / sizeof *a1s; j++) {
			cr_assert(n < cap);
			out[n][0] = a0s[i];
			out[n][1] = a1s[j];
			n++;
		}
	}
	return n;
}

static void same_everywhere(int which)
{
	static uint64_t args[4096][2];
	unsigned nref, nargs = args_of(args, 4096);
	const struct sock_filter *ref = ref_program(which, &nref);
	const struct cf_bpf *b = new_program(which);
	cr_assert(b->len > 0);
	const uint32_t archs[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM, 0};
	const uint32_t tops[] = {0x40000000U, 0x3fffffffU, 0x7fffffffU, 0x80000000U, 0xffffffffU,
				 0xc0000000U | 42, 0x80000000U | 90, 0xc0000000U | 16};
	unsigned long compared = 0, differ = 0;
	for (size_t a = 0; a < sizeof archs / sizeof *archs; a++) {
		for (unsigned k = 0; k < 2048 + sizeof tops / sizeof *tops; k++) {
			uint32_t n = k < 1024 ? k : k < 2048 ? (k - 1024) | 0x40000000U : tops[k - 2048];
			for (unsigned j = 0; j < nargs; j++) {
				struct seccomp_data d = {.nr = (int)n, .arch = archs[a],
							 .args = {args[j][0], args[j][1], 7, 7, 7, 7}};
				uint32_t want = bpf_run(ref, nref, &d).ret, got = bpf_run(b->f, b->len, &d).ret;
				compared++;
				if (got != want && differ++ < 10)
					cr_log_error("program %d arch %#x nr %#x a0 %#llx a1 %#llx: %#x, was %#x",
						     which, archs[a], n, (unsigned long long)args[j][0],
						     (unsigned long long)args[j][1], got, want);
			}
		}
	}
	cr_log_info("program %d: %lu calls compared, %u instructions (was %u)", which, compared, b->len, nref);
	cr_expect_eq(differ, 0, "%lu of %lu calls answered otherwise than before (program %d)", differ,
		     compared, which);
}

Test(filter_gen, ipc_answers_every_call_as_before)
{
	same_everywhere(CF_IPC_BPF_INDEX(false, false));
}

Test(filter_gen, ipc_with_meta_left_to_mounts_answers_every_call_as_before)
{
	same_everywhere(CF_IPC_BPF_INDEX(true, false));
}

Test(filter_gen, ipc_with_dgram_answers_every_call_as_before)
{
	same_everywhere(CF_IPC_BPF_INDEX(false, true));
}

Test(filter_gen, ipc_with_meta_and_dgram_answers_every_call_as_before)
{
	same_everywhere(CF_IPC_BPF_INDEX(true, true));
}

Test(filter_gen, tty_answers_every_call_as_before)
{
	same_everywhere(REF_TTY);
}

/* The instructions the kernel's action cache run walks for the native
 * numbers at each install (filter_gen.c's front(): no more than the
 * hand-laid programs' walk; libseccomp's own layout walked 4755 instead of
 * 4345 in program 0, and 4188 instead of 3296 in the terminal filter), and
 * the path of two common calls, logged beside the reference's. */
Test(filter_gen, cache_run_walks_no_more_than_before)
{
	for (int which = 0; which <= REF_TTY; which++) {
		unsigned nref;
		const struct sock_filter *ref = ref_program(which, &nref);
		const struct cf_bpf *b = new_program(which);
		unsigned long walk = 0, walk_ref = 0;
		for (uint32_t n = 0; n < 512; n++) {
			walk += bpf_cache_walk(b->f, b->len, AUDIT_ARCH_X86_64, n);
			walk_ref += bpf_cache_walk(ref, nref, AUDIT_ARCH_X86_64, n);
		}
		struct seccomp_data rd = {.nr = 0, .arch = AUDIT_ARCH_X86_64};
		struct seccomp_data op = {.nr = 257, .arch = AUDIT_ARCH_X86_64};
		cr_log_info("program %d: cache run over native 0..511 %lu instructions (was %lu); "
			    "read %u (was %u), openat %u (was %u); %u instructions (was %u)",
			    which, walk, walk_ref, bpf_run(b->f, b->len, &rd).steps, bpf_run(ref, nref, &rd).steps,
			    bpf_run(b->f, b->len, &op).steps, bpf_run(ref, nref, &op).steps, b->len, nref);
		cr_expect_leq(walk, walk_ref, "program %d: the cache run walks %lu instructions, before %lu", which,
			      walk, walk_ref);
		/* i386: none of its numbers in the cache run (the load of the
		 * instruction pointer), as before. */
		for (uint32_t n = 0; n < 512; n++)
			cr_expect_eq(bpf_cache_walk(b->f, b->len, AUDIT_ARCH_I386, n),
				     bpf_cache_walk(ref, nref, AUDIT_ARCH_I386, n), "program %d, i386 %u", which, n);
	}
}

#endif

/* ---- aarch64, compiled here ---- */

static unsigned gnr(const char *name)
{
	for (const struct generic_nr *g = generic_nr; g->name; g++)
		if (!strcmp(g->name, name))
			return g->nr;
	cr_assert_fail("no generic number for %s", name);
	return 0;
}

static uint32_t answer(const struct cf_bpf *b, uint32_t arch, uint32_t nr, uint64_t a0, uint64_t a1)
{
	struct seccomp_data d = {.nr = (int)nr, .arch = arch, .args = {a0, a1}};
	return bpf_run(b->f, b->len, &d).ret;
}

static const char *const trapped[] = {"connect", "bind", "fchmod", "fchmodat", "fchmodat2", "fchown",
				      "fchownat", "utimensat", "setxattr", "lsetxattr", "fsetxattr",
				      "removexattr", "lremovexattr", "fremovexattr", "setxattrat",
				      "removexattrat"};

/* What the IPC filter answers natively for NR with A0, A1 (ipc.c, the
 * generic table). */
static uint32_t aarch64_ipc_expected(bool mounts, bool dgram, uint32_t nr, uint64_t a0, uint64_t a1)
{
	const uint32_t trap = SECCOMP_RET_USER_NOTIF, allow = SECCOMP_RET_ALLOW,
		       eperm = SECCOMP_RET_ERRNO | EPERM;
	if (nr == gnr("ioctl")) {
		uint32_t cmd = (uint32_t)a1;
#define IOC(name, c, what)                                                                         \
	if (cmd == (uint32_t)(c))                                                                  \
		return mounts && (!strcmp(#name, "FS_IOC_SETFLAGS") || !strcmp(#name, "FS_IOC32_SETFLAGS") || \
				  !strcmp(#name, "FS_IOC_FSSETXATTR"))                             \
			       ? allow                                                             \
			       : !strcmp(#what, "TRAP") ? trap : eperm;
		CF_META_IOCTLS(IOC)
#undef IOC
		if (cmd == TIOCGPTPEER || (cmd == (uint32_t)CF_DENIAL_IOCTL && (uint32_t)a0 == CF_DENIAL_FD))
			return trap;
		return allow;
	}
	if (nr == gnr("io_uring_setup") || nr == gnr("file_setattr"))
		return SECCOMP_RET_ERRNO | ENOSYS;
	if (nr == gnr("prctl"))
		return (uint32_t)a0 == PR_SET_DUMPABLE && (uint32_t)a1 == 0 ? SECCOMP_RET_ERRNO : allow;
	if (dgram && (nr == gnr("socket") || nr == gnr("socketpair")))
		return (uint32_t)a0 == AF_UNIX && (a1 & 0xf) == SOCK_DGRAM ? trap : allow;
	if (nr == gnr("mount_setattr"))
		return mounts ? eperm : allow;
	for (size_t i = 0; i < sizeof trapped / sizeof *trapped; i++)
		if (nr == gnr(trapped[i]))
			return !mounts || i < 2 ? trap : allow;
	return allow;
}

Test(filter_gen, aarch64_ipc_by_the_generic_numbers)
{
	static const uint64_t a0s[] = {0, 1, 4, 5, 0xffffffffULL, 0x100000001ULL};
	static const uint64_t a1s[] = {0, 1, SOCK_DGRAM, SOCK_DGRAM | SOCK_CLOEXEC, SOCK_STREAM, TIOCGPTPEER,
				       CF_DENIAL_IOCTL, 0x5401, 0x40086602, 0x140086602ULL, 0x800c6613,
				       0x40046602, 0x401c5820, 0x100000000ULL};
	for (int i = 0; i < 4; i++) {
		const struct cf_bpf *b = &cf_ipc_bpf_aarch64[i];
		bool mounts = i & 2, dgram = i & 1;
		unsigned long differ = 0;
		for (uint32_t nr = 0; nr < 1024; nr++)
			for (size_t x = 0; x < sizeof a0s / sizeof *a0s; x++)
				for (size_t y = 0; y < sizeof a1s / sizeof *a1s; y++) {
					uint32_t want = aarch64_ipc_expected(mounts, dgram, nr, a0s[x], a1s[y]);
					uint32_t got = answer(b, AUDIT_ARCH_AARCH64, nr, a0s[x], a1s[y]);
					if (got != want && differ++ < 10)
						cr_log_error("aarch64 %d: nr %u a0 %#llx a1 %#llx: %#x, want %#x", i, nr,
							     (unsigned long long)a0s[x], (unsigned long long)a1s[y],
							     got, want);
				}
		cr_expect_eq(differ, 0, "aarch64 program %d: %lu answers wrong", i, differ);
		/* Another arch (32-bit arm too): killed. */
		const uint32_t others[] = {AUDIT_ARCH_ARM, AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, 0};
		for (size_t a = 0; a < sizeof others / sizeof *others; a++)
			cr_expect_eq(answer(b, others[a], gnr("read") , 0, 0), SECCOMP_RET_KILL_PROCESS);
	}
}

/* The terminal filter of a machine with the generic table, natively. */
static void tty_by_the_generic_numbers(const struct cf_bpf *b, uint32_t arch)
{
	const uint32_t eperm = SECCOMP_RET_ERRNO | EPERM, allow = SECCOMP_RET_ALLOW;
	for (uint32_t nr = 0; nr < 1024; nr++) {
		bool handle = nr == gnr("open_by_handle_at"), ioc = nr == gnr("ioctl");
		cr_expect_eq(answer(b, arch, nr, 0, TIOCSTI), handle || ioc ? eperm : allow, "%u", nr);
		cr_expect_eq(answer(b, arch, nr, 0, TIOCLINUX | 0x100000000ULL), handle || ioc ? eperm : allow,
			     "%u", nr);
		cr_expect_eq(answer(b, arch, nr, 0, 0x5401), handle ? eperm : allow, "%u", nr);
	}
	cr_expect_eq(answer(b, arch, 0x40000000U | gnr("ioctl"), 0, 0x5401), allow);
	cr_expect_eq(answer(b, arch, 0xffffffffU, 0, 0), allow);
}

Test(filter_gen, aarch64_tty_by_the_generic_numbers)
{
	const struct cf_bpf *b = &cf_tty_bpf_aarch64;
	const uint32_t eperm = SECCOMP_RET_ERRNO | EPERM, allow = SECCOMP_RET_ALLOW;
	tty_by_the_generic_numbers(b, AUDIT_ARCH_AARCH64);
	/* 32-bit arm (arch/arm/tools/syscall.tbl: ioctl 54, open_by_handle_at 371) */
	cr_expect_eq(answer(b, AUDIT_ARCH_ARM, 54, 0, TIOCSTI), eperm);
	cr_expect_eq(answer(b, AUDIT_ARCH_ARM, 54, 0, 0x5401), allow);
	cr_expect_eq(answer(b, AUDIT_ARCH_ARM, 371, 0, 0), eperm);
	cr_expect_eq(answer(b, AUDIT_ARCH_ARM, 3, 0, 0), allow);
	cr_expect_eq(answer(b, AUDIT_ARCH_X86_64, 3, 0, 0), SECCOMP_RET_KILL_PROCESS);
	cr_expect_eq(answer(b, 0, 3, 0, 0), SECCOMP_RET_KILL_PROCESS);
}

/* riscv64: the generic table too; riscv32's calls killed (libseccomp
 * 2.5.4 has no riscv32), as every other arch's. */
Test(filter_gen, riscv64_tty_by_the_generic_numbers)
{
	const struct cf_bpf *b = &cf_tty_bpf_riscv64;
	tty_by_the_generic_numbers(b, AUDIT_ARCH_RISCV64);
	const uint32_t others[] = {AUDIT_ARCH_RISCV32, AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64, 0};
	for (size_t a = 0; a < sizeof others / sizeof *others; a++)
		cr_expect_eq(answer(b, others[a], gnr("read"), 0, 0), SECCOMP_RET_KILL_PROCESS, "arch %#x",
			     others[a]);
}
