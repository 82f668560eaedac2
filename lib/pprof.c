/*
 * pprof.c: pprof encode/decode with protobuf-c and zlib. Decoding treats
 * the input as hostile: sizes are capped, every id and string index is
 * checked, and foreign ids are remapped to hotloop's dense ids.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "pprof.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;

/* ---- compression ------------------------------------------------------ */

int gunzip_maybe(struct strbuf *out, const void *data, size_t len, size_t cap,
		 const char *what)
{
	const unsigned char *d = data;
	z_stream zs;
	int ret;

	if (len < 2 || !(d[0] == 0x1f && d[1] == 0x8b)) {
		if (len > cap)
			return error("cannot read '%s': larger than %zu bytes", what, cap);
		strbuf_add(out, data, len);
		return 0;
	}
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return error("cannot inflate '%s': zlib init failed", what);
	zs.next_in = (unsigned char *)d;
	zs.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	for (;;) {
		strbuf_grow(out, len * 4 < 65536 ? 65536 : len * 4 > (1 << 24) ? (1 << 24) : len * 4);
		zs.next_out = (unsigned char *)out->buf + out->len;
		zs.avail_out = (uInt)(out->alloc - out->len - 1);
		ret = inflate(&zs, Z_NO_FLUSH);
		strbuf_setlen(out, out->alloc - 1 - zs.avail_out);
		if (ret == Z_STREAM_END) {
			/* concatenated gzip members are legal; inflate the next one */
			if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
				inflateReset(&zs);
				continue;
			}
			break;
		}
		if (ret == Z_BUF_ERROR && zs.avail_in == 0) {
			inflateEnd(&zs);
			return error("cannot read '%s': truncated gzip data", what);
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			inflateEnd(&zs);
			return error("cannot read '%s': corrupt gzip data (%s)", what,
				     zs.msg ? zs.msg : "inflate failed");
		}
		if (out->len > cap) {
			inflateEnd(&zs);
			return error("cannot read '%s': inflates to more than %zu bytes", what, cap);
		}
	}
	inflateEnd(&zs);
	return 0;
}

int gzip_bytes(struct strbuf *out, const void *data, size_t len)
{
	z_stream zs;
	int ret;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return error("cannot compress: zlib init failed");
	zs.next_in = (unsigned char *)data;
	zs.avail_in = (uInt)len;
	strbuf_grow(out, deflateBound(&zs, (uLong)len) + 1);
	zs.next_out = (unsigned char *)out->buf + out->len;
	zs.avail_out = (uInt)(out->alloc - out->len - 1);
	ret = deflate(&zs, Z_FINISH);
	if (ret != Z_STREAM_END) {
		deflateEnd(&zs);
		return error("cannot compress: deflate failed");
	}
	strbuf_setlen(out, out->alloc - 1 - zs.avail_out);
	deflateEnd(&zs);
	return 0;
}

/* ---- the wire format, field by field --------------------------------- */

