/*
 * t-perfdata.c: unit tests of lib/perfdata.c on perf.data files built here,
 * in our byte order and in the other one: what a good file decodes to
 * (records out of time order, in a round and across rounds, unknown
 * record types, several events; the same mapped from a file), and
 * that hostile files (truncated at every byte, bad magic, pipe mode, record
 * size 0, a huge callchain, compressed records) fail with a clean message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "folded.h"
#include "perfdata.h"

static void quiet(const char *prefix, const char *msg)
{
}

static struct strbuf warnings = STRBUF_INIT;

static void keep_warning(const char *prefix, const char *msg)
{
	strbuf_addf(&warnings, "%s\n", msg);
}

static int setup(void **state)
{
	set_error_routine(quiet);
	set_warn_routine(keep_warning);
	strbuf_reset(&warnings);
	return 0;
}

/* ---- a perf.data writer, in either byte order ---------------------------- */

struct w {
	struct strbuf sb;
	bool swap;
};

static void put(struct w *w, const void *p, size_t n)
{
	strbuf_add(&w->sb, p, n);
}

static void put16(struct w *w, uint16_t v)
{
	v = w->swap ? __builtin_bswap16(v) : v;
	put(w, &v, 2);
}

static void put32(struct w *w, uint32_t v)
{
	v = w->swap ? __builtin_bswap32(v) : v;
	put(w, &v, 4);
}

static void put64(struct w *w, uint64_t v)
{
	v = w->swap ? __builtin_bswap64(v) : v;
	put(w, &v, 8);
}

static void set64(struct w *w, size_t off, uint64_t v)
{
	v = w->swap ? __builtin_bswap64(v) : v;
	memcpy(w->sb.buf + off, &v, 8);
}

static void set16(struct w *w, size_t off, uint16_t v)
{
	v = w->swap ? __builtin_bswap16(v) : v;
	memcpy(w->sb.buf + off, &v, 2);
}

/* The attr's bit field: the other byte order reverses the bits of each byte. */
static void put_flags(struct w *w, uint64_t v)
{
	unsigned char b[8];

	memcpy(b, &v, 8);
	if (w->swap)
		for (int i = 0; i < 8; i++) {
			unsigned char r = 0;
			for (int j = 0; j < 8; j++)
				if (b[i] & (1 << j))
					r |= (unsigned char)(0x80 >> j);
			b[i] = r;
		}
	put(w, b, 8);
}

static void put_str(struct w *w, const char *s, size_t padded)
{
	size_t n = strlen(s);

	put(w, s, n);
	strbuf_addchars(&w->sb, 0, padded - n);
}

#define ST_IP		(1u << 0)
#define ST_TID		(1u << 1)
#define ST_TIME		(1u << 2)
#define ST_CALLCHAIN	(1u << 5)
#define ST_PERIOD	(1u << 8)
#define ST_IDENTIFIER	(1u << 16)
#define CTX_KERNEL	((uint64_t)-128)
#define CTX_USER	((uint64_t)-512)

struct synth {
	bool swap;
	bool two_events;	/* a second event (id 2) whose samples are dropped */
	bool first_tracks;	/* with two events: all samples are the second's */
	bool mmap_late;		/* the mapping comes a round after the samples that need it */
	/* where things landed, for tests that corrupt them */
	size_t first_sample, first_chain, data_end;
};

static uint64_t sample_type(const struct synth *s)
{
	return ST_IP | ST_TID | ST_TIME | ST_CALLCHAIN | ST_PERIOD |
	       (s->two_events ? ST_IDENTIFIER : 0);
}

static void header_start(struct w *w, uint16_t type, uint16_t misc, size_t *at)
{
	*at = w->sb.len;
	put32(w, type);
	put16(w, misc);
	put16(w, 0);	/* size, set by header_end() */
}

static void header_end(struct w *w, size_t at)
{
	set16(w, at + 6, (uint16_t)(w->sb.len - at));
}

/* The sample_id_all trailer: pid/tid and time (and the id). */
static void trailer(struct w *w, const struct synth *s, uint32_t pid, uint64_t time)
{
	put32(w, pid);
	put32(w, pid);
	put64(w, time);
	if (s->two_events)
		put64(w, 1);
}

