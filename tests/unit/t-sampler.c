/*
 * t-sampler.c: the sampler's record parser and ring buffer reader, on
 * records built by hand: callchain contexts, the registers and stack of
 * frame pointer and dwarf samples, mmap build ids, lost and
 * throttle counts, records that wrap around the buffer end, corruption.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "util.h"
#include "sampler.h"

/* ---- building records ---------------------------------------------------- */

struct rec {
	unsigned char buf[4096];
	size_t len;
};

static void put(struct rec *r, const void *p, size_t n)
{
	assert_true(r->len + n <= sizeof(r->buf));
	memcpy(r->buf + r->len, p, n);
	r->len += n;
}

static void put_u64(struct rec *r, uint64_t v)
{
	put(r, &v, 8);
}

static void put_u32x2(struct rec *r, uint32_t a, uint32_t b)
{
	put(r, &a, 4);
	put(r, &b, 4);
}

static void put_str(struct rec *r, const char *s)
{
	size_t n = strlen(s) + 1;
	static const unsigned char zero[8];

	put(r, s, n);
	put(r, zero, (8 - n % 8) % 8);
}

static void begin(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { type, misc, 0 };

	r->len = 0;
	put(r, &h, sizeof(h));
}

/* sample_id_all trailer, then the header's size */
static void finish(struct rec *r, bool trailer, uint32_t pid, uint64_t time)
{
	uint16_t size;

	if (trailer) {
		put_u32x2(r, pid, pid);
		put_u64(r, time);
		put_u32x2(r, 0, 0);
	}
	size = (uint16_t)r->len;
	memcpy(r->buf + 6, &size, 2);
}

static void sample_head(struct rec *r, uint16_t misc, uint64_t ip, uint32_t pid,
			uint32_t tid, uint64_t time)
{
	begin(r, PERF_RECORD_SAMPLE, misc);
	put_u64(r, ip);
	put_u32x2(r, pid, tid);
	put_u64(r, time);
	put_u32x2(r, 1, 0);		/* cpu */
	put_u64(r, 1000000);		/* period */
}

static void comm_record(struct rec *r, uint32_t pid, const char *comm, uint64_t time)
{
	begin(r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put_u32x2(r, pid, pid);
	put_str(r, comm);
	finish(r, true, pid, time);
}

static struct sampler *fp_sampler(void)
{
	struct sampler_config cfg = { .freq = 99, .callgraph = SAMPLER_CALLGRAPH_FP };

	return sampler_new(&cfg);
}

/*
 * What follows the callchain of a frame pointer sample where the sampler
 * asked for registers and stack: here none (as for a kernel thread).
 */
static void fp_no_regs(struct rec *r, const struct sampler *s)
{
	if (!sampler_regs_mask(s))
		return;
	put_u64(r, PERF_SAMPLE_REGS_ABI_NONE);
	put_u64(r, 0);		/* no stack copied */
}

/* ---- parsing ------------------------------------------------------------------ */

static void test_sampler__callchain_contexts(void **state)
{
	struct sampler *s = fp_sampler();
	struct sampler_event ev;
	struct rec r;

	sample_head(&r, PERF_RECORD_MISC_KERNEL, 0xffffffff81000010, 7, 8, 100);
	put_u64(&r, 7);
	put_u64(&r, PERF_CONTEXT_KERNEL);
	put_u64(&r, 0xffffffff81000010);
	put_u64(&r, 0xffffffff81000020);
	put_u64(&r, PERF_CONTEXT_USER);
	put_u64(&r, 0x401000);
	put_u64(&r, 0x402000);
	put_u64(&r, 0x403000);
	fp_no_regs(&r, s);
	finish(&r, false, 0, 0);

	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 1);
	assert_int_equal(ev.type, SAMPLER_SAMPLE);
	assert_int_equal(ev.pid, 7);
	assert_int_equal(ev.tid, 8);
	assert_int_equal(ev.time, 100);
	assert_int_equal(ev.sample.period, 1000000);
	assert_true(ev.sample.kernel_ip);
	assert_int_equal(ev.sample.nr_kernel, 2);
	assert_int_equal(ev.sample.nr_ips, 5);
	assert_int_equal(ev.sample.ips[0], 0xffffffff81000010);
	assert_int_equal(ev.sample.ips[1], 0xffffffff81000020);
	assert_int_equal(ev.sample.ips[2], 0x401000);
	assert_int_equal(ev.sample.ips[4], 0x403000);
	assert_int_equal(sampler_stats(s)->samples, 1);
	sampler_free(s);
}

