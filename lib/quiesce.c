/*
 * quiesce.c: reads /proc/loadavg, /proc/pressure/cpu and the cpu lines of
 * /proc/stat to decide whether the machine (or the CPUs the runs are
 * pinned to) is quiet, and waits with back off until it is or the
 * caller's patience runs out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "quiesce.h"
#include "strbuf.h"
#include "util.h"

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

int quiesce_parse_stat(const char *text, int cpu, struct quiesce_times *t)
{
	char want[24];
	size_t len;
	const char *p;
	unsigned long long f[8];

	if (cpu < 0)
		len = (size_t)snprintf(want, sizeof(want), "cpu ");
	else
		len = (size_t)snprintf(want, sizeof(want), "cpu%d ", cpu);
	for (p = text; strncmp(p, want, len); p++)
		if (!(p = strchr(p, '\n')))
			return -1;
	p += len;
	t->total = 0;
	for (int i = 0; i < 8; i++) {
		char *end;

		f[i] = strtoull(p, &end, 10);
		if (end == p || (*end != ' ' && *end != '\n' && *end))
			return -1;
		t->total += f[i];
		p = end;
	}
	/* user nice system idle iowait irq softirq steal */
	t->idle = f[3] + f[4];
	t->steal = f[7];
	return 0;
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

static int read_stat(struct strbuf *sb)
{
	strbuf_reset(sb);
	return read_file(sb, "/proc/stat", 1 << 20);
}

/* Percent of the jiffies between a and b spent on 'part'. */
static double share(unsigned long long part_a, unsigned long long part_b,
		    const struct quiesce_times *a, const struct quiesce_times *b)
{
	if (b->total <= a->total || part_b < part_a)
		return 0;
	return 100.0 * (double)(part_b - part_a) / (double)(b->total - a->total);
}

/* The pinned CPUs: the busiest one's busy share and the highest steal. */
static void probe_pinned(const struct quiesce_opts *o, const struct strbuf *before,
			 const struct strbuf *after, struct quiesce_state *s)
{
	for (size_t i = 0; i < o->nr_cpus; i++) {
		struct quiesce_times a, b;
		double busy, steal;

		if (quiesce_parse_stat(before->buf, o->cpus[i], &a) ||
		    quiesce_parse_stat(after->buf, o->cpus[i], &b))
			continue;	/* offline: the run's pinning will say so */
		busy = 100.0 - share(a.idle, b.idle, &a, &b) - share(a.steal, b.steal, &a, &b);
		steal = share(a.steal, b.steal, &a, &b);
		if (busy < 0)
			busy = 0;
		if (!s->have_steal || busy > s->busy) {
			s->busy = busy;
			s->busiest = o->cpus[i];
		}
		if (!s->have_steal || steal > s->steal)
			s->steal = steal;
		s->have_steal = true;
	}
}

int quiesce_probe(const struct quiesce_opts *o, double interval, struct quiesce_state *s)
{
	struct strbuf before = STRBUF_INIT, after = STRBUF_INIT;
	struct quiesce_times a, b;
	char buf[512];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	bool have_stat;

	s->cpus = cpus > 0 ? (int)cpus : 1;
	s->pinned = o->nr_cpus > 0;
	s->have_steal = false;
	s->steal = s->busy = 0;
	s->busiest = -1;
	have_stat = read_stat(&before) >= 0;
	sleep_seconds(interval);
	have_stat = have_stat && read_stat(&after) >= 0;
	if (have_stat && s->pinned) {
		probe_pinned(o, &before, &after, s);
	} else if (have_stat && !quiesce_parse_stat(before.buf, -1, &a) &&
		   !quiesce_parse_stat(after.buf, -1, &b) && b.total > a.total) {
		s->have_steal = true;
		s->steal = share(a.steal, b.steal, &a, &b);
	}
	strbuf_release(&before);
	strbuf_release(&after);
	if (read_small_file("/proc/loadavg", buf, sizeof(buf)) < 0 ||
	    quiesce_parse_loadavg(buf, &s->load1))
		return error("cannot read the load average from '/proc/loadavg'");
	s->have_psi = read_small_file("/proc/pressure/cpu", buf, sizeof(buf)) > 0 &&
		      !quiesce_parse_psi(buf, &s->psi_some_avg10);
	if (!s->have_psi)
		s->psi_some_avg10 = 0;
	s->probes++;
	s->reason[0] = '\0';
	if (s->pinned) {
		/* load and pressure are machine-wide: recorded, not judged */
		if (s->have_steal && s->busy > o->max_busy)
			snprintf(s->reason, sizeof(s->reason), "pinned CPU %d busy %.0f%%",
				 s->busiest, s->busy);
	} else if (s->load1 > o->max_load_per_cpu * s->cpus) {
		snprintf(s->reason, sizeof(s->reason), "load average %.2f on %d CPUs", s->load1, s->cpus);
	} else if (s->have_psi && s->psi_some_avg10 > o->max_psi) {
		snprintf(s->reason, sizeof(s->reason), "CPU pressure %.1f%% (some avg10)", s->psi_some_avg10);
	}
	if (!s->reason[0] && s->have_steal && s->steal > o->max_steal)
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

		/* a pinned CPU's busy share needs a few scheduler ticks */
		if (quiesce_probe(o, o->nr_cpus ? 0.25 : 0.1, s))
			return -1;
		waited = (double)(now_ns() - start) / 1e9;
		s->waited = waited;
		if (s->quiet || waited + pause > o->max_wait)
			return 0;
		sleep_seconds(pause);
		pause = pause * 2 > 1 ? 1 : pause * 2;
	}
}

void quiesce_describe(const struct quiesce_state *s, struct strbuf *sb)
{
	if (s->pinned && s->busiest >= 0)
		strbuf_addf(sb, "pinned CPU %d busy %.0f%%, steal %.1f%%; ", s->busiest, s->busy, s->steal);
	strbuf_addf(sb, "load %.2f on %d CPUs", s->load1, s->cpus);
	if (s->have_psi)
		strbuf_addf(sb, ", CPU pressure %.1f%%", s->psi_some_avg10);
	if (!s->pinned && s->have_steal)
		strbuf_addf(sb, ", steal %.1f%%", s->steal);
}

json_t *quiesce_to_json(const struct quiesce_state *s)
{
	json_t *m;

	if (!s->probes)
		return NULL;
	m = json_object();
	json_object_set_new(m, "cpus", json_integer(s->cpus));
	json_object_set_new(m, "load1", json_real(s->load1));
	json_object_set_new(m, "cpu_pressure", s->have_psi ? json_real(s->psi_some_avg10) : json_null());
	json_object_set_new(m, "steal", s->have_steal ? json_real(s->steal) : json_null());
	json_object_set_new(m, "pinned_busy", s->pinned && s->busiest >= 0 ? json_real(s->busy) : json_null());
	json_object_set_new(m, "waited", json_real(s->waited));
	json_object_set_new(m, "probes", json_integer(s->probes));
	json_object_set_new(m, "quiet", json_boolean(s->quiet));
	json_object_set_new(m, "reason", s->quiet ? json_null() : json_string(s->reason));
	return m;
}
