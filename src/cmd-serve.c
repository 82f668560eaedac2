/*
 * cmd-serve.c: `hotloop serve`: the live dashboard of a project's store
 * (lib/serve.c over lib/dashboard.c) until interrupted, or with
 * --snapshot DIR a static, sanitized copy of it.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builtin.h"
#include "dashboard.h"
#include "git.h"
#include "project.h"
#include "serve.h"
#include "store.h"
#include "util.h"

extern char **environ;

const char usage_serve[] =
"usage: hotloop serve [--port P] [--host ADDR] [--token T] [--allow-host NAME]...\n"
"                     [--open] [--db FILE] [--max-clients N] [--timeout S] [--quiet]\n"
"   or: hotloop serve --snapshot DIR [--db FILE]\n"
"\n"
"The dashboard of the project's store (.hotloop/hotloop.db under the git\n"
"top level): the loops, every attempt with its diff, verdict and pairs, each\n"
"workload's benchmark history, flame graphs (and their differences between\n"
"kept commits), scenario timelines and the knowledge base. A loop running in\n"
"another process shows as it runs. It only reads: no request changes the\n"
"store or the project. Ctrl-C stops it. The API is in docs/serve.md.\n"
"\n"
"    --port P          the TCP port (default 8383; 0: any free one)\n"
"    --host ADDR       the address to listen on (default 127.0.0.1); on any\n"
"                      other than loopback every request needs the token\n"
"    --token T         the token to require (default: a random one off loopback)\n"
"    --allow-host NAME a name the Host header may carry besides this\n"
"                      machine's name and addresses (a proxy's)\n"
"    --open            open the page in the desktop's browser (xdg-open)\n"
"    --db FILE         the store to show instead of .hotloop/hotloop.db\n"
"    --max-clients N   live pages at once (default 256)\n"
"    --timeout S       close a connection idle this many seconds (default 30);\n"
"                      a live page's event stream is not idle\n"
"    --quiet           no line on stderr for a request that failed\n"
"    --snapshot DIR    write a static copy into DIR and exit: it opens from\n"
"                      file:// or any static host, and holds no absolute\n"
"                      paths, user or host names\n"
"\n"
"Exit status: 0 (stopped by a signal, or the snapshot written), 1 when the\n"
"store cannot be read or the address cannot be bound, 2 on a usage error.\n";

/* Start the desktop's browser on url, without waiting for it. */
static void open_browser(const char *url)
{
	char *argv[] = { "xdg-open", (char *)url, NULL };
	pid_t pid;

	if (posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ))
		fprintf(stderr, "hotloop: serve: cannot start xdg-open: open %s yourself\n", url);
}

/*
 * The project's top level: the parent of the store's .hotloop/ with
 * --db, else the git top level here (or the current directory).
 */
static char *find_top(const char *db)
{
	char *top;

	if (db) {
		char *real = realpath(db, NULL), *slash;

		if (real && (slash = strrchr(real, '/')) && slash > real) {
			*slash = 0;
			slash = strrchr(real, '/');
			if (slash && !strcmp(slash + 1, ".hotloop")) {
				*slash = 0;
				return real;
			}
		}
		free(real);
	}
	top = git_find_top(".");
	return top ? top : realpath(".", NULL);
}

static void quiet_report(const char *prefix, const char *msg)
{
}

int cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "host", required_argument, NULL, 'H' },
		{ "token", required_argument, NULL, 't' },
		{ "allow-host", required_argument, NULL, 'a' },
		{ "open", no_argument, NULL, 'o' },
		{ "db", required_argument, NULL, 'd' },
		{ "max-clients", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "snapshot", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct serve_options so = { .port = SERVE_DEFAULT_PORT };
	const char *db = NULL, *snapshot = NULL, **allow = NULL;
	struct project p = PROJECT_INIT;
	struct dash d;
	struct serve *sv;
	struct store *probe;
	char *top, *kb_dir = NULL, *url;
	size_t nr_allow = 0, alloc_allow = 0;
	bool open_it = false;
	sigset_t stop;
	long n;
	int opt, sig, ret = HL_EXIT_FAILURE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if ((n = parse_count("--port", optarg, 0, 65535)) < 0)
				goto usage;
			so.port = (int)n;
			break;
		case 'H':
			so.host = optarg;
			break;
		case 't':
			if (strlen(optarg) < 16) {
				usage_error("serve", "--token must be at least 16 characters");
				goto out_usage;
			}
			so.token = optarg;
			break;
		case 'a':
			ALLOC_GROW(allow, nr_allow + 1, alloc_allow);
			allow[nr_allow++] = optarg;
			break;
		case 'o':
			open_it = true;
			break;
		case 'd':
			db = optarg;
			break;
		case 'm':
			if ((n = parse_count("--max-clients", optarg, 1, 100000)) < 0)
				goto usage;
			so.max_clients = (size_t)n;
			break;
		case 'T':
			if ((n = parse_count("--timeout", optarg, 1, 86400)) < 0)
				goto usage;
			so.timeout_s = (unsigned)n;
			break;
		case 'q':
			so.quiet = true;
			break;
		case 's':
			snapshot = optarg;
			break;
		default:
			usage_error("serve", "unknown option '%s'", argv[optind - 1]);
			goto out_usage;
		}
	}
	if (optind < argc) {
		usage_error("serve", "unexpected argument '%s'", argv[optind]);
		goto out_usage;
	}
	so.allow_hosts = allow;
	so.nr_allow_hosts = nr_allow;
	top = find_top(db);
	if (!top) {
		error("cannot find the project's directory");
		goto out;
	}
	/* the knowledge base where the project's config puts it */
	if (!project_open(&p, NULL, PROJECT_CONFIG_OPTIONAL) && !strcmp(p.top, top))
		kb_dir = project_kb_dir(&p);
	project_release(&p);
	dash_init(&d, top, db, kb_dir);
	free(top);
	free(kb_dir);
	/* a store that cannot be read is said now, not on each request */
	if (!access(d.db, F_OK)) {
		if (store_open_readonly(d.db, &probe))
			goto out_dash;
		store_close(probe);
	} else if (db) {
		error("no store at '%s'", db);
		goto out_dash;
	}
	if (snapshot) {
		struct serve_snapshot_result r;

		if (serve_snapshot(&d, snapshot, &r))
			goto out_dash;
		printf("wrote %s: %zu answers in %zu files, %.1f KiB%s\n", snapshot, r.paths, r.files,
		       (double)r.bytes / 1024, r.skipped ? " (some left out: see the warnings)" : "");
		printf("open %s/index.html, or put the directory on any static host\n", snapshot);
		ret = 0;
		goto out_dash;
	}
	/* the server's threads inherit this: the signals come to sigwait() below */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (serve_start(&d, &so, &sv))
		goto out_dash;
	url = serve_token(sv) ? xstrfmt("http://%s:%d/?token=%s", serve_url_host(sv), serve_port(sv),
					serve_token(sv))
			      : xstrfmt("http://%s:%d/", serve_url_host(sv), serve_port(sv));
	printf("serving the dashboard of %s\n%s\n", d.top, url);
	if (access(d.db, F_OK))
		printf("(no store yet: the page fills once a loop runs here)\n");
	fflush(stdout);
	if (open_it)
		open_browser(url);
	/* errors from here on answer requests; they are not the command's */
	set_error_routine(quiet_report);
	sigwait(&stop, &sig);
	set_error_routine(NULL);
	serve_stop(sv);
	free(url);
	ret = 0;
out_dash:
	dash_release(&d);
out:
	free(allow);
	return ret;
usage:
	free(allow);
	return show_usage("serve");
out_usage:
	free(allow);
	return HL_EXIT_USAGE;
}
