/* The layout of a seccomp program libseccomp wrote (filter_layout.h), at
 * build time. What an install costs, measured (perf on cf-bench ipcfilter):
 * the kernel compiles each instruction (do_jit, 43 % of it), and its action
 * cache run (kernel/seccomp.c, seccomp_is_const_allow) emulates the program
 * for every number of the machine's tables up to an answer or a load of an
 * argument. libseccomp's program walks its own order for that run (a tree
 * that tests up to four numbers a leaf, x32's numbers in the native part),
 * tests the high word of an argument masked with 0 (always 0: LOW_EQ),
 * and writes an answer once for each rule.
 *
 * So the tests of the number are laid out again from what libseccomp's
 * program P answers (the front: one search tree per arch, for that run),
 * P is kept only where the tree jumps into it (the parts that read an
 * argument), and what is left is made shorter (tidy: decided jumps, loads
 * nothing reads, jumps to jumps, answers written twice).
 *
 * Why the front answers as P does: for a call number and an arch, P runs
 * from its start to an answer (RET) or to the first load of anything else
 * (an argument, the instruction pointer) at some instruction E, having
 * read only the number and the arch. The tree's leaf for that number is
 * the same answer, or a jump to E: what P does from E on depends on
 * nothing its start left behind (a load writes A; P has no X and no
 * scratch memory, checked). P compares the number only with ==, > and >=,
 * so between two of its constants every number gets the same leaf, and
 * the tree needs the leaf of each constant only; it compares the arch
 * only with == against NATIVE and COMPAT (checked), so every other arch
 * gets one answer. tests/enforce/test_filter_gen.c holds the answers to
 * the hand-laid programs of before, over 32 million calls. */
#include "filter_layout.h"

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* An instruction whose jump targets are absolute: T taken, F not (a JA:
 * both its target), so that instructions can go without jumps being
 * counted again. */
struct ains {
	struct sock_filter i;
	unsigned t, f;
};

/* ---- the front ---- */

#define LEAVES 64
#define SEGS 512

enum leaf_kind { LEAF_RET, LEAF_INTO_P };

struct leaf {
	enum leaf_kind kind;
	uint32_t v; /* the answer, or E */
};

/* The numbers from LO to HI, all of one leaf; W: what they weigh in the
 * cache run, 1024 for each number it emulates (the tables' numbers are
 * below CACHE_NRS), 1 for the rest (x32's, numbers no table has), so that
 * those go deeper. */
struct seg {
	uint64_t lo, hi;
	unsigned leaf;
	uint64_t w;
};

#define CACHE_NRS 512
/* What one more test weighs: the kernel compiles it at every install. Put
 * by the model fitted to cf-bench ipcfilter, about 0.12 us a compiled
 * instruction against 2 ns an instruction the cache run walks: some 64
 * numbers' walk. */
#define NODE_COST (64 * 1024)

static uint64_t seg_weight(uint64_t lo, uint64_t hi)
{
	uint64_t in = lo < CACHE_NRS ? (hi < CACHE_NRS ? hi : CACHE_NRS - 1) - lo + 1 : 0;
	return in * 1024 + 1;
}

struct front {
	const struct prog *p;
	uint32_t native, compat;
	struct leaf leaf[LEAVES];
	unsigned n_leaf;
	struct seg seg[SEGS];
	unsigned n_seg;
	/* the best tree over segments i..j: its cost, and how (split at
	 * split[i][j] > i, or 0: a chain of jeq tests) */
	uint64_t cost[SEGS][SEGS];
	unsigned short split[SEGS][SEGS];
	/* the program laid out; until the leaves are placed, a jump's target
	 * may be TO_LEAF | a leaf */
	struct ains out[2 * PROG_MAX];
	unsigned n_out;
};

#define TO_LEAF 0x10000U

