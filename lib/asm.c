/*
 * asm.c: finding one function in an ELF file and reading its code (asm.h),
 * its source lines (through the symbolizer), adding a profile's samples to
 * its instructions, and the analysis as JSON. The file is hostile input:
 * every offset and size is checked against the data libelf hands out.
 * Decoding is in asm-decode.c, the loops and rules in asm-analyze.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <jansson.h>
#include <libiberty/demangle.h>
#undef ARRAY_SIZE	/* ansidecl.h's; util.h has its own */

#include "util.h"
#include "json.h"
#include "strbuf.h"
#include "profile.h"
#include "symbolize.h"
#include "asm.h"

/* Larger functions are refused: no compiler emits them, a corrupt file might claim them. */
#define MAX_FUNCTION_BYTES (16u << 20)
/* Candidates named in an error message. */
#define MAX_LISTED 10
/* Frames asked of the symbolizer per instruction (innermost first). */
#define MAX_FRAMES 16

void asm_function_init(struct asm_function *f)
{
	/* no allocation: ASM_FUNCTION_INIT and this are the same empty state */
	memset(f, 0, sizeof(*f));
	f->binary = f->name = f->system_name = f->build_id = f->realpath = "";
	f->sample_type = f->sample_unit = f->verdict = "";
	f->inlined_into = f->inlined_into_system = "";
}

void asm_function_release(struct asm_function *f)
{
	strtab_release(&f->strs);
	free(f->segments);
	free(f->insns);
	free(f->loops);
	free(f->ranges);
	free(f->into);
	asm_function_init(f);
}

static const char *intern(struct asm_function *f, const char *s)
{
	return strtab_get(&f->strs, strtab_intern_str(&f->strs, s));
}

/* ---- the ELF file ---- */

struct elf_file {
	int fd;
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t shstrndx;
};

static void elf_file_close(struct elf_file *ef)
{
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	ef->elf = NULL;
	ef->fd = -1;
}

/* Open 'path' as an ELF file; quiet (-1) when 'quiet', else an error saying why not. */
static int elf_file_open(struct elf_file *ef, const char *path, bool quiet)
{
	unsigned char magic[4];
	struct stat st;
	ssize_t n;

	ef->fd = -1;
	ef->elf = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return quiet ? -1 : error("cannot use libelf: %s", elf_errmsg(-1));
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0)
		return quiet ? -1 : error("cannot open '%s': %s", path, strerror(errno));
	if (fstat(ef->fd, &st) || !S_ISREG(st.st_mode)) {
		elf_file_close(ef);
		return quiet ? -1 : error("'%s' is not a regular file", path);
	}
	n = pread(ef->fd, magic, sizeof(magic), 0);
	if (n != (ssize_t)sizeof(magic) || memcmp(magic, ELFMAG, SELFMAG)) {
		elf_file_close(ef);
		return quiet ? -1 : error("'%s' is not an ELF file", path);
	}
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF || !gelf_getehdr(ef->elf, &ef->ehdr) ||
	    elf_getshdrstrndx(ef->elf, &ef->shstrndx)) {
		int e = elf_errno();
		const char *why = e ? elf_errmsg(e) : "bad ELF header";
		elf_file_close(ef);
		return quiet ? -1 : error("'%s' is a truncated or corrupt ELF file: %s", path, why);
	}
	/* libelf reads what is there: a cut file just seems to lack sections */
	if (ef->ehdr.e_shoff > (uint64_t)st.st_size ||
	    (uint64_t)ef->ehdr.e_shnum * ef->ehdr.e_shentsize > (uint64_t)st.st_size - ef->ehdr.e_shoff ||
	    ef->ehdr.e_phoff > (uint64_t)st.st_size ||
	    (uint64_t)ef->ehdr.e_phnum * ef->ehdr.e_phentsize > (uint64_t)st.st_size - ef->ehdr.e_phoff) {
		elf_file_close(ef);
		return quiet ? -1 : error("'%s' is a truncated or corrupt ELF file: its headers lie beyond its end (%lld bytes)",
					  path, (long long)st.st_size);
	}
	return 0;
}

static const char *machine_name(unsigned m)
{
	switch (m) {
	case EM_386: return "i386";
	case EM_ARM: return "32-bit ARM";
	case EM_RISCV: return "RISC-V";
	case EM_PPC64: return "PowerPC 64";
	case EM_S390: return "s390";
	case EM_MIPS: return "MIPS";
	default: return "an unsupported machine";
	}
}

static void build_id_hex(Elf *elf, struct strbuf *sb)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	strbuf_reset(sb);
	if (n <= 0 || n > 64)
		return;
	for (ssize_t i = 0; i < n; i++)
		strbuf_addf(sb, "%02x", ((const unsigned char *)id)[i]);
}

/* ---- symbols ---- */

struct cand {
	const char *name;	/* in the ELF file's string table */
	char *dname;		/* demangled (malloc'd), NULL when not mangled */
	uint64_t value, size;
	size_t shndx;
	unsigned char bind;
};

struct symbols {
	struct cand *c;
	size_t nr, alloc;
	bool from_symtab;	/* else .dynsym */
};

static void symbols_release(struct symbols *s)
{
	for (size_t i = 0; i < s->nr; i++)
		free(s->c[i].dname);
	free(s->c);
	memset(s, 0, sizeof(*s));
}

static const char *cand_name(const struct cand *c)
{
	return c->dname ? c->dname : c->name;
}

static bool looks_mangled(const char *name)
{
	return !strncmp(name, "_Z", 2) || !strncmp(name, "_R", 2);
}

