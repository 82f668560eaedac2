/*
 * heap.c: libhotloop-heap.so, preloaded by `hotloop record --heap`. It wraps
 * glibc's allocator (malloc and friends reach __libc_malloc and friends),
 * samples allocations by bytes, unwinds their stacks with libunwind, follows
 * the frees of sampled blocks and writes everything to a per-process stream
 * (lib/heap-stream.h) that lib/heap-record.c turns into a profile.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <libunwind.h>

#include "heap-stream.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

/* Sampled blocks in the address table, stacks in the stack table: probes per lookup. */
#define PROBES 32
#define ADDR_SLOTS (1u << 21)
/*
 * In front of the address table, a counting filter: how many sampled
 * blocks live at addresses of each slot (the address's bits above the
 * 16-byte alignment, so that neighbour blocks share cache lines). A free
 * of an unsampled block (all but a few) reads one byte of it.
 */
#define FILTER_SLOTS (1u << 16)
#define STACK_SLOTS (1u << 22)	/* twice HEAP_MAX_MAX_STACKS' heap_stack_ids() and more */
#define TICK_EVERY_NS 10000000ull	/* at most one HEAP_EV_TICK per 10 ms */
#define FD_LOW 900			/* the stream's descriptor is moved up here */

struct tbuf {
	struct tbuf *next;		/* every buffer, for the flush at exit */
	atomic_int busy;		/* owned by a live thread */
	uint64_t allocs, alloc_bytes;	/* its threads' counts, summed at the end */
	uint64_t frees;			/* of them recorded (heap_end_event) */
	uint32_t len;			/* bytes of events after the chunk header */
	uint64_t prev_seq, prev_addr;	/* the chunk's last allocation or free (deltas) */
	unsigned char data[sizeof(struct heap_chunk_header) + HEAP_CHUNK_BYTES];
};

enum state { ST_OFF, ST_ON, ST_ENDED };

