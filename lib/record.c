/*
 * record.c: `hotloop record`. Runs the command (or attaches to a process)
 * under the sampler, keeps a timeline of processes, threads and their
 * executable mappings from the kernel's MMAP2/COMM/FORK/EXIT records,
 * resolves every sampled address against the mappings of its process at
 * that moment, aggregates identical stacks, and builds the pprof profile.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "util.h"
#include "strbuf.h"
#include "hindex.h"
#include "intern.h"
#include "profile.h"
#include "pprof.h"
#include "sampler.h"
#include "symbolize.h"
#include "unwind.h"
#include "record.h"
#include "runner.h"
#include "heap-profile.h"

/* ---- small helpers ------------------------------------------------------ */

static void hex_encode(struct strbuf *sb, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		strbuf_addch(sb, hex[p[i] >> 4]);
		strbuf_addch(sb, hex[p[i] & 15]);
	}
}

/* u32 -> u32 map: the pairs in the order they came, found through a hindex. */
struct idmap {
	struct idpair {
		uint32_t key, val;
	} *v;
	size_t nr, alloc;
	struct hindex index;
};

static bool idpair_eq(const void *table, size_t i, const void *key)
{
	return ((const struct idmap *)table)->v[i].key == *(const uint32_t *)key;
}

/* The value slot for key; with insert, a new key gets a slot holding 0. */
static uint32_t *idmap_slot(struct idmap *m, uint32_t key, bool insert)
{
	uint64_t hash = hash_u64(HASH_SEED, key);
	size_t s, i;

	if (!insert) {
		i = hindex_lookup(&m->index, hash, idpair_eq, m, &key);
		return i == HINDEX_NONE ? NULL : &m->v[i].val;
	}
	if ((i = hindex_probe(&m->index, hash, idpair_eq, m, &key, &s)) != HINDEX_NONE)
		return &m->v[i].val;
	ALLOC_GROW(m->v, m->nr + 1, m->alloc);
	m->v[m->nr] = (struct idpair){ key, 0 };
	hindex_set(&m->index, s, hash, m->nr);
	return &m->v[m->nr++].val;
}

static void idmap_release(struct idmap *m)
{
	free(m->v);
	hindex_release(&m->index);
	memset(m, 0, sizeof(*m));
}

/* ---- the timeline --------------------------------------------------------- */

enum mkey_kind { MK_FILE, MK_KERNEL, MK_UNKNOWN };

/* A distinct mapping, as the profile will show it (interned as bytes). */
struct mkey {
	uint64_t start, end, pgoff;
	uint32_t file;		/* index into r->files */
	uint32_t kind;
};

/* A distinct frame: an address in a mapping, as leaf or as return address. */
struct fkey {
	uint64_t addr;
	uint32_t mkey;
	uint32_t is_return;
};

/* The head of a distinct sample; its frame ids follow. */
/* In skey.cut: a heap site's stack cut by the recorder's limit on distinct stacks. */
#define CUT_STACK_LIMIT (UNWIND_CHAIN + 1)

struct skey {
	uint32_t pid, tid, comm, nframes;
	uint32_t cut;		/* enum unwind_end or CUT_STACK_LIMIT: why the stack stops early, or 0 */
	uint32_t off_cpu;	/* where the thread left its CPU, not a clock sample */
};

struct map {
	uint64_t start, end, pgoff;
	uint32_t file;
	uint32_t mkey;		/* 0 until a sample lands in it */
};

struct proc {
	uint32_t pid;
	struct map *maps;	/* sorted by start, disjoint */
	size_t nr_maps, alloc_maps;
	uint64_t gen;		/* changes whenever the maps of files do */
	struct unwind_map *umaps;
	size_t nr_umaps, alloc_umaps;
	uint64_t umaps_gen;
	struct map exe;		/* the executable's (first) code mapping */
	bool has_exe;
	bool exe_next;		/* the next code mapping is the executable's */
};

struct thread {
	uint32_t tid, pid;
	uint32_t comm;		/* index into r->comms */
	uint32_t off_key;	/* off CPU since off_since, at this stack (skey index); 0: on */
	uint64_t off_since;
};

struct recording {
	enum sampler_callgraph cg;
	uint64_t regs_mask;
	uint32_t main_pid;	/* its executable is the profile's first mapping */
	char *kernel_build_id;	/* the kernel the samples came from (hex), or NULL */

	struct proc *procs;
	size_t nr_procs, alloc_procs;
	struct idmap proc_ix;
	struct thread *threads;
	size_t nr_threads, alloc_threads;
	struct idmap thread_ix;
	uint64_t gen;

	struct strtab files;	/* "path\0build-id-hex" */
	struct strtab bid_cache;	/* path -> "hex" read from the file, by index */
	char **bid_cache_val;
	size_t alloc_bid_cache_val;
	struct strtab comms;
	struct strtab mkeys;	/* struct mkey bytes */
	struct strtab fkeys;	/* struct fkey bytes */
	struct strtab skeys;	/* struct skey + uint32_t frames[] */
	uint32_t kernel_mkey, unknown_mkey;

	uint64_t *sample_count;	/* by skey index */
	int64_t *sample_period;
	size_t alloc_sample_count, alloc_sample_period;
	uint64_t nr_samples;

	signed char *file_fp;	/* by file index: 1 keeps frame pointers, -1 not, 0 unknown */
	size_t alloc_file_fp;
	bool *chain_fp;
	uint64_t cut_samples;	/* stacks cut where the stack copy ended */
	uint64_t cut_sites;	/* heap sites cut by the recorder's limit */
	struct symbolizer *sym;	/* the caller's (recording_use_symbolizer()); NULL: one per build */
	bool off_cpu;		/* off-CPU intervals are recorded */
	uint64_t last_time;	/* of the latest event */
	bool heap;		/* samples are allocation sites (recording_set_heap()) */
	int64_t *heap_values;	/* HEAP_NR_SAMPLE_TYPES by skey index */
	size_t alloc_heap_values;

	struct unwinder *unwinder;
	struct unwind_frame *uframes;
	uint32_t *frame_buf;
	struct strbuf key;
};

static uint32_t intern_bytes(struct strtab *t, const void *p, size_t n)
{
	int64_t i = strtab_intern(t, p, n);

	if (i > UINT32_MAX)
		BUG("too many distinct keys");
	return (uint32_t)i;
}

static uint32_t intern_mkey(struct recording *r, const struct mkey *k)
{
	return intern_bytes(&r->mkeys, k, sizeof(*k));
}

static void get_mkey(const struct recording *r, uint32_t i, struct mkey *k)
{
	memcpy(k, strtab_get(&r->mkeys, i), sizeof(*k));
}

struct recording *recording_new(enum sampler_callgraph cg, uint64_t regs_mask)
{
	struct recording *r = xcalloc(1, sizeof(*r));
	struct mkey k = { 0 };

	r->cg = cg;
	r->regs_mask = regs_mask;
	strtab_init(&r->files);
	strtab_init(&r->bid_cache);
	strtab_init(&r->comms);
	strtab_init(&r->mkeys);
	strtab_init(&r->fkeys);
	strtab_init(&r->skeys);
	strbuf_init(&r->key, 256);
	k.file = intern_bytes(&r->files, "[kernel.kallsyms]", sizeof("[kernel.kallsyms]"));
	k.kind = MK_KERNEL;
	r->kernel_mkey = intern_mkey(r, &k);
	k.file = intern_bytes(&r->files, "", 1);
	k.kind = MK_UNKNOWN;
	r->unknown_mkey = intern_mkey(r, &k);
	if (cg == SAMPLER_CALLGRAPH_DWARF || regs_mask)
		r->unwinder = unwinder_new();
	if (cg != SAMPLER_CALLGRAPH_FP)
		r->uframes = xcalloc(SAMPLER_MAX_FRAMES, sizeof(*r->uframes));
	r->chain_fp = xcalloc(2 * SAMPLER_MAX_FRAMES, sizeof(*r->chain_fp));
	/* kernel frames, user frames, and one found above a frameless leaf */
	r->frame_buf = xcalloc(2 * SAMPLER_MAX_FRAMES + 1, sizeof(*r->frame_buf));
	return r;
}

