/*
 * symbolize.c: addresses to names, source lines and inline chains (see
 * symbolize.h). libdwfl only finds the files (the ELF file, its separate
 * debug file by build id or .gnu_debuglink); the tables are then read once
 * into sorted arrays: per DSO the symbols (libelf) and the compilation
 * units' address ranges (libdw), per compilation unit (on first use) its
 * line table (dwarf-line.c) and the address ranges of its functions and
 * inlined calls (dwarf-info.c), libdw reading what those two do not.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#undef ARRAY_SIZE	/* ansidecl.h's; util.h has its own */

#include "util.h"
#include "strbuf.h"
#include "dwarf-info.h"
#include "dwarf-line.h"
#include "hindex.h"
#include "intern.h"
#include "symbolize.h"

#define NONE UINT32_MAX
/* Deeper DIE nesting than this is treated as broken DWARF. */
#define MAX_DIE_DEPTH 256
/* More function ranges than this in one unit is broken DWARF (96 MiB of them). */
#define MAX_UNIT_RANGES (4u << 20)
/* /proc/kallsyms is a few MiB; anything far larger is not a kallsyms file. */
#define KALLSYMS_CAP (512u << 20)

/*
 * An address range [lo, hi) of item 'item' (a symbol, a compilation unit, a
 * scope). Sorted by lo, then longest first, then by nesting (of scopes:
 * the outer first); once sorted, 'encl' is the innermost other range that
 * contains this one (NONE at the top), so the innermost range holding an
 * address is one binary search plus a walk up the nesting. Before, the
 * field holds the nesting depth the sort needs: 24 bytes, not 32, for
 * the tens of thousands of ranges of a unit's scopes.
 */
struct range {
	uint64_t lo, hi;
	uint32_t item;
	uint32_t encl;		/* until sorted: the depth */
};

struct range_index {
	struct range *r;
	size_t nr, alloc;
	size_t hint;		/* the last search's answer */
};

/*
 * Room for 'nr' items in a scratch array whose contents need not be kept:
 * a new array, not a copy of the old (whose pages would be touched twice).
 */
#define SCRATCH_GROW(x, nr, alloc) do { \
		if ((size_t)(nr) > (alloc)) { \
			free(x); \
			(alloc) = (size_t)(nr) > 2 * (alloc) ? (size_t)(nr) : 2 * (alloc); \
			(x) = xmalloc((alloc) * sizeof(*(x))); \
		} \
	} while (0)

/* What building a range index needs for a while, kept from one index to the next. */
struct range_scratch {
	struct range *tmp;
	size_t alloc_tmp;
	uint32_t *stack;
	size_t alloc_stack;
};

/* One symbol from .symtab/.dynsym or kallsyms: [addr, end). */
struct elf_sym {
	uint64_t addr, end;
	const char *name;	/* as in the file */
	const char *dname;	/* demangled, computed on first use */
};

/*
 * A unit's line rows are dwarf-line.c's: the addresses in one array, in
 * another the line and the file (an index for cu_row_file(), LINE_END
 * for the first address past a sequence).
 */
#define LINE_END DWARF_LINE_END
#define LINE_NO_FILE (DWARF_LINE_END - 1)

/*
 * A function (DW_TAG_subprogram) or an inlined call (DW_TAG_inlined_subroutine).
 * Read by dwarf-info.c, its DIE is known by offset and the walk gave its
 * origin and call site; read by libdw, its unit's dies[] holds its DIE and
 * the call site is read with its names. The names are those of its
 * abstract origin (else its own DIE's), in the DSO's cache of names, where
 * all copies of an inlined function share them.
 */
struct scope {
	uint64_t off;		/* its DIE in .debug_info */
	uint64_t origin;	/* dwarf-info.c's: DW_AT_abstract_origin's DIE, 0 none */
	uint32_t call_file;	/* DW_AT_call_file, for cu_file(); UINT32_MAX none */
	uint32_t parent;	/* the scope this call was inlined into, NONE for a function */
	int32_t call_line;
	uint32_t names;		/* index into the DSO's names, NONE until read */
	bool inlined;
};

struct cu {
	Dwarf_Die die;		/* the unit's DIEs (a split unit's, for a skeleton) */
	Dwarf_Die line_die;	/* the unit holding the line table */
	int state;		/* 0 not read yet, 1 read, -1 unreadable */
	bool is_c;		/* written in C: no code inside types */
	uint64_t *line_addr;		/* the line table's rows, sorted: their addresses */
	struct dwarf_line_row *line_info;	/* and what each says */
	size_t nr_lines;
	size_t line_hint;		/* the last search's answer */
	struct scope *scopes;
	size_t nr_scopes, alloc_scopes;
	Dwarf_Die *dies;		/* libdw's walk: each scope's DIE; NULL after dwarf-info.c's */
	size_t alloc_dies;
	struct range_index ranges;	/* items are scopes */
	Dwarf_Files *files;		/* libdw's, when dwarf-line.c could not read the table */
	struct dwarf_line_file *lfiles;	/* else dwarf-line.c's */
	size_t nr_files;
	const char **file_names;	/* interned on first use */
	const char **extra_files;	/* libdw's rows: files of another table, interned */
	size_t nr_extra_files, alloc_extra_files;
	const char *comp_dir;		/* DW_AT_comp_dir, "" when none */
};

/* A function's names, by the offset of the DIE they were read from (its abstract origin's, or its own). */
struct origin {
	Dwarf *dbg;
	Dwarf_Off off;
	const char *name, *system_name;
	int decl_line;
};

struct origin_cache {
	struct origin *v;
	size_t nr, alloc;
	struct hindex index;
};

struct segment {
	uint64_t off, size, vaddr;
};

struct sym_dso {
	struct symbolizer *s;
	const char *path;
	const char *build_id;		/* the file's, hex; "" when none */
	const char *want_build_id;	/* for a mismatched DSO: what was asked for */
	struct sym_dso *next;		/* next DSO with the same path */
	bool kernel;
	bool usable;
	bool warned_dwarf;
	bool elf_mismatch;		/* the file's build id is not the one asked for */

	Dwfl *dwfl;
	Elf *elf;
	struct segment *segs;
	size_t nr_segs;
	struct elf_sym *syms;
	size_t nr_syms;
	struct range_index sym_ranges;	/* items are syms */

	char *kallsyms;			/* the kernel's: the text its names point into */

	Dwarf *dw;
	uint64_t dw_adjust;		/* DWARF address = vaddr + dw_adjust */
	struct cu *cus;
	size_t nr_cus, alloc_cus;
	struct range_index cu_ranges;	/* items are cus */
	struct origin_cache origins;	/* the names scopes have */
	uint32_t no_names;		/* the entry of none, NONE until needed */
	int sec_state;			/* DWARF section bytes: 0 not looked for, 1 found, -1 none */
	struct dwarf_line_sections line_sec;
	struct dwarf_line_table line_scratch;	/* each unit's table is read into it */
	uint32_t *line_order;		/* and sorted with this */
	size_t alloc_line_order;
	bool info_usable;		/* dwarf-info.c can walk the units' DIEs */
	struct dwarf_info info;
	struct dwarf_info_scopes scope_scratch;	/* each unit's scopes are read into it */
	struct range_scratch range_scratch;	/* and their ranges indexed with it */
};

struct symbolizer {
	struct strtab strs;		/* every name, file and path handed out */
	int64_t *demangled;		/* strs index -> demangled index, -1 unknown */
	size_t nr_demangled;
	struct strtab paths;		/* DSO paths: index -> by_path slot */
	struct sym_dso **by_path;
	size_t alloc_by_path;
	struct sym_dso **dsos;
	size_t nr_dsos, alloc_dsos;
	struct sym_dso *kernel;
	char *debug_path;
	Dwfl_Callbacks callbacks;
	struct strbuf path;		/* scratch for source paths */
};

static const char unknown_name[] = "??";

static const char *intern(struct symbolizer *s, const char *str)
{
	return strtab_get(&s->strs, strtab_intern_str(&s->strs, str));
}

/* ---- range index ---- */

static void range_add(struct range_index *ri, uint64_t lo, uint64_t hi,
		      uint32_t item, uint32_t depth)
{
	if (hi <= lo || ri->nr >= NONE - 1)
		return;
	ALLOC_GROW(ri->r, ri->nr + 1, ri->alloc);
	ri->r[ri->nr].lo = lo;
	ri->r[ri->nr].hi = hi;
	ri->r[ri->nr].item = item;
	ri->r[ri->nr].encl = depth;
	ri->nr++;
}

static int range_cmp(const void *a_, const void *b_)
{
	const struct range *a = a_, *b = b_;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi > b->hi ? -1 : 1;
	/* 'encl' is the depth until the table is sorted */
	if (a->encl != b->encl)
		return a->encl < b->encl ? -1 : 1;
	if (a->item != b->item)
		return a->item < b->item ? -1 : 1;
	return 0;
}

/* One stable pass of a radix sort by start: src into dst by byte 'shift / 8' of it. */
static void range_radix_pass(const struct range *src, struct range *dst, size_t n, unsigned shift)
{
	size_t count[256] = { 0 }, at = 0;

	for (size_t i = 0; i < n; i++)
		count[(src[i].lo >> shift) & 0xff]++;
	for (int b = 0; b < 256; b++) {
		size_t c = count[b];

		count[b] = at;
		at += c;
	}
	for (size_t i = 0; i < n; i++)
		dst[count[(src[i].lo >> shift) & 0xff]++] = src[i];
}

/*
 * Sort as range_cmp() orders them: a radix sort by the start, one stable
 * pass for each of its bytes that is not the same in all ranges
 * (addresses of one program differ in two or three), then the few ranges
 * with one start (a call inlined at the start of its caller) put in order
 * among themselves. A unit's scopes give tens of thousands of ranges, and
 * a qsort() calling range_cmp() for each comparison was a tenth of the
 * time of symbolizing a program. range_cmp() is a total order (ranges
 * equal under it are equal), so the result is qsort()'s.
 */
static void range_sort(struct range_index *ri, struct range_scratch *scratch)
{
	struct range *r = ri->r, *tmp, *src = r, *dst;
	size_t n = ri->nr;
	uint64_t diff = 0;

	if (n >= 64) {
		for (size_t i = 1; i < n; i++)
			diff |= r[i].lo ^ r[0].lo;
		SCRATCH_GROW(scratch->tmp, n, scratch->alloc_tmp);
		tmp = scratch->tmp;
		dst = tmp;
		for (unsigned shift = 0; shift < 64; shift += 8) {
			struct range *t;

			if (!((diff >> shift) & 0xff))
				continue;
			range_radix_pass(src, dst, n, shift);
			t = src;
			src = dst;
			dst = t;
		}
		/*
		 * Copied back, not traded places with: the buffer is then
		 * kept, and a unit's table is no larger than its pages
		 * already touched.
		 */
		if (src != r)
			memcpy(r, src, n * sizeof(*r));
	}
	/* insertion: what is left out of order is among ranges of one start */
	for (size_t i = 1, moves = 0; i < n; i++) {
		struct range t = r[i];
		size_t j = i;

		if (range_cmp(&r[i - 1], &t) <= 0)
			continue;
		for (; j > 0 && range_cmp(&r[j - 1], &t) > 0; j--) {
			r[j] = r[j - 1];
			/* many ranges of one start (broken DWARF): no quadratic time */
			if (++moves > 8 * n + 1024) {
				r[j - 1] = t;
				qsort(r, n, sizeof(*r), range_cmp);
				return;
			}
		}
		r[j] = t;
	}
}

static void range_index_build(struct range_index *ri, struct range_scratch *scratch)
{
	uint32_t *stack;
	size_t sp = 0;

	if (!ri->nr)
		return;
	range_sort(ri, scratch);
	SCRATCH_GROW(scratch->stack, ri->nr, scratch->alloc_stack);
	stack = scratch->stack;
	for (size_t i = 0; i < ri->nr; i++) {
		while (sp && ri->r[stack[sp - 1]].hi < ri->r[i].hi)
			sp--;
		ri->r[i].encl = sp ? stack[sp - 1] : NONE;
		stack[sp++] = (uint32_t)i;
	}
}

