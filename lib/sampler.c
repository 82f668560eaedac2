/*
 * sampler.c: perf_event_open(2) sampling. Opens one event per CPU and
 * task (cycles when the machine has them, else cpu-clock), maps one ring
 * buffer per CPU, copies records out with the barriers the kernel's
 * protocol asks for, queues them and delivers them in time order.
 * Every record is parsed as hostile input: sizes and offsets are checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#if defined(__x86_64__)
#include <asm/perf_regs.h>
#elif defined(__aarch64__)
#include <asm/perf_regs.h>
#endif

#include "util.h"
#include "sampler.h"

/*
 * Records whose timestamp is at most this much older than the start of a
 * read round may still be on their way into a ring buffer (the kernel
 * stamps a record before it publishes it): they wait for the next round.
 */
#define ORDER_SLACK_NS 5000000ull

struct ring {
	int fd;
	int cpu;
	void *base;			/* the mapping: header page + data */
	size_t map_len;			/* 0 when the memory is not ours to unmap */
	struct perf_event_mmap_page *pc;
	unsigned char *data;
	uint64_t data_size;		/* a power of two */
	bool dead;			/* abandoned after corruption */
	bool off_cpu;			/* the context switch events' buffer */
};

struct qent {
	uint64_t time, seq;
	size_t off;			/* into qbuf, in bytes, 8-aligned */
	uint32_t len;
	bool off_cpu;			/* from an off_cpu ring */
};

struct sampler {
	struct sampler_config cfg;
	struct perf_event_attr attr;
	bool attr_ready;		/* attr holds what the kernel accepted */
	bool hardware;			/* cycles rather than cpu-clock */
	uint64_t regs_mask;
	unsigned nr_regs;

	int *cpus;
	size_t nr_cpus;
	/*
	 * rings[i] for cpus[i]; with off_cpu, rings[nr_cpus + i] takes the
	 * context switch events of cpus[i]. fd -1 until opened.
	 */
	struct ring *rings;
	size_t nr_rings;
	struct perf_event_attr off_attr;	/* the context switch event */

	int *fds;			/* every event fd, owning or redirected */
	size_t nr_fds, alloc_fds;

	uint64_t *qbuf;			/* queued record copies */
	size_t qlen, qalloc;		/* in uint64_t words */
	struct qent *q;
	size_t nr_q, alloc_q;
	uint64_t seq;

	uint64_t ips[2 * SAMPLER_MAX_FRAMES + 1];
	struct sampler_stats stats;
};

static long sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
				int group_fd, unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/* ---- setup ------------------------------------------------------------ */

static void online_cpus(struct sampler *s)
{
	char buf[4096];
	long n;

	/* "0-3,5\n"; the kernel numbers CPUs past what a cpu_set_t holds */
	if (read_small_file("/sys/devices/system/cpu/online", buf, sizeof(buf)) > 0 &&
	    !cpu_list_parse(NULL, buf, 65535, &s->cpus, &s->nr_cpus))
		return;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	s->nr_cpus = (size_t)n;
	s->cpus = xcalloc(s->nr_cpus, sizeof(*s->cpus));
	for (long i = 0; i < n; i++)
		s->cpus[i] = (int)i;
}

/* The user registers a DWARF unwinder needs, as a perf_regs mask. */
static uint64_t dwarf_regs_mask(void)
{
#if defined(__x86_64__)
	uint64_t m = 0;

	for (int r = PERF_REG_X86_AX; r <= PERF_REG_X86_IP; r++)
		m |= 1ull << r;
	for (int r = PERF_REG_X86_R8; r <= PERF_REG_X86_R15; r++)
		m |= 1ull << r;
	return m;
#elif defined(__aarch64__)
	return (1ull << PERF_REG_ARM64_MAX) - 1;
#else
	return 0;
#endif
}

/*
 * What the call frame information needs to find the caller of a leaf
 * without a frame: the pc, the stack pointer, the frame pointer (to tell
 * whether the frame is set up) and, on arm64, the link register.
 */
