/*
 * cmd-schedule.c: `hotloop schedule install|remove|status`, the improve
 * loop on a timer that survives reboots (lib/schedule.c): a systemd user
 * timer, else a crontab line, that runs one batch (`hotloop loop`) every
 * period. Options, one engine call, what is installed.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "builtin.h"
#include "json.h"
#include "project.h"
#include "schedule.h"

const char usage_schedule[] =
"usage: hotloop schedule install [--every PERIOD] [--agent CMD] [--rounds N]\n"
"                                [--systemd | --crontab] [-f CONFIG] [--json]\n"
"   or: hotloop schedule remove [-f CONFIG] [--json]\n"
"   or: hotloop schedule status [-f CONFIG] [--json]\n"
"\n"
"Run the improve loop of this project on a timer, for machines that reboot:\n"
"a systemd user timer (~/.config/systemd/user/hotloop-<project>.timer and\n"
".service, enabled by systemctl; a start missed while the machine was\n"
"off runs when it is back) when a user systemd answers, else a line in\n"
"your crontab marked with the project's id. Each start runs one batch,\n"
"`hotloop loop -f CONFIG`: the timer does the waiting (docs/schedule.md).\n"
"\n"
"  --every PERIOD     how often: 30s, 10m, 24h, 1d (default 24h)\n"
"  --agent CMD        the agent of each batch (default: [agent] command)\n"
"  --rounds N         rounds per batch (default: [improve] rounds)\n"
"  --systemd          a systemd user timer, whatever is available\n"
"  --crontab          a crontab line, whatever is available\n"
"  -f, --config FILE  the hotloop.conf (default: found from here up)\n"
"  --json             what is installed, as JSON (docs/schedule.md)\n"
"\n"
"Exit status: 0; 1 when it cannot be installed, removed or read (nothing\n"
"is left half-installed); 2 usage.\n";

/* What is installed now; after remove, what was removed. */
static json_t *status_json(const struct schedule_status *st, long period, bool removed)
{
	json_t *doc = json_object();

	json_object_set_new(doc, "id", json_text(st->id));
	json_object_set_new(doc, "kind", json_string(schedule_kind_name(st->kind)));
	json_object_set_new(doc, "installed", json_boolean(!removed && st->kind != SCHEDULE_NONE));
	json_object_set_new(doc, "removed", json_boolean(removed && st->kind != SCHEDULE_NONE));
	json_object_set_new(doc, "service", st->kind == SCHEDULE_SYSTEMD ? json_text(st->service) : json_null());
	json_object_set_new(doc, "timer", st->kind == SCHEDULE_SYSTEMD ? json_text(st->timer) : json_null());
	json_object_set_new(doc, "cron_line", json_text(st->cron_line));
	json_object_set_new(doc, "next", removed ? json_null() : json_text(st->next));
	json_object_set_new(doc, "both", json_boolean(st->both));
	if (period)
		json_object_set_new(doc, "every_s", json_integer(period));
	return doc;
}

static void print_status(const char *verb, const struct schedule_status *st)
{
	if (st->kind == SCHEDULE_NONE) {
		printf("%s: no timer or crontab line for this project%s\n", st->id,
		       strcmp(verb, "removed") ? "" : ": nothing to remove");
		return;
	}
	if (st->kind == SCHEDULE_SYSTEMD) {
		printf("%s: systemd user timer %s\n  %s\n  %s\n", st->id, verb, st->timer, st->service);
		if (st->next && strcmp(verb, "removed"))
			printf("  next start: %s\n", st->next);
	}
	if (st->cron_line)
		printf("%s: crontab line %s\n  %s\n", st->id, verb, st->cron_line);
}

enum { OPT_EVERY = 256, OPT_AGENT, OPT_ROUNDS, OPT_SYSTEMD, OPT_CRONTAB, OPT_JSON };

int cmd_schedule(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "agent", required_argument, NULL, OPT_AGENT },
		{ "rounds", required_argument, NULL, OPT_ROUNDS },
		{ "systemd", no_argument, NULL, OPT_SYSTEMD },
		{ "crontab", no_argument, NULL, OPT_CRONTAB },
		{ "config", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ NULL, 0, NULL, 0 },
	};
	struct schedule_spec spec = { .period_s = 86400 };
	struct schedule_status st = { 0 };
	struct project p = PROJECT_INIT;
	const char *conf_file = NULL, *verb;
	char exe[PATH_MAX];
	bool json = false, install_only = false;
	ssize_t n;
	int c, ret = HL_EXIT_FAILURE;

	if (argc < 2 || *argv[1] == '-')
		return usage_error("schedule", "expected install, remove or status");
	verb = argv[1];
	if (strcmp(verb, "install") && strcmp(verb, "remove") && strcmp(verb, "status"))
		return usage_error("schedule", "unknown subcommand '%s': expected install, remove or status", verb);
	optind = 2;
	while ((c = getopt_long(argc, argv, "f:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_EVERY:
			if (schedule_parse_period(optarg, &spec.period_s))
				return show_usage("schedule");
			install_only = true;
			break;
		case OPT_AGENT:
			spec.agent = optarg;
			install_only = true;
			break;
		case OPT_ROUNDS:
			if ((spec.rounds = parse_count("--rounds", optarg, 1, 10000)) < 0)
				return show_usage("schedule");
			install_only = true;
			break;
		case OPT_SYSTEMD:
		case OPT_CRONTAB:
			if (spec.kind && spec.kind != (c == OPT_SYSTEMD ? SCHEDULE_SYSTEMD : SCHEDULE_CRON))
				return usage_error("schedule", "--systemd and --crontab exclude each other");
			spec.kind = c == OPT_SYSTEMD ? SCHEDULE_SYSTEMD : SCHEDULE_CRON;
			install_only = true;
			break;
		case 'f':
			conf_file = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		default:
			return usage_error("schedule", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("schedule", "unexpected argument '%s'", argv[optind]);
	if (install_only && strcmp(verb, "install"))
		return usage_error("schedule", "--every, --agent, --rounds, --systemd and --crontab are for install");
	if (project_open(&p, conf_file, 0))
		goto out;
	if (!strcmp(verb, "install")) {
		if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) < 0) {
			error("cannot find hotloop's own path (/proc/self/exe)");
			goto out;
		}
		exe[n] = '\0';
		spec.project = &p;
		spec.hotloop = exe;
		if (schedule_install(&spec, &st))
			goto out;
		verb = "installed";
	} else if (!strcmp(verb, "remove")) {
		if (schedule_remove(&p, &st))
			goto out;
		verb = "removed";
	} else {
		if (schedule_status(&p, &st))
			goto out;
		verb = "installed";
	}
	if (json)
		print_json(status_json(&st, !strcmp(argv[1], "install") ? spec.period_s : 0,
				       !strcmp(argv[1], "remove")));
	else
		print_status(verb, &st);
	ret = HL_EXIT_OK;
out:
	schedule_status_release(&st);
	project_release(&p);
	return ret;
}
