/*
 * evd.c: an event pipeline daemon, the example service of `hotloop
 * scenario`. Clients send events over TCP; producer threads parse them into
 * one bounded queue (dropping what does not fit, never waiting); one consumer
 * thread evaluates each event against the rules of the config file. The main
 * thread accepts clients, hands them to the producers in turn, prints the
 * counters every second and stops on SIGTERM or SIGINT:
 *
 *	HOTLOOP_METRIC events=N      (cumulative; also dropped, matched, denied, malformed)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "net.h"
#include "queue.h"
#include "rules.h"

#define CONSUMER_BATCH 256

static const char usage[] =
"usage: evd --port PORT --config FILE [--producers N] [--queue N] [--http PORT]\n"
"  --port PORT     listen on 127.0.0.1:PORT (0: any free port)\n"
"  --config FILE   the rules, one per line (conf/default.conf)\n"
"  --producers N   threads reading clients (2)\n"
"  --queue N       slots in the event queue (4096); a full queue drops\n"
"  --http PORT     also answer POST /check on 127.0.0.1:PORT (0: any free port)\n";

struct consumer {
	pthread_t thread;
	struct queue *queue;
	const struct ruleset *rules;
	struct stats *stats;
};

static void *consumer_run(void *arg)
{
	struct consumer *c = arg;
	struct event *ev = malloc(CONSUMER_BATCH * sizeof(*ev));
	size_t n;

	if (!ev) {
		fprintf(stderr, "evd: out of memory\n");
		exit(1);
	}
	pthread_setname_np(pthread_self(), "evd-consumer");
	while ((n = queue_pop(c->queue, ev, CONSUMER_BATCH))) {
		uint64_t matched = 0, denied = 0;

		for (size_t i = 0; i < n; i++) {
			enum rule_action action;

			if (ruleset_match(c->rules, &ev[i], &action) >= 0) {
				matched++;
				denied += action == RULE_DENY;
			}
		}
		atomic_fetch_add_explicit(&c->stats->matched, matched, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->stats->denied, denied, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->stats->events, n, memory_order_relaxed);
	}
	free(ev);
	return NULL;
}

static void print_metrics(struct stats *s)
{
	printf("HOTLOOP_METRIC events=%llu\n"
	       "HOTLOOP_METRIC dropped=%llu\n"
	       "HOTLOOP_METRIC matched=%llu\n"
	       "HOTLOOP_METRIC denied=%llu\n"
	       "HOTLOOP_METRIC malformed=%llu\n",
	       (unsigned long long)atomic_load(&s->events),
	       (unsigned long long)atomic_load(&s->dropped),
	       (unsigned long long)atomic_load(&s->matched),
	       (unsigned long long)atomic_load(&s->denied),
	       (unsigned long long)atomic_load(&s->malformed));
	fflush(stdout);
}

static long parse_num(const char *opt, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < min || v > max) {
		fprintf(stderr, "evd: bad value '%s' for %s: expected a number from %ld to %ld\n",
			s, opt, min, max);
		exit(2);
	}
	return v;
}

/*
 * Until SIGTERM or SIGINT: accept clients and give them to the producers in
 * turn, and print the metrics every second. 0, or -1 with errno.
 */
