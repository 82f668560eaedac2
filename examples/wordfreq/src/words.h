/* words.h: the word table of wordfreq: counts per distinct word. */
#ifndef WORDS_H
#define WORDS_H

#include <stddef.h>

struct word {
	char *text;
	long count;
};

struct word_table {
	struct word *words;
	size_t nr, alloc;
};

void table_add(struct word_table *t, const char *word);
void table_sort(struct word_table *t);
void table_free(struct word_table *t);

#endif
