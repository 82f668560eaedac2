/*
 * dwarf-line.c: one DWARF line table read from the bytes of .debug_line
 * (see dwarf-line.h): the header (DWARF 2-4's directory and file lists,
 * DWARF 5's entry formats), then the line number program run as the
 * standard's state machine, one row per DW_LNS_copy, special opcode and
 * DW_LNE_end_sequence. A cursor never reads past its end; a bad byte
 * anywhere makes the whole table an error.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "dwarf-cursor.h"
#include "dwarf-line.h"

/* Forms and content types of DWARF 5's entry formats, from dwarf.h. */
enum {
	F_BLOCK = 0x09, F_DATA1 = 0x0b, F_DATA2 = 0x05, F_DATA4 = 0x06, F_DATA8 = 0x07,
	F_DATA16 = 0x1e, F_STRING = 0x08, F_STRP = 0x0e, F_LINE_STRP = 0x1f, F_UDATA = 0x0f,
	F_SDATA = 0x0d,
};
enum { LNCT_PATH = 1, LNCT_DIRECTORY_INDEX = 2 };

/* More entries than this in a directory or file list is not a real table. */
#define MAX_ENTRIES (1u << 20)

/* The string at 'off' of a string section; "" and the cursor bad when there is none. */
static const char *str_at(struct dwarf_cursor *c, const unsigned char *sec, size_t size, uint64_t off)
{
	const char *s = c->bad ? NULL : dc_str_at(sec, size, off);

	if (!s) {
		c->bad = true;
		return "";
	}
	return s;
}

/* One value of a DWARF 5 entry: a string into *str, a number into *num. */
static void rd_form(struct dwarf_cursor *c, const struct dwarf_line_sections *sec, uint64_t form,
		    bool dwarf64, const char **str, uint64_t *num)
{
	*str = NULL;
	*num = 0;
	switch (form) {
	case F_STRING:
		*str = dc_str(c);
		break;
	case F_LINE_STRP:
		*str = str_at(c, sec->line_str, sec->line_str_size, dc_u(c, dwarf64 ? 8 : 4));
		break;
	case F_STRP:
		*str = str_at(c, sec->str, sec->str_size, dc_u(c, dwarf64 ? 8 : 4));
		break;
	case F_UDATA:
		*num = dc_uleb(c);
		break;
	case F_SDATA:
		*num = (uint64_t)dc_sleb(c);
		break;
	case F_DATA1:
		*num = dc_u(c, 1);
		break;
	case F_DATA2:
		*num = dc_u(c, 2);
		break;
	case F_DATA4:
		*num = dc_u(c, 4);
		break;
	case F_DATA8:
		*num = dc_u(c, 8);
		break;
	case F_DATA16:
		dc_skip(c, 16);
		break;
	case F_BLOCK:
		dc_skip(c, dc_uleb(c));
		break;
	default:
		c->bad = true;	/* strx and the rest: not in line tables we read */
		break;
	}
}

static void add_file(struct dwarf_line_table *t, const char *dir, const char *name)
{
	ALLOC_GROW(t->files, t->nr_files + 1, t->alloc_files);
	t->files[t->nr_files].dir = dir;
	t->files[t->nr_files].name = name;
	t->nr_files++;
}

/*
 * DWARF 5's directories or files: a format (content type, form pairs),
 * then the entries. Directories go to dirs[], files to t->files.
 */
static void rd_entries(struct dwarf_cursor *c, const struct dwarf_line_sections *sec, bool dwarf64,
		       struct dwarf_line_table *t, bool is_dirs, const char ***dirs, size_t *nr_dirs,
		       size_t *alloc_dirs)
{
	uint64_t fmt[2 * 16], nfmt, count;

	nfmt = dc_u(c, 1);
	if (nfmt > 16) {
		c->bad = true;
		return;
	}
	for (uint64_t i = 0; i < nfmt; i++) {
		fmt[2 * i] = dc_uleb(c);
		fmt[2 * i + 1] = dc_uleb(c);
	}
	count = dc_uleb(c);
	if (c->bad || count > MAX_ENTRIES || (count && !nfmt)) {
		c->bad = true;
		return;
	}
	for (uint64_t e = 0; e < count && !c->bad; e++) {
		const char *path = "";
		uint64_t dir = 0;

		for (uint64_t i = 0; i < nfmt; i++) {
			const char *str;
			uint64_t num;

			rd_form(c, sec, fmt[2 * i + 1], dwarf64, &str, &num);
			if (fmt[2 * i] == LNCT_PATH) {
				if (!str)
					c->bad = true;
				else
					path = str;
			} else if (fmt[2 * i] == LNCT_DIRECTORY_INDEX) {
				dir = num;
			}
		}
		if (c->bad)
			break;
		if (is_dirs) {
			ALLOC_GROW(*dirs, *nr_dirs + 1, *alloc_dirs);
			(*dirs)[(*nr_dirs)++] = path;
		} else if (dir >= *nr_dirs) {
			c->bad = true;
		} else {
			add_file(t, (*dirs)[dir], path);
		}
	}
}

