/*
 * t-flame.c: unit tests of lib/flame.c: the SVG is well-formed XML, frames
 * are as wide as their counts say, the script is there and fetches nothing,
 * differential colours go the right way, --reverse puts leaves at the base,
 * and hostile names and deep stacks keep the document valid.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "folded.h"
#include "flame.h"

static char warned[1024];

static void quiet(const char *prefix, const char *msg)
{
}

static void keep_warning(const char *prefix, const char *msg)
{
	snprintf(warned, sizeof(warned), "%s", msg);
}

static int setup(void **state)
{
	set_error_routine(quiet);
	set_warn_routine(keep_warning);
	return 0;
}

static void load(struct profile *p, const char *folded)
{
	profile_init(p);
	if (folded_parse(p, folded, strlen(folded), "test"))
		fail_msg("bad test input: %s", last_error());
}

/* Render folded text (and a base) with options; the SVG stays in *svg. */
static int render(struct strbuf *svg, const char *folded, const char *base_folded,
		  const struct flame_options *o)
{
	struct profile p, base;
	int ret;

	load(&p, folded);
	if (base_folded)
		load(&base, base_folded);
	ret = flame_render(&p, base_folded ? &base : NULL, o, svg);
	if (base_folded)
		profile_release(&base);
	profile_release(&p);
	return ret;
}

/* Check well-formedness with xmllint, else python3; skip when neither runs. */
static void assert_well_formed(const struct strbuf *svg)
{
	char path[] = "/tmp/t-flame-XXXXXX";
	struct strbuf cmd = STRBUF_INIT;
	int fd = mkstemp(path), rc;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, svg->buf, svg->len), (ssize_t)svg->len);
	close(fd);
	if (!system("command -v xmllint >/dev/null 2>&1"))
		strbuf_addf(&cmd, "xmllint --noout '%s'", path);
	else if (!system("command -v python3 >/dev/null 2>&1"))
		strbuf_addf(&cmd, "python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' '%s'",
			    path);
	rc = cmd.len ? system(cmd.buf) : -1;
	unlink(path);
	strbuf_release(&cmd);
	if (rc == -1)
		skip();
	if (rc)
		fail_msg("the SVG is not well-formed XML");
}

struct drawn {
	double x, y, width;
	int r, g, b;
	const char *g_start;
};

/* The first frame whose title starts with 'title', or fail. */
static struct drawn find_title(const char *svg, const char *title)
{
	struct strbuf key = STRBUF_INIT;
	struct drawn d = { 0 };
	const char *t, *g;

	strbuf_addf(&key, "<title>%s", title);
	t = strstr(svg, key.buf);
	if (!t)
		fail_msg("no frame '%s' in the SVG", title);
	for (g = t; g > svg && strncmp(g, "<g", 2); g--)
		;
	d.g_start = g;
	t = strstr(t, "<rect ");
	assert_int_equal(sscanf(t, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\"", &d.x, &d.y, &d.width), 3);
	t = strstr(t, "fill=\"rgb(");
	assert_int_equal(sscanf(t, "fill=\"rgb(%d,%d,%d)", &d.r, &d.g, &d.b), 3);
	strbuf_release(&key);
	return d;
}

static struct drawn find_frame(const char *svg, const char *name)
{
	struct strbuf title = STRBUF_INIT;
	struct drawn d;

	strbuf_addf(&title, "%s (", name);
	d = find_title(svg, title.buf);
	strbuf_release(&title);
	return d;
}

static void test_flame__widths_follow_counts(void **state)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf svg = STRBUF_INIT;
	struct drawn all, hot, cold, run;

	o.name = "cpu.folded";
	assert_int_equal(render(&svg, "main;run;hot_spin 90\nmain;run;cold 10\n", NULL, &o), 0);
	assert_well_formed(&svg);
	all = find_frame(svg.buf, "all");
	run = find_frame(svg.buf, "run");
	hot = find_frame(svg.buf, "hot_spin");
	cold = find_frame(svg.buf, "cold");
	assert_true(fabs(all.width - (1200 - 20)) < 0.01);
	assert_true(fabs(hot.width / cold.width - 9.0) < 0.01);
	assert_true(fabs(hot.width + cold.width - run.width) < 0.02);
	/* children in name order, the caller below its callees */
	assert_true(cold.x < hot.x);
	assert_true(hot.y < run.y && run.y < all.y);
	assert_non_null(strstr(svg.buf, "<title>hot_spin (90 samples, 90.00%)</title>"));
	assert_non_null(strstr(svg.buf, "cpu.folded: 100 samples (sample type samples/count)"));
	assert_non_null(strstr(svg.buf, ">Flame Graph</text>"));
	strbuf_release(&svg);
}

