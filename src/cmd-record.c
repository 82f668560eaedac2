/*
 * cmd-record.c: `hotloop record`, sample the CPU stacks of a command or a
 * running process into a pprof profile. Option parsing and the summary
 * line live here; the work is lib/record.c.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "builtin.h"
#include "config.h"
#include "heap-record.h"
#include "record.h"
#include "strbuf.h"

const char usage_record[] =
"usage: hotloop record [-F HZ] [-o FILE] [--call-graph auto|fp|dwarf[,SIZE]] [-p PID]\n"
"                      [--duration SECS] [-m PAGES] [--off-cpu] [-- CMD ARGS...]\n"
"   or: hotloop record --heap [--heap-rate SIZE] [--heap-max-stacks N] [-o FILE]\n"
"                             -- CMD ARGS...\n"
"\n"
"Sample the CPU stacks of CMD (with its threads and the processes it\n"
"forks) or of the running process PID, and write a pprof profile.\n"
"With --heap, record where CMD (and every process it starts) allocates\n"
"memory instead: a heap profile, and its live bytes over time in\n"
"FILE's name with .heap.csv.\n"
"\n"
"  -F, --freq HZ            samples per second per thread (default 999)\n"
"  -o, --output FILE        the profile to write (default hotloop.pb.gz)\n"
"  -g, --call-graph MODE    auto (default): the kernel's frame pointer walk,\n"
"                           and DWARF CFI on a copy of SIZE bytes of user stack\n"
"                           (default 8192) where code keeps no frame pointers;\n"
"                           fp: frame pointers only; dwarf: CFI only, on a\n"
"                           copy of SIZE bytes (default 16384)\n"
"  -p, --pid PID            attach to a running process until SIGINT or --duration\n"
"  -d, --duration SECS      stop after SECS; a command is then sent SIGTERM\n"
"  -m, --mmap-pages PAGES   ring buffer pages per CPU, a power of two\n"
"  --off-cpu                also where threads block, and for how long: sample\n"
"                           types off-cpu and wall (on-CPU + off-CPU)\n"
"  --heap                   allocations instead of CPU time: sample types\n"
"                           alloc_space (default), alloc_objects, inuse_*\n"
"                           (at the heap's peak), leak_* (live at exit),\n"
"                           temp_objects\n"
"  --heap-rate SIZE         sample one allocation per SIZE bytes on average\n"
"                           (default 512KiB; 1: record every allocation)\n"
"  --heap-max-stacks N      distinct stacks kept whole per process (default\n"
"                           1048576, at most 2097152); past them a stack is\n"
"                           cut to the allocator's caller, with a warning\n"
"\n"
"With a command, record exits with the command's exit status (128+N when\n"
"a signal N killed it). A summary line goes to stderr.\n";

static int parse_duration(const char *arg, uint64_t *ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v <= 0 || v > 1e7)
		return usage_error("record", "invalid --duration '%s': expected seconds, e.g. 10 or 0.5", arg);
	*ns = (uint64_t)(v * 1e9);
	return 0;
}

static int exit_code_of(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return HL_EXIT_FAILURE;
}

static int record_heap(const struct record_options *ro, bool cpu_only, uint64_t rate,
		       uint32_t max_stacks)
{
	struct heap_record_options o = { .argv = ro->argv, .output = ro->output, .rate = rate,
					 .max_stacks = max_stacks };
	struct heap_record_result res;
	struct strbuf sb = STRBUF_INIT;
	int ret;

	if (ro->pid)
		return usage_error("record", "--heap records a command it starts, not -p PID");
	if (cpu_only || ro->duration_ns || ro->sampler.mmap_pages)
		return usage_error("record", "--heap takes no CPU sampling options (-F, -g, --off-cpu, -d, -m)");
	if (!o.argv)
		return usage_error("record", "nothing to record: give a command after --");
	ret = heap_record_run(&o, &res);
	if (ret < 0) {
		heap_record_result_release(&res);
		return ret == -1 ? HL_EXIT_FAILURE : -ret;
	}
	heap_record_summary(&res, o.output, &sb);
	fputs(sb.buf, stderr);
	strbuf_release(&sb);
	heap_record_result_release(&res);
	return exit_code_of(res.wait_status);
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "freq", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "call-graph", required_argument, NULL, 'g' },
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "off-cpu", no_argument, NULL, 'O' },
		{ "heap", no_argument, NULL, 'H' },
		{ "heap-rate", required_argument, NULL, 'R' },
		{ "heap-max-stacks", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	struct record_options o = { .output = "hotloop.pb.gz" };
	struct record_result res;
	struct strbuf sb = STRBUF_INIT;
	bool heap = false, cpu_only = false;
	uint64_t heap_rate = 0;
	uint32_t heap_max_stacks = 0;
	long v;
	int c, ret;

	o.sampler.freq = SAMPLER_DEFAULT_FREQ;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+F:o:g:p:d:m:", opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if ((v = parse_count("-F", optarg, 1, 1000000)) < 0)
				return HL_EXIT_USAGE;
			o.sampler.freq = (unsigned)v;
			cpu_only = true;
			break;
		case 'o':
			if (!*optarg)
				return usage_error("record", "-o needs a file name");
			o.output = optarg;
			break;
		case 'O':
			o.sampler.off_cpu = true;
			cpu_only = true;
			break;
		case 'H':
			heap = true;
			break;
		case 'R':
			if (config_parse_size(optarg, &heap_rate) || !heap_rate)
				return usage_error("record", "invalid --heap-rate '%s': expected bytes, e.g. 512KiB or 1", optarg);
			break;
		case 'S':
			if ((v = parse_count("--heap-max-stacks", optarg, 1, HEAP_MAX_MAX_STACKS)) < 0)
				return HL_EXIT_USAGE;
			heap_max_stacks = (uint32_t)v;
			break;
		case 'g':
			if (parse_call_graph("record", optarg, &o.sampler))
				return HL_EXIT_USAGE;
			cpu_only = true;
			break;
		case 'p':
			if ((v = parse_count("-p", optarg, 1, 0x7fffffff)) < 0)
				return HL_EXIT_USAGE;
			o.pid = (pid_t)v;
			break;
		case 'd':
			if (parse_duration(optarg, &o.duration_ns))
				return HL_EXIT_USAGE;
			break;
		case 'm':
			if ((v = parse_count("--mmap-pages", optarg, 1, 1 << 20)) < 0)
				return HL_EXIT_USAGE;
			if (v & (v - 1))
				return usage_error("record", "--mmap-pages %ld is not a power of two", v);
			o.sampler.mmap_pages = (unsigned)v;
			break;
		default:
			return usage_error("record", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o.argv = argv + optind;
	if ((heap_rate || heap_max_stacks) && !heap)
		return usage_error("record", "--heap-rate and --heap-max-stacks need --heap");
	if (heap)
		return record_heap(&o, cpu_only, heap_rate, heap_max_stacks);
	if (o.argv && o.pid)
		return usage_error("record", "give a command or -p PID, not both");
	if (!o.argv && !o.pid)
		return usage_error("record", "nothing to record: give a command after -- or -p PID");

	ret = record_run(&o, &res);
	if (ret < 0)
		return ret == -1 ? HL_EXIT_FAILURE : -ret;

	record_summary(&res, o.output, &sb);
	fputs(sb.buf, stderr);
	strbuf_release(&sb);
	return o.argv ? exit_code_of(res.wait_status) : HL_EXIT_OK;
}
