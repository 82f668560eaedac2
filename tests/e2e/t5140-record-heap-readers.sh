#!/bin/sh
# A heap profile is read by every reader: report, flame and brief with
# --sample-type, convert, and two independent decoders (pprof-format, and
# go tool pprof) that find the same totals as hotloop report.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-heap.sh"

test_expect_success 'setup: a heap profile of heapsite' '
	hotloop record --heap --heap-rate 1 -o h.pb.gz -- "$WORKLOADS/heapsite" >/dev/null 2>err
'

test_expect_success 'report: each sample type, totals equal to the independent decoder' '
	NODE_PATH=$NPM node "$TEST_DIR/pprof-check.js" h.pb.gz >check.json &&
	i=0 &&
	for t in alloc_objects alloc_space inuse_objects inuse_space leak_objects leak_space temp_objects; do
		hotloop report --json --sample-type $t h.pb.gz >r.json &&
		test "$(jq .total r.json)" = "$(jq ".totals[$i]" check.json)" || { echo "$t"; exit 1; }
		i=$((i + 1))
	done
'

if test_have_prereq GO; then
test_expect_success 'go tool pprof -top: the same totals as hotloop report, each sample type' '
	for t in alloc_objects alloc_space inuse_objects inuse_space leak_objects leak_space temp_objects; do
		hotloop report --json --sample-type $t h.pb.gz >r.json &&
		go tool pprof -sample_index=$t -top -unit=B h.pb.gz >top.txt 2>top.err &&
		go_total=$(sed -n "s/^Showing nodes accounting for .* of \([0-9]*\)B* total\$/\1/p" top.txt) &&
		test "$go_total" = "$(jq .total r.json)" || { echo "$t: go $go_total"; cat top.txt top.err; exit 1; }
	done
'
else
	test_skip 'go tool pprof -top: the same totals as hotloop report' 'needs go (apt-get install golang-go)'
fi

test_expect_success 'flame: --sample-type leak_space draws keep_cache' '
	hotloop flame --sample-type leak_space -o leak.svg h.pb.gz &&
	expect_grep keep_cache leak.svg &&
	! grep -q make_records leak.svg
'

test_expect_success 'brief: --sample-type alloc_objects puts make_records first' '
	hotloop brief --format json --sample-type alloc_objects h.pb.gz >b.json &&
	jq -e ".hotspots[0].function == \"make_records\" or .hotspots[0].name == \"make_records\"" b.json
'

test_expect_success 'an unknown sample type: the error lists the heap ones' '
	! hotloop report --sample-type cpu h.pb.gz 2>err &&
	expect_grep alloc_space err
'

test_done