/*
 * Of n keys (uint64_t, 'stride' bytes apart, ascending, the first at or
 * below 'addr'), the last at or below 'addr'. Lookups come in ascending
 * order (lib/record sorts them; so does any batch of addresses), so the
 * search starts at the last answer, 'hint', and gallops forward; then it
 * halves without a branch to mispredict (the compiler makes the choice a
 * conditional move). A lookup is three such searches, and with branches
 * from the whole table's middle they were most of its time.
 */
static inline size_t last_at_or_below(const void *keys, size_t stride, size_t n, uint64_t addr,
				      size_t hint)
{
#define KEY(i) (*(const uint64_t *)((const char *)keys + (i) * stride))
	size_t lo = 0, len = n;

	if (hint < n && KEY(hint) <= addr) {
		size_t step = 1;
		int gallops = 0;

		lo = hint;
		while (step < n - lo && KEY(lo + step) <= addr) {
			lo += step;
			step *= 2;
			/* far from the last answer: a plain search of the rest */
			if (++gallops == 4) {
				step = n - lo;
				break;
			}
		}
		len = step < n - lo ? step : n - lo;
	} else if (hint < n) {
		len = hint;
	}
	while (len > 1) {
		size_t half = len / 2;

		lo = KEY(lo + half) <= addr ? lo + half : lo;
		len -= half;
	}
	return lo;
#undef KEY
}

/* The innermost range that holds 'addr', or NULL. */
static const struct range *range_find(struct range_index *ri, uint64_t addr)
{
	uint32_t i;

	if (!ri->nr || ri->r[0].lo > addr)
		return NULL;
	ri->hint = last_at_or_below(ri->r, sizeof(*ri->r), ri->nr, addr, ri->hint);
	i = (uint32_t)ri->hint;
	while (i != NONE && addr >= ri->r[i].hi)
		i = ri->r[i].encl;
	return i == NONE ? NULL : &ri->r[i];
}

static void range_index_release(struct range_index *ri)
{
	free(ri->r);
	memset(ri, 0, sizeof(*ri));
}

/* ---- demangling ---- */

static bool looks_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/*
 * libiberty's automatic style tries Rust (legacy and v0) before the C++
 * ABI, which is what we want: legacy Rust names are valid C++ names too.
 * Passing DMGL_RUST would switch C++ off.
 */
const char *sym_demangle(struct symbolizer *s, const char *name)
{
	int64_t idx;

	if (!name || !looks_mangled(name))
		return name;
	idx = strtab_intern_str(&s->strs, name);
	if ((size_t)idx >= s->nr_demangled) {
		size_t n = s->strs.nr > (size_t)idx ? s->strs.nr : (size_t)idx + 1;

		n = n < 1024 ? 1024 : n * 2;
		s->demangled = xrealloc(s->demangled, n * sizeof(*s->demangled));
		for (size_t i = s->nr_demangled; i < n; i++)
			s->demangled[i] = -1;
		s->nr_demangled = n;
	}
	if (s->demangled[idx] < 0) {
		char *dem = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
		int64_t r = dem ? strtab_intern_str(&s->strs, dem) : idx;

		free(dem);
		s->demangled[idx] = r;
	}
	if (s->demangled[idx] == idx)
		return name;
	return strtab_get(&s->strs, s->demangled[idx]);
}

/* ---- symbols ---- */

/* A symbol read from a table, before aliases are resolved. */
struct sym_cand {
	uint64_t addr, size;
	uint64_t sec_end;	/* end of its section, 0 when unknown */
	const char *name;
	int rank_type;		/* 0 function, 1 other code, 2 not code */
	int rank_bind;		/* 0 global, 1 weak, 2 local */
	int underscores;
	size_t len;
};

static void sym_cand_set_name(struct sym_cand *c, const char *name)
{
	c->name = name;
	c->len = strlen(name);
	c->underscores = 0;
	while (name[c->underscores] == '_')
		c->underscores++;
}

static int sym_cand_cmp(const void *a_, const void *b_)
{
	const struct sym_cand *a = a_, *b = b_;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank_type != b->rank_type)
		return a->rank_type - b->rank_type;
	if (a->rank_bind != b->rank_bind)
		return a->rank_bind - b->rank_bind;
	if (a->underscores != b->underscores)
		return a->underscores - b->underscores;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return strcmp(a->name, b->name);
}

/*
 * Turn candidates into d->syms. Aliases (several names at one address)
 * resolve deterministically to one: a FUNC symbol over other code symbols,
 * then global over weak over local, then fewer leading underscores, then
 * the shorter name, then the first in byte order. The kept symbol's size is
 * the largest among its aliases. A symbol of size 0 extends to the next
 * symbol (of any kind), and not past the end of its section. Addresses whose
 * best candidate is not code (rank_type 2) only bound the others.
 */
static void syms_build(struct sym_dso *d, struct sym_cand *c, size_t nr)
{
	size_t i = 0;

	if (!nr)
		return;
	qsort(c, nr, sizeof(*c), sym_cand_cmp);
	d->syms = xcalloc(nr, sizeof(*d->syms));
	while (i < nr) {
		size_t j = i + 1;
		uint64_t size = c[i].size, end;

		while (j < nr && c[j].addr == c[i].addr) {
			if (c[j].rank_type < 2 && c[j].size > size)
				size = c[j].size;
			j++;
		}
		if (size) {
			end = c[i].addr + size;
			if (end < c[i].addr)
				end = UINT64_MAX;
		} else {
			end = j < nr ? c[j].addr : c[i].sec_end;
			if (c[i].sec_end > c[i].addr && end > c[i].sec_end)
				end = c[i].sec_end;
		}
		if (c[i].rank_type < 2 && end > c[i].addr) {
			struct elf_sym *es = &d->syms[d->nr_syms];

			es->addr = c[i].addr;
			es->end = end;
			es->name = c[i].name;
			range_add(&d->sym_ranges, es->addr, es->end,
				  (uint32_t)d->nr_syms, 0);
			d->nr_syms++;
		}
		i = j;
	}
	range_index_build(&d->sym_ranges, &d->range_scratch);
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, shdr) && shdr->sh_type == type)
			return scn;
	}
	return NULL;
}

/*
 * Read the code symbols of the table in 'elf' of section type 'type' into
 * candidates; 'adjust' is subtracted from their values (a debug file's
 * addresses to the main file's). Returns how many were added, -1 when the
 * file has no such table.
 */
static ssize_t read_symtab(struct sym_dso *d, Elf *elf, Elf64_Word type,
			   uint64_t adjust, struct sym_cand **cand,
			   size_t *nr, size_t *alloc)
{
	GElf_Shdr shdr, sec;
	Elf_Scn *scn = find_section(elf, type, &shdr), *xscn;
	Elf_Data *data, *xdata = NULL;
	size_t symsz, count, before = *nr, shnum;

	if (!scn)
		return -1;
	data = elf_getdata(scn, NULL);
	symsz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!data || !symsz || elf_getshdrnum(elf, &shnum))
		return 0;
	count = data->d_size / symsz;
	/* extended section indices, for files with more than 65279 sections */
	xscn = NULL;
	while ((xscn = elf_nextscn(elf, xscn))) {
		GElf_Shdr xs;

		if (gelf_getshdr(xscn, &xs) && xs.sh_type == SHT_SYMTAB_SHNDX &&
		    xs.sh_link == elf_ndxscn(scn)) {
			xdata = elf_getdata(xscn, NULL);
			break;
		}
	}
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		Elf32_Word xndx = 0;
		size_t shndx;
		const char *name;
		struct sym_cand *c;
		int st_type, st_bind;

		if (!gelf_getsymshndx(data, xdata, (int)i, &sym, &xndx))
			continue;
		st_type = GELF_ST_TYPE(sym.st_info);
		st_bind = GELF_ST_BIND(sym.st_info);
		if (st_type != STT_FUNC && st_type != STT_GNU_IFUNC &&
		    st_type != STT_NOTYPE)
			continue;
		shndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
		if (shndx == SHN_UNDEF || shndx >= shnum ||
		    (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
			continue;
		if (!gelf_getshdr(elf_getscn(elf, shndx), &sec) ||
		    !(sec.sh_flags & SHF_EXECINSTR) || sec.sh_type == SHT_NULL)
			continue;
		name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		/* ARM mapping symbols ($x, $d) and assembler locals name no code */
		if (!name || !*name || name[0] == '$' || !strncmp(name, ".L", 2))
			continue;
		ALLOC_GROW(*cand, *nr + 1, *alloc);
		c = &(*cand)[(*nr)++];
		memset(c, 0, sizeof(*c));
		c->addr = sym.st_value - adjust;
		c->size = sym.st_size;
		c->sec_end = sec.sh_addr + sec.sh_size - adjust;
		c->rank_type = st_type == STT_NOTYPE ? 1 : 0;
		c->rank_bind = st_bind == STB_GLOBAL ? 0 : st_bind == STB_WEAK ? 1 : 2;
		sym_cand_set_name(c, intern(d->s, name));
	}
	return (ssize_t)(*nr - before);
}

/* ---- PLT stubs ---- */

/*
 * PLT stubs are in no symbol table; they are named as perf and objdump name
 * them, "<target>@plt", from the GOT slot each stub jumps through: the
 * stub's instructions give the slot's address, the dynamic relocation of
 * that slot (JUMP_SLOT, GLOB_DAT for .plt.got, IRELATIVE) gives the target.
 * Matching slots, not counting entries, keeps the names right whatever the
 * order of .rela.plt (IRELATIVE entries come last in it, not in the PLT),
 * with .plt.sec (IBT), with -z now and in static binaries' .iplt.
 */

/* A GOT slot that dynamic linking fills, and what with. */
struct got_slot {
	uint64_t addr;
	const char *name;	/* the target symbol; NULL for IRELATIVE */
	uint64_t resolver;	/* IRELATIVE: the resolver's address */
};

static int got_slot_cmp(const void *a_, const void *b_)
{
	const struct got_slot *a = a_, *b = b_;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return 0;
}

/* 1 a relocation that fills a slot a stub can jump through, 2 IRELATIVE, else 0. */
static int plt_reloc_kind(unsigned machine, uint64_t type)
{
	switch (machine) {
	case EM_X86_64:
		if (type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT)
			return 1;
		return type == R_X86_64_IRELATIVE ? 2 : 0;
	case EM_AARCH64:
		if (type == R_AARCH64_JUMP_SLOT || type == R_AARCH64_GLOB_DAT)
			return 1;
		return type == R_AARCH64_IRELATIVE ? 2 : 0;
	default:
		return 0;
	}
}

/*
 * The GOT slots filled by the file's allocated relocation sections, sorted:
 * .rela.plt's, and with 'all' (for .plt.got) also .rela.dyn's, which can
 * hold hundreds of thousands of other relocations.
 */
