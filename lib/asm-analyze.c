/*
 * asm-analyze.c: from classified instructions (and their samples) to the
 * loops, the hot set, the hot loop, the instruction mix and the verdict of
 * asm.h. A pure function of the instruction table, so the rules are tested
 * on synthetic tables. The rules and thresholds are documented in
 * docs/asm.md; keep the two in step.
 */
#include <inttypes.h>
#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "asm.h"

/* Thresholds (docs/asm.md, "Rules"). */
#define HOT_PERCENT 80		/* the hot set holds this share of the samples */
#define DIV_SHARE 0.05		/* division: a divide and the DIV_SKID instructions after it */
#define DIV_SKID 2
#define MEM_SHARE 0.70		/* memory-bound, with a profile: samples right after loads */
#define MEM_LOAD_SHARE 0.50	/* memory-bound, without: loads among hot loop instructions */
#define BRANCH_SHARE 0.15	/* branchy: conditional branches among hot loop instructions */
#define BRANCH_MIN 2		/* ... and at least this many */
#define SIMD_SHARE 0.25		/* vectorized: packed SIMD's share of the hot loop (samples, or instructions) */
#define NEST_SHARE 0.50		/* nested-loop: the samples in an inner loop of depth >= 2 */

static const char *const tag_names[ASM_NR_TAGS] = {
	"division", "scalar-fp", "not-vectorized", "branchy", "memory-bound",
	"nested-loop",
};

const char *asm_tag_name(enum asm_tag tag)
{
	for (int i = 0; i < ASM_NR_TAGS; i++)
		if (tag == 1u << i)
			return tag_names[i];
	return "unknown";
}

const char *asm_isa_name(enum asm_isa isa)
{
	switch (isa) {
	case ASM_ISA_MMX: return "MMX";
	case ASM_ISA_SSE: return "SSE";
	case ASM_ISA_AVX: return "AVX";
	case ASM_ISA_AVX2: return "AVX2";
	case ASM_ISA_AVX512: return "AVX-512";
	case ASM_ISA_NEON: return "NEON";
	case ASM_ISA_SVE: return "SVE";
	case ASM_ISA_NONE: break;
	}
	return "none";
}

const char *asm_arch_name(enum asm_arch arch)
{
	return arch == ASM_ARCH_X86_64 ? "x86-64" : "aarch64";
}

static int tag_index(enum asm_tag tag)
{
	return __builtin_ctz((unsigned)tag);
}

const enum asm_tag asm_tag_order[ASM_NR_TAGS] = {
	ASM_DIVISION, ASM_MEMORY_BOUND, ASM_BRANCHY, ASM_SCALAR_FP, ASM_NOT_VECTORIZED,
	ASM_NESTED_LOOP,
};

const char *asm_evidence(const struct asm_function *f, enum asm_tag tag)
{
	const char *e;

	if (!tag || (tag & (tag - 1)) || tag >= 1u << ASM_NR_TAGS || !(f->tags & tag))
		return "";
	e = f->evidence[tag_index(tag)];
	return e ? e : "";
}

static const char *intern(struct asm_function *f, const char *s)
{
	return strtab_get(&f->strs, strtab_intern_str(&f->strs, s));
}

static void set_tag(struct asm_function *f, enum asm_tag tag, const char *fmt, ...) ATTR_PRINTF(3, 4);
static void set_tag(struct asm_function *f, enum asm_tag tag, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	f->tags |= tag;
	f->evidence[tag_index(tag)] = intern(f, sb.buf);
	strbuf_release(&sb);
}