/* Every defined function symbol of the first section of 'type' (sized; IFUNCs too). */
static bool read_symtab(Elf *elf, Elf64_Word type, struct symbols *s)
{
	Elf_Scn *scn = NULL;
	size_t symsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !symsize || sh.sh_entsize != symsize)
			return true;	/* present but unreadable: no symbols */
		n = data->d_size / symsize;
		for (size_t i = 1; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			unsigned char st;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			st = GELF_ST_TYPE(sym.st_info);
			if ((st != STT_FUNC && st != STT_GNU_IFUNC) || !sym.st_size ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS ||
			    sym.st_shndx >= SHN_LORESERVE)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			ALLOC_GROW(s->c, s->nr + 1, s->alloc);
			s->c[s->nr++] = (struct cand){
				.name = name,
				.dname = looks_mangled(name) ? cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI) : NULL,
				.value = sym.st_value,
				.size = sym.st_size,
				.shndx = sym.st_shndx,
				.bind = GELF_ST_BIND(sym.st_info),
			};
		}
		return true;
	}
	return false;
}

static bool has_section(Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return true;
	return false;
}

/*
 * A stripped file's symbols from its separate debug file, found by build id
 * (/usr/lib/debug/.build-id/xx/rest.debug) or .gnu_debuglink (next to the
 * file, in .debug/, under /usr/lib/debug), with the same build id.
 */
static int open_debug_file(struct elf_file *ef, const char *realpath, const char *build_id,
			   struct elf_file *dbg, struct strbuf *path)
{
	struct strbuf id = STRBUF_INIT;
	const char *link;
	GElf_Word crc;
	int found = -1;

	if (strlen(build_id) < 4)
		return -1;
	for (int attempt = 0; attempt < 4 && found; attempt++) {
		strbuf_reset(path);
		if (attempt == 0) {
			strbuf_addf(path, "/usr/lib/debug/.build-id/%.2s/%s.debug", build_id, build_id + 2);
		} else {
			const char *slash = strrchr(realpath, '/');
			int dirlen = slash ? (int)(slash - realpath) : 0;

			link = dwelf_elf_gnu_debuglink(ef->elf, &crc);
			if (!link || !*link || strchr(link, '/') || !slash)
				break;
			if (attempt == 1)
				strbuf_addf(path, "%.*s/%s", dirlen, realpath, link);
			else if (attempt == 2)
				strbuf_addf(path, "%.*s/.debug/%s", dirlen, realpath, link);
			else
				strbuf_addf(path, "/usr/lib/debug%.*s/%s", dirlen, realpath, link);
		}
		if (!strcmp(path->buf, realpath) || elf_file_open(dbg, path->buf, true))
			continue;
		build_id_hex(dbg->elf, &id);
		if (!strcmp(id.buf, build_id) && has_section(dbg->elf, SHT_SYMTAB))
			found = 0;
		else
			elf_file_close(dbg);
	}
	strbuf_release(&id);
	return found;
}

static size_t distance(const char *query, const char *name)
{
	size_t d = edit_distance(query, name), lq = strlen(query), ln = strlen(name);

	if (d != SIZE_MAX)
		return d;
	return 64 + (lq > ln ? lq - ln : ln - lq);	/* long names: by length */
}

/* Exact: the raw name, the demangled one, or the demangled one without its parameters. */
static bool exact_match(const struct cand *c, const char *q)
{
	size_t lq = strlen(q);

	if (!strcmp(c->name, q))
		return true;
	if (!c->dname)
		return false;
	return !strcmp(c->dname, q) || (!strncmp(c->dname, q, lq) && c->dname[lq] == '(');
}

/* A candidate for a query, with its distance to it. */
struct match {
	const struct cand *c;
	size_t dist;
};

