/*
 * symbolize.h: addresses to function names, source lines and inline chains
 * (elfutils libdw/libelf). A struct symbolizer owns a cache of struct sym_dso,
 * one per ELF file (or the kernel); every string it hands out stays valid
 * until symbolizer_free().
 *
 * Fast by construction: each DSO's symbol table is read once and sorted;
 * line tables and inline ranges are read once per compilation unit, on first
 * use; lookups are binary searches. Never one dwfl_module_addrinfo() or
 * dwarf_getscopes() per address. A symbolizer is not thread-safe.
 */
#ifndef HOTLOOP_SYMBOLIZE_H
#define HOTLOOP_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;
struct symbolizer;
struct sym_dso;

struct sym_frame {
	const char *name;		/* demangled name; never NULL */
	const char *system_name;	/* linkage (mangled) name; never NULL */
	const char *file;		/* source file, "" when unknown */
	int line;			/* source line, 0 when unknown */
	int start_line;			/* line of the function's declaration, 0 when unknown */
	bool inlined;			/* this frame was inlined into the next one */
};

struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);

/*
 * Where separate debug files are searched, in elfutils' format: entries
 * separated by ':', absolute ones as roots for .build-id/xx/rest.debug and
 * /usr/lib/debug-style mirrors, relative ones beside the file. NULL (the
 * default) is ":.debug:/usr/lib/debug". Affects DSOs opened afterwards.
 */
void symbolizer_set_debug_path(struct symbolizer *s, const char *path);

/*
 * The DSO for an ELF file, opened on first use and cached by path. When
 * build_id (hex) is given and the file's build id differs (and no cached
 * copy has it, below), or the file is missing or not ELF, a warning is
 * printed once and the DSO resolves nothing (lookups return 0 frames):
 * never NULL.
 * When the file at 'path' is not the one with build_id (rebuilt, gone),
 * a copy with that build id is used if there is one in perf's build-id
 * cache ($HOME/.debug/.build-id/xx/rest/elf, filled by perf record) or
 * debuginfod's ($HOME/.cache/debuginfod_client/ID/executable).
 * Separate debug info is found by build id (/usr/lib/debug/.build-id) and
 * by .gnu_debuglink.
 */
struct sym_dso *symbolizer_dso(struct symbolizer *s, const char *path,
			       const char *build_id);
/*
 * The file 'leaf' ("elf", "kallsyms") that perf's build-id cache keeps for
 * build id 'hex' ($HOME/.debug/.build-id/xx/rest/leaf) into out: 0 when it
 * is there and readable, else -1 with out empty.
 */
int sym_build_id_cache(const char *hex, const char *leaf, struct strbuf *out);

/*
 * The running kernel, symbolized from /proc/kallsyms (function names only,
 * without module names). When kernel.kptr_restrict hides the addresses
 * (all zero) a warning is printed once and the DSO resolves nothing.
 */
struct sym_dso *symbolizer_kernel(struct symbolizer *s);
/* The same from a file in kallsyms' format (a copy taken on another machine). */
struct sym_dso *symbolizer_kallsyms(struct symbolizer *s, const char *path);

/*
 * Resolve one address. For an ELF DSO 'addr' is a file offset (runtime
 * address - mapping start + mapping file offset); for the kernel it is the
 * runtime address. Writes up to 'max' frames, innermost (inlined) first,
 * the last being the function that contains the address; returns the count
 * (0 when the address is unknown). Each frame but the first has the line of
 * the call into the frame before it. Without DWARF for the address the one
 * frame comes from the symbol table, with file "" and line 0. A chain deeper
 * than 'max' is cut, keeping the innermost frames.
 * PLT stubs (x86-64, arm64) are named "<target>@plt" as objdump names them,
 * the rest of a PLT (its header, lazy-binding code) "[plt]". An address in
 * no symbol, such as the padding after a function, resolves to nothing.
 * Several symbols at one address resolve to one: a function symbol over
 * other code symbols, then global over weak over local, then fewer leading
 * underscores, then the shorter name, then the first in byte order.
 */
int sym_lookup(struct sym_dso *d, uint64_t addr, struct sym_frame *frames, int max);

/* The build id of the DSO's file as hex, "" when it has none. */
const char *sym_dso_build_id(struct sym_dso *d);
/* Path of the file the DSO was opened from. */
const char *sym_dso_path(struct sym_dso *d);
/* Whether DWARF (source lines, inline frames) was found for the DSO. */
bool sym_dso_has_dwarf(struct sym_dso *d);
/*
 * The DSO's first executable PT_LOAD segment: its address, file offset
 * and size. False for the kernel or a DSO that resolves nothing.
 */
bool sym_dso_exec_segment(struct sym_dso *d, uint64_t *vaddr, uint64_t *off, uint64_t *size);
/*
 * The function a call returning to file offset 'ret_off' called, read from
 * the call instruction's bytes (x86-64 call rel32, arm64 bl): a PLT stub
 * "realloc@plt" for a call into a library. NULL when the instruction is
 * not such a call or its target has no name.
 */
const char *sym_callee(struct sym_dso *d, uint64_t ret_off);

/* An address range [lo, hi) of one inlined copy of a function. */
struct sym_range {
	uint64_t lo, hi;	/* virtual addresses, as in the file's symbol table */
	size_t instance;	/* which copy (DW_TAG_inlined_subroutine), from 0 */
};

/* Every copy of one function inlined into others: sym_inlined_ranges(). */
struct sym_inlined {
	struct sym_range *ranges;	/* the copies' code, by compilation unit */
	size_t nr_ranges, alloc_ranges;
	size_t copies;
	const char *name, *system_name;	/* as frames name it; NULL when no copy */
};

/*
 * Every copy of the function 'name' inlined into other functions of the
 * DSO, from DWARF (DW_TAG_inlined_subroutine): 'name' is its DWARF name,
 * its linkage name, or its demangled name with or without the parameter
 * list. A copy's ranges hold the code inlined into it too. Reads every
 * compilation unit. *out is filled (release it with sym_inlined_release()
 * whatever the result); returns the number of copies.
 */
size_t sym_inlined_ranges(struct sym_dso *d, const char *name, struct sym_inlined *out);
void sym_inlined_release(struct sym_inlined *in);

/*
 * Demangle C++ and Rust (legacy and v0) names; returns 'name' itself when
 * it is not mangled or does not demangle.
 */
const char *sym_demangle(struct symbolizer *s, const char *name);

#endif
