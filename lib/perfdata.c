/*
 * perfdata.c: the perf.data reader (see perfdata.h). The header, the attrs
 * and the feature sections are read first; then the data section is walked
 * twice: once to check every record and count each event's samples, then
 * round by round (perf orders records only within one), each round's
 * records sorted by time and turned into sampler events for record.c's
 * timeline, which symbolizes and builds the profile. A mapped file gives
 * back the pages behind the records still waiting.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "strbuf.h"
#include "intern.h"
#include "profile.h"
#include "sampler.h"
#include "record.h"
#include "perfdata.h"

#define PERF_MAGIC		0x32454c4946524550ull	/* "PERFILE2" written little-endian */
#define FILE_HEADER_SIZE	104
#define PIPE_HEADER_SIZE	16
#define ATTR_VER0_SIZE		64
#define ATTR_MAX_SIZE		4096	/* far above any perf_event_attr so far */

/* perf_event_attr.sample_type */
#define ST_IDENTIFIER	(1ull << 16)
#define ST_IP		(1ull << 0)
#define ST_TID		(1ull << 1)
#define ST_TIME		(1ull << 2)
#define ST_ADDR		(1ull << 3)
#define ST_READ		(1ull << 4)
#define ST_CALLCHAIN	(1ull << 5)
#define ST_ID		(1ull << 6)
#define ST_CPU		(1ull << 7)
#define ST_PERIOD	(1ull << 8)
#define ST_STREAM_ID	(1ull << 9)
#define ST_RAW		(1ull << 10)
#define ST_BRANCH_STACK	(1ull << 11)
#define ST_REGS_USER	(1ull << 12)
#define ST_STACK_USER	(1ull << 13)

/* perf_event_attr.read_format */
#define RF_TIME_ENABLED	(1ull << 0)
#define RF_TIME_RUNNING	(1ull << 1)
#define RF_ID		(1ull << 2)
#define RF_GROUP	(1ull << 3)
#define RF_LOST		(1ull << 4)

/* perf_event_attr's bit field, and branch_sample_type */
#define AF_FREQ		(1ull << 10)
#define AF_SAMPLE_ID_ALL (1ull << 18)
#define BR_HW_INDEX	(1ull << 17)
#define BR_COUNTERS	(1ull << 19)

enum {
	REC_MMAP = 1, REC_LOST = 2, REC_COMM = 3, REC_EXIT = 4, REC_FORK = 7,
	REC_SAMPLE = 9, REC_MMAP2 = 10, REC_LOST_SAMPLES = 13,
	REC_FINISHED_ROUND = 68, REC_AUXTRACE = 71, REC_COMPRESSED = 81,
	REC_COMPRESSED2 = 83,
};

#define MISC_CPUMODE_MASK	7
#define MISC_KERNEL		1
#define MISC_HYPERVISOR		3
#define MISC_MMAP_DATA		(1 << 13)
#define MISC_COMM_EXEC		(1 << 13)
#define MISC_MMAP_BUILD_ID	(1 << 14)
#define MISC_BUILD_ID_SIZE	(1 << 15)

enum { FEAT_BUILD_ID = 2, FEAT_HOSTNAME = 3, FEAT_CMDLINE = 11, FEAT_EVENT_DESC = 12 };

#define BUILD_ID_MAX	20
#define MAX_REGS	64
#define DROP_BYTES	((uint64_t)4 << 20)	/* pages given back at a time */

struct pd_attr {
	uint32_t type;
	uint64_t config, sample_period, sample_type, read_format, flags;
	uint64_t branch_sample_type, regs_user;
	unsigned nr_regs;
	char *name;		/* from the event description, or made up */
	uint64_t samples;
};

struct pd_id {
	uint64_t id;
	uint32_t attr;
};

/* A record of the data section to deliver, in time order. */
struct pd_rec {
	uint64_t time, off;
};

struct pd_build_id {
	unsigned char id[BUILD_ID_MAX];
	unsigned size;
};

struct pd {
	const unsigned char *buf;
	size_t len;
	bool mapped;		/* buf maps the file: its pages may be given back */
	uint64_t dropped;	/* the bytes below this were given back */
	bool swap;		/* the file's byte order is not ours */
	const char *what;

	struct pd_attr *attrs;
	size_t nr_attrs;
	struct pd_attr *shown;		/* the event whose samples are read */
	struct pd_id *ids;
	size_t nr_ids;
	uint64_t data_off, data_end;
	uint64_t features[4];

	struct strtab bid_names;	/* user file names with a build id */
	struct pd_build_id *bids;	/* by bid_names index */
	size_t alloc_bids;
	char *kernel_build_id;		/* hex, or NULL */
	char *cmdline, *hostname;

	struct pd_rec *recs;		/* the records of the rounds not delivered yet */
	size_t nr_recs, alloc_recs;
	uint64_t flush_to, max_time;	/* deliver up to flush_to at a round's end */
	uint64_t lost;

