/* The seccomp filters, compiled by libseccomp at build time: this program
 * runs on the build machine (meson: native, a custom_target) and writes a C
 * file of struct sock_filter arrays (filters.h says which), so that neither
 * libseccomp nor a builder is in the shim or between fork and exec: a child
 * installs a prepared array with one seccomp() call.
 *
 * For each machine a program is made for (x86_64, with its x32 and i386
 * tables; aarch64, compiled here for the cross check of
 * tests/enforce/test_filter_gen.c; riscv64's terminal filter), libseccomp is
 * told the calls by name;
 * it knows each table's numbers. What it can not do, the few lines of
 * splice() below do, each for a reason said there:
 *  - calls newer than libseccomp 2.5.4 (hand_nr) on a table other than the
 *    build machine's own: libseccomp takes a number only through the name
 *    the build machine's table gives it;
 *  - the load of the instruction pointer at the start of a 32-bit table's
 *    part, that keeps those calls out of the kernel's action cache run.
 * Then filter_layout.c lays each program out again for what an install
 * costs, with the same answers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "denial_wire.h"
#include "filter_layout.h"
#include "supervisor_wire.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER 0x5441U /* _IO('T', 0x41) */
#endif
#define X32_BIT 0x40000000U /* __X32_SYSCALL_BIT */
#define PR_SET_DUMPABLE_ 4

/* Calls that neither libseccomp 2.5.4 (Debian 12) nor Debian 12's kernel
 * headers (6.1) know: their number, the same in every table (x86's
 * syscall_64.tbl and syscall_32.tbl, asm-generic/unistd.h; x32 with its bit).
 * Asked of libseccomp by name first: a newer one that knows them takes over. */
static const struct {
	const char *name;
	int nr;
} hand_nr[] = {
	{"setxattrat", 463},    /* Linux 6.13 */
	{"removexattrat", 466}, /* Linux 6.13 */
	{"file_setattr", 469},  /* Linux 6.17 */
};

_Noreturn void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("filter_gen: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* ---- a program being made: libseccomp's contexts, and what it can not take ---- */

/* A call libseccomp could not put on a table, with no argument to check:
 * spliced in (splice()). */
struct extra {
	uint32_t nr, action;
};

struct table {
	uint32_t arch; /* SCMP_ARCH_* */
	scmp_filter_ctx ctx;
	struct extra extra[16];
	unsigned n_extra;
};

/* libseccomp's numbers of a call a table lacks (__PNR_*, seccomp-syscalls.h)
 * are -10000 and below; from -101 down are i386's calls through socketcall,
 * which its x86 code adds both ways: socket(2) and socketcall(SYS_SOCKET). */
#define PNR_ABSENT (-10000)

static int hand_number(const char *name)
{
	for (size_t i = 0; i < sizeof hand_nr / sizeof *hand_nr; i++)
		if (!strcmp(hand_nr[i].name, name))
			return hand_nr[i].nr;
	return -1;
}

static scmp_filter_ctx context(uint32_t arch)
{
	scmp_filter_ctx c = seccomp_init(SCMP_ACT_ALLOW);
	if (!c)
		die("seccomp_init failed");
	int rc = 0;
	if (arch != seccomp_arch_native())
		rc = seccomp_arch_add(c, arch);
	if (!rc && arch != seccomp_arch_native())
		rc = seccomp_arch_remove(c, SCMP_ARCH_NATIVE);
	if (!rc)
		rc = seccomp_attr_set(c, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (!rc)
		rc = seccomp_attr_set(c, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc)
		die("a context for arch %#x: %s", arch, strerror(-rc));
	return c;
}

static void add_nr(struct table *t, uint32_t action, int nr, unsigned argc, const struct scmp_arg_cmp *args)
{
	int rc = seccomp_rule_add_array(t->ctx, action, nr, argc, args);
	if (rc)
		die("rule for %#x on arch %#x: %s", (unsigned)nr, t->arch, strerror(-rc));
}

/* NAME's rule on table T: by name when libseccomp knows it there, left out
 * when the table has no such call, spliced in when only HAND_NR knows it. */
static void add(struct table *t, uint32_t action, const char *name, unsigned argc,
		const struct scmp_arg_cmp *args)
{
	int nr = seccomp_syscall_resolve_name_arch(t->arch, name);
	if (nr == __NR_SCMP_ERROR) {
		if ((nr = hand_number(name)) < 0)
			die("libseccomp does not know %s, nor does hand_nr", name);
		if (t->arch == seccomp_arch_native()) {
			add_nr(t, action, nr, argc, args);
			return;
		}
		if (argc || t->n_extra == sizeof t->extra / sizeof *t->extra)
			die("%s: not a call splice() can take", name);
		t->extra[t->n_extra++] = (struct extra){(uint32_t)nr, action};
		return;
	}
	if (nr <= PNR_ABSENT)
		return; /* not a call of this table */
	/* libseccomp takes the build machine's number and finds the table's by its name. */
	add_nr(t, action, seccomp_syscall_resolve_name(name), argc, args);
}

/* x32's rules sit in the x86_64 context by number (x32's own number of a
 * call, or the 64-bit one with the x32 bit): the x32 part and the 64-bit one
 * are one block of the program, and x32's table does not name its 64-bit
 * entries (ioctl 16 | X32_BIT) that older kernels let x32 reach. */
static void add_x32(struct table *t, uint32_t action, const char *name, unsigned argc,
		    const struct scmp_arg_cmp *args)
{
	int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);
	if (nr == __NR_SCMP_ERROR)
		nr = hand_number(name);
	if (nr <= PNR_ABSENT)
		return; /* not a call of the 64-bit table (i386's chown32) */
	if (nr < 0)
		die("x32: %s unknown", name);
	add_nr(t, action, (int)((uint32_t)nr | X32_BIT), argc, args);
	int own = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X32, name);
	if (own >= 0 && (uint32_t)own != ((uint32_t)nr | X32_BIT))
		add_nr(t, action, own, argc, args);
}

