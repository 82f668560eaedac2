/*
 * doctor.c: the checks behind `hotloop doctor` (see doctor.h). Machine
 * checks try the real thing where they can (open a perf event, map its ring
 * buffer); target checks read the ELF file with libelf. Nothing here prints:
 * every finding, good or bad, becomes a struct doctor_check with a remedy.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include "util.h"
#include "strbuf.h"
#include "doctor.h"
#include "sandbox.h"

#define REMEDY_PARANOID "run as root or `sysctl kernel.perf_event_paranoid=1`"
#define REMEDY_NO_FP "record unwinds it with CFI on a copy of the stack (--call-graph auto); rebuild with -fno-omit-frame-pointer for stacks that need no copy"
#define REMEDY_DEBUG "rebuild with -g, or install its debug symbols (the -dbgsym or -debuginfo package)"

void doctor_init(struct doctor *d)
{
	memset(d, 0, sizeof(*d));
	d->paranoid = INT_MIN;
	d->kptr_restrict = INT_MIN;
	d->mlock_kb = -1;
	d->mlock_rlimit_kb = -1;
	d->max_sample_rate = -1;
}

static void target_free(struct doctor_target *t)
{
	if (!t)
		return;
	free(t->path);
	free(t->error);
	free(t->debug_file);
	free(t->build_id);
	for (size_t i = 0; i < t->nr_needed; i++)
		free(t->needed[i]);
	free(t->needed);
	free(t);
}

void doctor_release(struct doctor *d)
{
	for (size_t i = 0; i < d->nr_checks; i++) {
		free(d->checks[i].message);
		free(d->checks[i].remedy);
	}
	free(d->checks);
	free(d->valgrind);
	free(d->git);
	free(d->perf);
	target_free(d->target);
	doctor_init(d);
}

const char *doctor_status_name(enum doctor_status s)
{
	switch (s) {
	case DOCTOR_OK:
		return "ok";
	case DOCTOR_WARN:
		return "warn";
	case DOCTOR_FAIL:
		return "fail";
	}
	return "fail";
}

enum doctor_status doctor_worst(const struct doctor *d)
{
	enum doctor_status worst = DOCTOR_OK;

	for (size_t i = 0; i < d->nr_checks; i++)
		if (d->checks[i].status > worst)
			worst = d->checks[i].status;
	return worst;
}

static void add_check(struct doctor *d, const char *name, enum doctor_status status,
		      const char *remedy, const char *fmt, ...) ATTR_PRINTF(5, 6);

static void add_check(struct doctor *d, const char *name, enum doctor_status status,
		      const char *remedy, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	struct doctor_check *c;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	ALLOC_GROW(d->checks, d->nr_checks + 1, d->alloc_checks);
	c = &d->checks[d->nr_checks++];
	c->name = name;
	c->status = status;
	c->message = strbuf_detach(&sb, NULL);
	c->remedy = remedy ? xstrdup(remedy) : NULL;
	if (status != DOCTOR_OK && !remedy)
		BUG("check '%s' reports a problem without a remedy", name);
}

static int read_int(const char *path)
{
	int64_t v;

	if (!read_int64_file(path, &v) || v < INT_MIN + 1 || v > INT_MAX)
		return INT_MIN;
	return (int)v;
}

/* The effective capability set from /proc/self/status (0 if unknown). */
static uint64_t effective_caps(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	uint64_t caps = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "CapEff:", 7)) {
			caps = strtoull(line + 7, NULL, 16);
			break;
		}
	}
	fclose(f);
	return caps;
}

/* ---- PATH search ------------------------------------------------------ */

static bool is_exec_file(const char *path, int *err)
{
	struct stat st;

	if (stat(path, &st)) {
		*err = errno;
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		*err = EISDIR;
		return false;
	}
	if (!S_ISREG(st.st_mode) || access(path, X_OK)) {
		*err = EACCES;
		return false;
	}
	return true;
}

int doctor_resolve_command(const char *cmd, char **path)
{
	const char *env = getenv("PATH"), *p;
	char *denied = NULL;
	int err = 0;

	*path = NULL;
	if (!*cmd)
		return -ENOENT;
	if (strchr(cmd, '/')) {
		if (is_exec_file(cmd, &err)) {
			*path = xstrdup(cmd);
			return 0;
		}
		if (err != ENOENT && err != ENOTDIR)
			*path = xstrdup(cmd);
		return err == ENOTDIR ? -ENOENT : -err;
	}
	if (!env)
		env = "/usr/local/bin:/usr/bin:/bin";
	for (p = env;; p++) {
		const char *end = strchr(p, ':') ? strchr(p, ':') : p + strlen(p);
		size_t n = (size_t)(end - p);
		char *candidate = n ? xstrfmt("%.*s/%s", (int)n, p, cmd) : xstrdup(cmd);

		if (is_exec_file(candidate, &err)) {
			free(denied);
			*path = candidate;
			return 0;
		}
		/* like a shell: a match that cannot run is reported if nothing else runs */
		if (err == EACCES && !denied)
			denied = candidate;
		else
			free(candidate);
		if (!*end)
			break;
		p = end;
	}
	if (denied) {
		*path = denied;
		return -EACCES;
	}
	return -ENOENT;
}

char *doctor_which(const char *name)
{
	char *path;

	if (doctor_resolve_command(name, &path)) {
		free(path);
		return NULL;
	}
	return path;
}

