/*
 * t-record.c: the recording timeline fed with hand-made sampler events:
 * mappings per process, fork copies them, exec clears them, overlapping
 * mmaps cut older ones, kernel frames, aggregation, and the profile built
 * from it (sample types, labels, mappings with the main executable's
 * first, locations), and the caller of a frameless leaf found from this
 * test program's own call frame information.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#if defined(__x86_64__)
#include <asm/perf_regs.h>
#endif

#include "util.h"
#include "profile.h"
#include "record.h"

#define PERIOD 1000000

static struct recording *new_fp(void)
{
	return recording_new(SAMPLER_CALLGRAPH_FP, 0);
}

static void feed(struct recording *r, const struct sampler_event *ev)
{
	assert_int_equal(recording_event(ev, r), 0);
}

static void ev_mmap(struct recording *r, uint32_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, uint32_t prot, const char *file)
{
	struct sampler_event ev = { .type = SAMPLER_MMAP, .pid = pid, .tid = pid };

	ev.mmap.start = start;
	ev.mmap.len = len;
	ev.mmap.pgoff = pgoff;
	ev.mmap.prot = prot;
	ev.mmap.filename = file;
	feed(r, &ev);
}

static void ev_comm(struct recording *r, uint32_t pid, uint32_t tid, const char *comm,
		    bool exec)
{
	struct sampler_event ev = { .type = SAMPLER_COMM, .pid = pid, .tid = tid };

	ev.comm.comm = comm;
	ev.comm.exec = exec;
	feed(r, &ev);
}

static void ev_fork(struct recording *r, uint32_t pid, uint32_t ppid, uint32_t tid,
		    uint32_t ptid)
{
	struct sampler_event ev = { .type = SAMPLER_FORK, .pid = pid, .tid = tid };

	ev.task.ppid = ppid;
	ev.task.ptid = ptid;
	feed(r, &ev);
}

static void ev_sample(struct recording *r, uint32_t pid, uint32_t tid,
		      const uint64_t *ips, uint32_t n, uint32_t nkernel)
{
	struct sampler_event ev = { .type = SAMPLER_SAMPLE, .pid = pid, .tid = tid };

	ev.sample.ips = ips;
	ev.sample.nr_ips = n;
	ev.sample.nr_kernel = nkernel;
	ev.sample.ip = ips[0];
	ev.sample.kernel_ip = nkernel > 0;
	ev.sample.period = PERIOD;
	feed(r, &ev);
}

static void build(struct recording *r, struct profile *p)
{
	struct recording_info info = {
		.event = "cpu-clock", .period_is_time = true, .freq = 1000,
		.time_nanos = 1, .duration_nanos = 2,
	};

	profile_init(p);
	assert_int_equal(recording_build(r, p, &info), 0);
}

/* The mapping file of location i (0 = leaf) of sample s. */
static const char *frame_file_of(const struct profile *p, size_t s, uint32_t i,
				 uint64_t *addr)
{
	const struct pf_sample *sm = &p->samples[s];
	const struct pf_location *l;
	const struct pf_mapping *m;

	assert_true(i < sm->nloc);
	l = profile_location(p, profile_sample_locs(p, sm)[i]);
	assert_non_null(l);
	if (addr)
		*addr = l->address;
	m = profile_mapping(p, l->mapping_id);
	assert_non_null(m);
	return profile_string(p, m->filename);
}

static int64_t num_label(const struct profile *p, size_t s, const char *key)
{
	const struct pf_sample *sm = &p->samples[s];

	for (uint32_t i = 0; i < sm->nlabel; i++) {
		const struct pf_label *l = &p->labels[sm->label_off + i];
		if (!strcmp(profile_string(p, l->key), key))
			return l->num;
	}
	fail_msg("no label %s", key);
	return -1;
}

