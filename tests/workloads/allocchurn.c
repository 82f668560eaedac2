/* allocchurn: a word counter whose tokenizer copies every token into a
 * fresh malloc'd buffer, uses it for one hash lookup and frees it again.
 * Root cause: malloc+free of a small buffer per token.
 * Hotspot #1: tokenize (the time in malloc and free is charged to it).
 * Expected tag: allocation.
 * Fix: hash the token in place (pointer + length) or copy it into one
 * buffer allocated once outside the loop. */
#include <stdio.h>
#include <string.h>
#include "workload.h"

#define TEXT_WORDS 20000
#define NBUCKETS 4096

struct word_table {
	unsigned long hits[NBUCKETS];
	unsigned long tokens;
};

/* FNV-1a of the lower-cased word */
static unsigned long hash_token(const char *s)
{
	unsigned long h = 14695981039346656037ul;

	for (; *s; s++)
		h = (h ^ (unsigned char)(*s | 0x20)) * 1099511628211ul;
	return h;
}

static int is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* Count each word of text in table, from a NUL-terminated copy. */
NOINLINE static int tokenize(const char *text, struct word_table *table)
{
	const char *p = text;

	while (*p) {
		const char *start;
		size_t len;
		char *word;

		while (*p && !is_word_char(*p))
			p++;
		start = p;
		while (is_word_char(*p))
			p++;
		len = (size_t)(p - start);
		if (!len)
			break;
		word = malloc(len + 1);
		if (!word)
			return -1;
		memcpy(word, start, len);
		word[len] = '\0';
		table->hits[hash_token(word) % NBUCKETS]++;
		table->tokens++;
		free(word);
	}
	return 0;
}

/* A text of short words, with punctuation and capitals, like prose. */
NOINLINE static char *make_text(void)
{
	static const char *const words[] = {
		"the", "of", "and", "a", "to", "in", "is", "you", "that", "it",
		"He", "was", "for", "on", "are", "as", "with", "his", "they",
		"I", "at", "be", "this", "have", "from", "or", "one", "had",
	};
	size_t nwords = sizeof(words) / sizeof(words[0]);
	size_t cap = TEXT_WORDS * 8, len = 0;
	char *text = malloc(cap);
	unsigned long x = 88172645463325252ul;

	if (!text)
		return NULL;
	for (int i = 0; i < TEXT_WORDS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		len += (size_t)snprintf(text + len, cap - len, "%s%s",
					words[x % nwords], x % 11 ? " " : ", ");
	}
	text[len] = '\0';
	return text;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	struct word_table *table = calloc(1, sizeof(*table));
	char *text = make_text();
	int ret = 0;

	if (!table || !text)
		return 1;
	while (wl_now() < end && !ret)
		ret = tokenize(text, table);
	wl_sink = table->tokens;
	free(text);
	free(table);
	return ret ? 1 : 0;
}
