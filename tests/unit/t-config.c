/*
 * t-config.c: unit tests for hotloop.conf. The cases are data: every
 * tests/data/config/NAME.conf has either NAME.json (the normalized config it
 * must give, which must also survive a round trip through the plain form) or
 * NAME.err (every error it must report, in order). Value units and the
 * search for the file up to the git top level are tested here directly.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "util.h"
#include "strbuf.h"
#include "config.h"

static struct strbuf errors = STRBUF_INIT;

static void collect(const char *prefix, const char *msg)
{
	strbuf_addf(&errors, "%s%s\n", prefix, msg);
}

static char *data_dir(void)
{
	const char *env = getenv("HOTLOOP_TEST_DATA");
	const char *file = __FILE__, *slash;

	if (env)
		return xstrfmt("%s/config", env);
	slash = strstr(file, "tests/unit/");
	if (!slash)
		return xstrdup("tests/data/config");
	return xstrfmt("%.*stests/data/config", (int)(slash - file), file);
}

static bool read_if_exists(struct strbuf *sb, const char *path)
{
	if (access(path, F_OK))
		return false;
	if (read_file(sb, path, 1 << 20) < 0)
		fail_msg("cannot read '%s'", path);
	return true;
}

static void check_json(const char *what, const struct config *c, const char *expect_text)
{
	json_error_t jerr;
	json_t *want = json_loads(expect_text, 0, &jerr), *have = config_to_json(c);
	char *dump;

	if (!want)
		fail_msg("%s: bad expected JSON: %s (line %d)", what, jerr.text, jerr.line);
	if (!json_equal(want, have)) {
		dump = json_dumps(have, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fail_msg("%s: normalized config differs; got\n%s", what, dump);
	}
	json_decref(want);
	json_decref(have);
}

static void run_case(const char *dir, const char *conf_name)
{
	size_t stem = strlen(conf_name) - strlen(".conf");
	char *conf = xstrfmt("%s/%s", dir, conf_name);
	char *json_path = xstrfmt("%s/%.*s.json", dir, (int)stem, conf_name);
	char *err_path = xstrfmt("%s/%.*s.err", dir, (int)stem, conf_name);
	struct strbuf text = STRBUF_INIT, expect = STRBUF_INIT, plain = STRBUF_INIT;
	struct config c, again;
	int ret;

	if (read_file(&text, conf, 1 << 20) < 0)
		fail_msg("cannot read '%s'", conf);
	strbuf_reset(&errors);
	ret = config_parse_buf(&c, text.buf, text.len, CONFIG_FILE);
	if (read_if_exists(&expect, json_path)) {
		if (ret)
			fail_msg("%s: should parse, got:\n%s", conf_name, errors.buf);
		check_json(conf_name, &c, expect.buf);
		/* the plain form reads back to the same config */
		config_format(&c, &plain);
		if (config_parse_buf(&again, plain.buf, plain.len, CONFIG_FILE))
			fail_msg("%s: normalized form does not parse:\n%s\n%s", conf_name, plain.buf, errors.buf);
		check_json(conf_name, &again, expect.buf);
		config_release(&again);
	} else if (read_if_exists(&expect, err_path)) {
		if (!ret)
			fail_msg("%s: should fail", conf_name);
		if (strcmp(expect.buf, errors.buf))
			fail_msg("%s: errors differ; want\n%sgot\n%s", conf_name, expect.buf, errors.buf);
	} else {
		fail_msg("%s: neither .json nor .err next to it", conf_name);
	}
	config_release(&c);
	strbuf_release(&text);
	strbuf_release(&expect);
	strbuf_release(&plain);
	free(conf);
	free(json_path);
	free(err_path);
}

static void test_config__cases(void **state)
{
	char *dir = data_dir();
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort), done = 0;

	if (n < 0)
		fail_msg("cannot list '%s'", dir);
	for (int i = 0; i < n; i++) {
		size_t len = strlen(ents[i]->d_name);

		if (len > 5 && !strcmp(ents[i]->d_name + len - 5, ".conf")) {
			run_case(dir, ents[i]->d_name);
			done++;
		}
		free(ents[i]);
	}
	free(ents);
	free(dir);
	assert_true(done >= 10);
}

enum vkind { V_PERCENT, V_SIZE, V_DURATION, V_BOOL };