	uint64_t ips[2 * SAMPLER_MAX_FRAMES];
	uint64_t regs[MAX_REGS];
	uint64_t first_time, last_time;
	bool have_time, have_main;
	uint32_t main_pid;
};

static int bad(const struct pd *pd, uint64_t off, const char *fmt, ...) ATTR_PRINTF(3, 4);
static int bad(const struct pd *pd, uint64_t off, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	error("cannot read '%s': %s at byte %llu", pd->what, sb.buf, (unsigned long long)off);
	strbuf_release(&sb);
	return -1;
}

/* Readers of fields at offsets the caller has checked. */
static uint16_t rd16(const struct pd *pd, uint64_t off)
{
	uint16_t v;

	memcpy(&v, pd->buf + off, sizeof(v));
	return pd->swap ? __builtin_bswap16(v) : v;
}

static uint32_t rd32(const struct pd *pd, uint64_t off)
{
	uint32_t v;

	memcpy(&v, pd->buf + off, sizeof(v));
	return pd->swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const struct pd *pd, uint64_t off)
{
	uint64_t v;

	memcpy(&v, pd->buf + off, sizeof(v));
	return pd->swap ? __builtin_bswap64(v) : v;
}

static unsigned char reverse_bits(unsigned char b)
{
	b = (unsigned char)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
	b = (unsigned char)((b & 0xcc) >> 2 | (b & 0x33) << 2);
	return (unsigned char)((b & 0xaa) >> 1 | (b & 0x55) << 1);
}

/*
 * perf_event_attr's bit field. The other byte order allocates bit fields
 * from the other end of each byte, so such a file's bytes are bit-reversed
 * one by one, not byte-swapped (as perf itself reads them).
 */
static uint64_t rd_flags(const struct pd *pd, uint64_t off)
{
	unsigned char b[8];
	uint64_t v;

	memcpy(b, pd->buf + off, sizeof(b));
	if (pd->swap)
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = reverse_bits(b[i]);
	memcpy(&v, b, sizeof(v));
	return v;
}

static bool in_file(const struct pd *pd, uint64_t off, uint64_t size)
{
	return off <= pd->len && size <= pd->len - off;
}

bool perfdata_sniff(const void *data, size_t len)
{
	uint64_t m;

	if (len < sizeof(m))
		return false;
	memcpy(&m, data, sizeof(m));
	return m == PERF_MAGIC || m == __builtin_bswap64(PERF_MAGIC);
}

/* ---- header and attrs --------------------------------------------------- */

static const char *event_name(uint32_t type, uint64_t config)
{
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
		"stalled-cycles-backend", "ref-cycles",
	};
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults", "dummy", "bpf-output",
		"cgroup-switches",
	};

	if (type == 0 && config < ARRAY_SIZE(hw))
		return hw[config];
	if (type == 1 && config < ARRAY_SIZE(sw))
		return sw[config];
	return NULL;
}

