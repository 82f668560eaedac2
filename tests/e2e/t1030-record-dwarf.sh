#!/bin/sh
# --call-graph dwarf: a program built without frame pointers still shows its
# callers, unwound from the copied user stack with DWARF CFI.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-profile.sh"

test_skip_unless PERF 'perf events not permitted here (run as root or lower kernel.perf_event_paranoid)'
test_skip_unless GO 'go tool pprof is needed to read profiles back'

test_expect_success 'nofp with dwarf: middle_work calls leaf_work' '
	hotloop record --call-graph dwarf -o dw.pb.gz -- "$WORKLOADS/nofp" 0.5 &&
	test "$(pp_top_self dw.pb.gz)" = leaf_work &&
	pp_calls dw.pb.gz middle_work leaf_work &&
	pp_calls dw.pb.gz main middle_work
'

test_expect_success 'dwarf with an explicit stack size, threads followed' '
	hotloop record --call-graph dwarf,8192 -o dwt.pb.gz -- "$WORKLOADS/threads" 0.3 &&
	test "$(pp_top_self dwt.pb.gz)" = thread_spin &&
	pp_label_values dwt.pb.gz thread_spin tid >tids &&
	test $(wc -l <tids) -eq 2
'

test_expect_code 2 'a dwarf stack size out of range is a usage error' '
	hotloop record --call-graph dwarf,100000 -- true
'

test_done