static void test_record__exec_mmap_sample(void **state)
{
	struct recording *r = new_fp();
	uint64_t ips[] = { 0x400100, 0x400200 };
	const struct pf_mapping *m;
	struct profile p;
	uint64_t addr;

	ev_comm(r, 10, 10, "prog", true);
	ev_mmap(r, 10, 0x400000, 0x1000, 0, 5, "/nonexistent/prog");
	ev_sample(r, 10, 10, ips, 2, 0);
	build(r, &p);

	assert_int_equal(p.nr_samples, 1);
	assert_string_equal(frame_file_of(&p, 0, 0, &addr), "/nonexistent/prog");
	assert_int_equal(addr, 0x400100);
	assert_string_equal(frame_file_of(&p, 0, 1, &addr), "/nonexistent/prog");
	assert_int_equal(addr, 0x400200);
	m = profile_mapping(&p, 1);
	assert_int_equal(m->start, 0x400000);
	assert_int_equal(m->limit, 0x401000);
	assert_int_equal(num_label(&p, 0, "pid"), 10);
	assert_int_equal(num_label(&p, 0, "tid"), 10);
	assert_string_equal(profile_sample_label(&p, &p.samples[0], "comm"), "prog");

	assert_int_equal(p.nr_sample_type, 2);
	assert_string_equal(profile_string(&p, p.sample_type[0].type), "samples");
	assert_string_equal(profile_string(&p, p.sample_type[0].unit), "count");
	assert_string_equal(profile_string(&p, p.sample_type[1].type), "cpu");
	assert_string_equal(profile_string(&p, p.sample_type[1].unit), "nanoseconds");
	assert_string_equal(profile_string(&p, p.period_type.type), "cpu");
	assert_int_equal(p.period, 1000000);
	assert_int_equal(profile_sample_values(&p, &p.samples[0])[0], 1);
	assert_int_equal(profile_sample_values(&p, &p.samples[0])[1], PERIOD);
	assert_int_equal(p.duration_nanos, 2);
	profile_release(&p);
	recording_free(r);
}

static void test_record__fork_inherits_exec_replaces(void **state)
{
	struct recording *r = new_fp();
	uint64_t ips[] = { 0x400100 };
	struct profile p;

	ev_comm(r, 10, 10, "prog", true);
	ev_mmap(r, 10, 0x400000, 0x1000, 0, 5, "/nonexistent/prog");
	ev_fork(r, 11, 10, 11, 10);
	ev_sample(r, 11, 11, ips, 1, 0);	/* child, before exec */
	ev_comm(r, 11, 11, "other", true);
	ev_sample(r, 11, 11, ips, 1, 0);	/* child, after exec: unmapped */
	ev_sample(r, 10, 10, ips, 1, 0);	/* the parent still has its map */
	build(r, &p);

	assert_int_equal(p.nr_samples, 3);
	assert_string_equal(frame_file_of(&p, 0, 0, NULL), "/nonexistent/prog");
	assert_string_equal(profile_sample_label(&p, &p.samples[0], "comm"), "prog");
	assert_int_equal(num_label(&p, 0, "pid"), 11);
	assert_string_equal(frame_file_of(&p, 1, 0, NULL), "");
	assert_string_equal(profile_sample_label(&p, &p.samples[1], "comm"), "other");
	assert_string_equal(frame_file_of(&p, 2, 0, NULL), "/nonexistent/prog");
	profile_release(&p);
	recording_free(r);
}

static void test_record__threads_share_maps(void **state)
{
	struct recording *r = new_fp();
	uint64_t ips[] = { 0x400100 };
	struct profile p;

	ev_comm(r, 10, 10, "prog", true);
	ev_mmap(r, 10, 0x400000, 0x1000, 0, 5, "/nonexistent/prog");
	ev_fork(r, 10, 10, 12, 10);
	ev_sample(r, 10, 12, ips, 1, 0);
	ev_comm(r, 10, 12, "worker", false);
	ev_sample(r, 10, 12, ips, 1, 0);
	build(r, &p);

	assert_int_equal(p.nr_samples, 2);
	assert_int_equal(num_label(&p, 0, "pid"), 10);
	assert_int_equal(num_label(&p, 0, "tid"), 12);
	assert_string_equal(profile_sample_label(&p, &p.samples[0], "comm"), "prog");
	assert_string_equal(profile_sample_label(&p, &p.samples[1], "comm"), "worker");
	assert_string_equal(frame_file_of(&p, 1, 0, NULL), "/nonexistent/prog");
	profile_release(&p);
	recording_free(r);
}