static void test_sampler__guest_frames_dropped(void **state)
{
	struct sampler *s = fp_sampler();
	struct sampler_event ev;
	struct rec r;

	sample_head(&r, PERF_RECORD_MISC_USER, 0x401000, 1, 1, 5);
	put_u64(&r, 5);
	put_u64(&r, PERF_CONTEXT_USER);
	put_u64(&r, 0x401000);
	put_u64(&r, PERF_CONTEXT_GUEST_KERNEL);
	put_u64(&r, 0xffffffff99999999);
	put_u64(&r, 0x12345);
	fp_no_regs(&r, s);
	finish(&r, false, 0, 0);

	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 1);
	assert_false(ev.sample.kernel_ip);
	assert_int_equal(ev.sample.nr_kernel, 0);
	assert_int_equal(ev.sample.nr_ips, 1);
	assert_int_equal(ev.sample.ips[0], 0x401000);
	sampler_free(s);
}

static void test_sampler__empty_callchain_keeps_ip(void **state)
{
	struct sampler *s = fp_sampler();
	struct sampler_event ev;
	struct rec r;

	sample_head(&r, PERF_RECORD_MISC_USER, 0x401234, 1, 1, 5);
	put_u64(&r, 0);
	fp_no_regs(&r, s);
	finish(&r, false, 0, 0);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 1);
	assert_int_equal(ev.sample.nr_ips, 1);
	assert_int_equal(ev.sample.ips[0], 0x401234);
	sampler_free(s);
}

static void test_sampler__hostile_samples(void **state)
{
	struct sampler *s = fp_sampler();
	struct sampler_event ev;
	struct rec r;

	/* callchain count far larger than the record */
	sample_head(&r, PERF_RECORD_MISC_USER, 0x401000, 1, 1, 5);
	put_u64(&r, 1ull << 60);
	put_u64(&r, 0x401000);
	finish(&r, false, 0, 0);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), -1);

	/* truncated before the callchain */
	sample_head(&r, PERF_RECORD_MISC_USER, 0x401000, 1, 1, 5);
	finish(&r, false, 0, 0);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), -1);

	/* header size disagrees with the length */
	sample_head(&r, PERF_RECORD_MISC_USER, 0x401000, 1, 1, 5);
	put_u64(&r, 0);
	finish(&r, false, 0, 0);
	assert_int_equal(sampler_parse(s, r.buf, r.len - 8, &ev), -1);
	assert_int_equal(sampler_parse(s, r.buf, 4, &ev), -1);
	assert_int_equal(sampler_stats(s)->samples, 0);
	sampler_free(s);
}