static void sample(struct w *w, struct synth *s, uint64_t id, uint32_t pid, uint64_t time,
		   const uint64_t *chain, size_t n)
{
	size_t at;

	header_start(w, 9, 2 /* user */, &at);
	if (!s->first_sample)
		s->first_sample = at;
	if (s->two_events)
		put64(w, s->first_tracks ? 2 : id);
	put64(w, chain[n - 1] < CTX_USER ? chain[n - 1] : 0);	/* ip */
	put32(w, pid);
	put32(w, pid);
	put64(w, time);
	put64(w, 1000000);	/* period: 1 ms */
	if (!s->first_chain)
		s->first_chain = w->sb.len;
	put64(w, n);
	for (size_t i = 0; i < n; i++)
		put64(w, chain[i]);
	header_end(w, at);
}

static void attr(struct w *w, const struct synth *s, uint64_t config, uint64_t ids_off)
{
	put32(w, 1);		/* PERF_TYPE_SOFTWARE */
	put32(w, 112);		/* attr size */
	put64(w, config);	/* cpu-clock, task-clock */
	put64(w, 1000);		/* freq */
	put64(w, sample_type(s));
	put64(w, 0);		/* read_format */
	put_flags(w, 1ull << 10 | 1ull << 18);	/* freq, sample_id_all */
	strbuf_addchars(&w->sb, 0, 112 - 48);
	put64(w, ids_off);
	put64(w, 8);
}

/*
 * A recording of pid 100 "prog": an exec, a mapping of /nonexistent/prog
 * at 0x400000 (indexed after a sample that needs it: perf orders records
 * only by round), 3 samples in hot <- main and one in cold <- main, one
 * with kernel frames; unknown records and a round marker in between
 * (mmap_late: the mapping after it, then another).
 */
