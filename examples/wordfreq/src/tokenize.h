/* tokenize.h: splitting text into lowercase words. */
#ifndef TOKENIZE_H
#define TOKENIZE_H

#include <stddef.h>

/* Call fn(word, arg) for every word of line, lowercased. */
void tokenize(const char *line, void (*fn)(const char *word, void *arg), void *arg);

#endif