void recording_free(struct recording *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr_procs; i++) {
		free(r->procs[i].maps);
		free(r->procs[i].umaps);
	}
	free(r->procs);
	idmap_release(&r->proc_ix);
	free(r->threads);
	idmap_release(&r->thread_ix);
	for (size_t i = 0; i < r->bid_cache.nr && i < r->alloc_bid_cache_val; i++)
		free(r->bid_cache_val[i]);
	free(r->bid_cache_val);
	strtab_release(&r->files);
	strtab_release(&r->bid_cache);
	strtab_release(&r->comms);
	strtab_release(&r->mkeys);
	strtab_release(&r->fkeys);
	strtab_release(&r->skeys);
	free(r->sample_count);
	free(r->sample_period);
	free(r->heap_values);
	unwinder_free(r->unwinder);
	free(r->uframes);
	free(r->file_fp);
	free(r->chain_fp);
	free(r->frame_buf);
	strbuf_release(&r->key);
	free(r->kernel_build_id);
	free(r);
}

uint64_t recording_samples(const struct recording *r)
{
	return r->nr_samples;
}

void recording_set_off_cpu(struct recording *r, bool on)
{
	r->off_cpu = on;
}

uint64_t recording_cut_samples(const struct recording *r)
{
	return r->cut_samples;
}

static struct proc *get_proc(struct recording *r, uint32_t pid)
{
	uint32_t *slot = idmap_slot(&r->proc_ix, pid, true);
	struct proc *p;

	if (*slot)
		return &r->procs[*slot - 1];
	ALLOC_GROW(r->procs, r->nr_procs + 1, r->alloc_procs);
	p = &r->procs[r->nr_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->gen = ++r->gen;
	/* the kernel maps an exec'd program before its interpreter */
	p->exe_next = true;
	*slot = (uint32_t)r->nr_procs;
	return p;
}

static struct proc *find_proc(struct recording *r, uint32_t pid)
{
	uint32_t *slot = idmap_slot(&r->proc_ix, pid, false);

	return slot ? &r->procs[*slot - 1] : NULL;
}

static struct thread *find_thread(struct recording *r, uint32_t tid)
{
	uint32_t *slot = idmap_slot(&r->thread_ix, tid, false);

