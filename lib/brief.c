/*
 * brief.c: attribution of every sample to the nearest owned frame, the
 * hotspots ranked by it, their tags with evidence, the hot path, rollups,
 * and the Markdown and JSON renderings cut to a token budget.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "asm.h"
#include "symbolize.h"
#include "brief.h"
#include "callgrind.h"
#include "config.h"
#include "git.h"
#include "hindex.h"
#include "json.h"
#include "kb.h"
#include "profile.h"
#include "record.h"
#include "heap-profile.h"
#include "heap-brief.h"
#include "stacks.h"
#include "strbuf.h"
#include "util.h"

static const char *const tag_names[BT_NR] = {
	"allocation", "string", "formatting", "math", "lock", "syscall",
	"container", "callback", "recursion", "inlined", "compute-leaf",
	"division", "scalar-fp", "not-vectorized", "branchy", "memory-bound",
	"nested-loop", "superlinear", "blocked", "sleep",
};

const char *brief_tag_name(enum brief_tag t)
{
	return t < BT_NR ? tag_names[t] : "?";
}

/* ---- what is ours ----------------------------------------------------- */

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

bool brief_owns_path(const struct brief_owned *o, const char *path)
{
	bool in = false;

	if (!path || *path != '/')
		return false;
	for (size_t i = 0; i < o->nr_roots && !in; i++)
		in = under(path, o->roots[i]);
	for (size_t i = 0; i < o->nr_excluded && in; i++)
		in = !under(path, o->excluded[i]);
	return in;
}

int brief_owned_add(struct brief_owned *o, const char *dir, bool excluded, bool must_exist)
{
	char *real = realpath(dir, NULL);

	if (!real) {
		if (must_exist || errno != ENOENT)
			return error("cannot use '%s' as owned code: %s", dir, strerror(errno));
		return 0;
	}
	if (excluded) {
		ALLOC_GROW(o->excluded, o->nr_excluded + 1, o->alloc_excluded);
		o->excluded[o->nr_excluded++] = real;
	} else {
		ALLOC_GROW(o->roots, o->nr_roots + 1, o->alloc_roots);
		o->roots[o->nr_roots++] = real;
	}
	return 0;
}

static int add_relative(struct brief_owned *o, const char *dir, const char *path, bool excluded)
{
	char *d = xstrfmt("%s/%s", dir, path);
	int ret = brief_owned_add(o, d, excluded, false);

	free(d);
	return ret;
}

int brief_owned_from_config(struct brief_owned *o, const struct config *cf, const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int ret = 0;

	if (slash) {
		slash[slash == dir] = '\0';
	} else {
		free(dir);
		dir = xstrdup(".");
	}
	if (cf->owned.nr) {
		for (size_t i = 0; i < cf->owned.nr && !ret; i++)
			ret = add_relative(o, dir, cf->owned.v[i], false);
		free(o->how);
		o->how = xstrfmt("[project] owned in %s", path);
	} else {
		ret = brief_owned_add(o, dir, false, true);
		for (size_t i = 0; i < cf->protected_paths.nr && !ret; i++)
			ret = add_relative(o, dir, cf->protected_paths.v[i], true);
		free(o->how);
		o->how = xstrfmt("the project of %s, less [project] protected", path);
	}
	free(dir);
	return ret;
}

void brief_owned_release(struct brief_owned *o)
{
	for (size_t i = 0; i < o->nr_roots; i++)
		free(o->roots[i]);
	for (size_t i = 0; i < o->nr_excluded; i++)
		free(o->excluded[i]);
	free(o->roots);
	free(o->excluded);
	free(o->how);
	memset(o, 0, sizeof(*o));
}

/* ---- foreign functions by what they do -------------------------------- */

static const char *const allocation_names[] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc", "cfree", "int_malloc",
	"int_free", "int_realloc", "int_memalign", "malloc_consolidate", "sysmalloc",
	"tcache_get", "tcache_put", "tcache_init", "unlink_chunk", "strdup", "strndup",
	"sbrk", "brk", "operator new", "operator delete", "operator new[]",
	"operator delete[]", NULL,
};
static const char *const string_names[] = {
	"strlen", "strnlen", "strcmp", "strncmp", "strcasecmp", "strncasecmp",
	"memcmp", "bcmp", "memcpy", "memmove", "mempcpy", "memset", "memchr",
	"memrchr", "rawmemchr", "strchr", "strchrnul", "strrchr", "strstr",
	"strcasestr", "strcpy", "stpcpy", "strncpy", "stpncpy", "strcat", "strncat",
	"strspn", "strcspn", "strpbrk", "strcoll", "strxfrm", "wcslen", "wcscmp",
	"wmemcmp", "wmemcpy", "wmemset", "wmemchr", NULL,
};
static const char *const format_names[] = {
	"strtol", "strtoul", "strtoll", "strtoull", "strtod", "strtof", "strtold",
	"atoi", "atol", "atoll", "atof", "itoa", "str_to_mpn", "round_and_return", NULL,
};
static const char *const lock_prefixes[] = {
	"pthread_mutex", "pthread_rwlock", "pthread_spin", "pthread_cond", "lll_",
	"futex", "sem_wait", "sem_post", "sem_timedwait", "std::mutex",
	"std::condition_variable", "std::shared_mutex", "std::__atomic_futex", NULL,
};
static const char *const syscall_names[] = {
	"read", "write", "pread64", "pwrite64", "readv", "writev", "open", "open64",
	"openat", "openat64", "close", "fstat", "fstat64", "stat", "stat64", "lstat",
	"newfstatat", "fstatat", "statx", "lseek", "lseek64", "mmap", "mmap64",
	"munmap", "mprotect", "madvise", "mremap", "ioctl", "poll", "ppoll",
	"epoll_wait", "epoll_pwait", "select", "pselect", "nanosleep",
	"clock_nanosleep", "usleep", "sleep", "getpid", "gettid", "sched_yield",
	"send", "recv", "sendto", "recvfrom", "sendmsg", "recvmsg", "accept",
	"accept4", "connect", "fsync", "fdatasync", "syscall", "getdents64",
	"fcntl", "fcntl64", "dup", "dup2", "pipe", "pipe2", "unlink", "rename", NULL,
};
static const char *const math_names[] = {
	"sin", "cos", "tan", "sincos", "asin", "acos", "atan", "atan2", "sinh",
	"cosh", "tanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
	"pow", "sqrt", "cbrt", "hypot", "fmod", "remainder", "floor", "ceil",
	"round", "lround", "llround", "trunc", "rint", "lrint", "erf", "erfc",
	"lgamma", "tgamma", "ieee754", NULL,
};

static bool in_list(const char *const *list, const char *s, size_t len)
{
	for (; *list; list++)
		if (strlen(*list) == len && !strncmp(*list, s, len))
			return true;
	return false;
}

static bool has_prefix_in(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strncmp(s, *list, strlen(*list)))
			return true;
	return false;
}

/*
 * The name a libc symbol is known by: "__GI___libc_malloc@plt" ->
 * "malloc", "__strlen_avx2" -> "strlen_avx2" (the caller also tries the
 * part before the first '_', the IFUNC variant's family).
 */
static size_t normalize(const char *name, char *out, size_t size)
{
	size_t n;

	if (!strncmp(name, "__GI_", 5))
		name += 5;
	while (*name == '_')
		name++;
	if (!strncmp(name, "libc_", 5) && name[5])
		name += 5;
	n = strcspn(name, "@(");
	if (n >= size)
		n = size - 1;
	memcpy(out, name, n);
	out[n] = '\0';
	return n;
}

static bool is_libm(const char *dso)
{
	return dso && (!strncmp(dso, "libm.so", 7) || !strncmp(dso, "libm-", 5) ||
		       !strncmp(dso, "libmvec", 7));
}

enum brief_tag brief_categorize(const char *name, const char *dso)
{
	char norm[256];
	size_t n, fam;

	if (!name || !strcmp(name, "[unknown]"))
		return BT_NR;
	if (!strncmp(name, "operator new", 12) || !strncmp(name, "operator delete", 15))
		return BT_ALLOCATION;
	if (!strncmp(name, "std::", 5) || !strncmp(name, "__gnu_cxx::", 11) ||
	    !strncmp(name, "__cxx11::", 9)) {
		if (has_prefix_in(lock_prefixes, name))
			return BT_LOCK;
		if (strstr(name, "basic_ostream") || strstr(name, "__ostream_insert") ||
		    strstr(name, "num_put") || strstr(name, "basic_istream") ||
		    strstr(name, "num_get") || strstr(name, "to_string") ||
		    strstr(name, "basic_stringbuf"))
			return BT_FORMATTING;
		return BT_CONTAINER;
	}
	n = normalize(name, norm, sizeof(norm));
	fam = strcspn(norm, "_");
	if (in_list(allocation_names, norm, n))
		return BT_ALLOCATION;
	if (has_prefix_in(lock_prefixes, norm))
		return BT_LOCK;
	if (in_list(string_names, norm, n) || in_list(string_names, norm, fam))
		return BT_STRING;
	if (strstr(norm, "printf") || strstr(norm, "scanf") ||
	    in_list(format_names, norm, n) || in_list(format_names, norm, fam))
		return BT_FORMATTING;
	if (is_libm(dso) || in_list(math_names, norm, n) ||
	    (in_list(math_names, norm, fam) && fam < n))
		return BT_MATH;
	if (in_list(syscall_names, norm, n))
		return BT_SYSCALL;
	return BT_NR;
}

/*
 * Off CPU, what a thread waits for, by the outermost foreign function
 * that says: a sleep, a lock (mutexes, read-write locks, spin and
 * semaphore waits), else it is blocked (on I/O, a condition, a join, a
 * child). BT_NR for a name that says nothing.
 */
static enum brief_tag off_cpu_category(const char *name)
{
	static const char *const sleeps[] = {
		"nanosleep", "clock_nanosleep", "usleep", "sleep", "thrd_sleep", NULL,
	};
	static const char *const locks[] = {
		"pthread_mutex", "pthread_rwlock", "pthread_spin", "lll_lock", "lll_mutex",
		"sem_wait", "sem_timedwait", "sem_clockwait", "std::mutex", "std::shared_mutex",
		"std::timed_mutex", "std::recursive_mutex", NULL,
	};
	char norm[256];
	size_t n;

	if (!name || !strcmp(name, "[unknown]"))
		return BT_NR;
	n = normalize(name, norm, sizeof(norm));
	if (in_list(sleeps, norm, n))
		return BT_SLEEP;
	if (has_prefix_in(locks, norm))
		return BT_LOCK;
	if (brief_categorize(name, NULL) != BT_NR || !strncmp(norm, "pthread_", 8) ||
	    !strncmp(norm, "std::", 5))
		return BT_BLOCKED;
	return BT_NR;
}

/* Frames a whole stack starts from: a stack whose root is not one was cut short. */
static bool is_entry(const char *name)
{
	static const char *const entries[] = {
		"_start", "__libc_start_main", "__libc_start_call_main", "start_thread",
		"clone", "clone3", "__clone", "__clone3", "thread_start", "main",
		"__GI___clone", "__GI___clone3", "__libc_start_main_impl",
		"runtime.goexit", "runtime.mstart", "runtime.main", "runtime.rt0_go", NULL,
	};
	char norm[128];

	if (!name)
		return false;
	for (const char *const *e = entries; *e; e++)
		if (!strcmp(name, *e))
			return true;
	normalize(name, norm, sizeof(norm));
	return !strcmp(norm, "start_thread") || !strcmp(norm, "clone") || !strcmp(norm, "clone3");
}

/*
 * The kernel's entry for an interrupt that happened to land on user code
 * (a timer tick, a device): time the code did not ask for, unlike a
 * system call or a page fault.
 */
static bool is_interrupt_entry(const char *name)
{
	return !strncmp(name, "asm_sysvec_", 11) || !strncmp(name, "asm_common_interrupt", 20) ||
	       !strncmp(name, "common_interrupt", 16) || !strncmp(name, "apic_timer_interrupt", 20) ||
	       !strncmp(name, "sysvec_", 7);
}

/* ---- per-function statistics ------------------------------------------ */

struct fstat {
	uint64_t key;
	const char *name, *file, *system_name;
	const struct pf_mapping *mapping;
	int64_t self, total, attributed, inlined_attr;
	bool outline;			/* seen as a frame of its own */
	/* where its inlined copies sit: the majority symbol of its leaf samples */
	const struct pf_function *container;
	int64_t container_votes;
	size_t stamp;			/* the last stack that counted its total */
	int hotspot;			/* index in b->hotspots, -1 */
};

