/*
 * integrity-driver: the hotloop side of bench/integrity. Records the
 * repository of the hotloop.conf given (lib/integrity.c, as the loop does
 * at its start), then checks it REPEAT times as it is, and prints one line
 * per phase: "record SECONDS", "check SECONDS" (the best of the checks),
 * and the check's answer (0: unchanged).
 */
#include <stdio.h>
#include <stdlib.h>

#include "integrity.h"
#include "project.h"
#include "strbuf.h"
#include "util.h"

int main(int argc, char **argv)
{
	struct project p;
	struct integrity in = INTEGRITY_INIT;
	struct strbuf what = STRBUF_INIT;
	double best = -1;
	uint64_t t0;
	int repeat = argc > 2 ? atoi(argv[2]) : 3, ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: integrity-driver HOTLOOP.CONF [REPEAT]\n");
		return HL_EXIT_USAGE;
	}
	if (project_open(&p, argv[1], PROJECT_NEED_GIT))
		return HL_EXIT_FAILURE;
	t0 = now_ns();
	if (integrity_record(&in, &p, NULL, NULL))
		return HL_EXIT_FAILURE;
	printf("record %.4f\n", (double)(now_ns() - t0) / 1e9);
	for (int i = 0; i < repeat; i++) {
		double s;

		strbuf_reset(&what);
		t0 = now_ns();
		ret = integrity_check(&in, &what, 20);
		s = (double)(now_ns() - t0) / 1e9;
		if (best < 0 || s < best)
			best = s;
	}
	printf("check %.4f\nanswer %d\n%s", best, ret, what.buf);
	integrity_release(&in);
	project_release(&p);
	strbuf_release(&what);
	return ret ? HL_EXIT_FAILURE : 0;
}