	return slot ? &r->threads[*slot - 1] : NULL;
}

static uint32_t intern_comm(struct recording *r, const char *comm)
{
	return intern_bytes(&r->comms, comm, strlen(comm));
}

/* A thread's name when no COMM record told us: ask /proc, else "". */
static uint32_t guess_comm(struct recording *r, uint32_t pid, uint32_t tid)
{
	char path[64], buf[64];
	struct thread *leader = tid != pid ? find_thread(r, pid) : NULL;

	if (leader)
		return leader->comm;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	if (read_small_file(path, buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		return intern_comm(r, buf);
	}
	return intern_comm(r, "");
}

#define NO_COMM UINT32_MAX

/* The thread tid, created with name 'comm' (NO_COMM: find one) if new. */
static struct thread *get_thread_named(struct recording *r, uint32_t tid, uint32_t pid,
				       uint32_t comm)
{
	uint32_t *slot = idmap_slot(&r->thread_ix, tid, true);
	struct thread *t;

	if (*slot) {
		t = &r->threads[*slot - 1];
		t->pid = pid;
		if (comm != NO_COMM)
			t->comm = comm;
		return t;
	}
	ALLOC_GROW(r->threads, r->nr_threads + 1, r->alloc_threads);
	*slot = (uint32_t)r->nr_threads + 1;
	t = &r->threads[r->nr_threads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	t->comm = comm != NO_COMM ? comm : guess_comm(r, pid, tid);
	return t;
}

static struct thread *get_thread(struct recording *r, uint32_t tid, uint32_t pid)
{
	return get_thread_named(r, tid, pid, NO_COMM);
}

static const char *file_path(const struct recording *r, uint32_t file);

/* Whether unwinding reads what is mapped there: a file or the vdso. */
static bool map_has_file(const struct recording *r, const struct map *m)
{
	const char *path = file_path(r, m->file);

	return path[0] == '/' || !strcmp(path, "[vdso]");
}

/*
 * Insert [start, end) into p's maps, cutting away what it overlaps. Code
 * without a file (JIT compilers map and remap it all the time) does not
 * change p->gen: the unwinder's session of the process stays.
 */
static void insert_map(struct recording *r, struct proc *p, const struct map *m)
{
	struct map *out = xcalloc(p->nr_maps + 2, sizeof(*out));
	size_t n = 0;
	bool placed = false, files = map_has_file(r, m);

	for (size_t i = 0; i < p->nr_maps; i++) {
		struct map o = p->maps[i];

		if (o.end <= m->start || o.start >= m->end) {
			if (!placed && o.start >= m->end) {
				out[n++] = *m;
				placed = true;
			}
			out[n++] = o;
			continue;
		}
		files |= map_has_file(r, &o);
		if (o.start < m->start) {
			struct map left = o;
			left.end = m->start;
			left.mkey = 0;
			out[n++] = left;
		}
		if (!placed) {
			out[n++] = *m;
			placed = true;
		}
		if (o.end > m->end) {
			struct map right = o;
			right.pgoff += m->end - o.start;
			right.start = m->end;
			right.mkey = 0;
			out[n++] = right;
		}
	}
	if (!placed)
		out[n++] = *m;
	free(p->maps);
	p->maps = out;
	p->nr_maps = n;
	p->alloc_maps = p->nr_maps + 2;
	if (files)
		p->gen = ++r->gen;
}

static const struct map *find_map(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < p->maps[mid].start)
			hi = mid;
		else if (addr >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[mid];
	}
	return NULL;
}

/* The GNU build id of an ELF file, as hex ("" when it has none). */
static const char *file_build_id(struct recording *r, const char *path)
{
	uint32_t i = intern_bytes(&r->bid_cache, path, strlen(path));
	struct strbuf hex = STRBUF_INIT;
	const void *id;
	ssize_t n;
	Elf *elf;
	int fd;

	if (i < r->alloc_bid_cache_val && r->bid_cache_val[i])
		return r->bid_cache_val[i];
	if (i >= r->alloc_bid_cache_val) {
		size_t old = r->alloc_bid_cache_val;
		ALLOC_GROW(r->bid_cache_val, i + 1, r->alloc_bid_cache_val);
		memset(r->bid_cache_val + old, 0,
		       (r->alloc_bid_cache_val - old) * sizeof(*r->bid_cache_val));
	}
	if (path[0] == '/' && (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) >= 0) {
		struct stat st;

		elf_version(EV_CURRENT);
		elf = fstat(fd, &st) || !S_ISREG(st.st_mode) ? NULL :
		      elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (elf) {
			n = dwelf_elf_gnu_build_id(elf, &id);
			if (n > 0 && n <= 64)
				hex_encode(&hex, id, (size_t)n);
			elf_end(elf);
		}
		close(fd);
	}
	r->bid_cache_val[i] = strbuf_detach(&hex, NULL);
	return r->bid_cache_val[i];
}

static uint32_t intern_file(struct recording *r, const char *path,
			    const unsigned char *build_id, unsigned build_id_size)
{
	struct strbuf *k = &r->key;

	strbuf_reset(k);
	strbuf_addstr(k, path);
	strbuf_addch(k, '\0');
	if (build_id && build_id_size)
		hex_encode(k, build_id, build_id_size);
	else
		strbuf_addstr(k, file_build_id(r, path));
	return intern_bytes(&r->files, k->buf, k->len);
}

static const char *file_path(const struct recording *r, uint32_t file)
{
	return strtab_get(&r->files, file);
}

static const char *file_build_id_hex(const struct recording *r, uint32_t file)
{
	const char *s = strtab_get(&r->files, file);

	return s + strlen(s) + 1;
}

static void add_map(struct recording *r, uint32_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, uint32_t file)
{
	struct map m = { start, start + len, pgoff, file, 0 };
	struct proc *p;

	if (!len || m.end < start)
		return;
	p = get_proc(r, pid);
	insert_map(r, p, &m);
	if (p->exe_next) {
		p->exe = m;
		p->has_exe = true;
		p->exe_next = false;
	}
}

void recording_set_main(struct recording *r, pid_t pid)
{
	r->main_pid = (uint32_t)pid;
}

void recording_use_symbolizer(struct recording *r, struct symbolizer *sym)
{
	r->sym = sym;
}

void recording_set_kernel_build_id(struct recording *r, const char *hex)
{
	free(r->kernel_build_id);
	r->kernel_build_id = hex && *hex ? xstrdup(hex) : NULL;
}

/* ---- events ----------------------------------------------------------------- */

static uint32_t frame_id(struct recording *r, uint32_t mkey, uint64_t addr, bool is_return)
{
	struct fkey k = { addr, mkey, is_return };

	return intern_bytes(&r->fkeys, &k, sizeof(k));
}

static uint32_t user_frame(struct recording *r, struct proc *p, uint64_t addr,
			   bool is_return)
{
	struct map *m = (struct map *)find_map(p, addr);

	if (!m)
		return frame_id(r, r->unknown_mkey, addr, is_return);
	if (!m->mkey) {
		struct mkey k = { m->start, m->end, m->pgoff, m->file, MK_FILE };
		m->mkey = intern_mkey(r, &k);
	}
	return frame_id(r, m->mkey, addr, is_return);
}

static const struct unwind_map *proc_umaps(struct recording *r, struct proc *p, size_t *nr)
{
	if (p->umaps_gen != p->gen || !p->umaps) {
		p->nr_umaps = 0;
		for (size_t i = 0; i < p->nr_maps; i++) {
			ALLOC_GROW(p->umaps, p->nr_umaps + 1, p->alloc_umaps);
			p->umaps[p->nr_umaps++] = (struct unwind_map){
				p->maps[i].start, p->maps[i].end, p->maps[i].pgoff,
				file_path(r, p->maps[i].file),
			};
		}
		p->umaps_gen = p->gen;
	}
	*nr = p->nr_umaps;
	return p->umaps;
}

static size_t dwarf_user_frames(struct recording *r, struct proc *p,
				const struct sampler_event *ev, uint32_t *out)
{
	struct unwind_target t = { (pid_t)ev->pid, (pid_t)ev->tid, p->gen, NULL, 0 };
	struct unwind_state st = {
		ev->sample.regs.regs, ev->sample.regs.nr, r->regs_mask,
		ev->sample.stack, ev->sample.stack_size, ev->sample.stack_full,
	};
	int n;

	if (!ev->sample.regs.valid)
		return 0;
	t.maps = proc_umaps(r, p, &t.nr_maps);
	n = unwinder_unwind(r->unwinder, &t, &st, r->uframes, SAMPLER_MAX_FRAMES);
	for (int i = 0; i < n; i++)
		out[i] = user_frame(r, p, r->uframes[i].pc, r->uframes[i].is_return);
	return n > 0 ? (size_t)n : 0;
}

/*
 * Frame pointers: the caller of the user leaf when the kernel's walk
 * skipped it (see unwinder_leaf_caller()). 'ips' are the sample's user
 * entries, the leaf first. Returns false when nothing is missing: the
 * leaf set up its frame, its module has no CFI, or the return address
 * found is the walk's next entry already or lies in no mapping.
 */
static bool fp_leaf_caller(struct recording *r, struct proc *p,
			   const struct sampler_event *ev, const uint64_t *ips,
			   uint32_t n, uint64_t *ret)
{
	struct unwind_target t = { (pid_t)ev->pid, (pid_t)ev->tid, p->gen, NULL, 0 };
	struct unwind_state st = {
		ev->sample.regs.regs, ev->sample.regs.nr, r->regs_mask,
		ev->sample.stack, ev->sample.stack_size, ev->sample.stack_full,
	};

	if (!r->unwinder || !ev->sample.regs.valid || !n)
		return false;
	t.maps = proc_umaps(r, p, &t.nr_maps);
	if (unwinder_leaf_caller(r->unwinder, &t, &st, ips[0], ret) <= 0)
		return false;
	return (n < 2 || *ret != ips[1]) && find_map(p, *ret);
}

/*
 * Frame pointers: the kernel's chain of user frames, with the caller of a
 * frameless leaf. Returns the number of frames written to out.
 */
static size_t fp_user_frames(struct recording *r, struct proc *p,
			     const struct sampler_event *ev, uint32_t *out)
{
	const uint64_t *ips = ev->sample.ips + ev->sample.nr_kernel;
	uint32_t nu = ev->sample.nr_ips - ev->sample.nr_kernel;
	size_t n = 0;
	uint64_t ret;

	for (uint32_t i = 0; i < nu; i++) {
		out[n++] = user_frame(r, p, ips[i], i > 0);
		if (!i && fp_leaf_caller(r, p, ev, ips, nu, &ret))
			out[n++] = user_frame(r, p, ret, true);
	}
	return n;
}

/* Whether the code at addr keeps frame pointers, judged once per file. */
static bool keeps_fp(struct recording *r, struct proc *p, uint64_t addr)
{
	const struct map *m = find_map(p, addr);

	if (!m)
		return true;	/* no file: no CFI either, the chain is all there is */
	if (m->file >= r->alloc_file_fp) {
		size_t old = r->alloc_file_fp;

		ALLOC_GROW(r->file_fp, m->file + 1, r->alloc_file_fp);
		memset(r->file_fp + old, 0, r->alloc_file_fp - old);
	}
	if (!r->file_fp[m->file])
		r->file_fp[m->file] = unwinder_file_keeps_fp(r->unwinder, file_path(r, m->file)) ? 1 : -1;
	return r->file_fp[m->file] > 0;
}

/*
 * --call-graph auto: the kernel's chain as it is when all of it lies in
 * code that keeps frame pointers (with the caller of a frameless leaf),
 * else the hybrid of CFI through the copy and the chain above it.
 * Returns the number of user frames written to out; *cut says why the
 * stack stops early (0 when it does not).
 */
static size_t hybrid_user_frames(struct recording *r, struct proc *p,
				 const struct sampler_event *ev, uint32_t *out, uint32_t *cut)
{
	const uint64_t *ips = ev->sample.ips + ev->sample.nr_kernel;
	uint32_t nu = ev->sample.nr_ips - ev->sample.nr_kernel;
	struct unwind_target t = { (pid_t)ev->pid, (pid_t)ev->tid, p->gen, NULL, 0 };
	struct unwind_state st = {
		ev->sample.regs.regs, ev->sample.regs.nr, r->regs_mask,
		ev->sample.stack, ev->sample.stack_size, ev->sample.stack_full,
	};
	struct unwind_chain chain = { ips, r->chain_fp, (int)nu };
	enum unwind_end end;
	bool all_fp = nu > 0;
	size_t n = 0;
	int nf;

	for (uint32_t i = 0; i < nu; i++)
		all_fp &= r->chain_fp[i] = keeps_fp(r, p, ips[i]);
	if (all_fp || !r->unwinder || !ev->sample.regs.valid)
		return fp_user_frames(r, p, ev, out);
	t.maps = proc_umaps(r, p, &t.nr_maps);
	nf = unwinder_hybrid(r->unwinder, &t, &st, &chain, r->uframes, SAMPLER_MAX_FRAMES, &end);
	for (int i = 0; i < nf; i++)
		out[n++] = user_frame(r, p, r->uframes[i].pc, r->uframes[i].is_return);
	if (end == UNWIND_SHORT_COPY)
		*cut = end;
	return n;
}

static void grow_counts(struct recording *r, uint32_t i)
{
	size_t old = r->alloc_sample_count;

	if (i < old)
		return;
	ALLOC_GROW(r->sample_count, i + 1, r->alloc_sample_count);
	r->sample_period = xrealloc(r->sample_period,
				    r->alloc_sample_count * sizeof(*r->sample_period));
	memset(r->sample_count + old, 0, (r->alloc_sample_count - old) * sizeof(*r->sample_count));
	memset(r->sample_period + old, 0, (r->alloc_sample_count - old) * sizeof(*r->sample_period));
}

/*
 * The stack of a sample (or of a thread leaving its CPU) as a distinct
 * sample key; returns its index, its counts grown to hold it.
 */
static uint32_t sample_key(struct recording *r, const struct sampler_event *ev, bool off_cpu)
{
	struct proc *p = get_proc(r, ev->pid);
	struct thread *t = get_thread(r, ev->tid, ev->pid);
	uint32_t *fr = r->frame_buf;
	size_t n = 0;
	struct skey head;
	uint32_t i, cut = 0;

	for (i = 0; i < ev->sample.nr_kernel; i++)
		fr[n++] = frame_id(r, r->kernel_mkey, ev->sample.ips[i], i > 0);
	if (r->cg == SAMPLER_CALLGRAPH_DWARF) {
		size_t nu = dwarf_user_frames(r, p, ev, fr + n);
		if (!nu && !ev->sample.kernel_ip)
			fr[nu++ + n] = user_frame(r, p, ev->sample.ip, false);
		n += nu;
	} else if (r->cg == SAMPLER_CALLGRAPH_AUTO) {
		n += hybrid_user_frames(r, p, ev, fr + n, &cut);
	} else {
		n += fp_user_frames(r, p, ev, fr + n);
	}
	if (!n)
		fr[n++] = ev->sample.kernel_ip ?
			  frame_id(r, r->kernel_mkey, ev->sample.ip, false) :
			  user_frame(r, p, ev->sample.ip, false);

	head = (struct skey){ ev->pid, ev->tid, t->comm, (uint32_t)n, cut, off_cpu };
	r->cut_samples += cut && !off_cpu;	/* a share of the clock's samples */
	strbuf_reset(&r->key);
	strbuf_add(&r->key, &head, sizeof(head));
	strbuf_add(&r->key, fr, n * sizeof(*fr));
	i = intern_bytes(&r->skeys, r->key.buf, r->key.len);
	grow_counts(r, i);
	return i;
}

static int on_sample(struct recording *r, const struct sampler_event *ev)
{
	uint32_t i = sample_key(r, ev, false);

	r->sample_count[i]++;
	r->sample_period[i] = sat_add(r->sample_period[i],
				      (int64_t)(ev->sample.period & INT64_MAX));
	r->nr_samples++;
	return 0;
}

void recording_set_heap(struct recording *r)
{
	r->heap = true;
}

void recording_add_heap(struct recording *r, pid_t pid, const uint64_t *pcs, uint32_t n, bool cut,
			const char *op, const int64_t *values)
{
	struct proc *p = get_proc(r, (uint32_t)pid);
	uint32_t *fr = r->frame_buf;
	struct skey head;
	uint32_t i, k = 0;
	int64_t *v;

	/* every frame is a return address: the call into the allocator, and its callers */
	for (i = 0; i < n && k < 2 * SAMPLER_MAX_FRAMES; i++)
		fr[k++] = user_frame(r, p, pcs[i], true);
	head = (struct skey){ (uint32_t)pid, (uint32_t)pid, intern_comm(r, op), k,
			      cut ? CUT_STACK_LIMIT : 0, 0 };
	r->cut_sites += cut;
	strbuf_reset(&r->key);
	strbuf_add(&r->key, &head, sizeof(head));
	strbuf_add(&r->key, fr, k * sizeof(*fr));
	i = intern_bytes(&r->skeys, r->key.buf, r->key.len);
	grow_counts(r, i);
	if (((size_t)i + 1) * HEAP_NR_SAMPLE_TYPES > r->alloc_heap_values) {
		size_t old = r->alloc_heap_values;

		ALLOC_GROW(r->heap_values, ((size_t)i + 1) * HEAP_NR_SAMPLE_TYPES, r->alloc_heap_values);
		memset(r->heap_values + old, 0, (r->alloc_heap_values - old) * sizeof(*r->heap_values));
	}
	v = r->heap_values + (size_t)i * HEAP_NR_SAMPLE_TYPES;
	for (int t = 0; t < HEAP_NR_SAMPLE_TYPES; t++)
		v[t] = sat_add(v[t], values[t]);
	r->sample_count[i]++;
	r->nr_samples++;
}

/* The thread's time off CPU ends at 'now': charge it to the stack it left at. */
static void back_on_cpu(struct recording *r, struct thread *t, uint64_t now)
{
	uint32_t i = t->off_key;

	if (!i)
		return;
	t->off_key = 0;
	if (now > t->off_since) {
		r->sample_count[i]++;
		r->sample_period[i] = sat_add(r->sample_period[i],
					      (int64_t)((now - t->off_since) & INT64_MAX));
	}
}

/* A thread leaves its CPU: it is off CPU from now at this stack. */
static void on_off_cpu(struct recording *r, const struct sampler_event *ev)
{
	uint32_t i = sample_key(r, ev, true);
	struct thread *t = get_thread(r, ev->tid, ev->pid);

	back_on_cpu(r, t, ev->time);	/* a switch in we did not see */
	t->off_key = i;
	t->off_since = ev->time;
}

static void on_fork(struct recording *r, const struct sampler_event *ev)
{
	struct thread *parent = find_thread(r, ev->task.ptid);
	uint32_t comm = parent ? parent->comm : NO_COMM;

	if (ev->pid != ev->task.ppid) {
		/* a new process: it starts with a copy of its parent's maps */
		struct proc *child = get_proc(r, ev->pid);
		struct proc *pp = find_proc(r, ev->task.ppid);

		child->nr_maps = 0;
		if (pp && pp->nr_maps) {
			ALLOC_GROW(child->maps, pp->nr_maps, child->alloc_maps);
			memcpy(child->maps, pp->maps, pp->nr_maps * sizeof(*pp->maps));
			child->nr_maps = pp->nr_maps;
		}
		if (pp) {
			child->exe = pp->exe;
			child->has_exe = pp->has_exe;
			child->exe_next = pp->exe_next;
		}
		child->gen = ++r->gen;
		if (r->unwinder)
			unwinder_forget(r->unwinder, (pid_t)ev->pid);
	}
	get_thread_named(r, ev->tid, ev->pid, comm);
}

int recording_event(const struct sampler_event *ev, void *data)
{
	struct recording *r = data;
	struct proc *p;
	struct thread *t;

	if (ev->time > r->last_time)
		r->last_time = ev->time;
	switch (ev->type) {
	case SAMPLER_SAMPLE:
		return on_sample(r, ev);
	case SAMPLER_OFF_CPU:
		if (r->off_cpu)
			on_off_cpu(r, ev);
		break;
	case SAMPLER_SWITCH_IN:
		if (r->off_cpu && (t = find_thread(r, ev->tid)))
			back_on_cpu(r, t, ev->time);
		break;
	case SAMPLER_MMAP:
		if (!(ev->mmap.prot & 4))	/* PROT_EXEC */
			break;
		add_map(r, ev->pid, ev->mmap.start, ev->mmap.len, ev->mmap.pgoff,
			intern_file(r, ev->mmap.filename, ev->mmap.build_id,
				    ev->mmap.build_id_size));
		break;
	case SAMPLER_COMM:
		get_thread_named(r, ev->tid, ev->pid, intern_comm(r, ev->comm.comm));
		if (ev->comm.exec) {
			/* exec replaced the whole address space */
			p = get_proc(r, ev->pid);
			p->nr_maps = 0;
			p->gen = ++r->gen;
			p->has_exe = false;
			p->exe_next = true;
		}
		break;
	case SAMPLER_FORK:
		on_fork(r, ev);
		break;
	case SAMPLER_EXIT:
		if (r->off_cpu && (t = find_thread(r, ev->tid)))
			t->off_key = 0;		/* exiting, not blocked */
		if (ev->pid == ev->tid && r->unwinder)
			unwinder_forget(r->unwinder, (pid_t)ev->pid);
		break;
	}
	return 0;
}

/* ---- a running process ----------------------------------------------------- */

/*
 * One line of /proc/PID/maps:
 * "start-end perms offset dev inode   path". Returns false for lines that
 * are not executable file (or special) mappings.
 */
static bool parse_maps_line(char *line, uint64_t *start, uint64_t *end,
			    uint64_t *pgoff, const char **path)
{
	char perms[8];
	unsigned long long s, e, off, inode;
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %llu %n", &s, &e, perms, &off,
		   &inode, &pos) < 5 || !pos)
		return false;
	if (strlen(perms) < 3 || perms[2] != 'x' || e <= s)
		return false;
	*start = s;
	*end = e;
	*pgoff = off;
	*path = line + pos;
	return **path != '\0';
}

