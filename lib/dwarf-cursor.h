/*
 * dwarf-cursor.h: a bounds-checked reader of DWARF section bytes, shared by
 * lib/dwarf-line.c and lib/dwarf-info.c. A cursor never reads past 'end':
 * a read that does not fit sets 'bad' and gives 0 (or ""), and every read
 * after that does too, so a parser checks 'bad' once where it is
 * convenient instead of after every number.
 */
#ifndef HOTLOOP_DWARF_CURSOR_H
#define HOTLOOP_DWARF_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct dwarf_cursor {
	const unsigned char *p, *end;
	bool big_endian;
	bool bad;
};

/* An n-byte (1 to 8) unsigned number in the file's byte order. */
static inline uint64_t dc_u(struct dwarf_cursor *c, size_t n)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* a little-endian file on a little-endian machine: one load, masked */
	if (!c->big_endian && (size_t)(c->end - c->p) >= 8 && n <= 8) {
		memcpy(&v, c->p, 8);
		if (n < 8)
			v &= ((uint64_t)1 << (8 * n)) - 1;
		c->p += n;
		return v;
	}
#endif
	if (c->big_endian) {
		for (size_t i = 0; i < n; i++)
			v = (v << 8) | c->p[i];
	} else {
		for (size_t i = n; i-- > 0;)
			v = (v << 8) | c->p[i];
	}
	c->p += n;
	return v;
}

/*
 * A LEB128 number's bits; *shift and *last tell the caller how many bits
 * were read and the last byte (for the sign). 0 on a number cut short.
 */
static inline uint64_t dc_leb(struct dwarf_cursor *c, unsigned *shift, unsigned char *last)
{
	uint64_t v = 0;

	*shift = 0;
	while (!c->bad) {
		unsigned char b;

		if (c->p >= c->end) {
			c->bad = true;
			break;
		}
		b = *c->p++;
		if (*shift < 64)
			v |= (uint64_t)(b & 0x7f) << *shift;
		*shift += 7;
		if (!(b & 0x80)) {
			*last = b;
			return v;
		}
	}
	*last = 0;
	return 0;
}

static inline uint64_t dc_uleb(struct dwarf_cursor *c)
{
	unsigned shift;
	unsigned char last;

	/* most numbers are one byte */
	if (!c->bad && c->p < c->end && !(*c->p & 0x80))
		return *c->p++;
	return dc_leb(c, &shift, &last);
}

static inline int64_t dc_sleb(struct dwarf_cursor *c)
{
	unsigned shift;
	unsigned char last;
	uint64_t v = dc_leb(c, &shift, &last);

	if (!c->bad && shift < 64 && (last & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

static inline void dc_skip(struct dwarf_cursor *c, uint64_t n)
{
	if (c->bad || (uint64_t)(c->end - c->p) < n)
		c->bad = true;
	else
		c->p += n;
}

/* A LEB128 number skipped. */
static inline void dc_skip_leb(struct dwarf_cursor *c)
{
	while (!c->bad) {
		if (c->p >= c->end) {
			c->bad = true;
			return;
		}
		if (!(*c->p++ & 0x80))
			return;
	}
}

/* A NUL-terminated string at the cursor. */
static inline const char *dc_str(struct dwarf_cursor *c)
{
	const unsigned char *nul;
	const char *s;

	if (c->bad || !(nul = memchr(c->p, 0, (size_t)(c->end - c->p)))) {
		c->bad = true;
		return "";
	}
	s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}

/* The NUL-terminated string at 'off' of a string section, NULL when there is none. */
static inline const char *dc_str_at(const unsigned char *sec, size_t size, uint64_t off)
{
	if (!sec || off >= size || !memchr(sec + off, 0, size - off))
		return NULL;
	return (const char *)sec + off;
}

#endif