static void test_record__many_threads_keep_names(void **state)
{
	struct recording *r = new_fp();
	uint64_t ips[] = { 0x400100 };
	struct profile p;

	ev_comm(r, 10, 10, "pool", true);
	/* enough new threads to move the thread table while forking */
	for (uint32_t tid = 100; tid < 400; tid++)
		ev_fork(r, 10, 10, tid, tid == 100 ? 10 : tid - 1);
	ev_sample(r, 10, 399, ips, 1, 0);
	build(r, &p);
	assert_string_equal(profile_sample_label(&p, &p.samples[0], "comm"), "pool");
	assert_int_equal(num_label(&p, 0, "tid"), 399);
	profile_release(&p);
	recording_free(r);
}

static void test_record__overlapping_mmap_cuts(void **state)
{
	struct recording *r = new_fp();
	uint64_t a[] = { 0x1800 }, b[] = { 0x2800 }, c[] = { 0x3800 };
	const struct pf_location *l;
	const struct pf_mapping *m;
	struct profile p;

	ev_mmap(r, 5, 0x1000, 0x3000, 0, 5, "/nonexistent/a");
	ev_mmap(r, 5, 0x2000, 0x1000, 0x5000, 5, "/nonexistent/b");
	ev_sample(r, 5, 5, a, 1, 0);
	ev_sample(r, 5, 5, b, 1, 0);
	ev_sample(r, 5, 5, c, 1, 0);
	build(r, &p);

	assert_int_equal(p.nr_samples, 3);
	assert_string_equal(frame_file_of(&p, 0, 0, NULL), "/nonexistent/a");
	assert_string_equal(frame_file_of(&p, 1, 0, NULL), "/nonexistent/b");
	assert_string_equal(frame_file_of(&p, 2, 0, NULL), "/nonexistent/a");
	l = profile_location(&p, profile_sample_locs(&p, &p.samples[2])[0]);
	m = profile_mapping(&p, l->mapping_id);
	assert_int_equal(m->start, 0x3000);
	assert_int_equal(m->limit, 0x4000);
	assert_int_equal(m->offset, 0x2000);	/* the right part keeps its file offset */
	l = profile_location(&p, profile_sample_locs(&p, &p.samples[1])[0]);
	m = profile_mapping(&p, l->mapping_id);
	assert_int_equal(m->offset, 0x5000);
	profile_release(&p);
	recording_free(r);
}

static void test_record__non_exec_mmap_ignored(void **state)
{
	struct recording *r = new_fp();
	uint64_t ips[] = { 0x1800 };
	struct profile p;

	ev_mmap(r, 5, 0x1000, 0x1000, 0, 3, "/nonexistent/data");	/* rw- */
	ev_sample(r, 5, 5, ips, 1, 0);
	build(r, &p);
	assert_string_equal(frame_file_of(&p, 0, 0, NULL), "");
	profile_release(&p);
	recording_free(r);
}

