#!/bin/sh
# The profile's first mapping is the main executable (pprof's convention:
# go tool pprof prints it as "File:"), whichever file the first sample
# landed in: the command's program after its last exec, or the attached
# process's /proc/PID/exe. Mapping ids stay dense and every location's
# mapping is its own.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-profile.sh"

test_skip_unless PERF 'perf events not permitted here (run as root or lower kernel.perf_event_paranoid)'
test_skip_unless GO 'go tool pprof is needed to read profiles back'

# first_mapping FILE: the file name of mapping 1
first_mapping() {
	pp_raw "$1" | awk '/^Mappings/ { m = 1; next } m && $1 == "1:" { print $3; exit }'
}

test_expect_success 'cpuhog: File: cpuhog, its mapping first' '
	hotloop record -o cpu.pb.gz -- "$WORKLOADS/cpuhog" 0.2 &&
	pp_traces cpu.pb.gz >traces &&
	expect_grep "^File: cpuhog\$" traces &&
	test "$(first_mapping cpu.pb.gz)" = "$(cd "$WORKLOADS" && pwd)/cpuhog"
'

test_expect_success 'mapping ids are dense and hot_spin lies in mapping 1' '
	pp_raw cpu.pb.gz >raw &&
	awk "/^Mappings/ { m = 1; next } m && \$1 ~ /^[0-9]+:\$/ { n++; if (\$1 != n \":\") bad = 1 }
	     END { exit bad || !n }" raw &&
	expect_grep "M=1 hot_spin " raw
'

test_expect_success 'a command with no sample in its program still leads with it' '
	hotloop record -o true.pb.gz -- /bin/true &&
	test "$(first_mapping true.pb.gz)" = "$(readlink -f /bin/true)"
'

test_expect_success 'sh -c runs a child: the shell is the main executable' '
	hotloop record -o sh.pb.gz -- sh -c "\"$WORKLOADS/cpuhog\" 0.2; true" &&
	test "$(first_mapping sh.pb.gz)" = "$(readlink -f "$(command -v sh)")" &&
	test "$(pp_top_self sh.pb.gz)" = hot_spin
'

test_expect_success '-p: the attached process'\''s executable first' '
	"$WORKLOADS/cpuhog" 5 &
	pid=$! &&
	test_when_finished "kill $pid" &&
	sleep 0.2 &&
	hotloop record -p $pid --duration 0.3 -o att.pb.gz &&
	test "$(first_mapping att.pb.gz)" = "$(readlink /proc/$pid/exe)"
'

test_done