void dwarf_line_reserve(struct dwarf_line_table *t, size_t nr)
{
	size_t alloc = t->alloc_rows;

	if (nr <= alloc)
		return;
	ALLOC_GROW(t->addrs, nr, alloc);
	t->rows = xrealloc(t->rows, alloc * sizeof(*t->rows));
	t->alloc_rows = alloc;
}

/*
 * Merging rows (DWARF_LINE_MERGE): 'seen' is the address of the row
 * before in the sequence, kept or not; 'pending' the last row left out,
 * when no row was kept after it.
 */
struct merge {
	bool on;
	bool backwards;		/* a sequence went back: read again without merging */
	bool in_seq;
	uint64_t seen;
	bool pending;
	uint64_t addr;
	struct dwarf_line_row row;
};

static inline void put_row(struct dwarf_line_table *t, uint64_t addr, struct dwarf_line_row row)
{
	if (t->nr_rows >= t->alloc_rows)
		dwarf_line_reserve(t, t->nr_rows + 1);
	t->addrs[t->nr_rows] = addr;
	t->rows[t->nr_rows++] = row;
}

static inline void add_row(struct dwarf_line_table *t, struct merge *m, uint64_t addr,
			   uint64_t file, int64_t line, bool end)
{
	struct dwarf_line_row r;

	r.file = end ? DWARF_LINE_END : file >= DWARF_LINE_END ? DWARF_LINE_END - 1 : (uint32_t)file;
	r.line = line < 0 || line > INT32_MAX ? 0 : (int32_t)line;
	if (m->on) {
		if (m->in_seq && addr < m->seen)
			m->backwards = true;
		/* an end at a row left out: the row sorts after it, so it stays */
		if (end && m->pending && m->addr == addr)
			put_row(t, m->addr, m->row);
		m->in_seq = !end;
		m->seen = addr;
		if (!end && t->nr_rows && t->rows[t->nr_rows - 1].file != DWARF_LINE_END) {
			struct dwarf_line_row *last = &t->rows[t->nr_rows - 1];

			/* a row at the address of the one before: that one is never the last there */
			if (t->addrs[t->nr_rows - 1] == addr) {
				*last = r;
				m->pending = false;
				return;
			}
			if (last->file == r.file && last->line == r.line) {
				m->pending = true;
				m->addr = addr;
				m->row = r;
				return;
			}
		}
		m->pending = false;
	}
	put_row(t, addr, r);
}

