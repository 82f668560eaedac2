/*
 * loadgen.c: evd's load generator. Sends COUNT events at RATE events per
 * second over C connections, in small batches paced against absolute
 * deadlines (so falling behind once is made up, and the rate holds over
 * time). The events come from a seeded generator: the same seed gives the
 * same bytes. Prints "HOTLOOP_METRIC sent=N" when done. With --stdin it
 * sends its input instead, as it is: for tests, and for trying evd by hand.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 64
#define LINE_MAX_LEN 160	/* the longest line gen_event() writes, with room */

static const char usage[] =
"usage: loadgen --port PORT --rate EVENTS_PER_S --count N --seed S [--conns C]\n"
"       loadgen --print --count N --seed S\n"
"       loadgen --port PORT --stdin\n"
"  --port PORT    evd on 127.0.0.1:PORT\n"
"  --rate R       events per second\n"
"  --count N      events to send (0: until SIGTERM or SIGINT)\n"
"  --seed S       the generator's seed: the same seed sends the same events\n"
"  --conns C      connections; event i goes to connection i %% C (2)\n"
"  --print        write the events to stdout, unpaced, instead of sending them\n"
"  --stdin        send standard input as it is, unpaced, on one connection\n";

static volatile sig_atomic_t stopped;

static void on_stop(int sig)
{
	(void)sig;
	stopped = 1;
}

/* splitmix64: small, fast, and the same everywhere */
static uint64_t next_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned pick(uint64_t *st, unsigned n)
{
	return (unsigned)(next_rand(st) % n);
}

static const char *const tools[] = {
	"ls", "cat", "grep", "sed", "python3", "curl", "wget", "sh", "bash", "ssh",
	"make", "cc", "git", "tar", "nc", "sudo", "systemctl", "journalctl",
};
static const char *const libs[] = { "c", "m", "ssl", "crypto", "z", "pthread", "stdc++", "pcre2-8" };
static const char *const etc[] = {
	"passwd", "shadow", "group", "hosts", "resolv.conf", "sudoers", "ssh/sshd_config",
	"crontab", "ld.so.preload", "nsswitch.conf", "hostname", "os-release",
};
static const uint32_t uids[] = { 0, 1000, 1000, 1000, 1001, 1001, 33, 65534, 1002, 0 };

