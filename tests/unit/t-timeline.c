/*
 * t-timeline.c: unit tests for timeline.c: a process tree's CPU adds up
 * to what its own CPU clocks say, children and threads are found, memory
 * is seen, metric lines are parsed (bad ones counted), and a phase's
 * numbers come out of its points.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "test-helpers.h"
#include "strbuf.h"
#include "timeline.h"

static double cpu_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void burn(double seconds)
{
	double end = cpu_s(CLOCK_PROCESS_CPUTIME_ID) + seconds;
	volatile unsigned x = 1;

	while (cpu_s(CLOCK_PROCESS_CPUTIME_ID) < end)
		x = x * 1103515245u + 12345u;
}

static void *sleeper(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

/*
 * A child that waits for a byte, then starts 'threads' sleeping threads,
 * touches 'mib' MiB and has a child of its own burn 'seconds' of CPU; the
 * burner says so with a byte back and waits. The next byte ends the
 * burner, which the child says with another byte.
 */
static pid_t start_worker(int *to, int *from, double seconds, int threads, size_t mib)
{
	int a[2], b[2];
	pid_t pid;

	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char c;
		pid_t g;

		alarm(30);
		if (read(a[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < threads; i++) {
			pthread_t t;

			pthread_create(&t, NULL, sleeper, NULL);
		}
		if (mib) {
			char *m = malloc(mib << 20);

			for (size_t i = 0; m && i < mib << 20; i += 4096)
				m[i] = 1;
		}
		g = fork();
		if (!g) {
			burn(seconds);
			if (write(b[1], "x", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		if (read(a[0], &c, 1) != 1)
			_exit(1);
		kill(g, SIGKILL);
		waitpid(g, NULL, 0);
		if (write(b[1], "y", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	*to = a[1];
	*from = b[0];
	return pid;
}

/* End the burner; wait until it is gone. */
static void end_burner(int to, int from)
{
	char c;

	assert_int_equal(write(to, "x", 1), 1);
	assert_int_equal(read(from, &c, 1), 1);
}

static void stop_worker(pid_t pid, int to, int from)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(to);
	close(from);
}

/* Sample until the worker says it is done; then once more. */
static void sample_until_done(struct timeline *tl, int from)
{
	struct timespec ms20 = { 0, 20000000 };
	char c;

	for (;;) {
		fd_set r;
		struct timeval tv = { 0, 0 };

		FD_ZERO(&r);
		FD_SET(from, &r);
		nanosleep(&ms20, NULL);
		timeline_sample(tl);
		if (select(from + 1, &r, NULL, NULL, &tv) == 1 && read(from, &c, 1) == 1)
			break;
	}
	timeline_sample(tl);
}

static double cpu_seconds(const struct timeline *tl)
{
	double sum = 0, last = 0;

	for (size_t i = 0; i < tl->nr_points; i++) {
		sum += tl->points[i].cpu_pct / 100.0 * (tl->points[i].t - last);
		last = tl->points[i].t;
	}
	return sum;
}

/* The CPU of a child is in, and the tree grows and shrinks. */
static void test_timeline__cpu_of_the_tree(void **state)
{
	struct timeline tl;
	int to, from;
	pid_t pid;
	uint32_t most = 0;
	double cpu;

	(void)state;
	timeline_init(&tl, 0.02);
	pid = start_worker(&to, &from, 0.2, 0, 0);
	timeline_watch(&tl, pid, true);
	assert_int_equal(write(to, "x", 1), 1);
	sample_until_done(&tl, from);
	for (size_t i = 0; i < tl.nr_points; i++)
		if (tl.points[i].processes > most)
			most = tl.points[i].processes;
	cpu = cpu_seconds(&tl);
	/* each process's share is over its own span between readings, not the point's: near, not exact */
	assert_true(cpu >= 0.2 * 0.95);
	assert_true(cpu <= 0.2 + 0.05);
	assert_int_equal(most, 2);
	end_burner(to, from);
	timeline_sample(&tl);
	assert_int_equal(tl.points[tl.nr_points - 1].processes, 1);
	assert_true(tl.samples == tl.nr_points);
	assert_true(tl.sampler_cpu_ns > 0);
	stop_worker(pid, to, from);
	timeline_release(&tl);
}

/* Threads and touched memory are seen; the root can stand aside. */
static void test_timeline__threads_memory_root(void **state)
{
	struct timeline tl, aside;
	int to, from;
	pid_t pid;
	const struct tl_point *last;

	(void)state;
	timeline_init(&tl, 0.02);
	timeline_init(&aside, 0.02);
	pid = start_worker(&to, &from, 0.01, 3, 64);
	timeline_watch(&tl, pid, true);
	timeline_watch(&aside, pid, false);
	assert_int_equal(write(to, "x", 1), 1);
	sample_until_done(&tl, from);
	end_burner(to, from);
	timeline_sample(&tl);
	timeline_sample(&aside);
	last = &tl.points[tl.nr_points - 1];
	assert_int_equal(last->threads, 4);
	assert_true(last->rss_anon_kb >= 60 * 1024);
	assert_true(last->rss_kb >= last->rss_anon_kb);
	assert_true(last->vsz_kb >= last->rss_kb);
	assert_true(last->fds >= 3);
	assert_true(last->minor_faults + tl.points[0].minor_faults > 0 || tl.nr_points > 1);
	assert_int_equal(aside.points[0].processes, 0);
	assert_int_equal(aside.points[0].rss_kb, 0);
	stop_worker(pid, to, from);
	timeline_sample(&tl);
	assert_int_equal(tl.points[tl.nr_points - 1].processes, 0);
	assert_true(tl.points[tl.nr_points - 1].cpu_pct == 0);
	timeline_release(&tl);
	timeline_release(&aside);
}

static void test_timeline__metric_lines(void **state)
{
	struct timeline tl;

	(void)state;
	timeline_init(&tl, 0.1);
	assert_int_equal(timeline_metric_line(&tl, 1.0, "HOTLOOP_METRIC events=10 dropped=0", 34), 1);
	assert_int_equal(tl.nr_metrics, 2);
	assert_int_equal(tl.malformed_metrics, 0);
	assert_int_equal(timeline_metric_line(&tl, 1.5, "plain output", 12), 0);
	assert_int_equal(timeline_metric_line(&tl, 2.0, "HOTLOOP_METRIC events=25\r", 25), 1);
	assert_int_equal(tl.nr_metrics, 3);
	/* bad pairs are counted, good ones on the same line kept */
	assert_int_equal(timeline_metric_line(&tl, 2.5, "HOTLOOP_METRIC events=x dropped=2 =3 a b=", 41), 1);
	assert_int_equal(tl.nr_metrics, 4);
	assert_int_equal(tl.malformed_metrics, 1);
	assert_int_equal(timeline_metric_line(&tl, 3.0, "HOTLOOP_METRIC ", 15), 1);
	assert_int_equal(tl.malformed_metrics, 2);
	assert_int_equal(timeline_metric_line(&tl, 3.0, "HOTLOOP_METRIC n=1e999 m=nan", 28), 1);
	assert_int_equal(tl.malformed_metrics, 3);
	assert_int_equal(tl.nr_metric_names, 2);
	assert_int_equal(timeline_metric_index(&tl, "dropped"), 1);
	assert_int_equal(timeline_metric_index(&tl, "nope"), -1);
	timeline_release(&tl);
}

static void push(struct timeline *tl, double t, double cpu, uint64_t rss)
{
	ALLOC_GROW(tl->points, tl->nr_points + 1, tl->alloc_points);
	tl->points[tl->nr_points++] = (struct tl_point){ .t = t, .cpu_pct = cpu, .cpu_machine_pct = cpu / 2,
							 .rss_kb = rss, .vsz_kb = 2 * rss, .threads = 3 };
}

static void test_timeline__phase_stats(void **state)
{
	struct timeline tl;
	struct tl_phase_stats s;
	struct strbuf csv = STRBUF_INIT;
	json_t *doc;

	(void)state;
	timeline_init(&tl, 1);
	ALLOC_GROW(tl.phases, 2, tl.alloc_phases);
	tl.phases[0] = (struct tl_phase){ xstrdup("idle"), xstrdup("idle"), 0, 2 };
	tl.phases[1] = (struct tl_phase){ xstrdup("pressure"), xstrdup("pressure"), 2, 12 };
	tl.nr_phases = 2;
	push(&tl, 1, 1, 100);
	push(&tl, 2, 1, 100);
	for (int i = 1; i <= 10; i++)
		push(&tl, 2 + i, 10 * i, 100 + (uint64_t)(i == 5 ? 900 : 10 * i));
	timeline_metric_line(&tl, 1.5, "HOTLOOP_METRIC events=100", 25);
	timeline_metric_line(&tl, 7, "HOTLOOP_METRIC events=600", 25);
	timeline_metric_line(&tl, 12, "HOTLOOP_METRIC events=1100", 26);
	timeline_phase_stats(&tl, 1, &s);
	assert_int_equal(s.cpu_pct.n, 10);
	assert_true(fabs(s.cpu_pct.mean - 55) < 1e-9);
	assert_true(fabs(s.cpu_pct.p50 - 55) < 1e-9);
	assert_true(fabs(s.cpu_pct.p95 - 95.5) < 1e-9);
	assert_true(fabs(s.cpu_pct.max - 100) < 1e-9);
	assert_true(fabs(s.cpu_machine_pct.mean - 27.5) < 1e-9);
	assert_int_equal(s.rss_start_kb, 110);
	assert_int_equal(s.rss_end_kb, 200);
	assert_int_equal(s.rss_max_kb, 1000);
	assert_int_equal(s.vsz_max_kb, 2000);
	assert_int_equal(s.threads_max, 3);
	assert_int_equal(s.nr_metrics, 1);
	assert_true(s.metrics[0].seen);
	assert_true(fabs(s.metrics[0].total - 1000) < 1e-9);
	assert_true(fabs(s.metrics[0].rate_per_s - 100) < 1e-9);
	assert_true(fabs(s.metrics[0].mean - 850) < 1e-9);
	tl_phase_stats_release(&s);
	timeline_phase_stats(&tl, 0, &s);
	assert_int_equal(s.cpu_pct.n, 2);
	assert_true(fabs(s.metrics[0].total - 100) < 1e-9);
	tl_phase_stats_release(&s);

	doc = timeline_to_json(&tl);
	assert_int_equal(json_array_size(json_object_get(doc, "points")), 12);
	assert_int_equal(json_array_size(json_object_get(json_object_get(doc, "metrics"), "events")), 3);
	json_decref(doc);
	timeline_format_csv(&tl, &csv);
	assert_non_null(strstr(csv.buf, "\n3.000,pressure,10.00,5.00,110,"));
	assert_non_null(strstr(csv.buf, "\n1.000,idle,"));
	strbuf_release(&csv);
	timeline_release(&tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeline__cpu_of_the_tree),
		cmocka_unit_test(test_timeline__threads_memory_root),
		cmocka_unit_test(test_timeline__metric_lines),
		cmocka_unit_test(test_timeline__phase_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
