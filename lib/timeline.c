/*
 * timeline.c: sampling a process tree from /proc (see timeline.h). Each
 * sample lists /proc once (ascending pids, merged with the last listing,
 * so only new pids are looked at), reads the tree's files through
 * descriptors kept open (a pread regenerates them), and takes CPU from
 * each process's CPU clock. A descriptor of a process that died fails, so
 * a reused pid is never mistaken for the process that had it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "json.h"
#include "strbuf.h"
#include "timeline.h"
#include "util.h"

/* A thread of a watched process: its context switches come from its own status. */
struct tl_task {
	pid_t tid;
	int status_fd;
	uint64_t vcs, ivcs;
	bool seen;
};

struct tl_proc {
	pid_t pid;
	bool counts;			/* false: the root that stands in for hotloop */
	bool seen;
	int stat_fd, statm_fd, io_fd, children_fd;
	clockid_t clock;
	bool first;			/* not read yet: all it did counts as this interval's */
	uint64_t cpu_ns, minflt, majflt, read_bytes, write_bytes;
	uint64_t cpu_read_ns;		/* when cpu_ns was read */
	unsigned threads;
	struct tl_task *tasks;
	size_t nr_tasks, alloc_tasks;
	unsigned tasks_listed;		/* num_threads when the tasks were last listed */
	uint64_t tasks_due;		/* when to read the threads' context switches again */
};

/* How often the threads' context switches are read, and /proc is listed. */
#define TASKS_EVERY_NS 1000000000ull
#define SCAN_EVERY_NS 1000000000ull