/* Where P goes for ARCH and NR, reading the number and the arch only. */
static struct leaf walk(const struct front *fr, uint32_t arch, uint32_t nr)
{
	const struct prog *p = fr->p;
	uint32_t a = 0;
	bool a_is_arch = false;
	for (unsigned pc = 0; pc < p->n; pc++) {
		const struct sock_filter *i = &p->f[pc];
		uint32_t off = 0;
		if (a_is_arch && BPF_CLASS(i->code) == BPF_JMP && BPF_OP(i->code) != BPF_JA &&
		    (i->code != (BPF_JMP | BPF_JEQ | BPF_K) || (i->k != fr->native && i->k != fr->compat)))
			die("layout: instruction %#x at %u tests the arch against %#x", i->code, pc, i->k);
		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			a_is_arch = i->k == offsetof(struct seccomp_data, arch);
			if (i->k == offsetof(struct seccomp_data, nr))
				a = nr;
			else if (a_is_arch)
				a = arch;
			else
				return (struct leaf){LEAF_INTO_P, pc};
			break;
		case BPF_RET | BPF_K:
			return (struct leaf){LEAF_RET, i->k};
		case BPF_JMP | BPF_JA:
			off = i->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			off = a == i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			off = a > i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			off = a >= i->k ? i->jt : i->jf;
			break;
		default: /* a bit test of the number: numbers between constants would differ */
			die("layout: instruction %#x at %u before any argument's load", i->code, pc);
		}
		pc += off;
	}
	die("layout: a program that runs off its end");
}

