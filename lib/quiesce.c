/*
 * quiesce.c: reads /proc/loadavg, /proc/pressure/cpu and the cpu line of
 * /proc/stat to decide whether the machine is quiet, and waits with back
 * off until it is or the caller's patience runs out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "quiesce.h"

int quiesce_parse_loadavg(const char *text, double *load1)
{
	char *end;
	double v = strtod(text, &end);

	if (end == text || !isfinite(v) || v < 0)
		return -1;
	*load1 = v;
	return 0;
}

int quiesce_parse_psi(const char *text, double *some_avg10)
{
	const char *p = strstr(text, "some ");
	char *end;
	double v;

	if (!p || !(p = strstr(p, "avg10=")))
		return -1;
	p += strlen("avg10=");
	v = strtod(p, &end);
	if (end == p || !isfinite(v) || v < 0)
		return -1;
	*some_avg10 = v;
	return 0;
}

int quiesce_parse_stat(const char *text, unsigned long long *total, unsigned long long *steal)
{
	unsigned long long f[8];
	const char *p = text;

	if (strncmp(p, "cpu ", 4))
		return -1;
	p += 4;
	*total = 0;
	for (int i = 0; i < 8; i++) {
		char *end;

		f[i] = strtoull(p, &end, 10);
		if (end == p)
			return -1;
		*total += f[i];
		p = end;
	}
	*steal = f[7];	/* user nice system idle iowait irq softirq steal */
	return 0;
}

static bool read_stat(unsigned long long *total, unsigned long long *steal)
{
	char buf[4096];

	return read_small_file("/proc/stat", buf, sizeof(buf)) > 0 &&
	       !quiesce_parse_stat(buf, total, steal);
}

static void sleep_seconds(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0)
		;
}

int quiesce_probe(const struct quiesce_opts *o, double interval, struct quiesce_state *s)
{
	unsigned long long t0, st0, t1, st1;
	bool have_stat;
	char buf[512];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	s->cpus = cpus > 0 ? (int)cpus : 1;
	have_stat = read_stat(&t0, &st0);
	sleep_seconds(interval);
	s->have_steal = have_stat && read_stat(&t1, &st1) && t1 > t0 && st1 >= st0;
	s->steal = s->have_steal ? 100.0 * (double)(st1 - st0) / (double)(t1 - t0) : 0;
	if (read_small_file("/proc/loadavg", buf, sizeof(buf)) < 0 ||
	    quiesce_parse_loadavg(buf, &s->load1))
		return error("cannot read the load average from '/proc/loadavg'");
	s->have_psi = read_small_file("/proc/pressure/cpu", buf, sizeof(buf)) > 0 &&
		      !quiesce_parse_psi(buf, &s->psi_some_avg10);
	if (!s->have_psi)
		s->psi_some_avg10 = 0;
	s->probes++;
	s->reason[0] = '\0';
	if (s->load1 > o->max_load_per_cpu * s->cpus)
		snprintf(s->reason, sizeof(s->reason), "load average %.2f on %d CPUs", s->load1, s->cpus);
	else if (s->have_psi && s->psi_some_avg10 > o->max_psi)
		snprintf(s->reason, sizeof(s->reason), "CPU pressure %.1f%% (some avg10)", s->psi_some_avg10);
	else if (s->have_steal && s->steal > o->max_steal)
		snprintf(s->reason, sizeof(s->reason), "steal time %.1f%%", s->steal);
	s->quiet = !s->reason[0];
	return 0;
}

int quiesce_wait(const struct quiesce_opts *o, struct quiesce_state *s)
{
	uint64_t start = now_ns();
	double pause = 0.1;

	memset(s, 0, sizeof(*s));
	for (;;) {
		double waited;

		if (quiesce_probe(o, 0.1, s))
			return -1;
		waited = (double)(now_ns() - start) / 1e9;
		s->waited = waited;
		if (s->quiet || waited + pause > o->max_wait)
			return 0;
		sleep_seconds(pause);
		pause = pause * 2 > 1 ? 1 : pause * 2;
	}
}
