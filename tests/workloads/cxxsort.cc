// cxxsort: sorts part numbers with std::sort; the comparator renders both
// parts through a std::ostringstream and compares the strings.
// Root cause: an ostringstream (libstdc++, built without frame pointers)
// per comparison, O(n log n) times under std::sort.
// Hotspot #1: part_less (the time in libstdc++ is charged to it).
// Fix: compare the fields (or build each key once before sorting).
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>
#include "workload.h"

struct part {
	unsigned family, serial;
};

NOINLINE static bool part_less(const part &a, const part &b)
{
	std::ostringstream ka, kb;

	ka << a.family << '-' << a.serial;
	kb << b.family << '-' << b.serial;
	return ka.str() < kb.str();
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	std::vector<part> parts(1500);
	unsigned long rounds = 0, seed = 7;

	while (wl_now() < end) {
		for (auto &p : parts) {
			seed = seed * 6364136223846793005ul + 1442695040888963407ul;
			p = { (unsigned)(seed >> 40) % 97, (unsigned)(seed >> 20) % 100000 };
		}
		std::sort(parts.begin(), parts.end(), part_less);
		rounds++;
	}
	std::printf("%lu %u\n", rounds, parts[0].serial);
	return 0;
}