static int serve_until_stopped(int listen_fd, const sigset_t *stop, struct producer *producers,
			       long nr_producers, struct stats *stats)
{
	struct itimerspec second = { .it_interval = { 1, 0 }, .it_value = { 1, 0 } };
	struct epoll_event e = { .events = EPOLLIN }, ready[8];
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int sig_fd = signalfd(-1, stop, SFD_CLOEXEC);
	int timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	long next = 0;
	int ret = -1;

	if (ep < 0 || sig_fd < 0 || timer_fd < 0 || timerfd_settime(timer_fd, 0, &second, NULL))
		goto out;
	e.data.fd = listen_fd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &e))
		goto out;
	e.data.fd = sig_fd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sig_fd, &e))
		goto out;
	e.data.fd = timer_fd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, timer_fd, &e))
		goto out;

	for (;;) {
		int n = epoll_wait(ep, ready, 8, -1), stopping = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto out;
		for (int i = 0; i < n; i++) {
			int fd = ready[i].data.fd;
			uint64_t ticks;

			if (fd == timer_fd) {
				if (read(timer_fd, &ticks, sizeof(ticks)) == sizeof(ticks))
					print_metrics(stats);
			} else if (fd == sig_fd) {
				struct signalfd_siginfo si;

				if (read(sig_fd, &si, sizeof(si)) == sizeof(si))
					stopping = 1;
			}
		}
		/* new clients, and at a stop those that connected before it */
		for (int c; (c = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0; )
			producer_give(&producers[next++ % nr_producers], c);
		if (stopping)
			break;
	}
	ret = 0;
out:
	if (ep >= 0)
		close(ep);
	if (sig_fd >= 0)
		close(sig_fd);
	if (timer_fd >= 0)
		close(timer_fd);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "config", required_argument, NULL, 'c' },
		{ "producers", required_argument, NULL, 'n' },
		{ "queue", required_argument, NULL, 'q' },
		{ "http", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct ruleset rules = RULESET_INIT;
	struct stats stats = { 0 };
	struct queue queue;
	struct consumer consumer;
	struct producer *producers;
	const char *config = NULL;
	long port = -1, nr_producers = 2, slots = 4096, http_port = -1;
	struct http_front http;
	char err[512];
	int listen_fd, o, p;
	sigset_t stop;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'p': port = parse_num("--port", optarg, 0, 65535); break;
		case 'c': config = optarg; break;
		case 'n': nr_producers = parse_num("--producers", optarg, 1, 64); break;
		case 'q': slots = parse_num("--queue", optarg, 1, 1L << 24); break;
		case 'H': http_port = parse_num("--http", optarg, 0, 65535); break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind < argc || port < 0 || !config) {
		fputs(usage, stderr);
		return 2;
	}
	if (ruleset_load(&rules, config, err, sizeof(err))) {
		fprintf(stderr, "evd: %s\n", err);
		return 2;
	}

	p = (int)port;
	listen_fd = listen_local(&p);
	if (listen_fd < 0) {
		fprintf(stderr, "evd: cannot listen on 127.0.0.1:%ld: %s\n", port, strerror(errno));
		return 1;
	}
	if (queue_init(&queue, (size_t)slots)) {
		fprintf(stderr, "evd: cannot set up: %s\n", strerror(errno));
		return 1;
	}

	/*
	 * The signals are read from a signalfd in this thread only; not
	 * ignored, as a shell's background jobs would have SIGINT.
	 */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);

	consumer = (struct consumer){ .queue = &queue, .rules = &rules, .stats = &stats };
	producers = calloc((size_t)nr_producers, sizeof(*producers));
	if (!producers || pthread_create(&consumer.thread, NULL, consumer_run, &consumer)) {
		fprintf(stderr, "evd: cannot start the consumer\n");
		return 1;
	}
	for (long i = 0; i < nr_producers; i++) {
		if (producer_start(&producers[i], &queue, &stats)) {
			fprintf(stderr, "evd: cannot start producer %ld: %s\n", i, strerror(errno));
			return 1;
		}
	}
	if (http_port >= 0) {
		int hp = (int)http_port;

		if (http_start(&http, &hp, &rules, &stats)) {
			fprintf(stderr, "evd: cannot listen for http on 127.0.0.1:%ld: %s\n", http_port, strerror(errno));
			return 1;
		}
		printf("evd: http on 127.0.0.1:%d\n", hp);
	}
	printf("evd: listening on 127.0.0.1:%d\n", p);
	fflush(stdout);

	if (serve_until_stopped(listen_fd, &stop, producers, nr_producers, &stats))
		fprintf(stderr, "evd: %s; stopping\n", strerror(errno));

	if (http_port >= 0)
		http_stop(&http);
	/* producers drain their clients, then the consumer drains the queue */
	for (long i = 0; i < nr_producers; i++)
		producer_stop(&producers[i]);
	queue_close(&queue);
	pthread_join(consumer.thread, NULL);
	print_metrics(&stats);

	close(listen_fd);
	free(producers);
	queue_release(&queue);
	ruleset_release(&rules);
	return 0;
}