static size_t read_got_slots(struct sym_dso *d, unsigned machine, size_t shstrndx,
			     bool all, struct got_slot **out)
{
	Elf *elf = d->elf;
	Elf_Scn *scn = NULL;
	struct got_slot *slots = NULL;
	size_t nr = 0, alloc = 0, shnum;

	*out = NULL;
	if (elf_getshdrnum(elf, &shnum))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Data *data, *symdata = NULL;
		size_t entsz, count, nsyms = 0, symsz;
		const char *sname;
		bool rela;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL))
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!all && (!sname || (strcmp(sname, ".rela.plt") && strcmp(sname, ".rel.plt") &&
					strcmp(sname, ".rela.iplt") && strcmp(sname, ".rel.iplt"))))
			continue;
		rela = sh.sh_type == SHT_RELA;
		entsz = gelf_fsize(elf, rela ? ELF_T_RELA : ELF_T_REL, 1, EV_CURRENT);
		data = elf_getdata(scn, NULL);
		if (!data || !entsz)
			continue;
		count = data->d_size / entsz;
		if (count > INT_MAX)
			count = INT_MAX;
		/* the symbols the relocations name; none in a static binary */
		symsz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
		if (sh.sh_link && sh.sh_link < shnum &&
		    gelf_getshdr(elf_getscn(elf, sh.sh_link), &symsh) &&
		    (symsh.sh_type == SHT_DYNSYM || symsh.sh_type == SHT_SYMTAB) &&
		    (symdata = elf_getdata(elf_getscn(elf, sh.sh_link), NULL)) && symsz)
			nsyms = symdata->d_size / symsz;
		for (size_t i = 0; i < count; i++) {
			GElf_Rela r;
			GElf_Rel rel;
			GElf_Sym sym;
			size_t symi;
			const char *name = NULL;
			int kind;

			if (rela) {
				if (!gelf_getrela(data, (int)i, &r))
					continue;
			} else {
				if (!gelf_getrel(data, (int)i, &rel))
					continue;
				r.r_offset = rel.r_offset;
				r.r_info = rel.r_info;
				r.r_addend = 0;
			}
			kind = plt_reloc_kind(machine, GELF_R_TYPE(r.r_info));
			if (!kind || (kind == 2 && !rela))
				continue;	/* REL keeps the resolver in the slot */
			if (kind == 1) {
				symi = GELF_R_SYM(r.r_info);
				if (!symi || symi >= nsyms || !gelf_getsym(symdata, (int)symi, &sym))
					continue;
				name = elf_strptr(elf, symsh.sh_link, sym.st_name);
				if (!name || !*name)
					continue;
			}
			ALLOC_GROW(slots, nr + 1, alloc);
			slots[nr].addr = r.r_offset;
			slots[nr].name = name;
			slots[nr].resolver = (uint64_t)r.r_addend;
			nr++;
		}
	}
	if (nr)
		qsort(slots, nr, sizeof(*slots), got_slot_cmp);
	*out = slots;
	return nr;
}

static const struct got_slot *got_slot_find(const struct got_slot *slots, size_t nr,
					    uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (slots[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nr && slots[lo].addr == addr ? &slots[lo] : NULL;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/*
 * The GOT slot a stub at 'pos' of a PLT section jumps through: on x86-64
 * "[endbr64] [bnd] jmp *disp32(%rip)", on arm64 "adrp x16, page; ldr x17,
 * [x16, #off]" (a stub's "bti c" before them is found by the caller).
 * 'len' is how many bytes the stub's decoded instructions take.
 */
static bool plt_stub_slot(unsigned machine, const unsigned char *buf, size_t size,
			  size_t pos, uint64_t addr, uint64_t *slot, size_t *len)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t i = pos;

	if (machine == EM_X86_64) {
		if (size - i >= 4 && !memcmp(buf + i, endbr64, 4))
			i += 4;
		if (i < size && buf[i] == 0xf2)
			i++;
		if (size - i < 6 || buf[i] != 0xff || buf[i + 1] != 0x25)
			return false;
		i += 6;
		*slot = addr + (i - pos) + (uint64_t)(int64_t)(int32_t)le32(buf + i - 4);
		*len = i - pos;
		return true;
	}
	if (machine == EM_AARCH64) {
		uint32_t adrp, ldr;
		uint64_t imm;

		if (size - i < 8)
			return false;
		adrp = le32(buf + i);
		ldr = le32(buf + i + 4);
		if ((adrp & 0x9f00001f) != 0x90000010 ||	/* adrp x16 */
		    (ldr & 0xffc003ff) != 0xf9400211)		/* ldr x17, [x16, #imm] */
			return false;
		imm = (uint64_t)((adrp >> 5) & 0x7ffff) << 2 | ((adrp >> 29) & 3);
		if (imm & (UINT64_C(1) << 20))
			imm |= ~((UINT64_C(1) << 21) - 1);	/* sign-extend 21 bits */
		*slot = (addr & ~UINT64_C(0xfff)) + (imm << 12) +
			(uint64_t)((ldr >> 10) & 0xfff) * 8;
		*len = 8;
		return true;
	}
	return false;
}

/* A stub found in a PLT section: where it starts, what it jumps through. */
struct plt_stub {
	uint64_t off;
	const struct got_slot *slot;
};

static void plt_cand_add(struct sym_dso *d, struct sym_cand **cand, size_t *nr,
			 size_t *alloc, uint64_t addr, uint64_t size,
			 uint64_t sec_end, const char *name)
{
	struct sym_cand *c;

	ALLOC_GROW(*cand, *nr + 1, *alloc);
	c = &(*cand)[(*nr)++];
	memset(c, 0, sizeof(*c));
	c->addr = addr;
	c->size = size;
	c->sec_end = sec_end;
	/* any symbol of the file at the same address names it instead */
	c->rank_type = 1;
	c->rank_bind = 3;
	sym_cand_set_name(c, intern(d->s, name));
}

/* The best-ranked candidate at 'addr' in sorted candidates, or NULL. */
static const struct sym_cand *cand_at(const struct sym_cand *c, size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nr && c[lo].addr == addr && c[lo].rank_type < 2 ? &c[lo] : NULL;
}

/*
 * The name of a stub: the target's, else for IRELATIVE the symbol at the
 * resolver's address (the ifunc), else objdump's "*ABS*+0x<resolver>".
 */
static char *plt_stub_name(const struct got_slot *slot, const struct sym_cand *c,
			   size_t nr_real)
{
	const struct sym_cand *ifunc;

	if (slot->name)
		return xstrfmt("%s@plt", slot->name);
	ifunc = cand_at(c, nr_real, slot->resolver);
	if (ifunc)	/* without a version: "memcpy@@GLIBC_2.14" in a .symtab */
		return xstrfmt("%.*s@plt", (int)strcspn(ifunc->name, "@"), ifunc->name);
	return xstrfmt("*ABS*+0x%" PRIx64 "@plt", slot->resolver);
}

/*
 * Name one PLT section's stubs. A stub extends to the next one, and no
 * further than the distance between stubs (the entry size); the bytes no
 * stub covers (the PLT0 header, lazy-binding entries of an IBT .plt) are
 * "[plt]". 'c' has the file's own symbols, sorted, in its first 'nr_real'.
 */
static void plt_section(struct sym_dso *d, unsigned machine, Elf_Scn *scn,
			const GElf_Shdr *sh, const struct got_slot *slots, size_t nr_slots,
			size_t nr_real, struct sym_cand **cand, size_t *nr, size_t *alloc)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const unsigned char *buf;
	size_t size, step = machine == EM_AARCH64 ? 4 : 8;
	struct plt_stub *stubs = NULL;
	size_t nr_stubs = 0, alloc_stubs = 0;
	uint64_t stride = UINT64_MAX, covered = 0, sec_end = sh->sh_addr + sh->sh_size;

	if (!data || !data->d_buf || sec_end < sh->sh_addr)
		return;
	buf = data->d_buf;
	size = data->d_size < sh->sh_size ? data->d_size : sh->sh_size;
	for (size_t pos = 0; pos + step <= size; ) {
		const struct got_slot *gs;
		uint64_t slot;
		size_t len, start = pos;

		if (!plt_stub_slot(machine, buf, size, pos, sh->sh_addr + pos, &slot, &len) ||
		    !(gs = got_slot_find(slots, nr_slots, slot))) {
			pos += step;
			continue;
		}
		/* arm64 BTI: the stub starts at its "bti c" */
		if (machine == EM_AARCH64 && pos >= 4 && le32(buf + pos - 4) == 0xd503245f &&
		    (!nr_stubs || pos - 4 > stubs[nr_stubs - 1].off))
			start = pos - 4;
		ALLOC_GROW(stubs, nr_stubs + 1, alloc_stubs);
		stubs[nr_stubs].off = start;
		stubs[nr_stubs].slot = gs;
		if (nr_stubs && start - stubs[nr_stubs - 1].off < stride)
			stride = start - stubs[nr_stubs - 1].off;
		nr_stubs++;
		pos += (len + step - 1) / step * step;
	}
	if (nr_stubs == 1 && sh->sh_entsize)
		stride = sh->sh_entsize;
	for (size_t k = 0; k < nr_stubs; k++) {
		uint64_t lo = stubs[k].off;
		uint64_t hi = k + 1 < nr_stubs ? stubs[k + 1].off : size;
		char *name;

		if (hi - lo > stride)
			hi = lo + stride;
		if (lo > covered)
			plt_cand_add(d, cand, nr, alloc, sh->sh_addr + covered,
				     lo - covered, sec_end, "[plt]");
		name = plt_stub_name(stubs[k].slot, *cand, nr_real);
		plt_cand_add(d, cand, nr, alloc, sh->sh_addr + lo, hi - lo, sec_end, name);
		free(name);
		covered = hi;
	}
	if (size > covered)
		plt_cand_add(d, cand, nr, alloc, sh->sh_addr + covered, size - covered,
			     sec_end, "[plt]");
	free(stubs);
}

/* The next section after 'scn' that holds PLT stubs, or NULL. */
static Elf_Scn *next_plt_section(Elf *elf, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh,
				 const char **name)
{
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, sh) || sh->sh_type != SHT_PROGBITS ||
		    !(sh->sh_flags & SHF_EXECINSTR))
			continue;
		*name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (*name && (!strcmp(*name, ".plt") || !strcmp(*name, ".plt.sec") ||
			      !strcmp(*name, ".plt.got") || !strcmp(*name, ".iplt")))
			return scn;
	}
	return NULL;
}

/* Add candidates for the PLT stubs of d->elf (x86-64 and arm64). */
static void synth_plt(struct sym_dso *d, struct sym_cand **cand, size_t *nr, size_t *alloc)
{
	struct got_slot *slots = NULL;
	size_t nr_slots, shstrndx, nr_real = *nr;
	Elf_Scn *first, *scn;
	GElf_Ehdr ehdr;
	GElf_Shdr sh;
	const char *name;
	bool plt_got = false;

	if (!gelf_getehdr(d->elf, &ehdr) ||
	    (ehdr.e_machine != EM_X86_64 && ehdr.e_machine != EM_AARCH64) ||
	    elf_getshdrstrndx(d->elf, &shstrndx))
		return;
	first = next_plt_section(d->elf, shstrndx, NULL, &sh, &name);
	if (!first)
		return;
	for (scn = first; scn; scn = next_plt_section(d->elf, shstrndx, scn, &sh, &name))
		plt_got |= !strcmp(name, ".plt.got");
	nr_slots = read_got_slots(d, ehdr.e_machine, shstrndx, plt_got, &slots);
	/* sorted, to find IRELATIVE resolvers among them */
	if (nr_real)
		qsort(*cand, nr_real, sizeof(**cand), sym_cand_cmp);
	for (scn = first; scn; scn = next_plt_section(d->elf, shstrndx, scn, &sh, &name)) {
		if (gelf_getshdr(scn, &sh))
			plt_section(d, ehdr.e_machine, scn, &sh, slots, nr_slots, nr_real,
				    cand, nr, alloc);
	}
	free(slots);
}

/*
 * .symtab of the file, else of its debug file, else .dynsym; then the PLT
 * stubs of the file.
 */
static void load_symbols(struct sym_dso *d)
{
	struct sym_cand *cand = NULL;
	size_t nr = 0, alloc = 0;
	Elf *debug_elf = d->dw ? dwarf_getelf(d->dw) : NULL;

	if (read_symtab(d, d->elf, SHT_SYMTAB, 0, &cand, &nr, &alloc) <= 0 &&
	    (!debug_elf || debug_elf == d->elf ||
	     read_symtab(d, debug_elf, SHT_SYMTAB, d->dw_adjust, &cand, &nr, &alloc) <= 0))
		read_symtab(d, d->elf, SHT_DYNSYM, 0, &cand, &nr, &alloc);
	synth_plt(d, &cand, &nr, &alloc);
	syms_build(d, cand, nr);
	free(cand);
}