static void test_record__kernel_frames(void **state)
{
	struct recording *r = new_fp();
	uint64_t ips[] = { 0xffffffff81000010, 0xffffffff81000020, 0x400100 };
	const struct pf_mapping *m;
	struct profile p;
	struct pf_frame *frames = NULL;
	size_t alloc = 0, n;

	ev_mmap(r, 10, 0x400000, 0x1000, 0, 5, "/nonexistent/prog");
	ev_sample(r, 10, 10, ips, 3, 2);
	build(r, &p);

	assert_int_equal(p.samples[0].nloc, 3);
	assert_string_equal(frame_file_of(&p, 0, 0, NULL), "[kernel.kallsyms]");
	assert_string_equal(frame_file_of(&p, 0, 1, NULL), "[kernel.kallsyms]");
	assert_string_equal(frame_file_of(&p, 0, 2, NULL), "/nonexistent/prog");
	n = profile_sample_frames(&p, &p.samples[0], &frames, &alloc);
	assert_true(n >= 3);
	assert_true(frame_is_kernel(&p, &frames[0]));
	assert_false(frame_is_kernel(&p, &frames[n - 1]));
	/* the kernel mapping spans the kernel addresses seen */
	m = profile_mapping(&p, profile_location(&p, profile_sample_locs(&p, &p.samples[0])[0])->mapping_id);
	assert_int_equal(m->start, 0xffffffff81000010);
	assert_int_equal(m->limit, 0xffffffff81000021);
	free(frames);
	profile_release(&p);
	recording_free(r);
}

static void test_record__identical_stacks_aggregate(void **state)
{
	struct recording *r = new_fp();
	uint64_t ips[] = { 0x400100, 0x400200 };
	struct profile p;

	ev_mmap(r, 10, 0x400000, 0x1000, 0, 5, "/nonexistent/prog");
	for (int i = 0; i < 5; i++)
		ev_sample(r, 10, 10, ips, 2, 0);
	ev_sample(r, 10, 11, ips, 2, 0);	/* another thread: its own sample */
	assert_int_equal(recording_samples(r), 6);
	build(r, &p);

	assert_int_equal(p.nr_samples, 2);
	assert_int_equal(profile_sample_values(&p, &p.samples[0])[0], 5);
	assert_int_equal(profile_sample_values(&p, &p.samples[0])[1], 5 * PERIOD);
	assert_int_equal(profile_sample_values(&p, &p.samples[1])[0], 1);
	assert_int_equal(profile_total(&p, 0), 6);
	/* one location per distinct address, shared by both samples */
	assert_int_equal(p.nr_locations, 2);
	profile_release(&p);
	recording_free(r);
}

static void test_record__unknown_addresses(void **state)
{
	struct recording *r = new_fp();
	uint64_t a[] = { 0x1000 }, b[] = { 0x9000 };
	const struct pf_location *l;
	struct profile p;

	ev_sample(r, 3, 3, a, 1, 0);
	ev_sample(r, 3, 3, b, 1, 0);
	build(r, &p);
	assert_string_equal(frame_file_of(&p, 0, 0, NULL), "");
	assert_string_equal(frame_file_of(&p, 1, 0, NULL), "");
	l = profile_location(&p, profile_sample_locs(&p, &p.samples[0])[0]);
	assert_int_equal(l->nline, 0);
	assert_int_equal(p.nr_mappings, 1);
	assert_int_equal(p.mappings[0].start, 0x1000);
	assert_int_equal(p.mappings[0].limit, 0x9001);
	assert_false(p.mappings[0].has_functions);
	profile_release(&p);
	recording_free(r);
}

static const char *mapping_file(const struct profile *p, uint64_t id)
{
	const struct pf_mapping *m = profile_mapping(p, id);

	assert_non_null(m);
	return profile_string(p, m->filename);
}

