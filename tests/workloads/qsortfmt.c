/* qsortfmt: sorts customer records by "region:name" with qsort(); the
 * comparator formats both records into strings and compares those.
 * Root cause: snprintf() of two records in every comparison, called
 * O(n log n) times through qsort's callback.
 * Hotspot #1: compare_records (the time in snprintf and strcmp is
 * charged to it; qsort calls it, so it is also a callback).
 * Expected tag: formatting (and callback).
 * Fix: build each record's sort key once before sorting (or compare
 * the fields directly: strcmp on region, then on name). */
#include <stdio.h>
#include <string.h>
#include "workload.h"

#define NRECORDS 2000

struct record {
	char region[8];
	char name[24];
	unsigned id;
	double balance;
};

NOINLINE static int compare_records(const void *a, const void *b)
{
	const struct record *ra = a, *rb = b;
	char ka[48], kb[48];

	snprintf(ka, sizeof(ka), "%s:%s", ra->region, ra->name);
	snprintf(kb, sizeof(kb), "%s:%s", rb->region, rb->name);
	return strcmp(ka, kb);
}

NOINLINE static void sort_records(struct record *recs, size_t n)
{
	qsort(recs, n, sizeof(*recs), compare_records);
}

/* Fill recs with made-up customers, in a different order each time. */
NOINLINE static void load_records(struct record *recs, size_t n, unsigned long *seed)
{
	static const char *const regions[] = { "north", "south", "east", "west", "centre" };
	static const char *const names[] = {
		"alvarez", "baker", "chen", "dubois", "evans", "fischer",
		"garcia", "haddad", "ito", "jensen", "kowalski", "larsen",
	};
	unsigned long x = *seed;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		snprintf(recs[i].region, sizeof(recs[i].region), "%s", regions[x % 5]);
		snprintf(recs[i].name, sizeof(recs[i].name), "%s-%lu",
			 names[(x >> 8) % 12], (x >> 16) % 1000);
		recs[i].id = (unsigned)i;
		recs[i].balance = (double)(x % 100000) / 100;
	}
	*seed = x;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	struct record *recs = malloc(NRECORDS * sizeof(*recs));
	unsigned long seed = 88172645463325252ul;

	if (!recs)
		return 1;
	while (wl_now() < end) {
		load_records(recs, NRECORDS, &seed);
		sort_records(recs, NRECORDS);
		wl_sink += recs[0].id;
	}
	free(recs);
	return 0;
}