static void synth_file(struct w *w, struct synth *s)
{
	static const uint64_t hot[] = { CTX_USER, 0x400100, 0x400500 };
	static const uint64_t cold[] = { CTX_USER, 0x400200, 0x400500 };
	static const uint64_t kern[] = { CTX_KERNEL, 0xffffffff81000100ull, CTX_USER, 0x400100, 0x400500 };
	static const unsigned char bid[20] = { 0xab, 0xcd, 0xef, 1, 2, 3 };
	static const unsigned char user_bid[20] = { 0x11, 0x22, 0x33, [19] = 0x99 };
	size_t nattr = s->two_events ? 2 : 1, at, data_off, feat;

	strbuf_reset(&w->sb);
	put(w, w->swap ? "2ELIFREP" : "PERFILE2", 8);
	put64(w, 104);
	put64(w, 112 + 16);
	put64(w, 104);				/* attrs */
	put64(w, nattr * (112 + 16));
	put64(w, 0);				/* data, set below */
	put64(w, 0);
	put64(w, 0);				/* event_types */
	put64(w, 0);
	put64(w, 1u << 2 | 1u << 3 | 1u << 11);	/* build id, hostname, cmdline */
	put64(w, 0);
	put64(w, 0);
	put64(w, 0);
	for (size_t i = 0; i < nattr; i++)
		attr(w, s, i, 104 + nattr * 128 + 8 * i);
	for (size_t i = 0; i < nattr; i++)
		put64(w, i + 1);		/* the ids */

	data_off = w->sb.len;
	header_start(w, 3, 1 << 13, &at);	/* COMM, exec */
	put32(w, 100);
	put32(w, 100);
	put_str(w, "prog", 8);
	trailer(w, s, 100, 1000);
	header_end(w, at);
	sample(w, s, 1, 100, 3000, hot, 3);
	sample(w, s, 1, 100, 3100, hot, 3);
	if (s->mmap_late) {
		header_start(w, 68, 0, &at);	/* FINISHED_ROUND */
		header_end(w, at);
	}
	header_start(w, 10, 0, &at);		/* MMAP2, earlier than the samples */
	put32(w, 100);
	put32(w, 100);
	put64(w, 0x400000);
	put64(w, 0x1000);
	put64(w, 0);
	strbuf_addchars(&w->sb, 0, 24);		/* maj, min, ino, ino_generation */
	put32(w, 5);				/* PROT_READ | PROT_EXEC */
	put32(w, 2);
	put_str(w, "/nonexistent/prog", 24);
	trailer(w, s, 100, 2000);
	header_end(w, at);
	header_start(w, 68, 0, &at);		/* FINISHED_ROUND */
	header_end(w, at);
	header_start(w, 200, 0, &at);		/* a type from the future */
	put64(w, 0x1234);
	header_end(w, at);
	sample(w, s, 1, 100, 4000, cold, 3);
	sample(w, s, 1, 100, 5000, kern, 5);
	if (s->two_events)
		sample(w, s, 2, 100, 5500, cold, 3);
	s->data_end = w->sb.len;
	set64(w, 40, data_off);
	set64(w, 48, w->sb.len - data_off);

	feat = w->sb.len;
	strbuf_addchars(&w->sb, 0, 3 * 16);	/* the table, set below */
	set64(w, feat, w->sb.len);
	header_start(w, 0, 1 /* kernel */, &at);	/* a build id record */
	put32(w, UINT32_MAX);
	put(w, bid, 20);
	strbuf_addchars(&w->sb, 0, 4);
	put_str(w, "[kernel.kallsyms]", 24);
	header_end(w, at);
	header_start(w, 0, 2 /* user */, &at);
	put32(w, 100);
	put(w, user_bid, 20);
	strbuf_addchars(&w->sb, 0, 4);
	put_str(w, "/nonexistent/prog", 24);
	header_end(w, at);
	set64(w, feat + 8, w->sb.len - (feat + 3 * 16));
	set64(w, feat + 16, w->sb.len);
	put32(w, 8);
	put_str(w, "testhost", 8);
	set64(w, feat + 24, 12);
	set64(w, feat + 32, w->sb.len);
	put32(w, 2);
	put32(w, 8);
	put_str(w, "perf", 8);
	put32(w, 8);
	put_str(w, "record", 8);
	set64(w, feat + 40, 28);
}

static char *folded(const struct profile *p)
{
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(folded_write(p, 0, &out), 0);
	return strbuf_detach(&out, NULL);
}

static bool has_comment(const struct profile *p, const char *c)
{
	for (size_t i = 0; i < p->nr_comments; i++)
		if (!strcmp(profile_string(p, p->comments[i]), c))
			return true;
	return false;
}

static void decode_ok(const struct w *w, struct profile *p)
{
	profile_init(p);
	if (perfdata_decode(p, w->sb.buf, w->sb.len, "synth"))
		fail_msg("%s", last_error());
}

static int64_t total(const struct profile *p, size_t idx)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->nr_samples; i++)
		sum += p->values[p->samples[i].value_off + idx];
	return sum;
}

static void check_synth(bool swap)
{
	struct w w = { STRBUF_INIT, swap };
	struct synth s = { .swap = swap };
	struct profile p;
	bool mapped = false;

	synth_file(&w, &s);
	assert_true(perfdata_sniff(w.sb.buf, w.sb.len));
	decode_ok(&w, &p);
	assert_int_equal(p.nr_sample_type, 2);
	assert_string_equal(profile_string(&p, p.sample_type[0].type), "samples");
	assert_string_equal(profile_string(&p, p.sample_type[1].type), "cpu");
	assert_string_equal(profile_string(&p, p.sample_type[1].unit), "nanoseconds");
	assert_int_equal(total(&p, 0), 4);
	assert_int_equal(total(&p, 1), 4000000);
	assert_int_equal(p.period, 1000000);	/* 1000 Hz */
	assert_int_equal(p.duration_nanos, 2000);
	assert_true(has_comment(&p, "command: perf record"));
	assert_true(has_comment(&p, "host: testhost"));
	/* the mapping came before the samples in time, not in the file */
	for (size_t i = 0; i < p.nr_mappings; i++)
		if (!strcmp(profile_string(&p, p.mappings[i].filename), "/nonexistent/prog")) {
			mapped = true;
			assert_int_equal(p.mappings[i].start, 0x400000);
			/* the build id recorded for the file, not one read from disk */
			assert_string_equal(profile_string(&p, p.mappings[i].build_id),
					    "1122330000000000000000000000000000000099");
		}
	assert_true(mapped);
	/* a kernel recorded elsewhere: its frames stay addresses */
	assert_non_null(strstr(warnings.buf, "another kernel (build id 'abcdef01020300"));
	profile_release(&p);
	strbuf_release(&w.sb);
}