/*
 * The executable mappings listed in 'text' (/proc/PID/maps' format; cut
 * into lines in place) become pid's. The executable's first code mapping
 * is the one of file 'exe', or with exe NULL the first file's.
 */
static void add_maps_text(struct recording *r, pid_t pid, char *text, const char *exe)
{
	char *line, *next;

	get_proc(r, (uint32_t)pid)->has_exe = false;
	for (line = text; *line; line = next) {
		uint64_t start, end, pgoff;
		const char *file;
		struct proc *p;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (!parse_maps_line(line, &start, &end, &pgoff, &file))
			continue;
		p = get_proc(r, (uint32_t)pid);
		if (!exe && file[0] == '/')
			exe = file;
		p->exe_next = !p->has_exe && exe && *exe && !strcmp(file, exe);
		add_map(r, (uint32_t)pid, start, end - start, pgoff,
			intern_file(r, file, NULL, 0));
	}
	get_proc(r, (uint32_t)pid)->exe_next = false;
}

void recording_add_maps(struct recording *r, pid_t pid, char *maps)
{
	add_maps_text(r, pid, maps, NULL);
}

int recording_add_process(struct recording *r, pid_t pid)
{
	char path[64], buf[64], exe[4096];
	struct strbuf sb = STRBUF_INIT;
	DIR *dir;
	struct dirent *de;
	ssize_t exe_len;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	exe_len = readlink(path, exe, sizeof(exe) - 1);
	exe[exe_len > 0 ? exe_len : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (read_file(&sb, path, 64 << 20)) {
		strbuf_release(&sb);
		return -1;
	}
	add_maps_text(r, pid, sb.buf, exe);
	strbuf_release(&sb);

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return error("cannot read '%s': %s", path, strerror(errno));
	while ((de = readdir(dir))) {
		char cpath[300];
		long tid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		tid = atol(de->d_name);
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%ld/comm", (int)pid, tid);
		if (read_small_file(cpath, buf, sizeof(buf)) < 0)
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		get_thread_named(r, (uint32_t)tid, (uint32_t)pid, intern_comm(r, buf));
	}
	closedir(dir);
	return 0;
}

/* ---- the profile -------------------------------------------------------------- */

/* Frames one address may expand to (inline chain and its function). */
#define SYM_MAX_INLINE 64

/* The running kernel's build id, from /sys/kernel/notes ("" when unknown). */
static void kernel_build_id(struct strbuf *hex)
{
	unsigned char buf[4096];
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t off = 0;

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	while (n > 0 && off + 12 <= (size_t)n) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		if (namesz > (size_t)n || descsz > (size_t)n)
			return;
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (desc_off + descsz > (size_t)n)
			return;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name_off, "GNU", 4)) {
			hex_encode(hex, buf + desc_off, descsz);
			return;
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
}

