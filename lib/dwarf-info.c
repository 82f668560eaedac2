/*
 * dwarf-info.c: the DIE trees of .debug_info read from the section bytes
 * (see dwarf-info.h). The unit headers are read once; a unit's
 * abbreviation table is decoded once into an array indexed by code, each
 * abbreviation knowing what the walk does with its tag and how long its
 * attributes are when every form has a fixed size. A walk is one pass over
 * a unit's DIEs with a stack of the scopes it is in; a subtree it does not
 * enter is jumped over by DW_AT_sibling, or read through. Where libdw has
 * a rule (which attribute wins, what a form means), the rule is libdw's.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "hindex.h"
#include "intern.h"
#include "dwarf-cursor.h"
#include "dwarf-info.h"

/* As lib/symbolize: nesting deeper than this is not a real program's. */
#define MAX_DEPTH 256
/* dwarf_attr_integrate() looks at this many DIEs. */
#define MAX_CHAIN 17
/* More ranges than this in a unit is not a real program's (96 MiB of them). */
#define MAX_RANGES (4u << 20)

/* What a walk does with a DIE, by its tag. */
enum { K_SKIP, K_FUNC, K_INLINED, K_BLOCK, K_TYPE };

/* Attribute names the reader looks at; any other is A_OTHER. */
enum {
	A_OTHER, A_SIBLING, A_LOW_PC, A_HIGH_PC, A_RANGES, A_ORIGIN, A_SPECIFICATION,
	A_CALL_FILE, A_CALL_LINE, A_NAME, A_LINKAGE_NAME, A_MIPS_LINKAGE_NAME,
	A_DECL_LINE, A_ENTRY_PC, A_ADDR_BASE, A_GNU_ADDR_BASE, A_STR_OFFSETS_BASE,
	A_RNGLISTS_BASE, A_NR
};

struct abbrev_attr {
	int64_t implicit;	/* DW_FORM_implicit_const's value */
	uint16_t form;
	uint8_t name;		/* A_* */
	int8_t size;		/* the value's bytes when fixed, -1 when the value says */
};

struct abbrev {
	uint32_t first, nr;	/* its attributes: attrs[first .. first + nr) */
	int32_t fixed;		/* the bytes of all its values when each is fixed, else -1 */
	uint8_t kind;		/* K_* */
	bool children;
	bool sibling;		/* it has DW_AT_sibling */
	bool valid;		/* in by_code[]: a code the table defines */
};

/*
 * One abbreviation table, decoded for units of one address size, offset
 * size and version class (a fixed size depends on them), by code: the
 * walk finds a DIE's abbreviation with one load.
 */
struct dwarf_info_abbrevs {
	uint64_t off;
	uint8_t addr_size, offset_size;
	bool v2;
	bool bad;
	struct abbrev *v;
	size_t nr, alloc;
	struct abbrev_attr *attrs;
	size_t nr_attrs, alloc_attrs;
	struct abbrev *by_code;
	size_t nr_by_code;
};

struct dwarf_info_unit {
	uint64_t off, end, die;	/* its header, the first byte past it, its DIE */
	uint64_t abbrev_off;
	uint16_t version;
	uint8_t unit_type, addr_size, offset_size;
	int8_t state;		/* 0 its DIE not read yet, 1 ready, -1 unreadable */
	uint32_t table;		/* index into di->tables */
	/* from the unit's DIE, as libdw reads them */
	uint64_t base;		/* base address of its range lists */
	uint64_t addr_base, str_offsets_base, rnglists_base;
	bool has_str_offsets_base;
};

/* One attribute value as its form gives it. */
struct val {
	uint64_t u;		/* number, offset or index */
	const char *str;	/* DW_FORM_string's */
	unsigned form;
};

static uint8_t attr_id(uint64_t name)
{
	switch (name) {
	case DW_AT_sibling: return A_SIBLING;
	case DW_AT_low_pc: return A_LOW_PC;
	case DW_AT_high_pc: return A_HIGH_PC;
	case DW_AT_ranges: return A_RANGES;
	case DW_AT_abstract_origin: return A_ORIGIN;
	case DW_AT_specification: return A_SPECIFICATION;
	case DW_AT_call_file: return A_CALL_FILE;
	case DW_AT_call_line: return A_CALL_LINE;
	case DW_AT_name: return A_NAME;
	case DW_AT_linkage_name: return A_LINKAGE_NAME;
	case DW_AT_MIPS_linkage_name: return A_MIPS_LINKAGE_NAME;
	case DW_AT_decl_line: return A_DECL_LINE;
	case DW_AT_entry_pc: return A_ENTRY_PC;
	case DW_AT_addr_base: return A_ADDR_BASE;
	case DW_AT_GNU_addr_base: return A_GNU_ADDR_BASE;
	case DW_AT_str_offsets_base: return A_STR_OFFSETS_BASE;
	case DW_AT_rnglists_base: return A_RNGLISTS_BASE;
	default: return A_OTHER;
	}
}

static uint8_t tag_kind(uint64_t tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_entry_point:
		return K_FUNC;
	case DW_TAG_inlined_subroutine:
		return K_INLINED;
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
	case DW_TAG_namespace:
	case DW_TAG_module:
		return K_BLOCK;
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_interface_type:
		return K_TYPE;
	default:
		return K_SKIP;
	}
}

