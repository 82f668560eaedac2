/*
 * cmd-doctor.c: `hotloop doctor [--json] [-- CMD]`: what this machine (and
 * optionally a target program) allows, one line per check with what to do
 * about each problem. The checks live in lib/doctor.c; this file parses
 * arguments, picks the exit code and formats text or JSON.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "builtin.h"
#include "json.h"
#include "doctor.h"

const char usage_doctor[] =
"usage: hotloop doctor [--json] [-- CMD [ARGS...]]\n"
"\n"
"Check what this machine allows hotloop to do (perf events, kernel samples\n"
"and symbols, hardware counters, buffer limits, helper tools) and, given a\n"
"command, what its program offers (architecture, symbols, debug info, build\n"
"id, frame pointers, libraries). Each problem comes with what to do.\n"
"\n"
"    --json     one JSON document (keys in docs/doctor.md)\n"
"\n"
"Exit status: 0 when hotloop can profile here, 3 when perf events are not\n"
"permitted, 1 when another check failed, 127 when CMD is not found, 126 when\n"
"it cannot be run.\n";

static json_t *json_int_or_null(int64_t v, bool known)
{
	return known ? json_integer(v) : json_null();
}

static json_t *target_json(const struct doctor_target *t)
{
	json_t *o = json_object(), *needed = json_array();
	bool elf = t->is_elf && !t->error;

	json_object_set_new(o, "path", json_text(t->path));
	json_object_set_new(o, "elf", json_boolean(t->is_elf));
	json_object_set_new(o, "error", json_text(t->error));
	json_object_set_new(o, "arch", json_text(elf ? t->arch : NULL));
	json_object_set_new(o, "type", json_text(elf ? t->type : NULL));
	json_object_set_new(o, "pie", elf ? json_boolean(t->pie) : json_null());
	json_object_set_new(o, "stripped", elf ? json_boolean(!t->has_symtab) : json_null());
	json_object_set_new(o, "debug_info", elf ? json_boolean(t->debug_info) : json_null());
	json_object_set_new(o, "debug_file", json_text(t->debug_file));
	json_object_set_new(o, "build_id", json_text(t->build_id));
	json_object_set_new(o, "frame_pointers",
			    t->frame_pointers < 0 ? json_null() : json_boolean(t->frame_pointers));
	json_object_set_new(o, "frame_pointer_share",
			    t->fp_checked ? json_real((double)t->fp_with / (double)t->fp_checked)
					  : json_null());
	json_object_set_new(o, "functions_checked", json_integer((json_int_t)t->fp_checked));
	json_object_set_new(o, "functions_with_frame_pointer", json_integer((json_int_t)t->fp_with));
	for (size_t i = 0; i < t->nr_needed; i++)
		json_array_append_new(needed, json_text(t->needed[i]));
	json_object_set_new(o, "needed", needed);
	return o;
}

static json_t *doctor_json(const struct doctor *d)
{
	json_t *doc = json_object(), *tools = json_object(), *caps = json_object();
	json_t *checks = json_array();

	json_object_set_new(doc, "perf_events", json_boolean(d->perf_events));
	json_object_set_new(doc, "paranoid", json_int_or_null(d->paranoid, d->paranoid != INT_MIN));
	json_object_set_new(doc, "root", json_boolean(d->root));
	json_object_set_new(caps, "perfmon", json_boolean(d->cap_perfmon));
	json_object_set_new(caps, "sys_admin", json_boolean(d->cap_sys_admin));
	json_object_set_new(doc, "capabilities", caps);
	json_object_set_new(doc, "kernel_samples", json_boolean(d->kernel_samples));
	json_object_set_new(doc, "hardware_events", json_boolean(d->hardware_events));
	json_object_set_new(doc, "kernel_symbols", json_boolean(d->kernel_symbols));
	json_object_set_new(doc, "kptr_restrict",
			    json_int_or_null(d->kptr_restrict, d->kptr_restrict != INT_MIN));
	json_object_set_new(doc, "mlock_kb", json_int_or_null(d->mlock_kb, d->mlock_kb >= 0));
	json_object_set_new(doc, "mlock_rlimit_kb",
			    json_int_or_null(d->mlock_rlimit_kb, d->mlock_rlimit_kb >= 0));
	json_object_set_new(doc, "ring_buffer", json_boolean(d->mmap_ok));
	json_object_set_new(doc, "max_sample_rate",
			    json_int_or_null(d->max_sample_rate, d->max_sample_rate >= 0));
	json_object_set_new(tools, "valgrind", json_text(d->valgrind));
	json_object_set_new(tools, "git", json_text(d->git));
	json_object_set_new(tools, "perf", json_text(d->perf));
	json_object_set_new(doc, "tools", tools);
	if (d->target)
		json_object_set_new(doc, "target", target_json(d->target));
	for (size_t i = 0; i < d->nr_checks; i++) {
		const struct doctor_check *c = &d->checks[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(c->name));
		json_object_set_new(o, "status", json_string(doctor_status_name(c->status)));
		json_object_set_new(o, "message", json_text(c->message));
		json_object_set_new(o, "remedy", json_text(c->remedy));
		json_array_append_new(checks, o);
	}
	json_object_set_new(doc, "checks", checks);
	return doc;
}

static void print_text(const struct doctor *d)
{
	for (size_t i = 0; i < d->nr_checks; i++) {
		const struct doctor_check *c = &d->checks[i];

		printf("%-4s  %-15s %s%s%s\n", doctor_status_name(c->status), c->name,
		       c->message, c->remedy && c->status != DOCTOR_OK ? ": " : "",
		       c->remedy && c->status != DOCTOR_OK ? c->remedy : "");
	}
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct doctor d;
	bool json = false;
	char *path = NULL;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		default:
			return usage_error("doctor", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		ret = doctor_resolve_command(argv[optind], &path);
		if (ret == -ENOENT && !strchr(argv[optind], '/')) {
			error("%s: command not found", argv[optind]);
			return HL_EXIT_NOT_FOUND;
		}
		if (ret) {
			error("%s: %s", argv[optind], strerror(-ret));
			free(path);
			return ret == -ENOENT ? HL_EXIT_NOT_FOUND : HL_EXIT_NOT_EXECUTABLE;
		}
	}

	doctor_init(&d);
	doctor_check_machine(&d);
	if (path)
		doctor_check_target(&d, path);
	if (json)
		print_json(doctor_json(&d));
	else
		print_text(&d);

	if (!d.perf_events)
		ret = HL_EXIT_NOT_PERMITTED;
	else if (doctor_worst(&d) == DOCTOR_FAIL)
		ret = HL_EXIT_FAILURE;
	else
		ret = HL_EXIT_OK;
	doctor_release(&d);
	free(path);
	return ret;
}