static struct elf_sym *sym_find(struct sym_dso *d, uint64_t vaddr)
{
	const struct range *r = range_find(&d->sym_ranges, vaddr);

	return r ? &d->syms[r->item] : NULL;
}

/* A PLT stub's "<target>@plt" demangles as "<demangled target>@plt". */
static const char *demangle_plt(struct symbolizer *s, const char *name)
{
	size_t len = strlen(name);
	const char *dem;
	char *target, *full;

	if (len <= 4 || strcmp(name + len - 4, "@plt"))
		return sym_demangle(s, name);
	target = xstrndup(name, len - 4);
	dem = sym_demangle(s, target);
	if (dem == target) {
		free(target);
		return name;
	}
	full = xstrfmt("%s@plt", dem);
	dem = intern(s, full);
	free(full);
	free(target);
	return dem;
}

static const char *sym_name(struct sym_dso *d, struct elf_sym *es)
{
	if (!es->dname)
		es->dname = looks_mangled(es->name) ? demangle_plt(d->s, es->name) : es->name;
	return es->dname;
}

static void fill_sym_frame(struct sym_dso *d, struct elf_sym *es,
			   struct sym_frame *f, const char *file, int line)
{
	f->name = sym_name(d, es);
	f->system_name = es->name;
	f->file = file;
	f->line = line;
	f->start_line = 0;
	f->inlined = false;
}

/* ---- DWARF ---- */

static void dwarf_broken(struct sym_dso *d, const char *what)
{
	if (d->warned_dwarf)
		return;
	d->warned_dwarf = true;
	warning("broken debug info in '%s' (%s): %s; some lines or inline frames will be missing",
		d->path, what, dwarf_errmsg(-1));
}

/* Index the compilation units' address ranges. */
static void index_cus(struct sym_dso *d)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t unit_type;
	int r;

	while ((r = dwarf_get_units(d->dw, cu, &cu, &version, &unit_type,
				    &cudie, &subdie)) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		struct cu *c;
		size_t before = d->cu_ranges.nr;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton)
			continue;
		if (d->nr_cus >= NONE - 1)
			break;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (lo)		/* 0: code the linker discarded */
				range_add(&d->cu_ranges, lo, hi, (uint32_t)d->nr_cus, 0);
		}
		if (off < 0)
			dwarf_broken(d, "unit ranges");
		if (d->cu_ranges.nr == before)
			continue;
		ALLOC_GROW(d->cus, d->nr_cus + 1, d->alloc_cus);
		c = &d->cus[d->nr_cus++];
		memset(c, 0, sizeof(*c));
		/* a skeleton unit's DIEs are in its split unit, when found */
		c->die = (unit_type == DW_UT_skeleton &&
			  dwarf_tag(&subdie) == DW_TAG_compile_unit) ? subdie : cudie;
		c->line_die = cudie;
	}
	if (r < 0)
		dwarf_broken(d, "units");
	range_index_build(&d->cu_ranges, &d->range_scratch);
}

/*
 * A source file of the unit as people and addr2line name it: a relative
 * name (libdw joins it with the include directory, which may itself be
 * relative, "../lib/compress") joined with the unit's DW_AT_comp_dir, then
 * normalized; interned.
 */
static const char *source_file(struct symbolizer *s, const struct cu *cu, const char *name)
{
	if (!name || !*name)
		return "";
	path_join_normalize(&s->path, cu->comp_dir, name);
	return intern(s, s->path.buf);
}

static const char *cu_file(struct symbolizer *s, struct cu *cu, Dwarf_Word idx)
{
	if (idx >= cu->nr_files)
		return "";
	if (!cu->file_names[idx]) {
		if (cu->lfiles) {
			const struct dwarf_line_file *f = &cu->lfiles[idx];
			struct strbuf name = STRBUF_INIT;

			/* the include directory first: it may be relative too */
			path_join_normalize(&name, f->dir, f->name);
			cu->file_names[idx] = source_file(s, cu, name.buf);
			strbuf_release(&name);
		} else {
			cu->file_names[idx] = source_file(s, cu, dwarf_filesrc(cu->files, idx, NULL, NULL));
		}
	}
	return cu->file_names[idx];
}

/* A file of a row: the unit's table's (as cu_file()), or one of another table libdw gave. */
static const char *cu_row_file(struct symbolizer *s, struct cu *cu, uint32_t idx)
{
	if (idx < cu->nr_files)
		return cu_file(s, cu, idx);
	idx -= (uint32_t)cu->nr_files;
	return idx < cu->nr_extra_files ? cu->extra_files[idx] : "";
}

/*
 * The order of a unit's rows: by address; a sequence's end before another
 * starting at the same address; else as the table has them ('order', the
 * index in it). Among rows at one address the last wins, as in addr2line.
 */
static inline int row_cmp(uint64_t a_addr, bool a_end, uint32_t a_order,
			  uint64_t b_addr, bool b_end, uint32_t b_order)
{
	if (a_addr != b_addr)
		return a_addr < b_addr ? -1 : 1;
	if (a_end != b_end)
		return a_end ? -1 : 1;
	return a_order < b_order ? -1 : a_order > b_order;
}

/* A sequence of a line table: rows [lo, hi) of it, the last its end. */
struct line_seq {
	uint64_t addr;
	bool end;
	size_t lo, hi;
};

static int line_seq_cmp(const void *a_, const void *b_)
{
	const struct line_seq *a = a_, *b = b_;

	return row_cmp(a->addr, a->end, (uint32_t)a->lo, b->addr, b->end, (uint32_t)b->lo);
}

/* A row with its order, for the rare table that needs a whole sort. */
struct sort_row {
	uint64_t addr;
	struct dwarf_line_row info;
	uint32_t order;
};

static int sort_row_cmp(const void *a_, const void *b_)
{
	const struct sort_row *a = a_, *b = b_;

	return row_cmp(a->addr, a->info.file == LINE_END, a->order,
		       b->addr, b->info.file == LINE_END, b->order);
}

/*
 * Whether the table's rows are in order but for ends after rows at their
 * address (an empty row just before its sequence's end, as GCC writes
 * them), which end_first() puts right: ascending, no sequence at address
 * 0 to leave out.
 */
static bool rows_in_order(const struct dwarf_line_table *t)
{
	const uint64_t *addr = t->addrs;
	const struct dwarf_line_row *row = t->rows;
	bool seq_start = true;

	for (size_t i = 0; i < t->nr_rows; i++) {
		if (seq_start && !addr[i])
			return false;
		if (i && addr[i] < addr[i - 1])
			return false;
		seq_start = row[i].file == LINE_END;
	}
	return true;
}

/*
 * The end at 'at' moved before the rows of its sequence at its address:
 * it sorts before them (row_cmp()), which keep their order.
 */
static void end_first(uint64_t *addr, struct dwarf_line_row *row, size_t at)
{
	struct dwarf_line_row end = row[at];

	for (; at > 0 && addr[at - 1] == addr[at] && row[at - 1].file != LINE_END; at--)
		row[at] = row[at - 1];
	row[at] = end;
}

/*
 * The rows of the sequences in the order given, copied in one pass, when
 * that order is the sorted one but for ends after rows at their address
 * (end_first() moves them): false when a row is out of place, and nothing
 * is kept. A row that says what the row before it says (same file and
 * line, neither an end) is left out: the lookup that found it finds the
 * one before, with the same answer. The last row is always kept (it
 * becomes the unit's end).
 */
static bool gather_sorted(struct cu *cu, const struct dwarf_line_table *t,
			  const struct line_seq *seq, size_t nr_seq, size_t total)
{
	uint64_t *addr = xmalloc((total ? total : 1) * sizeof(*addr));
	struct dwarf_line_row *info = xmalloc((total ? total : 1) * sizeof(*info));
	uint64_t prev_addr = 0;
	bool prev_end = false, first = true;
	uint32_t prev_order = 0;
	size_t at = 0, left = total;

	for (size_t k = 0; k < nr_seq; k++) {
		for (size_t i = seq[k].lo; i < seq[k].hi; i++) {
			uint64_t a = t->addrs[i];
			struct dwarf_line_row r = t->rows[i];
			bool end = r.file == LINE_END;

			/* an end after rows of its sequence at its address: end_first() */
			bool tie = end && !prev_end && a == prev_addr && i > seq[k].lo;

			if (!first && !tie &&
			    row_cmp(prev_addr, prev_end, prev_order, a, end, (uint32_t)i) > 0) {
				free(addr);
				free(info);
				return false;
			}
			first = false;
			if (!tie) {	/* after a tie the last row in order is still the one before */
				prev_addr = a;
				prev_end = end;
				prev_order = (uint32_t)i;
			}
			if (--left && at && !end && info[at - 1].file == r.file &&
			    info[at - 1].line == r.line)
				continue;
			addr[at] = a;
			info[at++] = r;
			if (end)
				end_first(addr, info, at - 1);
		}
	}
	if (at < total) {
		addr = xrealloc(addr, (at ? at : 1) * sizeof(*addr));
		info = xrealloc(info, (at ? at : 1) * sizeof(*info));
	}
	cu->line_addr = addr;
	cu->line_info = info;
	cu->nr_lines = at;
	return true;
}

/*
 * The unit's rows from a line table's (dwarf-line.c's, or libdw's in the
 * same arrays), in the table's order: without the sequences at address 0
 * (code the linker discarded), sorted as row_cmp() orders them (a total
 * order, so any sort gives the one result), the last row an end (as
 * libdw marks it: compilers may forget). Most units' tables are one
 * sequence, in order: their arrays are taken as they are, an end after
 * rows at its address moved before them (end_first()). Else the
 * sequences, each ascending, are put in order by their first rows, which
 * usually leaves the rows sorted (gather_sorted()); else (overlapping
 * sequences) a few rows may be out of place, moved by one insertion pass,
 * or more, and all are sorted. Those need all rows: false, and nothing
 * done, for a table read with rows merged (DWARF_LINE_MERGE).
 */
static bool build_lines(struct sym_dso *d, struct cu *cu, struct dwarf_line_table *t)
{
	struct line_seq *seq = NULL;
	size_t nr_seq = 0, alloc_seq = 0, total = 0, lo = 0, moves = 0, n = t->nr_rows;
	bool seq_start = true, skip = false;
	uint64_t *addr;
	struct dwarf_line_row *info;
	uint32_t *order;

	if (n > (1u << 31) - 1)
		n = t->nr_rows = (1u << 31) - 1;
	if (rows_in_order(t)) {
		for (size_t i = 1; i < n; i++) {
			if (t->rows[i].file == LINE_END && t->addrs[i] == t->addrs[i - 1])
				end_first(t->addrs, t->rows, i);
		}
		cu->nr_lines = dwarf_line_detach_rows(t, &cu->line_addr, &cu->line_info);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		bool end = t->rows[i].file == LINE_END;

		if (seq_start) {
			skip = t->addrs[i] == 0;
			lo = i;
		}
		seq_start = end;
		if (skip || (!end && i + 1 < n))
			continue;
		ALLOC_GROW(seq, nr_seq + 1, alloc_seq);
		seq[nr_seq++] = (struct line_seq){ t->addrs[lo], t->rows[lo].file == LINE_END, lo, i + 1 };
		total += i + 1 - lo;
	}
	for (size_t k = 1; k < nr_seq; k++) {
		if (line_seq_cmp(&seq[k - 1], &seq[k]) > 0) {
			qsort(seq, nr_seq, sizeof(*seq), line_seq_cmp);
			break;
		}
	}
	if (gather_sorted(cu, t, seq, nr_seq, total))
		goto out;
	if (t->merged) {
		free(seq);
		return false;
	}
	SCRATCH_GROW(d->line_order, total, d->alloc_line_order);
	cu->line_addr = addr = xmalloc((total ? total : 1) * sizeof(*addr));
	cu->line_info = info = xmalloc((total ? total : 1) * sizeof(*info));
	order = d->line_order;
	for (size_t k = 0, at = 0; k < nr_seq; k++) {
		for (size_t i = seq[k].lo; i < seq[k].hi; i++, at++) {
			addr[at] = t->addrs[i];
			info[at] = t->rows[i];
			order[at] = (uint32_t)i;
		}
	}
	cu->nr_lines = total;
	for (size_t i = 1; i < total; i++) {
		for (size_t j = i; j > 0 && row_cmp(addr[j - 1], info[j - 1].file == LINE_END, order[j - 1],
						    addr[j], info[j].file == LINE_END, order[j]) > 0; j--) {
			uint64_t ta = addr[j];
			struct dwarf_line_row ti = info[j];
			uint32_t to = order[j];

			addr[j] = addr[j - 1];
			info[j] = info[j - 1];
			order[j] = order[j - 1];
			addr[j - 1] = ta;
			info[j - 1] = ti;
			order[j - 1] = to;
			if (++moves > total)
				goto sort_whole;
		}
	}
	goto out;
sort_whole: {
		struct sort_row *all = xmalloc(total * sizeof(*all));

		for (size_t i = 0; i < total; i++)
			all[i] = (struct sort_row){ addr[i], info[i], order[i] };
		qsort(all, total, sizeof(*all), sort_row_cmp);
		for (size_t i = 0; i < total; i++) {
			addr[i] = all[i].addr;
			info[i] = all[i].info;
		}
		free(all);
	}
out:
	free(seq);
	if (cu->nr_lines)
		cu->line_info[cu->nr_lines - 1].file = LINE_END;
	return true;
}