/* A form's value size when it is fixed, -1 when the value says, -2 for a form not known here. */
static int form_size(uint64_t form, unsigned addr_size, unsigned offset_size, bool v2)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag:
	case DW_FORM_strx1: case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3: case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_ref_sup4:
	case DW_FORM_strx4: case DW_FORM_addrx4:
		return 4;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return (int)addr_size;
	case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset:
	case DW_FORM_strp_sup: case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
		return (int)offset_size;
	case DW_FORM_ref_addr:
		return (int)(v2 ? addr_size : offset_size);
	case DW_FORM_block: case DW_FORM_block1: case DW_FORM_block2: case DW_FORM_block4:
	case DW_FORM_exprloc: case DW_FORM_string: case DW_FORM_sdata: case DW_FORM_udata:
	case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx: case DW_FORM_loclistx:
	case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
	case DW_FORM_indirect:
		return -1;
	default:
		return -2;
	}
}

/* ---- unit headers ---- */

static void read_units(struct dwarf_info *di)
{
	const unsigned char *info = di->sec.data[DWARF_INFO];
	size_t size = di->sec.size[DWARF_INFO];
	uint64_t off = 0;

	di->units_read = true;
	while (info && off < size) {
		struct dwarf_cursor c = { info + off, info + size, di->sec.big_endian, false };
		struct dwarf_info_unit u = { 0 };
		uint64_t len = dc_u(&c, 4);

		u.offset_size = 4;
		if (len == 0xffffffff) {
			len = dc_u(&c, 8);
			u.offset_size = 8;
		} else if (len >= 0xfffffff0) {
			break;
		}
		if (c.bad || len > (uint64_t)(c.end - c.p))
			break;
		u.off = off;
		u.end = (uint64_t)(c.p - info) + len;
		c.end = c.p + len;
		u.version = (uint16_t)dc_u(&c, 2);
		if (u.version >= 5) {
			u.unit_type = (uint8_t)dc_u(&c, 1);
			u.addr_size = (uint8_t)dc_u(&c, 1);
			u.abbrev_off = dc_u(&c, u.offset_size);
			if (u.unit_type == DW_UT_type || u.unit_type == DW_UT_split_type)
				dc_skip(&c, 8 + u.offset_size);
			else if (u.unit_type == DW_UT_skeleton || u.unit_type == DW_UT_split_compile)
				dc_skip(&c, 8);
		} else {
			u.unit_type = DW_UT_compile;
			u.abbrev_off = dc_u(&c, u.offset_size);
			u.addr_size = (uint8_t)dc_u(&c, 1);
		}
		u.die = (uint64_t)(c.p - info);
		if (c.bad || u.version < 2 || u.version > 5 || (u.addr_size != 4 && u.addr_size != 8))
			u.state = -1;	/* its extent is known: the next unit still is */
		ALLOC_GROW(di->units, di->nr_units + 1, di->alloc_units);
		di->units[di->nr_units++] = u;
		off = u.end;
	}
}

/* The unit that holds the DIE at 'die' (past its header). */
static struct dwarf_info_unit *unit_of(struct dwarf_info *di, uint64_t die)
{
	size_t lo = 0, hi;

	if (!di->units_read)
		read_units(di);
	hi = di->nr_units;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (di->units[mid].off <= die)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || die < di->units[lo - 1].die || die >= di->units[lo - 1].end)
		return NULL;
	return &di->units[lo - 1];
}

int dwarf_info_unit_die(struct dwarf_info *di, size_t i, uint64_t *die)
{
	if (!di->units_read)
		read_units(di);
	if (i >= di->nr_units)
		return -1;
	*die = di->units[i].die;
	return 0;
}

/* ---- abbreviation tables ---- */

static void abbrevs_release(struct dwarf_info_abbrevs *t)
{
	free(t->v);
	free(t->attrs);
	free(t->by_code);
}

