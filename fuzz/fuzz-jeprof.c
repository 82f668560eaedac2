/*
 * fuzz-jeprof.c: libFuzzer target for the jemalloc heap profile reader
 * (what every input must give: heap-reader.h).
 */
#include "jeprof.h"
#include "heap-reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)jeprof_sniff(data, size);
	return fuzz_heap_reader("jeprof_parse", jeprof_parse, data, size);
}
