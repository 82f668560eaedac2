/*
 * fuzz-doctor.c: libFuzzer target for the doctor's ELF reader. Each input
 * is put in a memory file and inspected as a target program, as
 * `hotloop doctor -- FILE` would: sections, notes, dynamic entries, symbol
 * tables and function prologues all come from the hostile bytes.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"
#include "doctor.h"

static void quiet(const char *prefix, const char *msg)
{
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	set_error_routine(quiet);
	set_warn_routine(quiet);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct doctor d;
	char path[64];
	int fd = memfd_create("fuzz-doctor", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	doctor_init(&d);
	doctor_check_target(&d, path);
	if (!d.target || d.nr_checks == 0)
		abort();	/* a target always yields at least one finding */
	doctor_release(&d);
	close(fd);
	return 0;
}
