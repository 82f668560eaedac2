/* count_upper: the capitals of a text */
#include <ctype.h>
#include <string.h>
#include "../wc.h"

size_t count_upper(const char *s)
{
	size_t n = 0;

	for (size_t i = 0; i < strlen(s); i++)
		n += isupper((unsigned char)s[i]) != 0;
	return n;
}