static int id_cmp(const void *a, const void *b)
{
	const struct pd_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int read_attr(struct pd *pd, uint64_t e, uint64_t entry_size, size_t i)
{
	struct pd_attr *a = &pd->attrs[i];
	uint64_t size = rd32(pd, e + 4), ids_off, ids_size;

	if (!size)
		size = ATTR_VER0_SIZE;
	if (size < ATTR_VER0_SIZE)
		return bad(pd, e + 4, "event %zu has an attr of %llu bytes (at least 64 expected)",
			   i, (unsigned long long)size);
	if (size > entry_size - 16)
		size = entry_size - 16;
	a->type = rd32(pd, e);
	a->config = rd64(pd, e + 8);
	a->sample_period = rd64(pd, e + 16);
	a->sample_type = rd64(pd, e + 24);
	a->read_format = rd64(pd, e + 32);
	a->flags = rd_flags(pd, e + 40);
	if (size >= 80)
		a->branch_sample_type = rd64(pd, e + 72);
	if (size >= 88)
		a->regs_user = rd64(pd, e + 80);
	a->nr_regs = (unsigned)__builtin_popcountll(a->regs_user);

	ids_off = rd64(pd, e + entry_size - 16);
	ids_size = rd64(pd, e + entry_size - 8);
	if (!in_file(pd, ids_off, ids_size) || ids_size % 8)
		return bad(pd, e + entry_size - 16,
			   "the id list of event %zu (%llu bytes at %llu) is out of the file",
			   i, (unsigned long long)ids_size, (unsigned long long)ids_off);
	if (ids_size / 8 > pd->len / 8 - pd->nr_ids)
		return bad(pd, e + entry_size - 16, "more event ids than the file can hold");
	pd->ids = xrealloc(pd->ids, (pd->nr_ids + ids_size / 8 + 1) * sizeof(*pd->ids));
	for (uint64_t o = 0; o < ids_size; o += 8)
		pd->ids[pd->nr_ids++] = (struct pd_id){ rd64(pd, ids_off + o), (uint32_t)i };
	return 0;
}

static int read_header(struct pd *pd)
{
	uint64_t hsize, entry, a_off, a_size, d_off, d_size;

	if (pd->len < PIPE_HEADER_SIZE)
		return bad(pd, pd->len, "truncated header");
	hsize = rd64(pd, 8);
	if (hsize == PIPE_HEADER_SIZE)
		return error("cannot read '%s': a pipe-mode perf.data (perf record -o -) is not supported: convert it with 'perf inject -i %s -o perf.data'",
			     pd->what, pd->what);
	if (hsize < FILE_HEADER_SIZE)
		return bad(pd, 8, "header size %llu is too small (104 expected)",
			   (unsigned long long)hsize);
	if (pd->len < FILE_HEADER_SIZE)
		return bad(pd, pd->len, "truncated header");
	entry = rd64(pd, 16);
	if (entry < ATTR_VER0_SIZE + 16 || entry > ATTR_MAX_SIZE)
		return bad(pd, 16, "attr size %llu is out of range", (unsigned long long)entry);
	a_off = rd64(pd, 24);
	a_size = rd64(pd, 32);
	if (!in_file(pd, a_off, a_size))
		return bad(pd, 24, "the attrs section (%llu bytes at %llu) is out of the file",
			   (unsigned long long)a_size, (unsigned long long)a_off);
	if (!a_size || a_size % entry)
		return bad(pd, 32, "the attrs section's size %llu is not a multiple of %llu",
			   (unsigned long long)a_size, (unsigned long long)entry);
	d_off = rd64(pd, 40);
	d_size = rd64(pd, 48);
	if (!in_file(pd, d_off, d_size))
		return bad(pd, 40, "the data section (%llu bytes at %llu) is out of the file",
			   (unsigned long long)d_size, (unsigned long long)d_off);
	pd->data_off = d_off;
	pd->data_end = d_off + d_size;
	for (size_t i = 0; i < 4; i++)
		pd->features[i] = rd64(pd, 72 + 8 * i);

	pd->nr_attrs = a_size / entry;
	pd->attrs = xcalloc(pd->nr_attrs, sizeof(*pd->attrs));
	for (size_t i = 0; i < pd->nr_attrs; i++)
		if (read_attr(pd, a_off + i * entry, entry, i))
			return -1;
	if (pd->nr_ids)
		qsort(pd->ids, pd->nr_ids, sizeof(*pd->ids), id_cmp);
	return 0;
}

/* ---- feature sections ---------------------------------------------------- */

/* A perf_header_string: u32 length, then that many bytes (NUL padded). */
static int read_string(struct pd *pd, uint64_t *off, uint64_t end, char **out)
{
	uint32_t n;

	if (end - *off < 4)
		return bad(pd, *off, "truncated string");
	n = rd32(pd, *off);
	if (n > end - *off - 4)
		return bad(pd, *off, "a string of %u bytes runs past its section", n);
	*out = xstrndup((const char *)pd->buf + *off + 4, n);
	*off += 4 + (uint64_t)n;
	return 0;
}

static int read_build_ids(struct pd *pd, uint64_t off, uint64_t end)
{
	while (off < end) {
		uint16_t misc, size;
		const char *name;
		unsigned n = BUILD_ID_MAX;
		size_t name_len;

		if (end - off < 8)
			return bad(pd, off, "truncated build id record");
		misc = rd16(pd, off + 4);
		size = rd16(pd, off + 6);
		if (size < 37 || size > end - off)
			return bad(pd, off + 6, "build id record size %u is out of range", size);
		name = (const char *)pd->buf + off + 36;
		name_len = strnlen(name, size - 36);
		if (name_len == size - 36)
			return bad(pd, off + 36, "unterminated file name in a build id record");
		if (misc & MISC_BUILD_ID_SIZE)
			n = pd->buf[off + 32] < BUILD_ID_MAX ? pd->buf[off + 32] : BUILD_ID_MAX;
		if ((misc & MISC_CPUMODE_MASK) == MISC_KERNEL) {
			if (!strcmp(name, "[kernel.kallsyms]") && !pd->kernel_build_id) {
				struct strbuf hex = STRBUF_INIT;

				for (unsigned j = 0; j < n; j++)
					strbuf_addf(&hex, "%02x", pd->buf[off + 12 + j]);
				pd->kernel_build_id = strbuf_detach(&hex, NULL);
			}
		} else if (n) {
			int64_t i = strtab_intern(&pd->bid_names, name, name_len);
			size_t old = pd->alloc_bids;

			if ((size_t)i >= pd->alloc_bids) {
				ALLOC_GROW(pd->bids, (size_t)i + 1, pd->alloc_bids);
				memset(pd->bids + old, 0, (pd->alloc_bids - old) * sizeof(*pd->bids));
			}
			memcpy(pd->bids[i].id, pd->buf + off + 12, n);
			pd->bids[i].size = n;
		}
		off += size;
	}
	return 0;
}

static int read_cmdline(struct pd *pd, uint64_t off, uint64_t end)
{
	struct strbuf sb = STRBUF_INIT;
	uint32_t nr;
	int ret = 0;

	if (end - off < 4)
		return bad(pd, off, "truncated command line");
	nr = rd32(pd, off);
	off += 4;
	for (uint32_t i = 0; i < nr && !ret; i++) {
		char *arg;

		ret = read_string(pd, &off, end, &arg);
		if (!ret) {
			strbuf_addf(&sb, "%s%s", i ? " " : "", arg);
			free(arg);
		}
	}
	if (!ret)
		pd->cmdline = strbuf_detach(&sb, NULL);
	strbuf_release(&sb);
	return ret;
}

/* Event names, in the attrs' order: attr, id count, name, ids. */
static int read_event_desc(struct pd *pd, uint64_t off, uint64_t end)
{
	uint32_t nr, asz;

	if (end - off < 8)
		return bad(pd, off, "truncated event description");
	nr = rd32(pd, off);
	asz = rd32(pd, off + 4);
	off += 8;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t nr_ids;
		char *name;

		if (end - off < (uint64_t)asz + 4)
			return bad(pd, off, "truncated event description");
		off += asz;
		nr_ids = rd32(pd, off);
		off += 4;
		if (read_string(pd, &off, end, &name))
			return -1;
		if (i < pd->nr_attrs && !pd->attrs[i].name)
			pd->attrs[i].name = name;
		else
			free(name);
		if ((uint64_t)nr_ids * 8 > end - off)
			return bad(pd, off, "event ids run past their section");
		off += (uint64_t)nr_ids * 8;
	}
	return 0;
}

