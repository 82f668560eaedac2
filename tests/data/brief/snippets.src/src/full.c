/* full.c: a source file as the profile saw it */
#include <stddef.h>

static const char table[] = "0123456789abcdef";

size_t shown(const unsigned char *p, size_t n, char *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		out[k++] = table[p[i] >> 4];
		out[k++] = table[p[i] & 15];
	}
	out[k] = '\0';
	return k;
}

size_t shown_too(const char *s)
{
	size_t n = 0;   
	/* this comment is far longer than a snippet line may be: the brief cuts a source line at 160 characters and marks the cut with three dots, so that a minified file or a generated table cannot blow the budget */
	while (s[n])
		n++;
	return n;
}
