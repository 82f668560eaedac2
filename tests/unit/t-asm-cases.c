/*
 * t-asm-cases.c: the tags and verdicts of asm_analyze() and of the brief
 * on real code, cases as data. Every tests/data/tags/NAME.json holds one
 * function's instructions with their samples (the control flow is in
 * their branch targets), and what must be made of them; the format is in
 * tests/data/tags/README.md. A new case is a new file, no code.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "util.h"
#include "strbuf.h"
#include "asm.h"
#include "brief.h"

static char *data_dir(void)
{
	const char *env = getenv("HOTLOOP_TEST_DATA");
	const char *file = __FILE__, *slash;

	if (env)
		return xstrfmt("%s/tags", env);
	slash = strstr(file, "tests/unit/");
	if (!slash)
		return xstrdup("tests/data/tags");
	return xstrfmt("%.*stests/data/tags", (int)(slash - file), file);
}

/* Problems with the case file itself, not with the analysis. */
static void bad_case(const char *name, const char *what)
{
	fail_msg("%s: %s", name, what);
}

static const char *intern(struct asm_function *f, const char *s)
{
	return strtab_get(&f->strs, strtab_intern_str(&f->strs, s));
}

static const char *str_or(json_t *v, const char *dflt)
{
	return json_is_string(v) ? json_string_value(v) : dflt;
}

/* "rax rcx": register families, as indexes in f's strings */
static uint8_t regs(struct asm_function *f, const char *names, uint32_t *out)
{
	char *copy = xstrdup(names), *p = copy, *tok;
	uint8_t n = 0;

	while ((tok = strsep(&p, " ")))
		if (*tok && n < ASM_MAX_REGS)
			out[n++] = (uint32_t)strtab_intern_str(&f->strs, tok);
	free(copy);
	return n;
}

static unsigned classes(const char *name, const char *list)
{
	char *copy = xstrdup(list), *p = copy, *tok;
	unsigned c = 0;

	while ((tok = strsep(&p, " "))) {
		unsigned bit;

		if (!*tok)
			continue;
		if (!(bit = asm_class_bit(tok)))
			bad_case(name, "an unknown instruction class");
		c |= bit;
	}
	free(copy);
	return c;
}

static enum asm_isa isa(const char *s)
{
	static const enum asm_isa all[] = { ASM_ISA_MMX, ASM_ISA_SSE, ASM_ISA_AVX, ASM_ISA_AVX2,
					    ASM_ISA_AVX512, ASM_ISA_NEON, ASM_ISA_SVE };

	for (size_t i = 0; s && i < ARRAY_SIZE(all); i++)
		if (!strcmp(asm_isa_name(all[i]), s))
			return all[i];
	return ASM_ISA_NONE;
}

/*
 * One row: [address, size, mnemonic, classes, target, samples, simd_width,
 * isa, reads, writes, inlined, file index, line].
 */
static void add_row(const char *name, struct asm_function *f, json_t *files, json_t *row)
{
	struct asm_insn *in;
	json_t *file;

	if (!json_is_array(row) || json_array_size(row) != 13 ||
	    !json_is_integer(json_array_get(row, 0)) || !json_is_integer(json_array_get(row, 1)) ||
	    !json_is_string(json_array_get(row, 2)) || !json_is_string(json_array_get(row, 3)))
		bad_case(name, "an instruction is not a row of 13 (docs: README.md)");
	ALLOC_GROW(f->insns, f->nr_insns + 1, f->alloc_insns);
	in = &f->insns[f->nr_insns++];
	memset(in, 0, sizeof(*in));
	in->addr = (uint64_t)json_integer_value(json_array_get(row, 0));
	in->size = (uint32_t)json_integer_value(json_array_get(row, 1));
	in->mnemonic = intern(f, json_string_value(json_array_get(row, 2)));
	in->operands = "";
	in->classes = classes(name, json_string_value(json_array_get(row, 3)));
	if (json_is_integer(json_array_get(row, 4))) {
		in->has_target = true;
		in->target = (uint64_t)json_integer_value(json_array_get(row, 4));
	}
	in->samples = json_integer_value(json_array_get(row, 5));
	in->simd_width = (uint16_t)json_integer_value(json_array_get(row, 6));
	in->isa = (uint8_t)isa(str_or(json_array_get(row, 7), NULL));
	in->nr_reads = regs(f, str_or(json_array_get(row, 8), ""), in->reads);
	in->nr_writes = regs(f, str_or(json_array_get(row, 9), ""), in->writes);
	in->inlined = intern(f, str_or(json_array_get(row, 10), ""));
	file = json_array_get(files, (size_t)json_integer_value(json_array_get(row, 11)));
	in->file = intern(f, json_is_integer(json_array_get(row, 11)) ? str_or(file, "") : "");
	in->line = (int)json_integer_value(json_array_get(row, 12));
	in->loop = -1;
}

static json_t *load(const char *dir, const char *name)
{
	char *path = xstrfmt("%s/%s", dir, name);
	json_error_t err;
	json_t *doc = json_load_file(path, 0, &err);

	if (!doc)
		fail_msg("%s: %s (line %d)", path, err.text, err.line);
	free(path);
	return doc;
}

