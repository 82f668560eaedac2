/*
 * dwarf-info.h: a reader of the DIE trees of .debug_info (DWARF 2 to 5)
 * straight from the section bytes, for what symbolizing needs: a unit's
 * functions and inlined calls with their address ranges and call sites,
 * and a function's names through its abstract origin and specification.
 * lib/symbolize walks each unit with it instead of libdw's dwarf_child(),
 * dwarf_siblingof() and dwarf_ranges(), one call per DIE, which was most
 * of the time of symbolizing a program of many units. It answers as libdw
 * does; the bytes are outside input: every length, offset and index is
 * checked, and anything it does not read (a form, a layout, a reference
 * into another file) is an error, so the caller can ask libdw instead.
 *
 * A struct dwarf_info owns its tables (unit headers, abbreviations); the
 * sections must outlive it, and so must the names it gives, which point
 * into them.
 */
#ifndef HOTLOOP_DWARF_INFO_H
#define HOTLOOP_DWARF_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindex.h"

enum dwarf_info_section {
	DWARF_INFO, DWARF_ABBREV, DWARF_STR, DWARF_LINE_STR, DWARF_STR_OFFSETS,
	DWARF_ADDR, DWARF_RANGES, DWARF_RNGLISTS,
	DWARF_NR_SECTIONS
};

/* The sections DIEs refer to; a missing one is { NULL, 0 }. */
struct dwarf_info_sections {
	const unsigned char *data[DWARF_NR_SECTIONS];
	size_t size[DWARF_NR_SECTIONS];
	bool big_endian;	/* the file's byte order */
};

#define DWARF_INFO_NONE UINT32_MAX
/* A scope's DW_AT_abstract_origin that this reader cannot follow (another file). */
#define DWARF_INFO_FOREIGN UINT64_MAX

/* A function (DW_TAG_subprogram, DW_TAG_entry_point) or an inlined call, with code. */
struct dwarf_info_scope {
	uint64_t die;		/* its offset in .debug_info */
	uint64_t origin;	/* DW_AT_abstract_origin's DIE, 0 none, else DWARF_INFO_FOREIGN */
	uint64_t call_file;	/* DW_AT_call_file, UINT64_MAX when none */
	int32_t call_line;	/* DW_AT_call_line, 0 when none */
	uint32_t parent;	/* the scope an inlined call is in, DWARF_INFO_NONE at the top */
	bool inlined;		/* DW_TAG_inlined_subroutine */
};

/* One address range [lo, hi) of a scope. */
struct dwarf_info_range {
	uint64_t lo, hi;
	uint32_t scope;		/* index into scopes[] */
	uint32_t depth;		/* DIE nesting: the unit DIE's children are 0 */
};

/*
 * A unit's scopes in the order of their DIEs, each before those inside it,
 * and their ranges, a scope's in the order its DIE lists them.
 */
struct dwarf_info_scopes {
	struct dwarf_info_scope *scopes;
	size_t nr_scopes, alloc_scopes;
	struct dwarf_info_range *ranges;
	size_t nr_ranges, alloc_ranges;
};

/* A function's names, as the DIE and those it refers to give them. */
struct dwarf_info_names {
	const char *name;		/* DW_AT_name, NULL when none */
	const char *linkage_name;	/* DW_AT_linkage_name (or the MIPS one), NULL when none */
	int decl_line;			/* DW_AT_decl_line, 0 when none */
};

struct dwarf_info_unit;
struct dwarf_info_abbrevs;

struct dwarf_info {
	struct dwarf_info_sections sec;
	struct dwarf_info_unit *units;	/* every unit header of .debug_info, by offset */
	size_t nr_units, alloc_units;
	bool units_read;
	struct dwarf_info_abbrevs *tables;	/* decoded abbreviation tables */
	size_t nr_tables, alloc_tables;
	struct hindex table_index;	/* by offset, address and offset size */
	uint64_t abbrev_attrs;		/* decoded in all tables, to keep them bounded */
	uint32_t *stack;		/* the walk's, reused */
	size_t alloc_stack;
};

void dwarf_info_init(struct dwarf_info *di, const struct dwarf_info_sections *sec);
void dwarf_info_release(struct dwarf_info *di);

/*
 * The offset of the DIE of the i-th unit of .debug_info (0 on), as the
 * unit headers give them, into *die: 0, or -1 past the last unit.
 */
int dwarf_info_unit_die(struct dwarf_info *di, size_t i, uint64_t *die);

/*
 * The scopes of the unit whose DIE is at 'unit_die' (the offset libdw's
 * dwarf_dieoffset() gives), as lib/symbolize collects them: the DIEs that
 * may hold code (functions, inlined calls, lexical blocks, namespaces and,
 * unless 'skip_types', classes, structures and unions) are entered, a
 * function or inlined call only when it has code, the rest is skipped.
 * A range starting at 0 (code the linker discarded) or empty is left out.
 * Into 'out', its arrays reused (one unit after another into one struct).
 * 0, or -1 (quietly: the caller decides what to say) with 'out' emptied.
 */
int dwarf_info_scopes(struct dwarf_info *di, uint64_t unit_die, bool skip_types,
		      struct dwarf_info_scopes *out);

void dwarf_info_scopes_release(struct dwarf_info_scopes *s);

/*
 * The names of the DIE at 'die', as libdw's dwarf_attr_integrate() finds
 * each: on the DIE, else on the one its DW_AT_abstract_origin (else
 * DW_AT_specification) names, and so on, at most 17 DIEs. 0, or -1 when
 * the DIE or one it refers to cannot be read here.
 */
int dwarf_info_names(struct dwarf_info *di, uint64_t die, struct dwarf_info_names *out);

#endif