static void test_sampler__dwarf_regs_and_stack(void **state)
{
	struct sampler_config cfg = { .freq = 99, .callgraph = SAMPLER_CALLGRAPH_DWARF,
				      .stack_size = 64 };
	struct sampler *s = sampler_new(&cfg);
	unsigned nregs = (unsigned)__builtin_popcountll(sampler_regs_mask(s));
	unsigned char stack[64];
	struct sampler_event ev;
	struct rec r;

	if (!nregs) {
		sampler_free(s);
		skip();
	}
	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (unsigned char)i;
	sample_head(&r, PERF_RECORD_MISC_USER, 0x401000, 3, 4, 9);
	put_u64(&r, 0);				/* no kernel callchain */
	put_u64(&r, PERF_SAMPLE_REGS_ABI_64);
	for (unsigned i = 0; i < nregs; i++)
		put_u64(&r, 0x1000 + i);
	put_u64(&r, sizeof(stack));
	put(&r, stack, sizeof(stack));
	put_u64(&r, 40);			/* dyn_size: what was really copied */
	finish(&r, false, 0, 0);

	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 1);
	assert_true(ev.sample.regs.valid);
	assert_int_equal(ev.sample.regs.nr, nregs);
	assert_int_equal(ev.sample.regs.regs[nregs - 1], 0x1000 + nregs - 1);
	assert_int_equal(ev.sample.stack_size, 40);
	assert_int_equal(ev.sample.stack[39], 39);
	assert_int_equal(ev.sample.nr_ips, 0);	/* user frames come from unwinding */

	/* a stack size beyond the record */
	sample_head(&r, PERF_RECORD_MISC_USER, 0x401000, 3, 4, 9);
	put_u64(&r, 0);
	put_u64(&r, PERF_SAMPLE_REGS_ABI_64);
	for (unsigned i = 0; i < nregs; i++)
		put_u64(&r, 0);
	put_u64(&r, 1 << 20);
	finish(&r, false, 0, 0);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), -1);
	sampler_free(s);
}

static void test_sampler__fp_leaf_regs_and_stack(void **state)
{
	struct sampler *s = fp_sampler();
	unsigned nregs = (unsigned)__builtin_popcountll(sampler_regs_mask(s));
	unsigned char stack[SAMPLER_FP_STACK];
	struct sampler_event ev;
	struct rec r;

	if (!nregs) {
		sampler_free(s);
		skip();
	}
	memset(stack, 0xab, sizeof(stack));
	sample_head(&r, PERF_RECORD_MISC_KERNEL, 0xffffffff81000010, 3, 4, 9);
	put_u64(&r, 4);
	put_u64(&r, PERF_CONTEXT_KERNEL);
	put_u64(&r, 0xffffffff81000010);
	put_u64(&r, PERF_CONTEXT_USER);
	put_u64(&r, 0x401000);
	put_u64(&r, PERF_SAMPLE_REGS_ABI_64);
	for (unsigned i = 0; i < nregs; i++)
		put_u64(&r, 0x2000 + i);
	put_u64(&r, sizeof(stack));
	put(&r, stack, sizeof(stack));
	put_u64(&r, 24);			/* the stack's top was 24 bytes up */
	finish(&r, false, 0, 0);

	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 1);
	assert_int_equal(ev.sample.nr_kernel, 1);
	assert_int_equal(ev.sample.nr_ips, 2);
	assert_int_equal(ev.sample.ips[1], 0x401000);
	assert_true(ev.sample.regs.valid);
	assert_int_equal(ev.sample.regs.nr, nregs);
	assert_int_equal(ev.sample.regs.regs[0], 0x2000);
	assert_int_equal(ev.sample.stack_size, 24);

	/* a 32-bit task: registers present but not usable */
	sample_head(&r, PERF_RECORD_MISC_USER, 0x8048000, 3, 4, 9);
	put_u64(&r, 0);
	put_u64(&r, PERF_SAMPLE_REGS_ABI_32);
	for (unsigned i = 0; i < nregs; i++)
		put_u64(&r, 0);
	put_u64(&r, 0);
	finish(&r, false, 0, 0);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 1);
	assert_false(ev.sample.regs.valid);

	/* the registers cut short */
	sample_head(&r, PERF_RECORD_MISC_USER, 0x401000, 3, 4, 9);
	put_u64(&r, 0);
	put_u64(&r, PERF_SAMPLE_REGS_ABI_64);
	put_u64(&r, 0x2000);
	finish(&r, false, 0, 0);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), -1);
	sampler_free(s);
}