/* ---- perf events ------------------------------------------------------ */

static int perf_open(uint32_t type, uint64_t config, bool kernel, bool sampling)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.disabled = 1;
	attr.exclude_kernel = !kernel;
	attr.exclude_hv = 1;
	if (sampling) {
		attr.freq = 1;
		attr.sample_freq = 99;
		attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	}
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static volatile uint64_t spin_sink;

/*
 * Open a counting event on ourselves, run a little, and read it: an event
 * that opens but never counts is no use either. Returns 0 or an errno.
 */
static int perf_try_count(uint32_t type, uint64_t config, bool kernel)
{
	int fd = perf_open(type, config, kernel, false);
	uint64_t count = 0, t0;
	int err = 0;

	if (fd < 0)
		return errno;
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		err = errno;
		goto out_close;
	}
	t0 = now_ns();
	while (now_ns() - t0 < 2000000)
		spin_sink++;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		err = errno ? errno : EIO;
	else if (!count)
		err = ENODATA;
out_close:
	close(fd);
	return err;
}

/* Can a sampling event's ring buffer (perf's default 512 KiB) be mapped? */
static bool perf_try_mmap(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pages, len;
	int fd;
	void *m;

	if (page <= 0)
		page = 4096;
	pages = (512 * 1024) / (size_t)page;
	if (!pages)
		pages = 1;
	len = (pages + 1) * (size_t)page;
	fd = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false, true);
	if (fd < 0)
		return false;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return false;
	munmap(m, len);
	return true;
}

/* /proc/kallsyms readable, with at least one non-zero address? */
static bool kallsyms_usable(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	bool ok = false;

	if (!f)
		return false;
	for (int i = 0; i < 64 && fgets(line, sizeof(line), f); i++) {
		char *end;
		unsigned long long addr = strtoull(line, &end, 16);
		if (end != line && addr) {
			ok = true;
			break;
		}
	}
	fclose(f);
	return ok;
}

static const char *privilege_desc(const struct doctor *d)
{
	if (d->root)
		return "root";
	if (d->cap_perfmon)
		return "CAP_PERFMON";
	if (d->cap_sys_admin)
		return "CAP_SYS_ADMIN";
	return "unprivileged";
}

static void check_perf_events(struct doctor *d)
{
	bool privileged = d->root || d->cap_perfmon || d->cap_sys_admin;

	if (d->perf_events) {
		add_check(d, "perf_events", DOCTOR_OK, NULL,
			  "software cpu-clock events open and count (%s)", privilege_desc(d));
	} else if (d->paranoid == INT_MIN && access("/proc/sys/kernel/perf_event_paranoid", F_OK)) {
		add_check(d, "perf_events", DOCTOR_FAIL,
			  "use a kernel built with CONFIG_PERF_EVENTS",
			  "this kernel has no perf events (no /proc/sys/kernel/perf_event_paranoid)");
	} else if (d->perf_errno == EACCES || d->perf_errno == EPERM) {
		if (!privileged && d->paranoid > 2)
			add_check(d, "perf_events", DOCTOR_FAIL, REMEDY_PARANOID,
				  "perf events not permitted (kernel.perf_event_paranoid=%d)",
				  d->paranoid);
		else
			add_check(d, "perf_events", DOCTOR_FAIL,
				  "allow perf_event_open: in a container, run it with --cap-add PERFMON or a seccomp profile that permits it",
				  "perf_event_open was denied (%s) although perf_event_paranoid=%d allows it: a seccomp filter or security module blocks it",
				  strerror(d->perf_errno), d->paranoid);
	} else if (d->perf_errno == ENOSYS) {
		add_check(d, "perf_events", DOCTOR_FAIL,
			  "use a kernel built with CONFIG_PERF_EVENTS, or allow the system call",
			  "perf_event_open is not available (%s)", strerror(d->perf_errno));
	} else {
		add_check(d, "perf_events", DOCTOR_FAIL,
			  "check that the kernel supports perf events for this process (a container or seccomp profile may hide them)",
			  "a software cpu-clock event cannot be used: %s", strerror(d->perf_errno));
	}
}

static void check_paranoid(struct doctor *d)
{
	bool privileged = d->root || d->cap_perfmon || d->cap_sys_admin;

	if (d->paranoid == INT_MIN)
		add_check(d, "paranoid", d->perf_events ? DOCTOR_WARN : DOCTOR_FAIL,
			  "mount /proc (and /proc/sys) where hotloop runs",
			  "cannot read /proc/sys/kernel/perf_event_paranoid");
	else if (privileged)
		add_check(d, "paranoid", DOCTOR_OK, NULL,
			  "kernel.perf_event_paranoid=%d, which %s bypasses", d->paranoid,
			  privilege_desc(d));
	else if (d->paranoid <= 1)
		add_check(d, "paranoid", DOCTOR_OK, NULL,
			  "kernel.perf_event_paranoid=%d allows user and kernel samples",
			  d->paranoid);
	else if (d->paranoid == 2)
		add_check(d, "paranoid", DOCTOR_WARN, REMEDY_PARANOID,
			  "perf_event_paranoid is 2: user-space samples only");
	else
		add_check(d, "paranoid", d->perf_events ? DOCTOR_WARN : DOCTOR_FAIL,
			  REMEDY_PARANOID, "perf_event_paranoid is %d: %s", d->paranoid,
			  d->perf_events ? "this kernel still lets us count our own process"
					 : "unprivileged processes cannot use perf events");
}

