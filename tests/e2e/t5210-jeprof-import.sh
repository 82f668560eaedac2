#!/bin/sh
# jemalloc's heap profiles (jeprof.*.heap) as heap profiles: the heap-imp
# workload run under Debian's libjemalloc2 with profiling on, every
# allocation recorded (lg_prof_sample:0) and counted (prof_accum), dumped
# at exit; its planted sites come out on top with their tags, symbolized
# from the mapped files; a hand-written sampled file is unsampled with
# jemalloc's formula; damaged files are errors.
. "$(dirname "$0")/test-lib.sh"

WL=$WORKLOADS/heap-imp
JE=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1)
command -v jq >/dev/null || skip_all="needs jq (apt-get install jq)"

# run MODE: jeprof files of one run, the final dump named je-MODE.f.heap
run() {
	MALLOC_CONF="prof:true,prof_accum:true,prof_final:true,lg_prof_sample:0,prof_prefix:$PWD/je-$1" \
		LD_PRELOAD=$JE "$WL" "$1" >/dev/null 2>&1 &&
	f=$(ls je-"$1".*.f.heap 2>/dev/null | head -n 1) && test -n "$f" && mv "$f" "je-$1.f.heap"
}
jemalloc=true
if [ -z "$JE" ]; then
	jemalloc="needs libjemalloc2 (apt-get install libjemalloc2)"
elif ! run leak; then
	jemalloc="this libjemalloc2 writes no heap profile (built without --enable-prof?)"
fi

site() {
	hotloop brief --json --owned "$ROOT/tests/workloads" "je-$1.f.heap" >"b-$1.json" &&
	jq -e --arg f "$2" --arg t "$3" '
		.heap.sites[0].function == $f and ([.heap.sites[0].tags[].tag] | index($t) != null)
	' "b-$1.json" >/dev/null || { jq .heap "b-$1.json"; return 1; }
}

if [ "$jemalloc" = true ]; then
	test_expect_success 'a leak in the final dump: leak, symbolized from the mapped files' '
		site leak leak_table leak &&
		jq -e ".heap.sites[0].leak_space == 2097152 and
			(.heap.sites[0].file | endswith(\"heap-imp.c\"))" b-leak.json >/dev/null
	'
	test_expect_success 'every allocation counted: alloc-in-loop with exact counts' '
		run loop && site loop make_node alloc-in-loop &&
		jq -e ".heap.sites[0].alloc_objects == 20000" b-loop.json >/dev/null
	'
	test_expect_success 'realloc calls told by the call the program made: realloc-growth' '
		run realloc && site realloc grow_buffer realloc-growth &&
		jq -e ".heap.sites[0].realloc_objects >= 399" b-realloc.json >/dev/null
	'
	test_expect_success 'report takes the heap sample types' '
		hotloop report --sample-type leak_space je-leak.f.heap >r.txt &&
		expect_grep "leak_table" r.txt &&
		hotloop report --sample-type alloc_objects --json je-loop.f.heap >r.json &&
		test "$(jq .total r.json)" -ge 20000
	'
else
	test_skip 'profiles recorded with jemalloc' "$jemalloc"
fi

# by hand, from the documented format: sampled at 2^19 bytes, one stack of
# 10 objects of 1000 bytes (jeprof scales by 1 / (1 - exp(-1000/524288)))
cat >hand.heap <<'END'
heap_v2/524288
  t*: 10: 10000 [20: 20000]
  t0: 10: 10000 [20: 20000]
@ 0x1000 0x2000
  t*: 10: 10000 [20: 20000]
  t0: 10: 10000 [20: 20000]

MAPPED_LIBRARIES:
00400000-00401000 r-xp 00000000 08:01 1234 /nonexistent/prog
END

test_expect_success 'a sampled profile is unsampled with jemalloc formula' '
	hotloop report --sample-type alloc_space --json hand.heap >h.json &&
	want=$(awk "BEGIN { printf \"%d\", 20000 / (1 - exp(-1000 / 524288)) + 0.5 }") &&
	test "$(jq .total h.json)" = "$want" &&
	hotloop report --sample-type inuse_objects --json hand.heap >h2.json &&
	want=$(awk "BEGIN { printf \"%d\", 10 / (1 - exp(-1000 / 524288)) + 0.5 }") &&
	test "$(jq .total h2.json)" = "$want"
'

test_expect_success 'damaged files are clear errors' '
	sed "s/t\*: 10: 10000/t*: 10: x/" hand.heap >bad1.heap &&
	! hotloop report bad1.heap 2>e1 && expect_grep "bad1.heap.: line 2: expected a number" e1 &&
	printf "heap_v2/1\n@ 0x1 0xzz\n" >bad2.heap &&
	! hotloop report bad2.heap 2>e2 && expect_grep "line 2: expected a hexadecimal number" e2 &&
	printf "heap_v2/1\nhello\n" >bad3.heap &&
	! hotloop report bad3.heap 2>e3 && expect_grep "line 2: not a line of a jemalloc heap profile" e3
'

test_done