struct mapping_state {
	uint64_t id;		/* profile mapping id, 0 = unused */
	uint64_t lo, hi;	/* address range of synthetic mappings */
	bool functions, filenames, line_numbers, inline_frames;
};

/* What the symbolizer said about one frame: lines in a shared pool. */
struct frame_lines {
	size_t off;
	uint32_t n;
};

/* One address to look up: which DSO, which address, for which frame. */
struct lookup {
	uint32_t group;		/* mkey file index; KERNEL_GROUP for the kernel */
	uint32_t frame;
	uint64_t addr;		/* file offset (or kernel address) to look up */
};
#define KERNEL_GROUP UINT32_MAX

static int lookup_cmp(const void *a, const void *b)
{
	const struct lookup *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

struct builder {
	struct recording *r;
	struct profile *p;
	uint32_t main_mkey;		/* the main executable's code, 0 when unknown */
	size_t nm, nf;
	struct mapping_state *ms;	/* by mkey */
	struct frame_lines *fl;		/* by frame */
	struct pf_line *lines;
	size_t nr_lines, alloc_lines;
	struct strbuf kernel_build_id;
	bool foreign_kernel;		/* recorded on another kernel: no kallsyms lookups */
	struct strbuf kernel_kallsyms;	/* that kernel's kallsyms from perf's cache, if kept */
	char *vdso_path;		/* our vdso, copied to a file */
};

static void get_fkey(const struct recording *r, size_t f, struct fkey *fk)
{
	memcpy(fk, strtab_get(&r->fkeys, (int64_t)f), sizeof(*fk));
}

/*
 * The mapping key of the main process's executable, interned now when no
 * sample landed in it (it is listed all the same); 0 when unknown.
 */
static uint32_t main_mkey(struct recording *r)
{
	struct proc *p = r->main_pid ? find_proc(r, r->main_pid) : NULL;
	struct mkey k;

	if (!p || !p->has_exe)
		return 0;
	k = (struct mkey){ p->exe.start, p->exe.end, p->exe.pgoff, p->exe.file, MK_FILE };
	return intern_mkey(r, &k);
}

static void add_mapping(struct builder *b, uint32_t mkey)
{
	struct recording *r = b->r;
	struct mapping_state *s = &b->ms[mkey];
	struct mkey mk;

	if (s->id)
		return;
	get_mkey(r, mkey, &mk);
	if (mk.kind == MK_FILE)
		s->id = profile_add_mapping(b->p, mk.start, mk.end, mk.pgoff,
					    file_path(r, mk.file), file_build_id_hex(r, mk.file));
	else
		s->id = profile_add_mapping(b->p, s->lo, s->hi, 0, file_path(r, mk.file),
					    mk.kind == MK_KERNEL ? b->kernel_build_id.buf : "");
}

static void build_mappings(struct builder *b)
{
	struct recording *r = b->r;
	struct fkey fk;

	/* the address range each synthetic mapping must cover */
	for (size_t f = 1; f < b->nf; f++) {
		struct mapping_state *s;

		get_fkey(r, f, &fk);
		if (fk.mkey != r->kernel_mkey && fk.mkey != r->unknown_mkey)
			continue;
		s = &b->ms[fk.mkey];
		if (!s->hi || fk.addr < s->lo)
			s->lo = fk.addr;
		if (fk.addr >= s->hi)
			s->hi = fk.addr + 1;
	}
	if (b->ms[r->kernel_mkey].hi) {
		kernel_build_id(&b->kernel_build_id);
		if (r->kernel_build_id &&
		    strcasecmp(r->kernel_build_id, b->kernel_build_id.buf)) {
			/* perf record keeps the kallsyms of the kernel it ran on */
			if (sym_build_id_cache(r->kernel_build_id, "kallsyms", &b->kernel_kallsyms)) {
				warning("the samples come from another kernel (build id '%s', this one's is '%s'); kernel addresses stay unsymbolized",
					r->kernel_build_id,
					b->kernel_build_id.len ? b->kernel_build_id.buf : "unknown");
				b->foreign_kernel = true;
			}
			strbuf_reset(&b->kernel_build_id);
			strbuf_addstr(&b->kernel_build_id, r->kernel_build_id);
		}
	}

	/* the main executable first (pprof's convention), then in order of first appearance */
	if (b->main_mkey)
		add_mapping(b, b->main_mkey);
	for (size_t f = 1; f < b->nf; f++) {
		get_fkey(r, f, &fk);
		add_mapping(b, fk.mkey);
	}
}

/* The symbolizer's frames for one address, as profile lines in the pool. */
static void add_lines(struct builder *b, const struct sym_frame *sf, int n,
		      struct frame_lines *out, struct mapping_state *s)
{
	out->off = b->nr_lines;
	out->n = (uint32_t)n;
	ALLOC_GROW(b->lines, b->nr_lines + (size_t)n, b->alloc_lines);
	for (int i = 0; i < n; i++) {
		struct pf_line *ln = &b->lines[b->nr_lines++];

		ln->function_id = profile_add_function(b->p, sf[i].name, sf[i].system_name,
						       sf[i].file, sf[i].start_line);
		ln->line = sf[i].line;
		ln->column = 0;
		s->functions = true;
		s->filenames |= sf[i].file[0] != '\0';
		s->line_numbers |= sf[i].line > 0;
	}
}

/*
 * Resolve every frame: gather (DSO, address) pairs, sort them so each
 * DSO's addresses come together and each distinct address is looked up
 * once. A return address is looked up one byte back, inside the call.
 */
static struct sym_dso *open_dso(struct builder *b, struct symbolizer *sym, uint32_t group)
{
	const char *path, *id;

	if (group == KERNEL_GROUP)
		return b->kernel_kallsyms.len ? symbolizer_kallsyms(sym, b->kernel_kallsyms.buf)
					      : symbolizer_kernel(sym);
	path = file_path(b->r, group);
	if (!strcmp(path, "[vdso]")) {
		if (!b->vdso_path)
			b->vdso_path = vdso_copy();
		return b->vdso_path ? symbolizer_dso(sym, b->vdso_path, NULL) : NULL;
	}
	id = file_build_id_hex(b->r, group);
	return symbolizer_dso(sym, path, *id ? id : NULL);
}

static void symbolize_frames(struct builder *b)
{
	struct recording *r = b->r;
	struct lookup *lk = xcalloc(b->nf ? b->nf : 1, sizeof(*lk));
	struct sym_frame sf[SYM_MAX_INLINE];
	struct symbolizer *sym = r->sym ? r->sym : symbolizer_new();
	struct sym_dso *dso = NULL;
	uint32_t dso_group = 0;
	bool opened = false;
	size_t n = 0;

	for (size_t f = 1; f < b->nf; f++) {
		struct fkey fk;
		struct mkey mk;

		get_fkey(r, f, &fk);
		if (fk.mkey == r->unknown_mkey)
			continue;
		if (fk.mkey == r->kernel_mkey) {
			if (b->foreign_kernel)
				continue;
			lk[n++] = (struct lookup){ KERNEL_GROUP, (uint32_t)f, fk.addr - fk.is_return };
			continue;
		}
		get_mkey(r, fk.mkey, &mk);
		if (file_path(r, mk.file)[0] != '/' && strcmp(file_path(r, mk.file), "[vdso]"))
			continue;	/* anonymous code: no file to read */
		lk[n++] = (struct lookup){
			mk.file, (uint32_t)f, fk.addr - mk.start + mk.pgoff - fk.is_return,
		};
	}
	qsort(lk, n, sizeof(*lk), lookup_cmp);

	for (size_t i = 0; i < n; ) {
		size_t j = i + 1;
		struct frame_lines res;
		struct fkey fk;
		int got;

		if (!opened || dso_group != lk[i].group) {
			dso_group = lk[i].group;
			dso = open_dso(b, sym, dso_group);
			opened = true;
		}
		while (j < n && lk[j].group == lk[i].group && lk[j].addr == lk[i].addr)
			j++;
		got = dso ? sym_lookup(dso, lk[i].addr, sf, (int)ARRAY_SIZE(sf)) : 0;
		get_fkey(r, lk[i].frame, &fk);
		add_lines(b, sf, got > 0 ? got : 0, &res, &b->ms[fk.mkey]);
		/* with DWARF, every lookup in the DSO expanded inline chains */
		if (dso)
			b->ms[fk.mkey].inline_frames |= sym_dso_has_dwarf(dso);
		for (; i < j; i++)
			b->fl[lk[i].frame] = res;
	}
	if (sym != r->sym)
		symbolizer_free(sym);
	if (b->vdso_path) {
		unlink(b->vdso_path);
		free(b->vdso_path);
		b->vdso_path = NULL;
	}
	free(lk);
}

int recording_build(struct recording *r, struct profile *p, const struct recording_info *info)
{
	uint32_t main_key = main_mkey(r);
	struct builder b = {
		.r = r, .p = p, .main_mkey = main_key, .nm = r->mkeys.nr, .nf = r->fkeys.nr,
		.kernel_build_id = STRBUF_INIT,
		.kernel_kallsyms = STRBUF_INIT,
	};
	size_t ns = r->skeys.nr;
	uint64_t *loc_of = xcalloc(b.nf ? b.nf : 1, sizeof(*loc_of));
	uint64_t *locs = xcalloc(2 * SAMPLER_MAX_FRAMES + 1, sizeof(*locs));
	int64_t total_period = 0;
	uint64_t total_count = 0;
	int64_t k_pid, k_tid, k_comm, k_unwind;

	/* threads still off CPU: until the last event */
	for (size_t t = 0; r->off_cpu && t < r->nr_threads; t++)
		back_on_cpu(r, &r->threads[t], r->last_time);

	b.ms = xcalloc(b.nm ? b.nm : 1, sizeof(*b.ms));
	b.fl = xcalloc(b.nf ? b.nf : 1, sizeof(*b.fl));

	if (r->heap)
		heap_profile_set_types(p, info->freq);
	else
		profile_add_sample_type(p, "samples", "count");
	if (r->heap)
		;
	else if (info->period_is_time)
		profile_add_sample_type(p, "cpu", "nanoseconds");
	else
		profile_add_sample_type(p, info->event, "count");
	if (r->off_cpu) {
		profile_add_sample_type(p, RECORD_OFF_CPU, "nanoseconds");
		profile_add_sample_type(p, RECORD_WALL, "nanoseconds");
		p->default_sample_type = profile_str(p, "samples");
	}
	if (!r->heap)
		p->period_type = p->sample_type[1];
	p->time_nanos = info->time_nanos;
	p->duration_nanos = info->duration_nanos;
	profile_add_comment(p, info->event);
	if (info->command) {
		char *c = xstrfmt("command: %s", info->command);

		profile_add_comment(p, c);
		free(c);
	}

	build_mappings(&b);
	symbolize_frames(&b);
	for (size_t f = 1; f < b.nf; f++) {
		struct fkey fk;

		get_fkey(r, f, &fk);
		loc_of[f] = profile_add_location(p, b.ms[fk.mkey].id, fk.addr,
						 b.fl[f].n ? b.lines + b.fl[f].off : NULL,
						 b.fl[f].n);
	}
	for (size_t m = 0; m < b.nm; m++) {
		struct pf_mapping *pm;

		if (!b.ms[m].id)
			continue;
		pm = &p->mappings[b.ms[m].id - 1];
		pm->has_functions = b.ms[m].functions;
		pm->has_filenames = b.ms[m].filenames;
		pm->has_line_numbers = b.ms[m].line_numbers;
		pm->has_inline_frames = b.ms[m].inline_frames;
	}

	k_pid = profile_str(p, "pid");
	k_tid = profile_str(p, "tid");
	k_comm = profile_str(p, "comm");
	k_unwind = r->cut_samples || r->cut_sites ? profile_str(p, RECORD_LABEL_UNWIND) : 0;
	for (size_t i = 1; i < ns; i++) {
		const char *key = strtab_get(&r->skeys, (int64_t)i);
		struct skey head;
		struct pf_label labels[4];
		int64_t values[4] = { 0 };

		memcpy(&head, key, sizeof(head));
		for (uint32_t j = 0; j < head.nframes; j++) {
			uint32_t f;
			memcpy(&f, key + sizeof(head) + j * sizeof(f), sizeof(f));
			locs[j] = loc_of[f];
		}
		labels[0] = (struct pf_label){ .key = k_pid, .num = head.pid };
		labels[1] = (struct pf_label){ .key = k_tid, .num = head.tid };
		labels[2] = (struct pf_label){
			.key = k_comm,
			.str = profile_str(p, strtab_get(&r->comms, head.comm)),
		};
		if (head.cut)
			labels[3] = (struct pf_label){
				.key = k_unwind,
				.str = profile_str(p, head.cut == CUT_STACK_LIMIT ? RECORD_UNWIND_STACK_LIMIT :
						   RECORD_UNWIND_SHORT),
			};
		if (r->heap) {
			/* an allocation site: its values, labels pid, op and maybe unwind */
			labels[1] = (struct pf_label){
				.key = profile_str(p, HEAP_LABEL_OP), .str = labels[2].str,
			};
			if (head.cut)
				labels[2] = labels[3];
			if (!r->sample_count[i])
				continue;
			profile_add_sample(p, locs, head.nframes,
					   r->heap_values + i * HEAP_NR_SAMPLE_TYPES, labels,
					   head.cut ? 3 : 2);
			continue;
		}
		if (head.off_cpu) {
			/* off CPU: no clock sample, the time blocked; wall time too */
			if (!r->sample_count[i])
				continue;
			values[2] = values[3] = r->sample_period[i];
		} else {
			values[0] = (int64_t)r->sample_count[i];
			values[1] = r->sample_period[i];
			values[3] = info->period_is_time ? values[1] :
				    (int64_t)r->sample_count[i] * (info->freq ? 1000000000 / info->freq : 0);
			total_count += r->sample_count[i];
			total_period = sat_add(total_period, values[1]);
		}
		profile_add_sample(p, locs, head.nframes, values, labels, head.cut ? 4 : 3);
	}
	if (r->heap)
		;
	else if (info->period_is_time)
		p->period = info->freq ? 1000000000 / info->freq : 0;
	else
		p->period = total_count ? total_period / (int64_t)total_count : 0;

	strbuf_release(&b.kernel_build_id);
	strbuf_release(&b.kernel_kallsyms);
	free(b.lines);
	free(b.fl);
	free(b.ms);
	free(locs);
	free(loc_of);
	return profile_validate(p);
}

/* ---- running a recording ----------------------------------------------------- */

struct run {
	const struct record_options *o;
	struct sampler *s;
	struct recording *rec;
	int sigfd;
	pid_t child;		/* the command we started; 0 when attached */
	int pidfd;		/* attached: readable once the target exits; -1 if unknown */
	int wait_status;
	bool child_done, term_sent, stop, interrupted;
	bool cancel_seen;	/* hl_cancel() was passed on (or came from our own signal) */
	bool cancel_killed;
	uint64_t start_ns, deadline_ns, cancel_ns;
};

static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD };

/* What the child reports through err_fd when it cannot enter o->dir. */
#define CHDIR_FAILED 0x10000

static void child_exec(const struct record_options *o, const sigset_t *mask, int go_fd,
		       int err_fd)
{
	char go;
	ssize_t n;
	int err;

	sigprocmask(SIG_SETMASK, mask, NULL);
	/* wait until the events are open: they start counting at exec */
	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(HL_EXIT_NOT_FOUND);	/* the parent gave up */
	if (o->dir && chdir(o->dir)) {
		err = CHDIR_FAILED | errno;
		goto fail;
	}
	if (o->discard_stdout || o->stdout_file) {
		int fd = open(o->stdout_file ? o->stdout_file : "/dev/null",
			      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

		if (fd < 0 || dup2(fd, 1) < 0) {
			err = errno;
			goto fail;
		}
	}
	if (o->stderr_file) {
		int fd = open(o->stderr_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);

		if (fd < 0 || dup2(fd, 2) < 0) {
			err = errno;
			goto fail;
		}
	}
	execvp(o->argv[0], o->argv);
	err = errno;
fail:
	if (write(err_fd, &err, sizeof(err)) < 0)
		_exit(HL_EXIT_NOT_EXECUTABLE);
	_exit(err == ENOENT ? HL_EXIT_NOT_FOUND : HL_EXIT_NOT_EXECUTABLE);
}

static int exec_error(const struct record_options *o, int err)
{
	if (err & CHDIR_FAILED) {
		error("cannot enter '%s': %s", o->dir, strerror(err & ~CHDIR_FAILED));
		return -HL_EXIT_NOT_EXECUTABLE;
	}
	if (err == ENOENT) {
		error("cannot run '%s': command not found", o->argv[0]);
		return -HL_EXIT_NOT_FOUND;
	}
	error("cannot run '%s': %s", o->argv[0], strerror(err));
	return -HL_EXIT_NOT_EXECUTABLE;
}

static int start_command(struct run *run, const sigset_t *oldmask)
{
	int go[2], ep[2], err = 0, ret;
	ssize_t n;

	if (pipe2(go, O_CLOEXEC) < 0)
		return error("cannot create a pipe: %s", strerror(errno));
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return error("cannot create a pipe: %s", strerror(errno));
	}
	fflush(NULL);
	run->child = fork();
	if (run->child < 0) {
		ret = error("cannot fork: %s", strerror(errno));
		run->child = 0;
		goto out_close;
	}
	if (!run->child) {
		close(go[1]);
		close(ep[0]);
		child_exec(run->o, oldmask, go[0], ep[1]);
	}
	close(go[0]);
	close(ep[1]);
	go[0] = ep[1] = -1;

	ret = sampler_add_task(run->s, run->child, SAMPLER_ENABLE_ON_EXEC);
	if (ret == 1)
		ret = error("the command's process vanished before it could run");
	if (ret < 0)
		goto out_reap;

	if (write(go[1], "g", 1) != 1) {
		ret = error("cannot start the command: %s", strerror(errno));
		goto out_reap;
	}
	close(go[1]);
	go[1] = -1;
	do
		n = read(ep[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	if (n == sizeof(err)) {
		ret = exec_error(run->o, err);
		goto out_reap;
	}
	ret = 0;
	goto out_close;

out_reap:
	if (go[1] >= 0) {
		close(go[1]);	/* the child reads EOF and exits */
		go[1] = -1;
	}
	while (waitpid(run->child, &run->wait_status, 0) < 0 && errno == EINTR)
		;
	run->child = 0;
out_close:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (ep[i] >= 0)
			close(ep[i]);
	}
	return ret;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	return -1;
#endif
}

/* True when pid no longer runs (gone, or a zombie nobody reaped yet). */
static bool process_gone(pid_t pid)
{
	char path[64], buf[512], *p;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) < 0)
		return true;
	p = strrchr(buf, ')');
	return p && (p[2] == 'Z' || p[2] == 'X');
}