static int read_features(struct pd *pd)
{
	uint64_t table = pd->data_end;
	size_t n = 0;

	for (unsigned bit = 0; bit < 256; bit++) {
		uint64_t off, size, end;
		int ret = 0;

		if (!(pd->features[bit / 64] & (1ull << (bit % 64))))
			continue;
		if (!in_file(pd, table + 16 * n, 16))
			return bad(pd, table + 16 * n, "the feature sections' table is out of the file");
		off = rd64(pd, table + 16 * n);
		size = rd64(pd, table + 16 * n + 8);
		if (!in_file(pd, off, size))
			return bad(pd, table + 16 * n,
				   "feature section %u (%llu bytes at %llu) is out of the file",
				   bit, (unsigned long long)size, (unsigned long long)off);
		end = off + size;
		n++;
		switch (bit) {
		case FEAT_BUILD_ID:
			ret = read_build_ids(pd, off, end);
			break;
		case FEAT_CMDLINE:
			ret = read_cmdline(pd, off, end);
			break;
		case FEAT_EVENT_DESC:
			ret = read_event_desc(pd, off, end);
			break;
		case FEAT_HOSTNAME:
			if (!pd->hostname)
				ret = read_string(pd, &off, end, &pd->hostname);
			break;
		}
		if (ret)
			return -1;
	}
	return 0;
}

/* ---- records ------------------------------------------------------------- */

/* The attr a sample belongs to, by its id; NULL for an unknown id. */
static struct pd_attr *sample_attr(struct pd *pd, uint64_t off, uint16_t size)
{
	uint64_t st = pd->attrs[0].sample_type, pos, id;
	size_t lo = 0, hi = pd->nr_ids;

	if (pd->nr_attrs == 1)
		return &pd->attrs[0];
	if (st & ST_IDENTIFIER)
		pos = 8;
	else if (st & ST_ID)
		pos = 8 + 8 * (uint64_t)__builtin_popcountll(st & (ST_IP | ST_TID | ST_TIME | ST_ADDR));
	else
		return &pd->attrs[0];	/* perf cannot tell them apart either */
	if (pos + 8 > size)
		return NULL;
	id = rd64(pd, off + pos);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pd->ids[mid].id < id)
			lo = mid + 1;
		else if (pd->ids[mid].id > id)
			hi = mid;
		else
			return &pd->attrs[pd->ids[mid].attr];
	}
	return NULL;
}

/* Bytes of the sample_id_all trailer of non-sample records. */
static uint64_t trailer_size(const struct pd *pd)
{
	uint64_t st = pd->attrs[0].sample_type;

	if (!(pd->attrs[0].flags & AF_SAMPLE_ID_ALL))
		return 0;
	return 8 * (uint64_t)__builtin_popcountll(st & (ST_TID | ST_TIME | ST_ID | ST_STREAM_ID |
							 ST_CPU | ST_IDENTIFIER));
}

