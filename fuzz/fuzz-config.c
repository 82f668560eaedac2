/*
 * fuzz-config.c: libFuzzer target for hotloop.conf parsing. Each input is
 * parsed as a config; a valid one is printed both ways, and its normalized
 * text must parse again to the same JSON document (a mismatch aborts, so
 * the fuzzer reports it as a crash). Seeds: tests/data/config/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util.h"
#include "strbuf.h"
#include "config.h"

static void quiet(const char *prefix, const char *msg)
{
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf text = STRBUF_INIT;
	struct config c, again;
	json_t *a, *b;

	if (config_parse_buf(&c, (const char *)data, size, CONFIG_FILE)) {
		config_release(&c);
		return 0;
	}
	config_format(&c, &text);
	if (config_parse_buf(&again, text.buf, text.len, CONFIG_FILE)) {
		fprintf(stderr, "normalized config does not parse:\n%s", text.buf);
		abort();
	}
	a = config_to_json(&c);
	b = config_to_json(&again);
	if (!json_equal(a, b)) {
		fprintf(stderr, "normalized config reads back differently:\n%s", text.buf);
		abort();
	}
	json_decref(a);
	json_decref(b);
	config_release(&again);
	config_release(&c);
	strbuf_release(&text);
	return 0;
}