/* Of several symbols at one address, the one to show: global, then the shorter name. */
static int cmp_alias(const struct cand *a, const struct cand *b)
{
	size_t la = strlen(a->name), lb = strlen(b->name);

	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL ? -1 : 1;
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_address(const void *a, const void *b)
{
	const struct cand *x = ((const struct match *)a)->c, *y = ((const struct match *)b)->c;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return cmp_alias(x, y);
}

static int cmp_closest(const void *a, const void *b)
{
	const struct match *x = a, *y = b;
	int c;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	c = strcmp(cand_name(x->c), cand_name(y->c));
	if (c)
		return c;
	return x->c->value < y->c->value ? -1 : x->c->value > y->c->value;
}

/* Distinct functions among m (symbols at one address are one), closest to 'query' first. */
static size_t rank(struct match *m, size_t n, const char *query)
{
	size_t out = 0;

	qsort(m, n, sizeof(*m), cmp_address);
	for (size_t i = 0; i < n; i++)
		if (!out || m[out - 1].c->value != m[i].c->value)
			m[out++] = m[i];
	for (size_t i = 0; i < out; i++)
		m[i].dist = distance(query, cand_name(m[i].c));
	qsort(m, out, sizeof(*m), cmp_closest);
	return out;
}

static void list_names(struct strbuf *sb, const struct match *m, size_t n, size_t max,
		       bool with_addr)
{
	for (size_t i = 0; i < n && i < max; i++) {
		strbuf_addf(sb, "%s'%s'", i ? ", " : "", cand_name(m[i].c));
		if (with_addr)
			strbuf_addf(sb, " at 0x%" PRIx64, m[i].c->value);
	}
	if (n > max)
		strbuf_addf(sb, " and %zu more", n - max);
}

static bool parse_address(const char *q, uint64_t *addr)
{
	char *end;

	if (strncmp(q, "0x", 2) || !q[2])
		return false;
	errno = 0;
	*addr = strtoull(q + 2, &end, 16);
	return !errno && !*end;
}

/* Pick the one function 'query' means, or explain why there is none. */
static int match_query(const struct symbols *s, const char *query, bool exact,
		       const char *binary, const struct cand **out)
{
	struct match *m = xmalloc((s->nr + 1) * sizeof(*m));
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;
	uint64_t addr;
	int ret = -1;

	if (parse_address(query, &addr)) {
		for (size_t i = 0; i < s->nr; i++)
			if (addr >= s->c[i].value && addr - s->c[i].value < s->c[i].size)
				m[n++].c = &s->c[i];
	} else {
		bool found;

		for (size_t i = 0; i < s->nr; i++)
			if (exact_match(&s->c[i], query))
				m[n++].c = &s->c[i];
		found = n > 0;
		for (size_t i = 0; !found && !exact && i < s->nr; i++)
			if (strstr(s->c[i].name, query) || (s->c[i].dname && strstr(s->c[i].dname, query)))
				m[n++].c = &s->c[i];
	}
	n = rank(m, n, query);
	if (n == 1) {
		*out = m[0].c;
		ret = 0;
	} else if (n > 1) {
		bool same_names = true;

		for (size_t i = 1; i < n; i++)
			same_names &= !strcmp(cand_name(m[i].c), cand_name(m[0].c));
		list_names(&sb, m, n, MAX_LISTED, same_names);
		ret = error("'%s' matches %zu functions in '%s': %s; give %s",
			    query, n, binary, sb.buf,
			    same_names ? "the address of the one you mean (--fn 0x...)" : "the whole name");
	} else {
		for (size_t i = 0; i < s->nr; i++)
			m[n++].c = &s->c[i];
		n = rank(m, n, query);
		list_names(&sb, m, n < 5 ? n : 5, 5, false);
		if (!n)
			ret = error("no function '%s' in '%s': it has no function symbols", query, binary);
		else
			ret = error("no function '%s' in '%s'%s; the closest names: %s", query, binary,
				    s->from_symtab ? "" : " (only its exported functions are visible: it is stripped)",
				    sb.buf);
	}
	strbuf_release(&sb);
	free(m);
	return ret;
}

/* ---- code bytes ---- */

static struct asm_insn *insn_at(struct asm_function *f, uint64_t addr);

/* The bytes of [addr, addr + size) from the section that holds them. */
static int function_bytes(struct elf_file *ef, const struct cand *c, bool relocatable,
			  const char *binary, const uint8_t **code)
{
	Elf_Scn *scn = NULL;

	if (relocatable) {
		scn = elf_getscn(ef->elf, c->shndx);
	} else {
		Elf_Scn *s = NULL;
		while ((s = elf_nextscn(ef->elf, s))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(s, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
			    sh.sh_type == SHT_NOBITS || c->value < sh.sh_addr ||
			    c->value - sh.sh_addr >= sh.sh_size)
				continue;
			scn = s;
			if (sh.sh_flags & SHF_EXECINSTR)
				break;
		}
	}
	if (scn) {
		GElf_Shdr sh;
		Elf_Data *data;
		uint64_t off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			goto bad;
		off = relocatable ? c->value : c->value - sh.sh_addr;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || off > data->d_size || c->size > data->d_size - off)
			goto bad;
		*code = (const uint8_t *)data->d_buf + off;
		return 0;
	}
bad:
	return error("the code of '%s' (0x%" PRIx64 ", %" PRIu64 " bytes) is not in '%s': the symbol table and the sections disagree (a corrupt or debug-only file?)",
		     cand_name(c), c->value, c->size, binary);
}

/*
 * In an object file a branch to another function is a relocation whose
 * target field holds zero: such a branch goes outside, not to the address
 * the zero decodes to (on arm64, itself: not a loop).
 */
static void drop_relocated_targets(struct asm_function *f, Elf *elf, size_t code_shndx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
		    sh.sh_info != code_shndx || !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		n = data->d_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela rela;
			GElf_Rel rel;
			uint64_t off;
			struct asm_insn *in;

			if (sh.sh_type == SHT_RELA) {
				if (!gelf_getrela(data, (int)i, &rela))
					break;
				off = rela.r_offset;
			} else {
				if (!gelf_getrel(data, (int)i, &rel))
					break;
				off = rel.r_offset;
			}
			if (off < f->start || off >= f->end || !(in = insn_at(f, off)))
				continue;
			in->has_target = false;
			in->target = 0;
		}
	}
}

static void read_segments(struct asm_function *f, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->segments = xrealloc(f->segments, (f->nr_segments + 1) * sizeof(*f->segments));
		f->segments[f->nr_segments++] = (struct asm_segment){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
	}
}

static bool vaddr_to_offset(const struct asm_function *f, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < f->nr_segments; i++) {
		const struct asm_segment *s = &f->segments[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = vaddr - s->vaddr + s->offset;
			return true;
		}
	}
	return false;
}