/* The function of a case, annotated: its rows, or another case's, with its own samples. */
static void build(const char *dir, const char *name, json_t *doc, struct asm_function *f)
{
	json_t *from = json_object_get(doc, "instructions_from"), *src = doc, *rows, *at;
	size_t i, k;

	asm_function_init(f);
	if (json_is_string(from))
		src = load(dir, json_string_value(from));
	rows = json_object_get(src, "instructions");
	if (!json_is_array(rows) || !json_array_size(rows))
		bad_case(name, "no instructions");
	f->name = intern(f, str_or(json_object_get(doc, "function"), ""));
	f->arch = !strcmp(str_or(json_object_get(doc, "arch"), "x86-64"), "aarch64")
		? ASM_ARCH_AARCH64 : ASM_ARCH_X86_64;
	for (i = 0; i < json_array_size(rows); i++)
		add_row(name, f, json_object_get(src, "files"), json_array_get(rows, i));
	f->start = f->insns[0].addr;
	f->end = f->insns[f->nr_insns - 1].addr + f->insns[f->nr_insns - 1].size;
	if (json_is_array(at = json_object_get(doc, "samples_at"))) {
		for (k = 0; k < f->nr_insns; k++)
			f->insns[k].samples = 0;
		for (i = 0; i < json_array_size(at); i++) {
			uint64_t addr = (uint64_t)json_integer_value(json_array_get(json_array_get(at, i), 0));

			for (k = 0; k < f->nr_insns && f->insns[k].addr != addr; k++)
				;
			if (k == f->nr_insns)
				bad_case(name, "samples_at names an address that starts no instruction");
			f->insns[k].samples = json_integer_value(json_array_get(json_array_get(at, i), 1));
		}
	}
	f->annotated = true;
	f->samples = 0;
	for (k = 0; k < f->nr_insns; k++)
		if (f->insns[k].samples > 0)
			f->samples += f->insns[k].samples;
	if (src != doc)
		json_decref(src);
}

/* "a, b": the names of a JSON array of strings, or of the tags set */
static void names_of(json_t *a, struct strbuf *sb)
{
	for (size_t i = 0; i < json_array_size(a); i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", str_or(json_array_get(a, i), "?"));
}

static void run_case(const char *dir, const char *name)
{
	json_t *doc = load(dir, name), *expect, *want;
	struct asm_function f;
	struct strbuf got = STRBUF_INIT, exp = STRBUF_INIT;
	const char *focus;

	expect = json_object_get(doc, "expect");
	if (!json_is_object(expect))
		bad_case(name, "no expect object");
	build(dir, name, doc, &f);
	focus = str_or(json_object_get(doc, "focus"), NULL);
	if (focus && asm_focus_inlined(&f, focus) <= 0)
		bad_case(name, "no sample on an instruction inlined from the focus function");
	asm_analyze(&f);

	for (int i = 0; i < ASM_NR_TAGS; i++)
		if (f.tags & asm_tag_order[i])
			strbuf_addf(&got, "%s%s", got.len ? ", " : "", asm_tag_name(asm_tag_order[i]));
	names_of(json_object_get(expect, "asm_tags"), &exp);
	if (strcmp(got.buf, exp.buf))
		fail_msg("%s: asm tags [%s], want [%s]", name, got.buf, exp.buf);
	if (json_is_string(want = json_object_get(expect, "verdict")) &&
	    strcmp(f.verdict, json_string_value(want)))
		fail_msg("%s: verdict '%s', want '%s'", name, f.verdict, json_string_value(want));
	if (json_is_boolean(want = json_object_get(expect, "loop_free")) &&
	    f.loop_free != json_is_true(want))
		fail_msg("%s: loop_free %d, want %d", name, f.loop_free, json_is_true(want));

	/* the brief's tags from the same numbers, when the case has them */
	if (json_is_array(want = json_object_get(expect, "brief_tags"))) {
		struct brief_hotspot h = { 0 };

		if (!json_is_number(json_object_get(doc, "self")) || !json_is_number(json_object_get(doc, "total")))
			bad_case(name, "brief_tags without self and total");
		h.function = f.name;
		/* shares of the profile, as the brief prints them: a thousandth is enough */
		h.self = (int64_t)(1000 * json_number_value(json_object_get(doc, "self")));
		h.total = (int64_t)(1000 * json_number_value(json_object_get(doc, "total")));
		h.attributed = h.self;
		if (focus)
			h.asm_container = xstrdup(f.name);
		brief_own_tags(&h, 0);
		brief_code_tags(&h, &f);
		strbuf_reset(&got);
		strbuf_reset(&exp);
		for (size_t i = 0; i < h.nr_tags; i++) {
			strbuf_addf(&got, "%s%s", i ? ", " : "", brief_tag_name(h.tags[i].tag));
			if (!h.tags[i].evidence || !*h.tags[i].evidence)
				fail_msg("%s: tag %s without evidence", name, brief_tag_name(h.tags[i].tag));
		}
		names_of(want, &exp);
		if (strcmp(got.buf, exp.buf))
			fail_msg("%s: brief tags [%s], want [%s]", name, got.buf, exp.buf);
		brief_hotspot_release(&h);
	}
	strbuf_release(&got);
	strbuf_release(&exp);
	asm_function_release(&f);
	json_decref(doc);
}

static void test_asm_cases__all(void **state)
{
	char *dir = data_dir();
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		fail_msg("cannot open '%s'", dir);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		run_case(dir, e->d_name);
		n++;
	}
	closedir(d);
	free(dir);
	assert_true(n >= 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_asm_cases__all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
