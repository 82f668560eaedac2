/*
 * strbuf.h: a growable, always NUL-terminated byte buffer. A struct strbuf
 * owns its buf; strbuf_detach() hands it to the caller. buf is never NULL,
 * so a STRBUF_INIT buffer can be printed and released without checks.
 */
#ifndef HOTLOOP_STRBUF_H
#define HOTLOOP_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util.h"

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { 0, 0, strbuf_slopbuf }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_setlen(struct strbuf *sb, size_t len);
#define strbuf_reset(sb) strbuf_setlen((sb), 0)

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addchars(struct strbuf *sb, int c, size_t n);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) ATTR_PRINTF(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/*
 * Append all that fd holds, at most 'cap' bytes of it: 0, or -1 with
 * errno set (EFBIG past the cap). Quiet: the caller says what failed.
 */
int strbuf_read_fd(struct strbuf *sb, int fd, size_t cap);
/*
 * Append at most 'max' characters of 's' as XML character data: markup
 * escaped, control characters as '?', invalid UTF-8 and code points XML
 * forbids as U+FFFD, so text from outside cannot break a document.
 */
void strbuf_add_xml(struct strbuf *sb, const char *s, size_t max);
void strbuf_addstr_xml(struct strbuf *sb, const char *s);

/*
 * Append at most 'max' bytes of s[0..len) as text safe for a terminal and
 * a document, cut at a character: control characters (C0, DEL, C1) as
 * '?' (newlines and tabs kept when 'lines'), invalid UTF-8 as U+FFFD.
 * For text from outside that hotloop prints: an agent's output, its
 * proposal, a parser's quote of hostile bytes.
 */
void strbuf_add_printable(struct strbuf *sb, const char *s, size_t len, size_t max, bool lines);

/*
 * One UTF-8 character at s: its code point, or -1 (one byte) when invalid.
 * utf8_decode() reads a NUL-terminated string; utf8_decode_n() reads at
 * most 'avail' bytes (at least one), so a character cut by the end of a
 * buffer is invalid, not read past.
 */
int32_t utf8_decode(const unsigned char *s, size_t *len);
int32_t utf8_decode_n(const unsigned char *s, size_t avail, size_t *len);
/* Number of characters in s, an invalid byte counting as one. */
size_t utf8_strlen(const char *s);
void strbuf_rtrim(struct strbuf *sb);

#endif