/* One event line into BUF (at least LINE_MAX_LEN bytes); returns its length. */
static int gen_event(uint64_t *st, char *buf)
{
	unsigned r = pick(st, 100), pid = 300 + pick(st, 40000), u = pick(st, 30);
	uint32_t uid = uids[pick(st, sizeof(uids) / sizeof(uids[0]))];
	const char *kind;
	char path[128];

	if (r < 15) {
		kind = "exec";
		switch (pick(st, 10)) {
		case 0: snprintf(path, sizeof(path), "/tmp/.x%u", pick(st, 500)); break;
		case 1: snprintf(path, sizeof(path), "/dev/shm/Payload%u", pick(st, 100)); break;
		case 2: snprintf(path, sizeof(path), "/home/user%u/bin/run-%u.sh", u, pick(st, 50)); break;
		case 3: snprintf(path, sizeof(path), "/usr/local/bin/tool%u", pick(st, 20)); break;
		default: snprintf(path, sizeof(path), "/usr/bin/%s", tools[pick(st, sizeof(tools) / sizeof(tools[0]))]);
		}
	} else if (r < 65) {
		kind = "open";
		switch (pick(st, 12)) {
		case 0: case 1: case 2:
			snprintf(path, sizeof(path), "/usr/lib/x86_64-linux-gnu/lib%s.so.%u",
				 libs[pick(st, sizeof(libs) / sizeof(libs[0]))], pick(st, 4));
			break;
		case 3: case 4:
			snprintf(path, sizeof(path), "/etc/%s", etc[pick(st, sizeof(etc) / sizeof(etc[0]))]);
			break;
		case 5: snprintf(path, sizeof(path), "/proc/%u/status", pid); break;
		case 6: snprintf(path, sizeof(path), "/proc/%u/mem", pick(st, 40000)); break;
		case 7: snprintf(path, sizeof(path), "/home/user%u/.ssh/id_%s", u, pick(st, 2) ? "rsa" : "ed25519"); break;
		case 8: snprintf(path, sizeof(path), "/var/log/%s", pick(st, 2) ? "syslog" : "auth.log"); break;
		default:
			snprintf(path, sizeof(path), "/home/user%u/src/project%u/File%u.c", u, pick(st, 8), pick(st, 300));
		}
	} else if (r < 75) {
		kind = "connect";
		if (pick(st, 4))
			snprintf(path, sizeof(path), "/net/tcp/10.%u.%u.%u:%u", pick(st, 4), pick(st, 256),
				 pick(st, 256), pick(st, 3) ? 443 : 4444);
		else
			snprintf(path, sizeof(path), "/run/%s", pick(st, 2) ? "docker.sock" : "dbus/system_bus_socket");
	} else if (r < 85) {
		kind = "unlink";
		switch (pick(st, 5)) {
		case 0: snprintf(path, sizeof(path), "/var/log/%s", pick(st, 2) ? "wtmp" : "auth.log"); break;
		case 1: snprintf(path, sizeof(path), "/home/user%u/.bash_history", u); break;
		default: snprintf(path, sizeof(path), "/tmp/tmp%06u", pick(st, 1000000));
		}
	} else if (r < 90) {
		kind = "chmod";
		switch (pick(st, 4)) {
		case 0: snprintf(path, sizeof(path), "/etc/%s", etc[pick(st, sizeof(etc) / sizeof(etc[0]))]); break;
		case 1: snprintf(path, sizeof(path), "/usr/bin/%s", tools[pick(st, sizeof(tools) / sizeof(tools[0]))]); break;
		default: snprintf(path, sizeof(path), "/tmp/.x%u", pick(st, 500));
		}
	} else {
		kind = "rename";
		if (pick(st, 5))
			snprintf(path, sizeof(path), "/home/user%u/Documents/Report-%u.TXT", u, pick(st, 1000));
		else
			snprintf(path, sizeof(path), "/etc/cron.d/job%u", pick(st, 30));
	}
	return snprintf(buf, LINE_MAX_LEN, "EV %u %u %s %s\n", pid, uid, kind, path);
}

static long long parse_num(const char *opt, const char *s, long long min, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (!*s || *end || errno || v < min || v > max) {
		fprintf(stderr, "loadgen: bad value '%s' for %s: expected a number from %lld to %lld\n",
			s, opt, min, max);
		exit(2);
	}
	return v;
}

static int connect_local(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "loadgen: cannot connect to 127.0.0.1:%d: %s%s\n", port, strerror(errno),
			errno == ECONNREFUSED ? " (is evd running?)" : "");
		exit(1);
	}
	return fd;
}

/*
 * Write LEN bytes of BUF to FD. Returns how many were written: all of them,
 * or fewer when stopped by a signal midway.
 */
static size_t write_all(int fd, const char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR) {
			if (stopped)
				break;
			continue;
		}
		if (n < 0) {
			fprintf(stderr, "loadgen: cannot send: %s%s\n", strerror(errno),
				errno == EPIPE || errno == ECONNRESET ? " (evd went away)" : "");
			exit(1);
		}
		done += (size_t)n;
	}
	return done;
}

static size_t count_lines(const char *buf, size_t len)
{
	size_t n = 0;

	for (const char *p = buf; (p = memchr(p, '\n', len - (size_t)(p - buf))); p++)
		n++;
	return n;
}

/* When event I is due: START + I / RATE seconds, without overflow. */
static struct timespec deadline(struct timespec start, unsigned long long i, unsigned long long rate)
{
	unsigned long long ns = (i % rate) * 1000000000ULL / rate + (unsigned long long)start.tv_nsec;