static struct {
	int state;			/* enum state; ST_OFF: pass everything through */
	bool all;			/* every allocation (rate 1): no address table */
	bool stats;			/* totals only */
	uint64_t rate;
	pid_t pid;
	int fd;
	dev_t dev;
	ino_t ino;
	char dir[512], path[600];
	uintptr_t self_lo, self_hi;	/* our own code: frames there are dropped */
	atomic_uintptr_t *addrs;	/* 0 empty, 1 deleted, else a sampled block */
	_Atomic unsigned char *filter;	/* FILTER_SLOTS counts; 255: too many to count */
	atomic_uint_least64_t *stack_hash;
	atomic_uint *stack_id;
	atomic_uint next_stack;
	uint32_t max_stacks;		/* kept whole; then cut, then none (heap-stream.h) */
	struct tbuf *_Atomic bufs;
	pthread_key_t key;
	atomic_uint_least64_t seq, dropped, untracked;
	atomic_uint_least64_t last_tick_ns;
	atomic_int_least64_t live, peak;	/* stats mode: block bytes live, their highest */
	atomic_int_least64_t point_peak;	/* stats mode: the highest since the last point */
	atomic_uint_least64_t last_point_ns;
	pthread_mutex_t lock;		/* start, fork, end */
	atomic_int tried;		/* start() ran (whether it started or not) */
} g = { .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * The thread's state, in one block: a library's initial-exec TLS costs a
 * load of its offset per variable, once per function for all of these.
 */
static TLS struct {
	int in_hook;		/* inside the recorder: allocations go straight to glibc */
	struct tbuf *tb;
	uint64_t rng, until;	/* the sampling's state, and the bytes to the next sample */
	unsigned events;
	uintptr_t last;		/* the thread's latest allocation */
	pid_t tid;
	int64_t live;		/* stats mode: the thread's live bytes not yet in g.live */
} tl;
static pid_t stats_exec;		/* stats mode: the process whose stream ends at an exec (HEAP_PEAK_EXEC; not a vfork child's parent) */

/* Stats mode: a thread adds its live bytes to g.live when they move this far. */
#define STATS_SLACK (8 * 1024)
#define STATS_BIG_BLOCK (1024 * 1024)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* ---- the stream ---------------------------------------------------------- */

static bool write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

/* Our descriptor, still ours: a program may close it, or reuse its number. */
static int stream_fd(void)
{
	struct stat st;
	int fd;

	if (g.fd >= 0 && !fstat(g.fd, &st) && st.st_dev == g.dev && st.st_ino == g.ino)
		return g.fd;
	fd = open(g.path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	g.fd = fcntl(fd, F_DUPFD_CLOEXEC, FD_LOW);
	if (g.fd < 0)
		g.fd = fd;
	else
		close(fd);
	if (!fstat(g.fd, &st)) {
		g.dev = st.st_dev;
		g.ino = st.st_ino;
	}
	return g.fd;
}

static void flush(struct tbuf *b)
{
	struct heap_chunk_header h = { b->len, (uint32_t)tl.tid };
	int saved = errno;
	int fd;

	if (!b->len)
		return;
	if (g.state == ST_ON && getpid() == g.pid && (fd = stream_fd()) >= 0) {
		memcpy(b->data, &h, sizeof(h));
		write_all(fd, b->data, sizeof(h) + b->len);
	}
	b->len = 0;
	b->prev_seq = b->prev_addr = 0;
	errno = saved;
}

static void thread_gone(void *p)
{
	struct tbuf *b = p;

	tl.in_hook++;
	flush(b);
	atomic_store(&b->busy, 0);
	tl.tb = NULL;
	tl.in_hook--;
}

static __attribute__((noinline)) struct tbuf *get_tbuf(void)
{
	struct tbuf *b;

	if (LIKELY(tl.tb != NULL))
		return tl.tb;
	tl.in_hook++;	/* pthread_setspecific() may allocate */
	tl.tid = (pid_t)syscall(SYS_gettid);
	for (b = atomic_load(&g.bufs); b; b = b->next) {
		int free_ = 0;
		if (atomic_compare_exchange_strong(&b->busy, &free_, 1))
			break;
	}
	if (!b) {
		b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED)
			b = NULL;
	}
	if (b && !atomic_load(&b->busy)) {	/* a new one */
		atomic_store(&b->busy, 1);
		b->next = atomic_load(&g.bufs);
		while (!atomic_compare_exchange_weak(&g.bufs, &b->next, b))
			;
	}
	if (b) {
		b->len = 0;
		b->prev_seq = b->prev_addr = 0;
		tl.tb = b;
		pthread_setspecific(g.key, b);
	}
	tl.in_hook--;
	return b;
}

/* Room for n bytes of events in the thread's buffer, or NULL. */
static unsigned char *room(size_t n)
{
	struct tbuf *b = get_tbuf();

	if (!b)
		return NULL;
	if (b->len + n > HEAP_CHUNK_BYTES)
		flush(b);
	return b->data + sizeof(struct heap_chunk_header) + b->len;
}

#define PUT(p, v) do { __typeof__(v) v_ = (v); memcpy(p, &v_, sizeof(v_)); p += sizeof(v_); } while (0)

static void commit(unsigned char *end)
{
	tl.tb->len = (uint32_t)(end - (tl.tb->data + sizeof(struct heap_chunk_header)));
}

/*
 * Now and then (every 64th sampled event of a thread at most, and 10 ms
 * apart): the time at this sequence number, for the heap over time.
 */
static void tick(uint64_t seq)
{
	uint64_t now, last;
	unsigned char *p;

	if (g.all && (++tl.events & 63))
		return;
	now = mono_ns();
	last = atomic_load(&g.last_tick_ns);
	if (now - last < TICK_EVERY_NS ||
	    !atomic_compare_exchange_strong(&g.last_tick_ns, &last, now))
		return;
	if (!(p = room(17)))
		return;
	PUT(p, (uint8_t)HEAP_EV_TICK);
	PUT(p, now);
	PUT(p, seq);
	commit(p);
}

/* ---- the tables ------------------------------------------------------------ */

static unsigned filter_slot(uintptr_t a)
{
	return (unsigned)(a >> 4) & (FILTER_SLOTS - 1);
}

static bool addr_insert(uintptr_t a)
{
	uint64_t h = mix(a);

	for (unsigned i = 0; i < PROBES; i++) {
		atomic_uintptr_t *s = &g.addrs[(h + i) & (ADDR_SLOTS - 1)];
		uintptr_t v = atomic_load_explicit(s, memory_order_relaxed);

		if (v == a)
			return true;
		if ((v == 0 || v == 1) && atomic_compare_exchange_strong(s, &v, a)) {
			_Atomic unsigned char *f = &g.filter[filter_slot(a)];
			unsigned char c = atomic_load_explicit(f, memory_order_relaxed);

			while (c < 255 && !atomic_compare_exchange_weak(f, &c, c + 1))
				;
			return true;
		}
	}
	return false;
}

static bool addr_remove(uintptr_t a)
{
	_Atomic unsigned char *f = &g.filter[filter_slot(a)];
	unsigned char c = atomic_load_explicit(f, memory_order_relaxed);
	uint64_t h;

	if (LIKELY(c == 0))
		return false;
	h = mix(a);
	for (unsigned i = 0; i < PROBES; i++) {
		atomic_uintptr_t *s = &g.addrs[(h + i) & (ADDR_SLOTS - 1)];
		uintptr_t v = atomic_load_explicit(s, memory_order_relaxed);

		if (v == 0)
			return false;
		if (v == a) {
			/* the end of a chain: empty again, else a deleted mark */
			uintptr_t next = atomic_load(&g.addrs[(h + i + 1) & (ADDR_SLOTS - 1)]);

			if (!atomic_compare_exchange_strong(s, &v, next == 0 ? 0 : 1))
				return false;
			while (c < 255 && c > 0 && !atomic_compare_exchange_weak(f, &c, c - 1))
				;
			return true;
		}
	}
	return false;
}

/*
 * The id of the stack frames[0..k) (hash h), written out the first time it
 * is seen; 0 when the table holds 'limit' ids already (or is full).
 */
static uint32_t intern_stack(const uint64_t *frames, int k, uint64_t h, uint16_t flag,
			     uint32_t limit)
{
	unsigned char *p;

	h = mix(h ^ (uint64_t)k ^ ((uint64_t)flag << 32));
	if (h < 2)
		h += 2;
	for (unsigned i = 0; i < PROBES; i++) {
		unsigned s = (unsigned)(h + i) & (STACK_SLOTS - 1);
		uint_least64_t v = atomic_load_explicit(&g.stack_hash[s], memory_order_acquire);
		uint32_t id;

		if (v == 0) {
			if (atomic_load_explicit(&g.next_stack, memory_order_relaxed) >= limit)
				return 0;
			if (!atomic_compare_exchange_strong(&g.stack_hash[s], &v, h))
				goto taken;
			id = atomic_fetch_add(&g.next_stack, 1) + 1;
			p = room(7 + 8 * (size_t)k);
			if (p) {
				PUT(p, (uint8_t)HEAP_EV_STACK);
				PUT(p, id);
				PUT(p, (uint16_t)(k | flag));
				memcpy(p, frames, 8 * (size_t)k);
				commit(p + 8 * k);
			}
			atomic_store_explicit(&g.stack_id[s], id, memory_order_release);
			return id;
		}
taken:
		if (v == h) {
			while (!(id = atomic_load_explicit(&g.stack_id[s], memory_order_acquire)))
				;	/* its first thread is writing it out */
			return id;
		}
	}
	return 0;
}

static inline __attribute__((always_inline)) uint32_t stack_of(void)
{
	void *pcs[HEAP_MAX_FRAMES + 8];
	uint64_t frames[HEAP_MAX_FRAMES];
	int n = unw_backtrace(pcs, HEAP_MAX_FRAMES + 8), k = 0, skip = 0;
	uint64_t h = 0x9e3779b97f4a7c15ull;
	uint32_t id;

	while (skip < n && (uintptr_t)pcs[skip] >= g.self_lo && (uintptr_t)pcs[skip] < g.self_hi)
		skip++;
	for (int i = skip; i < n && k < HEAP_MAX_FRAMES; i++) {
		frames[k++] = (uint64_t)(uintptr_t)pcs[i];
		h = (h ^ (uint64_t)(uintptr_t)pcs[i]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	if ((id = intern_stack(frames, k, h, 0, g.max_stacks)))
		return id;
	/* too many distinct stacks: this one cut to the caller of the allocator */
	if (k > 0 && (id = intern_stack(frames, 1,
					(0x9e3779b97f4a7c15ull ^ frames[0]) * 0x9e3779b97f4a7c15ull,
					HEAP_STACK_CUT, heap_stack_ids(g.max_stacks))))
		return id;
	atomic_fetch_add(&g.dropped, 1);
	return 0;
}

/* ---- the hooks' slow paths --------------------------------------------------- */

/* The seq and address of an allocation or a free, as deltas in the chunk at p. */
static inline __attribute__((always_inline)) unsigned char *put_seq_addr(unsigned char *p, uint64_t seq, uint64_t addr)
{
	struct tbuf *b = tl.tb;
	uint64_t ps = b->prev_seq, pa = b->prev_addr;

	b->prev_seq = seq;
	b->prev_addr = addr;
	p = heap_put_varint(p, seq - ps);
	return heap_put_varint(p, heap_zigzag(addr - pa));
}

static inline __attribute__((always_inline)) void sampled_alloc(void *ptr, size_t size, int op)
{
	uint8_t flags = 0;
	uint32_t stack;
	uint64_t seq;
	unsigned char *p;

	if (!g.all && !addr_insert((uintptr_t)ptr)) {
		flags |= HEAP_ALLOC_UNTRACKED;
		atomic_fetch_add(&g.untracked, 1);
	}
	stack = stack_of();
	seq = atomic_fetch_add(&g.seq, 1);
	if (!(p = room(HEAP_EV_ALLOC_MAX)))
		return;
	*p++ = HEAP_EV_ALLOC;
	*p++ = (unsigned char)op;
	*p++ = flags;
	p = heap_put_varint(p, stack);
	p = put_seq_addr(p, seq, (uintptr_t)ptr);
	p = heap_put_varint(p, size);
	commit(p);
	tick(seq);
}

static void sampled_free(void *ptr)
{
	uint8_t flags = (uintptr_t)ptr == tl.last ? HEAP_FREE_TEMP : 0;
	uint64_t seq = atomic_fetch_add(&g.seq, 1);
	unsigned char *p = room(HEAP_EV_FREE_MAX);

	if (!p)
		return;
	*p++ = HEAP_EV_FREE;
	*p++ = flags;
	p = put_seq_addr(p, seq, (uintptr_t)ptr);
	commit(p);
	tick(seq);
}

/*
 * Stats mode: every allocation and free comes here (tl.until stays 0, the
 * filter is all ones), and the live bytes, as block_size() counts them,
 * go by the thread's slack into g.live and its peak. No stack, no
 * event: the totals and the peak are written at the end.
 */
static void raise_to(atomic_int_least64_t *max, int64_t v)
{
	int64_t m = atomic_load_explicit(max, memory_order_relaxed);

	while (v > m &&
	       !atomic_compare_exchange_weak_explicit(max, &m, v, memory_order_relaxed,
						      memory_order_relaxed))
		;
}

/* Stats mode: the thread's live bytes into g.live, the peaks raised. */
static int64_t stats_publish(void)
{
	int64_t live = atomic_fetch_add_explicit(&g.live, tl.live, memory_order_relaxed) + tl.live;

	tl.live = 0;
	raise_to(&g.peak, live);
	raise_to(&g.point_peak, live);
	return live;
}

/* Every thread's counts so far (another thread's may be a call behind). */
static void sum_counts(uint64_t *allocs, uint64_t *bytes, uint64_t *frees)
{
	*allocs = *bytes = *frees = 0;
	for (struct tbuf *b = atomic_load(&g.bufs); b; b = b->next) {
		*allocs += b->allocs;
		*bytes += b->alloc_bytes;
		*frees += b->frees;
	}
}

/*
 * Stats mode: a HEAP_EV_POINT now, when it is the process's time for one
 * (or 'force'); false when it is not.
 */
static bool stats_point(bool force)
{
	uint64_t now = mono_ns(), last = atomic_load(&g.last_point_ns), frees;
	struct heap_point pt = { .time_ns = now };
	unsigned char *p;
	int64_t live;

	if (!force && (now - last < HEAP_POINT_EVERY_NS ||
		       !atomic_compare_exchange_strong(&g.last_point_ns, &last, now)))
		return false;
	live = stats_publish();
	pt.live = live > 0 ? (uint64_t)live : 0;
	live = atomic_exchange_explicit(&g.point_peak, live, memory_order_relaxed);
	pt.peak = live > (int64_t)pt.live ? (uint64_t)live : pt.live;
	sum_counts(&pt.allocs, &pt.alloc_bytes, &frees);
	if ((p = room(1 + sizeof(pt)))) {
		PUT(p, (uint8_t)HEAP_EV_POINT);
		PUT(p, pt);
		commit(p);
	}
	return true;
}

/*
 * A thread looks whether a point is due at its 256th call since it last
 * looked, and at a block of STATS_BIG_BLOCK or more (a service's buffers,
 * taken at its start and then held while it idles, are in a point soon).
 */
static void stats_live(int64_t delta)
{
	tl.live += delta;
	if (UNLIKELY(!(++tl.events & 255) || delta >= STATS_BIG_BLOCK || delta <= -STATS_BIG_BLOCK) &&
	    stats_point(false))
		return;
	if (tl.live < STATS_SLACK && tl.live > -STATS_SLACK)
		return;
	stats_publish();
}

/*
 * The size glibc's allocator gives the block at p: its chunk's size field,
 * the word before p, without the flag bits (what malloc_usable_size()
 * reads, without its call and its checks). The same value at the
 * allocation and at the free, so the live bytes add up.
 */
static inline size_t block_size(const void *p)
{
	return ((const size_t *)p)[-1] & ~(size_t)7;
}

/* Stats mode: every free goes to free_slow(). */
static void stats_filter(void)
{
	if (g.stats)
		memset((void *)g.filter, 255, FILTER_SLOTS);
}

/* The slow path of on_alloc(): the gap has run out (or was never drawn). */
static __attribute__((noinline)) void alloc_slow(void *ptr, size_t size, uint64_t s, int op)
{
	tl.in_hook = 1;
	if (g.stats) {
		stats_live((int64_t)block_size(ptr));
	} else if (UNLIKELY(!tl.rng)) {
		tl.rng = mix((uint64_t)syscall(SYS_gettid) ^ mono_ns()) | 1;
		tl.until = heap_next_gap(&tl.rng, g.rate);
		if (tl.until > s) {
			tl.until -= s;
		} else {
			tl.until = heap_next_gap(&tl.rng, g.rate);
			sampled_alloc(ptr, size, op);
		}
	} else {
		tl.until = heap_next_gap(&tl.rng, g.rate);
		sampled_alloc(ptr, size, op);
	}
	tl.in_hook = 0;
}

/*
 * An allocation of 'size' bytes at ptr was made by call 'op'. The fast
 * path: count it, and take the size off the gap to the next sample.
 */
static inline __attribute__((always_inline)) void on_alloc(void *ptr, size_t size, int op)
{
	struct tbuf *b = tl.tb;
	uint64_t s = size ? size : 1;

	if (UNLIKELY(!ptr) || (UNLIKELY(!b) && !(b = get_tbuf())))
		return;
	b->allocs++;
	b->alloc_bytes += size;
	tl.last = (uintptr_t)ptr;
	if (LIKELY(tl.until > s))
		tl.until -= s;
	else
		alloc_slow(ptr, size, s, op);
}

/* The slow path of on_free(): ptr may be a sampled block. */
static __attribute__((noinline)) void free_slow(void *ptr)
{
	bool counted = true;

	tl.in_hook = 1;
	if (g.stats)
		stats_live(-(int64_t)block_size(ptr));
	else if (g.all || addr_remove((uintptr_t)ptr))
		sampled_free(ptr);
	else
		counted = false;	/* another block in the filter's slot */
	if (counted && get_tbuf())
		tl.tb->frees++;
	tl.in_hook = 0;
}

/*
 * ptr is about to be freed (or moved by realloc: like heaptrack, a block
 * realloc'd before its thread's next allocation is a temporary too). The
 * fast path: one byte of the filter says it was not sampled.
 */
static inline __attribute__((always_inline)) void on_free(void *ptr)
{
	uintptr_t a = (uintptr_t)ptr;

	if (UNLIKELY(!ptr))
		return;
	if (UNLIKELY(g.all) ||
	    UNLIKELY(atomic_load_explicit(&g.filter[filter_slot(a)], memory_order_relaxed)))
		free_slow(ptr);
	tl.last = 0;
}

/* ---- start, fork, exit ---------------------------------------------------------- */

static void emit_maps(void)
{
	static char buf[16384];
	size_t have = 0;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = read(fd, buf + have, sizeof(buf) - have)) > 0 || have) {
		size_t len = have + (n > 0 ? (size_t)n : 0), cut = len;
		unsigned char *p;

		if (n > 0 && len == sizeof(buf)) {
			while (cut && buf[cut - 1] != '\n')
				cut--;
			if (!cut)
				cut = len;
		}
		if ((p = room(5 + cut))) {
			PUT(p, (uint8_t)HEAP_EV_MAPS);
			PUT(p, (uint32_t)cut);
			memcpy(p, buf, cut);
			commit(p + cut);
		}
		memmove(buf, buf + cut, len - cut);
		have = len - cut;
		if (n <= 0)
			break;
	}
	close(fd);
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t here = (uintptr_t)&find_self;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    here >= lo && here < lo + ph->p_memsz) {
			g.self_lo = lo;
			g.self_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* Create this process image's stream: DIR/heap.PID.N, the first N free. */
static bool open_stream(void)
{
	struct heap_file_header h = { .magic = HEAP_STREAM_MAGIC, .version = HEAP_STREAM_VERSION };
	struct stat st;
	int fd = -1;

	for (unsigned n = 0; n < 1000 && fd < 0; n++) {
		snprintf(g.path, sizeof(g.path), "%s/heap.%d.%u", g.dir, (int)g.pid, n);
		fd = open(g.path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return false;
	}
	if (fd < 0)
		return false;
	g.fd = fcntl(fd, F_DUPFD_CLOEXEC, FD_LOW);
	if (g.fd < 0)
		g.fd = fd;
	else
		close(fd);
	fstat(g.fd, &st);
	g.dev = st.st_dev;
	g.ino = st.st_ino;
	h.pid = (uint32_t)g.pid;
	h.ppid = (uint32_t)getppid();
	h.flags = g.stats ? HEAP_FILE_STATS : 0;
	h.rate = g.rate;
	h.start_ns = mono_ns();
	return write_all(g.fd, &h, sizeof(h));
}

static void *map_table(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The tables start empty: a new process image, or a forked child. */
static void clear_tables(void)
{
	madvise(g.addrs, ADDR_SLOTS * sizeof(*g.addrs), MADV_DONTNEED);
	madvise((void *)g.filter, FILTER_SLOTS, MADV_DONTNEED);
	madvise(g.stack_hash, STACK_SLOTS * sizeof(*g.stack_hash), MADV_DONTNEED);
	madvise(g.stack_id, STACK_SLOTS * sizeof(*g.stack_id), MADV_DONTNEED);
	atomic_store(&g.next_stack, 0);
}

static void end_stream(void)
{
	struct heap_end_event e;
	unsigned char *p;

	pthread_mutex_lock(&g.lock);
	if (g.state != ST_ON || getpid() != g.pid) {
		pthread_mutex_unlock(&g.lock);
		return;
	}
	if (!g.stats)
		emit_maps();
	if (g.stats)
		stats_point(true);
	if (g.stats && (p = room(1 + 8 + 1))) {
		int64_t peak = atomic_load(&g.peak);

		PUT(p, (uint8_t)HEAP_EV_PEAK);
		PUT(p, (uint64_t)(peak > 0 ? peak : 0));
		PUT(p, (uint8_t)(stats_exec == g.pid ? HEAP_PEAK_EXEC : 0));
		commit(p);
	}
	e = (struct heap_end_event){
		.end_ns = mono_ns(),
		.dropped_stacks = atomic_load(&g.dropped),
		.untracked = atomic_load(&g.untracked),
	};
	sum_counts(&e.allocs, &e.alloc_bytes, &e.frees);
	if ((p = room(1 + sizeof(e)))) {
		PUT(p, (uint8_t)HEAP_EV_END);
		PUT(p, e);
		commit(p);
	}
	/* the other threads' buffers too: what they hold is recorded */
	for (struct tbuf *b = atomic_load(&g.bufs); b; b = b->next)
		if (b != tl.tb)
			flush(b);
	if (tl.tb)
		flush(tl.tb);
	g.state = ST_ENDED;
	pthread_mutex_unlock(&g.lock);
}

static void start_stream(void)
{
	if (!open_stream()) {
		g.state = ST_OFF;
		return;
	}
	g.state = ST_ON;
	stats_filter();
	if (!g.stats)
		emit_maps();
}

static void at_fork_child(void)
{
	/* the child's own stream: its own tables and counts, the parent's buffers dropped */
	g.pid = getpid();
	g.fd = -1;
	for (struct tbuf *b = atomic_load(&g.bufs); b; b = b->next) {
		b->len = 0;
		b->prev_seq = b->prev_addr = 0;
		b->allocs = b->alloc_bytes = b->frees = 0;
		if (b != tl.tb)
			atomic_store(&b->busy, 0);
	}
	clear_tables();
	atomic_store(&g.live, 0);
	atomic_store(&g.peak, 0);
	atomic_store(&g.point_peak, 0);
	atomic_store(&g.last_point_ns, 0);
	tl.live = 0;
	pthread_mutex_init(&g.lock, NULL);
	if (g.state == ST_ON)
		start_stream();
	tl.in_hook--;
}

static void at_fork_prepare(void)
{
	tl.in_hook++;
	pthread_mutex_lock(&g.lock);
}

static void at_fork_parent(void)
{
	pthread_mutex_unlock(&g.lock);
	tl.in_hook--;
}

/* Read the environment, map the tables, open the stream. In the hook, under g.lock. */
static void start(void)
{
	const char *dir = getenv(HEAP_ENV_DIR), *rate = getenv(HEAP_ENV_RATE);
	const char *stats = getenv(HEAP_ENV_STATS), *max = getenv(HEAP_ENV_MAX_STACKS);

	if (!dir || !*dir || strlen(dir) >= sizeof(g.dir))
		return;
	strcpy(g.dir, dir);
	g.rate = rate ? strtoull(rate, NULL, 10) : 512 * 1024;
	if (!g.rate)
		g.rate = 1;
	g.stats = stats && !strcmp(stats, "1");
	g.all = g.rate == 1 && !g.stats;
	g.max_stacks = max ? (uint32_t)strtoul(max, NULL, 10) : 0;
	if (!g.max_stacks || g.max_stacks > HEAP_MAX_MAX_STACKS)
		g.max_stacks = HEAP_DEFAULT_MAX_STACKS;
	g.pid = getpid();
	dl_iterate_phdr(find_self, NULL);
	/* each thread its own cache of unwind information: no lock per unwind */
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	g.addrs = map_table(ADDR_SLOTS * sizeof(*g.addrs));
	g.filter = map_table(FILTER_SLOTS);
	g.stack_hash = map_table(STACK_SLOTS * sizeof(*g.stack_hash));
	g.stack_id = map_table(STACK_SLOTS * sizeof(*g.stack_id));
	if (!g.addrs || !g.filter || !g.stack_hash || !g.stack_id)
		return;
	if (pthread_key_create(&g.key, thread_gone))
		return;
	pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
	start_stream();
}

/*
 * The first call into the allocator starts the recorder, before any
 * library's constructor (libstdc++'s emergency pool) allocates: every
 * allocation the program's code makes is counted. The dynamic linker's own
 * first calls come before libc has its environment; they wait for it.
 * true when recording.
 */
static __attribute__((noinline)) bool start_early(void)
{
	extern char **environ;

	if (tl.in_hook || atomic_load(&g.tried) || !environ)
		return g.state == ST_ON;
	tl.in_hook++;
	pthread_mutex_lock(&g.lock);
	if (!atomic_load(&g.tried)) {
		start();
		atomic_store(&g.tried, 1);
	}
	pthread_mutex_unlock(&g.lock);
	tl.in_hook--;
	return g.state == ST_ON;
}

/* When no allocation came first. */
__attribute__((constructor)) static void heap_start(void)
{
	start_early();
}

__attribute__((destructor)) static void heap_stop(void)
{
	tl.in_hook++;
	end_stream();
	tl.in_hook--;
}

/* ---- the interface ---------------------------------------------------------------- */

/*
 * Whether to record a call: the recorder is on (the first call starts it)
 * and this is not the recorder's own. The fast paths change nothing that
 * an allocation made inside them could disturb, so only the slow paths
 * (and malloc_all()) set the guard: ENTER() and LEAVE() around them.
 */
#define ON() ((LIKELY(g.state == ST_ON) || (UNLIKELY(g.state == ST_OFF) && start_early())) && \
	      LIKELY(!tl.in_hook))
#define ENTER() (ON() && (tl.in_hook = 1))
#define LEAVE() (tl.in_hook = 0)

/*
 * malloc when every allocation is recorded: the unwind starts here (malloc
 * jumps to it), one frame of ours instead of four to step through.
 */
static __attribute__((noinline)) void *malloc_all(size_t n)
{
	void *p;

	if (!ENTER())
		return __libc_malloc(n);
	p = __libc_malloc(n);
	if (p && (tl.tb || get_tbuf())) {
		tl.tb->allocs++;
		tl.tb->alloc_bytes += n;
		tl.last = (uintptr_t)p;
		sampled_alloc(p, n, HEAP_OP_MALLOC);
	}
	LEAVE();
	return p;
}

EXPORT void *malloc(size_t n)
{
	void *p;

	if (UNLIKELY(g.all))
		return malloc_all(n);
	if (!ON())
		return __libc_malloc(n);
	p = __libc_malloc(n);
	on_alloc(p, n, HEAP_OP_MALLOC);
	return p;
}

EXPORT void free(void *p)
{
	if (!p)
		return;
	if (ON())
		on_free(p);
	__libc_free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
	void *p;

	if (!ON())
		return __libc_calloc(n, size);
	p = __libc_calloc(n, size);
	on_alloc(p, n * size, HEAP_OP_CALLOC);
	return p;
}

EXPORT void *realloc(void *old, size_t n)
{
	void *p;

	if (!ON())
		return __libc_realloc(old, n);
	on_free(old);
	p = __libc_realloc(old, n);
	on_alloc(p, n, HEAP_OP_REALLOC);
	return p;
}

EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(old, bytes);
}

static void *aligned(size_t align, size_t n)
{
	void *p;

	if (!ON())
		return __libc_memalign(align, n);
	p = __libc_memalign(align, n);
	on_alloc(p, n, HEAP_OP_MEMALIGN);
	return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
	return aligned(align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	return aligned(align, n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	if (!(p = aligned(align, n)))
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT void *valloc(size_t n)
{
	return aligned((size_t)sysconf(_SC_PAGESIZE), n);
}

EXPORT void *pvalloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return aligned(page, (n + page - 1) & ~(page - 1));
}

/* dlopen: the new mappings are written out, for the stacks in them. */
EXPORT void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	void *h;

	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	h = real(file, mode);
	if (h && g.state == ST_ON && !g.stats && !tl.in_hook) {
		tl.in_hook = 1;
		emit_maps();
		tl.in_hook = 0;
	}
	return h;
}

/*
 * Stats mode, a vfork child about to exec (it shares the parent's memory,
 * so it touches none of g): a stream of its own, empty and marked as
 * ending at an exec, so hotloop can tell when the new image never loads
 * the preload (a static or setuid program).
 */
static void stats_vfork_exec(void)
{
	struct {
		struct heap_file_header h;
		struct heap_chunk_header c;
		unsigned char ev[1 + 8 + 1 + 1 + sizeof(struct heap_end_event)];
	} __attribute__((packed)) s;
	struct heap_end_event e = { 0 };
	unsigned char *p = s.ev;
	pid_t pid = getpid();
	char path[sizeof(g.path)];
	int fd = -1;

	if (!g.stats || g.state != ST_ON || pid == g.pid)
		return;
	memset(&s, 0, sizeof(s));
	memcpy(s.h.magic, HEAP_STREAM_MAGIC, sizeof(s.h.magic));
	s.h.version = HEAP_STREAM_VERSION;
	s.h.pid = (uint32_t)pid;
	s.h.ppid = (uint32_t)getppid();
	s.h.flags = HEAP_FILE_STATS;
	s.h.rate = g.rate;
	s.h.start_ns = e.end_ns = mono_ns();
	s.c.len = sizeof(s.ev);
	s.c.tid = (uint32_t)pid;
	PUT(p, (uint8_t)HEAP_EV_PEAK);
	PUT(p, (uint64_t)0);
	PUT(p, (uint8_t)HEAP_PEAK_EXEC);
	PUT(p, (uint8_t)HEAP_EV_END);
	PUT(p, e);
	for (unsigned n = 0; n < 1000 && fd < 0; n++) {
		snprintf(path, sizeof(path), "%s/heap.%d.%u", g.dir, (int)pid, n);
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return;
	}
	if (fd < 0)
		return;
	write_all(fd, &s, sizeof(s));
	close(fd);
}

/* exec and _exit: what was recorded is written out first. */
EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	tl.in_hook++;
	stats_vfork_exec();
	stats_exec = getpid();
	end_stream();
	tl.in_hook--;
	return (int)syscall(SYS_execve, path, argv, envp);
}

#define EXEC_WRAPPER(name, ...) \
	static int (*real)(__VA_ARGS__); \
	tl.in_hook++; \
	stats_vfork_exec(); \
	stats_exec = getpid(); \
	end_stream(); \
	if (!real) \
		real = (int (*)(__VA_ARGS__))dlsym(RTLD_NEXT, name); \
	tl.in_hook--;

EXPORT int execv(const char *path, char *const argv[])
{
	EXEC_WRAPPER("execv", const char *, char *const *)
	return real(path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	EXEC_WRAPPER("execvp", const char *, char *const *)
	return real(file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	EXEC_WRAPPER("execvpe", const char *, char *const *, char *const *)
	return real(file, argv, envp);
}

EXPORT void _exit(int status)
{
	tl.in_hook++;
	end_stream();
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

EXPORT void _Exit(int status)
{
	_exit(status);
}