static unsigned leaf_id(struct front *fr, struct leaf l)
{
	for (unsigned i = 0; i < fr->n_leaf; i++)
		if (fr->leaf[i].kind == l.kind && fr->leaf[i].v == l.v)
			return i;
	if (fr->n_leaf == LEAVES)
		die("layout: over %u answers", LEAVES);
	fr->leaf[fr->n_leaf] = l;
	return fr->n_leaf++;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The segments of ARCH: every number P can tell apart from its neighbour
 * starts one. */
static void segments(struct front *fr, uint32_t arch)
{
	static uint64_t pt[2 * PROG_MAX + 1];
	unsigned n = 0;
	pt[n++] = 0;
	for (unsigned pc = 0; pc < fr->p->n; pc++) {
		const struct sock_filter *i = &fr->p->f[pc];
		if (i->code == (BPF_JMP | BPF_JEQ | BPF_K)) {
			pt[n++] = i->k;
			pt[n++] = (uint64_t)i->k + 1;
		} else if (i->code == (BPF_JMP | BPF_JGT | BPF_K)) {
			pt[n++] = (uint64_t)i->k + 1;
		} else if (i->code == (BPF_JMP | BPF_JGE | BPF_K)) {
			pt[n++] = i->k;
		}
	}
	qsort(pt, n, sizeof *pt, cmp_u64);
	fr->n_seg = 0;
	for (unsigned k = 0; k < n; k++) {
		if (pt[k] > UINT32_MAX || (k && pt[k] == pt[k - 1]))
			continue;
		unsigned l = leaf_id(fr, walk(fr, arch, (uint32_t)pt[k]));
		if (fr->n_seg && fr->seg[fr->n_seg - 1].leaf == l)
			continue;
		if (fr->n_seg == SEGS)
			die("layout: over %u segments", SEGS);
		if (fr->n_seg)
			fr->seg[fr->n_seg - 1].hi = pt[k] - 1;
		fr->seg[fr->n_seg++] = (struct seg){.lo = pt[k], .leaf = l};
	}
	fr->seg[fr->n_seg - 1].hi = UINT32_MAX;
	for (unsigned s = 0; s < fr->n_seg; s++)
		fr->seg[s].w = seg_weight(fr->seg[s].lo, fr->seg[s].hi);
}

/* Segments I..J as a chain of jeq tests: the leaf of their heaviest long
 * segment is the base, and each segment of another leaf must be one
 * number, tested in turn, the heaviest first. Its cost, or UINT64_MAX. */
static uint64_t chain(const struct front *fr, unsigned i, unsigned j, unsigned *base, unsigned *order,
		      unsigned *n_order)
{
	unsigned b = j + 1;
	for (unsigned s = i; s <= j; s++)
		if (fr->seg[s].lo != fr->seg[s].hi && (b > j || fr->seg[s].w > fr->seg[b].w))
			b = s;
	for (unsigned s = i; b > j && s <= j; s++)
		if (b > j || fr->seg[s].w > fr->seg[b].w)
			b = s;
	uint64_t wbase = 0, cost = 0;
	unsigned k = 0;
	for (unsigned s = i; s <= j; s++) {
		if (fr->seg[s].leaf == fr->seg[b].leaf) {
			wbase += fr->seg[s].w;
			continue;
		}
		if (fr->seg[s].lo != fr->seg[s].hi)
			return UINT64_MAX;
		unsigned at = k++; /* insertion by weight, heaviest first */
		while (at && fr->seg[order[at - 1]].w < fr->seg[s].w) {
			order[at] = order[at - 1];
			at--;
		}
		order[at] = s;
	}
	for (unsigned t = 0; t < k; t++)
		cost += (t + 1) * fr->seg[order[t]].w;
	*base = fr->seg[b].leaf;
	*n_order = k;
	return cost + k * wbase + k * NODE_COST;
}

static void plan(struct front *fr)
{
	static unsigned order[SEGS];
	unsigned n = fr->n_seg, base = 0, k = 0;
	for (unsigned len = 1; len <= n; len++)
		for (unsigned i = 0; i + len <= n; i++) {
			unsigned j = i + len - 1;
			uint64_t w = 0, best = chain(fr, i, j, &base, order, &k);
			unsigned how = 0;
			for (unsigned s = i; s <= j; s++)
				w += fr->seg[s].w;
			for (unsigned m = i + 1; m <= j; m++) {
				uint64_t c = w + NODE_COST + fr->cost[i][m - 1] + fr->cost[m][j];
				if (c < best)
					best = c, how = m;
			}
			fr->cost[i][j] = best;
			fr->split[i][j] = (unsigned short)how;
		}
}

static struct sock_filter test(uint16_t op, uint32_t k)
{
	return (struct sock_filter)BPF_JUMP(BPF_JMP | op | BPF_K, k, 0, 0);
}

static struct sock_filter load(uint32_t offset)
{
	return (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset);
}

static unsigned put(struct front *fr, struct sock_filter i, unsigned t, unsigned f)
{
	if (fr->n_out == sizeof fr->out / sizeof *fr->out)
		die("layout: over %zu instructions", sizeof fr->out / sizeof *fr->out);
	fr->out[fr->n_out] = (struct ains){i, t, f};
	return fr->n_out++;
}

/* The tree of segments I..J, first node first; where it starts (an
 * instruction, or TO_LEAF | the leaf when it is one). */
static unsigned tree(struct front *fr, unsigned i, unsigned j)
{
	static unsigned order[SEGS];
	if (i == j)
		return TO_LEAF | fr->seg[i].leaf;
	unsigned m = fr->split[i][j];
	if (m) {
		unsigned at = put(fr, test(BPF_JGE, (uint32_t)fr->seg[m].lo), 0, 0);
		fr->out[at].f = tree(fr, i, m - 1);
		fr->out[at].t = tree(fr, m, j);
		return at;
	}
	unsigned base = 0, k = 0;
	chain(fr, i, j, &base, order, &k);
	unsigned first = fr->n_out;
	for (unsigned t = 0; t < k; t++) {
		const struct seg *s = &fr->seg[order[t]];
		put(fr, test(BPF_JEQ, (uint32_t)s->lo), TO_LEAF | s->leaf,
		    t + 1 < k ? fr->n_out + 1 : TO_LEAF | base);
	}
	return first;
}

/* The tree for the number under ARCH, after the number's load unless it
 * is one leaf; where it starts. */
static unsigned arch_tree(struct front *fr, uint32_t arch)
{
	segments(fr, arch);
	if (fr->n_seg == 1)
		return TO_LEAF | fr->seg[0].leaf;
	plan(fr);
	unsigned at = put(fr, load(offsetof(struct seccomp_data, nr)), 0, 0);
	tree(fr, 0, fr->n_seg - 1);
	return at;
}

static bool reads_x_or_scratch(const struct sock_filter *i)
{
	switch (i->code) {
	case BPF_LD | BPF_W | BPF_ABS:
	case BPF_RET | BPF_K:
	case BPF_JMP | BPF_JA:
	case BPF_JMP | BPF_JEQ | BPF_K:
	case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_K:
	case BPF_JMP | BPF_JSET | BPF_K:
	case BPF_ALU | BPF_AND | BPF_K:
		return false;
	}
	return true;
}

static bool compares_with(const struct prog *p, uint32_t k)
{
	for (unsigned pc = 0; pc < p->n; pc++)
		if (p->f[pc].code == (BPF_JMP | BPF_JEQ | BPF_K) && p->f[pc].k == k)
			return true;
	return false;
}

/* ---- tidy ---- */

static bool is_cond(const struct sock_filter *i)
{
	return BPF_CLASS(i->code) == BPF_JMP && BPF_OP(i->code) != BPF_JA;
}

static bool is_ja(const struct sock_filter *i)
{
	return i->code == (BPF_JMP | BPF_JA);
}

static bool decided(const struct sock_filter *i, uint32_t a)
{
	switch (BPF_OP(i->code)) {
	case BPF_JEQ:
		return a == i->k;
	case BPF_JGT:
		return a > i->k;
	case BPF_JGE:
		return a >= i->k;
	default:
		return a & i->k;
	}
}

/* A's value where it is the same on every path (an AND with 0, the true
 * side of a jeq): jumps on it are decided. */
static bool fold(struct ains *a, unsigned n)
{
	static bool known[2 * PROG_MAX], seen[2 * PROG_MAX];
	static uint32_t val[2 * PROG_MAX];
	bool changed = false;
	memset(seen, 0, n * sizeof *seen);
	seen[0] = true, known[0] = false;
#define REACH(to, k, v)                                                                          \
	do {                                                                                     \
		unsigned to_ = (to);                                                             \
		if (!seen[to_])                                                                  \
			seen[to_] = true, known[to_] = (k), val[to_] = (v);                      \
		else if (known[to_] && (!(k) || val[to_] != (v)))                                \
			known[to_] = false;                                                      \
	} while (0)
	for (unsigned pc = 0; pc < n; pc++) {
		if (!seen[pc])
			continue;
		struct ains *x = &a[pc];
		bool k = known[pc];
		uint32_t v = val[pc];
		if (is_cond(&x->i) && k) {
			unsigned to = decided(&x->i, v) ? x->t : x->f;
			x->i = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0);
			x->t = x->f = to;
			changed = true;
		}
		switch (BPF_CLASS(x->i.code)) {
		case BPF_RET:
			break;
		case BPF_JMP:
			if (is_ja(&x->i)) {
				REACH(x->t, k, v);
			} else {
				bool eq = BPF_OP(x->i.code) == BPF_JEQ;
				REACH(x->t, k || eq, eq ? x->i.k : v);
				REACH(x->f, k, v);
			}
			break;
		case BPF_ALU: /* AND K */
			REACH(pc + 1, k || x->i.k == 0, v & x->i.k);
			break;
		default: /* a load */
			REACH(pc + 1, false, 0);
		}
	}
#undef REACH
	return changed;
}