/* Decode the table at t->off; t->bad when it cannot be. */
static void abbrevs_read(struct dwarf_info *di, struct dwarf_info_abbrevs *t)
{
	const unsigned char *sec = di->sec.data[DWARF_ABBREV];
	size_t size = di->sec.size[DWARF_ABBREV];
	struct dwarf_cursor c = { NULL, NULL, di->sec.big_endian, false };
	uint64_t *codes = NULL, max_code = 0;
	size_t alloc_codes = 0;

	t->bad = true;
	if (!sec || t->off >= size)
		return;
	c.p = sec + t->off;
	c.end = sec + size;
	for (;;) {
		uint64_t code = dc_uleb(&c), tag;
		struct abbrev *a;
		int64_t fixed = 0;

		if (c.bad)
			goto out;
		if (!code)
			break;
		tag = dc_uleb(&c);
		ALLOC_GROW(t->v, t->nr + 1, t->alloc);
		ALLOC_GROW(codes, t->nr + 1, alloc_codes);
		a = &t->v[t->nr];
		codes[t->nr++] = code;
		if (code > max_code)
			max_code = code;
		memset(a, 0, sizeof(*a));
		a->kind = tag_kind(tag);
		a->children = dc_u(&c, 1) != 0;
		a->first = (uint32_t)t->nr_attrs;
		for (;;) {
			uint64_t name = dc_uleb(&c), form = dc_uleb(&c);
			struct abbrev_attr *at;
			int sz;

			/*
			 * An attribute takes two bytes at least: tables that
			 * decode far more than the section holds overlap (units
			 * naming offsets inside one another), time without end.
			 */
			if (c.bad || t->nr_attrs >= UINT32_MAX - 1 ||
			    ++di->abbrev_attrs > 8 * (uint64_t)size + 4096)
				goto out;
			if (!name && !form)
				break;
			sz = form_size(form, t->addr_size, t->offset_size, t->v2);
			if (sz == -2)
				goto out;	/* a form it does not know: nothing can be skipped */
			ALLOC_GROW(t->attrs, t->nr_attrs + 1, t->alloc_attrs);
			at = &t->attrs[t->nr_attrs++];
			at->form = (uint16_t)form;
			at->name = attr_id(name);
			at->size = (int8_t)sz;
			at->implicit = form == DW_FORM_implicit_const ? dc_sleb(&c) : 0;
			if (at->name == A_SIBLING)
				a->sibling = true;
			if (sz < 0 || fixed < 0)
				fixed = -1;
			else
				fixed += sz;
		}
		a->nr = (uint32_t)(t->nr_attrs - a->first);
		a->fixed = fixed > INT32_MAX ? -1 : (int32_t)fixed;
	}
	/* codes are small and dense (1, 2, ...) in what compilers write */
	if (max_code >= (uint64_t)t->nr * 4 + 1024)
		goto out;
	t->nr_by_code = (size_t)max_code + 1;
	t->by_code = xcalloc(t->nr_by_code, sizeof(*t->by_code));
	for (size_t i = 0; i < t->nr; i++) {
		/* the first of two with one code, as libdw's hash keeps it */
		if (!t->by_code[codes[i]].valid) {
			t->by_code[codes[i]] = t->v[i];
			t->by_code[codes[i]].valid = true;
		}
	}
	free(t->v);
	t->v = NULL;
	t->nr = t->alloc = 0;
	t->bad = false;
out:
	free(codes);
}

static bool abbrevs_eq(const void *table, size_t i, const void *key)
{
	const struct dwarf_info_abbrevs *a = &((const struct dwarf_info_abbrevs *)table)[i], *b = key;

	return a->off == b->off && a->addr_size == b->addr_size &&
	       a->offset_size == b->offset_size && a->v2 == b->v2;
}

static uint64_t abbrevs_hash(const struct dwarf_info_abbrevs *k)
{
	return hash_u64(hash_u64(HASH_SEED, k->off),
			(uint64_t)k->addr_size << 16 | (uint64_t)k->offset_size << 8 | k->v2);
}

static inline const struct abbrev *abbrev_find(const struct dwarf_info_abbrevs *t, uint64_t code)
{
	if (code >= t->nr_by_code || !t->by_code[code].valid)
		return NULL;
	return &t->by_code[code];
}

/* ---- values ---- */

/* The value of one attribute at the cursor, of form 'form'. */
static void read_val(struct dwarf_cursor *c, const struct dwarf_info_unit *u,
		     const struct abbrev_attr *at, struct val *v)
{
	unsigned form = at->form;
	int sz = at->size;

	v->str = NULL;
	v->u = 0;
	if (form == DW_FORM_indirect) {
		uint64_t f = dc_uleb(c);

		sz = form_size(f, u->addr_size, u->offset_size, u->version == 2);
		if (f == DW_FORM_indirect || f == DW_FORM_implicit_const || sz == -2) {
			c->bad = true;
			return;
		}
		form = (unsigned)f;
	}
	v->form = form;
	if (sz >= 0) {
		if (form == DW_FORM_implicit_const)
			v->u = (uint64_t)at->implicit;
		else if (sz <= 8)
			v->u = dc_u(c, (size_t)sz);
		else
			dc_skip(c, (uint64_t)sz);
		return;
	}
	switch (form) {
	case DW_FORM_string:
		v->str = dc_str(c);
		break;
	case DW_FORM_sdata:
		v->u = (uint64_t)dc_sleb(c);
		break;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		dc_skip(c, dc_uleb(c));
		break;
	case DW_FORM_block1:
		dc_skip(c, dc_u(c, 1));
		break;
	case DW_FORM_block2:
		dc_skip(c, dc_u(c, 2));
		break;
	case DW_FORM_block4:
		dc_skip(c, dc_u(c, 4));
		break;
	default:	/* udata, ref_udata and the indices */
		v->u = dc_uleb(c);
		break;
	}
}

/* The attributes of a DIE skipped. */
static inline void skip_attrs(struct dwarf_cursor *c, const struct dwarf_info_unit *u,
			      const struct dwarf_info_abbrevs *t, const struct abbrev *a)
{
	if (a->fixed >= 0) {
		dc_skip(c, (uint64_t)a->fixed);
		return;
	}
	for (uint32_t i = 0; i < a->nr && !c->bad; i++) {
		const struct abbrev_attr *at = &t->attrs[a->first + i];
		struct val v;

		if (at->size >= 0)
			dc_skip(c, (uint64_t)at->size);
		else
			read_val(c, u, at, &v);
	}
}

