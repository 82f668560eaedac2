/*
 * cxxheap: a C++ index of std::string keys and values in a std::map, built
 * by build_index: its allocations reach malloc through libstdc++ (operator
 * new, std::string, the map's nodes), which keeps no frame pointers.
 */
#include <cstdio>
#include <map>
#include <string>
#include "workload.h"

NOINLINE static size_t build_index(int n)
{
	std::map<std::string, std::string> index;

	for (int i = 0; i < n; i++) {
		std::string key = "key-with-a-long-prefix-" + std::to_string(i);
		index[key] = "value-that-does-not-fit-inline-" + std::to_string(i * 7);
	}
	size_t total = 0;
	for (const auto &kv : index)
		total += kv.first.size() + kv.second.size();
	return total;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;

	alarm(60);
	std::printf("%zu\n", build_index(n > 0 ? n : 20000));
	return 0;
}