struct fmap {
	struct fstat *v;
	size_t nr, alloc;
	struct hindex index;
};

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static bool fstat_eq(const void *table, size_t i, const void *key)
{
	return ((const struct fmap *)table)->v[i].key == *(const uint64_t *)key;
}

/* The entry of 'key', created (zeroed, key set) when absent. */
static struct fstat *fmap_get(struct fmap *m, uint64_t key, bool create)
{
	uint64_t hash = hash64(key);
	size_t s, i;

	if (!create) {
		i = hindex_lookup(&m->index, hash, fstat_eq, m, &key);
		return i == HINDEX_NONE ? NULL : &m->v[i];
	}
	if ((i = hindex_probe(&m->index, hash, fstat_eq, m, &key, &s)) != HINDEX_NONE)
		return &m->v[i];
	ALLOC_GROW(m->v, m->nr + 1, m->alloc);
	memset(&m->v[m->nr], 0, sizeof(m->v[m->nr]));
	m->v[m->nr].key = key;
	m->v[m->nr].hotspot = -1;
	hindex_set(&m->index, s, hash, m->nr);
	return &m->v[m->nr++];
}

static void fmap_release(struct fmap *m)
{
	free(m->v);
	hindex_release(&m->index);
}

/* Functions are told apart by name and file (string indexes are unique). */
static uint64_t frame_key(const struct pf_frame *f)
{
	if (!f->fn)
		return 0;
	return ((uint64_t)f->fn->name << 32) ^ (uint64_t)(uint32_t)f->fn->filename ^
	       ((uint64_t)1 << 63);
}

/*
 * A name -> value tally; 'owned' is that of the name's first add. Names
 * are hashed: a hotspot may have thousands of distinct callers.
 */
struct tally {
	struct tally_item { const char *name; int64_t value; bool owned; } *v;
	size_t nr, alloc;
	struct hindex index;	/* name -> item, while it holds every item */
};

static uint64_t name_hash(const char *name)
{
	return hash_bytes(HASH_SEED, name, strlen(name));
}

static bool tally_eq(const void *table, size_t i, const void *key)
{
	const char *a = ((const struct tally *)table)->v[i].name;

	return a == key || !strcmp(a, key);
}

/* The name as the tally keeps it (the first add's pointer). */
static const char *tally_add(struct tally *t, const char *name, int64_t value, bool owned)
{
	uint64_t h = name_hash(name);
	size_t slot, i;

	if (t->index.nr != t->nr) {
		/* sorted or emptied since: index the items again */
		hindex_release(&t->index);
		for (i = 0; i < t->nr; i++)
			hindex_add(&t->index, name_hash(t->v[i].name), i);
	}
	if ((i = hindex_probe(&t->index, h, tally_eq, t, name, &slot)) != HINDEX_NONE) {
		t->v[i].value = sat_add(t->v[i].value, value);
		return t->v[i].name;
	}
	ALLOC_GROW(t->v, t->nr + 1, t->alloc);
	t->v[t->nr] = (struct tally_item){ name, value, owned };
	hindex_set(&t->index, slot, h, t->nr);
	return t->v[t->nr++].name;
}

static void tally_release(struct tally *t)
{
	free(t->v);
	hindex_release(&t->index);
}