/* The time of a record; false when it carries none. */
static int record_time(struct pd *pd, uint64_t off, uint32_t type, uint16_t size,
		       uint64_t *time, bool *has, bool count)
{
	*has = false;
	if (type == REC_SAMPLE) {
		struct pd_attr *a = sample_attr(pd, off, size);
		uint64_t st = a ? a->sample_type : 0, pos;

		if (a && count)
			a->samples++;
		if (!(st & ST_TIME))
			return 0;
		pos = 8 + 8 * (uint64_t)__builtin_popcountll(st & (ST_IDENTIFIER | ST_IP | ST_TID));
		if (pos + 8 > size)
			return bad(pd, off, "a sample of %u bytes is shorter than its sample_type 0x%llx needs",
				   size, (unsigned long long)st);
		*time = rd64(pd, off + pos);
	} else {
		uint64_t tsz = trailer_size(pd), st = pd->attrs[0].sample_type;

		if (!tsz || !(st & ST_TIME))
			return 0;
		if (tsz > (uint64_t)size - 8)
			return bad(pd, off, "a record of %u bytes is too short for its sample id", size);
		*time = rd64(pd, off + size - tsz + (st & ST_TID ? 8 : 0));
	}
	*has = true;
	return 0;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct pd_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* A cursor over a sample's fields. */
struct cur {
	const struct pd *pd;
	uint64_t off, end;
	bool bad;
};

static bool skip(struct cur *c, uint64_t n)
{
	if (c->bad || n > c->end - c->off) {
		c->bad = true;
		return false;
	}
	c->off += n;
	return true;
}

static uint64_t get64(struct cur *c)
{
	uint64_t off = c->off;

	return skip(c, 8) ? rd64(c->pd, off) : 0;
}

static uint32_t get32(struct cur *c)
{
	uint64_t off = c->off;

	return skip(c, 4) ? rd32(c->pd, off) : 0;
}

static uint64_t read_format_size(const struct pd_attr *a, struct cur *c)
{
	uint64_t rf = a->read_format;
	uint64_t each = 8 + (rf & RF_ID ? 8 : 0) + (rf & RF_LOST ? 8 : 0);
	uint64_t times = (rf & RF_TIME_ENABLED ? 8 : 0) + (rf & RF_TIME_RUNNING ? 8 : 0);
	uint64_t nr;

	if (!(rf & RF_GROUP))
		return each + times;
	nr = get64(c);
	if (c->bad || nr > (c->end - c->off) / each) {
		c->bad = true;
		return 0;
	}
	return times + nr * each;
}

static int parse_callchain(struct pd *pd, struct cur *c, struct sampler_event *ev,
			   uint16_t misc)
{
	uint64_t nr = get64(c);

	if (c->bad)
		return -1;
	if (nr > (c->end - c->off) / 8)
		return bad(pd, c->off - 8, "a callchain of %llu entries is longer than its record",
			   (unsigned long long)nr);
	sampler_split_callchain(pd->buf + c->off, nr, pd->swap, misc, pd->ips, ev);
	c->off += nr * 8;
	return 0;
}

/*
 * One sample, by its attr's sample_type. Returns 1 when ev is filled, 0
 * for a sample of another event, -1 when it is malformed.
 */
static int parse_sample(struct pd *pd, uint64_t off, uint16_t size, uint16_t misc,
			struct sampler_event *ev)
{
	struct pd_attr *a = sample_attr(pd, off, size);
	struct cur c = { pd, off + 8, off + size, false };
	uint64_t st, mode = misc & MISC_CPUMODE_MASK;

	if (a != pd->shown)
		return 0;
	st = a->sample_type;
	ev->type = SAMPLER_SAMPLE;
	ev->sample.ips = pd->ips;	/* empty without a callchain */
	ev->sample.period = a->flags & AF_FREQ ? 1 : a->sample_period;
	ev->sample.kernel_ip = mode == MISC_KERNEL || mode == MISC_HYPERVISOR;
	if (st & ST_IDENTIFIER)
		skip(&c, 8);
	if (st & ST_IP)
		ev->sample.ip = get64(&c);
	if (st & ST_TID) {
		ev->pid = get32(&c);
		ev->tid = get32(&c);
	}
	if (st & ST_TIME)
		skip(&c, 8);
	skip(&c, 8 * (uint64_t)__builtin_popcountll(st & (ST_ADDR | ST_ID | ST_STREAM_ID)));
	if (st & ST_CPU) {
		ev->sample.cpu = get32(&c);
		skip(&c, 4);
	}
	if (st & ST_PERIOD)
		ev->sample.period = get64(&c);
	if (st & ST_READ)
		skip(&c, read_format_size(a, &c));
	if (st & ST_CALLCHAIN && !c.bad && parse_callchain(pd, &c, ev, misc))
		return -1;
	if (st & ST_RAW)
		skip(&c, get32(&c));
	if (st & ST_BRANCH_STACK) {
		uint64_t nr = get64(&c);
		uint64_t each = 24 + (a->branch_sample_type & BR_COUNTERS ? 8 : 0);

		if (a->branch_sample_type & BR_HW_INDEX)
			skip(&c, 8);
		if (!c.bad && nr > (c.end - c.off) / each)
			c.bad = true;
		skip(&c, nr * each);
	}
	if (st & ST_REGS_USER && get64(&c) && !c.bad) {
		uint64_t at = c.off;

		if (skip(&c, 8 * (uint64_t)a->nr_regs) && !pd->swap && a->nr_regs <= MAX_REGS) {
			for (unsigned i = 0; i < a->nr_regs; i++)
				pd->regs[i] = rd64(pd, at + 8 * i);
			ev->sample.regs.regs = pd->regs;
			ev->sample.regs.nr = a->nr_regs;
			ev->sample.regs.valid = true;
		}
	}
	if (st & ST_STACK_USER) {
		uint64_t n = get64(&c), at = c.off;

		if (n && skip(&c, n)) {
			uint64_t dyn = get64(&c);

			ev->sample.stack = pd->buf + at;
			ev->sample.stack_size = dyn < n ? dyn : n;
		}
	}
	if (c.bad)
		return bad(pd, off, "a sample of %u bytes is shorter than its sample_type 0x%llx needs",
			   size, (unsigned long long)st);
	return 1;
}

/* A NUL-terminated string from 'at' to the record's end, or NULL. */
static const char *rec_string(const struct pd *pd, uint64_t at, uint64_t end)
{
	if (at >= end || !memchr(pd->buf + at, '\0', end - at))
		return NULL;
	return (const char *)pd->buf + at;
}

/* Parse the record at r into ev: 1 when it is an event, 0 to skip, -1 on error. */
static int parse_record(struct pd *pd, const struct pd_rec *r, struct sampler_event *ev)
{
	uint64_t off = r->off;
	uint32_t type = rd32(pd, off);
	uint16_t misc = rd16(pd, off + 4), size = rd16(pd, off + 6);
	uint64_t end = off + size, name_at;
	int64_t bi;

	memset(ev, 0, sizeof(*ev));
	ev->time = r->time;
	switch (type) {
	case REC_SAMPLE:
		return parse_sample(pd, off, size, misc, ev);
	case REC_MMAP:
	case REC_MMAP2:
		name_at = type == REC_MMAP ? 40 : 72;
		if (size <= name_at)
			return bad(pd, off, "a mapping record of %u bytes is too short", size);
		ev->type = SAMPLER_MMAP;
		ev->pid = rd32(pd, off + 8);
		ev->tid = rd32(pd, off + 12);
		ev->mmap.start = rd64(pd, off + 16);
		ev->mmap.len = rd64(pd, off + 24);
		ev->mmap.pgoff = rd64(pd, off + 32);
		ev->mmap.filename = rec_string(pd, off + name_at, end);
		if (!ev->mmap.filename)
			return bad(pd, off + name_at, "unterminated file name");
		if (ev->pid == UINT32_MAX)
			return 0;	/* the kernel and its modules: frames say so */
		if (type == REC_MMAP) {
			ev->mmap.prot = misc & MISC_MMAP_DATA ? 1 : 5;
		} else {
			ev->mmap.prot = rd32(pd, off + 64);
			ev->mmap.flags = rd32(pd, off + 68);
			if (misc & MISC_MMAP_BUILD_ID) {
				unsigned n = pd->buf[off + 40];

				ev->mmap.build_id = pd->buf + off + 44;
				ev->mmap.build_id_size = n < BUILD_ID_MAX ? n : BUILD_ID_MAX;
			}
		}
		if (!ev->mmap.build_id) {
			bi = strtab_intern(&pd->bid_names, ev->mmap.filename,
					 strlen(ev->mmap.filename));
			if (bi >= 0 && (size_t)bi < pd->alloc_bids && pd->bids[bi].size) {
				ev->mmap.build_id = pd->bids[bi].id;
				ev->mmap.build_id_size = pd->bids[bi].size;
			}
		}
		return 1;
	case REC_COMM:
		if (size <= 16)
			return bad(pd, off, "a comm record of %u bytes is too short", size);
		ev->type = SAMPLER_COMM;
		ev->pid = rd32(pd, off + 8);
		ev->tid = rd32(pd, off + 12);
		ev->comm.comm = rec_string(pd, off + 16, end);
		ev->comm.exec = misc & MISC_COMM_EXEC;
		if (!ev->comm.comm)
			return bad(pd, off + 16, "unterminated command name");
		if (ev->comm.exec && !pd->have_main) {
			pd->main_pid = ev->pid;
			pd->have_main = true;
		}
		return 1;
	case REC_FORK:
	case REC_EXIT:
		if (size < 32)
			return bad(pd, off, "a task record of %u bytes is too short", size);
		ev->type = type == REC_FORK ? SAMPLER_FORK : SAMPLER_EXIT;
		ev->pid = rd32(pd, off + 8);
		ev->task.ppid = rd32(pd, off + 12);
		ev->tid = rd32(pd, off + 16);
		ev->task.ptid = rd32(pd, off + 20);
		return 1;
	}
	return 0;
}

/* Give back the pages of the mapped file below 'off'. */
static void drop_behind(struct pd *pd, uint64_t off)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (!pd->mapped || off < pd->dropped + DROP_BYTES)
		return;
	off &= ~(page - 1);
	if (!madvise((void *)(pd->buf + pd->dropped), off - pd->dropped, MADV_DONTNEED))
		pd->dropped = off;
}