static void test_flame__self_contained_script(void **state)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf svg = STRBUF_INIT;
	const char *s;

	assert_int_equal(render(&svg, "main;a 1\n", NULL, &o), 0);
	assert_non_null(strstr(svg.buf, "onload=\"init(evt)\""));
	assert_non_null(strstr(svg.buf, "function zoom("));
	assert_non_null(strstr(svg.buf, "function unzoom("));
	assert_non_null(strstr(svg.buf, "function search("));
	assert_non_null(strstr(svg.buf, "new RegExp(term)"));
	assert_non_null(strstr(svg.buf, "e.ctrlKey"));
	assert_non_null(strstr(svg.buf, ">Reset Zoom</text>"));
	assert_non_null(strstr(svg.buf, ">Search</text>"));
	assert_non_null(strstr(svg.buf, "id=\"matched\""));
	/* nothing is fetched: the only URL is the SVG namespace */
	for (s = svg.buf; (s = strstr(s, "http")); s++)
		if (strncmp(s, "http://www.w3.org/2000/svg\"", 27))
			fail_msg("unexpected URL in the SVG: %.40s", s);
	assert_null(strstr(svg.buf, "xlink"));
	assert_null(strstr(svg.buf, "<script src"));
	strbuf_release(&svg);
}

static void test_flame__kinds_are_coloured_apart(void **state)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf svg = STRBUF_INIT;
	struct drawn user, kernel, inl;

	assert_int_equal(render(&svg, "main;read_[k];sys_read_[k] 50\nmain;outer;mix_[i] 50\n",
				NULL, &o), 0);
	assert_well_formed(&svg);
	user = find_frame(svg.buf, "outer");
	kernel = find_frame(svg.buf, "sys_read");
	inl = find_frame(svg.buf, "mix");
	assert_true(user.r > user.b);		/* warm */
	assert_true(kernel.b > kernel.r);	/* cool */
	assert_true(inl.g > inl.r && inl.g > inl.b);
	assert_true(!strncmp(kernel.g_start, "<g class=\"k\">", 13));
	assert_true(!strncmp(inl.g_start, "<g class=\"i\">", 13));
	assert_non_null(strstr(svg.buf, "<title>mix (inlined; 50 samples, 50.00%)"));
	assert_non_null(strstr(svg.buf, "<title>sys_read (kernel; 50 samples, 50.00%)"));
	assert_non_null(strstr(svg.buf, ">inlined</text>"));	/* the legend */
	/* the same name gets the same shade every time */
	strbuf_reset(&svg);
	assert_int_equal(render(&svg, "x;outer 3\n", NULL, &o), 0);
	inl = find_frame(svg.buf, "outer");
	assert_int_equal(inl.r, user.r);
	assert_int_equal(inl.g, user.g);
	assert_int_equal(inl.b, user.b);
	strbuf_release(&svg);
}

static void test_flame__diff_colours(void **state)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf svg = STRBUF_INIT;
	struct drawn grew, shrank, same, fresh;

	o.name = "new.folded";
	o.base_name = "old.folded";
	/* the base has twice the samples: shares, not counts, are compared */
	assert_int_equal(render(&svg,
				"m;grew 60\nm;shrank 20\nm;same 10\nm;fresh 10\n",
				"m;grew 80\nm;shrank 100\nm;same 20\n", &o), 0);
	assert_well_formed(&svg);
	grew = find_frame(svg.buf, "grew");
	shrank = find_frame(svg.buf, "shrank");
	same = find_frame(svg.buf, "same");
	fresh = find_frame(svg.buf, "fresh");
	assert_true(grew.r > grew.b + 50);
	assert_true(shrank.b > shrank.r + 50);
	assert_true(abs(same.r - same.b) < 5);
	assert_int_equal(fresh.r, 255);
	assert_true(fresh.b < 60);
	assert_non_null(strstr(svg.buf, "<title>grew (base 40.00%, now 60.00%, +20.00 pp; 60 samples)"));
	assert_non_null(strstr(svg.buf, "<title>shrank (base 50.00%, now 20.00%, -30.00 pp; 20 samples)"));
	assert_non_null(strstr(svg.buf, "<title>fresh (base 0.00%, now 10.00%, +10.00 pp; 10 samples)"));
	assert_non_null(strstr(svg.buf, ">Differential Flame Graph</text>"));
	assert_non_null(strstr(svg.buf, "new.folded vs old.folded: 100 vs 200 samples"));
	/* the largest change is the most intense */
	assert_true(shrank.r < 45);
	strbuf_release(&svg);
}