static uint64_t fp_regs_mask(void)
{
#if defined(__x86_64__)
	return 1ull << PERF_REG_X86_IP | 1ull << PERF_REG_X86_SP | 1ull << PERF_REG_X86_BP;
#elif defined(__aarch64__)
	return 1ull << PERF_REG_ARM64_PC | 1ull << PERF_REG_ARM64_SP |
	       1ull << PERF_REG_ARM64_X29 | 1ull << PERF_REG_ARM64_LR;
#else
	return 0;
#endif
}

struct sampler *sampler_new(const struct sampler_config *cfg)
{
	struct sampler *s = xcalloc(1, sizeof(*s));
	struct perf_event_attr *a = &s->attr;

	s->cfg = *cfg;
	if (!s->cfg.freq)
		s->cfg.freq = SAMPLER_DEFAULT_FREQ;
	if (!s->cfg.mmap_pages)
		s->cfg.mmap_pages = cfg->callgraph == SAMPLER_CALLGRAPH_FP ?
				    SAMPLER_FP_PAGES : SAMPLER_DWARF_PAGES;
	if (cfg->callgraph == SAMPLER_CALLGRAPH_FP) {
		s->regs_mask = fp_regs_mask();
		if (!s->cfg.stack_size)
			s->cfg.stack_size = SAMPLER_FP_STACK;
	} else {
		s->regs_mask = dwarf_regs_mask();
		if (!s->cfg.stack_size)
			s->cfg.stack_size = cfg->callgraph == SAMPLER_CALLGRAPH_AUTO ?
					    SAMPLER_AUTO_STACK : SAMPLER_DEFAULT_STACK;
	}
	s->cfg.stack_size = (s->cfg.stack_size + 7) & ~7u;
	if (s->cfg.stack_size > SAMPLER_MAX_STACK)
		s->cfg.stack_size = SAMPLER_MAX_STACK;
	s->nr_regs = (unsigned)__builtin_popcountll(s->regs_mask);

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_HARDWARE;
	a->config = PERF_COUNT_HW_CPU_CYCLES;
	a->freq = 1;
	a->sample_freq = s->cfg.freq;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	a->inherit = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->build_id = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->sample_max_stack = SAMPLER_MAX_FRAMES;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)((uint64_t)s->cfg.mmap_pages * (uint64_t)sysconf(_SC_PAGESIZE) / 2);
	if (s->regs_mask) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = s->regs_mask;
		a->sample_stack_user = s->cfg.stack_size;
	}
	a->exclude_callchain_user = cfg->callgraph == SAMPLER_CALLGRAPH_DWARF;
	online_cpus(s);
	s->nr_rings = s->nr_cpus * (cfg->off_cpu ? 2 : 1);
	s->rings = xcalloc(s->nr_rings, sizeof(*s->rings));
	for (size_t i = 0; i < s->nr_rings; i++) {
		s->rings[i].fd = -1;
		s->rings[i].cpu = s->cpus[i % s->nr_cpus];
		s->rings[i].off_cpu = i >= s->nr_cpus;
	}
	return s;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_rings; i++)
		if (s->rings[i].map_len)
			munmap(s->rings[i].base, s->rings[i].map_len);
	for (size_t i = 0; i < s->nr_fds; i++)
		close(s->fds[i]);
	free(s->fds);
	free(s->rings);
	free(s->cpus);
	free(s->qbuf);
	free(s->q);
	free(s);
}

/* An integer sysctl from /proc/sys, or 'dflt' when it cannot be read. */
static long read_sysctl(const char *path, long dflt)
{
	int64_t v;

	return read_int64_file(path, &v) ? (long)v : dflt;
}

/*
 * The kernel refused. For a process we did not start, the likely reason
 * is that it is not ours to trace, whatever the paranoid level says.
 */
static int not_permitted(int err, pid_t tid, unsigned flags)
{
	long level = read_sysctl("/proc/sys/kernel/perf_event_paranoid", -100);
	const char *other = "";

	if (!(flags & SAMPLER_ENABLE_ON_EXEC))
		other = xstrfmt("; to attach to process %d of another user, run as root "
				"or with CAP_SYS_PTRACE", (int)tid);
	if (level == -100)
		error("perf events not permitted (%s): run as root or with CAP_PERFMON%s",
		      strerror(err), other);
	else
		error("perf events not permitted (kernel.perf_event_paranoid=%ld): run as root "
		      "(or with CAP_PERFMON) or set it to 1 or lower%s", level, other);
	if (*other)
		free((char *)other);
	return -HL_EXIT_NOT_PERMITTED;
}

