/* hash.c: the code this project owns */
#include <stddef.h>
#include <stdint.h>

uint32_t hash(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}
