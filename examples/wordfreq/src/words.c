/* words.c: the word table: a growing array searched from the start. */
#include <stdlib.h>
#include <string.h>

#include "words.h"

static struct word *find_word(struct word_table *t, const char *word)
{
	for (size_t i = 0; i < t->nr; i++)
		if (strcmp(t->words[i].text, word) == 0)
			return &t->words[i];
	return NULL;
}

void table_add(struct word_table *t, const char *word)
{
	struct word *w = find_word(t, word);

	if (w) {
		w->count++;
		return;
	}
	if (t->nr == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 64;
		t->words = realloc(t->words, t->alloc * sizeof(*t->words));
		if (!t->words)
			abort();
	}
	t->words[t->nr].text = strdup(word);
	t->words[t->nr].count = 1;
	t->nr++;
}

static int by_count(const void *a, const void *b)
{
	const struct word *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

void table_sort(struct word_table *t)
{
	qsort(t->words, t->nr, sizeof(*t->words), by_count);
}

void table_free(struct word_table *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->words[i].text);
	free(t->words);
}