static int cmp_tally(const void *a, const void *b)
{
	const struct tally_item *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void tally_sort(struct tally *t)
{
	if (t->nr > 1)
		qsort(t->v, t->nr, sizeof(*t->v), cmp_tally);
	hindex_release(&t->index);	/* it points at places that moved */
}

/* What pass 2 learns about one hotspot. */
struct detail {
	size_t stamp;			/* the stack 'depth' counts */
	int depth;			/* how often it is on that stack */
	struct tally callers, callees;
	struct tally cat_names[BT_NR];	/* foreign functions behind each category */
	int64_t cat[BT_NR];
	struct tally callback_from;
	int64_t callback, recursive;
	int max_depth;
	int64_t *line_no, *line_value;	/* attributed per source line */
	size_t nr_lines, alloc_lines;
	struct hindex line_index;	/* line -> its index */
};

static void detail_release(struct detail *d)
{
	tally_release(&d->callers);
	tally_release(&d->callees);
	for (int i = 0; i < BT_NR; i++)
		tally_release(&d->cat_names[i]);
	tally_release(&d->callback_from);
	free(d->line_no);
	free(d->line_value);
	hindex_release(&d->line_index);
}

static bool line_eq(const void *table, size_t i, const void *key)
{
	return ((const struct detail *)table)->line_no[i] == *(const int64_t *)key;
}

static void detail_add_line(struct detail *d, int64_t line, int64_t v)
{
	uint64_t h = hash64((uint64_t)line);
	size_t slot, i;

	if ((i = hindex_probe(&d->line_index, h, line_eq, d, &line, &slot)) != HINDEX_NONE) {
		d->line_value[i] = sat_add(d->line_value[i], v);
		return;
	}
	if (d->nr_lines == d->alloc_lines) {
		d->alloc_lines = d->alloc_lines ? 2 * d->alloc_lines : 16;
		d->line_no = xrealloc(d->line_no, d->alloc_lines * sizeof(*d->line_no));
		d->line_value = xrealloc(d->line_value, d->alloc_lines * sizeof(*d->line_value));
	}
	d->line_no[d->nr_lines] = line;
	d->line_value[d->nr_lines] = v;
	hindex_set(&d->line_index, slot, h, d->nr_lines++);
}

/* ---- building ---------------------------------------------------------- */

/*
 * What a frame slot (profile.h) says, worked out on its first sight: the
 * passes below look at every frame of every sample, and a deep stack is
 * mostly the same few slots again and again.
 */
struct slot_info {
	uint32_t fs;			/* index + 1 of its function in bd->fns; 0: not yet */
	uint8_t known;			/* SLOT_* bits: which fields below are set */
	bool owned, kernel, entry;
	uint8_t cat;			/* its brief_categorize(), an enum brief_tag */
	const char *dir;		/* its directory as the rollup keeps it; NULL: not yet */
};
enum { SLOT_OWNED = 1, SLOT_KERNEL = 2, SLOT_ENTRY = 4, SLOT_CAT = 8 };

/* The rollups as pass 2 adds them up. */
struct rollups {
	struct tally dso, dir;
	char **names;			/* the directory names dir holds */
	size_t nr_names, alloc_names;
	int64_t unowned;
};

/*
 * A path of the profile (a source file, a mapped file) looked at once:
 * whether it is under a root, lexically or once its links are resolved
 * (a build run from a directory reached through a link names its sources
 * by that path), and then the real path, which is what is shown.
 */
struct path_info {
	const char *path;
	char *real;			/* set only when it made the path owned */
	bool owned;
};

struct path_cache {
	struct path_info *v;
	size_t nr, alloc;
	struct hindex index;
};

struct builder {
	struct brief *b;
	const struct profile *p;
	int idx, count_idx;
	int off_idx;		/* the off-cpu sample type, or -1 */
	const struct brief_opts *o;
	const struct pf_mapping *main_map;
	char *main_tree;		/* the fallback's: where the main executable was built */
	struct path_cache paths;
	struct fmap fns;
	struct pf_frame *frames;
	size_t alloc_frames;
	bool *owned;
	size_t alloc_owned;
	struct detail *details;
	struct slot_info *slots;	/* profile_frame_slots() of them */
	struct rollups roll;
	struct symbolizer *symbolizer;	/* for asm: each binary's DWARF read once */
};

/* A PLT stub ("strcmp@plt", "[plt]") jumps to foreign code: it is not ours. */
static bool is_plt(const char *name)
{
	size_t n = strlen(name);

	return (n > 4 && !strcmp(name + n - 4, "@plt")) || !strcmp(name, "[plt]");
}

static bool path_eq(const void *table, size_t i, const void *key)
{
	return ((const struct path_cache *)table)->v[i].path == key;
}

static const struct path_info *path_info(struct builder *bd, const char *path)
{
	struct path_cache *pc = &bd->paths;
	uint64_t h = hash64((uint64_t)(uintptr_t)path);
	struct path_info *pi;
	size_t slot, i;

	if ((i = hindex_probe(&pc->index, h, path_eq, pc, path, &slot)) != HINDEX_NONE)
		return &pc->v[i];
	ALLOC_GROW(pc->v, pc->nr + 1, pc->alloc);
	pi = &pc->v[pc->nr];
	pi->path = path;
	pi->real = NULL;
	pi->owned = brief_owns_path(bd->o->owned, path);
	if (!pi->owned && *path == '/') {
		char *real = realpath(path, NULL);

		if (real && strcmp(real, path) && brief_owns_path(bd->o->owned, real)) {
			pi->owned = true;
			pi->real = real;
		} else {
			free(real);
		}
	}
	hindex_set(&pc->index, slot, h, pc->nr++);
	return pi;
}

static bool path_owned(struct builder *bd, const char *path)
{
	return path_info(bd, path)->owned;
}

/* The path as the brief shows it: resolved when that is what made it owned. */
static const char *path_shown(struct builder *bd, const char *path)
{
	const struct path_info *pi = path_info(bd, path);

	return pi->real ? pi->real : path;
}

/* Free the cache; the real paths go to the brief, whose hotspots and rollups show them. */
static void path_cache_release(struct path_cache *pc, struct brief *b)
{
	size_t n = 0;

	for (size_t i = 0; i < pc->nr; i++)
		n += pc->v[i].real != NULL;
	if (n) {
		b->real_paths = xrealloc(b->real_paths, (b->nr_real_paths + n) * sizeof(*b->real_paths));
		for (size_t i = 0; i < pc->nr; i++)
			if (pc->v[i].real)
				b->real_paths[b->nr_real_paths++] = pc->v[i].real;
	}
	free(pc->v);
	hindex_release(&pc->index);
	memset(pc, 0, sizeof(*pc));
}

/*
 * Where the main executable was built, for the fallback: the git top level
 * holding it, else its directory (libtool's .libs/ one up). NULL at "/".
 */
static char *main_tree(const struct builder *bd)
{
	const char *name = bd->main_map ? profile_string(bd->p, bd->main_map->filename) : "";
	char *real, *slash, *top;

	if (*name != '/' || !(real = realpath(name, NULL)))
		return NULL;
	slash = strrchr(real, '/');
	*slash = '\0';
	if ((top = git_find_top(*real ? real : "/"))) {
		free(real);
		real = top;
	} else if ((slash = strrchr(real, '/')) && !strcmp(slash, "/.libs")) {
		*slash = '\0';
	}
	if (!*real || !strcmp(real, "/")) {
		free(real);
		return NULL;
	}
	return real;
}

/*
 * Is a mapped file ours: under a root (its links resolved), or, in the
 * fallback, the main executable or a file of the tree it was built in
 * (a library the same build made, as libtool's .libs/libsqlite3.so next to
 * .libs/sqlite3).
 */
static bool mapping_owned(struct builder *bd, const struct pf_mapping *m, bool fallback)
{
	const char *name;

	if (!m)
		return false;
	name = profile_string(bd->p, m->filename);
	if (path_owned(bd, name))
		return true;
	if (!fallback)
		return m == bd->main_map;
	if (m == bd->main_map)
		return true;
	if (!bd->main_tree || *name != '/')
		return false;
	if (under(name, bd->main_tree))
		return true;
	{
		char *real = realpath(name, NULL);
		bool in = real && under(real, bd->main_tree);

		free(real);
		return in;
	}
}

/*
 * The C runtime's code linked into every executable: a process or thread
 * entry other than main, and crtstuff's and crti's helpers (the exit-time
 * destructor walk, the init and fini sections). A sample there is no more
 * the user's than one in libc.
 */
static bool crt_entry(const char *name)
{
	static const char *const helpers[] = {
		"__do_global_dtors_aux", "frame_dummy", "register_tm_clones",
		"deregister_tm_clones", "_init", "_fini", "__libc_csu_init",
		"__libc_csu_fini", "_dl_relocate_static_pie", NULL,
	};

	if (!name)
		return false;
	for (const char *const *h = helpers; *h; h++)
		if (!strcmp(name, *h))
			return true;
	return is_entry(name) && strcmp(name, "main");
}

static bool frame_owned(struct builder *bd, const struct pf_frame *f, bool fallback)
{
	const char *file;

	if (!f->fn || frame_is_kernel(bd->p, f) || is_plt(frame_name(bd->p, f)))
		return false;
	file = frame_file(bd->p, f);
	if (f->mapping && !*profile_string(bd->p, f->mapping->filename)) {
		/*
		 * A mapping without a file name (folded stacks) says nothing
		 * about whose code it is: all but well-known foreign functions.
		 */
		const char *name = frame_name(bd->p, f);

		if (brief_categorize(name, NULL) != BT_NR || crt_entry(name))
			return false;
		return *file == '/' && !fallback ? path_owned(bd, file)
						 : strncmp(file, "/usr/", 5) != 0;
	}
	if (fallback)
		return strncmp(file, "/usr/", 5) && (*file || !crt_entry(frame_name(bd->p, f))) &&
		       mapping_owned(bd, f->mapping, true);
	if (*file == '/')
		return path_owned(bd, file);
	/*
	 * No line information, or a file relative to a compilation directory
	 * we do not know: the main executable's code, or a DSO's under a root;
	 * not the C runtime's entry code linked into it (_start), which every
	 * whole stack has at its root.
	 */
	return !crt_entry(frame_name(bd->p, f)) && mapping_owned(bd, f->mapping, false);
}

static bool slot_owned(struct builder *bd, const struct pf_frame *f, bool fallback)
{
	struct slot_info *si = &bd->slots[f->slot];

	if (!(si->known & SLOT_OWNED)) {
		si->owned = frame_owned(bd, f, fallback);
		si->known |= SLOT_OWNED;
	}
	return si->owned;
}

static bool slot_kernel(struct builder *bd, const struct pf_frame *f)
{
	struct slot_info *si = &bd->slots[f->slot];

	if (!(si->known & SLOT_KERNEL)) {
		si->kernel = frame_is_kernel(bd->p, f);
		si->known |= SLOT_KERNEL;
	}
	return si->kernel;
}

static bool slot_entry(struct builder *bd, const struct pf_frame *f)
{
	struct slot_info *si = &bd->slots[f->slot];

	if (!(si->known & SLOT_ENTRY)) {
		si->entry = is_entry(frame_name(bd->p, f));
		si->known |= SLOT_ENTRY;
	}
	return si->entry;
}

static enum brief_tag slot_cat(struct builder *bd, const struct pf_frame *f)
{
	struct slot_info *si = &bd->slots[f->slot];

	if (!(si->known & SLOT_CAT)) {
		si->cat = (uint8_t)brief_categorize(frame_name(bd->p, f), frame_dso(bd->p, f));
		si->known |= SLOT_CAT;
	}
	return (enum brief_tag)si->cat;
}

/* The statistics of the frame's function (which has one), created when absent if 'create'. */
static struct fstat *slot_fstat(struct builder *bd, const struct pf_frame *f, bool create)
{
	struct slot_info *si = &bd->slots[f->slot];
	struct fstat *fs;

	if (si->fs)
		return &bd->fns.v[si->fs - 1];
	fs = fmap_get(&bd->fns, frame_key(f), create);
	if (fs)
		si->fs = (uint32_t)(fs - bd->fns.v) + 1;
	return fs;
}

/* Owned or not, and the function statistics, change with the fallback. */
static void forget_owned(struct builder *bd)
{
	for (size_t i = 0; i < profile_frame_slots(bd->p); i++) {
		bd->slots[i].fs = 0;
		bd->slots[i].known &= (uint8_t)~SLOT_OWNED;
	}
}

static int64_t sample_value(const struct builder *bd, const struct pf_sample *s, int idx)
{
	const int64_t *v = profile_sample_values(bd->p, s);

	return v && idx >= 0 ? v[idx] : 0;
}

/* Expand sample i; fills bd->owned; returns the frame count. */
static size_t expand(struct builder *bd, size_t i, bool fallback)
{
	size_t n = profile_sample_frames(bd->p, &bd->p->samples[i], &bd->frames, &bd->alloc_frames);

	if (n > bd->alloc_owned) {
		bd->alloc_owned = n;
		bd->owned = xrealloc(bd->owned, n * sizeof(*bd->owned));
	}
	for (size_t k = 0; k < n; k++)
		bd->owned[k] = slot_owned(bd, &bd->frames[k], fallback);
	return n;
}

/* Whether record cut the sample's stack where its stack copy ended. */
static bool cut_by_copy(const struct profile *p, const struct pf_sample *s)
{
	const char *v = profile_sample_label(p, s, RECORD_LABEL_UNWIND);

	return v && !strcmp(v, RECORD_UNWIND_SHORT);
}

/* Pass 1: self, total and attributed per function; quality. */
static void pass_totals(struct builder *bd, bool fallback, int64_t *attributed_sum)
{
	struct brief *b = bd->b;
	int64_t unknown = 0, truncated = 0, short_copy = 0, attributed = 0, all = 0;
	/* stacks rebuilt from a call graph start at its roots: none is cut short */
	bool complete = callgrind_rebuilt(bd->p);

	for (size_t i = 0; i < bd->p->nr_samples; i++) {
		int64_t v = sample_value(bd, &bd->p->samples[i], bd->idx);
		size_t n = expand(bd, i, fallback);
		bool has_unknown = false;
		size_t k;

		all = sat_add(all, v);
		for (k = 0; k < n; k++) {
			const struct pf_frame *f = &bd->frames[k];
			struct fstat *fs;

			if (!f->fn) {
				has_unknown = true;
				continue;
			}
			fs = slot_fstat(bd, f, true);
			if (!fs->name) {
				fs->name = frame_name(bd->p, f);
				fs->file = frame_file(bd->p, f);
				fs->system_name = profile_string(bd->p, f->fn->system_name);
			}
			/* the mapping of an outline copy when there is one */
			if (!fs->mapping || (!f->inlined && !fs->outline))
				fs->mapping = f->mapping;
			fs->outline |= !f->inlined;
			if (k == 0)
				fs->self = sat_add(fs->self, v);
			if (k == 0 && f->inlined && f->loc && f->loc->nline > 1) {
				/* the location's outermost frame is the symbol (majority vote) */
				struct pf_frame out = profile_location_frame(bd->p, f->loc, f->loc->nline - 1);

				if (out.fn == fs->container)
					fs->container_votes++;
				else if (!fs->container_votes--) {
					fs->container = out.fn;
					fs->container_votes = 1;
				}
			}
			if (fs->stamp != i + 1) {
				fs->stamp = i + 1;
				fs->total = sat_add(fs->total, v);
			}
		}
		if (has_unknown)
			unknown = sat_add(unknown, v);
		if (cut_by_copy(bd->p, &bd->p->samples[i]))
			short_copy = sat_add(short_copy, v);
		if (n && !complete && !slot_kernel(bd, &bd->frames[n - 1]) &&
		    !slot_entry(bd, &bd->frames[n - 1]))
			truncated = sat_add(truncated, v);
		for (k = 0; k < n && !bd->owned[k]; k++)
			;
		if (k < n) {
			struct fstat *fs = slot_fstat(bd, &bd->frames[k], false);

			fs->attributed = sat_add(fs->attributed, v);
			if (bd->frames[k].inlined)
				fs->inlined_attr = sat_add(fs->inlined_attr, v);
			attributed = sat_add(attributed, v);
		}
	}
	if (all > 0) {
		b->unknown_pct = 100.0 * (double)unknown / (double)all;
		b->truncated_pct = 100.0 * (double)truncated / (double)all;
		b->short_copy_pct = 100.0 * (double)short_copy / (double)all;
		b->unattributed_pct = 100.0 * (double)(all - attributed) / (double)all;
	}
	*attributed_sum = attributed;
}

static int cmp_attributed(const void *a, const void *b)
{
	const struct fstat *x = *(const struct fstat *const *)a, *y = *(const struct fstat *const *)b;

	if (x->attributed != y->attributed)
		return x->attributed > y->attributed ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool focus_matches(const char *name, const char *focus, bool exact)
{
	return exact ? !strcmp(name, focus) : strstr(name, focus) != NULL;
}

/* Choose the hotspots: owned functions by attributed value. */
static int pick_hotspots(struct builder *bd)
{
	struct brief *b = bd->b;
	const struct brief_opts *o = bd->o;
	struct fstat **order = xcalloc(bd->fns.nr ? bd->fns.nr : 1, sizeof(*order));
	size_t n = 0, top = o->top ? o->top : 10;
	double min = o->min_share > 0 ? o->min_share : 0.005;
	bool exact = false;
	int ret = 0;

	for (size_t i = 0; i < bd->fns.nr; i++)
		if (bd->fns.v[i].attributed > 0)
			order[n++] = &bd->fns.v[i];
	qsort(order, n, sizeof(*order), cmp_attributed);
	if (o->focus)
		for (size_t i = 0; i < n && !exact; i++)
			exact = !strcmp(order[i]->name, o->focus);
	b->hotspots = xcalloc(top, sizeof(*b->hotspots));
	for (size_t i = 0; i < n && b->nr_hotspots < top; i++) {
		struct fstat *fs = order[i];
		struct brief_hotspot *h;

		if (o->focus ? !focus_matches(fs->name, o->focus, exact)
			     : (double)fs->attributed < min * (double)b->total && b->nr_hotspots)
			continue;
		h = &b->hotspots[b->nr_hotspots];
		fs->hotspot = (int)b->nr_hotspots++;
		h->function = fs->name;
		h->file = path_shown(bd, fs->file);
		h->system_name = fs->system_name;
		h->self = fs->self;
		h->total = fs->total;
		h->attributed = fs->attributed;
		h->inlined_only = !fs->outline;
		if (h->inlined_only && fs->container && fs->container_votes > 0) {
			const char *c = profile_string(bd->p, fs->container->system_name);

			h->asm_container = xstrdup(*c ? c : profile_string(bd->p, fs->container->name));
		}
		/* folded stacks map frames to a file without a name: no DSO */
		if (fs->mapping && *profile_string(bd->p, fs->mapping->filename)) {
			h->binary = profile_string(bd->p, fs->mapping->filename);
			h->dso = strrchr(h->binary, '/') ? strrchr(h->binary, '/') + 1 : h->binary;
		}
	}
	if (o->focus && !b->nr_hotspots)
		ret = error("no owned function matching '%s' has samples", o->focus);
	free(order);
	return ret;
}

static void rollup_sample(struct builder *bd, int64_t v, size_t n);

/*
 * Pass 2: callers, callees, lines and the evidence for the tags of each
 * hotspot; the rollups.
 */
static void pass_details(struct builder *bd, bool fallback)
{
	bd->details = xcalloc(bd->b->nr_hotspots ? bd->b->nr_hotspots : 1, sizeof(*bd->details));
	for (size_t i = 0; i < bd->p->nr_samples; i++) {
		int64_t v = sample_value(bd, &bd->p->samples[i], bd->idx);
		size_t n = expand(bd, i, fallback), k, stamp = i + 1 + bd->p->nr_samples;
		struct fstat *fs;
		struct detail *d;

		rollup_sample(bd, v, n);
		/* how often each hotspot is on the stack: its depth of recursion */
		for (k = 0; k < n; k++) {
			if (!bd->frames[k].fn || !(fs = slot_fstat(bd, &bd->frames[k], false)) ||
			    fs->hotspot < 0)
				continue;
			d = &bd->details[fs->hotspot];
			if (d->stamp != stamp) {
				d->stamp = stamp;
				d->depth = 0;
			}
			d->depth++;
		}
		/* per hotspot in the stack: its nearest-to-leaf occurrence */
		for (k = 0; k < n; k++) {
			const struct pf_frame *f = &bd->frames[k];

			if (!f->fn || !(fs = slot_fstat(bd, f, false)) || fs->hotspot < 0)
				continue;
			if (fs->stamp == stamp)
				continue;	/* counted for this stack */
			fs->stamp = stamp;
			d = &bd->details[fs->hotspot];
			if (k + 1 < n)
				tally_add(&d->callers, frame_name(bd->p, &bd->frames[k + 1]), v,
					  bd->owned[k + 1]);
			if (k > 0 && !(slot_kernel(bd, &bd->frames[k - 1]) &&
				       is_interrupt_entry(frame_name(bd->p, &bd->frames[k - 1]))))
				tally_add(&d->callees, frame_name(bd->p, &bd->frames[k - 1]), v,
					  bd->owned[k - 1]);
			if (d->depth > 1)
				d->recursive = sat_add(d->recursive, v);
			if (d->depth > d->max_depth)
				d->max_depth = d->depth;
		}
		for (k = 0; k < n && !bd->owned[k]; k++)
			;
		if (k == n)
			continue;
		fs = slot_fstat(bd, &bd->frames[k], false);
		if (fs->hotspot >= 0) {
			enum brief_tag cat = BT_NR;
			const char *why = NULL;
			bool kernel = false, interrupt = false;

			d = &bd->details[fs->hotspot];
			detail_add_line(d, bd->frames[k].line, v);
			bool off = bd->off_idx >= 0 &&
				   sample_value(bd, &bd->p->samples[i], bd->off_idx) > 0;

			/* the outermost foreign function with a category says what it is */
			for (size_t j = k; j-- > 0;) {
				const struct pf_frame *f = &bd->frames[j];

				if (slot_kernel(bd, f)) {
					if (!kernel)
						interrupt = is_interrupt_entry(frame_name(bd->p, f));
					kernel = true;
					continue;
				}
				if (cat != BT_NR)
					continue;
				cat = off ? off_cpu_category(frame_name(bd->p, f)) : slot_cat(bd, f);
				if (cat != BT_NR)
					why = frame_name(bd->p, f);
			}
			if (off && interrupt) {
				cat = BT_NR;	/* preempted: waiting for a CPU, not for something */
			} else if (off && cat == BT_NR) {
				cat = BT_BLOCKED;
				why = frame_name(bd->p, &bd->frames[k ? k - 1 : 0]);
			} else if (cat == BT_NR && kernel && !interrupt) {
				cat = BT_SYSCALL;
				why = frame_name(bd->p, &bd->frames[k - 1]);
			}
			if (cat != BT_NR) {
				d->cat[cat] = sat_add(d->cat[cat], v);
				tally_add(&d->cat_names[cat], why, v, false);
			}
			if (k + 1 < n && !bd->owned[k + 1] && bd->frames[k + 1].fn &&
			    !slot_kernel(bd, &bd->frames[k + 1]) && !slot_entry(bd, &bd->frames[k + 1])) {
				d->callback = sat_add(d->callback, v);
				tally_add(&d->callback_from, frame_name(bd->p, &bd->frames[k + 1]), v, false);
			}
		}
	}
}

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static void add_tag(struct brief_hotspot *h, enum brief_tag t, char *evidence)
{
	for (size_t i = 0; i < h->nr_tags; i++)
		if (h->tags[i].tag == t) {
			free(h->tags[i].evidence);
			h->tags[i].evidence = evidence;
			return;
		}
	h->tags = xrealloc(h->tags, (h->nr_tags + 1) * sizeof(*h->tags));
	h->tags[h->nr_tags++] = (struct brief_tag_hit){ t, evidence };
}

static void remove_tag(struct brief_hotspot *h, enum brief_tag t)
{
	for (size_t i = 0; i < h->nr_tags; i++)
		if (h->tags[i].tag == t) {
			free(h->tags[i].evidence);
			memmove(&h->tags[i], &h->tags[i + 1], (h->nr_tags - i - 1) * sizeof(*h->tags));
			h->nr_tags--;
			return;
		}
}

static bool has_tag(const struct brief_hotspot *h, enum brief_tag t)
{
	for (size_t i = 0; i < h->nr_tags; i++)
		if (h->tags[i].tag == t)
			return true;
	return false;
}

/* "malloc 40%, free 31%": the top names of a tally, shares of 'whole'. */
static void names_of(struct tally *t, int64_t whole, size_t max, struct strbuf *sb)
{
	tally_sort(t);
	for (size_t i = 0; i < t->nr && i < max; i++)
		strbuf_addf(sb, "%s%s %.0f%%", i ? ", " : "", t->v[i].name, pct(t->v[i].value, whole));
}

static void set_tags(struct brief_hotspot *h, struct detail *d)
{
	static const char *const what[] = {
		[BT_ALLOCATION] = "allocation", [BT_STRING] = "string functions",
		[BT_FORMATTING] = "formatting and parsing", [BT_MATH] = "libm",
		[BT_LOCK] = "locking", [BT_SYSCALL] = "system calls",
		[BT_CONTAINER] = "std:: container and string internals",
		[BT_BLOCKED] = "blocked off CPU", [BT_SLEEP] = "sleeping off CPU",
	};
	static const enum brief_tag cats[] = {
		BT_ALLOCATION, BT_STRING, BT_FORMATTING, BT_MATH, BT_LOCK, BT_SYSCALL,
		BT_CONTAINER, BT_BLOCKED, BT_SLEEP,
	};
	struct strbuf sb = STRBUF_INIT;

	for (size_t ci = 0; ci < ARRAY_SIZE(cats); ci++) {
		enum brief_tag c = cats[ci];

		if ((double)d->cat[c] < BRIEF_CATEGORY_SHARE * (double)h->attributed || !d->cat[c])
			continue;
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s = %.0f%% of its attributed time (", what[c], pct(d->cat[c], h->attributed));
		names_of(&d->cat_names[c], h->attributed, 3, &sb);
		strbuf_addch(&sb, ')');
		add_tag(h, (enum brief_tag)c, xstrdup(sb.buf));
	}
	if (d->callback && (double)d->callback >= BRIEF_CALLBACK_SHARE * (double)h->attributed) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "called back from foreign code in %.0f%% of its attributed time (",
			    pct(d->callback, h->attributed));
		names_of(&d->callback_from, h->attributed, 2, &sb);
		strbuf_addch(&sb, ')');
		add_tag(h, BT_CALLBACK, xstrdup(sb.buf));
	}
	if (d->recursive && (double)d->recursive >= BRIEF_RECURSION_SHARE * (double)h->total)
		add_tag(h, BT_RECURSION, xstrfmt("on the stack twice or more in %.0f%% of its time, up to %d deep",
						 pct(d->recursive, h->total), d->max_depth));
	strbuf_release(&sb);
}

static void set_own_tags(struct brief_hotspot *h, const struct fstat *fs)
{
	brief_own_tags(h, fs->inlined_attr);
}

void brief_own_tags(struct brief_hotspot *h, int64_t inlined_attr)
{
	h->inlined_pct = pct(inlined_attr, h->attributed);
	if (inlined_attr && (double)inlined_attr >= BRIEF_INLINED_SHARE * (double)h->attributed)
		add_tag(h, BT_INLINED, xstrfmt("%.0f%% of its attributed time is in copies inlined into callers",
					       pct(inlined_attr, h->attributed)));
	if (h->total > 0 && (double)h->self >= BRIEF_LEAF_SHARE * (double)h->total)
		add_tag(h, BT_COMPUTE_LEAF, xstrfmt("self / total = %.0f%%: the time is in its own code",
						    pct(h->self, h->total)));
}

void brief_code_tags(struct brief_hotspot *h, const struct asm_function *f)
{
	static const struct { enum asm_tag from; enum brief_tag to; } tags[] = {
		{ ASM_DIVISION, BT_DIVISION }, { ASM_SCALAR_FP, BT_SCALAR_FP },
		{ ASM_NOT_VECTORIZED, BT_NOT_VECTORIZED }, { ASM_BRANCHY, BT_BRANCHY },
		{ ASM_MEMORY_BOUND, BT_MEMORY_BOUND }, { ASM_NESTED_LOOP, BT_NESTED_LOOP },
	};

	free(h->asm_verdict);
	/* asm_into says where an inlined function's copies were read; else asm_container */
	if (h->asm_container && !h->asm_into)
		h->asm_verdict = xstrfmt("%s (its code inlined in %s)", f->verdict, f->name);
	else
		h->asm_verdict = xstrdup(f->verdict);
	for (size_t i = 0; i < ARRAY_SIZE(tags); i++)
		if (f->tags & tags[i].from)
			add_tag(h, tags[i].to, xstrdup(asm_evidence(f, tags[i].from)));
	/* samples charged to the loads and stores before them are no computation */
	if (f->tags & ASM_MEMORY_BOUND)
		remove_tag(h, BT_COMPUTE_LEAF);
}

static void top_shares(struct tally *t, int64_t whole, struct brief_share *out, size_t *nr)
{
	tally_sort(t);
	*nr = 0;
	for (size_t i = 0; i < t->nr && *nr < 3; i++)
		out[(*nr)++] = (struct brief_share){ t->v[i].name, pct(t->v[i].value, whole), t->v[i].owned };
}

/*
 * A tag that most hotspots carry says little about each: `inlined`, on
 * BRIEF_FOLD_MIN hotspots or more, becomes one line for them all.
 */
static void fold_tags(struct brief *b)
{
	size_t n = 0;

	b->folded = BT_NR;
	for (size_t i = 0; i < b->nr_hotspots; i++)
		n += has_tag(&b->hotspots[i], BT_INLINED);
	if (n < BRIEF_FOLD_MIN)
		return;
	b->folded = BT_INLINED;
	b->folded_ranks = xcalloc(n, sizeof(*b->folded_ranks));
	for (size_t i = 0; i < b->nr_hotspots; i++)
		if (has_tag(&b->hotspots[i], BT_INLINED)) {
			b->folded_ranks[b->nr_folded++] = i;
			remove_tag(&b->hotspots[i], BT_INLINED);
		}
}

/* ---- instructions ------------------------------------------------------ */

static void quiet(const char *prefix, const char *msg)
{
}

/*
 * For a hotspot whose time is mostly its own instructions: the verdict of
 * `hotloop asm` on them, and its tags. A binary that cannot be read (gone,
 * stripped, another machine's) only leaves a note.
 */
static void set_asm(struct builder *bd, struct brief_hotspot *h)
{
	struct asm_function f;
	struct asm_load_options lo = ASM_LOAD_OPTIONS_INIT;
	report_fn old_error, old_warn;
	const char *name = h->system_name && *h->system_name ? h->system_name : h->function;
	int ret;

	if (bd->o->no_asm || !h->binary || *h->binary != '/' ||
	    (double)h->self < 0.5 * (double)h->attributed)
		return;
	old_error = set_error_routine(quiet);
	old_warn = set_warn_routine(quiet);
	/* an inlined function: its copies in the function holding most of their samples */
	lo.exact = true;
	lo.inlined = h->inlined_only;
	lo.profile = bd->p;
	lo.sample_idx = bd->idx;
	if (!bd->symbolizer)
		bd->symbolizer = symbolizer_new();
	lo.symbolizer = bd->symbolizer;
	ret = asm_load_with(h->binary, name, &lo, &f);
	if (ret && !h->inlined_only) {
		/* a compiler's clone of it: histogram_add.isra.0, foo.constprop.0 */
		char *clone = xstrfmt("%s.", name);

		asm_function_release(&f);
		ret = asm_load(h->binary, clone, false, &f);
		free(clone);
	}
	if (!ret)
		ret = asm_annotate(&f, bd->p, bd->idx);
	set_error_routine(old_error);
	set_warn_routine(old_warn);
	if (ret) {
		h->asm_note = xstrdup(last_error());
	} else {
		asm_analyze(&f);
		if (*f.inlined_into)
			h->asm_into = xstrdup(f.inlined_into);
		brief_code_tags(h, &f);
	}
	asm_function_release(&f);
}

/* ---- snippets ---------------------------------------------------------- */

static char *source_path(const struct brief_owned *o, const char *file)
{
	if (*file == '/')
		return xstrdup(file);
	for (size_t i = 0; i < o->nr_roots; i++) {
		char *p = xstrfmt("%s/%s", o->roots[i], file);

		if (!access(p, R_OK))
			return p;
		free(p);
	}
	return xstrdup(file);
}

#define SNIPPET_MAX_LINE 160

static void set_snippet(struct builder *bd, struct brief_hotspot *h, struct detail *d)
{
	int ctx = bd->o->context >= 0 ? bd->o->context : 6;
	struct strbuf src = STRBUF_INIT;
	int64_t best = 0, first, last, no = 1;
	char *path;
	const char *p;

	for (size_t i = 0; i < d->nr_lines; i++)
		if (d->line_no[i] > 0 && (!h->line || d->line_value[i] > best ||
					  (d->line_value[i] == best && d->line_no[i] < h->line))) {
			h->line = d->line_no[i];
			best = d->line_value[i];
		}
	if (!*h->file || !h->line) {
		h->snippet_note = xstrdup("no line information");
		return;
	}
	if (bd->o->read_source) {
		struct strbuf why = STRBUF_INIT;

		if (bd->o->read_source(bd->o->source_data, h->file, &src, &why)) {
			h->snippet_note = strbuf_detach(&why, NULL);
			strbuf_release(&src);
			return;
		}
		strbuf_release(&why);
		goto read;
	}
	path = source_path(bd->o->owned, h->file);
	if (access(path, R_OK)) {
		h->snippet_note = xstrfmt("cannot read '%s': %s", path, strerror(errno));
		free(path);
		return;
	}
	if (read_file(&src, path, 16 << 20) < 0) {
		h->snippet_note = xstrfmt("cannot read '%s'", path);
		free(path);
		strbuf_release(&src);
		return;
	}
	free(path);
read:
	first = h->line > ctx ? h->line - ctx : 1;
	last = h->line + ctx;
	h->lines = xcalloc((size_t)(last - first + 1), sizeof(*h->lines));
	for (p = src.buf; *p && no <= last; no++) {
		size_t len = strcspn(p, "\n");

		if (no >= first) {
			struct brief_line *l = &h->lines[h->nr_lines++];
			size_t keep = len;

			while (keep && (p[keep - 1] == '\r' || p[keep - 1] == ' ' || p[keep - 1] == '\t'))
				keep--;
			l->line = no;
			l->text = keep > SNIPPET_MAX_LINE ? xstrfmt("%.*s...", SNIPPET_MAX_LINE, p)
							  : xstrfmt("%.*s", (int)keep, p);
			for (size_t i = 0; i < d->nr_lines; i++)
				if (d->line_no[i] == no)
					l->value = d->line_value[i];
		}
		p += len + (p[len] == '\n');
	}
	if (h->line < first || h->line >= no) {
		h->snippet_note = xstrfmt("line %lld is past the end of the file (changed since the profile?)",
					  (long long)h->line);
		for (size_t i = 0; i < h->nr_lines; i++)
			free(h->lines[i].text);
		free(h->lines);
		h->lines = NULL;
		h->nr_lines = 0;
	}
	strbuf_release(&src);
}

/* ---- hot path and rollups ---------------------------------------------- */

/*
 * A walk down a merged stack from its root, a frame at a time: of the
 * location locs[pos], 'left' frames are still to come (the outermost first).
 */
struct root_walk {
	uint32_t stack;			/* index in the merged stacks */
	uint32_t pos, left;
};

/* The walk's next frame toward the leaf into *f; false past the leaf. */
static bool walk_next(const struct profile *p, const struct stack_sum *st, struct root_walk *w,
		      struct pf_frame *f)
{
	const uint64_t *locs = profile_sample_locs(p, &p->samples[st[w->stack].sample]);
	const struct pf_location *l;

	while (!w->left) {
		if (!w->pos)
			return false;
		if ((l = profile_location(p, locs[--w->pos])))
			w->left = l->nline ? l->nline : 1;
	}
	*f = profile_location_frame(p, profile_location(p, locs[w->pos]), --w->left);
	return true;
}

/*
 * The heaviest chain from the root: at each step the child with the most
 * time. Each stack still on the path is walked one frame further per step.
 */
static void hot_path(struct builder *bd, bool fallback)
{
	struct brief *b = bd->b;
	struct stack_sum *st = NULL;
	size_t nst = stacks_merge(bd->p, bd->idx, &st), nlive = nst;
	struct root_walk *live = xcalloc(nst ? nst : 1, sizeof(*live));
	struct tally next = { 0 };
	size_t alloc_hp = 0;
	int64_t parent = b->total;

	for (size_t i = 0; i < nst; i++)
		live[i] = (struct root_walk){ (uint32_t)i, bd->p->samples[st[i].sample].nloc, 0 };
	while (b->nr_hot_path < 64) {
		size_t keep = 0;
		const char *name;

		next.nr = 0;
		for (size_t i = 0; i < nlive; i++) {
			struct root_walk w = live[i];
			struct pf_frame f;

			if (walk_next(bd->p, st, &w, &f))
				tally_add(&next, frame_name(bd->p, &f), st[w.stack].value,
					  slot_owned(bd, &f, fallback));
		}
		if (!next.nr)
			break;
		tally_sort(&next);
		/* the path ends where no child holds a third of its parent */
		if ((double)next.v[0].value < 0.01 * (double)b->total ||
		    (double)next.v[0].value < (double)parent / 3)
			break;
		parent = next.v[0].value;
		name = next.v[0].name;
		ALLOC_GROW(b->hot_path, b->nr_hot_path + 1, alloc_hp);
		b->hot_path[b->nr_hot_path++] = (struct brief_share){ name, pct(next.v[0].value, b->total),
								      next.v[0].owned };
		for (size_t i = 0; i < nlive; i++) {
			struct pf_frame f;

			if (walk_next(bd->p, st, &live[i], &f) && !strcmp(frame_name(bd->p, &f), name))
				live[keep++] = live[i];
		}
		nlive = keep;
	}
	tally_release(&next);
	free(live);
	free(st);
}

static void rollup(struct tally *t, int64_t total, struct brief_share **out, size_t *nr)
{
	size_t max = 8;
	int64_t rest = 0;

	tally_sort(t);
	*out = xcalloc(max + 1, sizeof(**out));
	for (size_t i = 0; i < t->nr; i++) {
		if (*nr < max)
			(*out)[(*nr)++] = (struct brief_share){ t->v[i].name, pct(t->v[i].value, total),
							       t->v[i].owned };
		else
			rest = sat_add(rest, t->v[i].value);
	}
	if (rest)
		(*out)[(*nr)++] = (struct brief_share){ "(other)", pct(rest, total), false };
}

/* The directory of 'file' relative to the root holding it ("." at the top). */
static const char *dir_of(const struct brief_owned *o, const char *file, char **owned_str)
{
	const char *rel = file, *slash;

	for (size_t i = 0; i < o->nr_roots; i++)
		if (*file == '/' && under(file, o->roots[i])) {
			rel = file + strlen(o->roots[i]);
			while (*rel == '/')
				rel++;
			break;
		}
	slash = strrchr(rel, '/');
	*owned_str = slash ? xstrfmt("%.*s/", (int)(slash - rel), rel) : xstrdup("./");
	return *owned_str;
}

/* One expanded sample into the rollups: its leaf's DSO, its owned frame's directory. */
static void rollup_sample(struct builder *bd, int64_t v, size_t n)
{
	struct rollups *r = &bd->roll;
	struct slot_info *si;
	const char *file;
	size_t k;

	if (!n)
		return;
	tally_add(&r->dso, slot_kernel(bd, &bd->frames[0]) ? "[kernel]" : frame_dso(bd->p, &bd->frames[0]),
		  v, false);
	for (k = 0; k < n && !bd->owned[k]; k++)
		;
	if (k == n) {
		r->unowned = sat_add(r->unowned, v);
		return;
	}
	si = &bd->slots[bd->frames[k].slot];
	if (si->dir) {
		tally_add(&r->dir, si->dir, v, true);
		return;
	}
	ALLOC_GROW(r->names, r->nr_names + 1, r->alloc_names);
	file = path_shown(bd, frame_file(bd->p, &bd->frames[k]));
	si->dir = tally_add(&r->dir, dir_of(bd->o->owned, file, &r->names[r->nr_names]), v, true);
	/* keep the string only when the tally took it */
	if (si->dir == r->names[r->nr_names])
		r->nr_names++;
	else
		free(r->names[r->nr_names]);
}

static void rollups_release(struct rollups *r)
{
	for (size_t i = 0; i < r->nr_names; i++)
		free(r->names[i]);
	free(r->names);
	tally_release(&r->dso);
	tally_release(&r->dir);
	memset(r, 0, sizeof(*r));
}

static void rollups(struct builder *bd)
{
	struct brief *b = bd->b;
	struct rollups *r = &bd->roll;

	if (r->unowned)
		tally_add(&r->dir, "(no owned caller)", r->unowned, false);
	rollup(&r->dso, b->total, &b->by_dso, &b->nr_by_dso);
	rollup(&r->dir, b->total, &b->by_dir, &b->nr_by_dir);
	/* the directory names live as long as the brief */
	b->dir_names = r->names;
	b->nr_dir_names = r->nr_names;
	r->names = NULL;
	r->nr_names = 0;
	rollups_release(r);
}

/* ---- the whole brief ---------------------------------------------------- */

static void add_warning(struct brief *b, char *w)
{
	b->warnings = xrealloc(b->warnings, (b->nr_warnings + 1) * sizeof(*b->warnings));
	b->warnings[b->nr_warnings++] = w;
}

static void header(struct builder *bd)
{
	struct brief *b = bd->b;
	const struct profile *p = bd->p;
	const char *type = profile_string(p, p->sample_type[bd->idx].type);

	b->sample_type = type;
	b->total = profile_total(p, bd->idx);
	bd->count_idx = profile_find_sample_type(p, "samples");
	if (bd->count_idx >= 0) {
		int64_t n = profile_total(p, bd->count_idx);

		b->samples = n > 0 ? (uint64_t)n : 0;
	} else {
		b->samples = p->nr_samples;
	}
	b->duration_s = p->duration_nanos > 0 ? (double)p->duration_nanos / 1e9 : 0;
	for (size_t i = 0; i < p->nr_comments; i++) {
		const char *c = profile_string(p, p->comments[i]);

		if (!strncmp(c, "command: ", 9) && !b->workload)
			b->workload = c + 9;
		else if (!b->event && *c && !strchr(c, ' ') && !strchr(c, '='))
			b->event = c;	/* a perf event's name; "heap-peak=N" is not one */
	}
	if (bd->o->workload)
		b->workload = bd->o->workload;
	/* pprof's convention: the main binary is the first mapping */
	bd->main_map = p->nr_mappings ? &p->mappings[0] : NULL;
}

static void quality_warnings(struct brief *b, bool heap)
{
	/* a heap profile's samples are stacks, each with all its allocations */
	if (b->samples < 100 && !heap)
		add_warning(b, xstrfmt("only %llu samples: shares are rough; record longer or at a higher -F",
				       (unsigned long long)b->samples));
	if (b->unknown_pct > 100 * BRIEF_QUALITY_WARN)
		add_warning(b, xstrfmt("%.0f%% of samples have frames without a symbol: build with -g and do not "
				       "strip, or install the debug package (hotloop doctor BINARY checks)",
				       b->unknown_pct));
	if (b->truncated_pct > 100 * BRIEF_QUALITY_WARN)
		add_warning(b, b->short_copy_pct > 100 * BRIEF_QUALITY_WARN ?
			    xstrfmt("%.0f%% of stacks stop before main or a thread start, %.0f%% where the "
				    "stack copy ended: record with a longer one (--call-graph auto,SIZE; "
				    "the default is %d bytes)", b->truncated_pct, b->short_copy_pct,
				    SAMPLER_AUTO_STACK) :
			    xstrfmt("%.0f%% of stacks stop before main or a thread start: build with "
				    "-fno-omit-frame-pointer, or record with --call-graph auto (the "
				    "default) or dwarf", b->truncated_pct));
}

/*
 * A heap profile's allocation sites: each sample's first owned frame, as
 * pass_totals() attributes, and the frame after it (its caller).
 */
static void heap_sites(struct builder *bd, bool fallback)
{
	struct heap_brief *hb = xcalloc(1, sizeof(*hb));

	heap_brief_init(hb, bd->p);
	for (size_t i = 0; i < bd->p->nr_samples; i++) {
		size_t n = expand(bd, i, fallback), k;

		for (k = 0; k < n && !bd->owned[k]; k++)
			;
		heap_brief_add(hb, bd->p, i, k < n ? &bd->frames[k] : NULL,
			       k + 1 < n ? &bd->frames[k + 1] : NULL);
	}
	heap_brief_finish(hb, bd->o->top, bd->o->no_asm);
	bd->b->heap = hb;
}

int brief_build(struct brief *b, const struct profile *p, int idx, const struct brief_opts *o)
{
	struct builder bd = { 0 };
	int64_t attributed = 0;
	bool fallback = false, heap = profile_is_heap(p);
	int ret = -1;

	memset(b, 0, sizeof(*b));
	b->owned = o->owned;
	if (idx < 0 || (size_t)idx >= p->nr_sample_type)
		return error("no such sample type in the profile");
	bd.b = b;
	bd.p = p;
	bd.idx = idx;
	bd.off_idx = profile_find_sample_type(p, RECORD_OFF_CPU);
	bd.o = o;
	bd.slots = xcalloc(profile_frame_slots(p) + 1, sizeof(*bd.slots));
	header(&bd);
	if (b->total <= 0) {
		error("the profile has no samples of %s", b->sample_type);
		goto out;
	}
	pass_totals(&bd, false, &attributed);
	if (!attributed && bd.main_map) {
		/* nothing under the roots: count the main executable's code as ours */
		fmap_release(&bd.fns);
		memset(&bd.fns, 0, sizeof(bd.fns));
		forget_owned(&bd);
		fallback = true;
		bd.main_tree = main_tree(&bd);
		b->main_tree = bd.main_tree ? xstrdup(bd.main_tree) : NULL;
		pass_totals(&bd, true, &attributed);
		b->owned_fallback = true;
		add_warning(b, xstrfmt("no sampled code has its source under %s: the code of the main "
				       "executable and of files under the roots counts as owned (pass --owned DIR)",
				       o->owned->nr_roots ? o->owned->roots[0] : "the project"));
	}
	quality_warnings(b, heap);
	if (pick_hotspots(&bd))
		goto out;
	pass_details(&bd, fallback);
	for (size_t i = 0; i < bd.fns.nr; i++) {
		struct fstat *fs = &bd.fns.v[i];
		struct brief_hotspot *h;
		struct detail *d;

		if (fs->hotspot < 0)
			continue;
		h = &b->hotspots[fs->hotspot];
		d = &bd.details[fs->hotspot];
		set_tags(h, d);
		/* where bytes are allocated says nothing about the code's instructions */
		if (!heap) {
			set_own_tags(h, fs);
			set_asm(&bd, h);
		}
		top_shares(&d->callers, h->total, h->callers, &h->nr_callers);
		top_shares(&d->callees, h->total, h->callees, &h->nr_callees);
		set_snippet(&bd, h, d);
	}
	fold_tags(b);
	hot_path(&bd, fallback);
	rollups(&bd);
	if (heap)
		heap_sites(&bd, fallback);
	b->show_hotspots = b->show_snippets = b->nr_hotspots;
	ret = 0;
out:
	for (size_t i = 0; bd.details && i < b->nr_hotspots; i++)
		detail_release(&bd.details[i]);
	free(bd.details);
	fmap_release(&bd.fns);
	free(bd.frames);
	free(bd.owned);
	free(bd.slots);
	free(bd.main_tree);
	path_cache_release(&bd.paths, b);
	rollups_release(&bd.roll);
	symbolizer_free(bd.symbolizer);
	if (ret)
		brief_release(b);	/* what was built before the error */
	return ret;
}

/* ---- growth exponents from `hotloop scale` -------------------------------- */

int brief_add_scale(struct brief *b, const char *path)
{
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr), *fns;
	size_t i;
	json_t *f;

	if (!doc)
		return error("cannot read the scale results '%s': %s (line %d)", path, jerr.text, jerr.line);
	fns = json_object_get(doc, "functions");
	if (!json_is_object(doc) || !json_is_array(fns)) {
		json_decref(doc);
		return error("'%s' is not a scale result: no \"functions\" array", path);
	}
	json_array_foreach(fns, i, f) {
		const char *name = json_string_value(json_object_get(f, "function"));
		json_t *k = json_object_get(f, "exponent"), *r2 = json_object_get(f, "r2");

		if (!name || !json_is_number(k) || !json_is_number(r2) ||
		    json_is_false(json_object_get(f, "fitted")))
			continue;
		for (size_t h = 0; h < b->nr_hotspots; h++) {
			struct brief_hotspot *hs = &b->hotspots[h];

			if (strcmp(hs->function, name) || hs->have_scale)
				continue;
			hs->have_scale = true;
			hs->exponent = json_number_value(k);
			hs->r2 = json_number_value(r2);
			if (hs->exponent > BRIEF_SUPERLINEAR_EXP && hs->r2 >= 0.9)
				add_tag(hs, BT_SUPERLINEAR,
					xstrfmt("cost grows as n^%.2f (R^2 %.2f) across the sizes of %s",
						hs->exponent, hs->r2, path));
		}
	}
	json_decref(doc);
	return 0;
}

