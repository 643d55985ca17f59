/* Classic BPF as seccomp runs it, for the tests that hold a filter to its
 * answers (test_ipc_filter.c, test_filter_gen.c): every instruction seccomp
 * accepts that the programs use; anything else, a load outside struct
 * seccomp_data, a jump out of the program or a run off its end fails the
 * test. Include after <criterion/criterion.h>. */
#ifndef CF_TEST_BPF_RUN_H
#define CF_TEST_BPF_RUN_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct verdict {
	uint32_t ret;
	unsigned steps; /* instructions run to the answer */
};

static inline struct verdict bpf_run(const struct sock_filter *f, unsigned len, const struct seccomp_data *d)
{
	uint32_t a = 0;
	unsigned steps = 0;
	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &f[pc];
		unsigned off = 0;
		steps++;
		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			cr_assert(i->k % 4 == 0 && i->k + 4 <= sizeof *d, "a load at %u from %u", pc, i->k);
			memcpy(&a, (const char *)d + i->k, 4);
			break;
		case BPF_JMP | BPF_JA:
			off = i->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			off = a == i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			off = a >= i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			off = a > i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			off = a & i->k ? i->jt : i->jf;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= i->k;
			break;
		case BPF_RET | BPF_K:
			return (struct verdict){i->k, steps};
		default:
			cr_assert_fail("instruction %#x at %u", i->code, pc);
		}
		cr_assert(pc + 1 + off < len, "a jump out of the program at %u", pc);
		pc += off;
	}
	cr_assert_fail("the program runs off its end");
	return (struct verdict){0, 0};
}

/* What the kernel's action cache run takes for NR of ARCH
 * (kernel/seccomp.c, seccomp_is_const_allow): the instructions walked until
 * an answer or a load of anything but the number or the arch; *CACHED
 * whether the call is then cached (the answer is to allow it). */
static inline unsigned bpf_cache_run(const struct sock_filter *f, unsigned len, uint32_t arch, uint32_t nr,
				     bool *cached)
{
	uint32_t a = 0;
	unsigned steps = 0;
	*cached = false;
	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &f[pc];
		steps++;
		if (i->code == (BPF_LD | BPF_W | BPF_ABS)) {
			if (i->k == offsetof(struct seccomp_data, nr))
				a = nr;
			else if (i->k == offsetof(struct seccomp_data, arch))
				a = arch;
			else
				return steps;
		} else if (i->code == (BPF_JMP | BPF_JA)) {
			pc += i->k;
		} else if (i->code == (BPF_JMP | BPF_JEQ | BPF_K)) {
			pc += a == i->k ? i->jt : i->jf;
		} else if (i->code == (BPF_JMP | BPF_JGE | BPF_K)) {
			pc += a >= i->k ? i->jt : i->jf;
		} else if (i->code == (BPF_JMP | BPF_JGT | BPF_K)) {
			pc += a > i->k ? i->jt : i->jf;
		} else if (i->code == (BPF_JMP | BPF_JSET | BPF_K)) {
			pc += a & i->k ? i->jt : i->jf;
		} else if (i->code == (BPF_ALU | BPF_AND | BPF_K)) {
			a &= i->k;
		} else {
			*cached = i->code == (BPF_RET | BPF_K) && i->k == SECCOMP_RET_ALLOW;
			return steps; /* a return, or what the run gives up on */
		}
	}
	return steps;
}

static inline unsigned bpf_cache_walk(const struct sock_filter *f, unsigned len, uint32_t arch, uint32_t nr)
{
	bool cached;
	return bpf_cache_run(f, len, arch, nr, &cached);
}

#endif