/* dwarf_formudata() of an attribute that is not a section offset: a constant. */
static bool val_const(const struct val *v, uint64_t *out)
{
	switch (v->form) {
	case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4: case DW_FORM_data8:
	case DW_FORM_sdata: case DW_FORM_udata: case DW_FORM_rnglistx: case DW_FORM_loclistx:
	case DW_FORM_implicit_const: case DW_FORM_addrx: case DW_FORM_GNU_addr_index:
	case DW_FORM_addrx1: case DW_FORM_addrx2: case DW_FORM_addrx3: case DW_FORM_addrx4:
		*out = v->u;
		return true;
	default:
		return false;
	}
}

/* dwarf_formudata() of a section offset (DW_AT_*_base): sec_offset, or a constant. */
static bool val_offset(const struct dwarf_info_unit *u, const struct val *v, uint64_t *out)
{
	if (v->form == DW_FORM_sec_offset) {
		*out = v->u;
		return true;
	}
	return val_const(v, out);
}

/* Address 'idx' of the unit's table in .debug_addr: 0, or -1 when it is not there. */
static int addrx(const struct dwarf_info *di, const struct dwarf_info_unit *u, uint64_t idx,
		 uint64_t *out)
{
	size_t size = di->sec.size[DWARF_ADDR];
	struct dwarf_cursor c = { NULL, NULL, di->sec.big_endian, false };

	if (!di->sec.data[DWARF_ADDR] || u->addr_size > size ||
	    u->addr_base > size - u->addr_size ||
	    idx > (size - u->addr_size - u->addr_base) / u->addr_size)
		return -1;
	c.p = di->sec.data[DWARF_ADDR] + u->addr_base + idx * u->addr_size;
	c.end = c.p + u->addr_size;
	*out = dc_u(&c, u->addr_size);
	return 0;
}

/* dwarf_formaddr(): 1 an address, 0 not an address's form, -1 an index to nowhere. */
static int val_addr(const struct dwarf_info *di, const struct dwarf_info_unit *u,
		    const struct val *v, uint64_t *out)
{
	switch (v->form) {
	case DW_FORM_addr:
		*out = v->u;
		return 1;
	case DW_FORM_addrx: case DW_FORM_GNU_addr_index:
	case DW_FORM_addrx1: case DW_FORM_addrx2: case DW_FORM_addrx3: case DW_FORM_addrx4:
		return addrx(di, u, v->u, out) ? -1 : 1;
	default:
		return 0;
	}
}

/*
 * A string attribute as dwarf_formstring() reads it: 1 with the string, 0
 * when the form is not a string's, -1 when it is one not readable here
 * (another file's, or an offset or index to nowhere).
 */
static int val_string(const struct dwarf_info *di, const struct dwarf_info_unit *u,
		      const struct val *v, const char **out)
{
	uint64_t off;
	int sec = DWARF_STR;

	switch (v->form) {
	case DW_FORM_string:
		*out = v->str;
		return 1;
	case DW_FORM_strp:
		off = v->u;
		break;
	case DW_FORM_line_strp:
		off = v->u;
		sec = DWARF_LINE_STR;
		break;
	case DW_FORM_strx: case DW_FORM_strx1: case DW_FORM_strx2:
	case DW_FORM_strx3: case DW_FORM_strx4: {
		size_t size = di->sec.size[DWARF_STR_OFFSETS];
		struct dwarf_cursor c = { NULL, NULL, di->sec.big_endian, false };

		/* without DW_AT_str_offsets_base libdw reads the section's header: not done here */
		if (!u->has_str_offsets_base || !di->sec.data[DWARF_STR_OFFSETS] ||
		    u->str_offsets_base > size ||
		    v->u >= (size - u->str_offsets_base) / u->offset_size)
			return -1;
		c.p = di->sec.data[DWARF_STR_OFFSETS] + u->str_offsets_base + v->u * u->offset_size;
		c.end = c.p + u->offset_size;
		off = dc_u(&c, u->offset_size);
		break;
	}
	case DW_FORM_GNU_strp_alt: case DW_FORM_strp_sup: case DW_FORM_GNU_str_index:
		return -1;
	default:
		return 0;
	}
	*out = dc_str_at(di->sec.data[sec], di->sec.size[sec], off);
	return *out ? 1 : -1;
}

/*
 * A reference to a DIE as an offset in .debug_info: 1, 0 when the form
 * is not a reference's, -1 when it is one into another file or unit kind.
 */
static int val_ref(const struct dwarf_info_unit *u, const struct val *v, uint64_t *out)
{
	switch (v->form) {
	case DW_FORM_ref1: case DW_FORM_ref2: case DW_FORM_ref4: case DW_FORM_ref8:
	case DW_FORM_ref_udata:
		/* as libdw: relative to the unit's header, inside the unit */
		if (v->u >= u->end - u->off)
			return -1;
		*out = u->off + v->u;
		return 1;
	case DW_FORM_ref_addr:
		*out = v->u;
		return 1;
	case DW_FORM_ref_sig8: case DW_FORM_ref_sup4: case DW_FORM_ref_sup8:
	case DW_FORM_GNU_ref_alt:
		return -1;
	default:
		return 0;
	}
}