static void check_limits(struct doctor *d)
{
	char rlim[32];

	if (d->mlock_rlimit_kb < 0)
		snprintf(rlim, sizeof(rlim), "unlimited");
	else
		snprintf(rlim, sizeof(rlim), "%lld KiB", (long long)d->mlock_rlimit_kb);
	if (!d->perf_events)
		;	/* nothing to map without events; perf_events says why */
	else if (d->mmap_ok)
		add_check(d, "mlock", DOCTOR_OK, NULL,
			  "a 512 KiB perf ring buffer maps (perf_event_mlock_kb=%lld, ulimit -l %s)",
			  (long long)d->mlock_kb, rlim);
	else
		add_check(d, "mlock", DOCTOR_WARN,
			  "run as root, raise `ulimit -l`, or `sysctl kernel.perf_event_mlock_kb=2048`",
			  "cannot map a 512 KiB perf ring buffer (perf_event_mlock_kb=%lld, ulimit -l %s): sampling many threads may fail",
			  (long long)d->mlock_kb, rlim);

	if (d->max_sample_rate < 0)
		add_check(d, "sample_rate", DOCTOR_WARN, "mount /proc (and /proc/sys) where hotloop runs",
			  "cannot read /proc/sys/kernel/perf_event_max_sample_rate");
	else if (d->max_sample_rate < 1000)
		add_check(d, "sample_rate", DOCTOR_WARN,
			  "record with a lower -F, or `sysctl kernel.perf_event_max_sample_rate=10000`",
			  "kernel.perf_event_max_sample_rate is %lld: record -F above it fails (the kernel lowers it when sampling interrupts run long)",
			  (long long)d->max_sample_rate);
	else
		add_check(d, "sample_rate", DOCTOR_OK, NULL,
			  "kernel.perf_event_max_sample_rate=%lld", (long long)d->max_sample_rate);
}

static void check_kernel(struct doctor *d)
{
	if (!d->perf_events)
		;
	else if (d->kernel_samples)
		add_check(d, "kernel_samples", DOCTOR_OK, NULL, "kernel stacks can be sampled");
	else
		add_check(d, "kernel_samples", DOCTOR_WARN, REMEDY_PARANOID,
			  "kernel samples not allowed: time in system calls is not broken down");

	if (d->kernel_symbols)
		add_check(d, "kernel_symbols", DOCTOR_OK, NULL,
			  "/proc/kallsyms shows kernel addresses");
	else if (access("/proc/kallsyms", R_OK))
		add_check(d, "kernel_symbols", DOCTOR_WARN, "mount /proc where hotloop runs",
			  "cannot read /proc/kallsyms: kernel frames stay unnamed");
	else
		add_check(d, "kernel_symbols", DOCTOR_WARN,
			  d->kptr_restrict >= 2 ? "`sysctl kernel.kptr_restrict=1` and run as root"
			  : d->kptr_restrict == 1 ? "run as root (CAP_SYSLOG), or `sysctl kernel.kptr_restrict=0`"
			  : "run as root (CAP_SYSLOG), or `sysctl kernel.perf_event_paranoid=1`",
			  "kernel addresses are hidden (kernel.kptr_restrict=%d): kernel frames stay unnamed",
			  d->kptr_restrict == INT_MIN ? -1 : d->kptr_restrict);
}

static void check_tool(struct doctor *d, const char *name, const char *path,
		       enum doctor_status missing, const char *why, const char *remedy)
{
	if (path)
		add_check(d, name, DOCTOR_OK, NULL, "%s", path);
	else
		add_check(d, name, missing, remedy, "%s not found on PATH: %s", name, why);
}

void doctor_check_machine(struct doctor *d)
{
	struct rlimit rl;
	uint64_t caps = effective_caps();
	int err;

	d->root = geteuid() == 0;
	d->cap_sys_admin = (caps >> 21) & 1;
	d->cap_perfmon = (caps >> 38) & 1;
	d->paranoid = read_int("/proc/sys/kernel/perf_event_paranoid");
	d->kptr_restrict = read_int("/proc/sys/kernel/kptr_restrict");
	if (!read_int64_file("/proc/sys/kernel/perf_event_mlock_kb", &d->mlock_kb))
		d->mlock_kb = -1;
	if (!read_int64_file("/proc/sys/kernel/perf_event_max_sample_rate", &d->max_sample_rate))
		d->max_sample_rate = -1;
	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
		d->mlock_rlimit_kb = (int64_t)(rl.rlim_cur / 1024);

	err = perf_try_count(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false);
	d->perf_events = !err;
	d->perf_errno = err;
	if (d->perf_events) {
		d->kernel_samples = !perf_try_count(PERF_TYPE_SOFTWARE,
						    PERF_COUNT_SW_CPU_CLOCK, true);
		d->hardware_events =
			!perf_try_count(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false) ||
			!perf_try_count(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false);
		d->mmap_ok = perf_try_mmap();
	}
	d->kernel_symbols = kallsyms_usable();
	d->valgrind = doctor_which("valgrind");
	d->git = doctor_which("git");
	d->perf = doctor_which("perf");

	check_perf_events(d);
	check_paranoid(d);
	check_kernel(d);
	if (!d->perf_events)
		;
	else if (d->hardware_events)
		add_check(d, "hardware_events", DOCTOR_OK, NULL,
			  "hardware counters (instructions, cycles) are available");
	else
		add_check(d, "hardware_events", DOCTOR_WARN,
			  "cpu-clock sampling still works; for instruction counts use valgrind --tool=callgrind",
			  "no hardware counters (instructions, cycles): the CPU's PMU is not exposed, as in most VMs");
	check_limits(d);
	check_tool(d, "valgrind", d->valgrind, DOCTOR_WARN,
		   "no deterministic instruction counts", "install valgrind (apt-get install valgrind)");
	check_tool(d, "git", d->git, DOCTOR_WARN,
		   "loop and compare --base/--cand need it", "install git (apt-get install git)");
	check_tool(d, "perf", d->perf, DOCTOR_OK,
		   "optional, hotloop reads perf.data itself",
		   NULL);
	if (sandbox_unavailable())
		add_check(d, "sandbox", DOCTOR_WARN, "hotloop loop refuses to run an agent without --no-sandbox",
			  "%s", sandbox_unavailable());
	else
		add_check(d, "sandbox", DOCTOR_OK, NULL,
			  "bubblewrap makes the loop's sandbox (PID namespace, read-only filesystem)");
}