static bool read_varint(const unsigned char **b, const unsigned char *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && *b < end; shift += 7) {
		unsigned char c = *(*b)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* One field: its number, wire type, all its bytes, and a length-delimited one's payload. */
struct pb_field {
	uint64_t number;
	unsigned wire;
	const unsigned char *start, *end;
	const unsigned char *data;	/* wire type 2 */
	size_t len;
};

/* The field at *b, *b moved past it; false when it is cut short or malformed. */
static bool next_field(const unsigned char **b, const unsigned char *end, struct pb_field *f)
{
	uint64_t tag, v;

	f->start = *b;
	if (!read_varint(b, end, &tag))
		return false;
	f->number = tag >> 3;
	f->wire = (unsigned)(tag & 7);
	switch (f->wire) {
	case 0:
		if (!read_varint(b, end, &v))
			return false;
		break;
	case 1:
	case 5:
		if (end - *b < (f->wire == 1 ? 8 : 4))
			return false;
		*b += f->wire == 1 ? 8 : 4;
		break;
	case 2:
		if (!read_varint(b, end, &v) || v > (uint64_t)(end - *b))
			return false;
		f->data = *b;
		f->len = (size_t)v;
		*b += v;
		break;
	default:
		return false;
	}
	f->end = *b;
	return true;
}

/* The fields of profile.proto's Profile: sample_type (1) ... doc_url (15). */
#define PPROF_LAST_FIELD 15
#define PPROF_SAMPLE_FIELD 2

bool pprof_sniff(const void *data, size_t len)
{
	const unsigned char *b = data, *end = b + len;
	struct pb_field f;

	if (!len)
		return false;
	while (b < end)
		if (!next_field(&b, end, &f) || f.number < 1 || f.number > PPROF_LAST_FIELD)
			return false;
	return true;
}

/* ---- decoding --------------------------------------------------------- */

/*
 * Foreign ids to ours. Producers usually number densely from 1; then a
 * direct table answers each lookup. Otherwise: sorted pairs, binary search.
 */
struct idpair {
	uint64_t from, to;
};

struct idmap {
	struct idpair *v;
	size_t n, alloc;
	uint64_t *direct;	/* direct[from] = to, when ids are dense */
	uint64_t ndirect;
};

static int cmp_idpair(const void *a, const void *b)
{
	const struct idpair *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

static void idmap_add(struct idmap *m, uint64_t from, uint64_t to)
{
	ALLOC_GROW(m->v, m->n + 1, m->alloc);
	m->v[m->n++] = (struct idpair){ from, to };
}

/* Sort, reject duplicate ids, and build the direct table when it pays. */
static int idmap_seal(struct idmap *m, const char *kind, const char *what)
{
	if (!m->n)
		return 0;
	qsort(m->v, m->n, sizeof(*m->v), cmp_idpair);
	for (size_t i = 1; i < m->n; i++)
		if (m->v[i].from == m->v[i - 1].from)
			return error("invalid profile '%s': duplicate %s id %llu", what, kind,
				     (unsigned long long)m->v[i].from);
	if (m->n && m->v[m->n - 1].from <= 2 * (uint64_t)m->n + 64) {
		m->ndirect = m->v[m->n - 1].from + 1;
		m->direct = xcalloc(m->ndirect, sizeof(*m->direct));
		for (size_t i = 0; i < m->n; i++)
			m->direct[m->v[i].from] = m->v[i].to;
	}
	return 0;
}

/* Our id for a foreign one; 0 when absent. */
static uint64_t idmap_get(const struct idmap *m, uint64_t from)
{
	size_t lo = 0, hi = m->n;

	if (m->direct)
		return from < m->ndirect ? m->direct[from] : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].from == from)
			return m->v[mid].to;
		if (m->v[mid].from < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static void idmap_release(struct idmap *m)
{
	free(m->v);
	free(m->direct);
	memset(m, 0, sizeof(*m));
}

struct decoder {
	struct profile *p;
	const char *what;
	const PbProfile *pb;
	int64_t *strmap;
	struct idmap maps, fns, locs;
	/* one sample's ids, labels and values on their way into p */
	uint64_t *sample_locs;
	struct pf_label *labels;
	int64_t *values;
	size_t alloc_sample_locs, alloc_labels;
};

/* Our string index for foreign index i, or -1 when out of range. */
static int64_t dstr(const struct decoder *d, int64_t i)
{
	if (i == 0)
		return 0;	/* "" even when a producer left the table empty */
	if (i < 0 || (uint64_t)i >= d->pb->n_string_table)
		return -1;
	return d->strmap[i];
}

#define CHECK_STR(dst, idx, whatfield) do { \
		(dst) = dstr(d, (idx)); \
		if ((dst) < 0) \
			return error("invalid profile '%s': %s refers to string %lld of %zu", \
				     d->what, whatfield, (long long)(idx), d->pb->n_string_table); \
	} while (0)

static int decode_tables(struct decoder *d)
{
	const PbProfile *pb = d->pb;
	struct profile *p = d->p;

	d->strmap = xmalloc((pb->n_string_table ? pb->n_string_table : 1) * sizeof(int64_t));
	for (size_t i = 0; i < pb->n_string_table; i++) {
		const char *s = pb->string_table[i] ? pb->string_table[i] : "";
		d->strmap[i] = profile_str(p, s);
	}
	if (pb->n_string_table && *pb->string_table[0])
		warning("profile '%s': string_table[0] is not empty", d->what);

	for (size_t i = 0; i < pb->n_sample_type; i++) {
		int64_t t, u;
		CHECK_STR(t, pb->sample_type[i]->type, "a sample type");
		CHECK_STR(u, pb->sample_type[i]->unit, "a sample type");
		ALLOC_GROW(p->sample_type, p->nr_sample_type + 1, p->alloc_sample_type);
		p->sample_type[p->nr_sample_type++] = (struct pf_value_type){ t, u };
	}

	for (size_t i = 0; i < pb->n_mapping; i++) {
		const PbMapping *pm = pb->mapping[i];
		struct pf_mapping m = {
			.start = pm->memory_start, .limit = pm->memory_limit,
			.offset = pm->file_offset,
			.has_functions = pm->has_functions, .has_filenames = pm->has_filenames,
			.has_line_numbers = pm->has_line_numbers,
			.has_inline_frames = pm->has_inline_frames,
		};
		if (!pm->id)
			return error("invalid profile '%s': mapping with id 0", d->what);
		CHECK_STR(m.filename, pm->filename, "a mapping");
		CHECK_STR(m.build_id, pm->build_id, "a mapping");
		idmap_add(&d->maps, pm->id, profile_add_mapping_idx(p, &m));
	}
	if (idmap_seal(&d->maps, "mapping", d->what))
		return -1;

	for (size_t i = 0; i < pb->n_function; i++) {
		const PbFunction *pf = pb->function[i];
		int64_t name, sys, file;
		if (!pf->id)
			return error("invalid profile '%s': function with id 0", d->what);
		CHECK_STR(name, pf->name, "a function");
		CHECK_STR(sys, pf->system_name, "a function");
		CHECK_STR(file, pf->filename, "a function");
		idmap_add(&d->fns, pf->id,
			  profile_add_function_idx(p, name, sys, file, pf->start_line));
	}
	if (idmap_seal(&d->fns, "function", d->what))
		return -1;
	return 0;
}

static int decode_locations(struct decoder *d)
{
	const PbProfile *pb = d->pb;
	struct pf_line *lines = NULL;
	size_t alloc = 0;
	int ret = 0;

	for (size_t i = 0; i < pb->n_location && !ret; i++) {
		const PbLocation *pl = pb->location[i];
		uint64_t mid = 0, id;

		if (!pl->id) {
			ret = error("invalid profile '%s': location with id 0", d->what);
			break;
		}
		if (pl->mapping_id && !(mid = idmap_get(&d->maps, pl->mapping_id))) {
			ret = error("invalid profile '%s': location %llu refers to missing mapping %llu",
				    d->what, (unsigned long long)pl->id,
				    (unsigned long long)pl->mapping_id);
			break;
		}
		ALLOC_GROW(lines, pl->n_line, alloc);
		for (size_t j = 0; j < pl->n_line; j++) {
			const PbLine *ln = pl->line[j];
			uint64_t fid = idmap_get(&d->fns, ln->function_id);
			if (!fid) {
				ret = error("invalid profile '%s': location %llu refers to missing function %llu",
					    d->what, (unsigned long long)pl->id,
					    (unsigned long long)ln->function_id);
				break;
			}
			lines[j] = (struct pf_line){ fid, ln->line, ln->column };
		}
		if (ret)
			break;
		id = profile_add_location(d->p, mid, pl->address, lines, pl->n_line);
		d->p->locations[id - 1].is_folded = pl->is_folded;
		idmap_add(&d->locs, pl->id, id);
	}
	free(lines);
	if (!ret)
		ret = idmap_seal(&d->locs, "location", d->what);
	return ret;
}

/* Sample i of the message. */
static int decode_sample(struct decoder *d, size_t i, const PbSample *ps)
{
	struct profile *p = d->p;

	if (ps->n_value != p->nr_sample_type)
		return error("invalid profile '%s': sample %zu has %zu values for %zu sample types",
			     d->what, i, ps->n_value, p->nr_sample_type);
	ALLOC_GROW(d->sample_locs, ps->n_location_id, d->alloc_sample_locs);
	for (size_t j = 0; j < ps->n_location_id; j++) {
		d->sample_locs[j] = idmap_get(&d->locs, ps->location_id[j]);
		if (!d->sample_locs[j])
			return error("invalid profile '%s': sample %zu refers to missing location %llu",
				     d->what, i, (unsigned long long)ps->location_id[j]);
	}
	ALLOC_GROW(d->labels, ps->n_label, d->alloc_labels);
	for (size_t j = 0; j < ps->n_label; j++) {
		const PbLabel *pl = ps->label[j];
		struct pf_label *l = &d->labels[j];
		if ((l->key = dstr(d, pl->key)) < 0 || (l->str = dstr(d, pl->str)) < 0 ||
		    (l->num_unit = dstr(d, pl->num_unit)) < 0)
			return error("invalid profile '%s': sample %zu has a label naming a missing string",
				     d->what, i);
		l->num = pl->num;
	}
	if (!d->values)
		d->values = xcalloc(p->nr_sample_type + 1, sizeof(*d->values));
	if (ps->n_value)
		memcpy(d->values, ps->value, ps->n_value * sizeof(*d->values));
	profile_add_sample(p, d->sample_locs, ps->n_location_id, d->values, d->labels, ps->n_label);
	return 0;
}

/* The samples of the unpacked message. */
static int decode_samples(struct decoder *d)
{
	for (size_t i = 0; i < d->pb->n_sample; i++)
		if (decode_sample(d, i, d->pb->sample[i]))
			return -1;
	return 0;
}

/*
 * Samples are most of a large profile, and unpacked all at once they take
 * several times their encoded size. So the message is split: its other
 * fields are copied to *rest and unpacked as a whole, its samples unpacked
 * one at a time from where they lie (decode_sample_fields()). Counts the
 * samples and their location ids, for profile_reserve_samples(). False
 * when the message is malformed: unpacking it whole then says so.
 */
static bool split_samples(const unsigned char *b, size_t len, struct strbuf *rest,
			  size_t *nsamples, size_t *nlocs)
{
	const unsigned char *end = b + len;
	struct pb_field f, g;

	*nsamples = *nlocs = 0;
	while (b < end) {
		if (!next_field(&b, end, &f))
			return false;
		if (f.number != PPROF_SAMPLE_FIELD || f.wire != 2) {
			strbuf_add(rest, f.start, (size_t)(f.end - f.start));
			continue;
		}
		++*nsamples;
		/* location_id (1): packed, one byte below 0x80 ends each id; or one per field */
		for (const unsigned char *s = f.data, *send = s + f.len; s < send && next_field(&s, send, &g);) {
			if (g.number == 1 && g.wire == 2)
				for (size_t k = 0; k < g.len; k++)
					*nlocs += g.data[k] < 0x80;
			else if (g.number == 1 && g.wire == 0)
				++*nlocs;
		}
	}
	return true;
}

static int decode_sample_fields(struct decoder *d, const unsigned char *b, size_t len)
{
	const unsigned char *end = b + len;
	struct pb_field f;
	size_t i = 0;

	while (b < end && next_field(&b, end, &f)) {
		PbSample *ps;
		int ret;

		if (f.number != PPROF_SAMPLE_FIELD || f.wire != 2)
			continue;
		ps = perftools__profiles__sample__unpack(NULL, f.len, f.data);
		if (!ps)
			return error("cannot read '%s': not a pprof profile (protobuf decoding failed)", d->what);
		ret = decode_sample(d, i++, ps);
		perftools__profiles__sample__free_unpacked(ps, NULL);
		if (ret)
			return -1;
	}
	return 0;
}

static int decode_header(struct decoder *d)
{
	const PbProfile *pb = d->pb;
	struct profile *p = d->p;

	CHECK_STR(p->drop_frames, pb->drop_frames, "drop_frames");
	CHECK_STR(p->keep_frames, pb->keep_frames, "keep_frames");
	p->time_nanos = pb->time_nanos;
	p->duration_nanos = pb->duration_nanos;
	p->period = pb->period;
	if (pb->period_type) {
		CHECK_STR(p->period_type.type, pb->period_type->type, "period_type");
		CHECK_STR(p->period_type.unit, pb->period_type->unit, "period_type");
	}
	CHECK_STR(p->default_sample_type, pb->default_sample_type, "default_sample_type");
	for (size_t i = 0; i < pb->n_comment; i++) {
		int64_t c;
		CHECK_STR(c, pb->comment[i], "a comment");
		ALLOC_GROW(p->comments, p->nr_comments + 1, p->alloc_comments);
		p->comments[p->nr_comments++] = c;
	}
	return 0;
}

int pprof_decode(struct profile *p, const void *data, size_t len, const char *what)
{
	struct strbuf raw = STRBUF_INIT, rest = STRBUF_INIT;
	struct decoder d = { .p = p, .what = what };
	const unsigned char *msg = data;
	size_t nsamples, nlocs;
	PbProfile *pb = NULL;
	bool split;
	int ret = -1;

	if (!len) {
		error("cannot read '%s': the file is empty", what);
		goto out;
	}
	if (len >= 2 && msg[0] == 0x1f && msg[1] == 0x8b) {
		if (gunzip_maybe(&raw, data, len, PPROF_MAX_BYTES, what))
			goto out;
		msg = (const unsigned char *)raw.buf;
		len = raw.len;
	} else if (len > PPROF_MAX_BYTES) {
		error("cannot read '%s': larger than %zu bytes", what, PPROF_MAX_BYTES);
		goto out;
	}
	split = split_samples(msg, len, &rest, &nsamples, &nlocs);
	pb = split ? perftools__profiles__profile__unpack(NULL, rest.len, (const uint8_t *)rest.buf)
		   : perftools__profiles__profile__unpack(NULL, len, msg);
	strbuf_release(&rest);
	if (!pb) {
		error("cannot read '%s': not a pprof profile (protobuf decoding failed)", what);
		goto out;
	}
	d.pb = pb;
	if (decode_tables(&d) || decode_locations(&d))
		goto out;
	if (split) {
		profile_reserve_samples(p, nsamples, nlocs);
		if (decode_sample_fields(&d, msg, len))
			goto out;
	} else if (decode_samples(&d)) {
		goto out;
	}
	if (decode_header(&d) || profile_validate(p))
		goto out;
	ret = 0;
out:
	if (pb)
		perftools__profiles__profile__free_unpacked(pb, NULL);
	free(d.sample_locs);
	free(d.labels);
	free(d.values);
	free(d.strmap);
	idmap_release(&d.maps);
	idmap_release(&d.fns);
	idmap_release(&d.locs);
	strbuf_release(&raw);
	if (ret)
		profile_clear(p);
	return ret;
}

int pprof_read_file(struct profile *p, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	if (read_file(&sb, path, PPROF_MAX_BYTES)) {
		strbuf_release(&sb);
		return -1;
	}
	ret = pprof_decode(p, sb.buf, sb.len, path);
	strbuf_release(&sb);
	return ret;
}

/* ---- encoding --------------------------------------------------------- */

int pprof_encode(const struct profile *p, struct strbuf *out)
{
	PbProfile pb = PERFTOOLS__PROFILES__PROFILE__INIT;
	PbValueType *vt = xcalloc(p->nr_sample_type + 1, sizeof(*vt));
	PbValueType **vtp = xcalloc(p->nr_sample_type + 1, sizeof(*vtp));
	PbValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	PbSample *smp = xcalloc(p->nr_samples + 1, sizeof(*smp));
	PbSample **smpp = xcalloc(p->nr_samples + 1, sizeof(*smpp));
	PbLabel *lab = xcalloc(p->nr_labels + 1, sizeof(*lab));
	PbLabel **labp = xcalloc(p->nr_labels + 1, sizeof(*labp));
	PbMapping *map = xcalloc(p->nr_mappings + 1, sizeof(*map));
	PbMapping **mapp = xcalloc(p->nr_mappings + 1, sizeof(*mapp));
	PbLocation *loc = xcalloc(p->nr_locations + 1, sizeof(*loc));
	PbLocation **locp = xcalloc(p->nr_locations + 1, sizeof(*locp));
	PbLine *line = xcalloc(p->nr_lines + 1, sizeof(*line));
	PbLine **linep = xcalloc(p->nr_lines + 1, sizeof(*linep));
	PbFunction *fn = xcalloc(p->nr_functions + 1, sizeof(*fn));
	PbFunction **fnp = xcalloc(p->nr_functions + 1, sizeof(*fnp));
	struct strbuf raw = STRBUF_INIT;
	size_t packed;
	int ret;

	for (size_t i = 0; i < p->nr_sample_type; i++) {
		perftools__profiles__value_type__init(&vt[i]);
		vt[i].type = p->sample_type[i].type;
		vt[i].unit = p->sample_type[i].unit;
		vtp[i] = &vt[i];
	}
	pb.n_sample_type = p->nr_sample_type;
	pb.sample_type = vtp;

	for (size_t i = 0; i < p->nr_labels; i++) {
		perftools__profiles__label__init(&lab[i]);
		lab[i].key = p->labels[i].key;
		lab[i].str = p->labels[i].str;
		lab[i].num = p->labels[i].num;
		lab[i].num_unit = p->labels[i].num_unit;
		labp[i] = &lab[i];
	}
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct pf_sample *s = &p->samples[i];
		perftools__profiles__sample__init(&smp[i]);
		smp[i].n_location_id = s->nloc;
		smp[i].location_id = (uint64_t *)profile_sample_locs(p, s);
		smp[i].n_value = p->nr_sample_type;
		smp[i].value = (int64_t *)profile_sample_values(p, s);
		smp[i].n_label = s->nlabel;
		smp[i].label = labp + s->label_off;
		smpp[i] = &smp[i];
	}
	pb.n_sample = p->nr_samples;
	pb.sample = smpp;

	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct pf_mapping *m = &p->mappings[i];
		perftools__profiles__mapping__init(&map[i]);
		map[i].id = m->id;
		map[i].memory_start = m->start;
		map[i].memory_limit = m->limit;
		map[i].file_offset = m->offset;
		map[i].filename = m->filename;
		map[i].build_id = m->build_id;
		map[i].has_functions = m->has_functions;
		map[i].has_filenames = m->has_filenames;
		map[i].has_line_numbers = m->has_line_numbers;
		map[i].has_inline_frames = m->has_inline_frames;
		mapp[i] = &map[i];
	}
	pb.n_mapping = p->nr_mappings;
	pb.mapping = mapp;

	for (size_t i = 0; i < p->nr_lines; i++) {
		perftools__profiles__line__init(&line[i]);
		line[i].function_id = p->lines[i].function_id;
		line[i].line = p->lines[i].line;
		line[i].column = p->lines[i].column;
		linep[i] = &line[i];
	}
	for (size_t i = 0; i < p->nr_locations; i++) {
		const struct pf_location *l = &p->locations[i];
		perftools__profiles__location__init(&loc[i]);
		loc[i].id = l->id;
		loc[i].mapping_id = l->mapping_id;
		loc[i].address = l->address;
		loc[i].n_line = l->nline;
		loc[i].line = linep + l->line_off;
		loc[i].is_folded = l->is_folded;
		locp[i] = &loc[i];
	}
	pb.n_location = p->nr_locations;
	pb.location = locp;

	for (size_t i = 0; i < p->nr_functions; i++) {
		const struct pf_function *f = &p->functions[i];
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = f->id;
		fn[i].name = f->name;
		fn[i].system_name = f->system_name;
		fn[i].filename = f->filename;
		fn[i].start_line = f->start_line;
		fnp[i] = &fn[i];
	}
	pb.n_function = p->nr_functions;
	pb.function = fnp;

	pb.n_string_table = p->strings.nr;
	pb.string_table = (char **)p->strings.str;
	pb.drop_frames = p->drop_frames;
	pb.keep_frames = p->keep_frames;
	pb.time_nanos = p->time_nanos;
	pb.duration_nanos = p->duration_nanos;
	period_type.type = p->period_type.type;
	period_type.unit = p->period_type.unit;
	pb.period_type = &period_type;
	pb.period = p->period;
	pb.n_comment = p->nr_comments;
	pb.comment = p->comments;
	pb.default_sample_type = p->default_sample_type;

	packed = perftools__profiles__profile__get_packed_size(&pb);
	strbuf_grow(&raw, packed);
	perftools__profiles__profile__pack(&pb, (uint8_t *)raw.buf);
	strbuf_setlen(&raw, packed);
	ret = gzip_bytes(out, raw.buf, raw.len);

	strbuf_release(&raw);
	free(vt); free(vtp); free(smp); free(smpp); free(lab); free(labp);
	free(map); free(mapp); free(loc); free(locp); free(line); free(linep);
	free(fn); free(fnp);
	return ret;
}

int pprof_write_file(const struct profile *p, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	ret = pprof_encode(p, &sb);
	if (!ret)
		ret = write_file_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	return ret;
}