/* The line number program from c to its end. */
static int run_program(struct dwarf_line_table *t, struct dwarf_cursor *c, int addr_size,
		       unsigned min_insn, unsigned max_ops, int line_base, unsigned line_range,
		       unsigned opcode_base, const unsigned char *std_lengths,
		       const char **dirs, size_t nr_dirs, struct merge *m)
{
	uint64_t addr = 0, file = 1, op_index = 0;
	int64_t line = 1;
	/*
	 * What each special opcode adds to the address and the line, worked
	 * out once: most rows come from them, and the divisions of the
	 * standard's formula cost more than the rest of a row. Only without
	 * VLIW operation indices (max_ops 1), as every producer but Itanium's.
	 */
	uint32_t sp_addr[256];
	int16_t sp_line[256];

	if (max_ops == 1) {
		for (unsigned op = opcode_base; op < 256; op++) {
			unsigned adj = op - opcode_base;

			sp_addr[op] = min_insn * (adj / line_range);
			sp_line[op] = (int16_t)(line_base + (int)(adj % line_range));
		}
	}
	while (c->p < c->end && !c->bad) {
		const unsigned char *p = c->p, *end = c->end;
		unsigned op;

		/*
		 * What most of a table is, as GCC writes them (a column
		 * before nearly every row, is_stmt toggles, special opcodes
		 * and copies), run with the position in a register: through
		 * the cursor, each row stored would make it read it again.
		 */
		while (p < end) {
			op = *p;
			if (op >= opcode_base && max_ops == 1) {
				p++;
				addr += sp_addr[op];
				line += sp_line[op];
				add_row(t, m, addr, file, line, false);
			} else if (op == 5) {	/* DW_LNS_set_column */
				for (p++; p < end && (*p & 0x80); p++)
					;
				if (p++ >= end)
					return -1;
			} else if (op == 6) {	/* DW_LNS_negate_stmt */
				p++;
			} else if (op == 1) {	/* DW_LNS_copy */
				p++;
				add_row(t, m, addr, file, line, false);
			} else {
				break;
			}
		}
		c->p = p;
		if (p >= end)
			break;
		op = *c->p++;
		if (op >= opcode_base) {
			if (max_ops == 1) {
				addr += sp_addr[op];
				line += sp_line[op];
			} else {
				unsigned adj = op - opcode_base;
				uint64_t adv = adj / line_range;

				addr += min_insn * ((op_index + adv) / max_ops);
				op_index = (op_index + adv) % max_ops;
				line += line_base + (int)(adj % line_range);
			}
			add_row(t, m, addr, file, line, false);
			continue;
		}
		switch (op) {
		case 0: {	/* extended */
			uint64_t len = dc_uleb(c);
			const unsigned char *next;
			unsigned sub;

			if (c->bad || !len || len > (uint64_t)(c->end - c->p))
				return -1;
			next = c->p + len;
			sub = (unsigned)dc_u(c, 1);
			switch (sub) {
			case 1:		/* DW_LNE_end_sequence */
				add_row(t, m, addr, file, line, true);
				addr = 0;
				op_index = 0;
				file = 1;
				line = 1;
				break;
			case 2:		/* DW_LNE_set_address */
				if (len - 1 != (uint64_t)addr_size)
					return -1;
				addr = dc_u(c, (size_t)addr_size);
				op_index = 0;
				break;
			case 3: {	/* DW_LNE_define_file, DWARF 2-4 */
				struct dwarf_cursor fc = { c->p, next, c->big_endian, false };
				const char *name = dc_str(&fc);
				uint64_t dir = dc_uleb(&fc);

				if (fc.bad || dir >= nr_dirs || t->version >= 5)
					return -1;
				add_file(t, dirs[dir], name);
				break;
			}
			default:	/* DW_LNE_set_discriminator and the rest */
				break;
			}
			if (c->bad)
				return -1;
			c->p = next;
			break;
		}
		case 1:		/* DW_LNS_copy */
			add_row(t, m, addr, file, line, false);
			break;
		case 2: {	/* DW_LNS_advance_pc */
			uint64_t adv = dc_uleb(c);

			addr += min_insn * ((op_index + adv) / max_ops);
			op_index = (op_index + adv) % max_ops;
			break;
		}
		case 3: {	/* DW_LNS_advance_line */
			int64_t adv = dc_sleb(c);

			/* line stays within +-2^32 (below), so this cannot overflow */
			if (adv > (int64_t)INT32_MAX * 4 || adv < -(int64_t)INT32_MAX * 4)
				return -1;
			line += adv;
			break;
		}
		case 4:		/* DW_LNS_set_file */
			file = dc_uleb(c);
			break;
		case 5:		/* DW_LNS_set_column */
			dc_uleb(c);
			break;
		case 6:		/* DW_LNS_negate_stmt */
		case 7:		/* DW_LNS_set_basic_block */
		case 10:	/* DW_LNS_set_prologue_end */
		case 11:	/* DW_LNS_set_epilogue_begin */
			break;
		case 8: {	/* DW_LNS_const_add_pc */
			uint64_t adv = (255 - opcode_base) / line_range;

			addr += min_insn * ((op_index + adv) / max_ops);
			op_index = (op_index + adv) % max_ops;
			break;
		}
		case 9:		/* DW_LNS_fixed_advance_pc */
			addr += dc_u(c, 2);
			op_index = 0;
			break;
		case 12:	/* DW_LNS_set_isa */
			dc_uleb(c);
			break;
		default:	/* an opcode of a later standard: skip its operands */
			for (unsigned i = 0; i < std_lengths[op - 1]; i++)
				dc_uleb(c);
			break;
		}
		/* a line that runs far out of range is not a real table */
		if (line < -(int64_t)INT32_MAX || line > (int64_t)INT32_MAX * 2)
			return -1;
	}
	if (c->bad)
		return -1;
	/* the table's last row is kept: the caller makes it the unit's end */
	if (m->pending)
		put_row(t, m->addr, m->row);
	return 0;
}