static bool offset_to_vaddr(const struct asm_function *f, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->nr_segments; i++) {
		const struct asm_segment *s = &f->segments[i];
		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

/* Source lines from DWARF: the innermost frame of each instruction. */
static void add_lines(struct asm_function *f, struct sym_dso *d)
{
	struct sym_frame frames[MAX_FRAMES];

	if (!sym_dso_has_dwarf(d))
		return;
	for (size_t i = 0; i < f->nr_insns; i++) {
		struct asm_insn *in = &f->insns[i];
		uint64_t off;
		int n;

		if (!vaddr_to_offset(f, in->addr, &off))
			continue;
		n = sym_lookup(d, off, frames, MAX_FRAMES);
		if (n > 0 && frames[0].file[0] && frames[0].line > 0) {
			in->file = intern(f, frames[0].file);
			in->line = frames[0].line;
		}
		if (n > 1 && frames[0].inlined)
			in->inlined = intern(f, frames[0].name);
	}
}

/* ---- inlined functions ---- */

/* A profile's sample in this binary: the address of its leaf, its value. */
struct leaf {
	uint64_t vaddr;
	int64_t v;
};

struct leaves {
	struct leaf *v;
	int64_t *cum;		/* cum[i]: the values of v[0..i) */
	size_t nr, alloc;
};

static int each_leaf(struct asm_function *f, const struct profile *p, int idx, bool warn,
		     void (*fn)(void *arg, uint64_t vaddr, int64_t v, const struct pf_location *loc),
		     void *arg);

static void add_leaf(void *arg, uint64_t vaddr, int64_t v, const struct pf_location *loc)
{
	struct leaves *l = arg;

	ALLOC_GROW(l->v, l->nr + 1, l->alloc);
	l->v[l->nr++] = (struct leaf){ vaddr, v };
}

static int cmp_leaf(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* The first leaf at or above addr. */
static size_t leaf_index(const struct leaves *l, uint64_t addr)
{
	size_t lo = 0, hi = l->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->v[mid].vaddr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int64_t leaf_sum(const struct leaves *l, uint64_t lo, uint64_t hi)
{
	if (!l->nr || hi <= lo)
		return 0;
	return l->cum[leaf_index(l, hi)] - l->cum[leaf_index(l, lo)];
}

static int cmp_cand_value(const void *a, const void *b)
{
	const struct cand *x = *(const struct cand *const *)a, *y = *(const struct cand *const *)b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return cmp_alias(x, y);
}

/* The symbol holding addr among v (by address, aliases best first), or NULL. */
static const struct cand *cand_holding(const struct cand *const *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid]->value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the nearest start below, then its aliases and any symbol around it */
	for (size_t k = lo, tries = 0; k-- > 0 && tries < 16; tries++) {
		if (k && v[k - 1]->value == v[k]->value)
			continue;	/* the best alias comes first */
		if (addr - v[k]->value < v[k]->size)
			return v[k];
	}
	return NULL;
}

/* A symbol the function was inlined into, while they are counted. */
struct into_acc {
	const struct cand *c;
	size_t copies;
	uint64_t bytes;
	int64_t samples;
};

struct copy_in {
	size_t acc, copy;
};

static int cmp_copy_in(const void *a, const void *b)
{
	const struct copy_in *x = a, *y = b;

	if (x->acc != y->acc)
		return x->acc < y->acc ? -1 : 1;
	return x->copy < y->copy ? -1 : x->copy > y->copy;
}

/* Most samples, then most code, then the lower address. */
static int cmp_into_acc(const void *a, const void *b)
{
	const struct into_acc *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->c->value < y->c->value ? -1 : x->c->value > y->c->value;
}

static int cmp_range(const void *a, const void *b)
{
	const struct asm_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/*
 * The copies of 'query' inlined into other functions: the symbol to read
 * (*out) and the copies' code in it (f->ranges), every symbol holding
 * copies (f->into). 1 when the function has no inlined copy, -1 after an
 * error.
 */
static int find_inlined(struct asm_function *f, struct sym_dso *d, const struct symbols *syms,
			const char *query, const struct asm_load_options *o, const struct cand **out)
{
	struct sym_inlined in;
	struct leaves leaves = { 0 };
	const struct cand **byaddr = NULL;
	struct into_acc *acc = NULL;
	struct copy_in *pairs = NULL;
	size_t nr_acc = 0, alloc_acc = 0, nr_pairs = 0, alloc_pairs = 0, last = SIZE_MAX;
	int ret = 1;

	if (!sym_inlined_ranges(d, query, &in))
		goto out;
	if (o->profile && !each_leaf(f, o->profile, o->sample_idx, false, add_leaf, &leaves) &&
	    leaves.nr) {
		qsort(leaves.v, leaves.nr, sizeof(*leaves.v), cmp_leaf);
		leaves.cum = xmalloc((leaves.nr + 1) * sizeof(*leaves.cum));
		leaves.cum[0] = 0;
		for (size_t i = 0; i < leaves.nr; i++)
			leaves.cum[i + 1] = sat_add(leaves.cum[i], leaves.v[i].v);
	} else {
		leaves.nr = 0;
	}
	byaddr = xmalloc((syms->nr + 1) * sizeof(*byaddr));
	for (size_t i = 0; i < syms->nr; i++)
		byaddr[i] = &syms->c[i];
	qsort(byaddr, syms->nr, sizeof(*byaddr), cmp_cand_value);

	for (size_t i = 0; i < in.nr_ranges; i++) {
		const struct sym_range *r = &in.ranges[i];
		const struct cand *c;
		uint64_t hi;
		size_t a;

		if (r->hi <= r->lo || !(c = cand_holding(byaddr, syms->nr, r->lo)))
			continue;	/* an empty range (hostile DWARF), or in no symbol */
		hi = r->hi - c->value > c->size ? c->value + c->size : r->hi;
		if (last != SIZE_MAX && acc[last].c == c) {
			a = last;
		} else {
			for (a = 0; a < nr_acc && acc[a].c != c; a++)
				;
			if (a == nr_acc) {
				ALLOC_GROW(acc, nr_acc + 1, alloc_acc);
				acc[nr_acc++] = (struct into_acc){ .c = c };
			}
		}
		last = a;
		acc[a].bytes += hi - r->lo;
		acc[a].samples = sat_add(acc[a].samples, leaf_sum(&leaves, r->lo, hi));
		ALLOC_GROW(pairs, nr_pairs + 1, alloc_pairs);
		pairs[nr_pairs++] = (struct copy_in){ a, r->instance };
	}
	if (!nr_acc) {
		ret = error("'%s' is inlined %zu time%s in '%s', but the copies lie in no function symbol",
			    query, in.copies, in.copies == 1 ? "" : "s", f->binary);
		goto out;
	}
	if (nr_pairs)
		qsort(pairs, nr_pairs, sizeof(*pairs), cmp_copy_in);
	for (size_t i = 0; i < nr_pairs; i++)
		if (!i || cmp_copy_in(&pairs[i - 1], &pairs[i]))
			acc[pairs[i].acc].copies++;

	/* the chosen symbol's ranges, clipped to it, sorted and merged */
	qsort(acc, nr_acc, sizeof(*acc), cmp_into_acc);
	*out = acc[0].c;
	for (size_t i = 0; i < in.nr_ranges; i++) {
		const struct sym_range *r = &in.ranges[i];
		uint64_t end = (*out)->value + (*out)->size;

		if (r->hi <= r->lo || r->lo < (*out)->value || r->lo >= end)
			continue;
		f->ranges = xrealloc(f->ranges, (f->nr_ranges + 1) * sizeof(*f->ranges));
		f->ranges[f->nr_ranges++] = (struct asm_range){ r->lo, r->hi < end ? r->hi : end };
	}
	qsort(f->ranges, f->nr_ranges, sizeof(*f->ranges), cmp_range);
	for (size_t i = 0, n = 0; i < f->nr_ranges; i++) {
		if (n && f->ranges[i].start <= f->ranges[n - 1].end) {
			if (f->ranges[i].end > f->ranges[n - 1].end)
				f->ranges[n - 1].end = f->ranges[i].end;
		} else {
			f->ranges[n++] = f->ranges[i];
		}
		if (i + 1 == f->nr_ranges)
			f->nr_ranges = n;
	}
	f->into = xcalloc(nr_acc, sizeof(*f->into));
	f->nr_into = nr_acc;
	for (size_t i = 0; i < nr_acc; i++)
		f->into[i] = (struct asm_into){ intern(f, cand_name(acc[i].c)), acc[i].copies,
						acc[i].samples, acc[i].bytes };
	f->nr_copies = acc[0].copies;
	f->name = intern(f, in.name);
	f->system_name = intern(f, in.system_name ? in.system_name : in.name);
	f->inlined_into = intern(f, cand_name(acc[0].c));
	f->inlined_into_system = intern(f, acc[0].c->name);
	ret = 0;
out:
	sym_inlined_release(&in);
	free(leaves.v);
	free(leaves.cum);
	free(byaddr);
	free(acc);
	free(pairs);
	return ret;
}

/* Instructions outside the inlined copies' code. */
static void mark_outside(struct asm_function *f)
{
	size_t r = 0;

	for (size_t i = 0; i < f->nr_insns; i++) {
		struct asm_insn *in = &f->insns[i];

		while (r < f->nr_ranges && f->ranges[r].end <= in->addr)
			r++;
		in->outside = r == f->nr_ranges || in->addr < f->ranges[r].start;
	}
}

static bool any_exact(const struct symbols *s, const char *query)
{
	for (size_t i = 0; i < s->nr; i++)
		if (exact_match(&s->c[i], query))
			return true;
	return false;
}

int asm_load(const char *binary, const char *query, bool exact, struct asm_function *f)
{
	struct asm_load_options o = ASM_LOAD_OPTIONS_INIT;

	o.exact = exact;
	return asm_load_with(binary, query, &o, f);
}

int asm_load_with(const char *binary, const char *query, const struct asm_load_options *o,
		  struct asm_function *f)
{
	struct elf_file ef = { .fd = -1 }, dbg = { .fd = -1 };
	struct symbols syms = { 0 };
	struct strbuf sb = STRBUF_INIT, dbg_path = STRBUF_INIT;
	struct symbolizer *symbolizer = NULL;
	struct sym_dso *dso = NULL;
	const struct cand *c = NULL;
	const uint8_t *code = NULL;
	uint64_t addr;
	char *real;
	int ret = -1;

	asm_function_init(f);
	f->binary = intern(f, binary);
	if (!query || !*query)
		return error("no function given: name one with --fn");
	if (elf_file_open(&ef, binary, false))
		goto out;
	real = realpath(binary, NULL);
	f->realpath = intern(f, real ? real : "");
	free(real);

	switch (ef.ehdr.e_machine) {
	case EM_X86_64:
		f->arch = ASM_ARCH_X86_64;
		break;
	case EM_AARCH64:
		f->arch = ASM_ARCH_AARCH64;
		break;
	default:
		error("'%s' is code for %s (ELF machine %u): hotloop asm reads x86-64 and AArch64",
		      binary, machine_name(ef.ehdr.e_machine), ef.ehdr.e_machine);
		goto out;
	}
	if (ef.ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ef.ehdr.e_ident[EI_DATA] != ELFDATA2LSB) {
		error("'%s' is not a 64-bit little-endian ELF file: hotloop asm reads x86-64 and AArch64 (little-endian)",
		      binary);
		goto out;
	}
	if (ef.ehdr.e_type != ET_EXEC && ef.ehdr.e_type != ET_DYN && ef.ehdr.e_type != ET_REL) {
		error("'%s' is not an executable, shared library or object file (ELF type %u)",
		      binary, ef.ehdr.e_type);
		goto out;
	}
	f->relocatable = ef.ehdr.e_type == ET_REL;
	build_id_hex(ef.elf, &sb);
	f->build_id = intern(f, sb.buf);

	if (read_symtab(ef.elf, SHT_SYMTAB, &syms)) {
		syms.from_symtab = true;
	} else if (!f->relocatable &&
		   !open_debug_file(&ef, f->realpath, f->build_id, &dbg, &dbg_path)) {
		syms.from_symtab = read_symtab(dbg.elf, SHT_SYMTAB, &syms);
	} else {
		read_symtab(ef.elf, SHT_DYNSYM, &syms);
	}
	if (!syms.from_symtab && !syms.nr) {
		error("'%s' has no symbol table (it is stripped): run hotloop asm on the unstripped build, or install its debug file (/usr/lib/debug/.build-id/...)",
		      binary);
		goto out;
	}
	if (!f->relocatable) {
		read_segments(f, ef.elf);
		symbolizer = o->symbolizer ? o->symbolizer : symbolizer_new();
		dso = symbolizer_dso(symbolizer, binary, NULL);
	}
	if (o->inlined && (!f->nr_segments || parse_address(query, &addr))) {
		error("no inlined copy of '%s' in '%s': %s", query, binary,
		      f->nr_segments ? "an address names no inlined function" :
		      "inlined copies are found in executables and shared libraries only");
		goto out;
	}
	if (f->nr_segments && !parse_address(query, &addr) &&
	    (o->inlined || !any_exact(&syms, query))) {
		int r = find_inlined(f, dso, &syms, query, o, &c);

		if (r < 0)
			goto out;
		if (r > 0 && o->inlined) {
			error("no inlined copy of '%s' in '%s'%s", query, binary,
			      sym_dso_has_dwarf(dso) ? "" : " (it has no DWARF to tell)");
			goto out;
		}
	}
	if (!c && match_query(&syms, query, o->exact, binary, &c))
		goto out;
	if (c->size > MAX_FUNCTION_BYTES) {
		error("'%s' in '%s' claims %" PRIu64 " bytes of code: more than hotloop asm reads (%u MiB)",
		      cand_name(c), binary, c->size, MAX_FUNCTION_BYTES >> 20);
		goto out;
	}
	if (c->value + c->size < c->value) {
		error("'%s' in '%s' wraps around the address space", cand_name(c), binary);
		goto out;
	}
	if (function_bytes(&ef, c, f->relocatable, binary, &code))
		goto out;
	if (!f->nr_ranges) {
		f->name = intern(f, cand_name(c));
		f->system_name = intern(f, c->name);
	}
	f->start = c->value;
	f->end = c->value + c->size;
	if (asm_decode(f, f->arch, code, c->size, c->value))
		goto out;
	if (f->relocatable)
		drop_relocated_targets(f, ef.elf, c->shndx);
	else if (f->nr_segments)
		add_lines(f, dso);
	if (f->nr_ranges)
		mark_outside(f);
	ret = 0;
out:
	if (symbolizer != o->symbolizer)
		symbolizer_free(symbolizer);
	symbols_release(&syms);
	elf_file_close(&dbg);
	elf_file_close(&ef);
	strbuf_release(&sb);
	strbuf_release(&dbg_path);
	if (ret) {
		/* keep the path for messages, drop the rest */
		asm_function_release(f);
		f->binary = intern(f, binary);
	}
	return ret;
}

/* ---- profiles ---- */

/* The instruction holding 'addr' (instructions are in address order), or NULL. */
static struct asm_insn *insn_at(struct asm_function *f, uint64_t addr)
{
	size_t lo = 0, hi = f->nr_insns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct asm_insn *in = &f->insns[mid];

		if (addr < in->addr)
			hi = mid;
		else if (addr - in->addr >= in->size)
			lo = mid + 1;
		else
			return in;
	}
	return NULL;
}

static bool mapping_matches(const struct asm_function *f, const struct profile *p,
			    const struct pf_mapping *m, bool *stale)
{
	const char *file = profile_string(p, m->filename);
	const char *bid = profile_string(p, m->build_id);
	bool same_file = *file && (!strcmp(file, f->binary) ||
				   (*f->realpath && !strcmp(file, f->realpath)));

	*stale = false;
	if (*bid && *f->build_id) {
		if (!strcasecmp(bid, f->build_id))
			return true;
		*stale = same_file;
		return false;
	}
	if (!same_file && *f->realpath && *file == '/') {
		char *real = realpath(file, NULL);
		same_file = real && !strcmp(real, f->realpath);
		free(real);
	}
	return same_file;
}

/*
 * Call fn for each sample of p with a positive value 'idx' whose leaf
 * location lies in this binary's mapping (same path or build id), with the
 * leaf's address in the file; f->profile_samples gets the sum of every
 * sample's value. -1 after an error (a bad index).
 */
static int each_leaf(struct asm_function *f, const struct profile *p, int idx, bool warn,
		     void (*fn)(void *arg, uint64_t vaddr, int64_t v, const struct pf_location *loc),
		     void *arg)
{
	signed char *match;	/* per mapping: 1 this binary, 0 not, -1 unchecked */

	if (idx < 0 || (size_t)idx >= p->nr_sample_type)
		return error("sample type %d is not in the profile (it has %zu)", idx, p->nr_sample_type);
	f->profile_samples = 0;
	match = xmalloc(p->nr_mappings + 1);
	memset(match, -1, p->nr_mappings + 1);
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct pf_sample *s = &p->samples[i];
		const int64_t *vals = profile_sample_values(p, s);
		const uint64_t *locs = profile_sample_locs(p, s);
		const struct pf_location *loc;
		const struct pf_mapping *m;
		uint64_t off, vaddr;

		if (!vals || vals[idx] <= 0)
			continue;
		f->profile_samples = sat_add(f->profile_samples, vals[idx]);
		if (!locs || !(loc = profile_location(p, locs[0])) ||
		    !(m = profile_mapping(p, loc->mapping_id)))
			continue;
		if (match[m->id - 1] < 0) {
			bool stale;
			match[m->id - 1] = mapping_matches(f, p, m, &stale);
			if (stale && warn)
				warning("the profile's '%s' has build id %s, the file has %s: its samples are left out (rebuilt since the recording?)",
					profile_string(p, m->filename), profile_string(p, m->build_id),
					f->build_id);
		}
		if (!match[m->id - 1] || loc->address < m->start ||
		    __builtin_add_overflow(loc->address - m->start, m->offset, &off) ||
		    !offset_to_vaddr(f, off, &vaddr))
			continue;
		fn(arg, vaddr, vals[idx], loc);
	}
	free(match);
	return 0;
}

struct annotate {
	struct asm_function *f;
	const struct profile *p;
};

static void annotate_leaf(void *arg, uint64_t vaddr, int64_t v, const struct pf_location *loc)
{
	struct annotate *an = arg;
	struct asm_function *f = an->f;
	const struct profile *p = an->p;
	struct asm_insn *in;

	if (vaddr < f->start || vaddr >= f->end || !(in = insn_at(f, vaddr)) || in->outside)
		return;
	in->samples = sat_add(in->samples, v);
	f->samples = sat_add(f->samples, v);
	/* without DWARF in the file, the profile's own line */
	if (!in->line && loc->nline && loc->line_off < p->nr_lines &&
	    loc->nline <= p->nr_lines - loc->line_off) {
		const struct pf_line *l = &p->lines[loc->line_off];
		const struct pf_function *fn = profile_function(p, l->function_id);
		if (fn && l->line > 0 && l->line <= INT_MAX &&
		    *profile_string(p, fn->filename)) {
			in->file = intern(f, profile_string(p, fn->filename));
			in->line = (int)l->line;
		}
	}
}

int asm_annotate(struct asm_function *f, const struct profile *p, int idx)
{
	const struct pf_value_type *st;
	struct annotate an = { f, p };

	if (idx < 0 || (size_t)idx >= p->nr_sample_type)
		return error("sample type %d is not in the profile (it has %zu)", idx, p->nr_sample_type);
	st = &p->sample_type[idx];
	f->annotated = true;
	f->sample_type = intern(f, profile_string(p, st->type));
	f->sample_unit = intern(f, profile_string(p, st->unit));
	f->samples = 0;
	for (size_t i = 0; i < f->nr_insns; i++)
		f->insns[i].samples = 0;
	return each_leaf(f, p, idx, true, annotate_leaf, &an);
}

/* ---- JSON ---- */

static const struct { unsigned bit; const char *name; } class_names[] = {
	{ ASM_C_LOAD, "load" }, { ASM_C_STORE, "store" }, { ASM_C_BRANCH, "branch" },
	{ ASM_C_COND, "conditional" }, { ASM_C_CALL, "call" }, { ASM_C_RET, "ret" },
	{ ASM_C_INT_DIV, "int-div" }, { ASM_C_FP_SCALAR, "fp-scalar" },
	{ ASM_C_SIMD, "simd" }, { ASM_C_FP_DIV, "fp-div" }, { ASM_C_INT_ALU, "int-alu" },
	{ ASM_C_FP_ARITH, "fp-arith" }, { ASM_C_NOP, "nop" }, { ASM_C_UNKNOWN, "unknown" },
	{ ASM_C_INDIRECT, "indirect" },
};

unsigned asm_class_bit(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(class_names); i++)
		if (!strcmp(class_names[i].name, name))
			return class_names[i].bit;
	return 0;
}

