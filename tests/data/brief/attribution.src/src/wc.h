#include <stddef.h>

size_t tokenize(const char *p);
size_t count_upper(const char *s);