static void test_record__main_executable_first(void **state)
{
	struct recording *r = new_fp();
	uint64_t in_ld[] = { 0x7f0000000100 }, in_prog[] = { 0x400100, 0x7f0000000200 };
	const struct pf_location *l;
	struct profile p;

	recording_set_main(r, 10);
	ev_comm(r, 10, 10, "prog", true);
	/* the kernel maps the program, then its interpreter */
	ev_mmap(r, 10, 0x400000, 0x1000, 0, 5, "/nonexistent/prog");
	ev_mmap(r, 10, 0x7f0000000000, 0x1000, 0, 5, "/nonexistent/ld.so");
	ev_sample(r, 10, 10, in_ld, 1, 0);	/* the first sample lands in ld.so */
	ev_mmap(r, 10, 0x7f1000000000, 0x1000, 0, 5, "/nonexistent/libc.so");
	ev_fork(r, 11, 10, 11, 10);
	ev_sample(r, 11, 11, in_prog, 2, 0);
	build(r, &p);

	assert_int_equal(p.nr_mappings, 2);
	assert_string_equal(mapping_file(&p, 1), "/nonexistent/prog");
	assert_string_equal(mapping_file(&p, 2), "/nonexistent/ld.so");
	l = profile_location(&p, profile_sample_locs(&p, &p.samples[0])[0]);
	assert_int_equal(l->mapping_id, 2);
	assert_int_equal(l->address, 0x7f0000000100);
	l = profile_location(&p, profile_sample_locs(&p, &p.samples[1])[0]);
	assert_int_equal(l->mapping_id, 1);
	assert_int_equal(l->address, 0x400100);
	profile_release(&p);
	recording_free(r);
}

static void test_record__main_executable_without_samples(void **state)
{
	struct recording *r = new_fp();
	uint64_t in_child[] = { 0x500100 };
	struct profile p;

	recording_set_main(r, 10);
	ev_comm(r, 10, 10, "sh", true);
	ev_mmap(r, 10, 0x400000, 0x1000, 0, 5, "/nonexistent/sh");
	ev_mmap(r, 10, 0x7f0000000000, 0x1000, 0, 5, "/nonexistent/ld.so");
	/* sh execs the program in place: the last exec counts */
	ev_comm(r, 10, 10, "prog", true);
	ev_mmap(r, 10, 0x600000, 0x2000, 0x1000, 5, "/nonexistent/prog");
	/* a child execs a tool, where every sample lands */
	ev_fork(r, 12, 10, 12, 10);
	ev_comm(r, 12, 12, "tool", true);
	ev_mmap(r, 12, 0x500000, 0x1000, 0, 5, "/nonexistent/tool");
	ev_sample(r, 12, 12, in_child, 1, 0);
	build(r, &p);

	assert_int_equal(p.nr_mappings, 2);
	assert_string_equal(mapping_file(&p, 1), "/nonexistent/prog");
	assert_int_equal(p.mappings[0].start, 0x600000);
	assert_int_equal(p.mappings[0].limit, 0x602000);
	assert_int_equal(p.mappings[0].offset, 0x1000);
	assert_string_equal(mapping_file(&p, 2), "/nonexistent/tool");
	assert_int_equal(profile_location(&p, profile_sample_locs(&p, &p.samples[0])[0])->mapping_id, 2);
	profile_release(&p);
	recording_free(r);
}

static void test_record__attached_main_executable(void **state)
{
	struct recording *r = new_fp();
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct profile p;

	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(recording_add_process(r, getpid()), 0);
	recording_set_main(r, getpid());
	build(r, &p);
	assert_int_equal(p.nr_mappings, 1);
	assert_string_equal(mapping_file(&p, 1), exe);
	profile_release(&p);
	recording_free(r);
}