static bool extra_file_eq(const void *table, size_t i, const void *key)
{
	return ((const struct cu *)table)->extra_files[i] == key;
}

/* The file of a libdw row that is not in the unit's table: an extra file's index. */
static uint32_t extra_file(struct cu *cu, const char *file, struct hindex *seen)
{
	uint64_t hash = hash_u64(HASH_SEED, (uint64_t)(uintptr_t)file);
	size_t slot, i;

	if (!*file)
		return LINE_NO_FILE;
	if ((i = hindex_probe(seen, hash, extra_file_eq, cu, file, &slot)) != HINDEX_NONE)
		return (uint32_t)(cu->nr_files + i);
	if (cu->nr_files + cu->nr_extra_files >= LINE_NO_FILE)
		return LINE_NO_FILE;
	ALLOC_GROW(cu->extra_files, cu->nr_extra_files + 1, cu->alloc_extra_files);
	cu->extra_files[cu->nr_extra_files] = file;
	hindex_set(seen, slot, hash, cu->nr_extra_files);
	return (uint32_t)(cu->nr_files + cu->nr_extra_files++);
}

/* The unit's line table read by libdw (dwarf_getsrclines()), for what dwarf-line.c does not read. */
static void load_lines(struct sym_dso *d, struct cu *cu)
{
	struct dwarf_line_table *t = &d->line_scratch;
	struct hindex seen = HINDEX_INIT;
	Dwarf_Attribute attr;
	Dwarf_Lines *lines;
	size_t n;

	if (!dwarf_attr(&cu->line_die, DW_AT_stmt_list, &attr))
		return;
	if (dwarf_getsrclines(&cu->line_die, &lines, &n)) {
		dwarf_broken(d, "line table");
		return;
	}
	t->nr_rows = 0;
	t->merged = false;
	dwarf_line_reserve(t, n);
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		struct dwarf_line_row *row;
		Dwarf_Files *files;
		size_t fidx;
		Dwarf_Addr addr;
		int lineno;
		bool end;

		if (!l || dwarf_lineaddr(l, &addr) || dwarf_lineno(l, &lineno) ||
		    dwarf_lineendsequence(l, &end))
			continue;
		t->addrs[t->nr_rows] = addr;
		row = &t->rows[t->nr_rows++];
		row->line = lineno < 0 ? 0 : lineno;
		row->file = end ? LINE_END : LINE_NO_FILE;
		if (end)
			continue;
		if (!dwarf_line_file(l, &files, &fidx) && files == cu->files)
			row->file = fidx < cu->nr_files ? (uint32_t)fidx : LINE_NO_FILE;
		else
			row->file = extra_file(cu, source_file(d->s, cu, dwarf_linesrc(l, NULL, NULL)),
					       &seen);
	}
	hindex_release(&seen);
	build_lines(d, cu, t);
}

/*
 * The bytes of the DWARF sections the own readers read (dwarf-line.c's,
 * dwarf-info.c's), from the file libdw read the DWARF of. A section they
 * cannot read (still compressed, no bytes) is left out: a reader that
 * needs it fails, and libdw is asked instead.
 */
static int find_dwarf_sections(struct sym_dso *d)
{
	static const char *const names[DWARF_NR_SECTIONS] = {
		[DWARF_INFO] = ".debug_info", [DWARF_ABBREV] = ".debug_abbrev",
		[DWARF_STR] = ".debug_str", [DWARF_LINE_STR] = ".debug_line_str",
		[DWARF_STR_OFFSETS] = ".debug_str_offsets", [DWARF_ADDR] = ".debug_addr",
		[DWARF_RANGES] = ".debug_ranges", [DWARF_RNGLISTS] = ".debug_rnglists",
	};
	Elf *elf = d->dw ? dwarf_getelf(d->dw) : NULL;
	struct dwarf_info_sections sec = { 0 };
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	size_t shstrndx;

	if (d->sec_state)
		return d->sec_state > 0 ? 0 : -1;
	d->sec_state = -1;
	if (!elf || !gelf_getehdr(elf, &ehdr) || elf_getshdrstrndx(elf, &shstrndx))
		return -1;
	sec.big_endian = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;
		int i;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strncmp(name, ".debug_", 7))
			continue;
		/* libdw decompresses the sections it reads; one still compressed is not ours to read */
		if ((sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS ||
		    !(data = elf_getdata(scn, NULL)) || !data->d_buf)
			continue;
		if (!strcmp(name, ".debug_line")) {
			d->line_sec.line = data->d_buf;
			d->line_sec.line_size = data->d_size;
			continue;
		}
		for (i = 0; i < DWARF_NR_SECTIONS && strcmp(name, names[i]); i++)
			;
		if (i < DWARF_NR_SECTIONS) {
			sec.data[i] = data->d_buf;
			sec.size[i] = data->d_size;
		}
	}
	d->line_sec.big_endian = sec.big_endian;
	d->line_sec.line_str = sec.data[DWARF_LINE_STR];
	d->line_sec.line_str_size = sec.size[DWARF_LINE_STR];
	d->line_sec.str = sec.data[DWARF_STR];
	d->line_sec.str_size = sec.size[DWARF_STR];
	dwarf_info_init(&d->info, &sec);
	d->info_usable = sec.data[DWARF_INFO] && sec.data[DWARF_ABBREV];
	d->sec_state = 1;
	return 0;
}

/*
 * The unit's line table read by dwarf-line.c: 0, or -1 when it cannot be
 * (no section bytes, a form or layout it does not read), and libdw is asked.
 */
static int load_lines_own(struct sym_dso *d, struct cu *cu)
{
	struct dwarf_line_table *t = &d->line_scratch;
	Dwarf_Attribute attr;
	Dwarf_Word off;
	Dwarf_Die cudie;
	uint8_t addr_size, offset_size;

	/* a split unit's files are libdw's to find (the skeleton's, or its .dwo's) */
	if (cu->die.cu != cu->line_die.cu || dwarf_cu_getdwarf(cu->line_die.cu) != d->dw ||
	    find_dwarf_sections(d) || !d->line_sec.line)
		return -1;
	if (!dwarf_attr(&cu->line_die, DW_AT_stmt_list, &attr) || dwarf_formudata(&attr, &off) ||
	    !dwarf_diecu(&cu->line_die, &cudie, &addr_size, &offset_size) ||
	    dwarf_line_read(t, &d->line_sec, off, addr_size, DWARF_LINE_MERGE))
		return -1;
	cu->nr_files = t->nr_files;
	cu->lfiles = xmalloc((cu->nr_files ? cu->nr_files : 1) * sizeof(*cu->lfiles));
	memcpy(cu->lfiles, t->files, cu->nr_files * sizeof(*cu->lfiles));
	cu->file_names = xcalloc(cu->nr_files ? cu->nr_files : 1, sizeof(*cu->file_names));
	/* rows merged (a third fewer) unless the sequences overlap: then all */
	if (!build_lines(d, cu, t) &&
	    (dwarf_line_read(t, &d->line_sec, off, addr_size, 0) || !build_lines(d, cu, t)))
		BUG("a line table read twice reads differently");
	return 0;
}

/* The row that holds 'addr', or -1; a search as range_find()'s. */
static ssize_t line_find(struct cu *cu, uint64_t addr)
{
	size_t i;

	if (!cu->nr_lines || cu->line_addr[0] > addr)
		return -1;
	i = cu->line_hint = last_at_or_below(cu->line_addr, sizeof(*cu->line_addr), cu->nr_lines,
					     addr, cu->line_hint);
	if (cu->line_info[i].file == LINE_END)
		return -1;
	return (ssize_t)i;
}

/* Record a function or inlined call that has code; NONE when it has none. */
static uint32_t add_scope(struct sym_dso *d, struct cu *cu, Dwarf_Die *die,
			  uint32_t parent, bool inlined, unsigned depth)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	size_t before = cu->ranges.nr;
	uint32_t idx = (uint32_t)cu->nr_scopes;
	struct scope *sc;

	if (cu->nr_scopes >= NONE - 1)
		return NONE;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		/* as dwarf-info.c: DIEs sharing one range list over and over are no program's */
		if (cu->ranges.nr >= MAX_UNIT_RANGES) {
			dwarf_broken(d, "more function ranges than a unit has");
			break;
		}
		if (lo)
			range_add(&cu->ranges, lo, hi, idx, depth);
	}
	if (off < 0)
		dwarf_broken(d, "function ranges");
	if (cu->ranges.nr == before)
		return NONE;
	ALLOC_GROW(cu->scopes, cu->nr_scopes + 1, cu->alloc_scopes);
	ALLOC_GROW(cu->dies, cu->nr_scopes + 1, cu->alloc_dies);
	cu->dies[cu->nr_scopes] = *die;
	sc = &cu->scopes[cu->nr_scopes++];
	memset(sc, 0, sizeof(*sc));
	sc->off = dwarf_dieoffset(die);
	sc->parent = inlined ? parent : NONE;
	sc->inlined = inlined;
	sc->call_file = UINT32_MAX;
	sc->names = NONE;
	return idx;
}

/*
 * Walk the DIE tree once with libdw: functions and inlined calls with
 * their ranges; the DIEs that may hold them (namespaces, classes, blocks)
 * are entered, the rest (types, variables, parameters) skipped. For the
 * units dwarf-info.c cannot read (split units, references into other
 * files, broken DWARF), which walks them the same way.
 */
static void walk_dies(struct sym_dso *d, struct cu *cu, Dwarf_Die *parent,
		      uint32_t scope, unsigned depth)
{
	Dwarf_Die child;
	int r;

	if (depth > MAX_DIE_DEPTH) {
		dwarf_broken(d, "nesting too deep");
		return;
	}
	r = dwarf_child(parent, &child);
	if (r < 0)
		dwarf_broken(d, "DIE tree");
	if (r)
		return;
	do {
		uint32_t idx;

		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_entry_point:
			idx = add_scope(d, cu, &child, scope, false, depth);
			if (idx != NONE)
				walk_dies(d, cu, &child, idx, depth + 1);
			break;
		case DW_TAG_inlined_subroutine:
			idx = add_scope(d, cu, &child, scope, true, depth);
			if (idx != NONE)
				walk_dies(d, cu, &child, idx, depth + 1);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_with_stmt:
		case DW_TAG_namespace:
		case DW_TAG_module:
			walk_dies(d, cu, &child, scope, depth + 1);
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_interface_type:
			/* C types hold members only; other languages' may hold code */
			if (!cu->is_c)
				walk_dies(d, cu, &child, scope, depth + 1);
			break;
		default:
			break;
		}
		r = dwarf_siblingof(&child, &child);
	} while (r == 0);
	if (r < 0)
		dwarf_broken(d, "DIE tree");
}

