/* tokenize: split a text into words, one allocation per word */
#include <stdlib.h>
#include <string.h>
#include "../wc.h"

size_t tokenize(const char *p)
{
	size_t words = 0;

	while (*p) {
		size_t n = strcspn(p, " \n");
		char *w = malloc(n + 1);

		memcpy(w, p, n);
		w[n] = '\0';
		words += n > 0;
		free(w);
		p += n + (p[n] != '\0');
	}
	return words;
}
