/* modulo: a histogram of hashed keys over a bucket count read from the
 * command line (argv[2], default 1021), as a hash table sized at run
 * time would do.
 * Root cause: hash % nbuckets with nbuckets known only at run time: a
 * 64-bit hardware divide for every key, tens of cycles each.
 * Hotspot #1: histogram_add.
 * Expected tag: division.
 * Fix: a power-of-two bucket count and a mask, or Lemire's reduction
 * ((hash * nbuckets) >> 64 on the 128-bit product). */
#include "workload.h"

#define NKEYS 4096

struct histogram {
	unsigned *counts;
	unsigned long nbuckets;
};

static unsigned long hash_key(unsigned long x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ul;
	return x ^ (x >> 27);
}

NOINLINE static void histogram_add(struct histogram *h, unsigned long key)
{
	h->counts[hash_key(key) % h->nbuckets]++;
}

NOINLINE static void count_keys(struct histogram *h, const unsigned long *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		histogram_add(h, keys[i]);
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	struct histogram h = { NULL, argc > 2 ? strtoul(argv[2], NULL, 10) : 1021 };
	unsigned long *keys = malloc(NKEYS * sizeof(*keys));

	if (!h.nbuckets || !keys || !(h.counts = calloc(h.nbuckets, sizeof(*h.counts))))
		return 2;
	for (size_t i = 0; i < NKEYS; i++)
		keys[i] = i * 2654435761ul;
	while (wl_now() < end) {
		count_keys(&h, keys, NKEYS);
		keys[wl_sink++ % NKEYS]++;
	}
	free(keys);
	free(h.counts);
	return 0;
}