const char *asm_class_name(unsigned bit)
{
	for (size_t i = 0; i < ARRAY_SIZE(class_names); i++)
		if (class_names[i].bit == bit)
			return class_names[i].name;
	return "?";
}

static json_t *classes_json(unsigned c)
{
	json_t *a = json_array();

	for (size_t i = 0; i < ARRAY_SIZE(class_names); i++)
		if (c & class_names[i].bit)
			json_array_append_new(a, json_string(class_names[i].name));
	return a;
}

static json_t *mix_json(const struct asm_mix *m)
{
	json_t *o = json_object();

	json_object_set_new(o, "instructions", json_integer(m->instructions));
	json_object_set_new(o, "fp_scalar", json_integer(m->fp_scalar));
	json_object_set_new(o, "fp_div", json_integer(m->fp_div));
	json_object_set_new(o, "simd", json_integer(m->simd));
	json_object_set_new(o, "simd64", json_integer(m->simd64));
	json_object_set_new(o, "simd128", json_integer(m->simd128));
	json_object_set_new(o, "simd256", json_integer(m->simd256));
	json_object_set_new(o, "simd512", json_integer(m->simd512));
	json_object_set_new(o, "simd_scalable", json_integer(m->simd_scalable));
	json_object_set_new(o, "load", json_integer(m->load));
	json_object_set_new(o, "store", json_integer(m->store));
	json_object_set_new(o, "branch", json_integer(m->branch));
	json_object_set_new(o, "cond_branch", json_integer(m->cond_branch));
	json_object_set_new(o, "int_div", json_integer(m->int_div));
	json_object_set_new(o, "call", json_integer(m->call));
	return o;
}

