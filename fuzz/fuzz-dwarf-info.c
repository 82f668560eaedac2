/*
 * fuzz-dwarf-info.c: libFuzzer target for lib/dwarf-info, the reader of
 * the DIE trees of .debug_info from section bytes. The input is the
 * sections: a byte of flags (1 big endian, 2 C unit: types skipped), the
 * lengths of .debug_abbrev, .debug_str, .debug_line_str,
 * .debug_str_offsets, .debug_addr, .debug_ranges and .debug_rnglists
 * (16-bit, little endian), those sections one after another, and the
 * rest .debug_info. Every unit is walked and every scope's names read, and
 * names of other offsets too: each must give an error or answers that
 * hold together (ranges of scopes that exist, nonempty, not at 0; parents
 * before their children; names inside the input); anything else (a
 * crash, a sanitizer report, a leak) is a bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util.h"
#include "dwarf-info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int order[] = {
	DWARF_ABBREV, DWARF_STR, DWARF_LINE_STR, DWARF_STR_OFFSETS, DWARF_ADDR,
	DWARF_RANGES, DWARF_RNGLISTS,
};

#define HEADER (1 + 2 * ARRAY_SIZE(order))

static void check_name(const char *s, const uint8_t *data, size_t size)
{
	if (s && ((const uint8_t *)s < data || (const uint8_t *)s + strlen(s) >= data + size))
		BUG("a name outside the input");
}

static void names_of(struct dwarf_info *di, uint64_t die, const uint8_t *data, size_t size)
{
	struct dwarf_info_names n;

	if (dwarf_info_names(di, die, &n))
		return;
	check_name(n.name, data, size);
	check_name(n.linkage_name, data, size);
	if (n.decl_line < 0)
		BUG("a negative line");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_info_sections sec = { 0 };
	struct dwarf_info_scopes s = { 0 };
	struct dwarf_info di;
	const uint8_t *p = data + HEADER;
	size_t left, unit;
	uint64_t die;

	if (size < HEADER)
		return 0;
	left = size - HEADER;
	sec.big_endian = data[0] & 1;
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		size_t len = (size_t)data[1 + 2 * i] | (size_t)data[2 + 2 * i] << 8;

		if (len > left)
			len = left;
		sec.data[order[i]] = len ? p : NULL;
		sec.size[order[i]] = len;
		p += len;
		left -= len;
	}
	sec.data[DWARF_INFO] = left ? p : NULL;
	sec.size[DWARF_INFO] = left;

	dwarf_info_init(&di, &sec);
	/* twice: the second walk of a unit reuses the tables and the arrays */
	for (int round = 0; round < 2; round++) {
		for (unit = 0; unit < 64 && !dwarf_info_unit_die(&di, unit, &die); unit++) {
			if (dwarf_info_scopes(&di, die, data[0] & 2, &s))
				continue;
			for (size_t k = 0; k < s.nr_ranges; k++) {
				if (s.ranges[k].scope >= s.nr_scopes)
					BUG("a range of no scope");
				if (!s.ranges[k].lo || s.ranges[k].hi <= s.ranges[k].lo)
					BUG("an empty range");
			}
			for (size_t k = 0; k < s.nr_scopes; k++) {
				if (s.scopes[k].parent != DWARF_INFO_NONE && s.scopes[k].parent >= k)
					BUG("a parent after its child");
				if (round)
					continue;
				names_of(&di, s.scopes[k].die, data, size);
				if (s.scopes[k].origin && s.scopes[k].origin != DWARF_INFO_FOREIGN)
					names_of(&di, s.scopes[k].origin, data, size);
			}
		}
	}
	/* and names of offsets that may be no DIE's */
	for (uint64_t off = 0; off < sec.size[DWARF_INFO] && off < 4096; off += 1 + off / 16)
		names_of(&di, off, data, size);
	dwarf_info_scopes_release(&s);
	dwarf_info_release(&di);
	return 0;
}
