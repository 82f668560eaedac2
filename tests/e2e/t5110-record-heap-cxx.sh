#!/bin/sh
# record --heap on a C++ program: std::string and std::map allocate through
# libstdc++ (operator new, which keeps no frame pointers), and the stacks go
# through it to the owned function that made the index. 20000 keys: libstdc++'s
# emergency pool (71 KiB, allocated before main) stays a small part.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-heap.sh"

test_expect_success 'every allocation of cxxheap is recorded, through operator new' '
	hotloop record --heap --heap-rate 1 -o cxx.pb.gz -- "$WORKLOADS/cxxheap" 20000 >out 2>err &&
	heap_samples cxx.pb.gz >cxx.json &&
	tail -n +2 cxx.json | jq -s -e "[.[] | select(.stack[0] | test(\"^operator new\"))] | length > 0"
'

test_expect_success 'nearly all bytes have build_index, the owned caller, on their stack' '
	all=$(tail -n +2 cxx.json | jq -s "[.[].values.alloc_space] | add") &&
	owned=$(heap_sum cxx.json alloc_space build_index) &&
	test $((owned * 100)) -ge $((all * 95)) || { echo "$owned of $all"; exit 1; }
'

test_expect_success 'report gives build_index nearly all bytes by total' '
	hotloop report --json --sort total --top 0 cxx.pb.gz >rep.json &&
	jq -e "[.rows[] | select(.name == \"build_index\")][0].total_pct > 95" rep.json
'

test_expect_success 'the map nodes: one per key, 20000, under build_index' '
	tail -n +2 cxx.json | jq -s -e "[.[] | select((.stack[1] | test(\"new_allocator<std::_Rb_tree_node\"))
		and (.stack | index(\"build_index\"))) | .values.alloc_objects] | add == 20000"
'

test_expect_success 'allocations before main are counted: libstdc++'"'"'s emergency pool' '
	tail -n +2 cxx.json | jq -s -e "[.[] | select(.stack | index(\"main\") | not) |
		.values.alloc_space] | add >= 65536"
'

test_done