static const char *const psi_files[3] = {
	"/proc/pressure/cpu", "/proc/pressure/memory", "/proc/pressure/io"
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Read a /proc file kept open from its start; the length, or -1. */
static ssize_t reread(int fd, char *buf, size_t size)
{
	ssize_t n;

	if (fd < 0)
		return -1;
	do
		n = pread(fd, buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* The number after "key" in a "key value" file (status, io); 0 when absent. */
static uint64_t field_after(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

void timeline_init(struct timeline *tl, double interval_s)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(tl, 0, sizeof(*tl));
	tl->interval_s = interval_s;
	tl->ncpus = n > 0 ? (int)n : 1;
	tl->start_ns = now_ns();
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		tl->start_unix_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	}
	tl->last_ns = tl->start_ns;
	tl->root = -1;
	tl->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	tl->stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	for (int i = 0; i < 3; i++)
		tl->psi_fd[i] = open(psi_files[i], O_RDONLY | O_CLOEXEC);
}

static void task_close(struct tl_task *t)
{
	if (t->status_fd >= 0)
		close(t->status_fd);
	t->status_fd = -1;
}

static void proc_release(struct tl_proc *p)
{
	if (p->stat_fd >= 0)
		close(p->stat_fd);
	if (p->statm_fd >= 0)
		close(p->statm_fd);
	if (p->io_fd >= 0)
		close(p->io_fd);
	if (p->children_fd >= 0)
		close(p->children_fd);
	for (size_t i = 0; i < p->nr_tasks; i++)
		task_close(&p->tasks[i]);
	free(p->tasks);
}

void timeline_release(struct timeline *tl)
{
	for (size_t i = 0; i < tl->nr_phases; i++) {
		free(tl->phases[i].name);
		free(tl->phases[i].kind);
	}
	for (size_t i = 0; i < tl->nr_metric_names; i++)
		free(tl->metric_names[i]);
	for (size_t i = 0; i < tl->nr_procs; i++)
		proc_release(&tl->procs[i]);
	free(tl->points);
	free(tl->phases);
	free(tl->metric_names);
	free(tl->metrics);
	free(tl->procs);
	free(tl->outside);
	if (tl->proc_fd >= 0)
		close(tl->proc_fd);
	if (tl->stat_fd >= 0)
		close(tl->stat_fd);
	for (int i = 0; i < 3; i++)
		if (tl->psi_fd[i] >= 0)
			close(tl->psi_fd[i]);
	memset(tl, 0, sizeof(*tl));
	tl->proc_fd = tl->stat_fd = -1;
	tl->psi_fd[0] = tl->psi_fd[1] = tl->psi_fd[2] = -1;
}

double timeline_now(const struct timeline *tl)
{
	return (double)(now_ns() - tl->start_ns) / 1e9;
}

/* ---- the processes ------------------------------------------------------- */

static int open_at(int dir, const char *fmt, pid_t a, pid_t b)
{
	char path[64];

	snprintf(path, sizeof(path), fmt, (int)a, (int)b);
	return openat(dir, path, O_RDONLY | O_CLOEXEC);
}

/* "pid (comm) S ppid ...": the fields after the comm, which may hold anything, ')' too. */
static char *stat_fields(char *buf)
{
	char *p = strrchr(buf, ')');

	return p ? p + 2 : NULL;
}

/* The parent of a pid not watched yet; -1 when it cannot be read (it is gone). */
static pid_t parent_pid(int proc_fd, pid_t pid)
{
	char buf[1024], *f;
	int fd = open_at(proc_fd, "%d/stat", pid, 0), ppid;
	ssize_t n = reread(fd, buf, sizeof(buf));

	if (fd >= 0)
		close(fd);
	if (n <= 0 || !(f = stat_fields(buf)) || sscanf(f, "%*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

static struct tl_proc *proc_find(struct timeline *tl, pid_t pid)
{
	for (size_t i = 0; i < tl->nr_procs; i++)
		if (tl->procs[i].pid == pid)
			return &tl->procs[i];
	return NULL;
}

static void proc_add(struct timeline *tl, pid_t pid, bool counts)
{
	struct tl_proc *p;

	ALLOC_GROW(tl->procs, tl->nr_procs + 1, tl->alloc_procs);
	p = &tl->procs[tl->nr_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->counts = counts;
	p->seen = true;
	p->first = true;
	p->stat_fd = open_at(tl->proc_fd, "%d/stat", pid, 0);
	p->statm_fd = open_at(tl->proc_fd, "%d/statm", pid, 0);
	p->io_fd = open_at(tl->proc_fd, "%d/io", pid, 0);	/* may be refused: no I/O then */
	p->children_fd = open_at(tl->proc_fd, "%d/task/%d/children", pid, pid);
	if (clock_getcpuclockid(pid, &p->clock))
		p->clock = (clockid_t)-1;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/*
 * Between listings of /proc: the children of each watched process's main
 * thread join the tree at once (a child of another thread waits for the
 * next listing; its CPU since it started is counted then).
 */
static void scan_children(struct timeline *tl)
{
	char buf[4096];

	for (size_t i = 0; i < tl->nr_procs; i++) {
		char *p = buf, *e;

		if (reread(tl->procs[i].children_fd, buf, sizeof(buf)) <= 0)
			continue;
		for (;;) {
			long pid = strtol(p, &e, 10);

			if (e == p || pid <= 0)
				break;
			p = e;
			if (!proc_find(tl, (pid_t)pid))
				proc_add(tl, (pid_t)pid, (pid_t)pid != tl->root || tl->root_counts);
		}
	}
}

/*
 * List /proc: processes new since the last listing are classified once,
 * by their parent (a child of the tree joins it; the others are
 * remembered as outside); watched ones no longer listed are dropped.
 */
static void scan_tree(struct timeline *tl)
{
	pid_t *fresh = NULL, *parents = NULL, *outside = NULL;
	size_t nr_fresh = 0, alloc_fresh = 0, alloc_parents = 0, nr_outside = 0, alloc_outside = 0;
	size_t o = 0;
	char buf[16384];
	bool grew;
	long n;

	for (size_t i = 0; i < tl->nr_procs; i++)
		tl->procs[i].seen = false;
	if (tl->proc_fd < 0 || lseek(tl->proc_fd, 0, SEEK_SET) < 0)
		return;
	while ((n = syscall(SYS_getdents64, tl->proc_fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);
			struct tl_proc *p;
			pid_t pid;

			off += e->d_reclen;
			if (e->d_name[0] < '1' || e->d_name[0] > '9')
				continue;
			pid = (pid_t)atoi(e->d_name);
			if ((p = proc_find(tl, pid))) {
				p->seen = true;
				continue;
			}
			/* /proc lists pids ascending: merge with the last outside list */
			while (o < tl->nr_outside && tl->outside[o] < pid)
				o++;
			if (o < tl->nr_outside && tl->outside[o] == pid) {
				ALLOC_GROW(outside, nr_outside + 1, alloc_outside);
				outside[nr_outside++] = pid;
				continue;
			}
			ALLOC_GROW(fresh, nr_fresh + 1, alloc_fresh);
			ALLOC_GROW(parents, nr_fresh + 1, alloc_parents);
			parents[nr_fresh] = parent_pid(tl->proc_fd, pid);
			fresh[nr_fresh++] = pid;
		}
	}
	/* drop what is gone */
	for (size_t i = 0; i < tl->nr_procs;) {
		if (tl->procs[i].seen) {
			i++;
			continue;
		}
		proc_release(&tl->procs[i]);
		tl->procs[i] = tl->procs[--tl->nr_procs];
	}
	/* the new ones whose parent is in the tree join it, until none does */
	do {
		grew = false;
		for (size_t i = 0; i < nr_fresh; i++) {
			if (!fresh[i] || parents[i] < 0)
				continue;
			if (fresh[i] == tl->root || (tl->root > 0 && proc_find(tl, parents[i]))) {
				proc_add(tl, fresh[i], fresh[i] != tl->root || tl->root_counts);
				fresh[i] = 0;
				grew = true;
			}
		}
	} while (grew);
	for (size_t i = 0; i < nr_fresh; i++) {
		if (!fresh[i] || parents[i] < 0)
			continue;
		ALLOC_GROW(outside, nr_outside + 1, alloc_outside);
		outside[nr_outside++] = fresh[i];
	}
	qsort(outside, nr_outside, sizeof(*outside), cmp_pid);
	free(tl->outside);
	tl->outside = outside;
	tl->nr_outside = nr_outside;
	tl->alloc_outside = alloc_outside;
	free(fresh);
	free(parents);
}

/* List a process's threads again (when their number changed, or one is gone). */
static void list_tasks(struct timeline *tl, struct tl_proc *p)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int fd;

	snprintf(path, sizeof(path), "%d/task", (int)p->pid);
	fd = openat(tl->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (size_t i = 0; i < p->nr_tasks; i++)
		p->tasks[i].seen = false;
	while ((e = readdir(d))) {
		pid_t tid;
		size_t i;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		tid = (pid_t)atoi(e->d_name);
		for (i = 0; i < p->nr_tasks && p->tasks[i].tid != tid; i++)
			;
		if (i == p->nr_tasks) {
			ALLOC_GROW(p->tasks, p->nr_tasks + 1, p->alloc_tasks);
			p->tasks[i] = (struct tl_task){ .tid = tid, .vcs = 0, .ivcs = 0 };
			p->tasks[i].status_fd = open_at(tl->proc_fd, "%d/task/%d/status", p->pid, tid);
			p->nr_tasks++;
		}
		p->tasks[i].seen = true;
	}
	closedir(d);
	for (size_t i = 0; i < p->nr_tasks;) {
		if (p->tasks[i].seen) {
			i++;
			continue;
		}
		task_close(&p->tasks[i]);
		p->tasks[i] = p->tasks[--p->nr_tasks];
	}
	p->tasks_listed = p->threads;
}

/*
 * Context switches of a process since the last reading, thread by thread:
 * a status file per thread is most of what sampling costs, so they are
 * read once a second, not at every sample.
 */
static void read_tasks(struct timeline *tl, struct tl_proc *p, struct tl_point *pt)
{
	char buf[4096];
	bool gone = false;

	if (!p->first && now_ns() < p->tasks_due)
		return;
	p->tasks_due = now_ns() + TASKS_EVERY_NS;
	if (p->tasks_listed != p->threads || !p->nr_tasks)
		list_tasks(tl, p);
	for (size_t i = 0; i < p->nr_tasks; i++) {
		struct tl_task *t = &p->tasks[i];
		uint64_t v, iv;

		if (reread(t->status_fd, buf, sizeof(buf)) <= 0) {
			gone = true;
			continue;
		}
		v = field_after(buf, "\nvoluntary_ctxt_switches:");
		iv = field_after(buf, "\nnonvoluntary_ctxt_switches:");
		pt->ctx_voluntary += v >= t->vcs ? v - t->vcs : 0;
		pt->ctx_involuntary += iv >= t->ivcs ? iv - t->ivcs : 0;
		t->vcs = v;
		t->ivcs = iv;
	}
	if (gone)
		p->tasks_listed = 0;	/* list them again next time */
}

static uint64_t delta(uint64_t now, uint64_t *last, bool first)
{
	uint64_t d = first ? now : now >= *last ? now - *last : 0;

	*last = now;
	return d;
}

/* One process into the point; false when it is gone. */
static bool read_proc(struct timeline *tl, struct tl_proc *p, struct tl_point *pt)
{
	char buf[2048], *f;
	unsigned long long minflt, majflt, vsize, start_ticks;
	unsigned threads;
	long long rss_pages;
	unsigned long long size, resident, shared;
	struct timespec ts;
	struct stat st;
	char path[32];
	long page_kb = sysconf(_SC_PAGESIZE) / 1024;

	if (reread(p->stat_fd, buf, sizeof(buf)) <= 0 || !(f = stat_fields(buf)) ||
	    sscanf(f, "%*c %*d %*d %*d %*d %*d %*u %llu %*u %llu %*u %*u %*u %*d %*d %*d %*d %u %*d %llu %llu %lld",
		   &minflt, &majflt, &threads, &start_ticks, &vsize, &rss_pages) != 6)
		return false;
	p->threads = threads;
	if (!p->counts)
		return true;
	pt->processes++;
	pt->threads += threads;
	pt->vsz_kb += vsize / 1024;
	pt->minor_faults += delta(minflt, &p->minflt, p->first);
	pt->major_faults += delta(majflt, &p->majflt, p->first);
	if (reread(p->statm_fd, buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%llu %llu %llu", &size, &resident, &shared) == 3) {
		pt->rss_kb += resident * (uint64_t)page_kb;
		pt->rss_file_kb += shared * (uint64_t)page_kb;
		pt->rss_anon_kb += (resident > shared ? resident - shared : 0) * (uint64_t)page_kb;
	} else if (rss_pages > 0) {
		pt->rss_kb += (uint64_t)rss_pages * (uint64_t)page_kb;
	}
	if (reread(p->io_fd, buf, sizeof(buf)) > 0) {
		pt->read_bytes += delta(field_after(buf, "\nread_bytes:"), &p->read_bytes, p->first);
		pt->write_bytes += delta(field_after(buf, "\nwrite_bytes:"), &p->write_bytes, p->first);
	}
	if (p->clock != (clockid_t)-1 && !clock_gettime(p->clock, &ts)) {
		uint64_t now = now_ns(), since = p->first ? tl->last_ns : p->cpu_read_ns;
		double used = (double)delta((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, &p->cpu_ns,
					    p->first);

		/*
		 * Its share of a core since its own last reading (a sampler held up
		 * between two processes must not make one look busier); a process
		 * new to the tree over its whole life, found up to a second late.
		 */
		if (p->first) {
			struct timespec boot;
			long hz = sysconf(_SC_CLK_TCK);

			clock_gettime(CLOCK_BOOTTIME, &boot);
			if (hz > 0) {
				double age = (double)boot.tv_sec + (double)boot.tv_nsec / 1e9 -
					     (double)start_ticks / (double)hz;

				if (age > 0 && age * 1e9 > (double)(now - since))
					since = now - (uint64_t)(age * 1e9);
			}
		}
		if (now > since)
			pt->cpu_pct += 100.0 * used / (double)(now - since);
		p->cpu_read_ns = now;
	}
	/* since Linux 6.2 the size of /proc/PID/fd is the number of open descriptors */
	snprintf(path, sizeof(path), "%d/fd", (int)p->pid);
	if (!fstatat(tl->proc_fd, path, &st, 0)) {
		if (st.st_size > 0) {
			pt->fds += (uint32_t)st.st_size;
		} else {
			int fd = openat(tl->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
			struct dirent *e;

			if (!d && fd >= 0)
				close(fd);
			while (d && (e = readdir(d)))
				pt->fds += e->d_name[0] != '.';
			if (d)
				closedir(d);
		}
	}
	read_tasks(tl, p, pt);
	p->first = false;
	return true;
}

/* ---- the machine --------------------------------------------------------- */

static void read_machine(struct timeline *tl, struct tl_point *pt, bool first)
{
	char buf[4096];
	unsigned long long v[10] = { 0 };

	if (reread(tl->stat_fd, buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) >= 4) {
		/* guest time is inside user time already */
		uint64_t total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
		uint64_t busy = total - v[3] - v[4];

		if (!first && total > tl->stat_total)
			pt->machine_busy_pct = 100.0 * (double)(busy - tl->stat_busy) /
					       (double)(total - tl->stat_total);
		tl->stat_busy = busy;
		tl->stat_total = total;
	}
	for (int i = 0; i < 3; i++) {
		double *out = i == 0 ? &pt->psi_cpu_pct : i == 1 ? &pt->psi_memory_pct : &pt->psi_io_pct;
		const char *some;
		uint64_t total;

		*out = -1;
		if (reread(tl->psi_fd[i], buf, sizeof(buf)) <= 0 || !(some = strstr(buf, "some ")) ||
		    !strstr(some, "total="))
			continue;
		total = strtoull(strstr(some, "total=") + 6, NULL, 10);
		if (!first && tl->psi_ok[i] && total >= tl->psi_total_us[i])
			*out = 100.0 * (double)(total - tl->psi_total_us[i]) / 1e3 /
			       ((double)(now_ns() - tl->last_ns) / 1e6);
		tl->psi_total_us[i] = total;
		tl->psi_ok[i] = true;
	}
}

static void take(struct timeline *tl, struct tl_point *pt, bool first)
{
	uint64_t now = now_ns();

	memset(pt, 0, sizeof(*pt));
	/* listing /proc is most of a sample's cost: once a second, the children files between */
	if (first || now >= tl->scan_due) {
		scan_tree(tl);
		tl->scan_due = now + SCAN_EVERY_NS;
	} else {
		scan_children(tl);
	}
	for (size_t i = 0; i < tl->nr_procs;) {
		if (read_proc(tl, &tl->procs[i], pt)) {
			i++;
			continue;
		}
		proc_release(&tl->procs[i]);
		tl->procs[i] = tl->procs[--tl->nr_procs];
	}
	read_machine(tl, pt, first);
}

void timeline_watch(struct timeline *tl, pid_t root, bool root_counts)
{
	struct tl_point discard;
	uint64_t cpu0 = thread_cpu_ns();

	tl->root = root;
	tl->root_counts = root_counts;
	for (size_t i = 0; i < tl->nr_procs; i++)
		proc_release(&tl->procs[i]);
	tl->nr_procs = 0;
	tl->nr_outside = 0;
	take(tl, &discard, true);
	tl->last_ns = now_ns();
	tl->sampler_cpu_ns += thread_cpu_ns() - cpu0;
}

void timeline_sample(struct timeline *tl)
{
	uint64_t cpu0 = thread_cpu_ns(), now;
	struct tl_point *pt;

	ALLOC_GROW(tl->points, tl->nr_points + 1, tl->alloc_points);
	pt = &tl->points[tl->nr_points++];
	take(tl, pt, false);
	now = now_ns();
	pt->t = (double)(now - tl->start_ns) / 1e9;
	pt->cpu_machine_pct = pt->cpu_pct / tl->ncpus;
	tl->last_ns = now;
	tl->samples++;
	tl->sampler_cpu_ns += thread_cpu_ns() - cpu0;
}

/* ---- phases and metrics -------------------------------------------------- */

void timeline_phase_end(struct timeline *tl)
{
	if (tl->nr_phases && tl->phases[tl->nr_phases - 1].end_s < 0)
		tl->phases[tl->nr_phases - 1].end_s = timeline_now(tl);
}

void timeline_phase_begin(struct timeline *tl, const char *name, const char *kind)
{
	timeline_phase_end(tl);
	ALLOC_GROW(tl->phases, tl->nr_phases + 1, tl->alloc_phases);
	tl->phases[tl->nr_phases++] = (struct tl_phase){
		.name = xstrdup(name), .kind = xstrdup(kind), .start_s = timeline_now(tl), .end_s = -1,
	};
}

bool timeline_metric_is_counter(const struct timeline *tl, size_t m)
{
	bool have = false;
	double last = 0;

	for (size_t k = 0; k < tl->nr_metrics; k++) {
		if (tl->metrics[k].metric != m)
			continue;
		if (have && tl->metrics[k].value < last)
			return false;
		last = tl->metrics[k].value;
		have = true;
	}
	return have;
}

int timeline_metric_index(const struct timeline *tl, const char *name)
{
	for (size_t i = 0; i < tl->nr_metric_names; i++)
		if (!strcmp(tl->metric_names[i], name))
			return (int)i;
	return -1;
}

#define METRIC_PREFIX "HOTLOOP_METRIC"
/* Names of at most this many bytes, and at most this many metrics. */
#define METRIC_NAME_MAX 64
#define METRIC_NAMES_MAX 256

static bool metric_name_ok(const char *s, size_t len)
{
	if (!len || len > METRIC_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '_' || s[i] == '-' || s[i] == '.' || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

int timeline_metric_line(struct timeline *tl, double t, const char *line, size_t len)
{
	size_t plen = strlen(METRIC_PREFIX), i;
	bool bad = false, any = false;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len < plen || memcmp(line, METRIC_PREFIX, plen) || (len > plen && line[plen] != ' '))
		return 0;
	for (i = plen; i < len;) {
		size_t start, eq, end;
		char num[64], *e;
		double v;
		int idx;

		while (i < len && line[i] == ' ')
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && line[i] != ' ')
			i++;
		end = i;
		for (eq = start; eq < end && line[eq] != '='; eq++)
			;
		if (eq == end || !metric_name_ok(line + start, eq - start) || end - eq - 1 == 0 ||
		    end - eq - 1 >= sizeof(num)) {
			bad = true;
			continue;
		}
		memcpy(num, line + eq + 1, end - eq - 1);
		num[end - eq - 1] = '\0';
		errno = 0;
		v = strtod(num, &e);
		if (*e || errno == ERANGE || !isfinite(v)) {
			bad = true;
			continue;
		}
		{
			char *name = xstrndup(line + start, eq - start);

			idx = timeline_metric_index(tl, name);
			if (idx < 0 && tl->nr_metric_names < METRIC_NAMES_MAX) {
				ALLOC_GROW(tl->metric_names, tl->nr_metric_names + 1, tl->alloc_metric_names);
				idx = (int)tl->nr_metric_names;
				tl->metric_names[tl->nr_metric_names++] = name;
				name = NULL;
			}
			free(name);
		}
		if (idx < 0) {
			bad = true;
			continue;
		}
		ALLOC_GROW(tl->metrics, tl->nr_metrics + 1, tl->alloc_metrics);
		tl->metrics[tl->nr_metrics++] = (struct tl_metric_point){ t, (size_t)idx, v };
		any = true;
	}
	if (bad || !any)
		tl->malformed_metrics++;
	return 1;
}

/* ---- a phase's numbers --------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Linear interpolation between the closest ranks (as numpy's default). */
static double percentile(const double *sorted, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)pos;

	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (pos - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

static void distribution(double *x, size_t n, struct tl_dist *d)
{
	double sum = 0;

	memset(d, 0, sizeof(*d));
	if (!n)
		return;
	qsort(x, n, sizeof(*x), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	d->n = n;
	d->mean = sum / (double)n;
	d->p50 = percentile(x, n, 0.5);
	d->p95 = percentile(x, n, 0.95);
	d->max = x[n - 1];
}

void timeline_phase_stats(const struct timeline *tl, size_t i, struct tl_phase_stats *out)
{
	const struct tl_phase *ph = &tl->phases[i];
	double end = ph->end_s < 0 ? timeline_now(tl) : ph->end_s, busy = 0;
	double *cpu = xmalloc((tl->nr_points + 1) * sizeof(*cpu));
	double *mcpu = xmalloc((tl->nr_points + 1) * sizeof(*mcpu));
	const struct tl_point *first = NULL, *last = NULL;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	out->name = ph->name;
	out->start_s = ph->start_s;
	out->end_s = end;
	for (size_t k = 0; k < tl->nr_points; k++) {
		const struct tl_point *pt = &tl->points[k];

		if (pt->t <= ph->start_s || pt->t > end)
			continue;
		if (!first)
			first = pt;
		last = pt;
		cpu[n] = pt->cpu_pct;
		mcpu[n] = pt->cpu_machine_pct;
		busy += pt->machine_busy_pct;
		n++;
		if (pt->rss_kb > out->rss_max_kb)
			out->rss_max_kb = pt->rss_kb;
		if (pt->vsz_kb > out->vsz_max_kb)
			out->vsz_max_kb = pt->vsz_kb;
		if (pt->threads > out->threads_max)
			out->threads_max = pt->threads;
		if (pt->processes > out->processes_max)
			out->processes_max = pt->processes;
	}
	distribution(cpu, n, &out->cpu_pct);
	distribution(mcpu, n, &out->cpu_machine_pct);
	if (n)
		out->machine_busy_mean_pct = busy / (double)n;
	if (first) {
		out->rss_start_kb = first->rss_kb;
		out->rss_end_kb = last->rss_kb;
		out->vsz_start_kb = first->vsz_kb;
		out->vsz_end_kb = last->vsz_kb;
	}
	free(cpu);
	free(mcpu);

	out->nr_metrics = tl->nr_metric_names;
	out->metrics = xcalloc(out->nr_metrics ? out->nr_metrics : 1, sizeof(*out->metrics));
	for (size_t m = 0; m < tl->nr_metric_names; m++) {
		struct tl_metric_stats *ms = &out->metrics[m];
		double before = 0, inside = 0, sum = 0, v_first = 0, t_first = 0, t_last = 0;
		bool have_before = false, have_inside = false;

		ms->name = tl->metric_names[m];
		for (size_t k = 0; k < tl->nr_metrics; k++) {
			const struct tl_metric_point *mp = &tl->metrics[k];

			if (mp->metric != m || mp->t > end)
				continue;
			if (mp->t <= ph->start_s) {
				before = mp->value;
				have_before = true;
				continue;
			}
			if (!have_inside) {
				v_first = mp->value;
				t_first = mp->t;
			}
			inside = mp->value;
			t_last = mp->t;
			have_inside = true;
			sum += mp->value;
			ms->n++;
		}
		ms->seen = have_before || have_inside;
		if (ms->n)
			ms->mean = sum / (double)ms->n;
		/* a counter's growth in the phase: from its last value before (or 0, a fresh counter) */
		ms->total = have_inside ? inside - (have_before ? before : 0) : 0;
		/*
		 * Its rate: the slope between the first and the last value in the
		 * phase when it printed twice a second apart or more (a value printed
		 * every 200 ms would err by up to 200 ms of events over the whole
		 * phase), else the growth over the phase's length.
		 */
		if (ms->n >= 2 && t_last - t_first >= 1.0)
			ms->rate_per_s = (inside - v_first) / (t_last - t_first);
		else
			ms->rate_per_s = end > ph->start_s ? ms->total / (end - ph->start_s) : 0;
	}
}

void tl_phase_stats_release(struct tl_phase_stats *s)
{
	free(s->metrics);
	memset(s, 0, sizeof(*s));
}

/* ---- output -------------------------------------------------------------- */

static json_t *psi_json(double v)
{
	return v < 0 ? json_null() : json_real(v);
}

json_t *timeline_to_json(const struct timeline *tl)
{
	json_t *doc = json_object(), *points = json_array(), *phases = json_array();
	json_t *metrics = json_object();

	for (size_t i = 0; i < tl->nr_points; i++) {
		const struct tl_point *p = &tl->points[i];

		json_array_append_new(points, json_pack(
			"{s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:o, s:o, s:o}",
			"t", p->t, "cpu_pct", p->cpu_pct, "cpu_machine_pct", p->cpu_machine_pct,
			"rss_kb", (json_int_t)p->rss_kb, "rss_anon_kb", (json_int_t)p->rss_anon_kb,
			"rss_file_kb", (json_int_t)p->rss_file_kb, "vsz_kb", (json_int_t)p->vsz_kb,
			"processes", (json_int_t)p->processes, "threads", (json_int_t)p->threads,
			"fds", (json_int_t)p->fds, "ctx_voluntary", (json_int_t)p->ctx_voluntary,
			"ctx_involuntary", (json_int_t)p->ctx_involuntary,
			"read_bytes", (json_int_t)p->read_bytes, "write_bytes", (json_int_t)p->write_bytes,
			"minor_faults", (json_int_t)p->minor_faults, "major_faults", (json_int_t)p->major_faults,
			"machine_busy_pct", p->machine_busy_pct, "psi_cpu_pct", psi_json(p->psi_cpu_pct),
			"psi_memory_pct", psi_json(p->psi_memory_pct), "psi_io_pct", psi_json(p->psi_io_pct)));
	}
	for (size_t i = 0; i < tl->nr_phases; i++) {
		const struct tl_phase *ph = &tl->phases[i];

		json_array_append_new(phases, json_pack("{s:s, s:s, s:f, s:o}", "name", ph->name, "kind",
							ph->kind, "start_s", ph->start_s, "end_s",
							ph->end_s < 0 ? json_null() : json_real(ph->end_s)));
	}
	for (size_t m = 0; m < tl->nr_metric_names; m++) {
		json_t *a = json_array();

		for (size_t k = 0; k < tl->nr_metrics; k++)
			if (tl->metrics[k].metric == m)
				json_array_append_new(a, json_pack("[f, f]", tl->metrics[k].t,
								   tl->metrics[k].value));
		json_object_set_new(metrics, tl->metric_names[m], a);
	}
	json_object_set_new(doc, "interval_s", json_real(tl->interval_s));
	json_object_set_new(doc, "start_unix_s", json_real(tl->start_unix_s));
	json_object_set_new(doc, "ncpus", json_integer(tl->ncpus));
	json_object_set_new(doc, "phases", phases);
	json_object_set_new(doc, "points", points);
	json_object_set_new(doc, "metrics", metrics);
	json_object_set_new(doc, "malformed_metric_lines", json_integer((json_int_t)tl->malformed_metrics));
	json_object_set_new(doc, "sampler", json_pack("{s:I, s:f}", "samples", (json_int_t)tl->samples,
						       "cpu_s", (double)tl->sampler_cpu_ns / 1e9));
	return doc;
}

/* The phase a time falls in, or "". */
static const char *phase_at(const struct timeline *tl, double t)
{
	for (size_t i = 0; i < tl->nr_phases; i++) {
		const struct tl_phase *ph = &tl->phases[i];

		if (t > ph->start_s && (ph->end_s < 0 || t <= ph->end_s))
			return ph->name;
	}
	return "";
}

void timeline_format_csv(const struct timeline *tl, struct strbuf *out)
{
	timeline_format_csv_rows(tl, 0, true, out);
}

void timeline_format_csv_rows(const struct timeline *tl, size_t from, bool header, struct strbuf *out)
{
	if (header)
		strbuf_addstr(out, "t,phase,cpu_pct,cpu_machine_pct,rss_kb,rss_anon_kb,rss_file_kb,vsz_kb,"
			   "processes,threads,fds,ctx_voluntary,ctx_involuntary,read_bytes,write_bytes,"
			   "minor_faults,major_faults,machine_busy_pct,psi_cpu_pct,psi_memory_pct,psi_io_pct\n");
	for (size_t i = from; i < tl->nr_points; i++) {
		const struct tl_point *p = &tl->points[i];
		const double psi[3] = { p->psi_cpu_pct, p->psi_memory_pct, p->psi_io_pct };

		strbuf_addf(out, "%.3f,%s,%.2f,%.2f,%llu,%llu,%llu,%llu,%u,%u,%u,%llu,%llu,%llu,%llu,%llu,%llu,%.2f",
			    p->t, phase_at(tl, p->t), p->cpu_pct, p->cpu_machine_pct,
			    (unsigned long long)p->rss_kb, (unsigned long long)p->rss_anon_kb,
			    (unsigned long long)p->rss_file_kb, (unsigned long long)p->vsz_kb, p->processes,
			    p->threads, p->fds, (unsigned long long)p->ctx_voluntary,
			    (unsigned long long)p->ctx_involuntary, (unsigned long long)p->read_bytes,
			    (unsigned long long)p->write_bytes, (unsigned long long)p->minor_faults,
			    (unsigned long long)p->major_faults, p->machine_busy_pct);
		for (int k = 0; k < 3; k++) {
			if (psi[k] < 0)
				strbuf_addch(out, ',');
			else
				strbuf_addf(out, ",%.2f", psi[k]);
		}
		strbuf_addch(out, '\n');
	}
}
