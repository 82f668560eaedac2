#!/bin/sh
# heaptrack's files as heap profiles: the planted sites of the heap-imp
# workload, recorded with heaptrack here, come out on top of the memory
# brief with their tags; the totals are heaptrack_print's; report, flame
# and flame --diff take the heap sample types; damaged files are errors.
. "$(dirname "$0")/test-lib.sh"

WL=$WORKLOADS/heap-imp
command -v jq >/dev/null || skip_all="needs jq (apt-get install jq)"
if [ -z "$skip_all" ]; then
	if ! command -v heaptrack >/dev/null; then
		skip_all="needs heaptrack (apt-get install heaptrack)"
	elif ! heaptrack -o probe "$WL" loop >probe.log 2>&1 || ! [ -s probe.zst ]; then
		skip_all="heaptrack cannot run here: $(tail -n 1 probe.log)"
	fi
fi

record() {
	heaptrack -o "hi-$1" "$WL" "$1" >"hi-$1.log" 2>&1 && test -s "hi-$1.zst"
}

# site MODE FUNCTION TAG: FUNCTION is the top site by bytes and has TAG
site() {
	record "$1" &&
	hotloop brief --json --owned "$ROOT/tests/workloads" "hi-$1.zst" >"b-$1.json" &&
	jq -e --arg f "$2" --arg t "$3" '
		.heap.sites[0].function == $f and
		([.heap.sites[0].tags[].tag] | index($t) != null) and
		(.heap.sites[0].tags[] | select(.tag == $t) | .evidence | type == "string" and length > 0)
	' "b-$1.json" >/dev/null || { jq .heap "b-$1.json"; return 1; }
}

test_expect_success 'a site allocating in its caller loop: alloc-in-loop' '
	site loop make_node alloc-in-loop &&
	jq -e ".heap.sites[0].tags[] | select(.tag == \"alloc-in-loop\") | .evidence |
		test(\"build_list\")" b-loop.json >/dev/null
'

test_expect_success 'a table never freed: leak' '
	site leak leak_table leak &&
	jq -e ".heap.sites[0].leak_space == 2097152 and .heap.sites[0].leak_objects == 1" b-leak.json >/dev/null
'

test_expect_success 'a buffer grown by realloc: realloc-growth, with its sizes' '
	site realloc grow_buffer realloc-growth &&
	jq -e ".heap.sites[0].realloc_objects >= 390" b-realloc.json >/dev/null
'

test_expect_success 'a buffer freed right after use: short-lived' '
	site temp scratch_copy short-lived &&
	jq -e ".heap.sites[0].temp_objects == 20000" b-temp.json >/dev/null
'

test_expect_success 'the Markdown brief lists the sites and the evidence' '
	hotloop brief --owned "$ROOT/tests/workloads" hi-leak.zst >b.md &&
	expect_grep "## Allocation sites" b.md &&
	expect_grep "| 1 | .leak_table." b.md &&
	expect_grep "leak_table. leak: 2097152 bytes" b.md
'

# heaptrack_print's human figures: 1000-based, two decimals
human() {
	awk -v v="$1" "BEGIN { u = \"BKMGT\"; i = 1; while (v >= 1000 && i < 5) { v /= 1000; i++ }
		if (i == 1) printf \"%dB\\n\", v; else printf \"%.2f%s\\n\", v, substr(u, i, 1) }"
}

test_expect_success 'totals equal heaptrack_print: calls, temporary, peak, leaked, allocated' '
	for m in loop leak realloc temp; do
		heaptrack_print -f "hi-$m.zst" >"p-$m.txt" 2>/dev/null &&
		calls=$(sed -n "s/^calls to allocation functions: \([0-9]*\).*/\1/p" "p-$m.txt") &&
		temp=$(sed -n "s/^temporary memory allocations: \([0-9]*\).*/\1/p" "p-$m.txt") &&
		peak=$(sed -n "s/^peak heap memory consumption: //p" "p-$m.txt") &&
		leak=$(sed -n "s/^total memory leaked: //p" "p-$m.txt") &&
		t=".heap.totals" &&
		test "$(jq "$t.alloc_objects" "b-$m.json")" = "$calls" &&
		test "$(jq "$t.temp_objects" "b-$m.json")" = "$temp" &&
		test "$(human "$(jq "$t.heap_peak" "b-$m.json")")" = "$peak" &&
		test "$(human "$(jq "$t.leak_space" "b-$m.json")")" = "$leak" || {
			echo "$m: heaptrack_print: calls $calls temp $temp peak $peak leaked $leak"
			jq "$t" "b-$m.json"; return 1; }
	done
'

test_expect_success 'report, flame and flame --diff take the heap sample types' '
	hotloop report --sample-type leak_space hi-leak.zst >r.txt &&
	expect_grep "leak_space (bytes)" r.txt &&
	expect_grep "leak_table" r.txt &&
	hotloop report --sample-type temp_objects hi-temp.zst >r2.txt &&
	expect_grep "scratch_copy" r2.txt &&
	hotloop flame --sample-type inuse_space -o f.svg hi-loop.zst &&
	expect_grep "make_node" f.svg &&
	hotloop flame --sample-type alloc_objects --diff hi-loop.zst -o d.svg hi-temp.zst &&
	expect_grep "scratch_copy" d.svg
'

test_expect_success 'convert writes pprof with the same totals' '
	hotloop convert hi-realloc.zst -o hi.pb.gz &&
	hotloop report --sample-type alloc_space --json hi.pb.gz >a.json &&
	hotloop report --sample-type alloc_space --json hi-realloc.zst >b.json &&
	test "$(jq .total a.json)" = "$(jq .total b.json)" &&
	test "$(jq .total a.json)" = "$(jq .heap.totals.alloc_space b-realloc.json)"
'

test_expect_success 'asm --profile finds the module where heaptrack saw it loaded' '
	hotloop asm "$WL" --fn make_node --profile hi-loop.zst --sample-type alloc_objects >asm.txt &&
	expect_grep "samples   20000 alloc_objects in this function" asm.txt
'

if test_have_prereq GO; then
	test_expect_success 'go tool pprof reads the converted file with the same totals' '
		hotloop convert hi-temp.zst -o ht.pb.gz &&
		go tool pprof -sample_index=alloc_objects -raw ht.pb.gz >raw.txt 2>&1 &&
		expect_grep "alloc_objects/count" raw.txt &&
		go tool pprof -sample_index=alloc_space -top ht.pb.gz >top.txt 2>&1 &&
		expect_grep "scratch_copy" top.txt
	'
else
	test_skip 'go tool pprof reads the converted file' 'needs go (apt-get install golang-go)'
fi

test_expect_success 'gzip and uncompressed files read the same' '
	zstd -dc hi-leak.zst >hi-leak.txt && gzip -c hi-leak.txt >hi-leak.gz &&
	hotloop report --sample-type leak_space --json hi-leak.txt >t1.json &&
	hotloop report --sample-type leak_space --json hi-leak.gz >t2.json &&
	test "$(jq .total t1.json)" = 2097152 && test "$(jq .total t2.json)" = 2097152
'

test_expect_success 'a truncated or damaged file is a clear error' '
	head -c 300 hi-leak.zst >cut.zst &&
	! hotloop report cut.zst 2>err &&
	expect_grep "truncated zstd data" err &&
	sed "s/^t 9 /t 9 ffffff/" hi-leak.txt >bad.txt &&
	! hotloop report bad.txt 2>err2 &&
	expect_grep "bad.txt.: line [0-9]*: parent trace index" err2
'

test_done
