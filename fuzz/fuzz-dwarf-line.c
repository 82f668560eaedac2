/*
 * fuzz-dwarf-line.c: libFuzzer target for lib/dwarf-line, the reader of
 * DWARF line tables from section bytes. The first byte picks the address
 * size and byte order; the rest is .debug_line, and also .debug_line_str
 * and .debug_str (so DWARF 5's string forms point somewhere). Every input
 * must give an error or rows whose files exist; anything else (a crash, a
 * sanitizer report, a leak) is a bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util.h"
#include "dwarf-line.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_line_sections sec = { 0 };
	struct dwarf_line_table t = DWARF_LINE_TABLE_INIT;

	if (!size)
		return 0;
	sec.big_endian = data[0] & 2;
	sec.line = sec.line_str = sec.str = data + 1;
	sec.line_size = sec.line_str_size = sec.str_size = size - 1;
	/* twice into one table (the arrays are reused), rows merged once */
	for (int round = 0; round < 2; round++) {
		if (dwarf_line_read(&t, &sec, 0, (data[0] & 1) ? 8 : 4, round ? 0 : DWARF_LINE_MERGE))
			continue;
		for (size_t i = 0; i < t.nr_files; i++)
			if (strlen(t.files[i].dir) > size || strlen(t.files[i].name) > size)
				BUG("a file name runs past the input");
		for (size_t i = 0; i < t.nr_rows; i++) {
			if (t.rows[i].line < 0)
				BUG("a negative line");
			if (t.addrs[i] == 1 && t.rows[i].file == 0 && t.rows[i].line == INT32_MIN)
				BUG("cannot be");	/* reads every row's three fields */
		}
	}
	dwarf_line_table_release(&t);
	return 0;
}
