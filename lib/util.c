/*
 * util.c: allocation wrappers, the error reporter, atomic file writes.
 * Out of memory is not an error hotloop can recover from: it says so on
 * stderr and exits with status 1 (oom()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "strbuf.h"

/* n in decimal at the end of buf[0..len), NUL-terminated; where it starts. */
static char *fmt_size(char *buf, size_t len, size_t n)
{
	char *p = buf + len;

	*--p = '\0';
	do
		*--p = (char)('0' + n % 10);
	while ((n /= 10) && p > buf);
	return p;
}

/*
 * Out of memory: "hotloop: out of memory (allocating [NMEMB x ]SIZE bytes)"
 * on stderr, then exit status 1. It may run anywhere: deep in a command, in
 * a forked child before exec, in the launcher. So nothing is allocated
 * (write(2), no stdio), and _exit(): no atexit handler, and no stdio buffer
 * flushed, which would print half a document or, in a child, a second copy
 * of the parent's pending output.
 */
static _Noreturn void oom(size_t nmemb, size_t size)
{
	char msg[128], a[24], b[24];
	size_t len = 0;
	const char *const parts[] = {
		"hotloop: out of memory (allocating ",
		nmemb != 1 ? fmt_size(a, sizeof(a), nmemb) : "", nmemb != 1 ? " x " : "",
		fmt_size(b, sizeof(b), size), " bytes)\n",
	};

	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		size_t n = strlen(parts[i]);

		memcpy(msg + len, parts[i], n);
		len += n;
	}
	write_full(STDERR_FILENO, msg, len);
	_exit(HL_EXIT_FAILURE);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(1, n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		oom(nmemb, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(1, n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *xstrfmt(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb, NULL);
}

static volatile sig_atomic_t cancelled;

void hl_cancel(void)
{
	cancelled = 1;
}

bool hl_cancelled(void)
{
	return cancelled;
}

void hl_cancel_reset(void)
{
	cancelled = 0;
}

static __thread char last_msg[1024];	/* per thread: the server answers on several */

static void default_report(const char *prefix, const char *msg)
{
	fprintf(stderr, "%s%s\n", prefix, msg);
}

static report_fn error_routine = default_report;
static report_fn warn_routine = default_report;

report_fn set_error_routine(report_fn fn)
{
	report_fn old = error_routine;

	error_routine = fn ? fn : default_report;
	return old;
}

report_fn set_warn_routine(report_fn fn)
{
	report_fn old = warn_routine;

	warn_routine = fn ? fn : default_report;
	return old;
}

void clear_last_error(void)
{
	last_msg[0] = '\0';
}

const char *last_error(void)
{
	return last_msg;
}

int hl_error(const char *fmt, ...)
{
	va_list ap;

	char msg[sizeof(last_msg)];

	/* formatted apart: an argument may be last_error() itself */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(last_msg, msg, sizeof(msg));
	error_routine("hotloop: ", last_msg);
	return -1;
}

void hl_warning(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	warn_routine("hotloop: warning: ", msg);
}

void hl_bug(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hotloop: BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_file_atomic(const char *path, const void *buf, size_t len)
{
	struct strbuf tmp = STRBUF_INIT;
	int fd, ret = -1;

	strbuf_addf(&tmp, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp.buf);
	if (fd < 0) {
		error("cannot create '%s': %s", tmp.buf, strerror(errno));
		goto out_free;
	}
	errno = 0;
	if (write_full(fd, buf, len)) {
		error("cannot write '%s': %s", path, errno ? strerror(errno) : "short write");
		goto out_unlink;
	}
	if (fsync(fd) < 0 && errno != EINVAL) {
		error("cannot write '%s': %s", path, strerror(errno));
		goto out_unlink;
	}
	if (fchmod(fd, 0644) < 0 || close(fd) < 0) {
		fd = -1;
		error("cannot write '%s': %s", path, strerror(errno));
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp.buf, path) < 0) {
		error("cannot rename '%s' to '%s': %s", tmp.buf, path, strerror(errno));
		goto out_unlink;
	}
	ret = 0;
	goto out_free;
out_unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp.buf);
out_free:
	strbuf_release(&tmp);
	return ret;
}

ssize_t read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

bool read_int64_file(const char *path, int64_t *out)
{
	char buf[64], *end;
	long long v;

	if (read_small_file(path, buf, sizeof(buf)) <= 0)
		return false;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf)
		return false;
	*out = v;
	return true;
}

/* A CPU number from 0 to max at *s, leaving *s after it; -1 if there is none. */
static long cpu_number(const char **s, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(*s, &end, 10);
	if (errno || end == *s || v < 0 || v > max)
		return -1;
	*s = end;
	return v;
}

