/*
 * t-pprof.c: unit tests for the pprof reader and writer. A hand-built
 * profile must survive write and read with every sample, location, function,
 * label and string intact; every file in tests/data/pprof-bad/ must be
 * rejected with an error (no crash, nothing left allocated); every file in
 * tests/data/pprof-odd/ (hostile but valid) must decode and round-trip.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "pprof.h"
#include "folded.h"
#include "profile-io.h"

static int nr_errors;

static void count_error(const char *prefix, const char *msg)
{
	nr_errors++;
}

static void quiet(const char *prefix, const char *msg)
{
}

/* tests/data/<name>, found from this file's path or $HOTLOOP_TEST_DATA. */
static char *data_dir(const char *name)
{
	const char *env = getenv("HOTLOOP_TEST_DATA");
	const char *file = __FILE__, *slash;

	if (env)
		return xstrfmt("%s/%s", env, name);
	slash = strstr(file, "tests/unit/");
	if (!slash)
		return xstrfmt("tests/data/%s", name);
	return xstrfmt("%.*stests/data/%s", (int)(slash - file), file, name);
}

/* Every regular file in tests/data/<name>, sorted; fails when there are none. */
static char **list_files(const char *name, size_t *nr)
{
	char *dir = data_dir(name);
	struct dirent **ents;
	char **files;
	int n = scandir(dir, &ents, NULL, alphasort);
	size_t k = 0;

	if (n < 0)
		fail_msg("cannot list '%s'", dir);
	files = xcalloc((size_t)n + 1, sizeof(*files));
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.')
			files[k++] = xstrfmt("%s/%s", dir, ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	free(dir);
	assert_true(k > 0);
	*nr = k;
	return files;
}

static void free_files(char **files, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(files[i]);
	free(files);
}

/* ---- a hand-built profile ----------------------------------------------- */

static void build_profile(struct profile *p)
{
	uint64_t exe, lib, f_main, f_work, f_leaf, f_memcpy, l_main, l_work, l_copy, l_bare;
	struct pf_line lines[2];
	struct pf_label labels[3];
	int64_t v[2];

	profile_init(p);
	profile_add_sample_type(p, "samples", "count");
	profile_add_sample_type(p, "cpu", "nanoseconds");
	p->period_type.type = profile_str(p, "cpu");
	p->period_type.unit = profile_str(p, "nanoseconds");
	p->period = 1001001;
	p->time_nanos = 1700000000123456789ll;
	p->duration_nanos = 2500000000ll;
	p->drop_frames = profile_str(p, "^__libc_start");
	p->keep_frames = profile_str(p, "main");
	profile_add_comment(p, "hotloop record -F 999 -- ./app");
	profile_add_comment(p, "second comment");

	exe = profile_add_mapping(p, 0x555500000000ull, 0x555500010000ull, 0x1000,
				  "/usr/bin/app", "0123456789abcdef");
	lib = profile_add_mapping(p, 0x7f0000000000ull, 0x7f0000200000ull, 0x28000,
				  "/lib/x86_64-linux-gnu/libc.so.6", "");
	f_main = profile_add_function(p, "main", NULL, "app.c", 40);
	f_work = profile_add_function(p, "work", NULL, "app.c", 10);
	f_leaf = profile_add_function(p, "ns::leaf(int)", "_ZN2ns4leafEi", "leaf.h", 3);
	f_memcpy = profile_add_function(p, "memcpy", NULL, "", 0);

	lines[0] = (struct pf_line){ f_main, 44, 5 };
	l_main = profile_add_location(p, exe, 0x555500001234ull, lines, 1);
	lines[0] = (struct pf_line){ f_leaf, 4, 0 };	/* inlined into work */
	lines[1] = (struct pf_line){ f_work, 12, 9 };
	l_work = profile_add_location(p, exe, 0x555500001400ull, lines, 2);
	lines[0] = (struct pf_line){ f_memcpy, 0, 0 };
	l_copy = profile_add_location(p, lib, 0x7f0000031000ull, lines, 1);
	l_bare = profile_add_location(p, 0, 0xffffffff81000000ull, NULL, 0);

	labels[0] = (struct pf_label){ profile_str(p, "comm"), profile_str(p, "app"), 0, 0 };
	labels[1] = (struct pf_label){ profile_str(p, "tid"), 0, 4242, 0 };
	labels[2] = (struct pf_label){ profile_str(p, "bytes"), 0, 4096, profile_str(p, "bytes") };
	{
		uint64_t s1[] = { l_work, l_main };
		uint64_t s2[] = { l_copy, l_work, l_main };
		uint64_t s3[] = { l_bare, l_copy, l_main };

		v[0] = 9; v[1] = 9009009;
		profile_add_sample(p, s1, 2, v, labels, 2);
		v[0] = 3; v[1] = 3003003;
		profile_add_sample(p, s2, 3, v, labels + 2, 1);
		v[0] = 1; v[1] = -5;	/* negative values are legal (diff profiles) */
		profile_add_sample(p, s3, 3, v, NULL, 0);
		v[0] = 0; v[1] = INT64_MAX;
		profile_add_sample(p, NULL, 0, v, labels, 3);
	}
}

static void assert_same_string(const struct profile *a, int64_t ia,
			       const struct profile *b, int64_t ib)
{
	assert_string_equal(profile_string(a, ia), profile_string(b, ib));
}

static void assert_same_mapping(const struct profile *a, uint64_t ida,
				const struct profile *b, uint64_t idb)
{
	const struct pf_mapping *ma = profile_mapping(a, ida), *mb = profile_mapping(b, idb);

	if (!ida) {
		assert_int_equal(idb, 0);
		return;
	}
	assert_non_null(ma);
	assert_non_null(mb);
	assert_int_equal(ma->start, mb->start);
	assert_int_equal(ma->limit, mb->limit);
	assert_int_equal(ma->offset, mb->offset);
	assert_same_string(a, ma->filename, b, mb->filename);
	assert_same_string(a, ma->build_id, b, mb->build_id);
}

static void assert_same_function(const struct profile *a, uint64_t ida,
				 const struct profile *b, uint64_t idb)
{
	const struct pf_function *fa = profile_function(a, ida), *fb = profile_function(b, idb);

	assert_non_null(fa);
	assert_non_null(fb);
	assert_same_string(a, fa->name, b, fb->name);
	assert_same_string(a, fa->system_name, b, fb->system_name);
	assert_same_string(a, fa->filename, b, fb->filename);
	assert_int_equal(fa->start_line, fb->start_line);
}

static void assert_same_location(const struct profile *a, uint64_t ida,
				 const struct profile *b, uint64_t idb)
{
	const struct pf_location *la = profile_location(a, ida), *lb = profile_location(b, idb);

	assert_non_null(la);
	assert_non_null(lb);
	assert_int_equal(la->address, lb->address);
	assert_int_equal(la->is_folded, lb->is_folded);
	assert_same_mapping(a, la->mapping_id, b, lb->mapping_id);
	assert_int_equal(la->nline, lb->nline);
	for (uint32_t i = 0; i < la->nline; i++) {
		const struct pf_line *xa = &a->lines[la->line_off + i];
		const struct pf_line *xb = &b->lines[lb->line_off + i];

		assert_int_equal(xa->line, xb->line);
		assert_int_equal(xa->column, xb->column);
		assert_same_function(a, xa->function_id, b, xb->function_id);
	}
}

/* a and b hold the same profile, element by element (ids may differ). */
static void assert_same_profile(const struct profile *a, const struct profile *b)
{
	assert_int_equal(a->nr_sample_type, b->nr_sample_type);
	for (size_t i = 0; i < a->nr_sample_type; i++) {
		assert_same_string(a, a->sample_type[i].type, b, b->sample_type[i].type);
		assert_same_string(a, a->sample_type[i].unit, b, b->sample_type[i].unit);
	}
	assert_int_equal(a->nr_samples, b->nr_samples);
	for (size_t i = 0; i < a->nr_samples; i++) {
		const struct pf_sample *sa = &a->samples[i], *sb = &b->samples[i];

		assert_int_equal(sa->nloc, sb->nloc);
		for (uint32_t j = 0; j < sa->nloc; j++)
			assert_same_location(a, profile_sample_locs(a, sa)[j],
					     b, profile_sample_locs(b, sb)[j]);
		for (size_t j = 0; j < a->nr_sample_type; j++)
			assert_int_equal(profile_sample_values(a, sa)[j],
					 profile_sample_values(b, sb)[j]);
		assert_int_equal(sa->nlabel, sb->nlabel);
		for (uint32_t j = 0; j < sa->nlabel; j++) {
			const struct pf_label *la = &a->labels[sa->label_off + j];
			const struct pf_label *lb = &b->labels[sb->label_off + j];

			assert_same_string(a, la->key, b, lb->key);
			assert_same_string(a, la->str, b, lb->str);
			assert_int_equal(la->num, lb->num);
			assert_same_string(a, la->num_unit, b, lb->num_unit);
		}
	}
	assert_int_equal(a->nr_mappings, b->nr_mappings);
	assert_int_equal(a->nr_locations, b->nr_locations);
	assert_int_equal(a->nr_functions, b->nr_functions);
	for (size_t i = 0; i < a->nr_functions; i++)
		assert_same_function(a, i + 1, b, i + 1);
	for (size_t i = 0; i < a->nr_locations; i++)
		assert_same_location(a, i + 1, b, i + 1);
	assert_int_equal(a->nr_comments, b->nr_comments);
	for (size_t i = 0; i < a->nr_comments; i++)
		assert_same_string(a, a->comments[i], b, b->comments[i]);
	assert_int_equal(a->strings.nr, b->strings.nr);
	for (size_t i = 0; i < a->strings.nr; i++)
		assert_string_equal(profile_string(a, (int64_t)i), profile_string(b, (int64_t)i));
	assert_same_string(a, a->period_type.type, b, b->period_type.type);
	assert_same_string(a, a->period_type.unit, b, b->period_type.unit);
	assert_same_string(a, a->drop_frames, b, b->drop_frames);
	assert_same_string(a, a->keep_frames, b, b->keep_frames);
	assert_int_equal(a->period, b->period);
	assert_int_equal(a->time_nanos, b->time_nanos);
	assert_int_equal(a->duration_nanos, b->duration_nanos);
	for (size_t i = 0; i < a->nr_sample_type; i++)
		assert_int_equal(profile_total(a, (int)i), profile_total(b, (int)i));
}

static void test_pprof__round_trip(void **state)
{
	struct profile p, q;
	struct strbuf out = STRBUF_INIT;

	build_profile(&p);
	assert_int_equal(profile_validate(&p), 0);
	assert_int_equal(pprof_encode(&p, &out), 0);
	assert_true(out.len > 2);
	assert_int_equal((unsigned char)out.buf[0], 0x1f);	/* gzipped */
	assert_int_equal((unsigned char)out.buf[1], 0x8b);
	profile_init(&q);
	assert_int_equal(pprof_decode(&q, out.buf, out.len, "round trip"), 0);
	assert_same_profile(&p, &q);
	assert_int_equal(q.nr_samples, 4);
	assert_int_equal(q.nr_locations, 4);
	assert_int_equal(q.nr_functions, 4);
	assert_int_equal(q.nr_mappings, 2);
	assert_int_equal(profile_total(&q, 0), 13);
	assert_string_equal(profile_sample_label(&q, &q.samples[0], "comm"), "app");
	profile_release(&q);
	profile_release(&p);
	strbuf_release(&out);
}

static void test_pprof__write_read_file(void **state)
{
	char dir[] = "/tmp/t-pprof.XXXXXX";
	struct profile p, q;
	char *path;

	assert_non_null(mkdtemp(dir));
	path = xstrfmt("%s/p.pb.gz", dir);
	build_profile(&p);
	assert_int_equal(pprof_write_file(&p, path), 0);
	profile_init(&q);
	assert_int_equal(pprof_read_file(&q, path), 0);
	assert_same_profile(&p, &q);
	profile_release(&q);
	profile_release(&p);
	unlink(path);
	rmdir(dir);
	free(path);
}

/* Decoding our own raw (uncompressed) protobuf gives the same profile. */
static void test_pprof__raw_protobuf(void **state)
{
	struct strbuf gz = STRBUF_INIT, raw = STRBUF_INIT;
	struct profile p, q;

	build_profile(&p);
	assert_int_equal(pprof_encode(&p, &gz), 0);
	assert_int_equal(gunzip_maybe(&raw, gz.buf, gz.len, PPROF_MAX_BYTES, "gz"), 0);
	assert_true(raw.len > 0 && (unsigned char)raw.buf[0] != 0x1f);
	profile_init(&q);
	assert_int_equal(pprof_decode(&q, raw.buf, raw.len, "raw"), 0);
	assert_same_profile(&p, &q);
	profile_release(&q);
	profile_release(&p);
	strbuf_release(&gz);
	strbuf_release(&raw);
}

/* Every cut of a gzipped profile is an error, never a crash. */
static void test_pprof__truncated_gzip(void **state)
{
	struct strbuf gz = STRBUF_INIT;
	struct profile p, q;

	build_profile(&p);
	assert_int_equal(pprof_encode(&p, &gz), 0);
	set_error_routine(quiet);
	for (size_t cut = 0; cut < gz.len; cut++) {
		profile_init(&q);
		assert_int_not_equal(pprof_decode(&q, gz.buf, cut, "cut"), 0);
		assert_int_equal(q.nr_samples, 0);
		profile_release(&q);
	}
	set_error_routine(NULL);
	profile_release(&p);
	strbuf_release(&gz);
}

/*
 * A deep stack's location ids fill the message with printable bytes: it is
 * still recognized as pprof, not read as folded stacks.
 */
static void test_pprof__sniff_deep_stack(void **state)
{
	struct strbuf gz = STRBUF_INIT, raw = STRBUF_INIT;
	uint64_t *locs = xcalloc(8192, sizeof(*locs));
	int64_t v = 1;
	enum profile_format fmt;
	struct profile p, q;
	uint64_t map;

	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	map = profile_add_mapping(&p, 0x1000, 0x100000, 0, "/bin/prog", "");
	for (size_t i = 0; i < 8192; i++) {
		char name[32];
		struct pf_line ln = { 0, 1, 0 };

		snprintf(name, sizeof(name), "f%zu", i);
		ln.function_id = profile_add_function(&p, name, name, "/src/a.c", 0);
		locs[8191 - i] = profile_add_location(&p, map, 0x1000 + i, &ln, 1);
	}
	profile_add_sample(&p, locs, 8192, &v, NULL, 0);
	assert_int_equal(pprof_encode(&p, &gz), 0);
	assert_int_equal(gunzip_maybe(&raw, gz.buf, gz.len, PPROF_MAX_BYTES, "gz"), 0);
	assert_true(folded_sniff(raw.buf, raw.len));	/* what used to mislead */
	assert_true(pprof_sniff(raw.buf, raw.len));
	profile_init(&q);
	assert_int_equal(profile_decode_any(&q, gz.buf, gz.len, "deep", &fmt), 0);
	assert_int_equal(fmt, PROFILE_FORMAT_PPROF);
	assert_same_profile(&p, &q);
	profile_release(&q);

	/* text, and cut messages, are not */
	assert_false(pprof_sniff("main;hot 1\n", 11));
	assert_false(pprof_sniff("\n\nmain;hot 1\n", 13));
	assert_false(pprof_sniff("", 0));
	assert_false(pprof_sniff(raw.buf, raw.len - 1));
	profile_release(&p);
	free(locs);
	strbuf_release(&gz);
	strbuf_release(&raw);
}

static void test_pprof__bad_files(void **state)
{
	size_t nr;
	char **files = list_files("pprof-bad", &nr);

	set_error_routine(count_error);
	for (size_t i = 0; i < nr; i++) {
		struct profile p;
		int before = nr_errors, ret;

		profile_init(&p);
		ret = pprof_read_file(&p, files[i]);
		if (ret != -1)
			fail_msg("'%s' decoded (ret %d); it must be rejected", files[i], ret);
		if (nr_errors == before)
			fail_msg("'%s' was rejected without an error message", files[i]);
		if (!strstr(last_error(), files[i]))
			fail_msg("'%s': the error does not name the file: %s", files[i], last_error());
		/* a rejected profile is left empty and reusable */
		assert_int_equal(p.nr_samples, 0);
		assert_int_equal(p.nr_locations, 0);
		assert_int_equal(p.strings.nr, 1);
		profile_release(&p);
	}
	set_error_routine(NULL);
	free_files(files, nr);
}

static void test_pprof__odd_files(void **state)
{
	size_t nr;
	char **files = list_files("pprof-odd", &nr);

	set_warn_routine(quiet);
	for (size_t i = 0; i < nr; i++) {
		struct profile p, q;
		struct strbuf out = STRBUF_INIT;

		profile_init(&p);
		if (pprof_read_file(&p, files[i]))
			fail_msg("'%s' must decode: %s", files[i], last_error());
		assert_int_equal(pprof_encode(&p, &out), 0);
		profile_init(&q);
		assert_int_equal(pprof_decode(&q, out.buf, out.len, files[i]), 0);
		assert_same_profile(&p, &q);
		profile_release(&q);
		profile_release(&p);
		strbuf_release(&out);
	}
	set_warn_routine(NULL);
	free_files(files, nr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pprof__round_trip),
		cmocka_unit_test(test_pprof__write_read_file),
		cmocka_unit_test(test_pprof__raw_protobuf),
		cmocka_unit_test(test_pprof__truncated_gzip),
		cmocka_unit_test(test_pprof__sniff_deep_stack),
		cmocka_unit_test(test_pprof__bad_files),
		cmocka_unit_test(test_pprof__odd_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
