/*
 * json.c: jansson helpers (see json.h).
 */
#include <jansson.h>

#include "util.h"
#include "strbuf.h"
#include "json.h"

json_t *json_text(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j;

	if (!s)
		return json_null();
	if ((j = json_string(s)))
		return j;
	while (*s) {
		size_t len;

		if (utf8_decode((const unsigned char *)s, &len) < 0)
			strbuf_addstr(&sb, "\xef\xbf\xbd");
		else
			strbuf_add(&sb, s, len);
		s += len;
	}
	j = json_string(sb.buf);
	strbuf_release(&sb);
	return j ? j : json_null();
}