/* The instruction starting at 'addr' (instructions are in address order), or -1. */
static ssize_t insn_index(const struct asm_function *f, uint64_t addr)
{
	size_t lo = 0, hi = f->nr_insns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->insns[mid].addr == addr)
			return (ssize_t)mid;
		if (f->insns[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * The control flow graph in basic blocks. Successors are computed from the
 * block's last instruction; an indirect jump has none we know of.
 */
struct cfg {
	size_t *block;		/* per instruction: its block */
	size_t *first;		/* per block: its first instruction */
	size_t nr_blocks;
	size_t *pred, *pred_off;	/* predecessors of b: pred[pred_off[b]..pred_off[b + 1]) */
	size_t *rpo;		/* per block: reverse postorder number, NONE when unreachable */
	size_t *idom;		/* immediate dominator */
	size_t *pre, *post;	/* dominator tree numbering: a dominates b iff nested */
	bool cycle;		/* the depth-first walk met a block still on its path */
};

#define NONE SIZE_MAX
/* More loop heads than this in one function are ignored (hostile code). */
#define MAX_LOOPS 1024

static void cfg_successors(const struct asm_function *f, const struct cfg *g, size_t b,
			   size_t out[2], size_t *n)
{
	size_t last = (b + 1 < g->nr_blocks ? g->first[b + 1] : f->nr_insns) - 1;
	const struct asm_insn *in = &f->insns[last];

	*n = 0;
	if (in->classes & ASM_C_RET)
		return;
	if (in->classes & ASM_C_BRANCH) {
		ssize_t t = in->has_target && in->target >= f->start && in->target < f->end
			? insn_index(f, in->target) : -1;
		if (t >= 0)
			out[(*n)++] = g->block[t];
		if (!(in->classes & ASM_C_COND))
			return;
	}
	if (b + 1 < g->nr_blocks)
		out[(*n)++] = b + 1;
}

static void cfg_blocks(const struct asm_function *f, struct cfg *g)
{
	bool *leader = xcalloc(f->nr_insns + 1, sizeof(*leader));

	if (f->nr_insns)
		leader[0] = true;
	for (size_t i = 0; i < f->nr_insns; i++) {
		const struct asm_insn *in = &f->insns[i];
		ssize_t t;

		if (!(in->classes & (ASM_C_BRANCH | ASM_C_RET)))
			continue;
		leader[i + 1] = true;
		if (in->has_target && in->target >= f->start && in->target < f->end &&
		    (t = insn_index(f, in->target)) >= 0)
			leader[t] = true;
	}
	for (size_t i = 0; i < f->nr_insns; i++) {
		if (leader[i])
			g->first[g->nr_blocks++] = i;
		g->block[i] = g->nr_blocks - 1;
	}
	free(leader);
}

static void cfg_preds(const struct asm_function *f, struct cfg *g)
{
	size_t nb = g->nr_blocks, succ[2], ns, *fill = xcalloc(nb + 1, sizeof(*fill));

	g->pred_off = xcalloc(nb + 1, sizeof(*g->pred_off));
	for (size_t b = 0; b < nb; b++) {
		cfg_successors(f, g, b, succ, &ns);
		for (size_t k = 0; k < ns; k++)
			g->pred_off[succ[k] + 1]++;
	}
	for (size_t b = 0; b < nb; b++)
		g->pred_off[b + 1] += g->pred_off[b];
	g->pred = xmalloc((g->pred_off[nb] + 1) * sizeof(*g->pred));
	for (size_t b = 0; b < nb; b++) {
		cfg_successors(f, g, b, succ, &ns);
		for (size_t k = 0; k < ns; k++)
			g->pred[g->pred_off[succ[k]] + fill[succ[k]]++] = b;
	}
	free(fill);
}

/* Reverse postorder from the entry, by an explicit stack (hostile code can be deep). */
static size_t *cfg_order(const struct asm_function *f, struct cfg *g)
{
	size_t nb = g->nr_blocks, depth = 0, n = 0;
	size_t (*frames)[2] = xmalloc((nb + 1) * sizeof(*frames));	/* block, next successor */
	size_t *order = xmalloc((nb + 1) * sizeof(*order));		/* blocks by postorder */
	bool *seen = xcalloc(nb + 1, sizeof(*seen));
	bool *on_path = xcalloc(nb + 1, sizeof(*on_path));

	for (size_t b = 0; b < nb; b++)
		g->rpo[b] = NONE;
	if (nb) {
		seen[0] = on_path[0] = true;
		frames[depth][0] = 0;
		frames[depth++][1] = 0;
	}
	while (depth) {
		size_t v = frames[depth - 1][0], succ[2], ns;

		cfg_successors(f, g, v, succ, &ns);
		if (frames[depth - 1][1] < ns) {
			size_t w = succ[frames[depth - 1][1]++];
			if (on_path[w])
				g->cycle = true;	/* an edge back into the path: a cycle */
			if (!seen[w]) {
				seen[w] = on_path[w] = true;
				frames[depth][0] = w;
				frames[depth++][1] = 0;
			}
			continue;
		}
		order[n++] = v;
		on_path[v] = false;
		depth--;
	}
	/* reverse: order[0] is the entry */
	for (size_t i = 0; i < n / 2; i++) {
		size_t t = order[i];
		order[i] = order[n - 1 - i];
		order[n - 1 - i] = t;
	}
	for (size_t i = 0; i < n; i++)
		g->rpo[order[i]] = i;
	order[n] = NONE;
	free(frames);
	free(seen);
	free(on_path);
	return order;
}

/* Dominators: Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm". */
static void cfg_dominators(struct cfg *g, const size_t *order)
{
	size_t nb = g->nr_blocks;
	bool changed = true;

	for (size_t b = 0; b < nb; b++)
		g->idom[b] = NONE;
	if (!nb)
		return;
	g->idom[0] = 0;
	while (changed) {
		changed = false;
		for (size_t i = 1; order[i] != NONE; i++) {
			size_t b = order[i], best = NONE;

			for (size_t k = g->pred_off[b]; k < g->pred_off[b + 1]; k++) {
				size_t p = g->pred[k], x, y;

				if (g->idom[p] == NONE)
					continue;
				if (best == NONE) {
					best = p;
					continue;
				}
				for (x = p, y = best; x != y;) {
					while (g->rpo[x] > g->rpo[y])
						x = g->idom[x];
					while (g->rpo[y] > g->rpo[x])
						y = g->idom[y];
				}
				best = x;
			}
			if (best != NONE && g->idom[b] != best) {
				g->idom[b] = best;
				changed = true;
			}
		}
	}
}

/* Number the dominator tree so that "a dominates b" is pre[a] <= pre[b] && post[b] <= post[a]. */
static void cfg_number(struct cfg *g, const size_t *order)
{
	size_t nb = g->nr_blocks, depth = 0, clock = 0;
	size_t *child_off = xcalloc(nb + 2, sizeof(*child_off)), *child, *fill;
	size_t (*frames)[2] = xmalloc((nb + 1) * sizeof(*frames));

	for (size_t b = 0; b < nb; b++) {
		g->pre[b] = g->post[b] = NONE;
		if (b && g->idom[b] != NONE)
			child_off[g->idom[b] + 1]++;
	}
	for (size_t b = 0; b < nb; b++)
		child_off[b + 1] += child_off[b];
	child = xmalloc((child_off[nb] + 1) * sizeof(*child));
	fill = xcalloc(nb + 1, sizeof(*fill));
	for (size_t i = 1; order[i] != NONE; i++) {
		size_t b = order[i];
		child[child_off[g->idom[b]] + fill[g->idom[b]]++] = b;
	}
	if (nb) {
		g->pre[0] = clock++;
		frames[depth][0] = 0;
		frames[depth++][1] = child_off[0];
	}
	while (depth) {
		size_t v = frames[depth - 1][0];

		if (frames[depth - 1][1] < child_off[v + 1]) {
			size_t w = child[frames[depth - 1][1]++];
			g->pre[w] = clock++;
			frames[depth][0] = w;
			frames[depth++][1] = child_off[w];
			continue;
		}
		g->post[v] = clock++;
		depth--;
	}
	free(child_off);
	free(child);
	free(fill);
	free(frames);
}

static bool dominates(const struct cfg *g, size_t a, size_t b)
{
	return g->pre[a] != NONE && g->pre[b] != NONE &&
	       g->pre[a] <= g->pre[b] && g->post[b] <= g->post[a];
}

static void cfg_build(const struct asm_function *f, struct cfg *g)
{
	size_t n = f->nr_insns + 1, *order;

	memset(g, 0, sizeof(*g));
	g->block = xmalloc(n * sizeof(*g->block));
	g->first = xmalloc(n * sizeof(*g->first));
	g->rpo = xmalloc(n * sizeof(*g->rpo));
	g->idom = xmalloc(n * sizeof(*g->idom));
	g->pre = xmalloc(n * sizeof(*g->pre));
	g->post = xmalloc(n * sizeof(*g->post));
	cfg_blocks(f, g);
	cfg_preds(f, g);
	order = cfg_order(f, g);
	cfg_dominators(g, order);
	cfg_number(g, order);
	free(order);
}

static void cfg_release(struct cfg *g)
{
	free(g->block);
	free(g->first);
	free(g->pred);
	free(g->pred_off);
	free(g->rpo);
	free(g->idom);
	free(g->pre);
	free(g->post);
}

struct loop_body {
	size_t head;		/* block */
	size_t nr_blocks;
};

static int cmp_body_size(const void *a, const void *b)
{
	const struct loop_body *x = a, *y = b;

	if (x->nr_blocks != y->nr_blocks)
		return x->nr_blocks > y->nr_blocks ? -1 : 1;
	return x->head < y->head ? -1 : x->head > y->head;
}

/*
 * Natural loops: an edge u -> h where h dominates u closes a loop headed
 * by h; its body is h and every block that reaches u without passing h.
 * Edges to one head make one loop. Loops nest or are disjoint, so each
 * instruction's innermost loop is the smallest one holding its block; the
 * innermost loops hold no other loop's head.
 */
static void find_loops(struct asm_function *f)
{
	struct cfg g;
	size_t nb, *mark, *work, *block_loop, nr_bodies = 0;
	struct loop_body *bodies;

	f->nr_loops = 0;
	cfg_build(f, &g);
	f->cycle = g.cycle;
	nb = g.nr_blocks;
	mark = xmalloc((nb + 1) * sizeof(*mark));
	work = xmalloc((nb + 1) * sizeof(*work));
	block_loop = xmalloc((nb + 1) * sizeof(*block_loop));
	bodies = xmalloc((nb + 1) * sizeof(*bodies));
	for (size_t b = 0; b < nb; b++)
		mark[b] = block_loop[b] = NONE;

	/* the heads, and the size of each body */
	for (size_t h = 0; h < nb && nr_bodies < MAX_LOOPS; h++) {
		size_t top = 0, size = 1;

		for (size_t k = g.pred_off[h]; k < g.pred_off[h + 1]; k++)
			if (dominates(&g, h, g.pred[k]) && mark[g.pred[k]] != h) {
				mark[g.pred[k]] = h;
				work[top++] = g.pred[k];
			}
		if (!top)
			continue;
		mark[h] = h;
		while (top) {
			size_t u = work[--top];

			if (u == h)
				continue;	/* the head's own edges lead out of the loop */
			size++;
			for (size_t k = g.pred_off[u]; k < g.pred_off[u + 1]; k++) {
				size_t p = g.pred[k];
				if (mark[p] != h && g.rpo[p] != NONE) {
					mark[p] = h;
					work[top++] = p;
				}
			}
		}
		bodies[nr_bodies++] = (struct loop_body){ h, size };
	}
	/* largest first: inner loops overwrite their blocks' loop */
	qsort(bodies, nr_bodies, sizeof(*bodies), cmp_body_size);
	for (size_t i = 0; i < nb; i++)
		mark[i] = NONE;
	for (size_t l = 0; l < nr_bodies; l++) {
		size_t h = bodies[l].head, top = 0;
		struct asm_loop *loop;
		size_t parent = block_loop[h];

		ALLOC_GROW(f->loops, f->nr_loops + 1, f->alloc_loops);
		loop = &f->loops[f->nr_loops++];
		*loop = (struct asm_loop){ f->insns[g.first[h]].addr, UINT64_MAX, 0, true,
					   parent == NONE ? -1 : (int)parent,
					   parent == NONE ? 1 : f->loops[parent].depth + 1, 0 };
		if (parent != NONE)
			f->loops[parent].innermost = false;
		for (size_t k = g.pred_off[h]; k < g.pred_off[h + 1]; k++)
			if (dominates(&g, h, g.pred[k]) && mark[g.pred[k]] != l) {
				mark[g.pred[k]] = l;
				work[top++] = g.pred[k];
			}
		mark[h] = l;
		block_loop[h] = l;
		while (top) {
			size_t u = work[--top];

			block_loop[u] = l;
			if (u == h)
				continue;
			for (size_t k = g.pred_off[u]; k < g.pred_off[u + 1]; k++) {
				size_t p = g.pred[k];
				if (mark[p] != l && g.rpo[p] != NONE) {
					mark[p] = l;
					work[top++] = p;
				}
			}
		}
	}
	for (size_t i = 0; i < f->nr_insns; i++) {
		struct asm_insn *in = &f->insns[i];
		size_t l = block_loop[g.block[i]];

		in->loop = l == NONE ? -1 : (int)l;
		if (l == NONE)
			continue;
		if (in->addr < f->loops[l].start)
			f->loops[l].start = in->addr;
		if (in->addr > f->loops[l].end)
			f->loops[l].end = in->addr;
	}
	/* a loop's range covers its inner loops too (parents come first) */
	for (size_t l = f->nr_loops; l-- > 0;) {
		struct asm_loop *loop = &f->loops[l];
		if (loop->parent < 0)
			continue;
		if (loop->start < f->loops[loop->parent].start)
			f->loops[loop->parent].start = loop->start;
		if (loop->end > f->loops[loop->parent].end)
			f->loops[loop->parent].end = loop->end;
	}
	free(mark);
	free(work);
	free(block_loop);
	free(bodies);
	cfg_release(&g);
}

/* A branch back to the head of a loop it is in. */
static bool is_back_edge(const struct asm_function *f, const struct asm_insn *in)
{
	if (!(in->classes & ASM_C_BRANCH) || !in->has_target)
		return false;
	for (int l = in->loop; l >= 0; l = f->loops[l].parent)
		if (f->loops[l].head == in->target)
			return true;
	return false;
}

static int64_t positive(int64_t v)
{
	return v > 0 ? v : 0;
}

static const struct asm_function *sort_f;

static int cmp_by_samples(const void *a, const void *b)
{
	const struct asm_insn *x = &sort_f->insns[*(const size_t *)a];
	const struct asm_insn *y = &sort_f->insns[*(const size_t *)b];

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void pick_hot(struct asm_function *f)
{
	bool any_loop = false, *hot_loops;

	f->nr_hot = 0;
	for (size_t i = 0; i < f->nr_insns; i++)
		f->insns[i].hot = f->insns[i].in_hot_loop = false;

	if (f->annotated && f->samples > 0) {
		size_t *order = xmalloc(f->nr_insns * sizeof(*order));
		__int128 acc = 0, total = 0;

		for (size_t i = 0; i < f->nr_insns; i++) {
			order[i] = i;
			total += positive(f->insns[i].samples);
		}
		sort_f = f;
		qsort(order, f->nr_insns, sizeof(*order), cmp_by_samples);
		sort_f = NULL;
		for (size_t k = 0; k < f->nr_insns && acc * 100 < total * HOT_PERCENT; k++) {
			struct asm_insn *in = &f->insns[order[k]];

			if (in->samples <= 0)
				break;
			in->hot = true;
			f->nr_hot++;
			acc += in->samples;
		}
		free(order);
		f->hot_rule = ASM_HOT_SAMPLES;
		/* the hot loop: the innermost loop around each hot instruction */
		hot_loops = xcalloc(f->nr_loops + 1, sizeof(*hot_loops));
		for (size_t i = 0; i < f->nr_insns; i++) {
			struct asm_insn *in = &f->insns[i];

			if (in->hot && in->loop < 0)
				in->in_hot_loop = true;
			else if (in->hot)
				hot_loops[in->loop] = true;
		}
		for (size_t i = 0; i < f->nr_insns; i++)
			if (f->insns[i].loop >= 0 && hot_loops[f->insns[i].loop])
				f->insns[i].in_hot_loop = true;
		free(hot_loops);
		for (size_t i = 0; i < f->nr_insns; i++)
			if (f->insns[i].classes & ASM_C_NOP || f->insns[i].outside)
				f->insns[i].in_hot_loop = false;
		return;
	}

	/* an inlined function's loops are those holding its copies' code */
	for (size_t i = 0; i < f->nr_insns; i++)
		any_loop |= !f->insns[i].outside && f->insns[i].loop >= 0 &&
			    f->loops[f->insns[i].loop].innermost;
	f->hot_rule = any_loop ? ASM_HOT_LOOPS : ASM_HOT_FUNCTION;
	for (size_t i = 0; i < f->nr_insns; i++) {
		struct asm_insn *in = &f->insns[i];

		if (in->classes & ASM_C_NOP || in->outside)
			continue;
		if (!any_loop || (in->loop >= 0 && f->loops[in->loop].innermost)) {
			in->hot = in->in_hot_loop = true;
			f->nr_hot++;
		}
	}
}

static void mix_add(struct asm_mix *m, const struct asm_insn *in, int64_t w)
{
	unsigned c = in->classes;

	if (c & ASM_C_NOP)
		return;
	m->instructions += w;
	if (c & ASM_C_FP_SCALAR)
		m->fp_scalar += w;
	if (c & ASM_C_FP_DIV)
		m->fp_div += w;
	if (c & ASM_C_SIMD) {
		m->simd += w;
		if (in->isa == ASM_ISA_SVE)
			m->simd_scalable += w;
		else if (in->simd_width >= 512)
			m->simd512 += w;
		else if (in->simd_width >= 256)
			m->simd256 += w;
		else if (in->simd_width >= 128)
			m->simd128 += w;
		else
			m->simd64 += w;
	}
	if (c & ASM_C_LOAD)
		m->load += w;
	if (c & ASM_C_STORE)
		m->store += w;
	if (c & ASM_C_BRANCH)
		m->branch += w;
	if (c & ASM_C_COND)
		m->cond_branch += w;
	if (c & ASM_C_INT_DIV)
		m->int_div += w;
	if (c & ASM_C_CALL)
		m->call += w;
}

/* Register families the hot loop's loads write: they hold loaded data. */
struct reg_set {
	uint32_t r[256];
	size_t nr;
};

static void loaded_regs(const struct asm_function *f, struct reg_set *set)
{
	set->nr = 0;
	for (size_t i = 0; i < f->nr_insns; i++) {
		const struct asm_insn *ld = &f->insns[i];

		if (!ld->in_hot_loop || !(ld->classes & ASM_C_LOAD))
			continue;
		for (uint8_t k = 0; k < ld->nr_writes; k++) {
			bool dup = false;
			for (size_t j = 0; j < set->nr; j++)
				dup |= set->r[j] == ld->writes[k];
			if (!dup && set->nr < ARRAY_SIZE(set->r))
				set->r[set->nr++] = ld->writes[k];
		}
	}
}

/* Does 'in' compute on data a load of the hot loop brought in? */
static bool uses_loaded_data(const struct reg_set *set, const struct asm_insn *in)
{
	if (in->classes & ASM_C_LOAD)
		return true;
	for (uint8_t k = 0; k < in->nr_reads; k++)
		for (size_t j = 0; j < set->nr; j++)
			if (set->r[j] == in->reads[k])
				return true;
	return false;
}

static double share(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0.0;
}

/* "mulss, addss": distinct mnemonics of the hot loop's instructions of class c. */
static void mnemonics(const struct asm_function *f, unsigned c, struct strbuf *sb)
{
	const char *seen[4];
	size_t n = 0, more = 0;

	for (size_t i = 0; i < f->nr_insns; i++) {
		const struct asm_insn *in = &f->insns[i];
		bool dup = false;

		if (!in->in_hot_loop || !(in->classes & c))
			continue;
		for (size_t k = 0; k < n; k++)
			dup |= !strcmp(seen[k], in->mnemonic);
		if (dup)
			continue;
		if (n < ARRAY_SIZE(seen))
			seen[n++] = in->mnemonic;
		else
			more++;
	}
	for (size_t k = 0; k < n; k++)
		strbuf_addf(sb, "%s%s", k ? ", " : "", seen[k]);
	if (more)
		strbuf_addf(sb, ", ...");
}

/* "the loop 0x1130-0x1149" for the hot loop's first loop, or "the hot code". */
static void hot_place(const struct asm_function *f, struct strbuf *sb)
{
	for (size_t i = 0; i < f->nr_insns; i++) {
		const struct asm_insn *in = &f->insns[i];
		if (in->in_hot_loop && in->loop >= 0) {
			const struct asm_loop *l = &f->loops[in->loop];
			strbuf_addf(sb, "the loop 0x%" PRIx64 "-0x%" PRIx64, l->start, l->end);
			return;
		}
	}
	if (f->loop_free)
		strbuf_addstr(sb, "the hot code (no loop)");
	else if (f->nr_indirect)
		strbuf_addf(sb, "the hot code (no loop found, but %zu indirect jump%s of unknown target%s may close one)",
			    f->nr_indirect, f->nr_indirect == 1 ? "" : "s", f->nr_indirect == 1 ? "" : "s");
	else
		strbuf_addstr(sb, "the hot code (outside the loops found)");
}

static void rule_division(struct asm_function *f, bool by_samples)
{
	const struct asm_insn *top = NULL;
	int64_t sum = 0, top_s = -1;
	size_t n = 0;

	for (size_t i = 0; i < f->nr_insns; i++) {
		const struct asm_insn *in = &f->insns[i];
		int64_t s;

		if (!(in->classes & ASM_C_INT_DIV))
			continue;
		if (!by_samples) {
			if (in->in_hot_loop && !top)
				top = in;
			continue;
		}
		/*
		 * samples skid past a long-latency instruction: to the next one
		 * on Intel, often to the one after that on AMD (a divide's
		 * short successor retires with it)
		 */
		s = positive(in->samples);
		for (size_t k = i + 1; k < f->nr_insns && k <= i + DIV_SKID; k++)
			s = sat_add(s, positive(f->insns[k].samples));
		sum = sat_add(sum, s);
		n++;
		if (s > top_s) {
			top_s = s;
			top = in;
		}
	}
	if (!top)
		return;
	if (by_samples) {
		double sh = share(sum, f->samples);

		/* a divide that holds no samples is not where the time goes */
		if (sum <= 0 || sh < DIV_SHARE)
			return;
		if (n == 1)
			set_tag(f, ASM_DIVISION, "%s at 0x%" PRIx64 " and the two instructions after it hold %.0f%% of the function's samples",
				top->mnemonic, top->addr, 100 * sh);
		else
			set_tag(f, ASM_DIVISION, "%zu integer divides (the top one: %s at 0x%" PRIx64 ") and the two instructions after each hold %.0f%% of the function's samples",
				n, top->mnemonic, top->addr, 100 * sh);
	} else {
		struct strbuf place = STRBUF_INIT;
		hot_place(f, &place);
		set_tag(f, ASM_DIVISION, "%s at 0x%" PRIx64 " in %s", top->mnemonic, top->addr, place.buf);
		strbuf_release(&place);
	}
}

/*
 * Shares of the function's samples on the instruction right after a load,
 * and right after a store that does not load. A timer interrupt names the
 * next instruction to retire, so the samples of a stalled access land on
 * the one after it, whether or not that one uses the loaded value
 * (measured: a column-wise matrix sum puts 95% of its samples on the
 * increment after the load, which does not read it; zstd's stores into its
 * hash tables, 39% of the samples of the hash5 code inlined between them).
 */
static void access_sample_share(const struct asm_function *f, double *loads, double *stores)
{
	int64_t l = 0, st = 0;

	for (size_t i = 1; i < f->nr_insns; i++) {
		unsigned c = f->insns[i - 1].classes;

		if (c & ASM_C_LOAD)
			l = sat_add(l, positive(f->insns[i].samples));
		else if (c & ASM_C_STORE)
			st = sat_add(st, positive(f->insns[i].samples));
	}
	*loads = share(l, f->samples);
	*stores = share(st, f->samples);
}

int64_t asm_focus_inlined(struct asm_function *f, const char *name)
{
	f->samples = 0;
	for (size_t i = 0; i < f->nr_insns; i++) {
		struct asm_insn *in = &f->insns[i];

		if (!in->inlined || strcmp(in->inlined, name))
			in->samples = 0;
		f->samples = sat_add(f->samples, positive(in->samples));
	}
	return f->samples;
}

/* Each loop's samples, its inner loops' included. */
static void loop_samples(struct asm_function *f)
{
	for (size_t l = 0; l < f->nr_loops; l++)
		f->loops[l].samples = 0;
	for (size_t i = 0; i < f->nr_insns; i++)
		for (int l = f->insns[i].loop; l >= 0; l = f->loops[l].parent)
			f->loops[l].samples = sat_add(f->loops[l].samples, positive(f->insns[i].samples));
}

static bool in_loop(const struct asm_function *f, const struct asm_insn *in, int l)
{
	for (int k = in->loop; k >= 0; k = f->loops[k].parent)
		if (k == l)
			return true;
	return false;
}

/*
 * "zstd_double_fast.c:156-754": the source lines of loop l (its inner
 * loops included) in the file most of its instructions come from, the
 * symbol's own lines before those of functions inlined into it.
 */
static void loop_lines(const struct asm_function *f, int l, struct strbuf *sb)
{
	struct { const char *file; size_t n; } seen[16];
	const char *file = NULL, *base;
	size_t nr_seen = 0, best = 0;
	int lo = 0, hi = 0;

	for (int own = 1; own >= 0 && !file; own--) {
		nr_seen = 0;
		for (size_t i = 0; i < f->nr_insns; i++) {
			const struct asm_insn *in = &f->insns[i];
			size_t k;

			if (!in->file || !*in->file || in->line <= 0 ||
			    (own && in->inlined && *in->inlined) || !in_loop(f, in, l))
				continue;
			for (k = 0; k < nr_seen && strcmp(seen[k].file, in->file); k++)
				;
			if (k == nr_seen && nr_seen < ARRAY_SIZE(seen))
				seen[nr_seen++] = (typeof(seen[0])){ in->file, 0 };
			if (k < nr_seen && ++seen[k].n > best) {
				best = seen[k].n;
				file = seen[k].file;
			}
		}
	}
	if (!file) {
		strbuf_addstr(sb, "no line known");
		return;
	}
	for (size_t i = 0; i < f->nr_insns; i++) {
		const struct asm_insn *in = &f->insns[i];

		if (!in->file || strcmp(in->file, file) || in->line <= 0 || !in_loop(f, in, l))
			continue;
		if (!lo || in->line < lo)
			lo = in->line;
		if (in->line > hi)
			hi = in->line;
	}
	base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	if (lo == hi)
		strbuf_addf(sb, "%s:%d", base, lo);
	else
		strbuf_addf(sb, "%s:%d-%d", base, lo, hi);
}

/*
 * nested-loop: most of the samples in one loop that runs inside another
 * loop of this function, e.g. a scan of the elements seen so far for each
 * element: quadratic in the input unless the inner loop is short.
 */
static void rule_nested(struct asm_function *f)
{
	struct strbuf in_lines = STRBUF_INIT, out_lines = STRBUF_INIT;
	const struct asm_loop *inner = NULL, *outer;
	int best = -1;

	if (f->samples <= 0)
		return;
	/* the deepest loop holding most samples: a compiler may split one loop of the source in two */
	for (size_t l = 0; l < f->nr_loops; l++) {
		const struct asm_loop *c = &f->loops[l];

		if (c->depth < 2 || share(c->samples, f->samples) < NEST_SHARE)
			continue;
		if (!inner || c->depth > inner->depth ||
		    (c->depth == inner->depth && c->samples > inner->samples)) {
			inner = c;
			best = (int)l;
		}
	}
	if (!inner)
		return;
	outer = &f->loops[inner->parent];
	loop_lines(f, best, &in_lines);
	loop_lines(f, inner->parent, &out_lines);
	set_tag(f, ASM_NESTED_LOOP, "%.0f%% of the function's samples are in the loop 0x%" PRIx64 "-0x%" PRIx64
		" (%s), at loop depth %d: inside the loop 0x%" PRIx64 "-0x%" PRIx64 " (%s)",
		100 * share(inner->samples, f->samples), inner->start, inner->end, in_lines.buf,
		inner->depth, outer->start, outer->end, out_lines.buf);
	strbuf_release(&in_lines);
	strbuf_release(&out_lines);
}

/*
 * The share of the hot loop on packed SIMD: with samples, of its samples
 * those on a packed instruction or right after one (where its samples
 * land); without, of its instructions.
 */
static double simd_share(const struct asm_function *f, bool by_samples)
{
	int64_t on = 0, all = 0;

	for (size_t i = 0; i < f->nr_insns; i++) {
		const struct asm_insn *in = &f->insns[i];
		bool simd = (in->classes & ASM_C_SIMD) ||
			    (i && (f->insns[i - 1].classes & ASM_C_SIMD));

		if (!in->in_hot_loop || (in->classes & ASM_C_NOP))
			continue;
		if (by_samples) {
			all = sat_add(all, positive(in->samples));
			if (simd)
				on = sat_add(on, positive(in->samples));
		} else {
			all++;
			on += !!(in->classes & ASM_C_SIMD);
		}
	}
	return share(on, all);
}

void asm_analyze(struct asm_function *f)
{
	struct asm_mix loop = { 0 };
	struct reg_set loaded;
	struct strbuf sb = STRBUF_INIT, place = STRBUF_INIT;
	bool by_samples, is_loop = false, int_on_loads = false;
	const struct asm_insn *int_op = NULL;
	int64_t cond = 0;
	double mem = 0;
	bool with_stores = false;
	enum asm_isa vector_isa = ASM_ISA_NONE;
	unsigned vector_width = 0;

	f->tags = 0;
	for (int i = 0; i < ASM_NR_TAGS; i++)
		f->evidence[i] = NULL;
	memset(&f->mix, 0, sizeof(f->mix));
	memset(&f->hot_mix, 0, sizeof(f->hot_mix));
	memset(&f->sample_mix, 0, sizeof(f->sample_mix));
	f->vector_isa = ASM_ISA_NONE;
	f->vector_width = 0;

	find_loops(f);
	f->nr_indirect = 0;
	for (size_t i = 0; i < f->nr_insns; i++)
		if ((f->insns[i].classes & (ASM_C_BRANCH | ASM_C_INDIRECT)) == (ASM_C_BRANCH | ASM_C_INDIRECT))
			f->nr_indirect++;
	f->loop_free = !f->cycle && !f->nr_loops && !f->nr_indirect;
	loop_samples(f);
	pick_hot(f);
	loaded_regs(f, &loaded);
	by_samples = f->hot_rule == ASM_HOT_SAMPLES;

	for (size_t i = 0; i < f->nr_insns; i++) {
		const struct asm_insn *in = &f->insns[i];

		if (in->outside)
			continue;	/* not the inlined code analysed */
		mix_add(&f->mix, in, 1);
		if (in->hot)
			mix_add(&f->hot_mix, in, 1);
		if (f->annotated)
			mix_add(&f->sample_mix, in, positive(in->samples));
		if (!in->in_hot_loop)
			continue;
		mix_add(&loop, in, 1);
		if (in->loop >= 0)
			is_loop = true;
		if ((in->classes & ASM_C_COND) && !is_back_edge(f, in))
			cond++;
		if (in->classes & ASM_C_SIMD) {
			if (in->isa > vector_isa)
				vector_isa = in->isa;
			if (in->simd_width > vector_width)
				vector_width = in->simd_width;
		}
		if ((in->classes & ASM_C_INT_ALU) && !int_on_loads && uses_loaded_data(&loaded, in)) {
			int_on_loads = true;
			int_op = in;
		}
	}
	hot_place(f, &place);
	/* a handful of packed instructions in scalar code is not a vectorized loop */
	f->simd_share = simd_share(f, by_samples);
	if (f->simd_share >= SIMD_SHARE) {
		f->vector_isa = vector_isa;
		f->vector_width = vector_width;
	}

	rule_division(f, by_samples);
	rule_nested(f);

	if (by_samples) {
		double after_loads, after_stores;

		access_sample_share(f, &after_loads, &after_stores);
		mem = after_loads + after_stores;
		if (mem >= MEM_SHARE && after_stores < 0.005)
			set_tag(f, ASM_MEMORY_BOUND, "%.0f%% of the function's samples are on the instruction right after a load (where a stalled load's samples land)",
				100 * mem);
		else if (mem >= MEM_SHARE)
			set_tag(f, ASM_MEMORY_BOUND, "%.0f%% of the function's samples are on the instruction right after a load or a store (where a stalled access's samples land): %.0f%% after loads, %.0f%% after stores",
				100 * mem, 100 * after_loads, 100 * after_stores);
		with_stores = after_stores >= 0.005;
	} else if (loop.instructions && share(loop.load, loop.instructions) >= MEM_LOAD_SHARE) {
		mem = share(loop.load, loop.instructions);
		set_tag(f, ASM_MEMORY_BOUND, "%" PRId64 " of the %" PRId64 " instructions in %s are loads",
			loop.load, loop.instructions, place.buf);
	}

	if (loop.fp_scalar && !loop.simd) {
		mnemonics(f, ASM_C_FP_SCALAR, &sb);
		set_tag(f, ASM_SCALAR_FP, "%" PRId64 " scalar FP instruction%s (%s) and no packed SIMD in %s",
			loop.fp_scalar, loop.fp_scalar == 1 ? "" : "s", sb.buf, place.buf);
		strbuf_reset(&sb);
	}
	if (is_loop && !loop.simd && (loop.fp_scalar || int_on_loads)) {
		if (loop.fp_scalar)
			set_tag(f, ASM_NOT_VECTORIZED, "%s has no packed SIMD instruction: its FP arithmetic is scalar",
				place.buf);
		else
			set_tag(f, ASM_NOT_VECTORIZED, "%s has no packed SIMD instruction: integer %s at 0x%" PRIx64 " works on loaded data one element at a time",
				place.buf, int_op->mnemonic, int_op->addr);
	}
	if (loop.instructions && cond >= BRANCH_MIN &&
	    share(cond, loop.instructions) >= BRANCH_SHARE)
		set_tag(f, ASM_BRANCHY, "%" PRId64 " of the %" PRId64 " instructions in %s are conditional branches (back-edges not counted)",
			cond, loop.instructions, place.buf);

	strbuf_reset(&sb);
	if (f->tags & ASM_DIVISION)
		strbuf_addstr(&sb, is_loop ? "integer division in the hot loop" : "integer division in the hot code");
	else if ((f->tags & ASM_MEMORY_BOUND) && by_samples)
		strbuf_addf(&sb, "memory-bound: %.0f%% of hot samples on loads%s", 100 * mem,
			    with_stores ? " and stores" : "");
	else if (f->tags & ASM_MEMORY_BOUND)
		strbuf_addf(&sb, "memory-bound: %.0f%% of the hot loop's instructions are loads", 100 * mem);
	else if (f->tags & ASM_BRANCHY)
		strbuf_addf(&sb, "branch-heavy: %.0f%% of the hot loop's instructions are conditional branches",
			    100 * share(cond, loop.instructions));
	else if ((f->tags & ASM_SCALAR_FP) && (f->tags & ASM_NOT_VECTORIZED))
		strbuf_addstr(&sb, "hot loop is scalar FP, not vectorized");
	else if (f->tags & ASM_NOT_VECTORIZED)
		strbuf_addstr(&sb, "hot loop is scalar integer code, not vectorized");
	else if (f->vector_isa == ASM_ISA_SVE)
		strbuf_addstr(&sb, "vectorized (SVE, scalable vectors)");
	else if (f->vector_isa != ASM_ISA_NONE)
		strbuf_addf(&sb, "vectorized (%s, %u-bit)", asm_isa_name(f->vector_isa), f->vector_width);
	else if (f->tags & ASM_SCALAR_FP)
		strbuf_addstr(&sb, "scalar FP code, no loop in the hot code");
	else
		strbuf_addstr(&sb, "no problem found in the hot instructions");
	if (f->vector_isa != ASM_ISA_NONE && (f->tags & (ASM_DIVISION | ASM_MEMORY_BOUND | ASM_BRANCHY))) {
		if (f->vector_isa == ASM_ISA_SVE)
			strbuf_addstr(&sb, " (vectorized, SVE)");
		else
			strbuf_addf(&sb, " (vectorized, %s %u-bit)", asm_isa_name(f->vector_isa), f->vector_width);
	}
	f->verdict = intern(f, sb.buf);
	f->loop_mix = loop;
	strbuf_release(&sb);
	strbuf_release(&place);
}
