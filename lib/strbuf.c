/*
 * strbuf.c: the growable string buffer (see strbuf.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strbuf.h"

char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = sb->len = 0;
	sb->buf = strbuf_slopbuf;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *res;

	strbuf_grow(sb, 0);
	res = sb->buf;
	if (len)
		*len = sb->len;
	strbuf_init(sb, 0);
	return res;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	int fresh = !sb->alloc;

	if (sb->len + extra + 1 <= sb->len)
		BUG("strbuf size overflow");
	if (fresh)
		sb->buf = NULL;
	ALLOC_GROW(sb->buf, sb->len + extra + 1, sb->alloc);
	if (fresh)
		sb->buf[0] = '\0';
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (len > (sb->alloc ? sb->alloc - 1 : 0))
		BUG("strbuf_setlen() beyond buffer");
	sb->len = len;
	if (sb->buf != strbuf_slopbuf)
		sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (!len)
		return;
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	strbuf_setlen(sb, sb->len + len);
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len] = (char)c;
	strbuf_setlen(sb, sb->len + 1);
}

void strbuf_addchars(struct strbuf *sb, int c, size_t n)
{
	strbuf_grow(sb, n);
	memset(sb->buf + sb->len, c, n);
	strbuf_setlen(sb, sb->len + n);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int len;

	if (!sb->alloc)
		strbuf_grow(sb, 64);
	va_copy(cp, ap);
	len = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
	va_end(cp);
	if (len < 0)
		BUG("vsnprintf failed");
	if ((size_t)len >= sb->alloc - sb->len) {
		strbuf_grow(sb, (size_t)len);
		len = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	strbuf_setlen(sb, sb->len + (size_t)len);
}

int strbuf_read_fd(struct strbuf *sb, int fd, size_t cap)
{
	for (;;) {
		ssize_t n;

		strbuf_grow(sb, 65536);
		n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		strbuf_setlen(sb, sb->len + (size_t)n);
		if (sb->len > cap) {
			errno = EFBIG;
			return -1;
		}
	}
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

int32_t utf8_decode(const unsigned char *s, size_t *len)
{
	return utf8_decode_n(s, SIZE_MAX, len);
}

int32_t utf8_decode_n(const unsigned char *s, size_t avail, size_t *len)
{
	uint32_t cp, min;
	size_t n;

	if (s[0] < 0x80) {
		*len = 1;
		return s[0];
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		*len = 1;
		return -1;
	}
	for (size_t i = 1; i < n; i++) {
		if (i >= avail || (s[i] & 0xc0) != 0x80) {	/* also stops at a NUL */
			*len = 1;
			return -1;
		}
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	*len = n;
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		*len = 1;
		return -1;
	}
	return (int32_t)cp;
}

size_t utf8_strlen(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = 0, len;

	for (; *s; s += len, n++)
		utf8_decode(s, &len);
	return n;
}

/*
 * Append at most max characters of str as XML character data: markup
 * escaped, control characters shown as '?', invalid UTF-8 and code points
 * XML forbids as U+FFFD. Names come from outside; the SVG must stay valid.
 */
void strbuf_add_xml(struct strbuf *sb, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len;

	for (size_t n = 0; *s && n < max; s += len, n++) {
		int32_t cp = utf8_decode(s, &len);

		switch (cp) {
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&#39;"); break;
		default:
			if (cp < 0 || cp == 0xfffe || cp == 0xffff)
				strbuf_addstr(sb, "\xef\xbf\xbd");
			else if (cp < 0x20 && cp != '\t')
				strbuf_addch(sb, '?');
			else
				strbuf_add(sb, s, len);
		}
	}
}

void strbuf_addstr_xml(struct strbuf *sb, const char *s)
{
	strbuf_add_xml(sb, s, SIZE_MAX);
}

void strbuf_rtrim(struct strbuf *sb)
{
	while (sb->len && (sb->buf[sb->len - 1] == ' ' || sb->buf[sb->len - 1] == '\n' ||
			   sb->buf[sb->len - 1] == '\t' || sb->buf[sb->len - 1] == '\r'))
		sb->len--;
	if (sb->alloc)
		sb->buf[sb->len] = '\0';
}

void strbuf_add_printable(struct strbuf *sb, const char *s, size_t len, size_t max, bool lines)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t added = 0, n;

	while (p < end && *p) {
		int32_t c = utf8_decode_n(p, (size_t)(end - p), &n);
		size_t width;

		width = c < 0 ? 3 : (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) ? 1 : n;
		if (added + width > max)
			break;
		if (c < 0)
			strbuf_addstr(sb, "\xef\xbf\xbd");
		else if (lines && (c == '\n' || c == '\t'))
			strbuf_addch(sb, (char)c);
		else if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0))
			strbuf_addch(sb, '?');
		else
			strbuf_add(sb, p, n);
		added += width;
		p += n;
	}
}