int dwarf_line_read(struct dwarf_line_table *t, const struct dwarf_line_sections *sec,
		    uint64_t offset, int addr_size, unsigned flags)
{
	struct merge m = { .on = flags & DWARF_LINE_MERGE };
	size_t nr_files;
	struct dwarf_cursor c = { 0 }, hc;
	uint64_t unit_len, header_len;
	const unsigned char *unit_end, *program;
	/* the operand counts of the standard opcodes this reader runs */
	static const unsigned char want[13] = { 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	const unsigned char *std_lengths;
	unsigned min_insn, max_ops = 1, line_range, opcode_base;
	bool dwarf64 = false;
	int line_base, ret = -1;
	const char **dirs = NULL;
	size_t nr_dirs = 0, alloc_dirs = 0;

	t->version = 0;
	t->merged = false;
	t->nr_files = t->nr_rows = 0;
	if (!sec->line || offset >= sec->line_size || (addr_size != 4 && addr_size != 8))
		return -1;
	c.p = sec->line + offset;
	c.end = sec->line + sec->line_size;
	c.big_endian = sec->big_endian;
	unit_len = dc_u(&c, 4);
	if (unit_len == 0xffffffff) {
		dwarf64 = true;
		unit_len = dc_u(&c, 8);
	} else if (unit_len >= 0xfffffff0) {
		return -1;
	}
	if (c.bad || unit_len > (uint64_t)(c.end - c.p))
		return -1;
	unit_end = c.p + unit_len;
	c.end = unit_end;
	t->version = (int)dc_u(&c, 2);
	if (t->version < 2 || t->version > 5)
		goto out;
	if (t->version >= 5) {
		int as = (int)dc_u(&c, 1);

		if (dc_u(&c, 1) || as != addr_size)	/* segment selectors: none */
			goto out;
	}
	header_len = dc_u(&c, dwarf64 ? 8 : 4);
	if (c.bad || header_len > (uint64_t)(c.end - c.p))
		goto out;
	program = c.p + header_len;
	hc = c;
	hc.end = program;
	min_insn = (unsigned)dc_u(&hc, 1);
	if (t->version >= 4)
		max_ops = (unsigned)dc_u(&hc, 1);
	dc_u(&hc, 1);	/* default_is_stmt: every row counts, as for addr2line */
	line_base = (int)(int8_t)dc_u(&hc, 1);
	line_range = (unsigned)dc_u(&hc, 1);
	opcode_base = (unsigned)dc_u(&hc, 1);
	if (hc.bad || !line_range || !max_ops || !opcode_base || (size_t)(hc.end - hc.p) < opcode_base - 1)
		goto out;
	std_lengths = hc.p;
	hc.p += opcode_base - 1;
	for (unsigned op = 1; op < opcode_base && op < 13; op++)
		if (std_lengths[op - 1] != want[op])
			goto out;
	if (t->version >= 5) {
		rd_entries(&hc, sec, dwarf64, t, true, &dirs, &nr_dirs, &alloc_dirs);
		rd_entries(&hc, sec, dwarf64, t, false, &dirs, &nr_dirs, &alloc_dirs);
	} else {
		ALLOC_GROW(dirs, nr_dirs + 1, alloc_dirs);
		dirs[nr_dirs++] = "";	/* directory 0: the compilation directory */
		add_file(t, "", "");	/* file 0: none */
		for (;;) {
			const char *d = dc_str(&hc);

			if (hc.bad || !*d)
				break;
			if (nr_dirs >= MAX_ENTRIES)
				goto out;
			ALLOC_GROW(dirs, nr_dirs + 1, alloc_dirs);
			dirs[nr_dirs++] = d;
		}
		for (;;) {
			const char *name = dc_str(&hc);
			uint64_t dir;

			if (hc.bad || !*name)
				break;
			dir = dc_uleb(&hc);
			dc_uleb(&hc);	/* mtime */
			dc_uleb(&hc);	/* length */
			if (hc.bad || dir >= nr_dirs || t->nr_files >= MAX_ENTRIES)
				goto out;
			add_file(t, dirs[dir], name);
		}
	}
	if (hc.bad)
		goto out;
	c.p = program;
	/* a row takes a byte of the program at least; most take three or four */
	dwarf_line_reserve(t, (size_t)(c.end - program) < (4u << 20) ?
			      (size_t)(c.end - program) / 2 + 16 : (2u << 20));
	nr_files = t->nr_files;
	if (run_program(t, &c, addr_size, min_insn, max_ops, line_base, line_range,
			opcode_base, std_lengths, dirs, nr_dirs, &m))
		goto out;
	if (m.backwards) {
		/* merging is only right for ascending sequences: all rows then */
		t->nr_rows = 0;
		t->nr_files = nr_files;
		c.p = program;
		m = (struct merge){ .on = false };
		if (run_program(t, &c, addr_size, min_insn, max_ops, line_base, line_range,
				opcode_base, std_lengths, dirs, nr_dirs, &m))
			goto out;
	}
	t->merged = m.on;
	ret = 0;
out:
	free(dirs);
	if (ret)
		t->nr_files = t->nr_rows = 0;
	return ret;
}

size_t dwarf_line_detach_rows(struct dwarf_line_table *t, uint64_t **addrs,
			      struct dwarf_line_row **rows)
{
	size_t n = t->nr_rows;

	*addrs = xrealloc(t->addrs, (n ? n : 1) * sizeof(**addrs));
	*rows = xrealloc(t->rows, (n ? n : 1) * sizeof(**rows));
	t->addrs = NULL;
	t->rows = NULL;
	t->nr_rows = t->alloc_rows = 0;
	return n;
}

void dwarf_line_table_release(struct dwarf_line_table *t)
{
	free(t->files);
	free(t->addrs);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
