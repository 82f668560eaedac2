/*
 * t-heap-brief.c: unit tests of lib/heap-brief.c through brief_build() on
 * hand-built heap profiles: sites are the first owned frames, ranked by
 * bytes and by count; each tag rule (leak, short-lived, realloc-growth)
 * fires on its planted site with its evidence and not on the others; the
 * CPU brief of a profile that is not a heap profile has no heap part.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "heap-profile.h"
#include "heap-brief.h"
#include "brief.h"

static char *roots[] = { "/proj" };
static const struct brief_owned proj = { roots, 1, NULL, 0, "test", 0, 0 };

static void quiet(const char *prefix, const char *msg)
{
}

static int setup(void **state)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	return 0;
}

/* A sample: malloc (foreign) <- site <- main, with values and labels op, bytes. */
static void add(struct profile *p, const char *site, const char *op, int64_t size,
		int64_t allocs, int64_t peak, int64_t leak, int64_t temp)
{
	/* the executable first, as pprof has it */
	uint64_t prog = profile_add_mapping(p, 0x400000, 0x500000, 0, "/proj/prog", "");
	uint64_t libc = profile_add_mapping(p, 0x7f0000000000, 0x7f0000100000, 0, "/lib/libc.so.6", "");
	struct pf_line l;
	uint64_t locs[3];
	int64_t v[HEAP_NR_SAMPLE_TYPES] = { allocs, allocs * size, peak, peak * size, leak, leak * size, temp };
	struct pf_label labels[2] = {
		{ profile_str(p, HEAP_LABEL_OP), profile_str(p, op), 0, 0 },
		{ profile_str(p, "bytes"), 0, size, profile_str(p, "bytes") },
	};

	l = (struct pf_line){ profile_add_function(p, op, op, "", 0), 0, 0 };
	locs[0] = profile_add_location(p, libc, 0x7f0000001000, &l, 1);
	l = (struct pf_line){ profile_add_function(p, site, site, "/proj/a.c", 0), 10, 0 };
	locs[1] = profile_add_location(p, prog, 0x401000 + (uint64_t)strlen(site) * 16, &l, 1);
	l = (struct pf_line){ profile_add_function(p, "main", "main", "/proj/main.c", 0), 5, 0 };
	locs[2] = profile_add_location(p, prog, 0x402000, &l, 1);
	profile_add_sample(p, locs, 3, v, labels, 2);
}

static void heap_profile(struct profile *p)
{
	profile_init(p);
	for (int t = 0; t < HEAP_NR_SAMPLE_TYPES; t++)
		profile_add_sample_type(p, heap_sample_types[t][0], heap_sample_types[t][1]);
	p->default_sample_type = profile_str(p, "alloc_space");
	profile_add_comment(p, "heap-peak=123456");
	/* big: the most bytes, no tag */
	add(p, "big", "malloc", 1 << 20, 4, 4, 0, 0);
	/* leaky: a little, still live at exit */
	add(p, "leaky", "calloc", 1000, 2, 2, 2, 0);
	/* temps: the most allocations, nearly all temporary */
	add(p, "temps", "malloc", 64, 5000, 1, 0, 4900);
	/* grow: realloc of growing sizes, one sample per size */
	for (int i = 1; i <= 40; i++)
		add(p, "grow", "realloc", 100 * i, 1, 0, 0, 0);
}

static const struct heap_site *site(const struct brief *b, const char *name)
{
	for (size_t i = 0; i < b->heap->nr_sites; i++)
		if (!strcmp(b->heap->sites[i].function, name))
			return &b->heap->sites[i];
	fail_msg("no site %s", name);
	return NULL;
}

static void test_heap_brief__sites_and_tags(void **state)
{
	struct brief_opts opts = { .owned = &proj, .context = -1, .no_asm = true };
	const struct heap_site *s;
	struct profile p;
	struct brief b;

	heap_profile(&p);
	assert_int_equal(brief_build(&b, &p, profile_find_sample_type(&p, "alloc_space"), &opts), 0);
	assert_non_null(b.heap);
	assert_int_equal(b.heap->nr_sites, 4);
	assert_int_equal(b.heap->peak, 123456);
	/* by bytes: big first; by count: temps first */
	assert_string_equal(b.heap->sites[0].function, "big");
	assert_string_equal(b.heap->sites[b.heap->by_count[0]].function, "temps");

	s = site(&b, "big");
	for (int t = 0; t < HT_NR; t++)
		assert_null(s->evidence[t]);
	s = site(&b, "leaky");
	assert_non_null(s->evidence[HT_LEAK]);
	assert_string_equal(s->evidence[HT_LEAK], "2000 bytes in 2 objects still live at exit");
	assert_null(s->evidence[HT_SHORT_LIVED]);
	s = site(&b, "temps");
	assert_non_null(s->evidence[HT_SHORT_LIVED]);
	assert_non_null(strstr(s->evidence[HT_SHORT_LIVED], "4900 of 5000 allocations (98%)"));
	/* no binary to read: no loop claimed */
	assert_null(s->evidence[HT_ALLOC_IN_LOOP]);
	s = site(&b, "grow");
	assert_int_equal(s->realloc_objects, 40);
	assert_non_null(s->evidence[HT_REALLOC_GROWTH]);
	assert_string_equal(s->evidence[HT_REALLOC_GROWTH], "40 realloc calls, sizes from 100 to 4000 bytes");
	assert_int_equal(s->line, 10);
	assert_string_equal(s->caller, "main");
	brief_release(&b);
	profile_release(&p);
}