#if defined(__x86_64__)
/* Functions of this program whose addresses stand for code in the tests. */
__attribute__((noinline)) int fp_leaf_target(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int fp_leaf_other(int x)
{
	return fp_leaf_target(x) + 2;
}

/*
 * A frame pointer sample of this process taken at the first instruction
 * of fp_leaf_target(), where no function has a frame yet: the CFA is sp + 8
 * and the return address is on top of the stack copy.
 */
static void ev_leaf_sample(struct recording *r, uint64_t mask, const uint64_t *ips,
			   uint32_t n, uint64_t ret)
{
	struct sampler_event ev = { .type = SAMPLER_SAMPLE, .pid = (uint32_t)getpid() };
	uint64_t regs[3], stack[8] = { ret, 0x1111, 0x2222 };
	uint64_t sp = 0x7ffc00001000;
	unsigned k = 0;

	ev.tid = ev.pid;
	for (int bit = 0; bit < 64; bit++) {
		if (!(mask & (1ull << bit)))
			continue;
		assert_true(k < ARRAY_SIZE(regs));
		regs[k++] = bit == PERF_REG_X86_IP ? ips[0] :
			    bit == PERF_REG_X86_SP ? sp : 0x7ffc00002000;	/* bp: a caller's */
	}
	ev.sample.ips = ips;
	ev.sample.nr_ips = n;
	ev.sample.ip = ips[0];
	ev.sample.period = PERIOD;
	ev.sample.regs = (struct sampler_regs){ regs, k, true };
	ev.sample.stack = (const unsigned char *)stack;
	ev.sample.stack_size = sizeof(stack);
	feed(r, &ev);
}

static void test_record__fp_leaf_caller(void **state)
{
	struct sampler_config cfg = { .callgraph = SAMPLER_CALLGRAPH_FP };
	struct sampler *s = sampler_new(&cfg);
	uint64_t mask = sampler_regs_mask(s);
	uint64_t leaf = (uint64_t)(uintptr_t)fp_leaf_target;
	uint64_t ret = (uint64_t)(uintptr_t)fp_leaf_other + 4;
	uint64_t far = (uint64_t)(uintptr_t)test_record__kernel_frames + 8;
	uint64_t missing[] = { leaf, far }, complete[] = { leaf, ret, far };
	uint64_t alone[] = { leaf }, nowhere[] = { 0x10, far };
	struct recording *r;
	struct profile p;
	uint64_t a;

	sampler_free(s);
	r = recording_new(SAMPLER_CALLGRAPH_FP, mask);
	assert_int_equal(recording_add_process(r, getpid()), 0);
	ev_leaf_sample(r, mask, missing, 2, ret);	/* the walk skipped the caller */
	ev_leaf_sample(r, mask, complete, 3, ret);	/* nothing to add */
	ev_leaf_sample(r, mask, alone, 1, ret);		/* the walk found nothing above */
	ev_leaf_sample(r, mask, nowhere, 2, ret);	/* a pc in no file: keep the chain */
	ev_leaf_sample(r, mask, missing, 2, 0x10);	/* a return address in no mapping */
	build(r, &p);

	/* the first two are one stack: leaf, ret, far */
	assert_int_equal(p.nr_samples, 4);
	assert_int_equal(p.samples[0].nloc, 3);
	assert_int_equal(profile_sample_values(&p, &p.samples[0])[0], 2);
	frame_file_of(&p, 0, 1, &a);
	assert_int_equal(a, ret);
	frame_file_of(&p, 0, 2, &a);
	assert_int_equal(a, far);
	assert_int_equal(p.samples[1].nloc, 2);
	frame_file_of(&p, 1, 1, &a);
	assert_int_equal(a, ret);
	assert_int_equal(p.samples[2].nloc, 2);
	frame_file_of(&p, 2, 0, &a);
	assert_int_equal(a, 0x10);
	assert_int_equal(p.samples[3].nloc, 2);
	frame_file_of(&p, 3, 1, &a);
	assert_int_equal(a, far);
	profile_release(&p);
	recording_free(r);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record__exec_mmap_sample),
		cmocka_unit_test(test_record__fork_inherits_exec_replaces),
		cmocka_unit_test(test_record__threads_share_maps),
		cmocka_unit_test(test_record__many_threads_keep_names),
		cmocka_unit_test(test_record__overlapping_mmap_cuts),
		cmocka_unit_test(test_record__non_exec_mmap_ignored),
		cmocka_unit_test(test_record__kernel_frames),
		cmocka_unit_test(test_record__identical_stacks_aggregate),
		cmocka_unit_test(test_record__unknown_addresses),
		cmocka_unit_test(test_record__main_executable_first),
		cmocka_unit_test(test_record__main_executable_without_samples),
		cmocka_unit_test(test_record__attached_main_executable),
#if defined(__x86_64__)
		cmocka_unit_test(test_record__fp_leaf_caller),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
