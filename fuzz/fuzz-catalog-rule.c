/*
 * fuzz-catalog-rule.c: libFuzzer target for the catalog's entry reader
 * (catalog-rule.c). Each input is read as an entry; one that reads must
 * have an id, a message, a language and a rule, and free cleanly; one
 * that does not must have said why. Seeds: the shipped catalog (seed-catalog-rule.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "catalog-rule.h"

static int errors;

static void count_error(const char *prefix, const char *msg)
{
	errors++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	set_error_routine(count_error);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cat_entry e;

	errors = 0;
	if (cat_entry_parse(&e, "fuzz.json", (const char *)data, size)) {
		if (!errors) {
			fprintf(stderr, "an entry failed without an error\n");
			abort();
		}
		return 0;
	}
	if (!e.id || !e.message || !(e.lang[CAT_LANG_C] || e.lang[CAT_LANG_CPP]) ||
	    !(e.confidence >= 0 && e.confidence <= 1)) {
		fprintf(stderr, "an entry read without its required fields\n");
		abort();
	}
	cat_entry_release(&e);
	return 0;
}