/* The weighted mix as shares of the function's samples. */
static json_t *share_json(const struct asm_mix *m, int64_t total)
{
	json_t *o = json_object();

#define SHARE(field) json_object_set_new(o, #field, \
		json_real(total > 0 ? (double)m->field / (double)total : 0.0))
	SHARE(instructions); SHARE(fp_scalar); SHARE(fp_div); SHARE(simd); SHARE(simd64);
	SHARE(simd128); SHARE(simd256); SHARE(simd512); SHARE(simd_scalable); SHARE(load);
	SHARE(store); SHARE(branch); SHARE(cond_branch); SHARE(int_div); SHARE(call);
#undef SHARE
	return o;
}

static const char *hot_rule_name(enum asm_hot_rule r)
{
	switch (r) {
	case ASM_HOT_SAMPLES: return "samples";
	case ASM_HOT_LOOPS: return "loops";
	case ASM_HOT_FUNCTION: return "function";
	}
	return "function";
}

/* Where an inlined function's code analysed lies; null for a function of its own. */
static json_t *inlined_json(const struct asm_function *f)
{
	json_t *o, *ranges, *into;
	uint64_t bytes = 0;

	if (!*f->inlined_into)
		return json_null();
	o = json_object();
	ranges = json_array();
	into = json_array();
	json_object_set_new(o, "into", json_text(f->inlined_into));
	json_object_set_new(o, "into_system_name", json_text(f->inlined_into_system));
	json_object_set_new(o, "copies", json_integer((json_int_t)f->nr_copies));
	for (size_t i = 0; i < f->nr_ranges; i++) {
		bytes += f->ranges[i].end - f->ranges[i].start;
		json_array_append_new(ranges, json_pack("{s:I, s:I}",
			"start", (json_int_t)f->ranges[i].start, "end", (json_int_t)f->ranges[i].end));
	}
	json_object_set_new(o, "bytes", json_integer((json_int_t)bytes));
	json_object_set_new(o, "ranges", ranges);
	for (size_t i = 0; i < f->nr_into; i++)
		json_array_append_new(into, json_pack("{s:o, s:I, s:I, s:o}",
			"function", json_text(f->into[i].name),
			"copies", (json_int_t)f->into[i].copies,
			"bytes", (json_int_t)f->into[i].bytes,
			"samples", f->annotated ? json_integer(f->into[i].samples) : json_null()));
	json_object_set_new(o, "all_into", into);
	return o;
}