/* ---- the BPF as libseccomp wrote it, and the splice ---- */


static void export(scmp_filter_ctx c, struct prog *p)
{
	int fd = memfd_create("filter_gen", 0);
	if (fd < 0)
		die("memfd_create: %s", strerror(errno));
	int rc = seccomp_export_bpf(c, fd);
	if (rc)
		die("seccomp_export_bpf: %s", strerror(-rc));
	off_t len = lseek(fd, 0, SEEK_END);
	if (len <= 0 || len % sizeof *p->f || (size_t)len > sizeof p->f)
		die("a program of %lld bytes", (long long)len);
	if (pread(fd, p->f, (size_t)len, 0) != len)
		die("pread: %s", strerror(errno));
	p->n = (unsigned)(len / sizeof *p->f);
	close(fd);
}

static bool is_jump(const struct sock_filter *i)
{
	return BPF_CLASS(i->code) == BPF_JMP;
}

/* Put the N instructions of INS before instruction AT. A jump over AT (to
 * an instruction after it) is lengthened; a jump to AT lands on the first
 * inserted one. */
static void insert(struct prog *p, unsigned at, const struct sock_filter *ins, unsigned n)
{
	if (p->n + n > PROG_MAX)
		die("a program over %u instructions", PROG_MAX);
	for (unsigned pc = 0; pc < at; pc++) {
		struct sock_filter *i = &p->f[pc];
		if (!is_jump(i))
			continue;
		if (BPF_OP(i->code) == BPF_JA) {
			if (pc + 1 + i->k > at)
				i->k += n;
			continue;
		}
		unsigned jt = i->jt, jf = i->jf;
		if (pc + 1 + jt > at)
			jt += n;
		if (pc + 1 + jf > at)
			jf += n;
		if (jt > 255 || jf > 255)
			die("a jump over 255 after the splice");
		i->jt = (uint8_t)jt, i->jf = (uint8_t)jf;
	}
	memmove(&p->f[at + n], &p->f[at], (p->n - at) * sizeof *p->f);
	memcpy(&p->f[at], ins, n * sizeof *ins);
	p->n += n;
}