/* ---- a unit's DIE ---- */

/*
 * Ready a unit: its abbreviations, and from its DIE the bases its
 * attributes are read against, as libdw finds them. 0 or -1.
 */
/*
 * The attributes hotloop reads of the DIE at 'die' in unit u (abbreviations
 * t), the first of each name kept: 0, or -1 when the DIE cannot be read.
 */
static int read_die(const struct dwarf_info *di, const struct dwarf_info_unit *u,
		    const struct dwarf_info_abbrevs *t, uint64_t die, bool have[A_NR], struct val vals[A_NR])
{
	const unsigned char *info = di->sec.data[DWARF_INFO];
	struct dwarf_cursor c = { info + die, info + u->end, di->sec.big_endian, false };
	const struct abbrev *a = abbrev_find(t, dc_uleb(&c));

	if (c.bad || !a)
		return -1;
	for (uint32_t k = 0; k < a->nr && !c.bad; k++) {
		const struct abbrev_attr *at = &t->attrs[a->first + k];
		struct val v;

		read_val(&c, u, at, &v);
		if (at->name != A_OTHER && !have[at->name]) {
			have[at->name] = true;
			vals[at->name] = v;
		}
	}
	return c.bad ? -1 : 0;
}

static int unit_ready(struct dwarf_info *di, struct dwarf_info_unit *u)
{
	struct dwarf_info_abbrevs key = { 0 }, *t;
	struct val vals[A_NR];
	bool have[A_NR] = { false };
	uint64_t hash, x;
	size_t slot, i;

	if (u->state)
		return u->state > 0 ? 0 : -1;
	u->state = -1;
	key.off = u->abbrev_off;
	key.addr_size = u->addr_size;
	key.offset_size = u->offset_size;
	key.v2 = u->version == 2;
	hash = abbrevs_hash(&key);
	i = hindex_probe(&di->table_index, hash, abbrevs_eq, di->tables, &key, &slot);
	if (i == HINDEX_NONE) {
		ALLOC_GROW(di->tables, di->nr_tables + 1, di->alloc_tables);
		i = di->nr_tables++;
		di->tables[i] = key;
		abbrevs_read(di, &di->tables[i]);
		hindex_set(&di->table_index, slot, hash, i);
	}
	t = &di->tables[i];
	if (t->bad)
		return -1;
	u->table = (uint32_t)i;

	if (read_die(di, u, t, u->die, have, vals))
		return -1;
	/* __libdw_cu_addr_base(): DW_AT_GNU_addr_base, else DW_AT_addr_base, else 0 */
	if (have[A_GNU_ADDR_BASE] && val_offset(u, &vals[A_GNU_ADDR_BASE], &x))
		u->addr_base = x;
	else if (!have[A_GNU_ADDR_BASE] && have[A_ADDR_BASE] && val_offset(u, &vals[A_ADDR_BASE], &x))
		u->addr_base = x;
	if (have[A_STR_OFFSETS_BASE] && val_offset(u, &vals[A_STR_OFFSETS_BASE], &x)) {
		u->str_offsets_base = x;
		u->has_str_offsets_base = true;
	} else if (u->version < 5) {
		u->has_str_offsets_base = true;	/* libdw: 0, no header before DWARF 5 */
	}
	if (have[A_RNGLISTS_BASE] && val_offset(u, &vals[A_RNGLISTS_BASE], &x))
		u->rnglists_base = x;
	/* __libdw_cu_base_address(): DW_AT_low_pc, else DW_AT_entry_pc, else 0 */
	if (!(have[A_LOW_PC] && val_addr(di, u, &vals[A_LOW_PC], &u->base) > 0) &&
	    !(have[A_ENTRY_PC] && val_addr(di, u, &vals[A_ENTRY_PC], &u->base) > 0))
		u->base = 0;
	if (u->base == UINT64_MAX)
		return -1;	/* libdw's "no base address" */
	u->state = 1;
	return 0;
}

/* ---- ranges ---- */

/* Where a scope's ranges go: the scope, its depth, how many were kept, and how many may be. */
struct sink {
	struct dwarf_info_scopes *out;
	uint32_t scope, depth;
	size_t kept;
	size_t max;	/* of the unit's ranges, past which it is not a real unit's */
};

static int add_range(struct sink *k, uint64_t lo, uint64_t hi)
{
	struct dwarf_info_scopes *out = k->out;
	struct dwarf_info_range *r;

	/* at 0: code the linker discarded */
	if (!lo || hi <= lo)
		return 0;
	if (out->nr_ranges >= k->max)
		return -1;
	ALLOC_GROW(out->ranges, out->nr_ranges + 1, out->alloc_ranges);
	r = &out->ranges[out->nr_ranges++];
	r->lo = lo;
	r->hi = hi;
	r->scope = k->scope;
	r->depth = k->depth;
	k->kept++;
	return 0;
}