static void test_perfdata__little_and_big_endian(void **state)
{
	check_synth(false);
	strbuf_reset(&warnings);
	check_synth(true);
}

/*
 * perf record keeps the kallsyms of the kernel it ran on in its build-id
 * cache: frames of a kernel other than this one are named from there.
 */
static void test_perfdata__foreign_kernel_from_build_id_cache(void **state)
{
	static const char ksyms[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T synthetic_kfunc\n"
		"ffffffff81000200 T synthetic_next\n";
	char home[] = "/tmp/t-perfdata-XXXXXX";
	const char *dirs[] = { "/.debug", "/.debug/.build-id", "/.debug/.build-id/ab",
			       "/.debug/.build-id/ab/cdef0102030000000000000000000000000000" };
	const char *was = getenv("HOME");
	char *old_home = was ? xstrdup(was) : NULL;
	struct strbuf path = STRBUF_INIT;
	struct w w = { STRBUF_INIT, false };
	struct synth s = { 0 };
	struct profile p;
	char *f;

	assert_non_null(mkdtemp(home));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s%s", home, dirs[i]);
		assert_int_equal(mkdir(path.buf, 0700), 0);
	}
	strbuf_addstr(&path, "/kallsyms");
	assert_int_equal(write_file_atomic(path.buf, ksyms, strlen(ksyms)), 0);
	setenv("HOME", home, 1);

	synth_file(&w, &s);
	decode_ok(&w, &p);
	f = folded(&p);
	assert_non_null(strstr(f, "synthetic_kfunc_[k]"));
	assert_null(strstr(warnings.buf, "another kernel"));

	if (old_home)
		setenv("HOME", old_home, 1);
	else
		unsetenv("HOME");
	unlink(path.buf);
	for (size_t i = sizeof(dirs) / sizeof(*dirs); i-- > 0;) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s%s", home, dirs[i]);
		rmdir(path.buf);
	}
	rmdir(home);
	free(old_home);
	free(f);
	profile_release(&p);
	strbuf_release(&path);
	strbuf_release(&w.sb);
}

static void test_perfdata__byte_orders_agree(void **state)
{
	struct w a = { STRBUF_INIT, false }, b = { STRBUF_INIT, true };
	struct synth sa = { 0 }, sb = { .swap = true };
	struct profile pa, pb;
	char *fa, *fb;

	synth_file(&a, &sa);
	synth_file(&b, &sb);
	assert_int_equal(a.sb.len, b.sb.len);
	assert_memory_not_equal(a.sb.buf, b.sb.buf, a.sb.len);
	decode_ok(&a, &pa);
	decode_ok(&b, &pb);
	fa = folded(&pa);
	fb = folded(&pb);
	assert_string_equal(fa, fb);
	/* 3 stacks: hot (twice), cold, and hot under a kernel frame */
	assert_int_equal(pa.nr_samples, 3);
	free(fa);
	free(fb);
	profile_release(&pa);
	profile_release(&pb);
	strbuf_release(&a.sb);
	strbuf_release(&b.sb);
}

static void test_perfdata__several_events(void **state)
{
	struct w w = { STRBUF_INIT, false };
	struct synth s = { .two_events = true };
	struct profile p;

	synth_file(&w, &s);
	decode_ok(&w, &p);
	assert_int_equal(total(&p, 0), 4);	/* not the fifth, of event 2 */
	assert_non_null(strstr(warnings.buf, "only those of 'cpu-clock' are read, not 'task-clock'"));
	profile_release(&p);
	strbuf_release(&w.sb);
}

