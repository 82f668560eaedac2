/*
 * loop.h: the pure parts of `hotloop loop`: the prompt an agent gets (a
 * template with {{placeholders}}), the proposal it may write, the check
 * that a change leaves protected paths alone, and the commit message of a
 * kept change. src/cmd-loop.c runs the rounds with them. Callers own every
 * buffer they pass in; a struct loop_proposal owns its strings.
 */
#ifndef HOTLOOP_LOOP_H
#define HOTLOOP_LOOP_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;
struct config_list;

/* The default prompt; [agent] prompt = FILE replaces it. */
extern const char loop_default_prompt[];

/* A placeholder's name and value: {{name}} in a template. */
struct loop_var {
	const char *name, *value;
};

/*
 * Append 'tmpl' with every {{name}} replaced by its value. An unknown
 * placeholder is an error naming it (a typo in a user's template must not
 * reach the agent silently); "{{" without "}}" is kept as text.
 */
int loop_render(const char *tmpl, const struct loop_var *vars, size_t nr, struct strbuf *out);

/* What an agent may say it tried ($HOTLOOP_PROPOSAL). */
struct loop_proposal {
	char *function, *hypothesis, *title;
	double expected_gain_pct;	/* NAN when not given */
};

/*
 * Parse the proposal JSON (an object; every key optional, but those given
 * must have the right type). 0, or -1 with the reason in 'why'.
 */
int loop_parse_proposal(const char *text, size_t len, struct loop_proposal *p, struct strbuf *why);
void loop_proposal_release(struct loop_proposal *p);

/*
 * The first of the changed paths (relative to the repository's top) that
 * lies under a protected path (relative to the project directory 'sub'
 * within the repository, "" at the top), or NULL.
 */
const char *loop_protected_hit(const char *const *changed, size_t nr, const char *sub,
			       const struct config_list *protected_paths);

/* "perf: <function>: <title> (<workload> -12.3%)", one line, at most ~100 chars of title. */
void loop_commit_message(const char *function, const char *title, const char *workload,
			 double change_pct, struct strbuf *out);

/* Does the agent's output have a line saying NO CANDIDATE? */
bool loop_no_candidate(const char *output);

#endif