static int attach_process(struct run *run)
{
	pid_t pid = run->o->pid;
	struct idmap seen = { 0 };
	char path[64];
	size_t opened = 0;
	bool changed = true;
	int ret = 0;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return error("cannot attach to process %d: no such process", (int)pid);
	run->pidfd = open_pidfd(pid);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	/* threads may start while we attach: list them until the list holds */
	for (int round = 0; round < 16 && changed && !ret; round++) {
		DIR *dir = opendir(path);
		struct dirent *de;

		if (!dir) {
			ret = error("cannot attach to process %d: %s", (int)pid, strerror(errno));
			break;
		}
		changed = false;
		while ((de = readdir(dir))) {
			uint32_t *slot;
			long tid;

			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			tid = atol(de->d_name);
			slot = idmap_slot(&seen, (uint32_t)tid, true);
			if (*slot)
				continue;
			*slot = 1;
			changed = true;
			ret = sampler_add_task(run->s, (pid_t)tid, 0);
			if (ret < 0)
				break;
			if (!ret)
				opened++;
			ret = 0;
		}
		closedir(dir);
	}
	idmap_release(&seen);
	if (!ret && !opened)
		ret = error("cannot attach to process %d: it has exited", (int)pid);
	if (!ret)
		ret = recording_add_process(run->rec, pid);
	return ret;
}