int cpu_list_parse(const char *what, const char *s, int max, int **cpus, size_t *nr)
{
	const char *p = s;
	uint64_t *seen = xcalloc((size_t)max / 64 + 1, sizeof(*seen));
	size_t alloc = 0;

	*cpus = NULL;
	*nr = 0;
	for (;;) {
		long a = cpu_number(&p, max), b = a;

		if (a < 0)
			goto invalid;
		if (*p == '-') {
			p++;
			b = cpu_number(&p, max);
			if (b < a)
				goto invalid;
		}
		for (long c = a; c <= b; c++) {
			if (seen[c / 64] & (1ull << (c % 64)))
				continue;	/* "0-3,2": each CPU once */
			seen[c / 64] |= 1ull << (c % 64);
			ALLOC_GROW(*cpus, *nr + 1, alloc);
			(*cpus)[(*nr)++] = (int)c;
		}
		if (*p != ',')
			break;
		p++;
	}
	if (*p && !(*p == '\n' && !p[1]))
		goto invalid;
	free(seen);
	return 0;
invalid:
	free(seen);
	free(*cpus);
	*cpus = NULL;
	*nr = 0;
	if (!what)
		return -1;
	return error("invalid value '%s' for %s: expected CPU numbers from 0 to %d like 1, 0,2 or 0-3",
		     s, what, max);
}

int read_file(struct strbuf *sb, const char *path, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int ret = 0;

	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	/* a regular file's size is known: one allocation, no copies as it grows */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((uint64_t)st.st_size > cap) {
			close(fd);
			return error("cannot read '%s': larger than %zu bytes", path, cap);
		}
		strbuf_grow(sb, (size_t)st.st_size + 1);
	}
	if (strbuf_read_fd(sb, fd, cap))
		ret = errno == EFBIG ?
			error("cannot read '%s': larger than %zu bytes", path, cap) :
			error("cannot read '%s': %s", path, strerror(errno));
	close(fd);
	return ret;
}

size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[65], cur[65];

	if (la >= ARRAY_SIZE(prev) || lb >= ARRAY_SIZE(prev))
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(*prev));
	}
	return prev[lb];
}

const char *short_path(const char *path)
{
	const char *p = path + strlen(path);
	int slashes = 0;

	while (p > path) {
		if (p[-1] == '/' && ++slashes == 2)
			break;
		p--;
	}
	return p;
}

/* Append one component of a path being normalized; 'keep' is how much of out a ".." cannot take. */
static void path_component(struct strbuf *out, size_t *keep, const char *c, size_t n)
{
	if (!n || (n == 1 && c[0] == '.'))
		return;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		if (out->len > *keep) {
			size_t i = out->len;

			while (i > *keep && out->buf[i - 1] != '/')
				i--;
			/* drop the component and the '/' before it, but not the root's */
			strbuf_setlen(out, i > 1 && i > *keep ? i - 1 : i);
			return;
		}
		if (out->len && out->buf[0] == '/')
			return;		/* "/.." is "/" */
		/* a relative path: keep it, and never take it away */
		if (out->len)
			strbuf_addch(out, '/');
		strbuf_addstr(out, "..");
		*keep = out->len;
		return;
	}
	if (out->len && out->buf[out->len - 1] != '/')
		strbuf_addch(out, '/');
	strbuf_add(out, c, n);
}

static void path_components(struct strbuf *out, size_t *keep, const char *p)
{
	while (*p) {
		const char *end = strchrnul(p, '/');

		path_component(out, keep, p, (size_t)(end - p));
		p = *end ? end + 1 : end;
	}
}

void path_join_normalize(struct strbuf *out, const char *dir, const char *name)
{
	size_t keep = 0;
	bool joined = *name != '/' && dir && *dir;
	const char *first = joined ? dir : name;

	strbuf_setlen(out, 0);
	if (!*first)
		return;
	if (*first == '/') {
		strbuf_addch(out, '/');
		keep = 1;
	}
	if (joined)
		path_components(out, &keep, dir);
	path_components(out, &keep, name);
	if (!out->len)
		strbuf_addch(out, '.');
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP ? rmdir(path) : unlink(path))
		return error("cannot remove '%s': %s", path, strerror(errno));
	return 0;
}

int mkdir_p(const char *path)
{
	char *copy = xstrdup(path);
	int ret = 0;

	for (char *p = copy + 1; ; p++) {
		char c = *p;

		if (c && c != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0777) && errno != EEXIST) {
			ret = error("cannot create '%s': %s", copy, strerror(errno));
			break;
		}
		if (!(*p = c))
			break;
	}
	free(copy);
	return ret;
}

int remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : error("cannot stat '%s': %s", path, strerror(errno));
	return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) ? -1 : 0;
}

int name_index(const char *const *names, size_t nr, const char *s)
{
	for (size_t i = 0; s && i < nr; i++)
		if (names[i] && !strcmp(names[i], s))
			return (int)i;
	return -1;
}
