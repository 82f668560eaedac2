#!/bin/sh
# --call-graph fp: a function without a frame of its own (a leaf built
# without one, libc's string routines, a syscall wrapper) must not hide its
# caller. The kernel's frame pointer walk skips it; record finds it with
# the call frame information from the sample's registers and stack copy.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-profile.sh"

test_skip_unless PERF 'perf events not permitted here (run as root or lower kernel.perf_event_paranoid)'
test_skip_unless GO 'go tool pprof is needed to read profiles back'

# caller_share FILE CALLEE_RE CALLER_RE [BELOW_RE]: "N M", M samples have a
# frame matching CALLEE_RE (right above a frame matching BELOW_RE, when
# given), N of them with a caller matching CALLER_RE right above it.
caller_share() {
	go tool pprof -traces -symbolize=none -sample_index=samples "$1" 2>/dev/null |
	awk -v callee="$2" -v caller="$3" -v below="${4:-}" '
		/^-+\+/ { v = ""; pending = 0; prev = ""; next }
		$1 ~ /:$/ { next }
		v == "" && $1 ~ /^[0-9]+$/ { v = $1 }
		v != "" {
			f = $NF == "(inline)" ? $(NF - 1) : $NF
			if (pending && f ~ caller) hit += v
			pending = 0
			if (f ~ callee && (below == "" || prev ~ below)) { total += v; pending = 1 }
			prev = f
		}
		END { print hit + 0, total + 0 }'
}

# at least 90% of M, and M not tiny
mostly() {
	echo "$1 of $2 samples"
	test "$2" -ge 20 && test $(($1 * 10)) -ge $(($2 * 9))
}

# repeated FILE NAMES_RE: stacks with a frame matching NAMES_RE twice in a row
repeated() {
	pp_traces "$1" | awk -v names="$2" '
		/^-+\+/ { prev = ""; next }
		$1 ~ /:$/ { next }
		{
			f = $NF == "(inline)" ? $(NF - 1) : $NF
			if (f == prev && f ~ names) print "repeated: " f
			prev = f
		}'
}

test_expect_success 'cpuhog: hot_spin (no frame of its own) is called from run_loop' '
	hotloop record --call-graph fp -o cpu.pb.gz -- "$WORKLOADS/cpuhog" 0.5 &&
	set -- $(caller_share cpu.pb.gz "^hot_spin\$" "^run_loop\$") &&
	mostly "$1" "$2"
'

test_expect_success 'cpuhog: no frame is repeated, run_loop is at most 100%' '
	repeated cpu.pb.gz "^(hot_spin|cold_spin|run_loop|main|__libc_start_call_main)\$" >rep &&
	test ! -s rep &&
	hotloop report --json --top 0 cpu.pb.gz >rep.json &&
	total=$(jq .total rep.json) &&
	run_loop=$(jq ".rows[] | select(.name==\"run_loop\") | .total" rep.json) &&
	echo "run_loop $run_loop of $total" &&
	test "$run_loop" -gt 0 && test "$run_loop" -le "$total"
'

test_expect_success 'libc strlen is called from count_long, not from its caller' '
	hotloop record -o strlen.pb.gz -- "$WORKLOADS/libccall" 0.5 strlen &&
	set -- $(caller_share strlen.pb.gz "^(__)?strlen" "^count_long\$") &&
	mostly "$1" "$2" &&
	set -- $(caller_share strlen.pb.gz "^(__)?strlen" "^(run_strlen|main)\$") &&
	test "$1" -eq 0 &&
	pp_calls strlen.pb.gz run_strlen count_long &&
	repeated strlen.pb.gz "^(count_long|run_strlen|main)\$" >rep &&
	test ! -s rep
'

wrapper='^(__GI___libc_write|__libc_write|__write|write)$'

test_expect_success 'libc write wrapper is called from write_many' '
	hotloop record -o write.pb.gz -- "$WORKLOADS/libccall" 0.5 write &&
	set -- $(caller_share write.pb.gz "$wrapper" "^write_many\$") &&
	mostly "$1" "$2"
'

test_expect_success 'samples in the kernel: the user part starts at the wrapper, then write_many' '
	set -- $(caller_share write.pb.gz "$wrapper" "^write_many\$" "^entry_SYSCALL") &&
	if test "$2" -eq 0; then
		echo "no kernel frames in this profile (kernel sampling refused?)" &&
		! pp_calls write.pb.gz __libc_write entry_SYSCALL_64_after_hwframe
	else
		mostly "$1" "$2"
	fi
'

test_expect_success 'a program without frame pointers: the leaf'\''s caller is found' '
	hotloop record --call-graph fp -o nofp.pb.gz -- "$WORKLOADS/nofp" 0.5 &&
	set -- $(caller_share nofp.pb.gz "^leaf_work\$" "^middle_work\$") &&
	mostly "$1" "$2"
'

test_done