/* A load or an AND whose A nothing reads before the next load: gone (a
 * jump to the next instruction). Not the instruction pointer's: splice()
 * puts it there for the cache run to stop at. */
static bool keeps(const struct sock_filter *i)
{
	return i->code == (BPF_LD | BPF_W | BPF_ABS) &&
	       (i->k & ~4U) == offsetof(struct seccomp_data, instruction_pointer);
}

static bool dead_writes(struct ains *a, unsigned n)
{
	static bool live[2 * PROG_MAX + 1]; /* A read on some path from here on */
	bool changed = false;
	live[n] = false;
	for (unsigned pc = n; pc-- > 0;) {
		struct ains *x = &a[pc];
		switch (BPF_CLASS(x->i.code)) {
		case BPF_RET:
			live[pc] = false;
			break;
		case BPF_JMP:
			live[pc] = !is_ja(&x->i) || live[x->t];
			break;
		default: /* LD, AND: write A */
			if (!live[pc + 1] && !keeps(&x->i)) {
				x->i = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0);
				x->t = x->f = pc + 1;
				changed = true;
				live[pc] = false;
			} else {
				live[pc] = BPF_CLASS(x->i.code) == BPF_ALU;
			}
		}
	}
	return changed;
}

/* Jumps to a JA go where it goes; a test whose two sides meet is a JA;
 * each answer written once, its last copy. */
