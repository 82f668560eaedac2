/*
 * heaptrack.h: reading heaptrack's data files (heaptrack.NAME.PID[.zst|.gz],
 * the line-based format heaptrack_interpret writes, file versions 1 to 3)
 * into the heap profile model (heap-profile.h), so report, flame, brief and
 * convert take them like any profile. The caller owns the struct profile.
 *
 * How the file becomes samples:
 * - One sample per allocation info ("a SIZE TRACE": one size from one
 *   stack), with the numeric label bytes=SIZE, when it allocated at all.
 * - alloc_* count the "+" lines; inuse_* what was live at the moment the
 *   live bytes were highest (heaptrack's peak); leak_* what was live at the
 *   end; temp_objects a "-" right after the "+" of the same allocation info
 *   (heaptrack_print's temporaries, by its rule to the letter). All exact:
 *   heaptrack records every call. Leading "operator new" frames are left
 *   out of the stacks, as heaptrack_print does.
 * - heaptrack does not say which call allocated: op is what the call at the
 *   stack's first address called, read from the call instruction in the
 *   module's file (its PLT stub, "realloc@plt") when the module is found
 *   here (below). Else, as heaptrack writes a realloc as the "-" of the old
 *   block just before the "+" of the new one, an allocation info most of
 *   whose allocations come right after the free of a block of another size
 *   from the same stack gets op=realloc, the others op=malloc.
 * - Stacks come from the trace tree ("t IP PARENT"), leaf first; an
 *   instruction pointer ("i IP MODULE [FUNCTION FILE LINE]...") becomes a
 *   location in a mapping named after its module, with heaptrack's own
 *   symbols and inlined frames (innermost first). Modules carry no load
 *   address in these files: where a module's file is on this machine, the
 *   page-aligned load bias that gives heaptrack's function names to its
 *   addresses is searched for; found, the mapping has its real range (so
 *   asm --profile works) and what heaptrack could not name is symbolized
 *   here; else the addresses stay as they are, in a mapping without range.
 * Comments: "heaptrack", "heap-peak=BYTES", "command: ...".
 */
#ifndef HOTLOOP_HEAPTRACK_H
#define HOTLOOP_HEAPTRACK_H

#include <stdbool.h>
#include <stddef.h>

struct profile;

/* Bounds on hostile input. */
#define HEAPTRACK_MAX_DEPTH 1024	/* frames of one stack */
#define HEAPTRACK_MAX_FRAMES 64	/* inlined frames of one instruction pointer */
#define HEAPTRACK_MAX_LOCS ((size_t)1 << 26)	/* location ids of all samples */

/*
 * Parse heaptrack's (uncompressed) text into p, freshly initialized. A
 * malformed line (a bad number, an index to something not yet defined, a
 * string running past the end, a trace whose parent is not older) is an
 * error naming the line; lines of a kind this reader does not know are
 * skipped with a warning. On error p is left empty.
 */
int heaptrack_parse(struct profile *p, const char *buf, size_t len, const char *what);

/* Whether the bytes start like a heaptrack file: "v HEX HEX" then "X " or "I ". */
bool heaptrack_sniff(const void *buf, size_t len);

#endif
