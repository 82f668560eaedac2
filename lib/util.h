/*
 * util.h: what every file in lib/ and src/ needs: checked allocation, the
 * pluggable error reporter, warnings, BUG() for broken invariants and the
 * exit codes. Include it first; it pulls in banned.h.
 */
#ifndef HOTLOOP_UTIL_H
#define HOTLOOP_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The one set of exit codes (design.md, "Commands"). */
enum hl_exit {
	HL_EXIT_OK = 0,
	HL_EXIT_FAILURE = 1,
	HL_EXIT_USAGE = 2,
	HL_EXIT_NOT_PERMITTED = 3,
	HL_EXIT_REJECT = 4,
	HL_EXIT_NOT_EXECUTABLE = 126,
	HL_EXIT_NOT_FOUND = 127,
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ATTR_PRINTF(f, a) __attribute__((format(printf, f, a)))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xstrfmt(const char *fmt, ...) ATTR_PRINTF(1, 2);

/*
 * Grow array 'x' (with 'alloc' slots) to hold at least 'nr' elements.
 * Growth is geometric so appending n elements costs O(n).
 */
#define ALLOC_GROW(x, nr, alloc) do { \
		if ((size_t)(nr) > (alloc)) { \
			size_t alloc_grow_n_ = (alloc) < 16 ? 16 : (alloc) * 2; \
			if (alloc_grow_n_ < (size_t)(nr)) \
				alloc_grow_n_ = (nr); \
			(x) = xrealloc((x), alloc_grow_n_ * sizeof(*(x))); \
			(alloc) = alloc_grow_n_; \
		} \
	} while (0)

/*
 * Errors. error() reports "hotloop: <msg>" through the current routine and
 * returns -1, so library code can write `return error("...")`. serve and mcp
 * install their own routine to turn messages into responses.
 */
typedef void (*report_fn)(const char *prefix, const char *msg);
/* Install a routine (NULL: the default, stderr); returns the one before. */
report_fn set_error_routine(report_fn fn);
report_fn set_warn_routine(report_fn fn);
int hl_error(const char *fmt, ...) ATTR_PRINTF(1, 2);
void hl_warning(const char *fmt, ...) ATTR_PRINTF(1, 2);
#define error(...) hl_error(__VA_ARGS__)
#define warning(...) hl_warning(__VA_ARGS__)

/* The last message error() produced (for --json error documents). */
const char *last_error(void);
/* Forget it: a command's own --json document has told it. */
void clear_last_error(void);

/*
 * Cancellation. A front end's SIGINT or SIGTERM handler calls hl_cancel()
 * (async-signal-safe); every engine stops at its next step, and the child
 * process it waits for is killed (run-command.c, runner.c, record.c).
 */
void hl_cancel(void);
bool hl_cancelled(void);
void hl_cancel_reset(void);

_Noreturn void hl_bug(const char *file, int line, const char *fmt, ...) ATTR_PRINTF(3, 4);
#define BUG(...) hl_bug(__FILE__, __LINE__, __VA_ARGS__)

/* a + b, clamped to the int64 range: values in profiles come from outside. */
static inline int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* The index of 's' in a table of names (NULL entries never match), or -1. */
int name_index(const char *const *names, size_t nr, const char *s);

/* Levenshtein distance, for "did you mean" hints; SIZE_MAX past 64 bytes. */
size_t edit_distance(const char *a, const char *b);

/* The last two components of a path: enough to find a source file in a table. */
const char *short_path(const char *path);

/*
 * 'name' joined with the directory 'dir' (when 'name' is relative and 'dir'
 * not NULL or empty) and normalized lexically, into 'out' (its contents are
 * replaced): empty and "." components go, ".." takes the component before it
 * away (at the root of an absolute path it stays at the root; a relative path
 * keeps the ".."s it cannot take away), no trailing '/'. Links are not
 * followed. "" stays "", a relative path that cancels out is ".".
 * ("/src/prog", "../lib/a/../b.h") -> "/src/lib/b.h", as DWARF's
 * DW_AT_comp_dir and a relative DW_AT_name or include directory combine.
 */
struct strbuf;
void path_join_normalize(struct strbuf *out, const char *dir, const char *name);

/* Monotonic clock in nanoseconds. */
uint64_t now_ns(void);

/* All 'len' bytes, retrying on EINTR and short transfers: 0, or -1 (errno set, or 0 at EOF). */
int read_full(int fd, void *buf, size_t len);
int write_full(int fd, const void *buf, size_t len);

/*
 * Write 'len' bytes to 'path' atomically: a temp file in the same directory,
 * fsync, rename. A killed writer never leaves a partial file under 'path'.
 */
int write_file_atomic(const char *path, const void *buf, size_t len);

/*
 * Read a small file (/proc, /sys) into buf, NUL-terminated: the number of
 * bytes, or -1, quietly, when it cannot be read.
 */
ssize_t read_small_file(const char *path, char *buf, size_t size);
/* The integer a small file starts with; false when absent or not a number. */
bool read_int64_file(const char *path, int64_t *out);

/*
 * The CPUs of a list like "1", "0,2" or "0-3,6" (what --pin takes, and
 * /sys/devices/system/cpu/online holds with its final newline), each from
 * 0 to 'max' and once, in their order, in a new array *cpus the caller
 * frees. An empty or malformed list is an error naming 'what' (quietly -1
 * when 'what' is NULL); *cpus is NULL and *nr 0 then.
 */
#define CPU_LIST_MAX 1023	/* what a cpu_set_t holds, so what --pin takes */
int cpu_list_parse(const char *what, const char *s, int max, int **cpus, size_t *nr);

/*
 * Remove 'path' and everything under it, not following links: 0 (also
 * when it is not there), or -1 with an error naming what could not go.
 */
int remove_tree(const char *path);
/* mkdir -p: 'path' and every directory above it that is missing. 0, or -1 with an error. */
int mkdir_p(const char *path);

/* Read a whole file (at most 'cap' bytes, else an error). */
struct strbuf;
int read_file(struct strbuf *sb, const char *path, size_t cap);

#include "banned.h"
#endif