/* ---- the target: ELF ----------------------------------------------------- */

static const struct {
	unsigned machine;
	const char *name;
	const char *uname[3];	/* uname -m values that run it */
} arches[] = {
	{ EM_X86_64, "x86-64", { "x86_64" } },
	{ EM_386, "i386", { "i386", "i686", "x86_64" } },
	{ EM_AARCH64, "aarch64", { "aarch64", "arm64" } },
	{ EM_ARM, "arm", { "armv7l", "armv6l", "aarch64" } },
	{ EM_RISCV, "riscv", { "riscv64", "riscv32" } },
	{ EM_PPC64, "ppc64", { "ppc64", "ppc64le" } },
	{ EM_S390, "s390", { "s390x" } },
	{ EM_LOONGARCH, "loongarch", { "loongarch64" } },
	{ EM_MIPS, "mips", { "mips", "mips64" } },
};

/* Toolchain start-up code: never built by the user, so left out of the count. */
static const char *const crt_functions[] = {
	"_start", "_init", "_fini", "deregister_tm_clones", "register_tm_clones",
	"__do_global_dtors_aux", "frame_dummy", "__libc_csu_init", "__libc_csu_fini",
	"_dl_relocate_static_pie", "call_weak_fn", "__x86.get_pc_thunk.bx",
};

struct code_range {
	uint64_t addr, size;
	const unsigned char *bytes;
};

struct elf_info {
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t shstrndx;
	struct code_range *code;
	size_t nr_code, alloc_code;
	char *debuglink;
	uint32_t debuglink_crc;
	bool has_debuglink;
	bool has_interp, flags_pie;
};

static void hex_into(char **out, const unsigned char *b, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	if (n > 64)
		n = 64;
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%02x", b[i]);
	*out = strbuf_detach(&sb, NULL);
}

static void read_build_id(struct doctor_target *t, Elf_Data *data)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (!t->build_id && data &&
	       (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4))
			hex_into(&t->build_id, (const unsigned char *)data->d_buf + desc_off,
				 nh.n_descsz);
	}
}

static void read_dynamic(struct doctor_target *t, struct elf_info *ei, Elf_Scn *scn,
			 const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Dyn dyn;

	if (!data)
		return;
	for (int i = 0; gelf_getdyn(data, i, &dyn) && dyn.d_tag != DT_NULL; i++) {
		if (dyn.d_tag == DT_NEEDED) {
			const char *name = elf_strptr(ei->elf, sh->sh_link, dyn.d_un.d_val);
			if (!name)
				continue;
			ALLOC_GROW(t->needed, t->nr_needed + 1, t->alloc_needed);
			t->needed[t->nr_needed++] = xstrdup(name);
		} else if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE)) {
			ei->flags_pie = true;
		}
	}
}

static void read_debuglink(struct elf_info *ei, Elf_Scn *scn)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const char *s;
	size_t n, crc_off;

	if (ei->has_debuglink || !data || !data->d_buf || !data->d_size)
		return;		/* the first .gnu_debuglink wins */
	s = data->d_buf;
	n = strnlen(s, data->d_size);
	crc_off = (n + 4) & ~(size_t)3;	/* NUL, then padding to 4 */
	if (!n || n == data->d_size || crc_off + 4 > data->d_size || memchr(s, '/', n))
		return;
	ei->debuglink = xstrndup(s, n);
	memcpy(&ei->debuglink_crc, (const char *)data->d_buf + crc_off, 4);
	if (ei->ehdr.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
										: ELFDATA2MSB))
		ei->debuglink_crc = __builtin_bswap32(ei->debuglink_crc);
	ei->has_debuglink = true;
}