/* ---- what the knowledge base knows ---------------------------------------- */

#define BRIEF_KB_HYPOTHESIS_MAX 160	/* characters of a hypothesis shown */

static const char *display_file(const struct brief *b, const char *file);

static void free_kb_hit(struct brief_kb_hit *k)
{
	free(k->slug);
	free(k->change);
	free(k->hypothesis);
}

int brief_add_kb(struct brief *b, const struct kb *kb)
{
	const struct kb_entry *found[BRIEF_KB_MAX];
	struct strbuf sb = STRBUF_INIT;
	const char *dir = kb->dir ? kb->dir : "kb";
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	strbuf_add(&sb, dir, n);
	free(b->kb_dir);
	b->kb_dir = xstrdup(display_file(b, sb.buf));
	b->kb_attempts = kb->nr;
	for (size_t i = 0; i < b->nr_hotspots; i++) {
		struct brief_hotspot *h = &b->hotspots[i];
		size_t nr = kb_find(kb, h->function, NULL, 0, found, BRIEF_KB_MAX);

		for (size_t j = 0; j < h->nr_kb; j++)
			free_kb_hit(&h->kb[j]);
		free(h->kb);
		h->kb = NULL;
		h->nr_kb = nr < BRIEF_KB_MAX ? nr : BRIEF_KB_MAX;
		h->kb_total = nr;
		if (h->nr_kb)
			h->kb = xcalloc(h->nr_kb, sizeof(*h->kb));
		for (size_t j = 0; j < h->nr_kb; j++) {
			const struct kb_entry *e = found[j];

			h->kb[j].slug = xstrdup(e->slug);
			h->kb[j].verdict = e->verdict;
			h->kb[j].change = e->change ? xstrdup(e->change) : NULL;
			if (e->hypothesis) {
				strbuf_reset(&sb);
				kb_one_line(&sb, e->hypothesis, BRIEF_KB_HYPOTHESIS_MAX);
				h->kb[j].hypothesis = strbuf_detach(&sb, NULL);
			}
		}
	}
	strbuf_release(&sb);
	return 0;
}