/*
 * The unit's scopes and their ranges read by dwarf-info.c: 0, or -1 when
 * they cannot be (a split unit, a form or reference it does not read,
 * broken DWARF), and libdw walks the unit.
 */
static int load_scopes_own(struct sym_dso *d, struct cu *cu)
{
	struct dwarf_info_scopes *t = &d->scope_scratch;
	struct range_index *ri = &cu->ranges;

	if (cu->die.cu != cu->line_die.cu || dwarf_cu_getdwarf(cu->die.cu) != d->dw ||
	    find_dwarf_sections(d) || !d->info_usable ||
	    dwarf_info_scopes(&d->info, dwarf_dieoffset(&cu->die), cu->is_c, t) ||
	    t->nr_scopes >= NONE - 1 || t->nr_ranges >= NONE - 1)
		return -1;
	cu->nr_scopes = cu->alloc_scopes = t->nr_scopes;
	cu->scopes = xmalloc((t->nr_scopes ? t->nr_scopes : 1) * sizeof(*cu->scopes));
	for (size_t i = 0; i < t->nr_scopes; i++) {
		const struct dwarf_info_scope *from = &t->scopes[i];
		struct scope *sc = &cu->scopes[i];

		sc->off = from->die;
		sc->origin = from->origin;
		sc->parent = from->parent;
		sc->inlined = from->inlined;
		sc->call_file = from->inlined && from->call_file < UINT32_MAX ?
				(uint32_t)from->call_file : UINT32_MAX;
		sc->call_line = from->inlined ? from->call_line : 0;
		sc->names = NONE;
	}
	ri->nr = ri->alloc = t->nr_ranges;
	ri->r = xmalloc((t->nr_ranges ? t->nr_ranges : 1) * sizeof(*ri->r));
	for (size_t i = 0; i < t->nr_ranges; i++) {
		const struct dwarf_info_range *from = &t->ranges[i];

		ri->r[i] = (struct range){ from->lo, from->hi, from->scope, from->depth };
	}
	return 0;
}

static int cu_load(struct sym_dso *d, struct cu *cu)
{
	Dwarf_Attribute attr;
	const char *dir;

	if (cu->state)
		return cu->state > 0 ? 0 : -1;
	cu->state = -1;
	cu->comp_dir = "";
	if (dwarf_attr(&cu->line_die, DW_AT_comp_dir, &attr) && (dir = dwarf_formstring(&attr)))
		cu->comp_dir = intern(d->s, dir);
	if (load_lines_own(d, cu)) {
		if (dwarf_getsrcfiles(&cu->die, &cu->files, &cu->nr_files)) {
			cu->files = NULL;
			cu->nr_files = 0;
		}
		cu->file_names = xcalloc(cu->nr_files ? cu->nr_files : 1,
					 sizeof(*cu->file_names));
		load_lines(d, cu);
	}
	switch (dwarf_srclang(&cu->die)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
		cu->is_c = true;
		break;
	default:
		break;
	}
	if (load_scopes_own(d, cu))
		walk_dies(d, cu, &cu->die, NONE, 0);
	range_index_build(&cu->ranges, &d->range_scratch);
	cu->state = 1;
	return 0;
}

/*
 * A function's names as frames give them, from its DWARF names. These
 * point into the DWARF's string sections, which stay mapped as long as
 * the DSO is open (until symbolizer_free()), so they are not copied;
 * only a demangled name is made (and interned).
 */
static void set_names(struct symbolizer *s, const char *link, const char *name, int line,
		      const char **namep, const char **system_namep, int *decl_linep)
{
	*namep = *system_namep = NULL;
	*decl_linep = line > 0 ? line : 0;
	if (link && *link) {
		const char *dem = sym_demangle(s, link);

		*system_namep = link;
		*namep = dem != link || !name || !*name ? dem : name;
	} else if (name && *name) {
		*namep = *system_namep = name;
	}
}

/* A function's names and declaration line, from 'die' and what it refers to. */
static void die_names(struct symbolizer *s, Dwarf_Die *die, const char **namep,
		      const char **system_namep, int *decl_linep)
{
	Dwarf_Attribute attr;
	const char *link = NULL, *name = NULL;
	int line;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		link = dwarf_formstring(&attr);
	if (dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	if (dwarf_decl_line(die, &line))
		line = 0;
	set_names(s, link, name, line, namep, system_namep, decl_linep);
}

/*
 * The same for the DIE at 'off' of the DSO's .debug_info: read by
 * dwarf-info.c, else by libdw. False when neither can read it.
 */
static bool die_names_at(struct sym_dso *d, uint64_t off, const char **namep,
			 const char **system_namep, int *decl_linep)
{
	struct dwarf_info_names n;
	Dwarf_Die die;

	if (!dwarf_info_names(&d->info, off, &n)) {
		set_names(d->s, n.linkage_name, n.name, n.decl_line, namep, system_namep, decl_linep);
		return true;
	}
	if (!dwarf_offdie(d->dw, off, &die))
		return false;
	die_names(d->s, &die, namep, system_namep, decl_linep);
	return true;
}

static uint64_t origin_hash(const Dwarf *dbg, Dwarf_Off off)
{
	return hash_u64(hash_u64(HASH_SEED, (uint64_t)(uintptr_t)dbg), off);
}

static bool origin_eq(const void *table, size_t i, const void *key)
{
	const struct origin *a = &((const struct origin_cache *)table)->v[i], *b = key;

	return a->dbg == b->dbg && a->off == b->off;
}

/*
 * The names of the DIE at 'off' of 'dbg' (which is 'die' when libdw has
 * it already), read once: an abstract origin's are shared by all its
 * inlined copies (a helper inlined a thousand times is resolved once).
 * An index into d->origins.v, NONE when the DIE cannot be read.
 */
static uint32_t names_get(struct sym_dso *d, Dwarf *dbg, Dwarf_Off off, Dwarf_Die *die)
{
	struct origin_cache *oc = &d->origins;
	struct origin key = { .dbg = dbg, .off = off };
	uint64_t hash = origin_hash(key.dbg, key.off);
	struct origin *o;
	size_t s, i;

	if ((i = hindex_probe(&oc->index, hash, origin_eq, oc, &key, &s)) != HINDEX_NONE)
		return (uint32_t)i;
	if (oc->nr >= NONE - 1)
		return NONE;
	ALLOC_GROW(oc->v, oc->nr + 1, oc->alloc);
	o = &oc->v[oc->nr];
	*o = key;
	if (die)
		die_names(d->s, die, &o->name, &o->system_name, &o->decl_line);
	else if (!die_names_at(d, off, &o->name, &o->system_name, &o->decl_line))
		return NONE;
	hindex_set(&oc->index, s, hash, oc->nr);
	return (uint32_t)oc->nr++;
}

/* The entry of no names, for a scope whose DIE cannot be read. */
static uint32_t names_none(struct sym_dso *d)
{
	struct origin_cache *oc = &d->origins;

	if (d->no_names == NONE) {
		ALLOC_GROW(oc->v, oc->nr + 1, oc->alloc);
		memset(&oc->v[oc->nr], 0, sizeof(oc->v[oc->nr]));
		d->no_names = (uint32_t)oc->nr++;
	}
	return d->no_names;
}

/* A scope's names from libdw's DIE: its abstract origin's, else its own. */
static uint32_t scope_names_libdw(struct sym_dso *d, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	uint32_t i;

	if (dwarf_attr(die, DW_AT_abstract_origin, &attr) &&
	    dwarf_formref_die(&attr, &origin) &&
	    (i = names_get(d, dwarf_cu_getdwarf(origin.cu), dwarf_dieoffset(&origin),
			   &origin)) != NONE)
		return i;
	i = names_get(d, dwarf_cu_getdwarf(die->cu), dwarf_dieoffset(die), die);
	return i != NONE ? i : names_none(d);
}

static void scope_resolve(struct sym_dso *d, struct cu *cu, struct scope *sc)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;
	Dwarf_Die die, *dp;
	uint32_t i;

	if (cu->dies) {
		/* walked by libdw: everything from its DIE */
		dp = &cu->dies[sc - cu->scopes];
		sc->names = scope_names_libdw(d, dp);
		if (sc->inlined) {
			if (dwarf_attr(dp, DW_AT_call_line, &attr) &&
			    !dwarf_formudata(&attr, &w))
				sc->call_line = w > INT_MAX ? 0 : (int)w;
			if (dwarf_attr(dp, DW_AT_call_file, &attr) &&
			    !dwarf_formudata(&attr, &w))
				sc->call_file = w < UINT32_MAX ? (uint32_t)w : UINT32_MAX;
		}
		return;
	}
	/* walked by dwarf-info.c: the call site is known, the names are read now */
	if (sc->origin == DWARF_INFO_FOREIGN) {
		/* an origin in another file (dwz): libdw's to follow */
		sc->names = dwarf_offdie(d->dw, sc->off, &die) ? scope_names_libdw(d, &die)
							      : names_none(d);
		return;
	}
	if (sc->origin && (i = names_get(d, d->dw, sc->origin, NULL)) != NONE) {
		sc->names = i;
		return;
	}
	i = names_get(d, d->dw, sc->off, NULL);
	sc->names = i != NONE ? i : names_none(d);
}

/* A scope's names, read on first use; valid until the next names are read. */
static const struct origin *scope_names(struct sym_dso *d, struct cu *cu, struct scope *sc)
{
	if (sc->names == NONE)
		scope_resolve(d, cu, sc);
	return &d->origins.v[sc->names];
}

/*
 * The inline chain at 'vaddr' from DWARF: the innermost scope with the line
 * table's file:line, then each caller with the call site of the scope below.
 */
static int dwarf_lookup(struct sym_dso *d, uint64_t vaddr, struct elf_sym *es,
			struct sym_frame *frames, int max)
{
	uint64_t addr = vaddr + d->dw_adjust;
	const struct range *r = range_find(&d->cu_ranges, addr);
	ssize_t row;
	const char *file;
	struct scope *sc;
	struct cu *cu;
	int line, n = 0;

	if (!r)
		return 0;
	cu = &d->cus[r->item];
	if (cu_load(d, cu))
		return 0;
	row = line_find(cu, addr);
	file = row < 0 ? "" : cu_row_file(d->s, cu, cu->line_info[row].file);
	line = row < 0 ? 0 : cu->line_info[row].line;
	r = range_find(&cu->ranges, addr);
	if (!r) {
		/* a line without a function: name it from the symbol table */
		if (!es)
			return 0;
		fill_sym_frame(d, es, &frames[0], file, line);
		return 1;
	}
	sc = &cu->scopes[r->item];
	for (;;) {
		struct sym_frame *f = &frames[n++];

		const struct origin *o = scope_names(d, cu, sc);

		f->name = o->name;
		f->system_name = o->system_name;
		if (!f->name) {
			f->name = !sc->inlined && es ? sym_name(d, es) : unknown_name;
			f->system_name = !sc->inlined && es ? es->name : unknown_name;
		}
		f->file = file;
		f->line = line;
		f->start_line = o->decl_line;
		f->inlined = sc->inlined;
		if (!sc->inlined || n == max)
			break;
		file = cu_file(d->s, cu, sc->call_file);
		line = sc->call_line;
		if (sc->parent == NONE) {
			/* an inlined call outside any function: end at the symbol */
			if (es)
				fill_sym_frame(d, es, &frames[n++], file, line);
			else
				f->inlined = false;
			break;
		}
		sc = &cu->scopes[sc->parent];
	}
	return n;
}

