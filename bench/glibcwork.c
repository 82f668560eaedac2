/*
 * glibcwork: a program that spends its time in glibc, for bench/collapse's
 * second recording: qsort() with a comparator that formats both records
 * with snprintf(), malloc()/free() of many small blocks, and fprintf() to
 * /dev/null. Its `perf record -g` stacks run through libc's sort, stdio and
 * allocator, unlike the compiler's. argv[1] is the seconds to run (1 by
 * default); it prints a checksum that proves the work was done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NRECORDS 4000
#define NBLOCKS 4096

struct record {
	char region[8];
	char name[24];
	unsigned id;
};

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static int by_label(const void *a, const void *b)
{
	const struct record *ra = a, *rb = b;
	char ka[48], kb[48];

	snprintf(ka, sizeof(ka), "%s:%s", ra->region, ra->name);
	snprintf(kb, sizeof(kb), "%s:%s", rb->region, rb->name);
	return strcmp(ka, kb);
}

__attribute__((noinline)) static void fill(struct record *recs, unsigned long *seed)
{
	static const char *const regions[] = { "north", "south", "east", "west", "centre" };
	unsigned long x = *seed;

	for (size_t i = 0; i < NRECORDS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		snprintf(recs[i].region, sizeof(recs[i].region), "%s", regions[x % 5]);
		snprintf(recs[i].name, sizeof(recs[i].name), "n%lu", (x >> 8) % 100000);
		recs[i].id = (unsigned)i;
	}
	*seed = x;
}

__attribute__((noinline)) static void churn(void **blocks, unsigned long *seed)
{
	unsigned long x = *seed;

	for (size_t i = 0; i < 8 * NBLOCKS; i++) {
		size_t k;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = x % NBLOCKS;
		free(blocks[k]);
		blocks[k] = malloc(16 + (x >> 20) % 512);
		if (blocks[k])
			memset(blocks[k], (int)i, 16);
	}
	*seed = x;
}

__attribute__((noinline)) static void report(FILE *out, const struct record *recs)
{
	for (size_t i = 0; i < NRECORDS; i += 4)
		fprintf(out, "%-8s %-24s %8u %12.3f\n", recs[i].region, recs[i].name,
			recs[i].id, recs[i].id / 7.0);
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
	struct record *recs = malloc(NRECORDS * sizeof(*recs));
	void **blocks = calloc(NBLOCKS, sizeof(*blocks));
	FILE *out = fopen("/dev/null", "w");
	unsigned long seed = 88172645463325252ul;

	if (!recs || !blocks || !out)
		return 1;
	while (now() < end) {
		fill(recs, &seed);
		qsort(recs, NRECORDS, sizeof(*recs), by_label);
		churn(blocks, &seed);
		report(out, recs);
		sink += recs[0].id;
	}
	for (size_t i = 0; i < NBLOCKS; i++)
		free(blocks[i]);
	free(blocks);
	free(recs);
	fclose(out);
	printf("checksum=%lu\n", sink);
	return 0;
}