/* ---- questions ----------------------------------------------------------- */

/* The question the newest attempt on h raises. */
static void kb_question(const struct brief *b, const struct brief_hotspot *h, struct strbuf *sb)
{
	const struct brief_kb_hit *k = &h->kb[0];
	if (k->verdict == VERDICT_REJECT)
		strbuf_addf(sb, "`%s` was tried before and rejected", h->function);
	else if (k->verdict == VERDICT_KEEP)
		strbuf_addf(sb, "`%s` was improved before (kept)", h->function);
	else
		strbuf_addf(sb, "`%s` was tried before (%s)", h->function,
			    k->verdict ? verdict_kind_name(k->verdict) : "no verdict");
	if (k->change)
		strbuf_addf(sb, ", %s", k->change);
	strbuf_addf(sb, ": see %s/%s", b->kb_dir, k->slug);
	if (h->kb_total == 2)
		strbuf_addstr(sb, " and the attempt before it");
	else if (h->kb_total > 2)
		strbuf_addf(sb, " and the %zu attempts before it", h->kb_total - 1);
	if (k->verdict == VERDICT_KEEP)
		strbuf_addstr(sb, ". What is left to gain, and where?");
	else
		strbuf_addstr(sb, ". What would make another attempt different?");
}

static void question(const struct brief_hotspot *h, const struct brief_tag_hit *t, struct strbuf *sb)
{
	const char *fn = h->function;

	switch (t->tag) {
	case BT_ALLOCATION:
		strbuf_addf(sb, "Can `%s` reuse memory instead of allocating on every call (%s)?", fn, t->evidence);
		break;
	case BT_STRING:
		strbuf_addf(sb, "Does `%s` scan or copy the same bytes repeatedly (e.g. strlen in a loop "
			    "condition)? %s.", fn, t->evidence);
		break;
	case BT_FORMATTING:
		strbuf_addf(sb, "Does `%s` need to format or parse text here, or can it work on the values "
			    "directly? %s.", fn, t->evidence);
		break;
	case BT_MATH:
		strbuf_addf(sb, "Can `%s` call libm less often (hoist repeated calls, use cheaper "
			    "operations)? %s.", fn, t->evidence);
		break;
	case BT_LOCK:
		strbuf_addf(sb, "Can `%s` take the lock less often (batch, per-thread data, atomics)? %s.",
			    fn, t->evidence);
		break;
	case BT_SYSCALL:
		strbuf_addf(sb, "Can `%s` make fewer system calls (buffer, batch, cache)? %s.", fn, t->evidence);
		break;
	case BT_BLOCKED:
		strbuf_addf(sb, "What does `%s` wait for, and can the work overlap the wait (batch, "
			    "asynchronous I/O, fewer round trips)? %s.", fn, t->evidence);
		break;
	case BT_SLEEP:
		strbuf_addf(sb, "Why does `%s` sleep? A sleep lowers CPU use by lowering throughput: "
			    "wait for the event instead. %s.", fn, t->evidence);
		break;
	case BT_CONTAINER:
		strbuf_addf(sb, "Is the container in `%s` the right one, and does it build temporary keys "
			    "or copies per lookup? %s.", fn, t->evidence);
		break;
	case BT_CALLBACK:
		strbuf_addf(sb, "`%s` is called back many times: can each call do less (precompute "
			    "keys before sorting or searching)?", fn);
		break;
	case BT_RECURSION:
		strbuf_addf(sb, "Does `%s` recompute the same subproblems (memoize, iterate)? It is %s.",
			    fn, t->evidence);
		break;
	case BT_INLINED:
		strbuf_addf(sb, "`%s` runs inlined in its callers: what do its hot lines do per call?", fn);
		break;
	case BT_COMPUTE_LEAF:
		if (h->line)
			strbuf_addf(sb, "`%s` spends its time in its own code: what does line %lld do per "
				    "iteration, and can it do less?", fn, (long long)h->line);
		else
			strbuf_addf(sb, "`%s` spends its time in its own code: what does its loop do per "
				    "iteration, and can it do less?", fn);
		break;
	case BT_DIVISION:
		strbuf_addf(sb, "Can `%s` avoid the division in its hot code (a power of two and a mask, "
			    "a precomputed reciprocal, an incremental counter)?", fn);
		break;
	case BT_SCALAR_FP:
	case BT_NOT_VECTORIZED:
		strbuf_addf(sb, "Can the hot loop of `%s` be vectorized (simpler control flow, no aliasing, "
			    "contiguous data)?", fn);
		break;
	case BT_BRANCHY:
		strbuf_addf(sb, "Can `%s`'s hot branches be made predictable or branch-free?", fn);
		break;
	case BT_MEMORY_BOUND:
		strbuf_addf(sb, "Does `%s` walk memory in an order the cache likes (unit stride, "
			    "smaller data)?", fn);
		break;
	case BT_NESTED_LOOP:
		strbuf_addf(sb, "Most of `%s`'s time is in a loop inside a loop: a scan inside a scan, "
			    "quadratic in the input? `hotloop scale` tells.", fn);
		break;
	case BT_SUPERLINEAR:
		strbuf_addf(sb, "`%s` %s: is there an algorithm with lower complexity?", fn, t->evidence);
		break;
	case BT_NR:
		break;
	}
}

