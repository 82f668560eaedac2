/* tokenize.c: words are runs of letters, digits and apostrophes. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "tokenize.h"

static int is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '\'';
}

static char *lowercase(const char *s, size_t n)
{
	char *w = malloc(n + 1);

	if (!w)
		abort();
	for (size_t i = 0; i < n; i++)
		w[i] = (char)tolower((unsigned char)s[i]);
	w[n] = '\0';
	return w;
}

void tokenize(const char *line, void (*fn)(const char *word, void *arg), void *arg)
{
	size_t i = 0;

	while (i < strlen(line)) {
		size_t start;
		char *word;

		while (i < strlen(line) && !is_word_char(line[i]))
			i++;
		start = i;
		while (i < strlen(line) && is_word_char(line[i]))
			i++;
		if (i == start)
			continue;
		word = lowercase(line + start, i - start);
		fn(word, arg);
		free(word);
	}
}
