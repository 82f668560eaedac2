#!/bin/sh
# hotloop doctor on damaged ELF files (tests/data/doctor-elf/, inputs the
# fuzzer found): each gets a report with a target line, never a crash, a
# sanitizer report or a leak (exit 99 under the sanitized build).
. "$(dirname "$0")/test-lib.sh"

for f in "$DATA"/doctor-elf/*; do
	name=$(basename "$f")
	test_expect_success "damaged ELF: $name" '
		cp "$f" ./prog && chmod +x ./prog &&
		hotloop doctor -- ./prog >out 2>err; rc=$?
		cat out err
		case $rc in 0|1|3) ;; *) echo "exit $rc"; exit 1 ;; esac
		expect_grep "^\(ok\|warn\|fail\) *target " out && ! test -s err
	'
done

test_done
