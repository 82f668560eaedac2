/*
 * fuzz-loadgen.c: libFuzzer target for what the load generator reads from
 * outside: a server's HTTP reply (the first byte picks whether the
 * connection has ended), a request file, and a histogram's compact form.
 * A reply is whole, incomplete or malformed, never read past its bytes; a
 * parsed histogram writes back as itself.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "strbuf.h"
#include "histogram.h"
#include "loadgen.h"

static void quiet(const char *prefix, const char *msg)
{
	(void)prefix;
	(void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_reply r;
	struct strbuf *reqs = NULL, text = STRBUF_INIT, back = STRBUF_INIT;
	size_t nr = 0, alloc = 0;
	struct histogram h;
	char *copy;
	int ret;

	set_error_routine(quiet);
	set_warn_routine(quiet);
	if (!size)
		return 0;
	/* an exact-size copy, so ASan sees a read past the reply */
	copy = malloc(size - 1 ? size - 1 : 1);
	memcpy(copy, data + 1, size - 1);
	ret = loadgen_http_reply(copy, size - 1, data[0] & 1, &r);
	if (ret == 1 && (r.len > size - 1 || r.head_len > r.len || r.status < 200 || r.status > 599))
		BUG("a whole reply of %zu bytes (head %zu, status %d) in %zu", r.len, r.head_len, r.status, size - 1);
	if (ret < -1 || ret > 1)
		BUG("loadgen_http_reply returned %d", ret);
	if (!loadgen_split_requests(copy, size - 1, &reqs, &nr, &alloc) && !nr)
		BUG("a request file without requests parsed");
	for (size_t i = 0; i < nr; i++)
		strbuf_release(&reqs[i]);
	free(reqs);
	strbuf_add(&text, copy, size - 1);
	histogram_init(&h);
	if (!histogram_parse(&h, text.buf) && strlen(text.buf) == text.len) {
		histogram_serialize(&h, &back);
		/* the same slots and counts; leading zeros of a number may differ */
		struct histogram again;

		histogram_init(&again);
		if (histogram_parse(&again, back.buf) ||
		    memcmp(again.counts, h.counts, HIST_COUNTS * sizeof(*h.counts)))
			BUG("a parsed histogram does not read back as itself");
		histogram_release(&again);
	}
	histogram_release(&h);
	strbuf_release(&text);
	strbuf_release(&back);
	free(copy);
	return 0;
}