/* Walk the section headers: symbols, debug info, notes, dynamic, code. */
static void read_sections(struct doctor_target *t, struct elf_info *ei)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(ei->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(ei->elf, ei->shstrndx, sh.sh_name);
		if (!name)
			name = "";
		if (sh.sh_type == SHT_SYMTAB)
			t->has_symtab = true;
		else if (sh.sh_type == SHT_NOTE)
			read_build_id(t, elf_getdata(scn, NULL));
		else if (sh.sh_type == SHT_DYNAMIC)
			read_dynamic(t, ei, scn, &sh);
		if (sh.sh_type != SHT_NOBITS &&
		    (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			t->debug_info = true;
		if (!strcmp(name, ".gnu_debuglink"))
			read_debuglink(ei, scn);
		if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR)) {
			Elf_Data *data = elf_rawdata(scn, NULL);
			if (data && data->d_buf && data->d_size) {
				ALLOC_GROW(ei->code, ei->nr_code + 1, ei->alloc_code);
				ei->code[ei->nr_code++] = (struct code_range){
					sh.sh_addr,
					data->d_size < sh.sh_size ? data->d_size : sh.sh_size,
					data->d_buf,
				};
			}
		}
	}
}

static void read_segments(struct doctor_target *t, struct elf_info *ei)
{
	size_t n;

	if (elf_getphdrnum(ei->elf, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ei->elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_INTERP)
			ei->has_interp = true;
		else if (ph.p_type == PT_NOTE && !t->build_id)
			read_build_id(t, elf_getdata_rawchunk(ei->elf, (int64_t)ph.p_offset,
							      ph.p_filesz, ELF_T_NHDR));
	}
}

static int elf_open(const char *path, int *fd, Elf **elf)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -1;
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		if (*elf)
			elf_end(*elf);
		close(*fd);
		*elf = NULL;
		*fd = -1;
		return -1;
	}
	return 0;
}

/* Does the ELF file at 'path' hold DWARF (.debug_info with contents)? */
static bool file_has_debug_info(const char *path)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;
	Elf *elf;
	int fd;

	if (elf_open(path, &fd, &elf))
		return false;
	if (elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		found = name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"));
	}
out:
	elf_end(elf);
	close(fd);
	return found;
}

static bool crc_matches(const char *path, uint32_t want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, Z_NULL, 0);
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	close(fd);
	return n == 0 && (uint32_t)crc == want;
}

/* The separate debug file: by build id first, then by .gnu_debuglink. */
static void find_debug_file(struct doctor_target *t, struct elf_info *ei)
{
	char *real, *dir, *slash, *candidates[3];

	if (t->build_id && strlen(t->build_id) > 2) {
		char *p = xstrfmt("/usr/lib/debug/.build-id/%.2s/%s.debug", t->build_id,
				  t->build_id + 2);
		if (file_has_debug_info(p)) {
			t->debug_file = p;
			return;
		}
		free(p);
	}
	if (!ei->has_debuglink)
		return;
	real = realpath(t->path, NULL);
	if (!real)
		return;
	slash = strrchr(real, '/');
	dir = xstrndup(real, slash ? (size_t)(slash - real) : 0);
	candidates[0] = xstrfmt("%s/%s", dir, ei->debuglink);
	candidates[1] = xstrfmt("%s/.debug/%s", dir, ei->debuglink);
	candidates[2] = xstrfmt("/usr/lib/debug%s/%s", dir, ei->debuglink);
	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++) {
		if (!t->debug_file && strcmp(candidates[i], real) &&
		    crc_matches(candidates[i], ei->debuglink_crc) &&
		    file_has_debug_info(candidates[i])) {
			t->debug_file = candidates[i];
			continue;
		}
		free(candidates[i]);
	}
	free(dir);
	free(real);
}

static bool is_crt_function(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(crt_functions); i++)
		if (!strcmp(name, crt_functions[i]))
			return true;
	return false;
}