json_t *asm_to_json(const struct asm_function *f)
{
	json_t *doc = json_object(), *insns = json_array(), *loops = json_array();
	json_t *tags = json_array(), *mix = json_object(), *vec = json_null();

	json_object_set_new(doc, "binary", json_text(f->binary));
	json_object_set_new(doc, "arch", json_string(asm_arch_name(f->arch)));
	json_object_set_new(doc, "build_id", *f->build_id ? json_text(f->build_id) : json_null());
	json_object_set_new(doc, "function", json_text(f->name));
	json_object_set_new(doc, "system_name", json_text(f->system_name));
	json_object_set_new(doc, "start", json_integer((json_int_t)f->start));
	json_object_set_new(doc, "end", json_integer((json_int_t)f->end));
	json_object_set_new(doc, "size", json_integer((json_int_t)(f->end - f->start)));
	json_object_set_new(doc, "relocatable", json_boolean(f->relocatable));
	json_object_set_new(doc, "inlined", inlined_json(f));
	json_object_set_new(doc, "sample_type", f->annotated ? json_text(f->sample_type) : json_null());
	json_object_set_new(doc, "samples", f->annotated ? json_integer(f->samples) : json_null());
	json_object_set_new(doc, "profile_samples", f->annotated ? json_integer(f->profile_samples) : json_null());
	json_object_set_new(doc, "hot_rule", json_string(hot_rule_name(f->hot_rule)));
	json_object_set_new(doc, "hot_instructions", json_integer((json_int_t)f->nr_hot));

	for (size_t i = 0; i < f->nr_insns; i++) {
		const struct asm_insn *in = &f->insns[i];
		json_t *o, *regs;

		if (in->outside)
			continue;
		o = json_object();
		json_object_set_new(o, "address", json_integer((json_int_t)in->addr));
		json_object_set_new(o, "size", json_integer(in->size));
		json_object_set_new(o, "mnemonic", json_text(in->mnemonic));
		json_object_set_new(o, "operands", json_text(in->operands));
		json_object_set_new(o, "classes", classes_json(in->classes));
		json_object_set_new(o, "simd_width", (in->classes & ASM_C_SIMD) ? json_integer(in->simd_width) : json_null());
		json_object_set_new(o, "isa", (in->classes & ASM_C_SIMD) ? json_string(asm_isa_name(in->isa)) : json_null());
		json_object_set_new(o, "target", in->has_target ? json_integer((json_int_t)in->target) : json_null());
		json_object_set_new(o, "reads", regs = json_array());
		for (uint8_t k = 0; k < in->nr_reads; k++)
			json_array_append_new(regs, json_text(strtab_get(&f->strs, in->reads[k])));
		json_object_set_new(o, "writes", regs = json_array());
		for (uint8_t k = 0; k < in->nr_writes; k++)
			json_array_append_new(regs, json_text(strtab_get(&f->strs, in->writes[k])));
		json_object_set_new(o, "samples", f->annotated ? json_integer(in->samples) : json_null());
		json_object_set_new(o, "share", f->annotated && f->samples > 0
					? json_real((double)(in->samples > 0 ? in->samples : 0) / (double)f->samples)
					: json_null());
		json_object_set_new(o, "hot", json_boolean(in->hot));
		json_object_set_new(o, "hot_loop", json_boolean(in->in_hot_loop));
		json_object_set_new(o, "file", *in->file ? json_text(in->file) : json_null());
		json_object_set_new(o, "line", in->line ? json_integer(in->line) : json_null());
		json_object_set_new(o, "inlined", in->inlined && *in->inlined ? json_text(in->inlined) : json_null());
		json_array_append_new(insns, o);
	}
	json_object_set_new(doc, "instructions", insns);
	for (size_t i = 0; i < f->nr_loops; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "head", json_integer((json_int_t)f->loops[i].head));
		json_object_set_new(o, "start", json_integer((json_int_t)f->loops[i].start));
		json_object_set_new(o, "end", json_integer((json_int_t)f->loops[i].end));
		json_object_set_new(o, "innermost", json_boolean(f->loops[i].innermost));
		json_object_set_new(o, "parent", f->loops[i].parent >= 0 ? json_integer(f->loops[i].parent) : json_null());
		json_object_set_new(o, "depth", json_integer(f->loops[i].depth));
		json_object_set_new(o, "samples", f->annotated ? json_integer(f->loops[i].samples) : json_null());
		json_array_append_new(loops, o);
	}
	json_object_set_new(doc, "loops", loops);
	json_object_set_new(doc, "loop_free", json_boolean(f->loop_free));
	json_object_set_new(doc, "indirect_jumps", json_integer((json_int_t)f->nr_indirect));
	json_object_set_new(mix, "function", mix_json(&f->mix));
	json_object_set_new(mix, "hot", mix_json(&f->hot_mix));
	json_object_set_new(mix, "hot_loop", mix_json(&f->loop_mix));
	json_object_set_new(mix, "samples", f->annotated ? share_json(&f->sample_mix, f->samples) : json_null());
	json_object_set_new(doc, "mix", mix);
	for (int i = 0; i < ASM_NR_TAGS; i++) {
		enum asm_tag t = asm_tag_order[i];
		json_t *o;

		if (!(f->tags & t))
			continue;
		o = json_object();
		json_object_set_new(o, "name", json_string(asm_tag_name(t)));
		json_object_set_new(o, "evidence", json_text(asm_evidence(f, t)));
		json_array_append_new(tags, o);
	}
	json_object_set_new(doc, "tags", tags);
	if (f->vector_isa != ASM_ISA_NONE) {
		vec = json_object();
		json_object_set_new(vec, "isa", json_string(asm_isa_name(f->vector_isa)));
		json_object_set_new(vec, "width", f->vector_width ? json_integer(f->vector_width) : json_null());
	}
	json_object_set_new(doc, "vector", vec);
	json_object_set_new(doc, "simd_share", json_real(f->simd_share));
	json_object_set_new(doc, "verdict", json_text(f->verdict));
	return doc;
}