/* "`a`, `b` and `c`" */
static void name_list(const struct brief *b, const size_t *hs, size_t n, struct strbuf *sb)
{
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%s`%s`", !i ? "" : i + 1 == n ? " and " : ", ", b->hotspots[hs[i]].function);
}

/* One question for several hotspots with the same kind of tag: the evidence is in their tags. */
static void question_many(const struct brief *b, enum brief_tag t, const size_t *hs, size_t n,
			  struct strbuf *sb)
{
	struct strbuf who = STRBUF_INIT;

	name_list(b, hs, n, &who);
	switch (t) {
	case BT_ALLOCATION:
		strbuf_addf(sb, "Can %s reuse memory instead of allocating on every call?", who.buf);
		break;
	case BT_STRING:
		strbuf_addf(sb, "Do %s scan or copy the same bytes repeatedly (e.g. strlen in a loop condition)?",
			    who.buf);
		break;
	case BT_FORMATTING:
		strbuf_addf(sb, "Do %s need to format or parse text here, or can they work on the values directly?",
			    who.buf);
		break;
	case BT_MATH:
		strbuf_addf(sb, "Can %s call libm less often (hoist repeated calls, use cheaper operations)?",
			    who.buf);
		break;
	case BT_LOCK:
		strbuf_addf(sb, "Can %s take their locks less often (batch, per-thread data, atomics)?", who.buf);
		break;
	case BT_SYSCALL:
		strbuf_addf(sb, "Can %s make fewer system calls (buffer, batch, cache)?", who.buf);
		break;
	case BT_BLOCKED:
		strbuf_addf(sb, "What do %s wait for, and can the work overlap the wait (batch, asynchronous "
			    "I/O, fewer round trips)?", who.buf);
		break;
	case BT_SLEEP:
		strbuf_addf(sb, "Why do %s sleep? A sleep lowers CPU use by lowering throughput: wait for "
			    "the event instead.", who.buf);
		break;
	case BT_CONTAINER:
		strbuf_addf(sb, "Are the containers in %s the right ones, and do they build temporary keys "
			    "or copies per lookup?", who.buf);
		break;
	case BT_CALLBACK:
		strbuf_addf(sb, "%s are called back many times: can each call do less (precompute keys "
			    "before sorting or searching)?", who.buf);
		break;
	case BT_RECURSION:
		strbuf_addf(sb, "Do %s recompute the same subproblems (memoize, iterate)?", who.buf);
		break;
	case BT_INLINED:
		strbuf_addf(sb, "%s run inlined in their callers: what do their hot lines do per call?", who.buf);
		break;
	case BT_COMPUTE_LEAF: {
		size_t k = 0;

		strbuf_addf(sb, "%s spend their time in their own code", who.buf);
		for (size_t i = 0; i < n; i++)
			if (b->hotspots[hs[i]].line)
				strbuf_addf(sb, "%s`%s` line %lld", k++ ? ", " : " (hot lines: ",
					    b->hotspots[hs[i]].function, (long long)b->hotspots[hs[i]].line);
		strbuf_addstr(sb, k ? "): what do those lines do per iteration, and can they do less?"
				    : ": what do their loops do per iteration, and can they do less?");
		break;
	}
	case BT_DIVISION:
		strbuf_addf(sb, "Can %s avoid the divisions in their hot code (a power of two and a mask, "
			    "a precomputed reciprocal, an incremental counter)?", who.buf);
		break;
	case BT_SCALAR_FP:
	case BT_NOT_VECTORIZED:
		strbuf_addf(sb, "Can the hot loops of %s be vectorized (simpler control flow, no aliasing, "
			    "contiguous data)?", who.buf);
		break;
	case BT_BRANCHY:
		strbuf_addf(sb, "Can the hot branches of %s be made predictable or branch-free?", who.buf);
		break;
	case BT_MEMORY_BOUND:
		strbuf_addf(sb, "Do %s walk memory in an order the cache likes (unit stride, smaller data)?",
			    who.buf);
		break;
	case BT_NESTED_LOOP:
		strbuf_addf(sb, "Most of the time of %s is in a loop inside a loop: scans inside scans, "
			    "quadratic in the input? `hotloop scale` tells.", who.buf);
		break;
	case BT_SUPERLINEAR:
		strbuf_addf(sb, "%s grow faster than linearly with the input: is there an algorithm with "
			    "lower complexity?", who.buf);
		break;
	case BT_NR:
		break;
	}
	strbuf_release(&who);
}