/* Length of a ModRM operand (ModRM, SIB, displacement) at b, 0 if cut off. */
static size_t modrm_len(const unsigned char *b, size_t n)
{
	unsigned mod, rm;
	size_t len = 1;

	if (!n)
		return 0;
	mod = b[0] >> 6;
	rm = b[0] & 7;
	if (mod != 3 && rm == 4) {
		if (n < 2)
			return 0;
		len++;
		if (mod == 0 && (b[1] & 7) == 5)
			len += 4;
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		len += 4;
	return len <= n ? len : 0;
}

/*
 * x86: walk the first instructions with a decoder that knows the common
 * prologue instructions. push %rbp then mov %rsp,%rbp is a frame pointer;
 * pushes, stack adjustments, calls or writes to %rbp before that mean the
 * function runs without one; anything else ends the walk (a leaf that needs
 * no frame, or code the decoder does not know) and proves nothing.
 */
static enum doctor_prologue x86_prologue(const unsigned char *b, size_t n, bool is64)
{
	bool pushed_rbp = false;
	size_t i = 0;

	if (n >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e &&
	    (b[3] == 0xfa || b[3] == 0xfb))
		i = 4;
	for (int insn = 0; insn < 16 && i < n; insn++) {
		unsigned rex = 0, op, reg, rm, mod;
		size_t ml;

		if (is64 && (b[i] & 0xf0) == 0x40) {
			rex = b[i++];
			if (i >= n)
				break;
		}
		op = b[i++];
		if (op >= 0x50 && op <= 0x57) {		/* push reg */
			if ((op & 7) == 5 && !(rex & 1) && !pushed_rbp) {
				pushed_rbp = true;
				continue;
			}
			return DOCTOR_PROLOGUE_NO_FP;
		}
		if (op == 0xe8)				/* call before any frame */
			return DOCTOR_PROLOGUE_NO_FP;
		if (op >= 0xb8 && op <= 0xbf) {		/* mov $imm, reg */
			if ((op & 7) == 5 && !(rex & 1) && pushed_rbp)
				return DOCTOR_PROLOGUE_NO_FP;
			i += (rex & 8) ? 8 : 4;
			continue;
		}
		if (i >= n)
			break;
		mod = b[i] >> 6;
		reg = ((b[i] >> 3) & 7) | ((rex & 4) << 1);
		rm = (b[i] & 7) | ((rex & 1) << 3);
		switch (op) {
		case 0x89: case 0x8b:			/* mov */
			if (mod == 3 && (rex & 8 || !is64) &&
			    ((op == 0x89 && reg == 4 && rm == 5) || (op == 0x8b && reg == 5 && rm == 4)))
				return pushed_rbp ? DOCTOR_PROLOGUE_FP : DOCTOR_PROLOGUE_NEUTRAL;
			/* fall through */
		case 0x8d: case 0x31: case 0x33: case 0x29: case 0x2b: case 0x01: case 0x03:
		case 0x09: case 0x0b: case 0x21: case 0x23: case 0x39: case 0x3b: case 0x85:
		case 0x63:
			/* %rbp written as a general register: no frame pointer */
			if (pushed_rbp && op != 0x39 && op != 0x3b && op != 0x85 &&
			    ((op & 2) || op == 0x8d || op == 0x63 ? reg == 5 : mod == 3 && rm == 5))
				return DOCTOR_PROLOGUE_NO_FP;
			ml = modrm_len(b + i, n - i);
			break;
		case 0x83: case 0x81: case 0xc7:	/* arithmetic/mov with an immediate */
			if (op != 0xc7 && mod == 3 && rm == 4 && ((b[i] >> 3) & 7) == 5)
				return DOCTOR_PROLOGUE_NO_FP;	/* sub $n, %rsp */
			ml = modrm_len(b + i, n - i);
			if (ml)
				ml += op == 0x83 ? 1 : 4;
			break;
		default:
			return DOCTOR_PROLOGUE_NEUTRAL;
		}
		if (!ml)
			break;
		i += ml;
	}
	return DOCTOR_PROLOGUE_NEUTRAL;
}

/*
 * arm64: stp x29, x30, [sp, ...] then add x29, sp, #n (mov x29, sp) is a
 * frame pointer; saving x30 (the link register) without x29 means none.
 */
static enum doctor_prologue arm64_prologue(const unsigned char *b, size_t n, bool big_endian)
{
	bool saved = false;

	for (size_t i = 0; i + 4 <= n && i < 8 * 4; i += 4) {
		uint32_t insn = big_endian
			? (uint32_t)b[i] << 24 | (uint32_t)b[i + 1] << 16 | (uint32_t)b[i + 2] << 8 | b[i + 3]
			: (uint32_t)b[i + 3] << 24 | (uint32_t)b[i + 2] << 16 | (uint32_t)b[i + 1] << 8 | b[i];
		unsigned rt = insn & 31, rt2 = (insn >> 10) & 31, rn = (insn >> 5) & 31;

		if ((insn & 0xffc00000) == 0xa9800000 || (insn & 0xffc00000) == 0xa9000000) {
			/* stp xt, xt2, [xn, #imm](!) */
			if (rn == 31 && rt == 29 && rt2 == 30)
				saved = true;
			else if (rn == 31 && !saved && (rt == 30 || rt2 == 30))
				return DOCTOR_PROLOGUE_NO_FP;
		} else if (((insn & 0xffe00c00) == 0xf8000c00 || (insn & 0xffc00000) == 0xf9000000) &&
			   rt == 30 && rn == 31 && !saved) {
			return DOCTOR_PROLOGUE_NO_FP;	/* str x30, [sp, ...] */
		} else if ((insn & 0xffc003ff) == 0x910003fd) {
			return saved ? DOCTOR_PROLOGUE_FP : DOCTOR_PROLOGUE_NEUTRAL;
		} else if ((insn & 0xfc000000) == 0x94000000 && !saved) {
			return DOCTOR_PROLOGUE_NO_FP;	/* bl before any frame */
		} else if ((insn & 0xfffffc1f) == 0xd65f0000 || (insn & 0xfc000000) == 0x14000000) {
			break;				/* ret, b: the function ends */
		}
	}
	return DOCTOR_PROLOGUE_NEUTRAL;
}

enum doctor_prologue doctor_classify_prologue(unsigned machine, bool big_endian,
					      const unsigned char *code, size_t len)
{
	switch (machine) {
	case EM_X86_64:
		return x86_prologue(code, len, true);
	case EM_386:
		return x86_prologue(code, len, false);
	case EM_AARCH64:
		return arm64_prologue(code, len, big_endian);
	}
	return DOCTOR_PROLOGUE_NEUTRAL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Collect the addresses of defined functions from a symbol table section. */
static void collect_functions(Elf *elf, int type, uint64_t **addrs, size_t *nr,
			      size_t *alloc)
{
	size_t symsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != (GElf_Word)type)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !symsize)
			continue;
		/* the size of the translated symbols, not the file's claimed sh_entsize */
		count = data->d_size / symsize;
		if (count > INT_MAX)
			count = INT_MAX;
		for (size_t i = 0; i < count; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && is_crt_function(name))
				continue;
			ALLOC_GROW(*addrs, *nr + 1, *alloc);
			(*addrs)[(*nr)++] = sym.st_value;
		}
	}
}