/* ---- DSOs ---- */

static void load_segments(struct sym_dso *d)
{
	size_t phnum;

	if (elf_getphdrnum(d->elf, &phnum))
		return;
	d->segs = xcalloc(phnum ? phnum : 1, sizeof(*d->segs));
	/* executable segments first: they are where samples land */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(d->elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    !ph.p_filesz || ph.p_offset + ph.p_filesz < ph.p_offset)
				continue;
			if (!!(ph.p_flags & PF_X) != (pass == 0))
				continue;
			d->segs[d->nr_segs].off = ph.p_offset;
			d->segs[d->nr_segs].size = ph.p_filesz;
			d->segs[d->nr_segs].vaddr = ph.p_vaddr;
			d->nr_segs++;
		}
	}
}

static bool offset_to_vaddr(const struct sym_dso *d, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < d->nr_segs; i++) {
		const struct segment *sg = &d->segs[i];

		if (off >= sg->off && off - sg->off < sg->size) {
			*vaddr = sg->vaddr + (off - sg->off);
			return true;
		}
	}
	return false;
}

static void set_build_id(struct sym_dso *d, const unsigned char *bits, int len)
{
	static const char hex[] = "0123456789abcdef";
	char *buf;

	if (len <= 0 || len > 64) {
		d->build_id = "";
		return;
	}
	buf = xmalloc((size_t)len * 2 + 1);
	for (int i = 0; i < len; i++) {
		buf[2 * i] = hex[bits[i] >> 4];
		buf[2 * i + 1] = hex[bits[i] & 15];
	}
	buf[2 * len] = '\0';
	d->build_id = intern(d->s, buf);
	free(buf);
}

static bool extent_fits(uint64_t off, uint64_t size, uint64_t file_size)
{
	return off <= file_size && size <= file_size - off;
}

/*
 * Whether the program headers, the section headers and every section's
 * bytes lie inside the file: a truncated copy fails this (libelf would
 * only fail later, section by section).
 */
static bool layout_fits(Elf *elf, const GElf_Ehdr *ehdr, uint64_t file_size)
{
	Elf_Scn *scn = NULL;
	size_t phnum, shnum;

	if (elf_getphdrnum(elf, &phnum) ||
	    !extent_fits(ehdr->e_phoff, (uint64_t)phnum * ehdr->e_phentsize, file_size))
		return false;
	if (!ehdr->e_shoff)
		return true;
	/* libelf reports 0 sections when their table does not fit */
	if (elf_getshdrnum(elf, &shnum) || (ehdr->e_shnum && shnum != ehdr->e_shnum) ||
	    !extent_fits(ehdr->e_shoff, (uint64_t)(shnum ? shnum : 1) * ehdr->e_shentsize,
			 file_size))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_type != SHT_NOBITS &&
		    !extent_fits(sh.sh_offset, sh.sh_size, file_size))
			return false;
	}
	return true;
}

/*
 * Open 'file' as d's ELF file: 0 when d is then usable; else -1 with the
 * reason in 'why' (d->elf_mismatch set when only the build id differs).
 */
static int dso_open_file(struct sym_dso *d, const char *file, const char *want_build_id,
			 struct strbuf *why)
{
	Dwfl_Module *mod;
	GElf_Addr ebias = 0, dbias = 0, bid_vaddr;
	const unsigned char *bits;
	GElf_Ehdr ehdr;
	struct stat st;
	int fd, len;

	/* a path from a profile may name a FIFO or a device: do not block on it */
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		strbuf_addf(why, "cannot open '%s': %s; its addresses stay unsymbolized",
			    file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (!S_ISREG(st.st_mode)) {
		strbuf_addf(why, "'%s' is not a regular file; its addresses stay unsymbolized", file);
		return -1;
	}
	d->dwfl = dwfl_begin(&d->s->callbacks);
	if (!d->dwfl) {
		strbuf_addf(why, "cannot symbolize '%s': %s", file, dwfl_errmsg(-1));
		return -1;
	}
	dwfl_report_begin(d->dwfl);
	mod = dwfl_report_offline(d->dwfl, file, file, -1);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (!mod || !(d->elf = dwfl_module_getelf(mod, &ebias))) {
		strbuf_addf(why, "cannot read '%s': %s; its addresses stay unsymbolized",
			    file, dwfl_errmsg(-1));
		goto out_close;
	}
	if (!gelf_getehdr(d->elf, &ehdr) ||
	    (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN)) {
		strbuf_addf(why, "'%s' is not an executable or shared library; its addresses stay unsymbolized",
			    file);
		goto out_close;
	}
	if (!layout_fits(d->elf, &ehdr, (uint64_t)st.st_size)) {
		strbuf_addf(why, "'%s' is truncated or corrupt (headers or sections past its end); its addresses stay unsymbolized",
			    file);
		goto out_close;
	}
	len = dwfl_module_build_id(mod, &bits, &bid_vaddr);
	set_build_id(d, bits, len);
	if (want_build_id && *want_build_id &&
	    strcasecmp(want_build_id, d->build_id)) {
		strbuf_addf(why, "'%s' has build id '%s', not '%s' as recorded: it changed since; its addresses stay unsymbolized",
			    file, *d->build_id ? d->build_id : "(none)", want_build_id);
		d->elf_mismatch = true;
		goto out_close;
	}
	load_segments(d);
	if (!d->nr_segs) {
		strbuf_addf(why, "'%s' has no loadable segments; its addresses stay unsymbolized",
			    file);
		goto out_close;
	}
	d->dw = dwfl_module_getdwarf(mod, &dbias);
	d->dw_adjust = ebias - dbias;
	load_symbols(d);
	if (d->dw)
		index_cus(d);
	d->usable = true;
	return 0;

out_close:
	dwfl_end(d->dwfl);
	d->dwfl = NULL;
	d->elf = NULL;
	d->dw = NULL;
	return -1;
}

/* A build id as hex, safe to put in a path. */
static bool is_build_id(const char *hex)
{
	size_t len = strlen(hex);

	return len >= 3 && len <= 128 && strspn(hex, "0123456789abcdefABCDEF") == len;
}

int sym_build_id_cache(const char *hex, const char *leaf, struct strbuf *out)
{
	const char *home = getenv("HOME");

	strbuf_reset(out);
	if (!home || !*home || !is_build_id(hex))
		return -1;
	strbuf_addf(out, "%s/.debug/.build-id/%.2s/%s/%s", home, hex, hex + 2, leaf);
	if (!access(out->buf, R_OK))
		return 0;
	strbuf_reset(out);
	return -1;
}

/*
 * Where a copy of the binary with this build id may be kept when the file
 * at its path changed since: perf's build-id cache (perf record fills it)
 * and debuginfod's client cache. Appends each that exists to 'paths'.
 */
static size_t cached_copies(const char *build_id, struct strbuf paths[2])
{
	const char *home = getenv("HOME");
	size_t n = 0;

	if (!sym_build_id_cache(build_id, "elf", &paths[n]))
		n++;
	if (!home || !*home || !is_build_id(build_id))
		return n;
	strbuf_addf(&paths[n], "%s/.cache/debuginfod_client/%s/executable", home, build_id);
	if (!access(paths[n].buf, R_OK))
		n++;
	else
		strbuf_reset(&paths[n]);
	return n;
}

/*
 * Open d from its path, or, when that file is not the one recorded (or is
 * gone), from a cached copy with the recorded build id. 'path_known_bad':
 * the path is open already under another build id. Warns once when
 * nothing usable is found.
 */
static void dso_open(struct sym_dso *d, const char *want_build_id, bool path_known_bad,
		     const char *known_build_id)
{
	struct strbuf why = STRBUF_INIT, other = STRBUF_INIT;
	struct strbuf paths[2] = { STRBUF_INIT, STRBUF_INIT };
	size_t n = 0;

	if (path_known_bad)
		strbuf_addf(&why, "'%s' has build id '%s', not '%s' as recorded: it changed since; its addresses stay unsymbolized",
			    d->path, *known_build_id ? known_build_id : "(none)", want_build_id);
	else if (!dso_open_file(d, d->path, want_build_id, &why))
		goto out;
	if (want_build_id && *want_build_id)
		n = cached_copies(want_build_id, paths);
	for (size_t i = 0; i < n; i++) {
		strbuf_reset(&other);
		if (!dso_open_file(d, paths[i].buf, want_build_id, &other)) {
			d->elf_mismatch = false;
			goto out;
		}
	}
	if (path_known_bad) {
		d->build_id = known_build_id;
		d->elf_mismatch = true;
	}
	warning("%s", why.buf);
out:
	strbuf_release(&why);
	strbuf_release(&other);
	strbuf_release(&paths[0]);
	strbuf_release(&paths[1]);
}

static struct sym_dso *dso_new(struct symbolizer *s, const char *path)
{
	struct sym_dso *d = xcalloc(1, sizeof(*d));

	d->s = s;
	d->path = intern(s, path);
	d->build_id = "";
	d->want_build_id = "";
	d->no_names = NONE;
	ALLOC_GROW(s->dsos, s->nr_dsos + 1, s->alloc_dsos);
	s->dsos[s->nr_dsos++] = d;
	return d;
}

static void dso_free(struct sym_dso *d)
{
	for (size_t i = 0; i < d->nr_cus; i++) {
		struct cu *cu = &d->cus[i];

		free(cu->line_addr);
		free(cu->line_info);
		free(cu->extra_files);
		free(cu->scopes);
		free(cu->dies);
		free(cu->file_names);
		free(cu->lfiles);
		range_index_release(&cu->ranges);
	}
	free(d->cus);
	dwarf_line_table_release(&d->line_scratch);
	free(d->line_order);
	dwarf_info_scopes_release(&d->scope_scratch);
	free(d->range_scratch.tmp);
	free(d->range_scratch.stack);
	dwarf_info_release(&d->info);
	range_index_release(&d->cu_ranges);
	free(d->origins.v);
	hindex_release(&d->origins.index);
	free(d->syms);
	range_index_release(&d->sym_ranges);
	free(d->segs);
	free(d->kallsyms);
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d);
}

/*
 * DSOs are cached per path. A request with a build id that differs from the
 * file's gets a DSO of its own that resolves nothing (warned about once per
 * path and build id), so a stale profile never gets wrong names.
 */
struct sym_dso *symbolizer_dso(struct symbolizer *s, const char *path,
			       const char *build_id)
{
	struct sym_dso *d, *opened = NULL;
	int64_t idx;

	if (!path)
		path = "";
	if (build_id && !*build_id)
		build_id = NULL;
	idx = strtab_intern_str(&s->paths, path);
	if ((size_t)idx >= s->alloc_by_path) {
		size_t n = s->alloc_by_path;

		ALLOC_GROW(s->by_path, (size_t)idx + 1, s->alloc_by_path);
		memset(s->by_path + n, 0, (s->alloc_by_path - n) * sizeof(*s->by_path));
	}
	for (d = s->by_path[idx]; d; d = d->next) {
		if (*d->want_build_id) {
			if (build_id && !strcasecmp(build_id, d->want_build_id))
				return d;
			continue;
		}
		if (!build_id || !d->usable || !strcasecmp(build_id, d->build_id))
			return d;
		opened = d;
	}
	d = dso_new(s, path);
	/* 'opened': the file is open already, with another build id */
	dso_open(d, build_id, opened != NULL, opened ? opened->build_id : "");
	if (!d->usable && build_id && d->elf_mismatch)
		d->want_build_id = intern(s, build_id);
	d->next = s->by_path[idx];
	s->by_path[idx] = d;
	return d;
}

/* ---- the kernel ---- */

/* kallsyms has no sizes: a symbol extends to the next one, at most this far. */
#define KSYM_MAX_EXTENT (1u << 20)