/* Where the part of AUDIT ARCH starts: its "jeq arch" test, A the arch. */
static unsigned arch_test(const struct prog *p, uint32_t audit_arch)
{
	for (unsigned pc = 1; pc < p->n; pc++)
		if (p->f[pc].code == (BPF_JMP | BPF_JEQ | BPF_K) && p->f[pc].k == audit_arch)
			return pc;
	die("no part for arch %#x", audit_arch);
}

/* Into the part of the table of AUDIT_ARCH: when UNCACHED, first a load of
 * the instruction pointer (the kernel's action cache run stops at a load of
 * anything but the number and the arch, so that none of a 32-bit table's
 * numbers is emulated at the install: kernel/seccomp.c,
 * seccomp_is_const_allow, and the comment in ipc.c); then the EXTRA calls
 * with their answers, and on to libseccomp's comparisons. On the native
 * table (no load there) one test, of the lowest extra number, is all the
 * other calls pay. */
static void splice(struct prog *p, uint32_t audit_arch, const struct table *t, bool uncached)
{
	struct sock_filter s[64];
	const struct extra *e[16];
	unsigned n = 0, ne = 0;
	uint32_t lowest = UINT32_MAX;
	for (unsigned i = 0; i < t->n_extra; i++)
		if (t->extra[i].action != SCMP_ACT_ALLOW) {
			e[ne++] = &t->extra[i];
			if (t->extra[i].nr < lowest)
				lowest = t->extra[i].nr;
		}
	if (!uncached && !ne)
		return;
	unsigned at = arch_test(p, audit_arch);
	const struct sock_filter load_nr = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	if (p->f[at].jt != 0 || at + 1 >= p->n || memcmp(&p->f[at + 1], &load_nr, sizeof load_nr))
		die("arch %#x: its part does not start with its number's load", audit_arch);
	if (uncached) {
		at++; /* before libseccomp's load of the number */
		s[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, instruction_pointer));
		if (ne)
			s[n++] = load_nr;
	} else {
		at += 2; /* after it */
		s[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, lowest, 0, (uint8_t)(2 * ne));
	}
	/* ne tests, then ne returns: a test falls through to the next, the
	 * last one past the returns. */
	for (unsigned i = 0; i < ne; i++)
		s[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, e[i]->nr, (uint8_t)(ne - 1),
						      i + 1 == ne ? (uint8_t)ne : 0);
	for (unsigned i = 0; i < ne; i++)
		s[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, e[i]->action);
	insert(p, at, s, n);
}

/* libseccomp's SCMP_ACT_* are the kernel's SECCOMP_RET_* values. */
_Static_assert(SCMP_ACT_NOTIFY == SECCOMP_RET_USER_NOTIF, "notify");
_Static_assert(SCMP_ACT_ALLOW == SECCOMP_RET_ALLOW, "allow");
#define DENY SCMP_ACT_ERRNO(EPERM)
#define NOSYS SCMP_ACT_ERRNO(ENOSYS)
#define FAKE_OK SCMP_ACT_ERRNO(0)
#define TRAP SCMP_ACT_NOTIFY
#define ALLOW SCMP_ACT_ALLOW

/* Only the low word of an argument decides, as the kernel sees an int or an
 * unsigned int: an ioctl's cmd 0x100005412 is TIOCSTI. */
#define LOW_EQ(arg, v) SCMP_CMP((arg), SCMP_CMP_MASKED_EQ, 0xffffffffULL, (uint64_t)(uint32_t)(v))

/* ---- the IPC filter (ipc.c) ----
 * The calls that reach the kernel objects the supervisor judges: sockets'
 * bind and connect, and every call that changes an inode's metadata. */
static const char *const ipc_calls[] = {
	"connect", "bind", "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown",
	"fchownat", "utime", "utimes", "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr",
	"removexattr", "lremovexattr", "fremovexattr", "setxattrat", "removexattrat",
	/* i386's own: 32-bit ids and times */
	"chown32", "fchown32", "lchown32", "utimensat_time64",
};