static const struct value_case {
	enum vkind kind;
	const char *in;
	int ret;
	double want;	/* fraction, bytes, seconds, 0/1 */
} values[] = {
	{ V_PERCENT, "3%", 0, 0.03 },
	{ V_PERCENT, "0.5%", 0, 0.005 },
	{ V_PERCENT, "100%", 0, 1.0 },
	{ V_PERCENT, "0%", 0, 0 },
	{ V_PERCENT, "3", -1, 0 },
	{ V_PERCENT, "0.03", -1, 0 },
	{ V_PERCENT, "100.1%", -1, 0 },
	{ V_PERCENT, "-1%", -1, 0 },
	{ V_PERCENT, "3 %", -1, 0 },
	{ V_PERCENT, "%", -1, 0 },
	{ V_PERCENT, ".5%", 0, 0.005 },
	{ V_PERCENT, "1e1%", -1, 0 },
	{ V_PERCENT, "nan%", -1, 0 },
	{ V_SIZE, "0", 0, 0 },
	{ V_SIZE, "4096", 0, 4096 },
	{ V_SIZE, "100B", 0, 100 },
	{ V_SIZE, "2K", 0, 2048 },
	{ V_SIZE, "2KB", 0, 2048 },
	{ V_SIZE, "2KiB", 0, 2048 },
	{ V_SIZE, "512M", 0, 512.0 * 1024 * 1024 },
	{ V_SIZE, "2G", 0, 2.0 * 1024 * 1024 * 1024 },
	{ V_SIZE, "1T", 0, 1024.0 * 1024 * 1024 * 1024 },
	{ V_SIZE, "2g", -1, 0 },
	{ V_SIZE, "1.5G", -1, 0 },
	{ V_SIZE, "2GiBs", -1, 0 },
	{ V_SIZE, "-1", -1, 0 },
	{ V_SIZE, "", -1, 0 },
	{ V_SIZE, "9223372036854775807", 0, 9223372036854775807.0 },
	{ V_SIZE, "9223372036854775808", -1, 0 },
	{ V_SIZE, "18446744073709551616", -1, 0 },
	{ V_SIZE, "17179869184G", -1, 0 },
	{ V_DURATION, "5ms", 0, 0.005 },
	{ V_DURATION, "1.5s", 0, 1.5 },
	{ V_DURATION, "20m", 0, 1200 },
	{ V_DURATION, "2h", 0, 7200 },
	{ V_DURATION, "0s", 0, 0 },
	{ V_DURATION, "60", -1, 0 },
	{ V_DURATION, "1d", -1, 0 },
	{ V_DURATION, "1 s", -1, 0 },
	{ V_DURATION, "s", -1, 0 },
	{ V_DURATION, "9000h", -1, 0 },
	{ V_BOOL, "yes", 0, 1 },
	{ V_BOOL, "On", 0, 1 },
	{ V_BOOL, "TRUE", 0, 1 },
	{ V_BOOL, "1", 0, 1 },
	{ V_BOOL, "no", 0, 0 },
	{ V_BOOL, "off", 0, 0 },
	{ V_BOOL, "false", 0, 0 },
	{ V_BOOL, "0", 0, 0 },
	{ V_BOOL, "y", -1, 0 },
	{ V_BOOL, "", -1, 0 },
};

static void test_config__values(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(values); i++) {
		const struct value_case *v = &values[i];
		double got = -1;
		uint64_t size = 0;
		bool b = false;
		int ret;

		switch (v->kind) {
		case V_PERCENT:
			ret = config_parse_percent(v->in, &got);
			break;
		case V_SIZE:
			ret = config_parse_size(v->in, &size);
			got = (double)size;
			break;
		case V_DURATION:
			ret = config_parse_duration(v->in, &got);
			break;
		default:
			ret = config_parse_bool(v->in, &b);
			got = b;
			break;
		}
		if (ret != v->ret)
			fail_msg("'%s': returned %d, want %d", v->in, ret, v->ret);
		if (!ret && got != v->want)
			fail_msg("'%s': got %.17g, want %.17g", v->in, got, v->want);
	}
}