static void handle_signals(struct run *run)
{
	struct signalfd_siginfo si;

	while (read(run->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		/* whoever called record is interrupted too */
		if (si.ssi_signo != SIGHUP) {
			hl_cancel();
			run->cancel_seen = true;	/* the signal itself goes on to the command */
		}
		if (run->child) {
			/*
			 * A terminal's ^C reached the whole process group,
			 * the command included; a kill(1) reached only us:
			 * pass it on. Either way the command decides.
			 */
			if (si.ssi_code != SI_KERNEL)
				kill(run->child, (int)si.ssi_signo);
		} else {
			run->stop = true;
			run->interrupted = true;
		}
	}
}

static void check_target(struct run *run)
{
	if (run->child) {
		pid_t w = waitpid(run->child, &run->wait_status, WNOHANG);
		if (w == run->child) {
			run->child_done = true;
			run->stop = true;
		}
	} else if (run->pidfd < 0 && process_gone(run->o->pid)) {
		run->stop = true;
	}
	/*
	 * hl_cancel() from another thread (the MCP server's reader): the
	 * command is asked to stop, then killed when it does not.
	 */
	if (hl_cancelled() && !run->cancel_seen) {
		run->cancel_seen = true;
		run->cancel_ns = now_ns();
		if (run->child && !run->child_done) {
			kill(run->child, SIGTERM);
		} else if (!run->child) {
			run->stop = true;
			run->interrupted = true;
		}
	} else if (run->cancel_ns && !run->cancel_killed && run->child && !run->child_done &&
		   now_ns() - run->cancel_ns > 2000000000ull) {
		kill(run->child, SIGKILL);
		run->cancel_killed = true;
	}
	if (run->deadline_ns && now_ns() >= run->deadline_ns) {
		if (!run->child)
			run->stop = true;
		else if (!run->term_sent) {
			kill(run->child, SIGTERM);	/* the duration is up */
			run->term_sent = true;
		}
	}
}

static int run_loop(struct run *run)
{
	const int *fds;
	size_t nfds = sampler_fds(run->s, &fds), live;
	struct pollfd *pfd = xcalloc(nfds + 2, sizeof(*pfd));
	size_t *which = xcalloc(nfds + 2, sizeof(*which));
	bool *hup = xcalloc(nfds ? nfds : 1, sizeof(*hup));
	int ret = 0;

	while (!run->stop) {
		size_t n = 0, nperf;
		int timeout = 100;

		for (size_t i = 0; i < nfds; i++)
			if (!hup[i]) {
				which[n] = i;
				pfd[n++] = (struct pollfd){ fds[i], POLLIN, 0 };
			}
		nperf = n;
		pfd[n++] = (struct pollfd){ run->sigfd, POLLIN, 0 };
		if (run->pidfd >= 0)
			pfd[n++] = (struct pollfd){ run->pidfd, POLLIN, 0 };
		if (run->deadline_ns && !run->term_sent) {
			uint64_t now = now_ns();
			uint64_t left = run->deadline_ns > now ? run->deadline_ns - now : 0;
			if (left / 1000000 < (uint64_t)timeout)
				timeout = (int)(left / 1000000) + 1;
		}
		if (poll(pfd, n, timeout) < 0 && errno != EINTR) {
			ret = error("cannot poll perf events: %s", strerror(errno));
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (i < nperf) {
				if (pfd[i].revents & (POLLHUP | POLLERR))
					hup[which[i]] = true;	/* its task exited */
			} else if (pfd[i].fd == run->sigfd && pfd[i].revents) {
				handle_signals(run);
			} else if (pfd[i].revents) {
				run->stop = true;	/* the pidfd: the target exited */
			}
		}
		live = 0;
		for (size_t i = 0; i < nfds; i++)
			live += !hup[i];
		ret = sampler_read(run->s, recording_event, run->rec);
		if (ret < 0)
			break;
		check_target(run);
		if (!run->child && !live && nfds && process_gone(run->o->pid))
			run->stop = true;
	}
	free(pfd);
	free(which);
	free(hup);
	return ret;
}

static int write_profile(struct run *run, int64_t time_nanos, uint64_t duration_ns)
{
	struct profile p;
	struct strbuf cmd = STRBUF_INIT;
	struct recording_info info = {
		.event = sampler_event_name(run->s),
		.period_is_time = sampler_period_is_time(run->s),
		.freq = run->o->sampler.freq ? run->o->sampler.freq : SAMPLER_DEFAULT_FREQ,
		.time_nanos = time_nanos,
		.duration_nanos = (int64_t)duration_ns,
	};
	int ret;

	if (run->o->argv) {
		size_t n = 0;

		while (run->o->argv[n])
			n++;
		runner_quote_argv(&cmd, (const char *const *)run->o->argv, n);
	} else {
		strbuf_addf(&cmd, "pid %ld", (long)run->o->pid);
	}
	info.command = cmd.buf;
	profile_init(&p);
	ret = recording_build(run->rec, &p, &info);
	if (!ret)
		ret = pprof_write_file(&p, run->o->output);
	profile_release(&p);
	strbuf_release(&cmd);
	return ret;
}

int record_check_output(const char *path)
{
	struct strbuf tmp = STRBUF_INIT;
	int fd, ret = 0;

	strbuf_addf(&tmp, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp.buf);
	if (fd < 0) {
		ret = error("cannot create '%s': %s", path, strerror(errno));
	} else {
		close(fd);
		unlink(tmp.buf);
	}
	strbuf_release(&tmp);
	return ret;
}

int record_run(const struct record_options *o, struct record_result *res)
{
	struct run run = { .o = o, .sigfd = -1, .pidfd = -1 };
	struct signalfd_siginfo si;
	struct timespec wall;
	sigset_t set, oldmask;
	int ret;

	memset(res, 0, sizeof(*res));
	if (!o->argv && o->pid <= 0)
		BUG("record_run needs a command or a pid");
	if (record_check_output(o->output))
		return -1;
	run.s = sampler_new(&o->sampler);
	run.rec = recording_new(o->sampler.callgraph, sampler_regs_mask(run.s));
	recording_set_off_cpu(run.rec, o->sampler.off_cpu);

	/* signals arrive through a descriptor the loop polls */
	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(handled_signals); i++)
		sigaddset(&set, handled_signals[i]);
	sigprocmask(SIG_BLOCK, &set, &oldmask);
	run.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (run.sigfd < 0) {
		ret = error("cannot create a signalfd: %s", strerror(errno));
		goto out;
	}

	clock_gettime(CLOCK_REALTIME, &wall);
	ret = o->argv ? start_command(&run, &oldmask) : attach_process(&run);
	if (ret)
		goto out;
	recording_set_main(run.rec, o->argv ? run.child : o->pid);
	run.start_ns = now_ns();
	if (o->duration_ns)
		run.deadline_ns = run.start_ns + o->duration_ns;

	ret = run_loop(&run);
	res->duration_ns = now_ns() - run.start_ns;
	if (run.child && !run.child_done) {
		/* the loop failed: do not leave the command behind */
		kill(run.child, SIGTERM);
		while (waitpid(run.child, &run.wait_status, 0) < 0 && errno == EINTR)
			;
	}
	sampler_disable(run.s);
	if (!ret)
		ret = sampler_drain(run.s, recording_event, run.rec);
	res->stats = *sampler_stats(run.s);
	res->cut_samples = recording_cut_samples(run.rec);
	res->stack_size = sampler_stack_size(run.s);
	res->wait_status = run.child ? run.wait_status : 0;
	res->interrupted = run.interrupted;
	if (!ret)
		ret = write_profile(&run, (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec,
				    res->duration_ns);
out:
	if (run.sigfd >= 0) {
		/* what arrived while we finished was handled with the target */
		while (read(run.sigfd, &si, sizeof(si)) == sizeof(si))
			;
		close(run.sigfd);
	}
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	if (run.pidfd >= 0)
		close(run.pidfd);
	recording_free(run.rec);
	sampler_free(run.s);
	return ret;
}

void record_summary(const struct record_result *res, const char *output, struct strbuf *sb)
{
	const struct sampler_stats *st = &res->stats;

	strbuf_addf(sb, "hotloop record: %llu samples, %llu lost, %.2f s, wrote '%s'",
		    (unsigned long long)st->samples, (unsigned long long)st->lost,
		    res->duration_ns / 1e9, output);
	if (st->throttled)
		strbuf_addf(sb, ", throttled %llu times", (unsigned long long)st->throttled);
	if (st->corrupt)
		strbuf_addf(sb, ", %llu corrupt buffers", (unsigned long long)st->corrupt);
	if (st->lost || st->throttled)
		strbuf_addstr(sb, " (raise --mmap-pages or lower -F)");
	if (st->switches)
		strbuf_addf(sb, ", %llu times off CPU", (unsigned long long)st->switches);
	if (res->cut_samples && st->samples)
		strbuf_addf(sb, "; %llu stacks (%.1f%%) cut where the %u-byte stack copy ended "
			    "(raise it with --call-graph auto,SIZE)",
			    (unsigned long long)res->cut_samples,
			    100.0 * (double)res->cut_samples / (double)st->samples, res->stack_size);
	strbuf_addch(sb, '\n');
}