static bool thread(struct ains *a, unsigned n)
{
	bool changed = false;
	for (unsigned pc = n; pc-- > 0;) {
		struct ains *x = &a[pc];
		if (BPF_CLASS(x->i.code) != BPF_JMP)
			continue;
		unsigned *tg[2] = {&x->t, &x->f};
		for (int s = 0; s < 2; s++) {
			while (is_ja(&a[*tg[s]].i) && a[*tg[s]].t != *tg[s])
				*tg[s] = a[*tg[s]].t, changed = true;
			for (unsigned r = n; r-- > *tg[s] + 1;)
				if (a[*tg[s]].i.code == (BPF_RET | BPF_K) && a[r].i.code == (BPF_RET | BPF_K) &&
				    a[r].i.k == a[*tg[s]].i.k) {
					*tg[s] = r, changed = true;
					break;
				}
		}
		if (is_cond(&x->i) && x->t == x->f) {
			x->i = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0);
			changed = true;
		}
	}
	return changed;
}

static void tidy(struct ains *a, unsigned n)
{
	for (int round = 0; round < 16; round++) {
		bool changed = fold(a, n);
		changed = dead_writes(a, n) || changed;
		changed = thread(a, n) || changed;
		if (!changed)
			return;
	}
	die("layout: no end after 16 rounds");
}

/* The instructions reached from the first, jumps relative again; a JA to
 * the next instruction is none. */
static void encode(struct prog *p, const struct ains *a, unsigned n)
{
	static bool kept[2 * PROG_MAX];
	static unsigned now[2 * PROG_MAX + 1];
	if (a[n - 1].i.code != (BPF_RET | BPF_K))
		die("layout: a program must end with an answer");
	memset(kept, 0, n * sizeof *kept);
	kept[0] = kept[n - 1] = true; /* the kernel wants a RET last */
	for (unsigned pc = 0; pc < n; pc++) {
		if (!kept[pc])
			continue;
		if (BPF_CLASS(a[pc].i.code) == BPF_JMP)
			kept[a[pc].t] = kept[a[pc].f] = true;
		else if (BPF_CLASS(a[pc].i.code) != BPF_RET)
			kept[pc + 1] = true;
	}
	/* A JA to the next kept instruction: left out. */
	for (unsigned pc = 0; pc < n; pc++) {
		if (!kept[pc] || !is_ja(&a[pc].i))
			continue;
		unsigned next = pc + 1;
		while (next < a[pc].t && !kept[next])
			next++;
		if (next == a[pc].t)
			kept[pc] = false;
	}
	p->n = 0;
	for (unsigned pc = 0; pc < n; pc++)
		if (kept[pc])
			now[pc] = p->n++;
		else
			now[pc] = UINT32_MAX;
	/* where a left-out instruction leads: the next kept one */
	for (unsigned pc = n; pc-- > 0;)
		if (now[pc] == UINT32_MAX)
			now[pc] = pc + 1 < n ? now[pc + 1] : UINT32_MAX;
	if (p->n > PROG_MAX)
		die("layout: a program over %u instructions", PROG_MAX);
	for (unsigned pc = 0; pc < n; pc++) {
		if (!kept[pc])
			continue;
		struct sock_filter i = a[pc].i;
		if (is_ja(&i)) {
			i.k = now[a[pc].t] - now[pc] - 1;
		} else if (BPF_CLASS(i.code) == BPF_JMP) {
			unsigned jt = now[a[pc].t] - now[pc] - 1, jf = now[a[pc].f] - now[pc] - 1;
			if (jt > 255 || jf > 255)
				die("layout: a jump over 255");
			i.jt = (uint8_t)jt, i.jf = (uint8_t)jf;
		}
		p->f[now[pc]] = i;
	}
}

