#!/bin/sh
# report --no-inline (and --by symbol) on a workload whose hot function is
# always_inline'd into a function with work of its own: without the flag the
# inlined function is a row of its own; with it the function it was inlined
# into gets both shares, exactly, from the same profile. flame --no-inline
# draws no inlined frame.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF "perf events are not permitted here (see hotloop doctor)"

self_of() { jq "[.rows[] | select(.name == \"$2\")][0].self // 0" "$1"; }

test_expect_success 'setup: record inlinemix' '
	hotloop record -o mix.pb.gz -- "$WORKLOADS/inlinemix" 0.5 2>/dev/null
'

test_expect_success 'without --no-inline: hash_step is an inlined row, scan has its own self' '
	hotloop report --json --top 0 mix.pb.gz >inl.json &&
	jq -e ".no_inline == false" inl.json >/dev/null &&
	jq -e "[.rows[] | select(.name == \"hash_step\")][0] | .inlined and .self > 0" inl.json >/dev/null &&
	jq -e "[.rows[] | select(.name == \"scan\")][0] | (.inlined | not) and .self > 0" inl.json >/dev/null
'

test_expect_success '--no-inline: scan gets the combined self, hash_step is gone' '
	hotloop report --json --top 0 --no-inline mix.pb.gz >sym.json &&
	jq -e ".no_inline == true and .total == $(jq .total inl.json)" sym.json >/dev/null &&
	jq -e "[.rows[] | select(.name == \"hash_step\")] == [] and all(.rows[]; .inlined | not)" sym.json >/dev/null &&
	want=$(( $(self_of inl.json hash_step) + $(self_of inl.json scan) )) &&
	test "$(self_of sym.json scan)" -eq "$want" &&
	test "$(jq -r ".rows[0].name" sym.json)" = scan &&
	hotloop report --no-inline mix.pb.gz >sym.txt &&
	expect_grep "^# .* by function (inlined frames folded into their function)" sym.txt &&
	! grep -q "\[inlined\]" sym.txt
'

test_expect_success '--by symbol is --by function --no-inline' '
	hotloop report --json --top 0 --by symbol mix.pb.gz >bysym.json &&
	cmp sym.json bysym.json
'

test_expect_success '--no-inline --by line: the inlined lines become the call line' '
	hotloop report --json --top 0 --by line mix.pb.gz >lines.json &&
	hotloop report --json --top 0 --by line --no-inline mix.pb.gz >symlines.json &&
	jq -e "[.rows[] | select(.name == \"hash_step\")] | length > 0" lines.json >/dev/null &&
	jq -e "[.rows[] | select(.name == \"hash_step\")] == []" symlines.json >/dev/null &&
	call=$(grep -n "x = hash_step(" "$ROOT/tests/workloads/inlinemix.c" | cut -d: -f1) &&
	jq -e "[.rows[] | select(.name == \"scan\" and .line == $call)][0].self >= $(self_of inl.json hash_step)" symlines.json >/dev/null
'

test_expect_success 'flame --no-inline: no inlined frame' '
	hotloop flame mix.pb.gz -o inl.svg &&
	grep -q "hash_step (inlined;" inl.svg &&
	hotloop flame mix.pb.gz --no-inline -o sym.svg &&
	! grep -q "hash_step" sym.svg &&
	expect_grep "<title>scan (" sym.svg
'

test_done