static void test_flame__reverse_puts_leaves_at_the_base(void **state)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf svg = STRBUF_INIT;
	struct drawn all, hot, run, other, main_fn;

	o.reverse = true;
	assert_int_equal(render(&svg, "main;run;hot 9\nmain;other;hot 1\nmain;other 2\n", NULL, &o), 0);
	assert_well_formed(&svg);
	all = find_frame(svg.buf, "all");
	hot = find_frame(svg.buf, "hot");
	run = find_frame(svg.buf, "run");
	main_fn = find_frame(svg.buf, "main");
	/* hot is merged from the leaf: one frame of 10 right above "all" */
	assert_true(fabs(hot.y - (all.y - FLAME_FRAME_HEIGHT)) < 0.01);
	assert_non_null(strstr(svg.buf, "<title>hot (10 samples, 83.33%)"));
	assert_true(fabs(run.y - (hot.y - FLAME_FRAME_HEIGHT)) < 0.01);
	assert_true(main_fn.y < run.y);
	/* "other" is a leaf too (2 samples) and a caller of hot (1) */
	other = find_title(svg.buf, "other (2 samples");
	assert_true(fabs(other.y - hot.y) < 0.01);
	assert_non_null(strstr(svg.buf, "reversed: leaf functions at the base"));
	strbuf_release(&svg);
}

static void test_flame__narrow_frames_are_left_out(void **state)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf svg = STRBUF_INIT;

	assert_int_equal(render(&svg, "m;big 1000000\nm;tiny 1\nm;tiny;under 1\n", NULL, &o), 0);
	assert_non_null(strstr(svg.buf, "<title>big ("));
	assert_null(strstr(svg.buf, "<title>tiny ("));
	assert_null(strstr(svg.buf, "<title>under ("));
	strbuf_reset(&svg);
	o.min_width = 0;
	assert_int_equal(render(&svg, "m;big 1000000\nm;tiny 1\nm;tiny;under 1\n", NULL, &o), 0);
	assert_non_null(strstr(svg.buf, "<title>tiny ("));
	assert_non_null(strstr(svg.buf, "<title>under ("));
	strbuf_reset(&svg);
	o.min_width = 10;	/* percent of the width */
	o.min_width_percent = true;
	assert_int_equal(render(&svg, "m;a 85\nm;b 15\nm;b;c 9\n", NULL, &o), 0);
	assert_non_null(strstr(svg.buf, "<title>b ("));
	assert_null(strstr(svg.buf, "<title>c ("));
	strbuf_release(&svg);
}

static void test_flame__hostile_names_stay_valid(void **state)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf svg = STRBUF_INIT;

	o.title = "<script>&\"'";
	o.name = "bad\x01name\xff.folded";
	assert_int_equal(render(&svg,
				"main;a<b>&\"c\"'d' 5\nmain;\xc3\x28\xed\xa0\x80\xef\xbf\xbe\x7f\x1b 5\n"
				"main;]]>;</g></svg> 5\n", NULL, &o), 0);
	assert_well_formed(&svg);
	assert_non_null(strstr(svg.buf, "<title>a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39; ("));
	assert_non_null(strstr(svg.buf, ">&lt;script&gt;&amp;&quot;&#39;</text>"));
	assert_non_null(strstr(svg.buf, "bad?name\xef\xbf\xbd.folded"));
	strbuf_release(&svg);
}

static void test_flame__long_names_are_cut_to_fit(void **state)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf svg = STRBUF_INIT;
	const char *t;

	assert_int_equal(render(&svg,
				"m;a_function_with_a_rather_long_name_that_cannot_fit 10\nm;wide 190\n",
				NULL, &o), 0);
	/* 10/200 of 1180 px = 59 px: room for 7 characters */
	assert_non_null(strstr(svg.buf, "<title>a_function_with_a_rather_long_name_that_cannot_fit ("));
	t = strstr(svg.buf, "<title>a_function_with");
	t = strstr(t, "<text ");
	t = strchr(t, '>') + 1;
	assert_true(!strncmp(t, "a_fun..</text>", 14));
	strbuf_release(&svg);
}

