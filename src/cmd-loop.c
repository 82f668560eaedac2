/*
 * cmd-loop.c: `hotloop loop`, the improve loop (lib/loop.c). Options, the
 * engine with two subscribers (the terminal, the store's feed), then each
 * attempt as it is decided and the summary, as text or as the JSON of
 * docs/loop.md.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "builtin.h"
#include "events.h"
#include "json.h"
#include "loop.h"
#include "project.h"
#include "schedule.h"
#include "store-feed.h"
#include "strbuf.h"

const char usage_loop[] =
"usage: hotloop loop [--rounds N] [--agent CMD] [--lenses L,...] [--parallel K]\n"
"                    [--from REV] [--every PERIOD [--batches N]] [--no-sandbox]\n"
"                    [-f CONFIG] [--json]\n"
"\n"
"The improve loop: each round an agent edits ONE hot function in a fresh git\n"
"worktree of the current best; hotloop checks that the diff touches no\n"
"protected path, builds, tests, checks every workload's output, compares the\n"
"candidate with the best in interleaved pairs, and keeps it (a commit on the\n"
"branch hotloop/<date>) or drops it with its reasons. Your working tree,\n"
"index and branch are never touched.\n"
"\n"
"  --rounds N         at most N rounds (default: [improve] rounds)\n"
"  --agent CMD        the agent command (default: [agent] command); it runs in\n"
"                     the worktree with the prompt on stdin and in $HOTLOOP_PROMPT\n"
"  --lenses L,...     the lenses to cycle through (default: [improve] lenses)\n"
"  --parallel K       agents generating candidates at once per round (default 1);\n"
"                     they are evaluated one at a time, the best keep wins\n"
"  --from REV         start a new branch at REV (the commit that ran, for a\n"
"                     profile from production), not at HEAD\n"
"  --every PERIOD     run a batch of rounds every PERIOD (30s, 10m, 24h, 1d),\n"
"                     sleeping in between, until interrupted (docs/loop.md)\n"
"  --batches N        with --every: stop after N batches\n"
"  --no-sandbox       run the agent, and the builds and tests of its changes,\n"
"                     with your rights, not in a sandbox (docs/loop.md)\n"
"  -f, --config FILE  the hotloop.conf (default: found from here up)\n"
"  --json             the summary as JSON (docs/loop.md)\n";

/* One attempt, as it is written up: what the agent said, the verdict, every reason. */
static void print_attempt(const struct attempt *a)
{
	if (*a->agent_says)
		printf("agent: %s\n", a->agent_says);
	printf("round %ld (%s): ", a->round, a->lens);
	if (a->have_prop)
		printf("%s: %s", a->prop.function ? a->prop.function : "?",
		       a->prop.title ? a->prop.title : a->prop.hypothesis ? a->prop.hypothesis : "");
	else
		printf("(no proposal)");
	if (a->have_prop && !isnan(a->prop.expected_gain_pct))
		printf(" (expects %+.1f%%)", -fabs(a->prop.expected_gain_pct));
	printf("\n  %s", verdict_kind_name(a->verdict));
	if (a->have_change)
		printf(": %+.2f%% [%+.2f, %+.2f]", a->change_pct, a->ci_low, a->ci_high);
	printf(" (decided at: %s)\n", gate_stage_name(a->stage));
	for (size_t i = 0; i < a->nr_reasons; i++)
		printf("    %s\n", a->reasons[i]);
	if (a->detail.len)
		printf("%s\n", a->detail.buf + (*a->detail.buf == '\n'));
	fflush(stdout);
}

static void on_attempt(const struct event *ev, void *data)
{
	(void)data;
	if (ev->kind == EV_ATTEMPT)
		print_attempt(ev->attempt);
}

static void print_summary(const struct loop_result *r)
{
	printf("\n%s: %zu kept in %ld round%s (%s)\n", r->branch, r->kept, r->rounds,
	       r->rounds == 1 ? "" : "s", r->stop_reason);
	if (r->first_round > 1 && r->rounds == 1)
		printf("  round %ld of the branch\n", r->first_round);
	else if (r->first_round > 1 && r->rounds)
		printf("  rounds %ld to %ld of the branch\n", r->first_round, r->first_round + r->rounds - 1);
	for (size_t i = 0; i < r->nr_rejected_stages; i++)
		printf("  dropped at %s: %zu\n", gate_stage_name(r->rejected_order[i]),
		       r->rejected_by[r->rejected_order[i]]);
	if (r->have_total)
		printf("total on the primary, re-measured: %+.2f%% [%+.2f, %+.2f] (%.12s -> %.12s)\n",
		       r->total.v.primary.change_pct, r->total.v.primary.ci_low_pct,
		       r->total.v.primary.ci_high_pct, r->start, r->best);
	else if (r->kept)
		printf("the branch is at %.12s (from %.12s), not re-measured as a whole\n", r->best, r->start);
	else
		printf("no change kept: the branch is where it started (%.12s)\n", r->start);
	if (r->dir)
		printf("files: %s\n", r->dir);
}

/* "a,b c" -> a, b, c (pointing into *copy) */
static int parse_lenses(const char *arg, char **copy, const char **lenses, size_t *nr)
{
	char *p, *save_ptr = NULL;

	*copy = xstrdup(arg);
	*nr = 0;
	for (p = strtok_r(*copy, ", ", &save_ptr); p; p = strtok_r(NULL, ", ", &save_ptr)) {
		if (*nr == LOOP_MAX_LENSES)
			return error("too many lenses: at most %d", LOOP_MAX_LENSES);
		lenses[(*nr)++] = p;
	}
	if (!*nr)
		return error("invalid value '%s' for --lenses: expected names like algorithmic,locality", arg);
	return 0;
}