/*
 * The symbol index of kallsyms, as syms_build() makes it, without its two
 * sorts: the core kernel's lines come in address order, so candidates are
 * sorted (once) only when they are not (modules). Of the symbols at one
 * address the first by sym_cand_cmp() wins; each ends where the next
 * begins, at sec_end at the latest. The ranges are disjoint: none
 * encloses another.
 */
static void kallsyms_index(struct sym_dso *d, struct sym_cand *c, size_t nr)
{
	struct range_index *ri = &d->sym_ranges;

	for (size_t i = 1; i < nr; i++) {
		if (c[i].addr < c[i - 1].addr) {
			qsort(c, nr, sizeof(*c), sym_cand_cmp);
			break;
		}
	}
	d->syms = xcalloc(nr ? nr : 1, sizeof(*d->syms));
	ri->r = xcalloc(nr ? nr : 1, sizeof(*ri->r));
	ri->alloc = nr;
	for (size_t i = 0, j; i < nr; i = j) {
		size_t best = i;
		uint64_t end = c[i].sec_end;
		struct elf_sym *es;

		for (j = i + 1; j < nr && c[j].addr == c[i].addr; j++) {
			if (sym_cand_cmp(&c[j], &c[best]) < 0)
				best = j;
			if (c[j].sec_end < end)
				end = c[j].sec_end;
		}
		if (j < nr && c[j].addr < end)
			end = c[j].addr;
		if (end <= c[i].addr || d->nr_syms >= NONE - 1)
			continue;
		es = &d->syms[d->nr_syms];
		es->addr = c[i].addr;
		es->end = end;
		es->name = c[best].name;
		ri->r[ri->nr] = (struct range){ es->addr, es->end, (uint32_t)d->nr_syms, NONE };
		ri->nr++;
		d->nr_syms++;
	}
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * kallsyms is "address type name [module]" a line, 100k lines and more:
 * read at once and parsed in place. Only code symbols (t, T, w, W) become
 * candidates, their names NUL-terminated where they stand in the text,
 * which the DSO keeps (d->kallsyms) instead of copying each name. Another
 * symbol right after a code symbol, above it, still ends it.
 */
static void kallsyms_load(struct sym_dso *d)
{
	struct strbuf sb = STRBUF_INIT;
	struct sym_cand *cand = NULL;
	size_t nr = 0, alloc = 0, nonzero = 0;
	char *p, *eol, *end;

	if (access(d->path, R_OK)) {
		warning("cannot read kernel symbols from '%s': %s; kernel addresses stay unsymbolized",
			d->path, strerror(errno));
		goto out_free;
	}
	if (read_file(&sb, d->path, KALLSYMS_CAP))
		goto out_free;	/* read_file said why */
	end = sb.buf + sb.len;
	for (p = sb.buf; p < end; p = eol + 1) {
		struct sym_cand *c;
		uint64_t addr = 0;
		char *name, type;
		size_t len;
		int digits = 0, v;

		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;	/* the strbuf's NUL ends the last line */
		for (; digits < 16 && (v = hex_digit(*p)) >= 0; p++, digits++)
			addr = addr << 4 | (uint64_t)v;
		if (!digits || eol - p < 4 || p[0] != ' ' || p[2] != ' ')
			continue;
		type = p[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W') {
			if (nr && addr > cand[nr - 1].addr && addr < cand[nr - 1].sec_end)
				cand[nr - 1].sec_end = addr;
			continue;
		}
		name = p + 3;
		len = strcspn(name, " \t\n");
		if (!len || name + len > eol)
			continue;
		name[len] = '\0';
		if (addr)
			nonzero++;
		ALLOC_GROW(cand, nr + 1, alloc);
		c = &cand[nr++];
		memset(c, 0, sizeof(*c));
		c->addr = addr;
		c->sec_end = addr + KSYM_MAX_EXTENT < addr ? UINT64_MAX : addr + KSYM_MAX_EXTENT;
		c->rank_bind = type == 'T' ? 0 : type == 't' ? 2 : 1;
		sym_cand_set_name(c, name);
	}
	if (nr && !nonzero) {
		warning("kernel symbol addresses are hidden in '%s' (kernel.kptr_restrict): run as root or set kernel.kptr_restrict=0; kernel addresses stay unsymbolized",
			d->path);
		goto out_free;
	}
	kallsyms_index(d, cand, nr);
	d->usable = true;
	d->kallsyms = strbuf_detach(&sb, NULL);
out_free:
	free(cand);
	strbuf_release(&sb);
}

/* The running kernel's build id, from its ELF notes in /sys/kernel/notes. */
static void kernel_build_id(struct sym_dso *d)
{
	struct strbuf sb = STRBUF_INIT;
	size_t off = 0;

	/* the build id is only informative: no word when it cannot be had */
	if (access("/sys/kernel/notes", R_OK) ||
	    read_file(&sb, "/sys/kernel/notes", 1 << 16) < 0) {
		strbuf_release(&sb);
		return;
	}
	while (sb.len - off >= 12) {
		uint32_t hdr[3];
		size_t namesz, descsz, name_off, desc_off;

		memcpy(hdr, sb.buf + off, sizeof(hdr));
		namesz = hdr[0];
		descsz = hdr[1];
		name_off = off + 12;
		desc_off = name_off + ((namesz + 3) & ~(size_t)3);
		if (namesz > sb.len || descsz > sb.len || desc_off > sb.len ||
		    descsz > sb.len - desc_off)
			break;
		if (hdr[2] == NT_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(sb.buf + name_off, "GNU", 4)) {
			set_build_id(d, (const unsigned char *)sb.buf + desc_off, (int)descsz);
			break;
		}
		off = desc_off + ((descsz + 3) & ~(size_t)3);
	}
	strbuf_release(&sb);
}

struct sym_dso *symbolizer_kallsyms(struct symbolizer *s, const char *path)
{
	struct sym_dso *d;

	for (size_t i = 0; i < s->nr_dsos; i++) {
		if (s->dsos[i]->kernel && !strcmp(s->dsos[i]->path, path))
			return s->dsos[i];
	}
	d = dso_new(s, path);
	d->kernel = true;
	kallsyms_load(d);
	return d;
}

struct sym_dso *symbolizer_kernel(struct symbolizer *s)
{
	if (!s->kernel) {
		s->kernel = symbolizer_kallsyms(s, "/proc/kallsyms");
		if (!*s->kernel->build_id)
			kernel_build_id(s->kernel);
	}
	return s->kernel;
}

/* ---- lookups and the symbolizer ---- */

int sym_lookup(struct sym_dso *d, uint64_t addr, struct sym_frame *frames, int max)
{
	struct elf_sym *es;
	uint64_t vaddr;
	int n = 0;

	if (!d || !d->usable || !frames || max <= 0)
		return 0;
	if (d->kernel)
		vaddr = addr;
	else if (!offset_to_vaddr(d, addr, &vaddr))
		return 0;
	es = sym_find(d, vaddr);
	if (d->dw)
		n = dwarf_lookup(d, vaddr, es, frames, max);
	if (!n && es) {
		fill_sym_frame(d, es, &frames[0], "", 0);
		n = 1;
	}
	return n;
}

const char *sym_dso_build_id(struct sym_dso *d)
{
	return d ? d->build_id : "";
}

const char *sym_dso_path(struct sym_dso *d)
{
	return d ? d->path : "";
}

bool sym_dso_has_dwarf(struct sym_dso *d)
{
	return d && d->usable && d->dw && d->nr_cus;
}

static int elf_machine(struct sym_dso *d)
{
	GElf_Ehdr ehdr;

	return d->elf && gelf_getehdr(d->elf, &ehdr) ? ehdr.e_machine : EM_NONE;
}

const char *sym_callee(struct sym_dso *d, uint64_t ret_off)
{
	struct sym_frame sf[8];
	unsigned char b[5];
	uint64_t target = 0;
	struct stat st;
	int fd, got;

	if (!d || !d->usable || d->kernel || ret_off < sizeof(b))
		return NULL;
	/* the file was opened before: still, never block on what is not a regular one */
	fd = open(d->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    pread(fd, b, sizeof(b), (off_t)(ret_off - sizeof(b))) == (ssize_t)sizeof(b)) {
		uint32_t w = (uint32_t)b[1] | (uint32_t)b[2] << 8 | (uint32_t)b[3] << 16 |
			     (uint32_t)b[4] << 24;

		/* offsets within one segment differ as addresses do */
		if (b[0] == 0xe8 && elf_machine(d) == EM_X86_64)
			target = ret_off + (uint64_t)(int64_t)(int32_t)w;
		else if ((w & 0xfc000000u) == 0x94000000u && elf_machine(d) == EM_AARCH64)
			target = ret_off - 4 + (uint64_t)((int64_t)((int32_t)(w << 6) >> 6) * 4);
	}
	close(fd);
	if (!target)
		return NULL;
	got = sym_lookup(d, target, sf, (int)ARRAY_SIZE(sf));
	return got > 0 ? sf[got - 1].name : NULL;
}

bool sym_dso_exec_segment(struct sym_dso *d, uint64_t *vaddr, uint64_t *off, uint64_t *size)
{
	/* the executable segments come first (segments_read()) */
	if (!d || !d->usable || d->kernel || !d->nr_segs)
		return false;
	*vaddr = d->segs[0].vaddr;
	*off = d->segs[0].off;
	*size = d->segs[0].size;
	return true;
}

/* 'name' as a scope's names: the DWARF name, the linkage name, the demangled one without its parameters. */
static bool scope_named(const struct origin *sc, const char *name)
{
	size_t n = strlen(name);

	if (!sc->name)
		return false;
	return !strcmp(sc->name, name) || !strcmp(sc->system_name, name) ||
	       (!strncmp(sc->name, name, n) && sc->name[n] == '(');
}

size_t sym_inlined_ranges(struct sym_dso *d, const char *name, struct sym_inlined *out)
{
	memset(out, 0, sizeof(*out));
	if (!sym_dso_has_dwarf(d) || !name || !*name)
		return 0;
	for (size_t c = 0; c < d->nr_cus; c++) {
		struct cu *cu = &d->cus[c];
		uint32_t *inst;

		if (cu_load(d, cu) || !cu->nr_scopes)
			continue;
		inst = xmalloc(cu->nr_scopes * sizeof(*inst));
		for (size_t i = 0; i < cu->nr_scopes; i++) {
			struct scope *sc = &cu->scopes[i];
			const struct origin *o;

			inst[i] = NONE;
			if (!sc->inlined || out->copies >= NONE - 1)
				continue;
			o = scope_names(d, cu, sc);
			if (!scope_named(o, name))
				continue;
			if (!out->name) {
				out->name = o->name;
				out->system_name = o->system_name;
			}
			inst[i] = (uint32_t)out->copies++;
		}
		for (size_t i = 0; i < cu->ranges.nr; i++) {
			const struct range *r = &cu->ranges.r[i];

			if (inst[r->item] == NONE)
				continue;
			ALLOC_GROW(out->ranges, out->nr_ranges + 1, out->alloc_ranges);
			/* vaddr = DWARF address - dw_adjust, modulo 2^64 as everywhere */
			out->ranges[out->nr_ranges++] = (struct sym_range){
				r->lo - d->dw_adjust, r->hi - d->dw_adjust, inst[r->item] };
		}
		free(inst);
	}
	return out->copies;
}

void sym_inlined_release(struct sym_inlined *in)
{
	free(in->ranges);
	memset(in, 0, sizeof(*in));
}

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));

	strtab_init(&s->strs);
	strtab_init(&s->paths);
	strbuf_init(&s->path, 0);
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debug_path;
	return s;
}

void symbolizer_set_debug_path(struct symbolizer *s, const char *path)
{
	free(s->debug_path);
	s->debug_path = path ? xstrdup(path) : NULL;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_dsos; i++)
		dso_free(s->dsos[i]);
	free(s->dsos);
	free(s->by_path);
	free(s->demangled);
	free(s->debug_path);
	strtab_release(&s->paths);
	strtab_release(&s->strs);
	strbuf_release(&s->path);
	free(s);
}
