/* The layout of a program libseccomp wrote, for the kernel's install: a
 * part of filter_gen, the build program (filter_gen.c), never of the shim
 * or the command. */
#ifndef CF_FILTER_LAYOUT_H
#define CF_FILTER_LAYOUT_H

#include <linux/filter.h>
#include <stdint.h>

#define PROG_MAX 512

struct prog {
	struct sock_filter f[PROG_MAX];
	unsigned n;
};

/* filter_gen: FMT's message, and exit 1 (the build stops). */
_Noreturn void die(const char *fmt, ...);

/* P again, answering every call as it did, laid out for what an install
 * costs: the tests of the call number as one search tree per arch, walked
 * by the kernel's action cache run for each number of its tables; of P only
 * the parts that read an argument; then what is left made shorter (the
 * kernel compiles every instruction at each install). NATIVE and COMPAT
 * are the audit arches of P's parts (COMPAT 0: none); P names no other. */
void filter_layout(struct prog *p, uint32_t native, uint32_t compat);

#endif
