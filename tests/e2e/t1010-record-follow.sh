#!/bin/sh
# record follows what the command creates: threads (inherit) and forked
# child processes, each sample labelled with its own pid and tid.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-profile.sh"

test_skip_unless PERF 'perf events not permitted here (run as root or lower kernel.perf_event_paranoid)'
test_skip_unless GO 'go tool pprof is needed to read profiles back'

test_expect_success 'threads: thread_spin sampled in two distinct threads' '
	hotloop record -o thr.pb.gz -- "$WORKLOADS/threads" 0.5 &&
	test "$(pp_top_self thr.pb.gz)" = thread_spin &&
	pp_label_values thr.pb.gz thread_spin tid >tids &&
	pp_label_values thr.pb.gz thread_spin pid >pids &&
	test $(wc -l <tids) -eq 2 &&
	test $(wc -l <pids) -eq 1 &&
	! grep -qx "$(cat pids)" tids || { cat pids tids; exit 1; }
'

test_expect_success 'threads: the worker threads carry the command name' '
	pp_raw thr.pb.gz >raw &&
	expect_grep "comm:\[threads\]" raw
'

test_expect_success 'forker: child_spin sampled in two child processes' '
	hotloop record -o fork.pb.gz -- "$WORKLOADS/forker" 0.5 &&
	test "$(pp_top_self fork.pb.gz)" = child_spin &&
	pp_label_values fork.pb.gz child_spin pid >pids &&
	test $(wc -l <pids) -eq 2 || { cat pids; exit 1; }
'

test_expect_success 'forker: children resolve addresses through the maps they inherited' '
	exe=$(cd "$WORKLOADS" && pwd)/forker &&
	test "$(pp_mapping_of fork.pb.gz child_spin)" = "$exe"
'

test_done