static void test_sampler__auto_keeps_chain_regs_and_stack(void **state)
{
	struct sampler_config cfg = { .freq = 99, .callgraph = SAMPLER_CALLGRAPH_AUTO,
				      .stack_size = 64 };
	struct sampler *s = sampler_new(&cfg);
	unsigned nregs = (unsigned)__builtin_popcountll(sampler_regs_mask(s));
	unsigned char stack[64] = { 0 };
	struct sampler_event ev;
	struct rec r;

	if (!nregs) {
		sampler_free(s);
		skip();
	}
	assert_int_equal(sampler_stack_size(s), 64);
	sample_head(&r, PERF_RECORD_MISC_USER, 0x401000, 3, 4, 9);
	put_u64(&r, 3);				/* a user callchain */
	put_u64(&r, PERF_CONTEXT_USER);
	put_u64(&r, 0x401000);
	put_u64(&r, 0x402000);
	put_u64(&r, PERF_SAMPLE_REGS_ABI_64);
	for (unsigned i = 0; i < nregs; i++)
		put_u64(&r, 0x1000 + i);
	put_u64(&r, sizeof(stack));
	put(&r, stack, sizeof(stack));
	put_u64(&r, sizeof(stack));		/* all of it copied: the stack goes on */
	finish(&r, false, 0, 0);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 1);
	assert_int_equal(ev.sample.nr_ips, 2);
	assert_int_equal(ev.sample.ips[1], 0x402000);
	assert_int_equal(ev.sample.regs.nr, nregs);
	assert_true(ev.sample.stack_full);
	sampler_free(s);
}

static void test_sampler__switch_records(void **state)
{
	struct sampler *s = fp_sampler();
	struct sampler_event ev;
	struct rec r;

	begin(&r, PERF_RECORD_SWITCH, 0);	/* back on a CPU */
	finish(&r, true, 5, 6);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 1);
	assert_int_equal(ev.type, SAMPLER_SWITCH_IN);
	assert_int_equal(ev.tid, 5);
	assert_int_equal(ev.time, 6);

	begin(&r, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
	finish(&r, true, 5, 6);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 0);

	begin(&r, PERF_RECORD_SWITCH, 0);	/* too short for its trailer */
	r.len = 8;
	memcpy(r.buf + 6, &(uint16_t){ 8 }, 2);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), -1);
	sampler_free(s);
}

static void test_sampler__parse_call_graph(void **state)
{
	struct sampler_config cfg = { 0 };

	assert_int_equal(cfg.callgraph, SAMPLER_CALLGRAPH_AUTO);	/* the default */
	assert_int_equal(sampler_parse_call_graph("fp", &cfg), 0);
	assert_int_equal(cfg.callgraph, SAMPLER_CALLGRAPH_FP);
	assert_int_equal(sampler_parse_call_graph("auto,4096", &cfg), 0);
	assert_int_equal(cfg.callgraph, SAMPLER_CALLGRAPH_AUTO);
	assert_int_equal(cfg.stack_size, 4096);
	assert_int_equal(sampler_parse_call_graph("dwarf", &cfg), 0);
	assert_int_equal(cfg.callgraph, SAMPLER_CALLGRAPH_DWARF);
	assert_int_equal(sampler_parse_call_graph("fp,64", &cfg), -1);
	assert_int_equal(sampler_parse_call_graph("auto,4", &cfg), -1);
	assert_int_equal(sampler_parse_call_graph("auto,", &cfg), -1);
	assert_int_equal(sampler_parse_call_graph("autox", &cfg), -1);
	assert_int_equal(sampler_parse_call_graph("auto,99999999", &cfg), -1);
}