void filter_layout(struct prog *p, uint32_t native, uint32_t compat)
{
	static struct front fr;
	const struct prog orig = *p;
	fr.p = &orig, fr.native = native, fr.compat = compat, fr.n_leaf = fr.n_out = 0;
	for (unsigned pc = 0; pc < p->n; pc++)
		if (reads_x_or_scratch(&p->f[pc]))
			die("layout: instruction %#x at %u", p->f[pc].code, pc);
	uint32_t other = 0; /* an arch P does not name */
	while (compares_with(p, other))
		other++;
	segments(&fr, other);
	if (fr.n_seg != 1)
		die("layout: an arch P does not name gets an answer by the number");
	unsigned other_leaf = TO_LEAF | fr.seg[0].leaf;
	put(&fr, load(offsetof(struct seccomp_data, arch)), 0, 0);
	unsigned is_native = put(&fr, test(BPF_JEQ, native), 0, 0);
	unsigned is_compat = compat ? put(&fr, test(BPF_JEQ, compat), 0, 0) : other_leaf;
	fr.out[is_native].f = is_compat;
	fr.out[is_native].t = arch_tree(&fr, native);
	if (compat) {
		fr.out[is_compat].f = other_leaf;
		fr.out[is_compat].t = arch_tree(&fr, compat);
	}
	/* The answers, then P. A leaf into P is P's instruction E. */
	unsigned at_leaf[LEAVES], p_at = fr.n_out;
	for (unsigned l = 0; l < fr.n_leaf; l++)
		if (fr.leaf[l].kind == LEAF_RET)
			at_leaf[l] = put(&fr, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, fr.leaf[l].v), 0, 0),
			p_at++;
	for (unsigned l = 0; l < fr.n_leaf; l++)
		if (fr.leaf[l].kind == LEAF_INTO_P)
			at_leaf[l] = p_at + fr.leaf[l].v;
	for (unsigned pc = 0; pc < fr.n_out; pc++) {
		struct ains *a = &fr.out[pc];
		if (BPF_CLASS(a->i.code) != BPF_JMP)
			continue;
		if (a->t & TO_LEAF)
			a->t = at_leaf[a->t & ~TO_LEAF];
		if (a->f & TO_LEAF)
			a->f = at_leaf[a->f & ~TO_LEAF];
	}
	for (unsigned pc = 0; pc < orig.n; pc++) {
		const struct sock_filter *i = &orig.f[pc];
		unsigned t = 0, f = 0;
		if (i->code == (BPF_JMP | BPF_JA))
			t = f = p_at + pc + 1 + i->k;
		else if (BPF_CLASS(i->code) == BPF_JMP)
			t = p_at + pc + 1 + i->jt, f = p_at + pc + 1 + i->jf;
		put(&fr, *i, t, f);
	}
	tidy(fr.out, fr.n_out);
	encode(p, fr.out, fr.n_out);
}