/* Once a loop started, whatever stopped it: what was kept, and where the branch is. */
static void print_result(const struct loop_result *r, int ret, bool json)
{
	if (!r->branch || !r->start)
		return;
	if (json) {
		json_t *doc = loop_result_to_json(r);

		/* one document: the error is in it */
		json_object_set_new(doc, "error", ret ? json_text(last_error()) : json_null());
		clear_last_error();
		print_json(doc);
	} else
		print_summary(r);
}

struct every_print {
	bool json;
};

/* loop --every: each batch's result, and when the next one starts */
static void batch_done(long nr, const struct loop_result *r, int ret, time_t next, void *data)
{
	const struct every_print *ep = data;

	terminal_done();
	print_result(r, ret, ep->json);
	fflush(stdout);
	if (ret && !r->branch)
		fprintf(stderr, "hotloop: batch %ld failed before it started: %s\n", nr, last_error());
	else if (ret)
		fprintf(stderr, "hotloop: batch %ld failed\n", nr);
	if (next) {
		char when[64];
		struct tm tm;

		localtime_r(&next, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", &tm);
		fprintf(stderr, "loop: batch %ld done; the next starts at %s\n", nr, when);
	}
}

enum { OPT_ROUNDS = 256, OPT_AGENT, OPT_LENSES, OPT_PARALLEL, OPT_JSON, OPT_NO_SANDBOX, OPT_FROM,
       OPT_EVERY, OPT_BATCHES };

int cmd_loop(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, OPT_ROUNDS },
		{ "agent", required_argument, NULL, OPT_AGENT },
		{ "lenses", required_argument, NULL, OPT_LENSES },
		{ "parallel", required_argument, NULL, OPT_PARALLEL },
		{ "no-sandbox", no_argument, NULL, OPT_NO_SANDBOX },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "batches", required_argument, NULL, OPT_BATCHES },
		{ "config", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ NULL, 0, NULL, 0 },
	};
	const char *lenses[LOOP_MAX_LENSES], *conf_file = NULL;
	struct loop_spec spec = { .parallel = 1 };
	struct observer printer = { on_attempt, NULL, NULL }, term = *terminal_observer();
	struct project p = PROJECT_INIT;
	struct store_feed feed = { 0 };
	struct loop_result r;
	char *lens_copy = NULL;
	bool json = false;
	long v, every = 0, batches = 0;
	int c, ret = HL_EXIT_FAILURE;

	loop_result_init(&r);
	spec.sampler.freq = SAMPLER_DEFAULT_FREQ;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_ROUNDS:
			if ((spec.rounds = parse_count("--rounds", optarg, 1, 10000)) < 0)
				goto out_usage;
			break;
		case OPT_AGENT:
			spec.agent = optarg;
			break;
		case OPT_LENSES:
			free(lens_copy);
			if (parse_lenses(optarg, &lens_copy, lenses, &spec.nr_lenses))
				goto out_usage;
			spec.lenses = lenses;
			break;
		case OPT_PARALLEL:
			if ((v = parse_count("--parallel", optarg, 1, LOOP_MAX_PARALLEL)) < 0)
				goto out_usage;
			spec.parallel = (size_t)v;
			break;
		case OPT_NO_SANDBOX:
			spec.no_sandbox = true;
			break;
		case OPT_FROM:
			spec.from = optarg;
			break;
		case OPT_EVERY:
			if (schedule_parse_period(optarg, &every))
				goto out_usage_shown;
			break;
		case OPT_BATCHES:
			if ((batches = parse_count("--batches", optarg, 1, 1000000)) < 0)
				goto out_usage;
			break;
		case 'f':
			conf_file = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		default:
			ret = usage_error("loop", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind < argc) {
		ret = usage_error("loop", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (batches && !every) {
		ret = usage_error("loop", "--batches needs --every");
		goto out;
	}
	if (project_open(&p, conf_file, PROJECT_NEED_GIT))
		goto out;
	spec.project = &p;
	if (!spec.agent)
		spec.agent = p.cf.agent_command;
	/* subscribers: the terminal, the store, and the attempts on stdout */
	store_feed_init(&feed, &p);
	term.next = &feed.obs;
	feed.obs.next = json ? NULL : &printer;
	spec.obs = &term;
	cancel_on_interrupt(true);
	if (every) {
		struct every_print ep = { json };
		struct every_spec es = { &spec, every, batches, batch_done, &ep };
		struct every_result er;

		ret = loop_every(&es, &er);
		terminal_done();
		cancel_on_interrupt(false);
		store_feed_close(&feed);
		ret = ret ? HL_EXIT_FAILURE : er.interrupted ? 130 : er.failed ? HL_EXIT_FAILURE : HL_EXIT_OK;
		goto out;
	}
	ret = loop_run(&spec, &r);
	terminal_done();
	cancel_on_interrupt(false);
	store_feed_close(&feed);
	print_result(&r, ret, json);
	ret = r.interrupted ? 130 : ret ? HL_EXIT_FAILURE : HL_EXIT_OK;
	goto out;
out_usage_shown:
	ret = show_usage("loop");
	goto out;
out_usage:
	ret = HL_EXIT_USAGE;
out:
	loop_result_release(&r);
	project_release(&p);
	free(lens_copy);
	return ret;
}