/*
 * Open the event for (tid, cpu). The first successful open settles the
 * attributes: cycles or cpu-clock, kernel frames or not, build ids in
 * mmap records or not; every later open uses the same.
 */
static int open_event(struct sampler *s, pid_t tid, int cpu, unsigned flags)
{
	struct perf_event_attr *a = &s->attr;
	uint64_t sample_type = a->sample_type;
	bool fp_leaf = s->cfg.callgraph != SAMPLER_CALLGRAPH_DWARF && s->regs_mask;
	int fd = -1, err = EINVAL;

	a->disabled = !!(flags & SAMPLER_ENABLE_ON_EXEC);
	a->enable_on_exec = !!(flags & SAMPLER_ENABLE_ON_EXEC);
	if (s->attr_ready) {
		fd = (int)sys_perf_event_open(a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	/*
	 * Cycles, else the software clock (no PMU in most VMs); build ids in
	 * mmap records, else not (before Linux 5.12); kernel frames, else
	 * user space only (perf_event_paranoid 2); with frame pointers, the
	 * leaf's registers and stack, else the bare callchain. Each bit of
	 * 'drop' gives up one of these: counting up gives up kernel frames
	 * first, the leaf's registers last. The last refusal is reported.
	 */
	for (unsigned drop = 0; drop < 16 && fd < 0; drop++) {
		bool ek = drop & 1, bid = !(drop & 2), hw = !(drop & 4), leaf = !(drop & 8);

		if (!leaf && !fp_leaf)
			break;
		a->type = hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
		a->config = hw ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK;
		a->build_id = bid;
		a->exclude_kernel = ek;
		a->exclude_hv = ek;
		if (!leaf)
			a->sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
		fd = (int)sys_perf_event_open(a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = errno;
			if (err == ESRCH || err == EMFILE || err == ENFILE)
				break;
		}
	}
	if (fd < 0)
		goto out_restore;
	if (!(a->sample_type & PERF_SAMPLE_REGS_USER)) {
		s->regs_mask = 0;
		s->nr_regs = 0;
	}
	s->attr_ready = true;
	s->hardware = a->type == PERF_TYPE_HARDWARE;
	return fd;

out_restore:
	/* a later open tries everything again */
	a->sample_type = sample_type;
	return -err;
}

static int map_ring(struct sampler *s, struct ring *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (1 + (size_t)s->cfg.mmap_pages) * page;
	void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);

	if (base == MAP_FAILED) {
		int err = errno;
		if (err == EPERM || err == ENOMEM)
			return error("cannot map a %zu KiB perf ring buffer for cpu %d: %s: "
				     "raise the locked memory limit ('ulimit -l', "
				     "kernel.perf_event_mlock_kb) or lower the buffer with "
				     "--mmap-pages", len / 1024, r->cpu, strerror(err));
		return error("cannot map the perf ring buffer for cpu %d: %s",
			     r->cpu, strerror(err));
	}
	r->base = base;
	r->map_len = len;
	r->pc = base;
	r->data = (unsigned char *)base + page;
	r->data_size = (uint64_t)s->cfg.mmap_pages * page;
	if (r->pc->data_size && r->pc->data_offset >= page &&
	    r->pc->data_offset + r->pc->data_size <= len &&
	    !(r->pc->data_size & (r->pc->data_size - 1))) {
		r->data = (unsigned char *)base + r->pc->data_offset;
		r->data_size = r->pc->data_size;
	}
	return 0;
}

static void keep_fd(struct sampler *s, int fd)
{
	ALLOC_GROW(s->fds, s->nr_fds + 1, s->alloc_fds);
	s->fds[s->nr_fds++] = fd;
}

/* Keep fd, and have it write into ring r: its own, or redirected. */
static int attach_fd(struct sampler *s, struct ring *r, int fd, pid_t tid)
{
	keep_fd(s, fd);
	if (r->fd < 0) {
		r->fd = fd;
		if (map_ring(s, r)) {
			r->fd = -1;
			return -1;
		}
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd)) {
		return error("cannot redirect perf event of task %d to the cpu %d buffer: %s",
			     (int)tid, r->cpu, strerror(errno));
	}
	return 0;
}