/* io_uring_setup: a ring reaches connect, setxattr and the rest without any
 * system call the filter sees; file_setattr (Linux 6.17): inode flags by
 * path. ENOSYS natively (libuv, liburing users and Bun fall back to plain
 * calls; tools to FS_IOC_FSSETXATTR, which is trapped), EPERM elsewhere. */
static const char *const ipc_nosys[] = {"io_uring_setup", "file_setattr"};

static bool is_socket_call(const char *name)
{
	return !strcmp(name, "connect") || !strcmp(name, "bind");
}

static uint32_t ioctl_native(const char *what, bool meta_by_mounts, const char *name)
{
	if (meta_by_mounts && (!strcmp(name, "FS_IOC_SETFLAGS") || !strcmp(name, "FS_IOC32_SETFLAGS") ||
			       !strcmp(name, "FS_IOC_FSSETXATTR")))
		return ALLOW;
	return !strcmp(what, "TRAP") ? TRAP : DENY;
}

static void ipc_native(struct table *t, bool meta_by_mounts, bool dgram)
{
	for (size_t i = 0; i < sizeof ipc_nosys / sizeof *ipc_nosys; i++)
		add(t, NOSYS, ipc_nosys[i], 0, NULL);
	/* prctl(PR_SET_DUMPABLE, 0): said to succeed and not done. An
	 * undumpable process (ssh, gpg) can not have its descriptors taken by
	 * the supervisor (pidfd_getfd is a ptrace-attach check), so every call
	 * it makes that goes to the supervisor would fail. */
	add(t, FAKE_OK, "prctl", 2, (struct scmp_arg_cmp[]){LOW_EQ(0, PR_SET_DUMPABLE_), LOW_EQ(1, 0)});
	/* The metadata ioctls (CF_META_IOCTLS), a new pty's slave (opened by
	 * the supervisor), and a denial's report (sup_denied.h). */
#define IOC(name, cmd, what)                                                                     \
	if (ioctl_native(#what, meta_by_mounts, #name) != ALLOW)                                 \
		add(t, ioctl_native(#what, meta_by_mounts, #name), "ioctl", 1,                   \
		    (struct scmp_arg_cmp[]){LOW_EQ(1, cmd)});
	CF_META_IOCTLS(IOC)
#undef IOC
	add(t, TRAP, "ioctl", 1, (struct scmp_arg_cmp[]){LOW_EQ(1, TIOCGPTPEER)});
	add(t, TRAP, "ioctl", 2, (struct scmp_arg_cmp[]){LOW_EQ(0, CF_DENIAL_FD), LOW_EQ(1, CF_DENIAL_IOCTL)});
	/* Before Landlock ABI 6, a Unix datagram socket (any flags) is made by
	 * the supervisor (sup_dgram.h). */
	if (dgram) {
		add(t, TRAP, "socket", 2,
		    (struct scmp_arg_cmp[]){LOW_EQ(0, AF_UNIX), SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM)});
		add(t, TRAP, "socketpair", 2,
		    (struct scmp_arg_cmp[]){LOW_EQ(0, AF_UNIX), SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM)});
	}
	/* Landlock refuses mount and its kin to a sandboxed process, not
	 * mount_setattr: in the fenced tree's mount namespace, root could
	 * clear MOUNT_ATTR_RDONLY. */
	if (meta_by_mounts)
		add(t, DENY, "mount_setattr", 0, NULL);
	/* With META_BY_MOUNTS the read-only mounts refuse a metadata change
	 * outside the writable locations, and inside them it is allowed anyway:
	 * those calls go to the kernel. The sockets stay trapped. */
	for (size_t i = 0; i < sizeof ipc_calls / sizeof *ipc_calls; i++)
		if (!meta_by_mounts || is_socket_call(ipc_calls[i]))
			add(t, TRAP, ipc_calls[i], 0, NULL);
}

/* The other tables reach the same objects with other numbers and argument
 * layouts: rather than teach the supervisor those, the same calls fail with
 * EPERM. On i386 libseccomp adds each socket call's socketcall(2) form, the
 * call's number in its first argument (SYS_BIND ...) and nothing else
 * checked: the domain of socket() is in memory there. */
typedef void add_fn(struct table *, uint32_t, const char *, unsigned, const struct scmp_arg_cmp *);

static void ipc_refused(struct table *t, add_fn *to, bool meta_by_mounts, bool dgram)
{
#define IOC(name, cmd, what) to(t, DENY, "ioctl", 1, (struct scmp_arg_cmp[]){LOW_EQ(1, cmd)});
	CF_META_IOCTLS(IOC)
#undef IOC
	if (dgram) { /* any Unix socket: these tables can bind and connect none */
		to(t, DENY, "socket", 1, (struct scmp_arg_cmp[]){LOW_EQ(0, AF_UNIX)});
		to(t, DENY, "socketpair", 1, (struct scmp_arg_cmp[]){LOW_EQ(0, AF_UNIX)});
	}
	if (meta_by_mounts)
		to(t, DENY, "mount_setattr", 0, NULL);
	for (size_t i = 0; i < sizeof ipc_calls / sizeof *ipc_calls; i++)
		to(t, DENY, ipc_calls[i], 0, NULL);
	for (size_t i = 0; i < sizeof ipc_nosys / sizeof *ipc_nosys; i++)
		to(t, DENY, ipc_nosys[i], 0, NULL);
}

/* ---- the terminal filter (ttyfilter.h, installed by ipc.c) ---- */

static void tty_rules(struct table *t, add_fn *to)
{
	to(t, DENY, "ioctl", 1, (struct scmp_arg_cmp[]){LOW_EQ(1, TIOCSTI)});
	to(t, DENY, "ioctl", 1, (struct scmp_arg_cmp[]){LOW_EQ(1, TIOCLINUX)});
	to(t, DENY, "open_by_handle_at", 0, NULL);
}

/* ---- the programs ---- */

static void merge(struct table *into, struct table *t)
{
	int rc = seccomp_merge(into->ctx, t->ctx);
	if (rc)
		die("seccomp_merge of arch %#x: %s", t->arch, strerror(-rc));
}

enum filter { F_IPC, F_TTY };

/* The 32-bit table a MACHINE also has, and its arch for the kernel; 0 for
 * none libseccomp 2.5.4 knows (riscv64's riscv32: killed, as an unknown arch). */
static uint32_t compat_of(uint32_t machine, uint32_t *audit)
{
	switch (machine) {
	case SCMP_ARCH_X86_64:
		*audit = AUDIT_ARCH_I386;
		return SCMP_ARCH_X86;
	case SCMP_ARCH_AARCH64:
		*audit = AUDIT_ARCH_ARM;
		return SCMP_ARCH_ARM;
	default:
		*audit = 0;
		return 0;
	}
}

static uint32_t audit_of(uint32_t machine)
{
	switch (machine) {
	case SCMP_ARCH_X86_64:
		return AUDIT_ARCH_X86_64;
	case SCMP_ARCH_AARCH64:
		return AUDIT_ARCH_AARCH64;
	case SCMP_ARCH_RISCV64:
		return AUDIT_ARCH_RISCV64;
	}
	die("arch %#x", machine);
}

/* One program of FILTER for MACHINE (SCMP_ARCH_X86_64, SCMP_ARCH_AARCH64,
 * SCMP_ARCH_RISCV64). The IPC filter kills every 32-bit call but i386's
 * (32-bit arm: untested, no machine here). */
static void make(struct prog *p, enum filter filter, uint32_t machine, bool meta_by_mounts, bool dgram)
{
	struct table native = {.arch = machine, .ctx = context(machine)};
	struct table x32 = {.arch = SCMP_ARCH_X32};
	uint32_t compat_audit;
	struct table compat = {.arch = compat_of(machine, &compat_audit)};
	bool has_compat = compat.arch && (filter == F_TTY || machine == SCMP_ARCH_X86_64);
	if (machine == SCMP_ARCH_X86_64 && seccomp_arch_native() != SCMP_ARCH_X86_64)
		die("x32's rules are numbers: build on x86_64");
	if (filter == F_IPC)
		ipc_native(&native, meta_by_mounts, dgram);
	else
		tty_rules(&native, add);
	if (machine == SCMP_ARCH_X86_64) {
		if (filter == F_IPC)
			ipc_refused(&native, add_x32, meta_by_mounts, dgram);
		else
			tty_rules(&native, add_x32);
		x32.ctx = context(SCMP_ARCH_X32); /* no rules: its part is the native one */
		merge(&native, &x32);
	}
	if (has_compat) {
		compat.ctx = context(compat.arch);
		if (filter == F_IPC)
			ipc_refused(&compat, add, meta_by_mounts, dgram);
		else
			tty_rules(&compat, add);
		merge(&native, &compat);
	}
	export(native.ctx, p);
	seccomp_release(native.ctx);
	if (native.arch != seccomp_arch_native())
		splice(p, audit_of(machine), &native, false);
	if (has_compat)
		splice(p, compat_audit, &compat, true);
	filter_layout(p, audit_of(machine), has_compat ? compat_audit : 0);
}

static void emit(FILE *out, const char *name, const struct prog *p)
{
	fprintf(out, "static const struct sock_filter %s[%u] = {\n", name, p->n);
	for (unsigned i = 0; i < p->n; i++)
		fprintf(out, "\t{%#06x, %u, %u, %#x},\n", p->f[i].code, p->f[i].jt, p->f[i].jf, p->f[i].k);
	fprintf(out, "};\n");
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: filter_gen OUT.c");
	FILE *out = fopen(argv[1], "w");
	if (!out)
		die("%s: %s", argv[1], strerror(errno));
	const struct scmp_version *v = seccomp_version();
	fprintf(out, "/* Written by enforce/linux/notify/filter_gen.c with libseccomp %u.%u.%u: do not edit. */\n",
		v->major, v->minor, v->micro);
	fprintf(out, "#include \"notify/filters.h\"\n\n#include <linux/filter.h>\n\n");
	static const struct {
		uint32_t machine;
		const char *name;
		bool ipc;
	} machines[] = {
		{SCMP_ARCH_X86_64, "x86_64", true},
		{SCMP_ARCH_AARCH64, "aarch64", true},
		{SCMP_ARCH_RISCV64, "riscv64", false},
	};
	for (size_t m = 0; m < sizeof machines / sizeof *machines; m++) {
		static struct prog p;
		char name[64];
		const char *mn = machines[m].name;
		if (machines[m].machine == SCMP_ARCH_X86_64 && seccomp_arch_native() != SCMP_ARCH_X86_64) {
			/* x32's rules are numbers libseccomp takes on the build
			 * machine's table only: none here (cf_ipc_filter and
			 * cf_ttyfilter_install fail closed on such a build). */
			fprintf(out, "const struct cf_bpf cf_ipc_bpf_%s[4] = {{0, 0}};\n", mn);
			fprintf(out, "const struct cf_bpf cf_tty_bpf_%s = {0, 0};\n\n", mn);
			continue;
		}
		for (int i = 0; i < 4 && machines[m].ipc; i++) {
			make(&p, F_IPC, machines[m].machine, i & 2, i & 1);
			snprintf(name, sizeof name, "ipc_%s_%d", mn, i);
			emit(out, name, &p);
		}
		if (machines[m].ipc) {
			fprintf(out, "const struct cf_bpf cf_ipc_bpf_%s[4] = {\n", mn);
			for (int i = 0; i < 4; i++)
				fprintf(out, "\t{ipc_%s_%d, sizeof ipc_%s_%d / sizeof *ipc_%s_%d},\n", mn, i, mn, i, mn, i);
			fprintf(out, "};\n\n");
		}
		make(&p, F_TTY, machines[m].machine, false, false);
		snprintf(name, sizeof name, "tty_%s", mn);
		emit(out, name, &p);
		fprintf(out, "const struct cf_bpf cf_tty_bpf_%s = {tty_%s, sizeof tty_%s / sizeof *tty_%s};\n\n", mn,
			mn, mn, mn);
	}
	if (fclose(out))
		die("%s: %s", argv[1], strerror(errno));
	return 0;
}