static void test_flame__deep_stacks_are_cut(void **state)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf in = STRBUF_INIT, svg = STRBUF_INIT;
	struct profile p;
	double height;

	for (int i = 0; i < FLAME_MAX_DEPTH + 500; i++)
		strbuf_addf(&in, "%sf%d", i ? ";" : "", i % 7);
	strbuf_addstr(&in, " 3\n");
	load(&p, in.buf);
	warned[0] = '\0';
	assert_int_equal(flame_render(&p, NULL, &o, &svg), 0);
	assert_non_null(strstr(warned, "1 stacks deeper than 2048 frames were cut"));
	assert_true(sscanf(strstr(svg.buf, "<svg "), "<svg version=\"1.1\" width=\"1200\" height=\"%lf\"",
			   &height) == 1);
	assert_true(fabs(height - (72 + (FLAME_MAX_DEPTH + 1) * FLAME_FRAME_HEIGHT + 32)) < 0.5);
	assert_well_formed(&svg);
	strbuf_release(&svg);
	strbuf_release(&in);
	profile_release(&p);
}

static void test_flame__sample_type_choice(void **state)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf svg = STRBUF_INIT;
	struct profile p;
	uint64_t fa, fb, la, lb;
	int64_t va[2] = { 1, 900 }, vb[2] = { 3, 100 };

	profile_init(&p);
	profile_add_sample_type(&p, "samples", "count");
	profile_add_sample_type(&p, "cpu", "nanoseconds");
	fa = profile_add_function(&p, "a", NULL, "", 0);
	fb = profile_add_function(&p, "b", NULL, "", 0);
	la = profile_add_location(&p, 0, 1, &(struct pf_line){ .function_id = fa }, 1);
	lb = profile_add_location(&p, 0, 2, &(struct pf_line){ .function_id = fb }, 1);
	profile_add_sample(&p, &la, 1, va, NULL, 0);
	profile_add_sample(&p, &lb, 1, vb, NULL, 0);

	/* "samples" by default */
	assert_int_equal(flame_render(&p, NULL, &o, &svg), 0);
	assert_non_null(strstr(svg.buf, "<title>b (3 samples, 75.00%)"));
	/* asked for */
	strbuf_reset(&svg);
	o.sample_type = "cpu";
	assert_int_equal(flame_render(&p, NULL, &o, &svg), 0);
	assert_non_null(strstr(svg.buf, "<title>a (900 nanoseconds, 90.00%)"));
	assert_non_null(strstr(svg.buf, "1,000 nanoseconds (sample type cpu/nanoseconds)"));
	/* the profile's own default wins over "samples" */
	strbuf_reset(&svg);
	o.sample_type = NULL;
	p.default_sample_type = profile_str(&p, "cpu");
	assert_int_equal(flame_render(&p, NULL, &o, &svg), 0);
	assert_non_null(strstr(svg.buf, "<title>a (900 nanoseconds"));
	/* an unknown one is an error naming the choices */
	o.sample_type = "alloc_space";
	assert_int_equal(flame_render(&p, NULL, &o, &svg), -1);
	assert_non_null(strstr(last_error(), "no sample type 'alloc_space' (it has: samples, cpu)"));
	strbuf_release(&svg);
	profile_release(&p);
}

static void test_flame__nothing_to_draw(void **state)
{
	struct flame_options o = FLAME_OPTIONS_INIT;
	struct strbuf svg = STRBUF_INIT;

	o.name = "empty";
	assert_int_equal(render(&svg, "\n", NULL, &o), -1);
	assert_non_null(strstr(last_error(), "nothing to draw: 'empty' has no samples"));
	o.width = 50;
	assert_int_equal(render(&svg, "a 1\n", NULL, &o), -1);
	assert_non_null(strstr(last_error(), "invalid flame graph width 50"));
	assert_int_equal(svg.len, 0);
	strbuf_release(&svg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flame__widths_follow_counts),
		cmocka_unit_test(test_flame__self_contained_script),
		cmocka_unit_test(test_flame__kinds_are_coloured_apart),
		cmocka_unit_test(test_flame__diff_colours),
		cmocka_unit_test(test_flame__reverse_puts_leaves_at_the_base),
		cmocka_unit_test(test_flame__narrow_frames_are_left_out),
		cmocka_unit_test(test_flame__hostile_names_stay_valid),
		cmocka_unit_test(test_flame__long_names_are_cut_to_fit),
		cmocka_unit_test(test_flame__deep_stacks_are_cut),
		cmocka_unit_test(test_flame__sample_type_choice),
		cmocka_unit_test(test_flame__nothing_to_draw),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