#define MAX_QUESTIONS 8
#define QUESTION_NAMES 10	/* hotspots one question names at most */

/*
 * The questions, each sentence once: a hotspot's attempts in the knowledge
 * base first (what was tried rules answers out), then one question per
 * kind of tag, naming every shown hotspot that carries it.
 */
struct question {
	enum brief_tag tag;		/* BT_NR: the knowledge base's */
	size_t hot[QUESTION_NAMES];	/* indexes in hotspots */
	size_t nr_hot;
};

static enum brief_tag question_kind(enum brief_tag t)
{
	return t == BT_NOT_VECTORIZED ? BT_SCALAR_FP : t;
}

static bool is_folded(const struct brief *b, size_t hotspot)
{
	for (size_t i = 0; i < b->nr_folded; i++)
		if (b->folded_ranks[i] == hotspot)
			return true;
	return false;
}

static void question_add(struct question *qs, size_t *nq, enum brief_tag t, size_t hotspot)
{
	for (size_t i = 0; t != BT_NR && i < *nq; i++)
		if (qs[i].tag == t) {
			if (qs[i].nr_hot < QUESTION_NAMES &&
			    (!qs[i].nr_hot || qs[i].hot[qs[i].nr_hot - 1] != hotspot))
				qs[i].hot[qs[i].nr_hot++] = hotspot;
			return;
		}
	if (*nq >= MAX_QUESTIONS)
		return;
	qs[*nq].tag = t;
	qs[*nq].hot[0] = hotspot;
	qs[(*nq)++].nr_hot = 1;
}

static size_t questions(const struct brief *b, struct question *qs)
{
	size_t nq = 0;

	for (size_t i = 0; i < b->show_hotspots; i++) {
		const struct brief_hotspot *h = &b->hotspots[i];

		if (h->nr_kb)
			question_add(qs, &nq, BT_NR, i);
		for (size_t t = 0; t < h->nr_tags; t++)
			question_add(qs, &nq, question_kind(h->tags[t].tag), i);
		if (b->folded != BT_NR && is_folded(b, i))
			question_add(qs, &nq, b->folded, i);
	}
	return nq;
}

static void question_text(const struct brief *b, const struct question *q, struct strbuf *sb)
{
	const struct brief_hotspot *h = &b->hotspots[q->hot[0]];

	if (q->tag == BT_NR) {
		kb_question(b, h, sb);
		return;
	}
	if (q->nr_hot > 1) {
		question_many(b, q->tag, q->hot, q->nr_hot, sb);
		return;
	}
	for (size_t t = 0; t < h->nr_tags; t++)
		if (question_kind(h->tags[t].tag) == q->tag) {
			question(h, &h->tags[t], sb);
			return;
		}
	question_many(b, q->tag, q->hot, q->nr_hot, sb);
}

/* "tag `inlined` on 8 of 10 hotspots (#1 `a`, ...): ..." within what is shown */
static void folded_line(const struct brief *b, struct strbuf *sb)
{
	size_t shown = 0;

	for (size_t i = 0; i < b->nr_folded; i++)
		shown += b->folded_ranks[i] < b->show_hotspots;
	strbuf_addf(sb, "tag `%s` on %zu of %zu hotspots (", brief_tag_name(b->folded), shown,
		    b->show_hotspots);
	for (size_t i = 0, k = 0; i < b->nr_folded; i++)
		if (b->folded_ranks[i] < b->show_hotspots)
			strbuf_addf(sb, "%s#%zu `%s` %.0f%%", k++ ? ", " : "", b->folded_ranks[i] + 1,
				    b->hotspots[b->folded_ranks[i]].function,
				    b->hotspots[b->folded_ranks[i]].inlined_pct);
	strbuf_addstr(sb, "): that share of each one's attributed time is in copies inlined into callers");
}

/* ---- Markdown ------------------------------------------------------------ */

/* A path relative to the owned root holding it, else as it is. */
static const char *display_file(const struct brief *b, const char *file)
{
	for (size_t i = 0; i < b->owned->nr_roots; i++)
		if (*file == '/' && under(file, b->owned->roots[i])) {
			file += strlen(b->owned->roots[i]);
			while (*file == '/')
				file++;
			return file;
		}
	return file;
}

static void md_shares(struct strbuf *sb, const struct brief_share *s, size_t n, const char *sep)
{
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%s%s %.1f%%", i ? sep : "", s[i].name, s[i].pct);
	if (!n)
		strbuf_addstr(sb, "-");
}

static void md_hotspot(const struct brief *b, size_t rank, const struct brief_hotspot *h,
		       bool snippet, struct strbuf *sb)
{
	strbuf_addf(sb, "\n### %zu. `%s`", rank + 1, h->function);
	if (*h->file)
		strbuf_addf(sb, " (%s:%lld)", display_file(b, h->file), (long long)h->line);
	strbuf_addf(sb, "\nattributed %.1f%%, self %.1f%%, total %.1f%%", pct(h->attributed, b->total),
		    pct(h->self, b->total), pct(h->total, b->total));
	if (h->dso)
		strbuf_addf(sb, ", in %s", h->dso);
	strbuf_addstr(sb, "\n");
	for (size_t i = 0; i < h->nr_tags; i++)
		strbuf_addf(sb, "- tag `%s`: %s\n", brief_tag_name(h->tags[i].tag), h->tags[i].evidence);
	if (h->asm_verdict && h->asm_into)
		strbuf_addf(sb, "- asm (inlined into `%s`): %s\n", h->asm_into, h->asm_verdict);
	else if (h->asm_verdict)
		strbuf_addf(sb, "- asm: %s\n", h->asm_verdict);
	else if (h->asm_note)
		strbuf_addf(sb, "- asm: not read (%s)\n", h->asm_note);
	if (h->have_scale)
		strbuf_addf(sb, "- growth: ~n^%.2f (R^2 %.2f)\n", h->exponent, h->r2);
	for (size_t i = 0; i < h->nr_kb; i++) {
		const struct brief_kb_hit *k = &h->kb[i];

		strbuf_addf(sb, "- tried before: %s", k->verdict ? verdict_kind_name(k->verdict) : "no verdict");
		if (k->change)
			strbuf_addf(sb, " (%s)", k->change);
		strbuf_addf(sb, " %s/%s", b->kb_dir, k->slug);
		if (k->hypothesis)
			strbuf_addf(sb, ": %s", k->hypothesis);
		strbuf_addch(sb, '\n');
	}
	if (h->kb_total > h->nr_kb)
		strbuf_addf(sb, "- tried before: %zu more (`hotloop kb search --function '%s'`)\n",
			    h->kb_total - h->nr_kb, h->function);
	strbuf_addstr(sb, "- callers: ");
	md_shares(sb, h->callers, h->nr_callers, ", ");
	strbuf_addstr(sb, "\n- callees: ");
	md_shares(sb, h->callees, h->nr_callees, ", ");
	strbuf_addstr(sb, "\n");
	if (!snippet)
		return;
	if (!h->nr_lines) {
		if (h->snippet_note)
			strbuf_addf(sb, "- source: %s\n", h->snippet_note);
		return;
	}
	strbuf_addstr(sb, "\n```\n");
	for (size_t i = 0; i < h->nr_lines; i++) {
		const struct brief_line *l = &h->lines[i];

		strbuf_addf(sb, "%s%5lld ", l->line == h->line ? ">" : " ", (long long)l->line);
		if (l->value)
			strbuf_addf(sb, "%5.1f%% | ", pct(l->value, h->attributed));
		else
			strbuf_addstr(sb, "       | ");
		strbuf_addf(sb, "%s\n", l->text);
	}
	strbuf_addstr(sb, "```\n");
}

static void cut_note(const struct brief *b, struct strbuf *sb)
{
	size_t shown = b->show_hotspots;

	if (b->show_snippets < shown)
		strbuf_addf(sb, "source snippets of hotspots %zu-%zu", b->show_snippets + 1, shown);
	if (shown < b->nr_hotspots)
		strbuf_addf(sb, "%shotspots %zu-%zu", b->show_snippets < shown ? "; " : "", shown + 1,
			    b->nr_hotspots);
}

static void render_md(const struct brief *b, struct strbuf *sb)
{
	struct question qs[MAX_QUESTIONS];
	size_t nq;

	strbuf_addf(sb, "# hotloop brief%s%s\n\n", b->workload ? ": " : "", b->workload ? b->workload : "");
	if (b->heap) {
		strbuf_addf(sb, "- profile: heap allocations, %llu stack%s", (unsigned long long)b->samples,
			    b->samples == 1 ? "" : "s");
		if (b->duration_s > 0)
			strbuf_addf(sb, " over %.2f s", b->duration_s);
	} else {
		strbuf_addf(sb, "- profile: %llu samples", (unsigned long long)b->samples);
		if (b->event)
			strbuf_addf(sb, " of %s", b->event);
		if (b->duration_s > 0)
			strbuf_addf(sb, " over %.2f s (%.0f per second)", b->duration_s,
				    (double)b->samples / b->duration_s);
	}
	strbuf_addf(sb, "; weighed by %s\n", b->sample_type);
	strbuf_addf(sb, "- owned code: %s", b->owned_fallback ? "the main executable" : "");
	if (b->owned_fallback && b->main_tree)
		strbuf_addf(sb, " and the files of %s", b->main_tree);
	for (size_t i = 0; !b->owned_fallback && i < b->owned->nr_roots; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", b->owned->roots[i]);
	if (b->owned->how && !b->owned_fallback)
		strbuf_addf(sb, " (%s)", b->owned->how);
	strbuf_addf(sb, "; %.1f%% of the %s has no owned caller\n", b->unattributed_pct,
		    b->heap ? b->sample_type : "time");
	strbuf_addf(sb, "- sample quality: %.1f%% with unknown frames, %.1f%% truncated stacks",
		    b->unknown_pct, b->truncated_pct);
	if (b->short_copy_pct > 0)
		strbuf_addf(sb, " (%.1f%% cut where the stack copy ended)", b->short_copy_pct);
	strbuf_addch(sb, '\n');
	if (b->kb_dir)
		strbuf_addf(sb, "- knowledge base: %s, %zu attempt%s (`hotloop kb search WORDS`)\n", b->kb_dir,
			    b->kb_attempts, b->kb_attempts == 1 ? "" : "s");
	for (size_t i = 0; i < b->nr_warnings; i++)
		strbuf_addf(sb, "- warning: %s\n", b->warnings[i]);
	if (b->heap)
		heap_brief_format_md(b->heap, sb);

	strbuf_addstr(sb, "\n## Hotspots (time attributed to owned code)\n");
	if (!b->nr_hotspots)
		strbuf_addstr(sb, "\nNo owned function has samples.\n");
	if (b->folded != BT_NR) {
		strbuf_addstr(sb, "\n- ");
		folded_line(b, sb);
		strbuf_addstr(sb, "\n");
	}
	for (size_t i = 0; i < b->show_hotspots; i++)
		md_hotspot(b, i, &b->hotspots[i], i < b->show_snippets, sb);

	strbuf_addstr(sb, "\n## Hot path\n\n");
	for (size_t i = 0; i < b->nr_hot_path; i++)
		strbuf_addf(sb, "%s%s%s%s %.1f%%", i ? " -> " : "", b->hot_path[i].owned ? "**" : "",
			    b->hot_path[i].name, b->hot_path[i].owned ? "**" : "", b->hot_path[i].pct);
	strbuf_addstr(sb, b->nr_hot_path ? "\n" : "-\n");

	strbuf_addstr(sb, "\n## Rollups\n\n- by DSO (self): ");
	md_shares(sb, b->by_dso, b->nr_by_dso, ", ");
	strbuf_addstr(sb, "\n- by source directory (attributed): ");
	md_shares(sb, b->by_dir, b->nr_by_dir, ", ");
	strbuf_addstr(sb, "\n");

	nq = questions(b, qs);
	for (size_t i = 0; i < nq; i++) {
		if (!i)
			strbuf_addstr(sb, "\n## Suggested questions\n\n");
		strbuf_addstr(sb, "- ");
		question_text(b, &qs[i], sb);
		strbuf_addstr(sb, "\n");
	}
	if (b->truncated) {
		strbuf_addf(sb, "\n## Cut to fit %zu tokens\n\n- ", b->budget);
		cut_note(b, sb);
		strbuf_addstr(sb, "\n");
	}
}

/* Drop one more thing: a snippet from the bottom, then a hotspot. */
static bool cut_one(struct brief *b)
{
	while (b->show_snippets > 0 && !b->hotspots[b->show_snippets - 1].nr_lines)
		b->show_snippets--;
	b->truncated = true;
	if (b->show_snippets > 0) {
		b->show_snippets--;
		return true;
	}
	if (b->show_hotspots > 1) {
		b->show_hotspots--;
		return true;
	}
	/* a heap profile's allocation sites go last, from the bottom, never the first */
	if (b->heap && b->heap->show > 1) {
		b->heap->show--;
		return true;
	}
	return false;
}

static void fit_reset(struct brief *b, size_t budget)
{
	b->show_hotspots = b->show_snippets = b->nr_hotspots;
	b->truncated = false;
	b->budget = budget;
	if (b->heap)
		b->heap->show = b->heap->nr_sites < HEAP_SITES_SHOWN ? b->heap->nr_sites : HEAP_SITES_SHOWN;
}

void brief_format_md(struct brief *b, size_t budget, struct strbuf *out)
{
	size_t start = out->len;

	fit_reset(b, budget);
	for (;;) {
		strbuf_setlen(out, start);
		render_md(b, out);
		if (!budget || (out->len - start) / 4 <= budget || !cut_one(b))
			break;
	}
	/* a snippet cut above a hotspot cut: only mention what is really gone */
	if (b->show_snippets > b->show_hotspots)
		b->show_snippets = b->show_hotspots;
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t *shares_json(const struct brief_share *s, size_t n, const char *key)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:o, s:f, s:b}", key, json_text(s[i].name),
						   "pct", s[i].pct, "owned", s[i].owned));
	return a;
}