static int deliver_one(struct pd *pd, const struct pd_rec *r, struct recording *rec)
{
	struct sampler_event ev;
	int ret = parse_record(pd, r, &ev);

	if (ret <= 0)
		return ret;
	if (ev.type == SAMPLER_SAMPLE) {
		if (!pd->have_time)
			pd->first_time = ev.time;
		pd->last_time = ev.time;
		pd->have_time = true;
		if (!pd->have_main) {
			pd->main_pid = ev.pid;
			pd->have_main = true;
		}
	}
	return recording_event(&ev, rec) < 0 ? -1 : 0;
}

/*
 * The end of a round (or, 'all', of the file): deliver in time order what
 * is up to the previous round's last time, as perf does: a record of the
 * next round may still go before the latest of this one.
 */
static int flush_round(struct pd *pd, struct recording *rec, uint64_t read_to, bool all)
{
	size_t n = 0;

	if (pd->nr_recs)
		qsort(pd->recs, pd->nr_recs, sizeof(*pd->recs), rec_cmp);
	while (n < pd->nr_recs && (all || pd->recs[n].time <= pd->flush_to))
		if (deliver_one(pd, &pd->recs[n++], rec))
			return -1;
	if (n < pd->nr_recs)
		memmove(pd->recs, pd->recs + n, (pd->nr_recs - n) * sizeof(*pd->recs));
	pd->nr_recs -= n;
	pd->flush_to = pd->max_time;
	for (size_t i = 0; i < pd->nr_recs; i++)
		if (pd->recs[i].off < read_to)
			read_to = pd->recs[i].off;
	drop_behind(pd, read_to);
	return 0;
}

