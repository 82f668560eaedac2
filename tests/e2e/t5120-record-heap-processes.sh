#!/bin/sh
# record --heap follows a process tree and programs that make an
# interposer's life hard: a fork without exec (the child gets its own
# stream), an exec (followed), a signal handler that allocates, a program
# that closes every descriptor and reuses their numbers, one that writes
# junk into the streams' directory. Each keeps running correctly and is
# recorded.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-heap.sh"

test_expect_success 'fork without exec: both processes recorded, each with its pid' '
	hotloop record --heap --heap-rate 1 -o fork.pb.gz -- "$WORKLOADS/heapsite" fork >out 2>err &&
	test "$(cat out)" = ok &&
	expect_grep "2 processes" err &&
	heap_samples fork.pb.gz >fork.json &&
	test "$(heap_sum fork.json alloc_objects child_work)" = 3000 &&
	test "$(heap_leaf_sum fork.json alloc_objects make_records)" = 23000 &&
	tail -n +2 fork.json | jq -s -e "[.[] | select(.stack | index(\"child_work\")) | .labels.pid] | unique | length == 1" &&
	tail -n +2 fork.json | jq -s -e "[.[].labels.pid] | unique | length == 2"
'

test_expect_success 'the child inherits no leak of its parent: keep_cache once' '
	test "$(heap_leaf_sum fork.json leak_objects keep_cache)" = 50
'

test_expect_success 'exec: a shell that runs the program is followed into it' '
	hotloop record --heap --heap-rate 1 -o sh.pb.gz -- sh -c "\"$WORKLOADS/heapsite\"; exec \"$WORKLOADS/heapsite\"" >out 2>err &&
	test "$(cat out)" = "ok
ok" &&
	heap_samples sh.pb.gz >sh.json &&
	test "$(heap_leaf_sum sh.json alloc_objects make_records)" = 40000
'

test_expect_success 'a signal handler that allocates: the program runs on, its allocations show' '
	hotloop record --heap --heap-rate 1 -o sig.pb.gz -- "$WORKLOADS/heapsite" signal >out 2>err &&
	test "$(cat out)" = ok &&
	heap_samples sig.pb.gz >sig.json &&
	test "$(heap_leaf_sum sig.json leak_objects keep_cache)" = 50 &&
	test "$(heap_sum sig.json alloc_objects on_alarm)" -gt 0
'

test_expect_success 'every descriptor closed, numbers reused: recorded, nothing written astray' '
	hotloop record --heap --heap-rate 1 -o fds.pb.gz -- "$WORKLOADS/heapsite" closefds >out 2>err &&
	test "$(cat out)" = ok &&
	heap_samples fds.pb.gz >fds.json &&
	test "$(heap_leaf_sum fds.json alloc_objects make_records)" = 20000 &&
	test "$(heap_leaf_sum fds.json leak_space keep_cache)" = 50000
'

test_expect_success 'threads: blocks one thread makes and another frees are paired' '
	hotloop record --heap --heap-rate 1 -o hand.pb.gz -- "$WORKLOADS/heapsite" threads >out 2>err &&
	test "$(cat out)" = ok &&
	heap_samples hand.pb.gz >hand.json &&
	test "$(heap_sum hand.json alloc_objects hand_over)" = 30000 &&
	test "$(heap_sum hand.json alloc_space hand_over)" = 1200000 &&
	test "$(heap_sum hand.json leak_objects hand_over)" = 0 &&
	test "$(heap_leaf_sum hand.json leak_objects keep_cache)" = 50 &&
	test "$(heap_leaf_sum hand.json alloc_objects make_records)" = 20300
'

test_expect_success 'threads: a threaded program is recorded and runs to its end' '
	hotloop record --heap --heap-rate 1 -o thr.pb.gz -- "$WORKLOADS/threads" 0.2 >out 2>err &&
	heap_samples thr.pb.gz >thr.json
'

test_expect_success 'the exit status is the command'"'"'s' '
	test_expect_code_inner() { hotloop record --heap -o f.pb.gz -- sh -c "exit 7" 2>err; }
	test_expect_code_inner; test $? = 7
'

test_expect_success 'junk written into the stream directory: skipped, the program still recorded' '
	# a file that is no stream, and one with a stream header and a chunk of 4 GiB
	cat >junk.sh <<-\EOF &&
	"$1" plain || exit 1
	printf "junk" >"$HOTLOOP_HEAP_DIR/heap.1.0"
	{ printf "HLHEAP1\000\003\000\000\000\002\000\000\000\001\000\000\000\000\000\000\000"
	  printf "\001\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000"
	  printf "\360\377\377\377\002\000\000\000"; head -c 70000 /dev/zero; } >"$HOTLOOP_HEAP_DIR/heap.2.0"
	EOF
	hotloop record --heap --heap-rate 1 -o junk.pb.gz -- sh junk.sh "$WORKLOADS/heapsite" >out 2>err &&
	cat err &&
	test "$(cat out)" = ok &&
	expect_grep "skipped the heap stream .heap.1.0." err &&
	expect_grep "ended without writing their end" err &&
	heap_samples junk.pb.gz >junk.json &&
	test "$(heap_leaf_sum junk.json alloc_objects make_records)" = 20000 &&
	test "$(heap_leaf_sum junk.json leak_objects keep_cache)" = 50
'

test_done
