/* Classic BPF for seccomp filters written as tables (ttyfilter.c, ipc.c):
 * each instruction sits at the index an enum names, and jumps are written
 * with the indexes of their targets, not relative offsets. */
#ifndef CF_BPF_H
#define CF_BPF_H

#include <linux/filter.h>
#include <stddef.h>

#define LOAD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define IF_EQ(at, k, yes, no) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (yes) - (at) - 1, (no) - (at) - 1)
#define IF_GE(at, k, yes, no) \
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (k), (yes) - (at) - 1, (no) - (at) - 1)

#endif