/*
 * Walk the data section's records. Without rec, check each, count the
 * samples of each event and what perf lost; with rec, deliver them round
 * by round, each with its time: a record without one (sample_id_all off)
 * takes the time of the record before it.
 */
static int walk_records(struct pd *pd, struct recording *rec)
{
	uint64_t off = pd->data_off, end = pd->data_end, last = 0;

	while (off < end) {
		uint32_t type;
		uint16_t size;
		uint64_t next, time = last;
		bool has;

		if (end - off < 8)
			return bad(pd, off, "truncated record header");
		type = rd32(pd, off);
		size = rd16(pd, off + 6);
		if (size < 8)
			return bad(pd, off + 6, "record size %u is too small", size);
		if (size > end - off)
			return bad(pd, off, "a record of %u bytes runs past the data section's end (%llu)",
				   size, (unsigned long long)end);
		next = off + size;
		switch (type) {
		case REC_COMPRESSED:
		case REC_COMPRESSED2:
			return error("cannot read '%s': compressed records (perf record -z) are not supported: record without -z, or decompress with 'perf inject -i %s -o perf.data'",
				     pd->what, pd->what);
		case REC_AUXTRACE:
			/* its trace data follows the record, outside its size */
			if (size >= 16) {
				uint64_t extra = rd64(pd, off + 8);
				if (extra > end - next)
					return bad(pd, off, "aux trace data of %llu bytes runs past the data section",
						   (unsigned long long)extra);
				next += extra;
			}
			break;
		case REC_LOST:
			if (size >= 24 && !rec)
				pd->lost += rd64(pd, off + 16);
			break;
		case REC_LOST_SAMPLES:
			if (size >= 16 && !rec)
				pd->lost += rd64(pd, off + 8);
			break;
		case REC_FINISHED_ROUND:
			if (rec && flush_round(pd, rec, off, false))
				return -1;
			break;
		case REC_SAMPLE:
		case REC_MMAP:
		case REC_MMAP2:
		case REC_COMM:
		case REC_FORK:
		case REC_EXIT:
			if (record_time(pd, off, type, size, &time, &has, !rec))
				return -1;
			if (has)
				last = time;
			if (!rec)
				break;
			if (time > pd->max_time)
				pd->max_time = time;
			ALLOC_GROW(pd->recs, pd->nr_recs + 1, pd->alloc_recs);
			pd->recs[pd->nr_recs++] = (struct pd_rec){ time, off };
			break;
		}
		off = next;
		if (!rec)
			drop_behind(pd, off);
	}
	return rec ? flush_round(pd, rec, off, true) : 0;
}