static void check_frame_pointers(struct doctor_target *t, struct elf_info *ei)
{
	uint64_t *addrs = NULL;
	size_t nr = 0, alloc = 0, uniq = 0;
	unsigned machine = ei->ehdr.e_machine;
	bool big_endian = ei->ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
	int fd = -1;
	Elf *dbg = NULL;

	t->frame_pointers = -1;
	if (machine != EM_X86_64 && machine != EM_386 && machine != EM_AARCH64)
		return;
	if (t->has_symtab)
		collect_functions(ei->elf, SHT_SYMTAB, &addrs, &nr, &alloc);
	else if (t->debug_file && !elf_open(t->debug_file, &fd, &dbg))
		collect_functions(dbg, SHT_SYMTAB, &addrs, &nr, &alloc);
	if (!nr)
		collect_functions(ei->elf, SHT_DYNSYM, &addrs, &nr, &alloc);
	t->nr_func_symbols = nr;
	if (nr) {
		qsort(addrs, nr, sizeof(*addrs), cmp_u64);
		for (size_t i = 0; i < nr; i++)
			if (!uniq || addrs[uniq - 1] != addrs[i])
				addrs[uniq++] = addrs[i];
	}
	for (size_t i = 0; i < uniq; i++) {
		for (size_t j = 0; j < ei->nr_code; j++) {
			const struct code_range *c = &ei->code[j];
			const unsigned char *b;
			size_t avail;

			if (addrs[i] < c->addr || addrs[i] - c->addr >= c->size)
				continue;
			b = c->bytes + (addrs[i] - c->addr);
			avail = (size_t)(c->size - (addrs[i] - c->addr));
			switch (doctor_classify_prologue(machine, big_endian, b, avail)) {
			case DOCTOR_PROLOGUE_FP:
				t->fp_with++;
				break;
			case DOCTOR_PROLOGUE_NO_FP:
				t->fp_without++;
				break;
			case DOCTOR_PROLOGUE_NEUTRAL:
				t->fp_neutral++;
				break;
			}
			break;
		}
	}
	t->fp_checked = t->fp_with + t->fp_without;
	if (t->fp_checked)
		t->frame_pointers = (double)t->fp_with / (double)t->fp_checked >= DOCTOR_FP_GOOD;
	if (dbg)
		elf_end(dbg);
	if (fd >= 0)
		close(fd);
	free(addrs);
}

static const char *host_machine(char *buf, size_t size)
{
	struct utsname u;

	if (uname(&u))
		return "";
	snprintf(buf, size, "%s", u.machine);
	return buf;
}

static void describe_arch(struct doctor_target *t, unsigned machine)
{
	char host[65];

	host_machine(host, sizeof(host));
	t->arch = "unknown";
	for (size_t i = 0; i < ARRAY_SIZE(arches); i++) {
		if (arches[i].machine != machine)
			continue;
		t->arch = arches[i].name;
		for (size_t j = 0; j < ARRAY_SIZE(arches[i].uname); j++)
			if (arches[i].uname[j] && !strcmp(arches[i].uname[j], host))
				t->arch_matches = true;
	}
}

static void describe_type(struct doctor_target *t, const struct elf_info *ei)
{
	switch (ei->ehdr.e_type) {
	case ET_EXEC:
		t->type = "executable";
		break;
	case ET_DYN:
		t->pie = ei->has_interp || ei->flags_pie;
		t->type = t->pie ? "pie" : "shared-library";
		break;
	case ET_REL:
		t->type = "relocatable";
		break;
	case ET_CORE:
		t->type = "core";
		break;
	default:
		t->type = "unknown";
		break;
	}
}

/* Read what the file says about itself; a problem lands in t->error. */
static void inspect_elf(struct doctor_target *t, int fd)
{
	struct elf_info ei;

	memset(&ei, 0, sizeof(ei));
	if (elf_version(EV_CURRENT) == EV_NONE) {
		t->error = xstrfmt("libelf: %s", elf_errmsg(-1));
		return;
	}
	ei.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!ei.elf || elf_kind(ei.elf) != ELF_K_ELF || !gelf_getehdr(ei.elf, &ei.ehdr)) {
		t->error = xstrdup(elf_errno() ? elf_errmsg(-1) : "truncated or corrupt ELF header");
		goto out;
	}
	describe_arch(t, ei.ehdr.e_machine);
	if (elf_getshdrstrndx(ei.elf, &ei.shstrndx))
		ei.shstrndx = 0;
	read_sections(t, &ei);
	read_segments(t, &ei);
	describe_type(t, &ei);
	if (!t->debug_info)
		find_debug_file(t, &ei);
	if (t->debug_file)
		t->debug_info = true;
	check_frame_pointers(t, &ei);
out:
	free(ei.code);
	free(ei.debuglink);
	if (ei.elf)
		elf_end(ei.elf);
}