/*
 * The off-CPU event of (tid, cpu): the software context switch counter,
 * sampled at every switch out with the same sample layout as the clock
 * (so one parser reads both), and PERF_RECORD_SWITCH records for the way
 * back in. Opened after the clock's event settled its attributes.
 */
static int open_off_cpu(struct sampler *s, pid_t tid, int cpu, unsigned flags)
{
	struct perf_event_attr *a = &s->off_attr;
	int fd;

	*a = s->attr;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	a->freq = 0;
	a->sample_period = 1;
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = a->build_id = 0;
	a->context_switch = 1;
	a->disabled = !!(flags & SAMPLER_ENABLE_ON_EXEC);
	a->enable_on_exec = !!(flags & SAMPLER_ENABLE_ON_EXEC);
	fd = (int)sys_perf_event_open(a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int sampler_add_task(struct sampler *s, pid_t tid, unsigned flags)
{
	uint64_t bytes = (uint64_t)s->cfg.mmap_pages * (uint64_t)sysconf(_SC_PAGESIZE);
	long max_rate;

	if (s->cfg.mmap_pages & (s->cfg.mmap_pages - 1))
		return error("ring buffer size %u pages is not a power of two",
			     s->cfg.mmap_pages);
	if (s->cfg.callgraph != SAMPLER_CALLGRAPH_FP && bytes < 4 * (s->cfg.stack_size + 1024ull))
		return error("a %llu KiB ring buffer cannot hold samples with %u-byte stack copies: "
			     "raise --mmap-pages or lower the stack copy's size",
			     (unsigned long long)bytes / 1024, s->cfg.stack_size);
	if (s->cfg.callgraph == SAMPLER_CALLGRAPH_DWARF && !s->regs_mask)
		return error("--call-graph dwarf is not supported on this architecture");

	for (size_t i = 0; i < s->nr_cpus; i++) {
		struct ring *r = &s->rings[i];
		int fd = open_event(s, tid, r->cpu, flags);

		if (fd == -ENODEV)
			continue;	/* the cpu went offline */
		if (fd == -ESRCH)
			return 1;
		if (fd == -EACCES || fd == -EPERM)
			return not_permitted(-fd, tid, flags);
		if (fd == -EMFILE || fd == -ENFILE)
			return error("cannot open perf event for task %d on cpu %d: %s: "
				     "raise the open file limit ('ulimit -n')",
				     (int)tid, r->cpu, strerror(-fd));
		if (fd == -EINVAL &&
		    (max_rate = read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate", 0)) > 0 &&
		    s->cfg.freq > (unsigned long)max_rate)
			return error("-F %u is above kernel.perf_event_max_sample_rate=%ld: "
				     "lower -F or raise the limit", s->cfg.freq, max_rate);
		if (fd < 0)
			return error("cannot open perf event for task %d on cpu %d: %s",
				     (int)tid, r->cpu, strerror(-fd));
		if (attach_fd(s, r, fd, tid))
			return -1;
		if (!s->cfg.off_cpu)
			continue;
		fd = open_off_cpu(s, tid, r->cpu, flags);
		if (fd == -ESRCH)
			return 1;
		if (fd == -EACCES || fd == -EPERM)
			return not_permitted(-fd, tid, flags);
		if (fd < 0)
			return error("cannot open the context switch event for task %d on cpu %d: %s",
				     (int)tid, r->cpu, strerror(-fd));
		if (attach_fd(s, &s->rings[s->nr_cpus + (size_t)(r - s->rings)], fd, tid))
			return -1;
	}
	return 0;
}

void sampler_disable(struct sampler *s)
{
	for (size_t i = 0; i < s->nr_fds; i++)
		ioctl(s->fds[i], PERF_EVENT_IOC_DISABLE, 0);
}

size_t sampler_fds(const struct sampler *s, const int **fds)
{
	*fds = s->fds;
	return s->nr_fds;
}

const struct sampler_stats *sampler_stats(const struct sampler *s)
{
	return &s->stats;
}

const char *sampler_event_name(const struct sampler *s)
{
	return s->hardware ? "cycles" : "cpu-clock";
}

bool sampler_period_is_time(const struct sampler *s)
{
	return !s->hardware;
}

uint64_t sampler_regs_mask(const struct sampler *s)
{
	return s->regs_mask;
}

unsigned sampler_stack_size(const struct sampler *s)
{
	return s->regs_mask ? s->cfg.stack_size : 0;
}

/* ---- parsing ---------------------------------------------------------- */

/* A cursor over one record; every read is bounds-checked. */
struct cur {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t get_u64(struct cur *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static void get_u32x2(struct cur *c, uint32_t *a, uint32_t *b)
{
	uint64_t v = get_u64(c);
	uint32_t w[2];

	memcpy(w, &v, sizeof(w));
	*a = w[0];
	*b = w[1];
}

/* Take n bytes; NULL (and c->bad) when the record is shorter. */
static const unsigned char *get_bytes(struct cur *c, uint64_t n)
{
	const unsigned char *p = c->p;

	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return NULL;
	}
	c->p += n;
	return p;
}

/* The sample_id_all trailer: { pid, tid } { time } { cpu, res }. */
#define ID_TRAILER 24

static void parse_trailer(const unsigned char *rec, size_t len, struct sampler_event *ev)
{
	struct cur c = { rec + len - ID_TRAILER, rec + len, false };
	uint32_t cpu, res;

	get_u32x2(&c, &ev->pid, &ev->tid);
	ev->time = get_u64(&c);
	get_u32x2(&c, &cpu, &res);
}

/* A NUL-terminated string in [p, end), or NULL. */
static const char *get_string(const unsigned char *p, const unsigned char *end)
{
	if (p >= end || !memchr(p, '\0', (size_t)(end - p)))
		return NULL;
	return (const char *)p;
}

void sampler_split_callchain(const unsigned char *chain, uint64_t nr, bool swap,
			     uint16_t misc, uint64_t *ips, struct sampler_event *ev)
{
	uint64_t user[SAMPLER_MAX_FRAMES], ctx;
	uint32_t nk = 0, nu = 0;

	ctx = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL ?
	      PERF_CONTEXT_KERNEL : PERF_CONTEXT_USER;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t v;

		memcpy(&v, chain + i * 8, 8);
		if (swap)
			v = __builtin_bswap64(v);
		if (v >= PERF_CONTEXT_MAX) {
			ctx = v;
			continue;
		}
		if (ctx == PERF_CONTEXT_KERNEL && !nu && nk < SAMPLER_MAX_FRAMES)
			ips[nk++] = v;
		else if (ctx == PERF_CONTEXT_USER && nu < SAMPLER_MAX_FRAMES)
			user[nu++] = v;
		/* hypervisor and guest frames are not ours to show */
	}
	memcpy(ips + nk, user, nu * sizeof(*user));
	ev->sample.ips = ips;
	ev->sample.nr_kernel = nk;
	ev->sample.nr_ips = nk + nu;
}

static int parse_callchain(struct sampler *s, struct cur *c, struct sampler_event *ev,
			   uint16_t misc)
{
	uint64_t nr = get_u64(c);

	if (c->bad || nr > (uint64_t)(c->end - c->p) / 8)
		return -1;
	sampler_split_callchain(get_bytes(c, nr * 8), nr, false, misc, s->ips, ev);
	return 0;
}

static int parse_sample(struct sampler *s, const unsigned char *rec, size_t len,
			uint16_t misc, struct sampler_event *ev)
{
	struct cur c = { rec + 8, rec + len, false };
	uint32_t res;
	uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	ev->type = SAMPLER_SAMPLE;
	ev->sample.ip = get_u64(&c);
	get_u32x2(&c, &ev->pid, &ev->tid);
	ev->time = get_u64(&c);
	get_u32x2(&c, &ev->sample.cpu, &res);
	ev->sample.period = get_u64(&c);
	ev->sample.kernel_ip = mode == PERF_RECORD_MISC_KERNEL ||
			       mode == PERF_RECORD_MISC_HYPERVISOR;
	if (c.bad || parse_callchain(s, &c, ev, misc))
		return -1;
	if (s->attr.sample_type & PERF_SAMPLE_REGS_USER) {
		uint64_t abi = get_u64(&c);
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			const unsigned char *r = get_bytes(&c, (uint64_t)s->nr_regs * 8);
			if (!r)
				return -1;
			ev->sample.regs.regs = (const uint64_t *)r;	/* 8-aligned copy */
			ev->sample.regs.nr = s->nr_regs;
			ev->sample.regs.valid = abi == PERF_SAMPLE_REGS_ABI_64;
		}
	}
	if (s->attr.sample_type & PERF_SAMPLE_STACK_USER) {
		uint64_t size = get_u64(&c);
		if (size) {
			const unsigned char *data = get_bytes(&c, size);
			uint64_t dyn = get_u64(&c);
			if (c.bad)
				return -1;
			ev->sample.stack = data;
			ev->sample.stack_size = dyn < size ? dyn : size;
			ev->sample.stack_full = dyn >= size;
		}
	}
	if (c.bad)
		return -1;
	if (!ev->sample.nr_ips && s->cfg.callgraph != SAMPLER_CALLGRAPH_DWARF) {
		s->ips[0] = ev->sample.ip;
		ev->sample.ips = s->ips;
		ev->sample.nr_ips = 1;
		ev->sample.nr_kernel = ev->sample.kernel_ip;
	}
	s->stats.samples++;
	return 1;
}

static int parse_mmap(const unsigned char *rec, size_t len, uint32_t type,
		      uint16_t misc, struct sampler_event *ev)
{
	const unsigned char *end = rec + len - ID_TRAILER;
	struct cur c = { rec + 8, end, false };

	ev->type = SAMPLER_MMAP;
	get_u32x2(&c, &ev->pid, &ev->tid);
	ev->mmap.start = get_u64(&c);
	ev->mmap.len = get_u64(&c);
	ev->mmap.pgoff = get_u64(&c);
	ev->mmap.prot = 4;	/* PROT_EXEC: only executable maps are reported */
	if (type == PERF_RECORD_MMAP2) {
		const unsigned char *id = get_bytes(&c, 24);
		if (!id)
			return -1;
		if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			unsigned n = id[0];
			if (n > 20)
				return -1;
			if (n) {
				ev->mmap.build_id = id + 4;
				ev->mmap.build_id_size = n;
			}
		}
		get_u32x2(&c, &ev->mmap.prot, &ev->mmap.flags);
	}
	if (c.bad)
		return -1;
	ev->mmap.filename = get_string(c.p, end);
	if (!ev->mmap.filename || ev->mmap.start + ev->mmap.len < ev->mmap.start)
		return -1;
	return 1;
}

int sampler_parse(struct sampler *s, const void *record, size_t len,
		  struct sampler_event *ev)
{
	const unsigned char *rec = record;
	struct perf_event_header h;
	struct cur c;

	memset(ev, 0, sizeof(*ev));
	if (len < sizeof(h))
		return -1;
	memcpy(&h, rec, sizeof(h));
	if (h.size != len)
		return -1;
	if (h.type == PERF_RECORD_SAMPLE)
		return parse_sample(s, rec, len, h.misc, ev);

	/* everything else carries the sample_id_all trailer */
	if (len < sizeof(h) + ID_TRAILER)
		return -1;
	parse_trailer(rec, len, ev);
	c = (struct cur){ rec + 8, rec + len - ID_TRAILER, false };
	switch (h.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return parse_mmap(rec, len, h.type, h.misc, ev);
	case PERF_RECORD_COMM:
		ev->type = SAMPLER_COMM;
		get_u32x2(&c, &ev->pid, &ev->tid);
		ev->comm.comm = get_string(c.p, c.end);
		ev->comm.exec = !!(h.misc & PERF_RECORD_MISC_COMM_EXEC);
		return c.bad || !ev->comm.comm ? -1 : 1;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		ev->type = h.type == PERF_RECORD_FORK ? SAMPLER_FORK : SAMPLER_EXIT;
		get_u32x2(&c, &ev->pid, &ev->task.ppid);
		get_u32x2(&c, &ev->tid, &ev->task.ptid);
		get_u64(&c);
		return c.bad ? -1 : 1;
	case PERF_RECORD_LOST:
		get_u64(&c);
		s->stats.lost = sat_add((int64_t)s->stats.lost, (int64_t)(get_u64(&c) & INT64_MAX));
		return c.bad ? -1 : 0;
	case PERF_RECORD_LOST_SAMPLES:
		s->stats.lost = sat_add((int64_t)s->stats.lost, (int64_t)(get_u64(&c) & INT64_MAX));
		return c.bad ? -1 : 0;
	case PERF_RECORD_THROTTLE:
		s->stats.throttled++;
		return 0;
	case PERF_RECORD_SWITCH:
		/* the way out is the context switch event's sample, with a stack */
		ev->type = SAMPLER_SWITCH_IN;
		return h.misc & PERF_RECORD_MISC_SWITCH_OUT ? 0 : 1;
	default:
		return 0;	/* UNTHROTTLE and records we did not ask for */
	}
}

/* ---- ring buffers and the ordered queue -------------------------------- */

/* Copy n bytes starting at ring offset 'pos', wrapping at the end. */
static void ring_copy(const struct ring *r, uint64_t pos, void *dst, size_t n)
{
	size_t off = (size_t)(pos & (r->data_size - 1));
	size_t first = n < r->data_size - off ? n : (size_t)(r->data_size - off);

	memcpy(dst, r->data + off, first);
	if (first < n)
		memcpy((unsigned char *)dst + first, r->data, n - first);
}

/* The time a queued record sorts by: where its type keeps it. */
static uint64_t record_time(const unsigned char *rec, size_t len)
{
	struct perf_event_header h;
	uint64_t t = 0;

	memcpy(&h, rec, sizeof(h));
	if (h.type == PERF_RECORD_SAMPLE) {
		if (len >= 32)
			memcpy(&t, rec + 24, 8);	/* after header, ip, pid/tid */
	} else if (len >= sizeof(h) + ID_TRAILER) {
		memcpy(&t, rec + len - 16, 8);
	}
	return t;
}

static void *queue_alloc(struct sampler *s, size_t len)
{
	size_t words = (len + 7) / 8;
	struct qent *e;

	ALLOC_GROW(s->qbuf, s->qlen + words, s->qalloc);
	ALLOC_GROW(s->q, s->nr_q + 1, s->alloc_q);
	e = &s->q[s->nr_q++];
	e->off = s->qlen * 8;
	e->len = (uint32_t)len;
	e->seq = s->seq++;
	s->qlen += words;
	return s->qbuf + e->off / 8;
}

static void ring_abandon(struct sampler *s, struct ring *r, const char *why,
			 uint64_t head)
{
	warning("perf ring buffer of cpu %d is corrupt (%s): ignoring the rest of it",
		r->cpu, why);
	r->dead = true;
	s->stats.corrupt++;
	__atomic_store_n(&r->pc->data_tail, head, __ATOMIC_RELEASE);
}

static void ring_read(struct sampler *s, struct ring *r)
{
	uint64_t head, tail;

	/* pairs with the kernel's release of data_head after writing records */
	head = __atomic_load_n(&r->pc->data_head, __ATOMIC_ACQUIRE);
	tail = __atomic_load_n(&r->pc->data_tail, __ATOMIC_RELAXED);
	if (head - tail > r->data_size) {
		ring_abandon(s, r, "head ran past the tail", head);
		return;
	}
	while (tail != head) {
		struct perf_event_header h;
		uint64_t avail = head - tail;
		unsigned char *dst;

		if (avail < sizeof(h)) {
			ring_abandon(s, r, "truncated record header", head);
			return;
		}
		ring_copy(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > avail) {
			ring_abandon(s, r, h.size ? "bad record size" : "record of size 0", head);
			return;
		}
		dst = queue_alloc(s, h.size);
		ring_copy(r, tail, dst, h.size);
		s->q[s->nr_q - 1].time = record_time(dst, h.size);
		s->q[s->nr_q - 1].off_cpu = r->off_cpu;
		tail += h.size;
	}
	/* our reads of the records happen before the kernel may reuse them */
	__atomic_store_n(&r->pc->data_tail, tail, __ATOMIC_RELEASE);
}

static int qent_cmp(const void *a, const void *b)
{
	const struct qent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Deliver queued records with time <= limit, in order; keep the rest. */
static int deliver(struct sampler *s, uint64_t limit, sampler_fn fn, void *data)
{
	struct sampler_event ev;
	size_t n = 0, keep_words = 0;
	uint64_t *kept;
	int ret = 0;

	if (!s->nr_q)
		return 0;
	qsort(s->q, s->nr_q, sizeof(*s->q), qent_cmp);
	while (n < s->nr_q && s->q[n].time <= limit) {
		const struct qent *e = &s->q[n++];
		int r = sampler_parse(s, (const unsigned char *)s->qbuf + e->off, e->len, &ev);

		if (r < 0) {
			warning("skipping a malformed perf record (%u bytes)", e->len);
			continue;
		}
		if (e->off_cpu && ev.type == SAMPLER_SAMPLE) {
			ev.type = SAMPLER_OFF_CPU;
			s->stats.samples--;
			s->stats.switches++;
		}
		if (r > 0 && (ret = fn(&ev, data)) < 0)
			break;
	}
	if (ret < 0)
		n = s->nr_q;
	/* compact: the records still waiting move to a fresh buffer */
	for (size_t i = n; i < s->nr_q; i++)
		keep_words += (s->q[i].len + 7) / 8;
	kept = xmalloc((keep_words ? keep_words : 1) * 8);
	keep_words = 0;
	for (size_t i = n; i < s->nr_q; i++) {
		struct qent *e = &s->q[i];
		size_t w = (e->len + 7) / 8;
		memcpy(kept + keep_words, s->qbuf + e->off / 8, e->len);
		e->off = keep_words * 8;
		keep_words += w;
		s->q[i - n] = *e;
	}
	free(s->qbuf);
	s->qbuf = kept;
	s->qalloc = keep_words ? keep_words : 1;
	s->qlen = keep_words;
	s->nr_q -= n;
	return ret;
}

static void read_all(struct sampler *s)
{
	for (size_t i = 0; i < s->nr_rings; i++)
		if (s->rings[i].pc && !s->rings[i].dead)
			ring_read(s, &s->rings[i]);
}

int sampler_attach_memory(struct sampler *s, void *mem, size_t len)
{
	struct perf_event_mmap_page *pc = mem;
	struct ring *r = NULL;

	for (size_t i = 0; i < s->nr_cpus && !r; i++)
		if (!s->rings[i].pc)
			r = &s->rings[i];
	if (!r)
		return error("no ring buffer slot left for a memory buffer");
	if (len < sizeof(*pc) || !pc->data_size || (pc->data_size & (pc->data_size - 1)) ||
	    pc->data_offset < sizeof(*pc) || pc->data_offset > len ||
	    pc->data_size > len - pc->data_offset)
		return error("memory buffer is not laid out like a perf ring buffer");
	r->base = mem;
	r->map_len = 0;
	r->pc = pc;
	r->data = (unsigned char *)mem + pc->data_offset;
	r->data_size = pc->data_size;
	return 0;
}

int sampler_read(struct sampler *s, sampler_fn fn, void *data)
{
	uint64_t start = now_ns();

	read_all(s);
	return deliver(s, start > ORDER_SLACK_NS ? start - ORDER_SLACK_NS : 0, fn, data);
}

int sampler_drain(struct sampler *s, sampler_fn fn, void *data)
{
	read_all(s);
	return deliver(s, UINT64_MAX, fn, data);
}

int sampler_parse_call_graph(const char *arg, struct sampler_config *cfg)
{
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
	char *end;
	long size;

	if (len == 2 && !strncmp(arg, "fp", 2) && !comma) {
		cfg->callgraph = SAMPLER_CALLGRAPH_FP;
		return 0;
	}
	if (len == 5 && !strncmp(arg, "dwarf", 5))
		cfg->callgraph = SAMPLER_CALLGRAPH_DWARF;
	else if (len == 4 && !strncmp(arg, "auto", 4))
		cfg->callgraph = SAMPLER_CALLGRAPH_AUTO;
	else
		return error("invalid --call-graph '%s': expected auto[,SIZE], fp or dwarf[,SIZE]", arg);
	if (!comma)
		return 0;
	errno = 0;
	size = strtol(comma + 1, &end, 10);
	if (errno || end == comma + 1 || *end || size < 8 || size > SAMPLER_MAX_STACK)
		return error("invalid value '%s' for --call-graph %.*s,SIZE: expected a whole number "
			     "from 8 to %d", comma + 1, (int)len, arg, SAMPLER_MAX_STACK);
	cfg->stack_size = (unsigned)size;
	return 0;
}