/* A DW_AT_ranges list, as dwarf_ranges() reads it: 0 or -1. */
static int read_ranges(struct dwarf_info *di, const struct dwarf_info_unit *u, const struct val *v,
		       struct sink *k)
{
	int sec = u->version < 5 ? DWARF_RANGES : DWARF_RNGLISTS;
	const unsigned char *data = di->sec.data[sec];
	size_t size = di->sec.size[sec];
	struct dwarf_cursor c = { NULL, NULL, di->sec.big_endian, false };
	uint64_t off, base = u->base;
	unsigned w = u->addr_size;

	if (!data)
		return -1;
	if (v->form == DW_FORM_rnglistx) {
		uint64_t rb = u->rnglists_base;

		/* without DW_AT_rnglists_base libdw reads the section's header: not done here */
		if (u->version < 5 || !rb || u->offset_size > size || rb > size - u->offset_size ||
		    v->u > (size - u->offset_size - rb) / u->offset_size)
			return -1;
		c.p = data + rb + v->u * u->offset_size;
		c.end = data + size;
		off = dc_u(&c, u->offset_size) + rb;
	} else if (v->form == DW_FORM_sec_offset) {
		off = v->u;
	} else if (u->version < 4 && val_const(v, &off)) {
		;	/* before DWARF 4 a constant is an offset too */
	} else {
		return -1;
	}
	if (off >= size)
		return -1;
	c.p = data + off;
	c.end = data + size;
	if (sec == DWARF_RANGES) {
		uint64_t escape = w == 8 ? UINT64_MAX : UINT32_MAX;

		for (;;) {
			uint64_t b = dc_u(&c, w), e = dc_u(&c, w);

			if (c.bad)
				return -1;
			if (b == escape) {
				if (e == escape)
					return -1;
				base = e;
			} else if (!b && !e) {
				return 0;
			} else {
				if (add_range(k, b + base, e + base))
					return -1;
			}
		}
	}
	for (;;) {
		unsigned kind = (unsigned)dc_u(&c, 1);
		uint64_t b, e;

		if (c.bad)
			return -1;
		switch (kind) {
		case DW_RLE_end_of_list:
			return 0;
		case DW_RLE_base_addressx:
			if (addrx(di, u, dc_uleb(&c), &base) || c.bad)
				return -1;
			continue;
		case DW_RLE_startx_endx:
			if (addrx(di, u, dc_uleb(&c), &b) || addrx(di, u, dc_uleb(&c), &e) || c.bad)
				return -1;
			break;
		case DW_RLE_startx_length:
			if (addrx(di, u, dc_uleb(&c), &b) || c.bad)
				return -1;
			e = b + dc_uleb(&c);
			break;
		case DW_RLE_offset_pair:
			b = dc_uleb(&c) + base;
			e = dc_uleb(&c) + base;
			break;
		case DW_RLE_base_address:
			base = dc_u(&c, w);
			continue;
		case DW_RLE_start_end:
			b = dc_u(&c, w);
			e = dc_u(&c, w);
			break;
		case DW_RLE_start_length:
			b = dc_u(&c, w);
			e = b + dc_uleb(&c);
			break;
		default:
			return -1;
		}
		if (c.bad)
			return -1;
		if (add_range(k, b, e))
			return -1;
	}
}

/*
 * The ranges of a function or inlined call, as dwarf_ranges() gives them:
 * DW_AT_low_pc with DW_AT_high_pc (an address, or a length from
 * DWARF 4 on), else DW_AT_ranges. 0 or -1.
 */
static int scope_ranges(struct dwarf_info *di, const struct dwarf_info_unit *u,
			const struct val *vals, const bool *have, struct sink *k)
{
	uint64_t lo, hi;
	int r;

	if (have[A_HIGH_PC] && have[A_LOW_PC]) {
		int rl = val_addr(di, u, &vals[A_LOW_PC], &lo);

		r = val_addr(di, u, &vals[A_HIGH_PC], &hi);
		if (r < 0 || rl < 0)
			return -1;	/* an index to nowhere: libdw's answer is odd, let it give it */
		if (rl > 0 && (r > 0 || val_const(&vals[A_HIGH_PC], &hi))) {
			if (!r)
				hi += lo;
			return add_range(k, lo, hi);
		}
	}
	if (!have[A_RANGES])
		return 0;
	return read_ranges(di, u, &vals[A_RANGES], k);
}

/* ---- the walk ---- */

static void reserve(struct dwarf_info_scopes *out, size_t ranges)
{
	if (ranges > (1u << 22))
		ranges = 1u << 22;
	if (out->alloc_ranges < ranges) {
		free(out->ranges);
		out->alloc_ranges = ranges;
		out->ranges = xmalloc(ranges * sizeof(*out->ranges));
	}
	if (out->alloc_scopes < ranges / 2) {
		free(out->scopes);
		out->alloc_scopes = ranges / 2;
		out->scopes = xmalloc(out->alloc_scopes * sizeof(*out->scopes));
	}
}

/*
 * Past the subtree of the DIE whose attributes the cursor just read: to
 * DW_AT_sibling when there is one, else through the children. *ended when
 * the unit ended before the subtree did (libdw: no more DIEs).
 */