static void test_perfdata__first_event_only_tracks(void **state)
{
	struct w w = { STRBUF_INIT, false };
	struct synth s = { .two_events = true, .first_tracks = true };
	struct profile p;

	synth_file(&w, &s);
	decode_ok(&w, &p);
	assert_int_equal(total(&p, 0), 5);
	assert_true(has_comment(&p, "task-clock"));
	assert_null(strstr(warnings.buf, "several events"));
	profile_release(&p);
	strbuf_release(&w.sb);
}

/*
 * perf orders records only within a round, and a record of the next round
 * may still go before the last of this one: a mapping a round late still
 * comes before the samples in it.
 */
static void test_perfdata__rounds(void **state)
{
	struct w a = { STRBUF_INIT, false }, b = { STRBUF_INIT, false };
	struct synth sa = { 0 }, sb = { .mmap_late = true };
	struct profile pa, pb;
	char *fa, *fb;

	synth_file(&a, &sa);
	synth_file(&b, &sb);
	decode_ok(&a, &pa);
	decode_ok(&b, &pb);
	fa = folded(&pa);
	fb = folded(&pb);
	assert_string_equal(fa, fb);
	assert_int_equal(total(&pb, 0), 4);
	/* every user frame lies in the mapping, known by the time of its sample */
	for (size_t i = 0; i < pb.nr_samples; i++) {
		const struct pf_sample *x = &pb.samples[i];

		for (uint32_t j = 0; j < x->nloc; j++) {
			const struct pf_location *l = profile_location(&pb, pb.sample_locs[x->loc_off + j]);
			const struct pf_mapping *m = l ? profile_mapping(&pb, l->mapping_id) : NULL;

			if (l && l->address < 0x800000)
				assert_true(m && !strcmp(profile_string(&pb, m->filename),
							 "/nonexistent/prog"));
		}
	}
	free(fa);
	free(fb);
	profile_release(&pa);
	profile_release(&pb);
	strbuf_release(&a.sb);
	strbuf_release(&b.sb);
}

/* A file of the first n bytes of w, open for reading. */
static int file_of(const struct w *w, size_t n)
{
	char path[] = "/tmp/t-perfdata.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write_full(fd, w->sb.buf, n), 0);
	return fd;
}

/* Read mapped from a file: the same profile, the same errors. */
static void test_perfdata__mapped(void **state)
{
	for (int v = 0; v < 3; v++) {
		struct w w = { STRBUF_INIT, v == 1 };
		struct synth s = { .swap = v == 1, .mmap_late = v == 2 };
		struct profile pa, pb;
		char *fa, *fb;
		int fd;

		synth_file(&w, &s);
		decode_ok(&w, &pa);
		fd = file_of(&w, w.sb.len);
		profile_init(&pb);
		if (perfdata_read_fd(&pb, fd, "synth"))
			fail_msg("%s", last_error());
		close(fd);
		fa = folded(&pa);
		fb = folded(&pb);
		assert_string_equal(fa, fb);
		free(fa);
		free(fb);
		profile_release(&pa);
		profile_release(&pb);

		for (size_t n = 8; n < w.sb.len; n++) {
			fd = file_of(&w, n);
			profile_init(&pb);
			assert_int_equal(perfdata_read_fd(&pb, fd, "cut"), -1);
			assert_non_null(strstr(last_error(), " at byte "));
			profile_release(&pb);
			close(fd);
		}
		strbuf_release(&w.sb);
	}
}

static void test_perfdata__truncated_at_every_byte(void **state)
{
	for (int swap = 0; swap < 2; swap++) {
		struct w w = { STRBUF_INIT, swap };
		struct synth s = { .swap = swap, .two_events = swap };

		synth_file(&w, &s);
		for (size_t n = 0; n < w.sb.len; n++) {
			struct profile p;
			/* a copy of exactly n bytes, so ASan sees any read past it */
			char *cut = xmalloc(n ? n : 1);

			memcpy(cut, w.sb.buf, n);
			profile_init(&p);
			assert_int_equal(perfdata_decode(&p, cut, n, "cut"), -1);
			if (n >= 8)
				assert_non_null(strstr(last_error(), " at byte "));
			profile_release(&p);
			free(cut);
		}
		strbuf_release(&w.sb);
	}
}