/* ---- the profile --------------------------------------------------------------- */

static void name_events(struct pd *pd)
{
	for (size_t i = 0; i < pd->nr_attrs; i++) {
		struct pd_attr *a = &pd->attrs[i];
		const char *known = event_name(a->type, a->config);

		if (!a->name)
			a->name = known ? xstrdup(known) :
				  xstrfmt("event-%u-0x%llx", a->type, (unsigned long long)a->config);
	}
}

static void warn_other_events(const struct pd *pd)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < pd->nr_attrs; i++)
		if (pd->attrs[i].samples && &pd->attrs[i] != pd->shown)
			strbuf_addf(&sb, "%s'%s'", sb.len ? ", " : "", pd->attrs[i].name);
	if (sb.len)
		warning("'%s' has samples of several events: only those of '%s' are read, not %s",
			pd->what, pd->shown->name, sb.buf);
	strbuf_release(&sb);
}

static void pd_release(struct pd *pd)
{
	for (size_t i = 0; i < pd->nr_attrs; i++)
		free(pd->attrs[i].name);
	free(pd->attrs);
	free(pd->ids);
	strtab_release(&pd->bid_names);
	free(pd->bids);
	free(pd->kernel_build_id);
	free(pd->cmdline);
	free(pd->hostname);
	free(pd->recs);
}

/* Decode the file pd->buf holds; what pd holds goes. */
static int decode(struct pd *pd, struct profile *p)
{
	const char *what = pd->what;
	struct recording *rec = NULL;
	struct recording_info info = { 0 };
	const struct pd_attr *a;
	char *event = NULL;
	uint64_t m;
	int ret = -1;

	strtab_init(&pd->bid_names);
	if (!perfdata_sniff(pd->buf, pd->len)) {
		error("cannot read '%s': not a perf.data file (bad magic)", what);
		goto out;
	}
	memcpy(&m, pd->buf, sizeof(m));
	pd->swap = m != PERF_MAGIC;
	if (read_header(pd) || read_features(pd) || walk_records(pd, NULL))
		goto out;
	name_events(pd);
	/* the first event with samples: perf adds tracking-only events too */
	pd->shown = &pd->attrs[0];
	for (size_t i = pd->nr_attrs; i-- > 0; )
		if (pd->attrs[i].samples)
			pd->shown = &pd->attrs[i];
	a = pd->shown;

	rec = recording_new((a->sample_type & ST_REGS_USER) && (a->sample_type & ST_STACK_USER) ?
			    SAMPLER_CALLGRAPH_DWARF : SAMPLER_CALLGRAPH_FP,
			    pd->swap || !(a->sample_type & ST_REGS_USER) ? 0 : a->regs_user);
	recording_set_kernel_build_id(rec, pd->kernel_build_id);
	pd->dropped = 0;	/* the second walk maps them again */
	if (walk_records(pd, rec))
		goto out;
	if (pd->have_main)
		recording_set_main(rec, (pid_t)pd->main_pid);
	warn_other_events(pd);
	if (pd->lost)
		warning("'%s': perf lost %llu samples while recording; the profile undercounts",
			what, (unsigned long long)pd->lost);

	event = xstrndup(a->name, strcspn(a->name, ":"));	/* no modifiers */
	info.event = event;
	info.period_is_time = a->type == 1 && a->config <= 1;
	info.freq = a->flags & AF_FREQ && a->sample_period <= UINT32_MAX ?
		    (unsigned)a->sample_period : 0;
	info.duration_nanos = pd->have_time ? (int64_t)((pd->last_time - pd->first_time) & INT64_MAX) : 0;
	info.command = pd->cmdline;
	if (recording_build(rec, p, &info))
		goto out;
	if (info.period_is_time && !info.freq)
		p->period = (int64_t)(a->sample_period & INT64_MAX);
	if (pd->hostname && *pd->hostname) {
		char *c = xstrfmt("host: %s", pd->hostname);

		profile_add_comment(p, c);
		free(c);
	}
	ret = 0;
out:
	free(event);
	recording_free(rec);
	pd_release(pd);
	return ret;
}

int perfdata_decode(struct profile *p, const void *data, size_t len, const char *what)
{
	struct pd pd = { .buf = data, .len = len, .what = what };

	return decode(&pd, p);
}

int perfdata_read_fd(struct profile *p, int fd, const char *what)
{
	struct pd pd = { .what = what, .mapped = true };
	struct stat st;
	void *map;
	int ret;

	if (fstat(fd, &st))
		return error("cannot read '%s': %s", what, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX)
		return error("cannot read '%s': not a regular file", what);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return error("cannot map '%s': %s", what, strerror(errno));
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	pd.buf = map;
	pd.len = (size_t)st.st_size;
	ret = decode(&pd, p);
	munmap(map, (size_t)st.st_size);
	return ret;
}