static void skip_children(struct dwarf_cursor *c, const struct dwarf_info *di,
			  const struct dwarf_info_unit *u, const struct dwarf_info_abbrevs *t,
			  const struct val *sibling, bool *ended)
{
	const unsigned char *info = di->sec.data[DWARF_INFO];
	size_t level = 1;

	if (sibling) {
		uint64_t to;

		/* CU-relative, inside the unit, past this DIE: else broken */
		if (val_ref(u, sibling, &to) <= 0 || sibling->form == DW_FORM_ref_addr ||
		    to < (uint64_t)(c->p - info) || to >= u->end) {
			c->bad = true;
			return;
		}
		c->p = info + to;
		return;
	}
	while (level && !c->bad) {
		const struct abbrev *a;
		uint64_t code;

		if (c->p >= c->end) {
			*ended = true;
			return;
		}
		code = dc_uleb(c);
		if (!code) {
			level--;
			continue;
		}
		a = abbrev_find(t, code);
		if (!a) {
			c->bad = true;
			return;
		}
		if (a->sibling && a->children) {
			struct val sib = { 0 };

			for (uint32_t k = 0; k < a->nr && !c->bad; k++) {
				const struct abbrev_attr *at = &t->attrs[a->first + k];
				struct val v;

				read_val(c, u, at, &v);
				if (at->name == A_SIBLING && !sib.form)
					sib = v;
			}
			if (c->bad)
				return;
			skip_children(c, di, u, t, &sib, ended);
			continue;
		}
		skip_attrs(c, u, t, a);
		if (a->children)
			level++;
	}
}

int dwarf_info_scopes(struct dwarf_info *di, uint64_t unit_die, bool skip_types,
		      struct dwarf_info_scopes *out)
{
	struct dwarf_info_unit *u;
	const struct dwarf_info_abbrevs *t;
	const unsigned char *info = di->sec.data[DWARF_INFO];
	struct dwarf_cursor c;
	const struct abbrev *a;
	size_t sp = 0, max_ranges;
	bool ended = false;

	out->nr_scopes = out->nr_ranges = 0;
	u = info ? unit_of(di, unit_die) : NULL;
	if (!u || u->die != unit_die || unit_ready(di, u) ||
	    (u->unit_type != DW_UT_compile && u->unit_type != DW_UT_partial))
		return -1;
	t = &di->tables[u->table];
	c = (struct dwarf_cursor){ info + u->die, info + u->end, di->sec.big_endian, false };
	a = abbrev_find(t, dc_uleb(&c));
	if (c.bad || !a)
		return -1;
	skip_attrs(&c, u, t, a);
	if (!a->children)
		return c.bad ? -1 : 0;
	/*
	 * Room, up front, for as many scopes and ranges as units have for
	 * their size (a range for 60 bytes, a scope for 130, in what GCC
	 * writes), so that the arrays seldom move while they grow.
	 */
	reserve(out, (size_t)(u->end - u->die) / 32 + 16);
	/*
	 * A range takes two bytes of a range list at least, or a DIE of its
	 * own: more than that many is DIEs sharing one list over and over,
	 * and memory without end.
	 */
	max_ranges = 2 * ((size_t)(u->end - u->die) + di->sec.size[DWARF_RANGES] +
			  di->sec.size[DWARF_RNGLISTS]) + 1024;
	if (max_ranges > MAX_RANGES)
		max_ranges = MAX_RANGES;
	/* stack[i]: the scope the DIEs of nesting i are in */
	if (!di->alloc_stack) {
		di->alloc_stack = MAX_DEPTH + 2;
		di->stack = xmalloc(di->alloc_stack * sizeof(*di->stack));
	}
	di->stack[sp++] = DWARF_INFO_NONE;
	while (sp && !c.bad && !ended) {
		uint32_t depth = (uint32_t)sp - 1, scope = di->stack[sp - 1];
		uint64_t die = (uint64_t)(c.p - info), code;
		struct val vals[A_NR];
		bool have[A_NR];
		struct sink sink = { out, 0, 0, 0, max_ranges };
		size_t first_range;
		uint8_t kind;

		if (c.p >= c.end)
			break;	/* libdw: a unit may end without its last null entries */
		code = dc_uleb(&c);
		if (!code) {
			sp--;
			continue;
		}
		a = abbrev_find(t, code);
		if (!a)
			goto fail;
		kind = a->kind == K_TYPE ? (skip_types ? K_SKIP : K_BLOCK) : a->kind;
		if (kind == K_SKIP || kind == K_BLOCK) {
			if (!a->children) {
				skip_attrs(&c, u, t, a);
				continue;
			}
			if (kind == K_BLOCK) {
				skip_attrs(&c, u, t, a);
				if (sp > MAX_DEPTH)
					goto fail;
				di->stack[sp++] = scope;
				continue;
			}
		}
		/* a function or call (or a skipped DIE with children): its attributes */
		memset(have, 0, sizeof(have));
		for (uint32_t k = 0; k < a->nr && !c.bad; k++) {
			const struct abbrev_attr *at = &t->attrs[a->first + k];

			if (at->name == A_OTHER || have[at->name]) {
				if (at->size >= 0) {
					dc_skip(&c, (uint64_t)at->size);
				} else {
					struct val v;

					read_val(&c, u, at, &v);
				}
				continue;
			}
			read_val(&c, u, at, &vals[at->name]);
			have[at->name] = true;
		}
		if (c.bad)
			goto fail;
		if (kind == K_SKIP) {
			skip_children(&c, di, u, t, have[A_SIBLING] ? &vals[A_SIBLING] : NULL, &ended);
			continue;
		}
		if (out->nr_scopes >= DWARF_INFO_NONE - 1)
			goto fail;
		first_range = out->nr_ranges;
		sink.scope = (uint32_t)out->nr_scopes;
		sink.depth = depth;
		if (scope_ranges(di, u, vals, have, &sink))
			goto fail;
		if (sink.kept) {
			struct dwarf_info_scope *s;
			uint64_t x;
			int r;

			ALLOC_GROW(out->scopes, out->nr_scopes + 1, out->alloc_scopes);
			s = &out->scopes[out->nr_scopes];
			s->die = die;
			s->inlined = kind == K_INLINED;
			s->parent = s->inlined ? scope : DWARF_INFO_NONE;
			s->origin = 0;
			if (have[A_ORIGIN]) {
				r = val_ref(u, &vals[A_ORIGIN], &s->origin);
				if (r < 0)
					s->origin = DWARF_INFO_FOREIGN;
				else if (!r)
					goto fail;	/* not a reference: libdw knows what it does */
			}
			s->call_file = UINT64_MAX;
			s->call_line = 0;
			if (have[A_CALL_FILE] && val_const(&vals[A_CALL_FILE], &x))
				s->call_file = x;
			if (have[A_CALL_LINE] && val_const(&vals[A_CALL_LINE], &x))
				s->call_line = x > INT32_MAX ? 0 : (int32_t)x;
			out->nr_scopes++;
			if (a->children) {
				if (sp > MAX_DEPTH)
					goto fail;
				di->stack[sp++] = (uint32_t)(out->nr_scopes - 1);
			}
			continue;
		}
		out->nr_ranges = first_range;
		if (a->children)
			skip_children(&c, di, u, t, have[A_SIBLING] ? &vals[A_SIBLING] : NULL, &ended);
	}
	if (c.bad)
		goto fail;
	return 0;
fail:
	out->nr_scopes = out->nr_ranges = 0;
	return -1;
}