static void test_heap_brief__formats(void **state)
{
	struct brief_opts opts = { .owned = &proj, .context = -1, .no_asm = true };
	struct strbuf md = STRBUF_INIT;
	struct profile p;
	struct brief b;
	json_t *j, *sites;

	heap_profile(&p);
	assert_int_equal(brief_build(&b, &p, profile_find_sample_type(&p, "alloc_space"), &opts), 0);
	brief_format_md(&b, 0, &md);
	assert_non_null(strstr(md.buf, "## Allocation sites (owned code, by bytes allocated)"));
	assert_non_null(strstr(md.buf, "| 1 | `big` | /proj/a.c:10 | 4.0 MiB | 4 |"));
	assert_non_null(strstr(md.buf, "By count: `temps` 5000"));
	assert_non_null(strstr(md.buf, "- `leaky` leak: 2000 bytes"));
	j = brief_to_json(&b, 0);
	sites = json_object_get(json_object_get(j, "heap"), "sites");
	assert_true(json_is_array(sites));
	assert_int_equal(json_array_size(sites), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(sites, 0), "function")), "big");
	assert_true(json_is_integer(json_object_get(json_array_get(sites, 0), "alloc_space")));
	assert_true(json_is_array(json_object_get(json_array_get(sites, 0), "tags")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "heap"), "ranked_by")),
			    "alloc_space");
	json_decref(j);
	strbuf_release(&md);
	brief_release(&b);
	profile_release(&p);
}

static void test_heap_brief__budget(void **state)
{
	struct brief_opts opts = { .owned = &proj, .context = -1, .no_asm = true };
	struct strbuf md = STRBUF_INIT;
	struct profile p;
	struct brief b;

	heap_profile(&p);
	assert_int_equal(brief_build(&b, &p, profile_find_sample_type(&p, "alloc_space"), &opts), 0);
	/* the hotspots go first, then the sites from the bottom, never the first */
	brief_format_md(&b, 10, &md);
	assert_int_equal(b.heap->show, 1);
	assert_true(b.truncated);
	assert_non_null(strstr(md.buf, "| 1 | `big` |"));
	assert_null(strstr(md.buf, "| 2 |"));
	/* a site cut from the table keeps its tags in the by-count line */
	assert_non_null(strstr(md.buf, "`temps` 5000 (short-lived)"));
	strbuf_reset(&md);
	brief_format_md(&b, 0, &md);
	assert_int_equal(b.heap->show, 4);
	strbuf_release(&md);
	brief_release(&b);
	profile_release(&p);
}

static void test_heap_brief__not_heap(void **state)
{
	struct brief_opts opts = { .owned = &proj, .context = -1, .no_asm = true };
	struct profile p;
	struct brief b;
	struct pf_line l;
	uint64_t loc, prog;
	int64_t v = 10;
	json_t *j;

	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	prog = profile_add_mapping(&p, 0x400000, 0x500000, 0, "/proj/prog", "");
	l = (struct pf_line){ profile_add_function(&p, "f", "f", "/proj/a.c", 0), 3, 0 };
	loc = profile_add_location(&p, prog, 0x401000, &l, 1);
	profile_add_sample(&p, &loc, 1, &v, NULL, 0);
	assert_false(profile_is_heap(&p));
	assert_int_equal(brief_build(&b, &p, 0, &opts), 0);
	assert_null(b.heap);
	j = brief_to_json(&b, 0);
	assert_null(json_object_get(j, "heap"));
	json_decref(j);
	brief_release(&b);
	profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap_brief__sites_and_tags),
		cmocka_unit_test(test_heap_brief__formats),
		cmocka_unit_test(test_heap_brief__budget),
		cmocka_unit_test(test_heap_brief__not_heap),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
