/* main.c: wordfreq [-n N] FILE... prints the N most frequent words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenize.h"
#include "words.h"

static void count_word(const char *word, void *arg)
{
	table_add(arg, word);
}

static int count_file(struct word_table *t, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f))
		tokenize(line, count_word, t);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	struct word_table t = { 0 };
	long top = 10, total = 0;
	int i = 1;

	if (argc > 2 && !strcmp(argv[1], "-n")) {
		top = atol(argv[2]);
		i = 3;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: wordfreq [-n N] FILE...\n");
		return 2;
	}
	for (; i < argc; i++)
		if (count_file(&t, argv[i]))
			return 1;
	table_sort(&t);
	for (size_t k = 0; k < t.nr; k++)
		total += t.words[k].count;
	printf("%ld words, %zu distinct\n", total, t.nr);
	for (size_t k = 0; k < t.nr && (long)k < top; k++)
		printf("%7ld %s\n", t.words[k].count, t.words[k].text);
	table_free(&t);
	return 0;
}