static void test_sampler__mmap2_build_id(void **state)
{
	struct sampler *s = fp_sampler();
	unsigned char id[24] = { 20, 0, 0, 0 };
	struct sampler_event ev;
	struct rec r;

	for (int i = 0; i < 20; i++)
		id[4 + i] = (unsigned char)(0xa0 + i);
	begin(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	put_u32x2(&r, 42, 42);
	put_u64(&r, 0x7f0000001000);
	put_u64(&r, 0x2000);
	put_u64(&r, 0x1000);
	put(&r, id, sizeof(id));
	put_u32x2(&r, 5, 2);		/* PROT_READ|PROT_EXEC, MAP_PRIVATE */
	put_str(&r, "/usr/lib/libx.so");
	finish(&r, true, 42, 77);

	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 1);
	assert_int_equal(ev.type, SAMPLER_MMAP);
	assert_int_equal(ev.pid, 42);
	assert_int_equal(ev.time, 77);
	assert_int_equal(ev.mmap.start, 0x7f0000001000);
	assert_int_equal(ev.mmap.len, 0x2000);
	assert_int_equal(ev.mmap.pgoff, 0x1000);
	assert_string_equal(ev.mmap.filename, "/usr/lib/libx.so");
	assert_int_equal(ev.mmap.build_id_size, 20);
	assert_int_equal(ev.mmap.build_id[19], 0xa0 + 19);

	/* a build id longer than the field */
	r.buf[8 + 8 + 24] = 21;
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), -1);
	sampler_free(s);
}

static void test_sampler__unterminated_filename(void **state)
{
	struct sampler *s = fp_sampler();
	struct sampler_event ev;
	struct rec r;

	begin(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put_u32x2(&r, 1, 1);
	put_u64(&r, 0x1000);
	put_u64(&r, 0x1000);
	put_u64(&r, 0);
	put_u64(&r, 0);
	put_u64(&r, 0);
	put_u64(&r, 0);
	put_u32x2(&r, 5, 2);
	put(&r, "abcdefgh", 8);		/* no NUL before the trailer */
	finish(&r, true, 1, 1);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), -1);
	sampler_free(s);
}

static void test_sampler__lost_and_throttle(void **state)
{
	struct sampler *s = fp_sampler();
	struct sampler_event ev;
	struct rec r;

	begin(&r, PERF_RECORD_LOST, 0);
	put_u64(&r, 1);			/* id */
	put_u64(&r, 12);		/* lost */
	finish(&r, true, 1, 1);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 0);

	begin(&r, PERF_RECORD_LOST_SAMPLES, 0);
	put_u64(&r, 3);
	finish(&r, true, 1, 1);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 0);

	begin(&r, PERF_RECORD_THROTTLE, 0);
	put_u64(&r, 1);
	put_u64(&r, 1);
	put_u64(&r, 1);
	finish(&r, true, 1, 1);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 0);

	assert_int_equal(sampler_stats(s)->lost, 15);
	assert_int_equal(sampler_stats(s)->throttled, 1);
	sampler_free(s);
}

static void test_sampler__fork_and_comm(void **state)
{
	struct sampler *s = fp_sampler();
	struct sampler_event ev;
	struct rec r;

	begin(&r, PERF_RECORD_FORK, 0);
	put_u32x2(&r, 20, 10);		/* pid, ppid */
	put_u32x2(&r, 21, 11);		/* tid, ptid */
	put_u64(&r, 5);
	finish(&r, true, 20, 5);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 1);
	assert_int_equal(ev.type, SAMPLER_FORK);
	assert_int_equal(ev.pid, 20);
	assert_int_equal(ev.tid, 21);
	assert_int_equal(ev.task.ppid, 10);
	assert_int_equal(ev.task.ptid, 11);

	comm_record(&r, 20, "worker", 6);
	assert_int_equal(sampler_parse(s, r.buf, r.len, &ev), 1);
	assert_int_equal(ev.type, SAMPLER_COMM);
	assert_string_equal(ev.comm.comm, "worker");
	assert_true(ev.comm.exec);
	sampler_free(s);
}

/* ---- the ring buffer reader ------------------------------------------------------- */