/* One corruption of the synthetic file and the error it must give. */
struct bad_case {
	const char *name;
	void (*corrupt)(struct w *w, const struct synth *s);
	const char *msg;
};

static void bad_magic(struct w *w, const struct synth *s)
{
	memcpy(w->sb.buf, "PERFILE3", 8);
}

static void pipe_mode(struct w *w, const struct synth *s)
{
	set64(w, 8, 16);
}

static void record_size_zero(struct w *w, const struct synth *s)
{
	set16(w, s->first_sample + 6, 0);
}

static void huge_callchain(struct w *w, const struct synth *s)
{
	set64(w, s->first_chain, UINT64_MAX / 4);
}

static void record_past_data(struct w *w, const struct synth *s)
{
	set16(w, s->first_sample + 6, 0xfff8);
}

static void attrs_out_of_file(struct w *w, const struct synth *s)
{
	set64(w, 24, w->sb.len - 8);
}

static void attr_size_tiny(struct w *w, const struct synth *s)
{
	set64(w, 16, 24);
}

static void compressed(struct w *w, const struct synth *s)
{
	uint32_t t = w->swap ? __builtin_bswap32(81) : 81;

	memcpy(w->sb.buf + s->first_sample, &t, 4);
}

static void short_sample(struct w *w, const struct synth *s)
{
	/* the attr says user registers follow the period: no sample has them */
	set64(w, 104 + 24, sample_type(s) | 1u << 12);
}

static const struct bad_case bad_cases[] = {
	{ "bad magic", bad_magic, "not a perf.data file (bad magic)" },
	{ "pipe mode", pipe_mode, "a pipe-mode perf.data (perf record -o -) is not supported: convert it with 'perf inject" },
	{ "record size 0", record_size_zero, "record size 0 is too small at byte " },
	{ "huge callchain", huge_callchain, "a callchain of 4611686018427387903 entries is longer than its record at byte " },
	{ "record past data", record_past_data, "runs past the data section's end" },
	{ "attrs out of file", attrs_out_of_file, "the attrs section (128 bytes at " },
	{ "attr size tiny", attr_size_tiny, "attr size 24 is out of range at byte 16" },
	{ "compressed", compressed, "compressed records (perf record -z) are not supported" },
	{ "short sample", short_sample, "is shorter than its sample_type 0x1127 needs at byte " },
};

static void test_perfdata__hostile(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		for (int swap = 0; swap < 2; swap++) {
			struct w w = { STRBUF_INIT, swap };
			struct synth s = { .swap = swap };
			struct profile p;

			synth_file(&w, &s);
			bad_cases[i].corrupt(&w, &s);
			profile_init(&p);
			if (perfdata_decode(&p, w.sb.buf, w.sb.len, "bad") != -1)
				fail_msg("case '%s' decoded", bad_cases[i].name);
			if (!strstr(last_error(), bad_cases[i].msg))
				fail_msg("case '%s': '%s'", bad_cases[i].name, last_error());
			profile_release(&p);
			strbuf_release(&w.sb);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_perfdata__little_and_big_endian, setup),
		cmocka_unit_test_setup(test_perfdata__byte_orders_agree, setup),
		cmocka_unit_test_setup(test_perfdata__foreign_kernel_from_build_id_cache, setup),
		cmocka_unit_test_setup(test_perfdata__several_events, setup),
		cmocka_unit_test_setup(test_perfdata__first_event_only_tracks, setup),
		cmocka_unit_test_setup(test_perfdata__truncated_at_every_byte, setup),
		cmocka_unit_test_setup(test_perfdata__rounds, setup),
		cmocka_unit_test_setup(test_perfdata__mapped, setup),
		cmocka_unit_test_setup(test_perfdata__hostile, setup),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL);

	strbuf_release(&warnings);
	return ret;
}
