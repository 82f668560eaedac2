#!/bin/sh
# record --heap on heapsite, whose sites have known counts: with
# --heap-rate 1 every count is exact (the planted site, its temporaries,
# the planted leak, the realloc site); sampled, the planted site is on top
# of alloc_space and its estimate is near the truth.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-heap.sh"

test_expect_success 'every allocation: the run goes on, the profile is written' '
	hotloop record --heap --heap-rate 1 -o all.pb.gz -- "$WORKLOADS/heapsite" >out 2>err &&
	test "$(cat out)" = ok &&
	expect_grep "wrote .all.pb.gz. and .all.heap.csv." err &&
	heap_samples all.pb.gz >all.json
'

test_expect_success 'the heap model: sample types, default, period, comments' '
	head -n 1 all.json | jq -e ".sample_types == [\"alloc_objects/count\", \"alloc_space/bytes\",
		\"inuse_objects/count\", \"inuse_space/bytes\", \"leak_objects/count\",
		\"leak_space/bytes\", \"temp_objects/count\"] and .default == \"alloc_space\" and
		.period_type == \"space/bytes\" and .period == 1 and
		(.comments | index(\"hotloop-heap: rate=1\")) and
		(.comments | map(select(test(\"^heap-peak=[0-9]+$\"))) | length == 1)"
'

test_expect_success 'every allocation: the planted site counts exactly' '
	test "$(heap_leaf_sum all.json alloc_objects make_records)" = 20000 &&
	test "$(heap_leaf_sum all.json alloc_space make_records)" = 2000000 &&
	test "$(heap_leaf_sum all.json temp_objects make_records)" = 20000 &&
	test "$(heap_leaf_sum all.json leak_objects make_records)" = 0
'

test_expect_success 'every allocation: the planted leak, live at exit' '
	test "$(heap_leaf_sum all.json leak_objects keep_cache)" = 50 &&
	test "$(heap_leaf_sum all.json leak_space keep_cache)" = 50000 &&
	test "$(heap_leaf_sum all.json temp_objects keep_cache)" = 0
'

test_expect_success 'every allocation: the leak is in use at the peak too' '
	test "$(heap_leaf_sum all.json inuse_space keep_cache)" = 50000
'

test_expect_success 'the realloc site carries op=realloc, 12 growths' '
	tail -n +2 all.json | jq -s -e "[.[] | select(.stack[0] == \"grow_buffer\" and
		.labels.op == \"realloc\") | .values.alloc_objects] | add == 12" &&
	tail -n +2 all.json | jq -s -e "[.[] | select(.stack[0] == \"grow_buffer\" and
		.labels.op == \"malloc\") | .values.alloc_objects] | add == 1"
'

test_expect_success 'the leak on top of leak_space, the planted site on top of alloc_space' '
	hotloop report --json --sample-type leak_space all.pb.gz >leak.json &&
	jq -e ".rows[0].name == \"keep_cache\"" leak.json &&
	hotloop report --json all.pb.gz >alloc.json &&
	jq -e ".sample_type == \"alloc_space/bytes\" and .rows[0].name == \"make_records\"" alloc.json
'

test_expect_success 'sampled: the planted site on top, its bytes estimated near the truth' '
	hotloop record --heap --heap-rate 4KiB -o s.pb.gz -- "$WORKLOADS/heapsite" >out 2>err &&
	test "$(cat out)" = ok &&
	heap_samples s.pb.gz >s.json &&
	head -n 1 s.json | jq -e ".period == 4096" &&
	hotloop report --json s.pb.gz >s-rep.json &&
	jq -e ".rows[0].name == \"make_records\"" s-rep.json &&
	b=$(heap_leaf_sum s.json alloc_space make_records) &&
	# 500 samples on average: a standard error of 4.5%; 25% is 5 of them
	test "$b" -gt 1500000 && test "$b" -lt 2500000 || { echo "estimate $b"; exit 1; }
'

test_expect_success 'the heap over time: a CSV beside the profile' '
	head -n 1 all.heap.csv >head &&
	test "$(cat head)" = "seconds,pid,live_bytes"
'

test_done
