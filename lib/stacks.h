/*
 * stacks.h: a profile's samples merged by identical stacks (equal lists of
 * location ids), one sample type's values summed. It is the first step of
 * drawing a flame graph and of writing folded stacks: real profiles repeat
 * the same few thousand stacks over and over. The caller owns the array.
 */
#ifndef HOTLOOP_STACKS_H
#define HOTLOOP_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct profile;

struct stack_sum {
	size_t sample;	/* index of the first sample with this stack */
	int64_t value;	/* sum of sample type 'idx' over every such sample */
};

/*
 * Merge p's samples by stack, summing (saturating) the values of sample
 * type 'idx'. *out gets one entry per distinct stack in order of first
 * appearance; returns how many.
 */
size_t stacks_merge(const struct profile *p, int idx, struct stack_sum **out);

#endif
