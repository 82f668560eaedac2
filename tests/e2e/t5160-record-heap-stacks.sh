#!/bin/sh
# record --heap with far more distinct stacks than it may keep: manystacks
# makes 2^16 of them; with --heap-max-stacks 1000 the stacks past the limit
# are cut to the function that called malloc, record says so, every count
# stays exact, and hotloop's memory stays well below what it needs without
# the limit.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-heap.sh"

[ -x /usr/bin/time ] || skip_all="/usr/bin/time is not installed (Debian's time package): no max RSS"

test_expect_success 'past 1000 stacks: a warning that says what was cut' '
	/usr/bin/time -f "%M" -o cut.rss "$HOTLOOP" record --heap --heap-rate 1 --heap-max-stacks 1000 \
		-o cut.pb.gz -- "$WORKLOADS/manystacks" 16 >out 2>err &&
	grep -q "^allocs=131072 bytes=6225920$" out &&
	grep "warning: more than 1000 distinct stacks (--heap-max-stacks): the stacks of [0-9]* allocations" err &&
	grep "the totals keep them all" err
'

test_expect_success 'every allocation and byte of down() is counted' '
	heap_samples cut.pb.gz >cut.json &&
	test "$(heap_sum cut.json alloc_objects down)" = 131072 &&
	test "$(heap_sum cut.json alloc_space down)" = 6225920
'

test_expect_success 'the profile holds about 1000 stacks, not 65536' '
	n=$(tail -n +2 cut.json | jq -s "length") &&
	test "$n" -le 1100 || { echo "$n samples"; exit 1; }
'

test_expect_success 'the stacks within the limit are whole: down under left or right, 16 deep' '
	tail -n +2 cut.json | jq -s -e "[.[] | select(.stack[0] == \"down\" and
		([.stack[] | select(. == \"down\")] | length) == 17)] | length >= 900"
'

test_expect_success 'a cut stack says so in the profile (label unwind), a whole one does not' '
	tail -n +2 cut.json | jq -s -e "[.[] | select(.labels.unwind == \"cut: too many distinct stacks\")] |
		length >= 1 and all(.stack | length <= 2)" &&
	tail -n +2 cut.json | jq -s -e "[.[] | select(.labels.unwind == null)] |
		length >= 900 and all(.stack | length >= 17)"
'

test_expect_success 'without the limit hotloop needs more than twice the memory' '
	/usr/bin/time -f "%M" -o all.rss "$HOTLOOP" record --heap --heap-rate 1 \
		-o all.pb.gz -- "$WORKLOADS/manystacks" 16 >out2 2>err2 &&
	! grep -q "distinct stacks" err2 &&
	cut=$(tail -n 1 cut.rss) all=$(tail -n 1 all.rss) &&
	echo "max RSS: $cut KiB with the limit, $all KiB without" &&
	test $((cut * 2)) -lt "$all"
'

test_expect_code 2 'a --heap-max-stacks of 0 is a usage error' '
	hotloop record --heap --heap-max-stacks 0 -- true
'

test_expect_code 2 '--heap-max-stacks without --heap is a usage error' '
	hotloop record --heap-max-stacks 10 -- true
'

test_done
