/*
 * callgrind.h: reading valgrind's callgrind output (callgrind.out.PID, the
 * "Callgrind Format" of valgrind's manual) into the stack-sample profile
 * model, so report, flame, brief and convert take it like any profile.
 * The caller owns the struct profile; nothing here keeps a pointer to input.
 *
 * How a call graph becomes stacks:
 * - Each event of the "events:" header ("Ir", "Dr", ...) is one sample type
 *   with unit "count"; "Ir" is the default sample type when present, else
 *   the first event.
 * - A function is (object, file, name) as callgrind names it: ob= becomes
 *   the mapping (its file name), the file of fl= (or fi=/fe= when fn= comes
 *   after them) the function's file, and line positions the lines of its
 *   locations. Cost under fi=/fe= (code inlined from another file) is an
 *   inlined frame "name" in that file inside the function's own frame, the
 *   way callgrind_annotate keeps it as a separate file:function entry.
 * - Self cost per (function, file, line) is exact: summed over the samples
 *   it equals callgrind's exclusive cost, event by event.
 * - Stacks are rebuilt from the call edges (calls= lines): starting at the
 *   roots (functions no other function calls), each function's self cost and
 *   outgoing calls are split over the paths that reach it in proportion to
 *   the inclusive cost each call edge on the path carried. So a function's
 *   total in a report approximates callgrind's inclusive cost; it is exact
 *   when every function has one caller, and an estimate when a function is
 *   reached along several paths (callgrind keeps no per-path costs).
 * - Recursion is cut where a function already on the path would repeat;
 *   paths are expanded heaviest first, at most CALLGRIND_MAX_DEPTH deep and
 *   CALLGRIND_MAX_PATHS in all. Cut paths give their share of a function's
 *   self cost to the function's other stacks; a function no expanded path
 *   reaches appears as a root of its own. Profile comments say what was cut.
 * - Values are integers: each function's self cost is divided by largest
 *   remainders, so per-line self totals stay exact.
 */
#ifndef HOTLOOP_CALLGRIND_H
#define HOTLOOP_CALLGRIND_H

#include <stdbool.h>
#include <stddef.h>

struct profile;

/* Bounds on hostile input and on the stacks rebuilt from it. */
#define CALLGRIND_MAX_LINE ((size_t)1 << 20)
#define CALLGRIND_MAX_EVENTS 64
#define CALLGRIND_MAX_ID 0xffffffffull
#define CALLGRIND_MAX_DEPTH 256
#define CALLGRIND_MAX_PATHS ((size_t)1 << 18)
/*
 * The memory the rebuilt stacks may take, in 8-byte cells: per path its
 * share of each event, per sample its values and its locations.
 */
#define CALLGRIND_MAX_CELLS ((size_t)1 << 23)

/*
 * Parse callgrind text into p, which must be freshly initialized. A line
 * that is not valid callgrind (an unknown key, a malformed number or
 * position, a cost line before fn= or before events:, more costs than
 * events, an undefined name id, calls= without its cost line, a line
 * longer than CALLGRIND_MAX_LINE or with a NUL byte) is an error naming the
 * line. 'what' names the input in messages. On error p is left empty.
 */
int callgrind_parse(struct profile *p, const char *buf, size_t len, const char *what);

/*
 * Whether p's stacks were rebuilt from a callgrind call graph: they start
 * at real roots, so they are complete, not cut short by an unwinder.
 */
bool callgrind_rebuilt(const struct profile *p);

/*
 * Whether the bytes look like callgrind output: the first line is
 * "# callgrind format", or the file starts with callgrind header lines
 * ("version:", "creator:", "events:", ...) and has fn= lines.
 */
bool callgrind_sniff(const void *buf, size_t len);

#endif