#define DATA_OFF 4096
#define DATA_SIZE 4096

struct fake_ring {
	unsigned char *mem;
	struct perf_event_mmap_page *pc;
	unsigned char *data;
};

static void fake_ring_init(struct fake_ring *f, uint64_t start)
{
	f->mem = aligned_alloc(4096, DATA_OFF + DATA_SIZE);
	memset(f->mem, 0, DATA_OFF + DATA_SIZE);
	f->pc = (struct perf_event_mmap_page *)f->mem;
	f->pc->data_offset = DATA_OFF;
	f->pc->data_size = DATA_SIZE;
	f->pc->data_head = f->pc->data_tail = start;
	f->data = f->mem + DATA_OFF;
}

/* Write a record at data_head, wrapping like the kernel does. */
static void fake_ring_put(struct fake_ring *f, const void *p, size_t n)
{
	uint64_t head = f->pc->data_head;

	for (size_t i = 0; i < n; i++)
		f->data[(head + i) % DATA_SIZE] = ((const unsigned char *)p)[i];
	f->pc->data_head = head + n;
}

struct collected {
	int n;
	char comms[8][16];
	uint64_t times[8];
};

static int collect(const struct sampler_event *ev, void *data)
{
	struct collected *c = data;

	if (ev->type == SAMPLER_COMM && c->n < 8) {
		snprintf(c->comms[c->n], sizeof(c->comms[0]), "%s", ev->comm.comm);
		c->times[c->n++] = ev->time;
	}
	return 0;
}

static void test_sampler__ring_wraps_around(void **state)
{
	struct sampler *s = fp_sampler();
	struct collected c = { 0 };
	struct fake_ring f;
	struct rec r;

	/* start 16 bytes before the end: the first record straddles it */
	fake_ring_init(&f, 3 * DATA_SIZE - 16);
	assert_int_equal(sampler_attach_memory(s, f.mem, DATA_OFF + DATA_SIZE), 0);
	comm_record(&r, 1, "wrapped", 30);
	fake_ring_put(&f, r.buf, r.len);
	comm_record(&r, 1, "first", 10);
	fake_ring_put(&f, r.buf, r.len);
	comm_record(&r, 1, "second", 20);
	fake_ring_put(&f, r.buf, r.len);

	assert_int_equal(sampler_drain(s, collect, &c), 0);
	assert_int_equal(c.n, 3);
	/* delivered in time order, not buffer order */
	assert_string_equal(c.comms[0], "first");
	assert_string_equal(c.comms[1], "second");
	assert_string_equal(c.comms[2], "wrapped");
	assert_int_equal(f.pc->data_tail, f.pc->data_head);
	assert_int_equal(sampler_stats(s)->corrupt, 0);
	sampler_free(s);
	free(f.mem);
}

static void test_sampler__ring_holds_back_recent_records(void **state)
{
	struct sampler *s = fp_sampler();
	struct collected c = { 0 };
	struct fake_ring f;
	struct rec r;

	fake_ring_init(&f, 0);
	assert_int_equal(sampler_attach_memory(s, f.mem, DATA_OFF + DATA_SIZE), 0);
	comm_record(&r, 1, "old", 1);
	fake_ring_put(&f, r.buf, r.len);
	comm_record(&r, 1, "future", UINT64_MAX - 1);
	fake_ring_put(&f, r.buf, r.len);

	/* a read delivers only what no later record can precede */
	assert_int_equal(sampler_read(s, collect, &c), 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.comms[0], "old");
	assert_int_equal(f.pc->data_tail, f.pc->data_head);
	assert_int_equal(sampler_drain(s, collect, &c), 0);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.comms[1], "future");
	sampler_free(s);
	free(f.mem);
}

static const struct {
	const char *name;
	uint16_t size;
} corrupt_sizes[] = {
	{ "size 0", 0 },
	{ "size smaller than a header", 4 },
	{ "size not a multiple of 8", 52 },
	{ "size beyond what was written", 2048 },
};