static void test_config__sizes(void **state)
{
	static const struct {
		const char *in;
		const char *want;	/* the sizes, or the reason */
		int ret;
	} cases[] = {
		{ "1000 2000 4000", "1000 2000 4000", 0 },
		{ "4000,1000,2000", "1000 2000 4000", 0 },
		{ " 8, 2\t4 ,, 1 ", "1 2 4 8", 0 },
		{ "1 2 1000000000000000", "1 2 1000000000000000", 0 },
		{ "1000 2000", "only 2 sizes", -1 },
		{ "5", "only 1 size", -1 },
		{ "", "no sizes", -1 },
		{ " , ", "no sizes", -1 },
		{ "1000 2000 1000", "1000 appears twice", -1 },
		{ "1000 2k 4000", "'2k' is not a whole number from 1 to 1000000000000000", -1 },
		{ "0 1 2", "'0' is not a whole number from 1 to 1000000000000000", -1 },
		{ "-1 1 2", "'-1' is not a whole number from 1 to 1000000000000000", -1 },
		{ "1 2 1000000000000001", "'1000000000000001' is not a whole number from 1 to 1000000000000000", -1 },
		{ "1 2 99999999999999999999999", "'99999999999999999999999' is not a whole number from 1 to 1000000000000000", -1 },
		{ "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 "
		  "31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 "
		  "58 59 60 61 62 63 64 65", "more than 64 sizes", -1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf why = STRBUF_INIT, got = STRBUF_INIT;
		uint64_t *sizes = NULL;
		size_t nr = 7;
		int ret = config_parse_sizes(cases[i].in, &sizes, &nr, &why);

		for (size_t j = 0; !ret && j < nr; j++)
			strbuf_addf(&got, "%s%llu", j ? " " : "", (unsigned long long)sizes[j]);
		if (ret != cases[i].ret || strcmp(ret ? why.buf : got.buf, cases[i].want) ||
		    (ret && (sizes || nr)))
			fail_msg("'%s': returned %d, got '%s'", cases[i].in, ret, ret ? why.buf : got.buf);
		free(sizes);
		strbuf_release(&why);
		strbuf_release(&got);
	}
}

static void mkdir_or_fail(const char *path)
{
	if (mkdir(path, 0700))
		fail_msg("cannot create '%s'", path);
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fclose(f);
}

static void test_config__find(void **state)
{
	char tmpl[] = "/tmp/t-config.XXXXXX";
	char *top = mkdtemp(tmpl), *found = NULL, *p;

	assert_non_null(top);
	top = realpath(top, NULL);
	assert_non_null(top);
	/* top/hotloop.conf (outside), top/repo/.git, top/repo/a/b */
	p = xstrfmt("%s/repo", top); mkdir_or_fail(p); free(p);
	p = xstrfmt("%s/repo/.git", top); mkdir_or_fail(p); free(p);
	p = xstrfmt("%s/repo/a", top); mkdir_or_fail(p); free(p);
	p = xstrfmt("%s/repo/a/b", top); mkdir_or_fail(p); free(p);
	p = xstrfmt("%s/hotloop.conf", top); touch(p); free(p);

	/* not beyond the git top level */
	p = xstrfmt("%s/repo/a/b", top);
	strbuf_reset(&errors);
	assert_int_equal(config_find(p, &found), -1);
	assert_non_null(strstr(errors.buf, "hotloop init"));

	/* the nearest one, from a subdirectory */
	free(p);
	p = xstrfmt("%s/repo/a/hotloop.conf", top); touch(p); free(p);
	p = xstrfmt("%s/repo/hotloop.conf", top); touch(p); free(p);
	p = xstrfmt("%s/repo/a/b", top);
	assert_int_equal(config_find(p, &found), 0);
	free(p);
	p = xstrfmt("%s/repo/a/hotloop.conf", top);
	assert_string_equal(found, p);
	free(found);
	free(p);
	/* at the top level itself */
	p = xstrfmt("%s/repo", top);
	assert_int_equal(config_find(p, &found), 0);
	free(p);
	p = xstrfmt("%s/repo/hotloop.conf", top);
	assert_string_equal(found, p);
	free(found);
	free(p);

	p = xstrfmt("rm -rf '%s'", top);
	assert_int_equal(system(p), 0);
	free(p);
	free(top);
}

/* Parsing never depends on a terminating NUL or reads past 'len'. */
static void test_config__unterminated_buffer(void **state)
{
	static const char text[] = "[workload \"w\"]\n\trun = ./w \xc3";
	char *buf = xmalloc(sizeof(text) - 1);
	struct config c;

	memcpy(buf, text, sizeof(text) - 1);
	strbuf_reset(&errors);
	assert_int_equal(config_parse_buf(&c, buf, sizeof(text) - 1, CONFIG_FILE), -1);
	assert_non_null(strstr(errors.buf, "hotloop.conf:2: invalid UTF-8"));
	config_release(&c);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config__cases),
		cmocka_unit_test(test_config__values),
		cmocka_unit_test(test_config__sizes),
		cmocka_unit_test(test_config__find),
		cmocka_unit_test(test_config__unterminated_buffer),
	};
	int ret;

	set_error_routine(collect);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	strbuf_release(&errors);
	return ret;
}