/* A percentage to a tenth: the precision the Markdown shows. */
static double tenth(double v)
{
	return round(v * 10) / 10;
}

/*
 * The snippet in about the Markdown's size: the lines as one string,
 * their numbers from first_line, the share of each line with samples.
 */
static json_t *snippet_json(const struct brief_hotspot *h)
{
	struct strbuf text = STRBUF_INIT;
	json_t *sn = json_object(), *shares = json_object();
	char key[24];

	for (size_t i = 0; i < h->nr_lines; i++) {
		const struct brief_line *l = &h->lines[i];

		strbuf_addf(&text, "%s%s", i ? "\n" : "", l->text);
		if (l->value <= 0)
			continue;
		snprintf(key, sizeof(key), "%lld", (long long)l->line);
		json_object_set_new(shares, key, json_real(tenth(pct(l->value, h->attributed))));
	}
	json_object_set_new(sn, "first_line", json_integer((json_int_t)h->lines[0].line));
	json_object_set_new(sn, "hot_line", json_integer((json_int_t)h->line));
	json_object_set_new(sn, "text", json_text(text.buf));
	json_object_set_new(sn, "pct", shares);
	strbuf_release(&text);
	return sn;
}

static json_t *hotspot_json(const struct brief *b, size_t rank, const struct brief_hotspot *h, bool snippet)
{
	json_t *o = json_object(), *tags = json_array(), *sn = json_null();

	json_object_set_new(o, "rank", json_integer((json_int_t)rank + 1));
	json_object_set_new(o, "function", json_text(h->function));
	json_object_set_new(o, "file", *h->file ? json_text(display_file(b, h->file)) : json_null());
	json_object_set_new(o, "line", h->line ? json_integer(h->line) : json_null());
	json_object_set_new(o, "dso", json_text(h->dso));
	json_object_set_new(o, "self_pct", json_real(pct(h->self, b->total)));
	json_object_set_new(o, "total_pct", json_real(pct(h->total, b->total)));
	json_object_set_new(o, "attributed_pct", json_real(pct(h->attributed, b->total)));
	for (size_t i = 0; i < h->nr_tags; i++)
		json_array_append_new(tags, json_pack("{s:s, s:o}", "tag", brief_tag_name(h->tags[i].tag),
						      "evidence", json_text(h->tags[i].evidence)));
	json_object_set_new(o, "tags", tags);
	json_object_set_new(o, "asm", json_text(h->asm_verdict));
	json_object_set_new(o, "asm_note", json_text(h->asm_note));
	json_object_set_new(o, "asm_inlined_into", json_text(h->asm_into));
	json_object_set_new(o, "growth", h->have_scale ? json_pack("{s:f, s:f}", "exponent", h->exponent,
								  "r2", h->r2) : json_null());
	if (snippet && h->nr_lines)
		sn = snippet_json(h);
	json_object_set_new(o, "snippet", sn);
	json_object_set_new(o, "snippet_note", json_text(snippet ? h->snippet_note : NULL));
	json_object_set_new(o, "callers", shares_json(h->callers, h->nr_callers, "function"));
	json_object_set_new(o, "callees", shares_json(h->callees, h->nr_callees, "function"));
	json_object_set_new(o, "kb", tags = json_array());
	for (size_t i = 0; i < h->nr_kb; i++)
		json_array_append_new(tags, json_pack("{s:o, s:o, s:o, s:o}",
						      "slug", json_text(h->kb[i].slug),
						      "verdict", json_text(verdict_kind_names[h->kb[i].verdict]),
						      "change", json_text(h->kb[i].change),
						      "hypothesis", json_text(h->kb[i].hypothesis)));
	return o;
}

static json_t *render_json(const struct brief *b)
{
	json_t *doc = json_object(), *q = json_object(), *w = json_array(), *hs = json_array();
	json_t *own = json_object(), *roots = json_array(), *folded, *qa;
	struct strbuf cut = STRBUF_INIT;
	struct question qs[MAX_QUESTIONS];
	size_t nq;

	json_object_set_new(doc, "workload", json_text(b->workload));
	if (b->heap)
		json_object_set_new(doc, "heap", heap_brief_to_json(b->heap));
	json_object_set_new(q, "samples", json_integer((json_int_t)b->samples));
	json_object_set_new(q, "event", json_text(b->event));
	json_object_set_new(q, "sample_type", json_text(b->sample_type));
	json_object_set_new(q, "duration_s", b->duration_s > 0 ? json_real(b->duration_s) : json_null());
	json_object_set_new(q, "rate_hz", b->duration_s > 0 ? json_real((double)b->samples / b->duration_s)
							    : json_null());
	json_object_set_new(q, "unknown_pct", json_real(b->unknown_pct));
	json_object_set_new(q, "truncated_pct", json_real(b->truncated_pct));
	json_object_set_new(q, "short_copy_pct", json_real(b->short_copy_pct));
	json_object_set_new(q, "unattributed_pct", json_real(b->unattributed_pct));
	for (size_t i = 0; i < b->nr_warnings; i++)
		json_array_append_new(w, json_text(b->warnings[i]));
	json_object_set_new(q, "warnings", w);
	json_object_set_new(doc, "quality", q);
	for (size_t i = 0; i < b->owned->nr_roots; i++)
		json_array_append_new(roots, json_text(b->owned->roots[i]));
	json_object_set_new(own, "roots", roots);
	json_object_set_new(own, "from", json_text(b->owned->how));
	json_object_set_new(own, "main_executable_fallback", json_boolean(b->owned_fallback));
	json_object_set_new(own, "main_executable_tree",
			    b->owned_fallback && b->main_tree ? json_text(b->main_tree) : json_null());
	json_object_set_new(doc, "owned", own);
	json_object_set_new(doc, "kb", b->kb_dir ? json_pack("{s:o, s:I}", "dir", json_text(b->kb_dir),
							     "attempts", (json_int_t)b->kb_attempts)
						 : json_null());
	for (size_t i = 0; i < b->show_hotspots; i++)
		json_array_append_new(hs, hotspot_json(b, i, &b->hotspots[i], i < b->show_snippets));
	json_object_set_new(doc, "hotspots", hs);
	json_object_set_new(doc, "folded_tags", folded = json_array());
	if (b->folded != BT_NR) {
		json_t *ranks = json_array();

		for (size_t i = 0; i < b->nr_folded; i++)
			if (b->folded_ranks[i] < b->show_hotspots)
				json_array_append_new(ranks, json_integer((json_int_t)b->folded_ranks[i] + 1));
		folded_line(b, &cut);
		json_array_append_new(folded, json_pack("{s:s, s:o, s:o}", "tag", brief_tag_name(b->folded),
							"hotspots", ranks, "evidence", json_text(cut.buf)));
		strbuf_reset(&cut);
	}
	nq = questions(b, qs);
	json_object_set_new(doc, "questions", qa = json_array());
	for (size_t i = 0; i < nq; i++) {
		json_t *ranks = json_array();

		for (size_t k = 0; k < qs[i].nr_hot; k++)
			json_array_append_new(ranks, json_integer((json_int_t)qs[i].hot[k] + 1));
		question_text(b, &qs[i], &cut);
		json_array_append_new(qa, json_pack("{s:o, s:o}", "question", json_text(cut.buf),
						    "hotspots", ranks));
		strbuf_reset(&cut);
	}
	json_object_set_new(doc, "hot_path", shares_json(b->hot_path, b->nr_hot_path, "function"));
	json_object_set_new(doc, "rollup", json_pack("{s:o, s:o}", "dso",
						     shares_json(b->by_dso, b->nr_by_dso, "name"), "dir",
						     shares_json(b->by_dir, b->nr_by_dir, "name")));
	json_object_set_new(doc, "truncated", json_boolean(b->truncated));
	if (b->truncated)
		cut_note(b, &cut);
	json_object_set_new(doc, "cut", b->truncated ? json_text(cut.buf) : json_null());
	json_object_set_new(doc, "budget_tokens", b->budget ? json_integer((json_int_t)b->budget) : json_null());
	strbuf_release(&cut);
	return doc;
}

/*
 * Cut by the Markdown's measure: the JSON carries what the Markdown does
 * at the same budget (its keys and indentation are not content).
 */
json_t *brief_to_json(struct brief *b, size_t budget)
{
	struct strbuf md = STRBUF_INIT;

	brief_format_md(b, budget, &md);
	strbuf_release(&md);
	return render_json(b);
}

void brief_hotspot_release(struct brief_hotspot *h)
{
	for (size_t j = 0; j < h->nr_lines; j++)
		free(h->lines[j].text);
	free(h->lines);
	free(h->snippet_note);
	for (size_t j = 0; j < h->nr_tags; j++)
		free(h->tags[j].evidence);
	free(h->tags);
	free(h->asm_verdict);
	free(h->asm_container);
	free(h->asm_into);
	free(h->asm_note);
	for (size_t j = 0; j < h->nr_kb; j++)
		free_kb_hit(&h->kb[j]);
	free(h->kb);
	memset(h, 0, sizeof(*h));
}

void brief_release(struct brief *b)
{
	for (size_t i = 0; i < b->nr_hotspots; i++)
		brief_hotspot_release(&b->hotspots[i]);
	free(b->hotspots);
	free(b->folded_ranks);
	for (size_t i = 0; i < b->nr_warnings; i++)
		free(b->warnings[i]);
	free(b->warnings);
	free(b->hot_path);
	free(b->by_dso);
	free(b->by_dir);
	for (size_t i = 0; i < b->nr_dir_names; i++)
		free(b->dir_names[i]);
	free(b->dir_names);
	for (size_t i = 0; i < b->nr_real_paths; i++)
		free(b->real_paths[i]);
	free(b->real_paths);
	free(b->main_tree);
	free(b->kb_dir);
	if (b->heap)
		heap_brief_release(b->heap);
	free(b->heap);
	memset(b, 0, sizeof(*b));
}
