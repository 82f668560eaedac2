/*
 * dwarf-line.h: a reader of one DWARF line table (.debug_line, versions 2
 * to 5) straight from the section bytes: its file names and its rows, in
 * the program's order. lib/symbolize reads every unit's table with it
 * instead of libdw's dwarf_getsrclines(), which builds a linked list of
 * rows and sorts them, most of the time of symbolizing a program of many
 * units. The bytes are outside input: every length, offset and index is
 * checked, and anything it does not know (a form, a layout) is an error,
 * so the caller can fall back to libdw.
 *
 * A struct dwarf_line_table owns its arrays; the file names point into the
 * sections given, which must outlive it.
 */
#ifndef HOTLOOP_DWARF_LINE_H
#define HOTLOOP_DWARF_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sections a line table refers to; a missing one is { NULL, 0 }. */
struct dwarf_line_sections {
	const unsigned char *line, *line_str, *str;
	size_t line_size, line_str_size, str_size;
	bool big_endian;	/* the file's byte order */
};

/* A row's file that marks DW_LNE_end_sequence: the first address past a sequence. */
#define DWARF_LINE_END UINT32_MAX

/* What a row says; its address is the same index of addrs[]. */
struct dwarf_line_row {
	int32_t line;
	uint32_t file;		/* index into files[] (at most UINT32_MAX - 1), or DWARF_LINE_END */
};

/*
 * A file: its directory (as the table names it, "" for DWARF 2-4's
 * directory 0, the compilation directory) and its name. Index i is what
 * rows and DW_AT_call_file say: DWARF 5 counts from 0, earlier versions
 * from 1 (files[0] is then { "", "" }).
 */
struct dwarf_line_file {
	const char *dir, *name;
};

/*
 * The rows in two arrays, as a binary search over addresses wants them:
 * lib/symbolize keeps them as they are when they are in order.
 */
struct dwarf_line_table {
	int version;
	struct dwarf_line_file *files;
	size_t nr_files, alloc_files;
	uint64_t *addrs;
	struct dwarf_line_row *rows;
	size_t nr_rows, alloc_rows;
	bool merged;		/* read with DWARF_LINE_MERGE: rows may be left out */
};

#define DWARF_LINE_TABLE_INIT { 0 }

/*
 * With DWARF_LINE_MERGE rows a lookup of the last row at or before an
 * address never answers with are left out: a row followed by one at its
 * address (GCC writes a row per view) is replaced by it, and a row that
 * says what the row kept before it says (same file and line, neither an
 * end of sequence) is not kept, but for the table's last row, and only
 * when every sequence's addresses ascend (else the table is read again
 * with all its rows; 'merged' says which). The answers are the same as
 * long as no two sequences overlap, which the caller checks (and reads
 * again without the flag when they do).
 */
#define DWARF_LINE_MERGE 1u

/*
 * Read the table at 'offset' of .debug_line, for a unit whose addresses are
 * 'addr_size' bytes (4 or 8), into t (its arrays are reused: read one
 * table after another into the same struct). 0, or -1 (quietly: the caller
 * decides what to say) with the table emptied.
 */
int dwarf_line_read(struct dwarf_line_table *t, const struct dwarf_line_sections *sec,
		    uint64_t offset, int addr_size, unsigned flags);

/*
 * Make room for 'nr' rows (the table's arrays grow together). The next
 * dwarf_line_read() reserves as many rows as its program has bytes, at
 * most, before it runs it.
 */
void dwarf_line_reserve(struct dwarf_line_table *t, size_t nr);

/*
 * Hand the rows over: *addrs and *rows (the caller's to free, trimmed to
 * their size) and their count; the table keeps its files and reads the
 * next table into new arrays.
 */
size_t dwarf_line_detach_rows(struct dwarf_line_table *t, uint64_t **addrs,
			      struct dwarf_line_row **rows);

void dwarf_line_table_release(struct dwarf_line_table *t);

#endif