	start.tv_sec += (time_t)(i / rate + ns / 1000000000ULL);
	start.tv_nsec = (long)(ns % 1000000000ULL);
	return start;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "conns", required_argument, NULL, 'c' },
		{ "print", no_argument, NULL, 'P' },
		{ "stdin", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	long long port = -1, rate = 0, count = -1, seed = -1, conns = 2;
	unsigned long long sent = 0, batch;
	int fd[MAX_CONNS], print = 0, from_stdin = 0, o;
	char *buf[MAX_CONNS];
	size_t len[MAX_CONNS];
	struct sigaction sa = { .sa_handler = on_stop };
	struct timespec start;
	uint64_t state;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'p': port = parse_num("--port", optarg, 1, 65535); break;
		case 'r': rate = parse_num("--rate", optarg, 1, 100000000); break;
		case 'n': count = parse_num("--count", optarg, 0, 1LL << 50); break;
		case 's': seed = parse_num("--seed", optarg, 0, 1LL << 62); break;
		case 'c': conns = parse_num("--conns", optarg, 1, MAX_CONNS); break;
		case 'P': print = 1; break;
		case 'S': from_stdin = 1; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind < argc || (from_stdin ? port < 0 || print :
			      count < 0 || seed < 0 || (!print && (port < 0 || !rate)))) {
		fputs(usage, stderr);
		return 2;
	}
	state = (uint64_t)seed;
	signal(SIGPIPE, SIG_IGN);

	if (from_stdin) {
		char in[65536];
		ssize_t n;
		int c = connect_local((int)port);

		while ((n = read(0, in, sizeof(in))) > 0) {
			write_all(c, in, (size_t)n);
			sent += count_lines(in, (size_t)n);
		}
		if (n < 0) {
			fprintf(stderr, "loadgen: cannot read standard input: %s\n", strerror(errno));
			return 1;
		}
		close(c);
		printf("HOTLOOP_METRIC sent=%llu\n", sent);
		return fflush(stdout) ? 1 : 0;
	}

	if (print) {
		char line[LINE_MAX_LEN];

		for (long long i = 0; !count || i < count; i++) {
			int n = gen_event(&state, line);

			if (fwrite(line, 1, (size_t)n, stdout) != (size_t)n)
				return 1;
		}
		return fflush(stdout) ? 1 : 0;
	}

	/* about a thousand batches a second: small enough to be smooth */
	batch = (unsigned long long)(rate + 999) / 1000;
	if (batch > 4096)
		batch = 4096;
	for (int c = 0; c < conns; c++) {
		fd[c] = connect_local((int)port);
		buf[c] = malloc(batch * LINE_MAX_LEN);
		if (!buf[c]) {
			fprintf(stderr, "loadgen: out of memory\n");
			return 1;
		}
	}
	sigaction(SIGTERM, &sa, NULL);	/* no SA_RESTART: a stop ends a sleep or a write */
	sigaction(SIGINT, &sa, NULL);

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!stopped && (!count || sent < (unsigned long long)count)) {
		unsigned long long n = batch, done = 0;
		struct timespec due = deadline(start, sent, (unsigned long long)rate);

		if (count && n > (unsigned long long)count - sent)
			n = (unsigned long long)count - sent;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
			if (stopped)
				break;
		if (stopped)
			break;
		memset(len, 0, sizeof(len));
		for (unsigned long long i = 0; i < n; i++) {
			int c = (int)((sent + i) % (unsigned long long)conns);

			len[c] += (size_t)gen_event(&state, buf[c] + len[c]);
		}
		for (int c = 0; c < conns; c++) {
			size_t w = write_all(fd[c], buf[c], len[c]);

			done += count_lines(buf[c], w);
		}
		sent += done;
	}
	for (int c = 0; c < conns; c++) {
		close(fd[c]);
		free(buf[c]);
	}
	printf("HOTLOOP_METRIC sent=%llu\n", sent);
	return fflush(stdout) ? 1 : 0;
}