static void test_sampler__ring_corruption(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(corrupt_sizes); i++) {
		struct sampler *s = fp_sampler();
		struct collected c = { 0 };
		struct perf_event_header h = { PERF_RECORD_COMM, 0, corrupt_sizes[i].size };
		struct fake_ring f;
		struct rec r;

		fake_ring_init(&f, 100 * 8);
		assert_int_equal(sampler_attach_memory(s, f.mem, DATA_OFF + DATA_SIZE), 0);
		comm_record(&r, 1, "good", 1);
		fake_ring_put(&f, r.buf, r.len);
		fake_ring_put(&f, &h, sizeof(h));
		fake_ring_put(&f, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
		comm_record(&r, 1, "after", 2);
		fake_ring_put(&f, r.buf, r.len);

		assert_int_equal(sampler_drain(s, collect, &c), 0);
		if (c.n != 1 || strcmp(c.comms[0], "good"))
			fail_msg("%s: expected only the record before it", corrupt_sizes[i].name);
		assert_int_equal(sampler_stats(s)->corrupt, 1);
		/* abandoned: reading again delivers nothing new */
		comm_record(&r, 1, "later", 3);
		fake_ring_put(&f, r.buf, r.len);
		assert_int_equal(sampler_drain(s, collect, &c), 0);
		assert_int_equal(c.n, 1);
		sampler_free(s);
		free(f.mem);
	}
}

static void test_sampler__head_past_tail(void **state)
{
	struct sampler *s = fp_sampler();
	struct collected c = { 0 };
	struct fake_ring f;

	fake_ring_init(&f, 0);
	assert_int_equal(sampler_attach_memory(s, f.mem, DATA_OFF + DATA_SIZE), 0);
	f.pc->data_head = DATA_SIZE + 8;	/* more than the buffer holds */
	assert_int_equal(sampler_drain(s, collect, &c), 0);
	assert_int_equal(c.n, 0);
	assert_int_equal(sampler_stats(s)->corrupt, 1);
	sampler_free(s);
	free(f.mem);
}

static void test_sampler__attach_memory_checks_layout(void **state)
{
	struct sampler *s = fp_sampler();
	struct fake_ring f;

	fake_ring_init(&f, 0);
	f.pc->data_size = 3000;		/* not a power of two */
	assert_int_equal(sampler_attach_memory(s, f.mem, DATA_OFF + DATA_SIZE), -1);
	f.pc->data_size = DATA_SIZE * 2;	/* past the end */
	assert_int_equal(sampler_attach_memory(s, f.mem, DATA_OFF + DATA_SIZE), -1);
	sampler_free(s);
	free(f.mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sampler__callchain_contexts),
		cmocka_unit_test(test_sampler__guest_frames_dropped),
		cmocka_unit_test(test_sampler__empty_callchain_keeps_ip),
		cmocka_unit_test(test_sampler__hostile_samples),
		cmocka_unit_test(test_sampler__dwarf_regs_and_stack),
		cmocka_unit_test(test_sampler__fp_leaf_regs_and_stack),
		cmocka_unit_test(test_sampler__auto_keeps_chain_regs_and_stack),
		cmocka_unit_test(test_sampler__switch_records),
		cmocka_unit_test(test_sampler__parse_call_graph),
		cmocka_unit_test(test_sampler__mmap2_build_id),
		cmocka_unit_test(test_sampler__unterminated_filename),
		cmocka_unit_test(test_sampler__lost_and_throttle),
		cmocka_unit_test(test_sampler__fork_and_comm),
		cmocka_unit_test(test_sampler__ring_wraps_around),
		cmocka_unit_test(test_sampler__ring_holds_back_recent_records),
		cmocka_unit_test(test_sampler__ring_corruption),
		cmocka_unit_test(test_sampler__head_past_tail),
		cmocka_unit_test(test_sampler__attach_memory_checks_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
