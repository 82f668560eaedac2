/*
 * fuzz-perfdata.c: libFuzzer target for the perf.data reader. Every input
 * goes through perfdata_decode(): it either builds a profile that
 * validates, or fails with an error; then through perfdata_read_fd() on a
 * file holding it (the mapped reader), which must give the same stacks or
 * the same error. A crash, a sanitizer report, a leak or a hang is a bug.
 * Seeds: tests/data/perfdata/ (small real files) and tests/data/perfdata-bad/.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"
#include "strbuf.h"
#include "profile.h"
#include "folded.h"
#include "perfdata.h"

static struct strbuf last = STRBUF_INIT;

static void keep(const char *prefix, const char *msg)
{
	(void)prefix;
	strbuf_reset(&last);
	strbuf_addstr(&last, msg);
}

static void quiet(const char *prefix, const char *msg)
{
	(void)prefix;
	(void)msg;
}

/* Every sample type's folded stacks, or the error. */
static void outcome(int ret, struct profile *p, struct strbuf *out)
{
	if (ret) {
		strbuf_addf(out, "error: %s", last.buf);
		return;
	}
	for (size_t i = 0; i < p->nr_sample_type; i++)
		if (folded_write(p, (int)i, out))
			BUG("folded_write failed on a decoded profile");
}

/* The same input read from a file, mapped. */
static void mapped(const uint8_t *data, size_t size, struct strbuf *out)
{
	int fd = memfd_create("fuzz", 0);
	struct profile p;

	if (fd < 0 || write_full(fd, data, size)) {
		if (fd >= 0)
			close(fd);
		strbuf_addstr(out, "skip");
		return;
	}
	profile_init(&p);
	outcome(perfdata_read_fd(&p, fd, "fuzz"), &p, out);
	profile_release(&p);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf whole = STRBUF_INIT, map = STRBUF_INIT;
	struct profile p;
	int ret;

	set_error_routine(keep);
	set_warn_routine(quiet);
	profile_init(&p);
	ret = perfdata_decode(&p, data, size, "fuzz");
	if (!ret && profile_validate(&p))
		BUG("perfdata_decode returned a profile that does not validate");
	outcome(ret, &p, &whole);
	profile_release(&p);
	if (size) {
		mapped(data, size, &map);
		if (strcmp(map.buf, "skip") && strcmp(map.buf, whole.buf))
			BUG("read mapped, the file gives another profile");
	}
	strbuf_release(&whole);
	strbuf_release(&map);
	return 0;
}