static void target_checks(struct doctor *d, const struct doctor_target *t,
			  const char *interp)
{
	char host[65];

	if (!t->is_elf && t->error) {
		add_check(d, "target", DOCTOR_FAIL, "make the file readable (hotloop reads its symbols)",
			  "cannot read '%s': %s", t->path, t->error);
		return;
	}
	if (!t->is_elf) {
		if (interp)
			add_check(d, "target", DOCTOR_WARN,
				  "check the programs it runs: hotloop doctor -- PROGRAM",
				  "'%s' is not an ELF file but a script for %s: samples land in the interpreter",
				  t->path, interp);
		else
			add_check(d, "target", DOCTOR_FAIL,
				  "hotloop profiles native ELF programs; give it one",
				  "'%s' is not an ELF file", t->path);
		return;
	}
	if (t->error) {
		add_check(d, "target", DOCTOR_FAIL, "rebuild it: the file is damaged or truncated",
			  "cannot read ELF file '%s': %s", t->path, t->error);
		return;
	}
	if (!t->arch_matches)
		add_check(d, "target", DOCTOR_FAIL, "profile it on a machine of its architecture",
			  "'%s' is built for %s; this machine is %s", t->path, t->arch,
			  host_machine(host, sizeof(host)));
	else if (!strcmp(t->type, "relocatable") || !strcmp(t->type, "core") ||
		 !strcmp(t->type, "unknown"))
		add_check(d, "target", DOCTOR_FAIL, "give hotloop a linked program",
			  "'%s' is an ELF %s file, not a program", t->path, t->type);
	else
		add_check(d, "target", DOCTOR_OK, NULL, "'%s': ELF %s %s", t->path, t->arch,
			  t->pie ? "PIE executable" : !strcmp(t->type, "executable")
				 ? "executable at a fixed address" : "shared library");

	if (t->has_symtab)
		add_check(d, "symbols", DOCTOR_OK, NULL, "symbol table with %zu functions",
			  t->nr_func_symbols);
	else if (t->debug_file && t->nr_func_symbols)
		add_check(d, "symbols", DOCTOR_OK, NULL,
			  "stripped, but its debug file has a symbol table");
	else
		add_check(d, "symbols", DOCTOR_WARN,
			  "rebuild without stripping (no -s, no `strip`), or install its debug symbols",
			  "stripped (no .symtab): only exported functions get names, the rest show as addresses");

	if (t->debug_file)
		add_check(d, "debug_info", DOCTOR_OK, NULL, "debug info in '%s'", t->debug_file);
	else if (t->debug_info)
		add_check(d, "debug_info", DOCTOR_OK, NULL, "DWARF debug info present");
	else
		add_check(d, "debug_info", DOCTOR_WARN, REMEDY_DEBUG,
			  "no debug info: no source lines, no inline frames");

	if (t->build_id)
		add_check(d, "build_id", DOCTOR_OK, NULL, "build id %s", t->build_id);
	else
		add_check(d, "build_id", DOCTOR_WARN, "link with -Wl,--build-id",
			  "no build id: a profile cannot be matched to this exact binary later");

	if (t->frame_pointers < 0) {
		const char *why = "no function symbols";

		if (strcmp(t->arch, "x86-64") && strcmp(t->arch, "i386") && strcmp(t->arch, "aarch64"))
			why = "no prologue check for this architecture";
		else if (t->fp_neutral)
			why = "none of its functions uses the stack";
		else if (t->nr_func_symbols)
			why = "no code found for its functions";
		add_check(d, "frame_pointers", DOCTOR_WARN, REMEDY_NO_FP,
			  "cannot tell whether it keeps frame pointers (%s)", why);
	} else if (t->frame_pointers) {
		add_check(d, "frame_pointers", DOCTOR_OK, NULL,
			  "%zu of %zu functions that need a frame set up a frame pointer",
			  t->fp_with, t->fp_checked);
	} else {
		add_check(d, "frame_pointers", DOCTOR_WARN, REMEDY_NO_FP,
			  "%zu of %zu functions that need a frame set up a frame pointer: built without frame pointers",
			  t->fp_with, t->fp_checked);
	}

	if (t->nr_needed) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < t->nr_needed; i++)
			strbuf_addf(&sb, "%s%s", i ? ", " : "", t->needed[i]);
		add_check(d, "libraries", DOCTOR_OK, NULL, "needs %s", sb.buf);
		strbuf_release(&sb);
	} else {
		add_check(d, "libraries", DOCTOR_OK, NULL, "needs no shared libraries");
	}
}

void doctor_check_target(struct doctor *d, const char *path)
{
	struct doctor_target *t = xcalloc(1, sizeof(*t));
	unsigned char head[256];
	char *interp = NULL;
	ssize_t n;
	int fd;

	target_free(d->target);
	d->target = t;
	t->path = xstrdup(path);
	t->frame_pointers = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		t->error = xstrdup(strerror(errno));
		goto out;
	}
	n = pread(fd, head, sizeof(head) - 1, 0);
	if (n < 0) {
		t->error = xstrdup(strerror(errno));
		goto out_close;
	}
	head[n] = '\0';
	if (n >= 4 && !memcmp(head, ELFMAG, SELFMAG)) {
		t->is_elf = true;
		inspect_elf(t, fd);
	} else if (n >= 2 && head[0] == '#' && head[1] == '!') {
		size_t skip = 2 + strspn((char *)head + 2, " \t");
		interp = xstrndup((char *)head + skip, strcspn((char *)head + skip, " \t\r\n"));
	}
out_close:
	close(fd);
out:
	target_checks(d, t, interp && *interp ? interp : NULL);
	free(interp);
}