void dwarf_info_scopes_release(struct dwarf_info_scopes *s)
{
	free(s->scopes);
	free(s->ranges);
	memset(s, 0, sizeof(*s));
}

/* ---- names ---- */

int dwarf_info_names(struct dwarf_info *di, uint64_t die, struct dwarf_info_names *out)
{
	const unsigned char *info = di->sec.data[DWARF_INFO];
	bool found_name = false, found_link = false, found_mips = false, found_line = false;
	const char *mips = NULL;

	memset(out, 0, sizeof(*out));
	if (!info)
		return -1;
	for (int hop = 0; hop < MAX_CHAIN; hop++) {
		struct dwarf_info_unit *u = unit_of(di, die);
		const struct dwarf_info_abbrevs *t;
		struct val vals[A_NR];
		bool have[A_NR] = { false };
		const char *s;
		uint64_t x;
		int r;

		if (!u || unit_ready(di, u))
			return -1;
		t = &di->tables[u->table];
		if (read_die(di, u, t, die, have, vals))
			return -1;
		/* each attribute from the first DIE of the chain that has it */
		if (!found_name && have[A_NAME]) {
			found_name = true;
			if ((r = val_string(di, u, &vals[A_NAME], &s)) < 0)
				return -1;
			out->name = r ? s : NULL;
		}
		if (!found_link && have[A_LINKAGE_NAME]) {
			found_link = true;
			if ((r = val_string(di, u, &vals[A_LINKAGE_NAME], &s)) < 0)
				return -1;
			out->linkage_name = r ? s : NULL;
		}
		if (!found_mips && have[A_MIPS_LINKAGE_NAME]) {
			found_mips = true;
			if ((r = val_string(di, u, &vals[A_MIPS_LINKAGE_NAME], &s)) < 0)
				return -1;
			mips = r ? s : NULL;
		}
		if (!found_line && have[A_DECL_LINE]) {
			found_line = true;
			if (val_const(&vals[A_DECL_LINE], &x) && x <= INT32_MAX)
				out->decl_line = (int)x;
		}
		if (found_name && found_link && found_line)
			break;
		/* on to the abstract origin, else the specification */
		if (have[A_ORIGIN])
			r = val_ref(u, &vals[A_ORIGIN], &die);
		else if (have[A_SPECIFICATION])
			r = val_ref(u, &vals[A_SPECIFICATION], &die);
		else
			break;
		if (r <= 0)
			return -1;
	}
	if (!found_link)
		out->linkage_name = mips;
	return 0;
}

/* ---- the reader ---- */

void dwarf_info_init(struct dwarf_info *di, const struct dwarf_info_sections *sec)
{
	memset(di, 0, sizeof(*di));
	di->sec = *sec;
}

void dwarf_info_release(struct dwarf_info *di)
{
	for (size_t i = 0; i < di->nr_tables; i++)
		abbrevs_release(&di->tables[i]);
	free(di->tables);
	hindex_release(&di->table_index);
	free(di->units);
	free(di->stack);
	memset(di, 0, sizeof(*di));
}
