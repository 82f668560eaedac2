/*
 * seed-pprof.c: writes the seed corpus of fuzz-pprof into a directory: a
 * few valid profiles (empty, small, with inline frames, labels, comments),
 * each as raw protobuf and gzipped, so the fuzzer starts from real structure.
 * usage: seed-pprof DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "pprof.h"

static int write_seed(const char *dir, const char *name, const struct profile *p)
{
	struct strbuf gz = STRBUF_INIT, raw = STRBUF_INIT;
	char *path;
	int ret;

	ret = pprof_encode(p, &gz);
	if (!ret)
		ret = gunzip_maybe(&raw, gz.buf, gz.len, PPROF_MAX_BYTES, name);
	if (!ret) {
		path = xstrfmt("%s/%s.pb.gz", dir, name);
		ret = write_file_atomic(path, gz.buf, gz.len);
		free(path);
	}
	if (!ret) {
		path = xstrfmt("%s/%s.pb", dir, name);
		ret = write_file_atomic(path, raw.buf, raw.len);
		free(path);
	}
	strbuf_release(&gz);
	strbuf_release(&raw);
	return ret;
}

static void small(struct profile *p, int inlined, int labels)
{
	uint64_t exe, libc, f_main, f_work, f_leaf, f_memcpy, l1, l2, l3, l4;
	struct pf_line lines[2];
	struct pf_label lab[2];
	int64_t v[2];

	profile_add_sample_type(p, "samples", "count");
	profile_add_sample_type(p, "cpu", "nanoseconds");
	p->period_type.type = profile_str(p, "cpu");
	p->period_type.unit = profile_str(p, "nanoseconds");
	p->period = 1000000;
	p->time_nanos = 1700000000000000000ll;
	p->duration_nanos = 500000000;
	exe = profile_add_mapping(p, 0x400000, 0x500000, 0, "/usr/bin/app", "abcdef0123");
	libc = profile_add_mapping(p, 0x7f0000000000, 0x7f0000200000, 0x28000,
				   "/lib/x86_64-linux-gnu/libc.so.6", "");
	f_main = profile_add_function(p, "main", NULL, "app.c", 10);
	f_work = profile_add_function(p, "work", NULL, "app.c", 30);
	f_leaf = profile_add_function(p, "ns::leaf(int)", "_ZN2ns4leafEi", "leaf.cc", 5);
	f_memcpy = profile_add_function(p, "memcpy", NULL, "", 0);

	lines[0] = (struct pf_line){ f_main, 12, 3 };
	l1 = profile_add_location(p, exe, 0x401000, lines, 1);
	if (inlined) {
		lines[0] = (struct pf_line){ f_leaf, 7, 0 };
		lines[1] = (struct pf_line){ f_work, 33, 0 };
		l2 = profile_add_location(p, exe, 0x401200, lines, 2);
	} else {
		lines[0] = (struct pf_line){ f_work, 33, 0 };
		l2 = profile_add_location(p, exe, 0x401200, lines, 1);
	}
	lines[0] = (struct pf_line){ f_memcpy, 0, 0 };
	l3 = profile_add_location(p, libc, 0x7f0000031000, lines, 1);
	l4 = profile_add_location(p, 0, 0xffffffff81000000ull, NULL, 0);

	lab[0] = (struct pf_label){ profile_str(p, "comm"), profile_str(p, "app"), 0, 0 };
	lab[1] = (struct pf_label){ profile_str(p, "tid"), 0, 4242, profile_str(p, "id") };
	{
		uint64_t s1[] = { l2, l1 }, s2[] = { l3, l2, l1 }, s3[] = { l4, l3, l1 };
		v[0] = 9; v[1] = 9000000;
		profile_add_sample(p, s1, 2, v, lab, labels ? 2 : 0);
		v[0] = 2; v[1] = 2000000;
		profile_add_sample(p, s2, 3, v, lab, labels ? 1 : 0);
		v[0] = 1; v[1] = 1000000;
		profile_add_sample(p, s3, 3, v, NULL, 0);
	}
	profile_add_comment(p, "hotloop record -F 999 -- ./app");
	p->drop_frames = profile_str(p, "^runtime\\.");
}

int main(int argc, char **argv)
{
	struct profile p;
	int ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: seed-pprof DIR\n");
		return 2;
	}
	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	ret |= write_seed(argv[1], "empty", &p);
	profile_release(&p);

	for (int i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "small-%s-%s", i & 1 ? "inline" : "flat",
			 i & 2 ? "labels" : "nolabels");
		profile_init(&p);
		small(&p, i & 1, i & 2);
		ret |= write_seed(argv[1], name, &p);
		profile_release(&p);
	}
	return ret ? 1 : 0;
}
