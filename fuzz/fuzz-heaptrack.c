/*
 * fuzz-heaptrack.c: libFuzzer target for the heaptrack data file reader
 * (what every input must give: heap-reader.h).
 */
#include "heaptrack.h"
#include "heap-reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)heaptrack_sniff(data, size);
	return fuzz_heap_reader("heaptrack_parse", heaptrack_parse, data, size);
}
