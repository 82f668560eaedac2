#!/bin/sh
# brief's nested-loop tag: a quadratic dedupe (for each element, a scan of
# the values kept so far) has most of its samples in a loop inside a loop
# and gets the tag, its evidence and its question; one pass over sorted
# input (a single loop) does not.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF 'perf events are not available to this user (hotloop doctor says why)'

test_expect_success 'quadratic dedupe: nested-loop, with depth, share and both loops'"'"' lines' '
	hotloop record -o dd.pb.gz -- "$WORKLOADS/dedupe" 0.4 >/dev/null 2>&1 &&
	hotloop brief --owned "$ROOT/tests/workloads" --json dd.pb.gz >dd.json &&
	jq -e ".hotspots[0].function == \"dedupe\"" dd.json >/dev/null &&
	jq -r ".hotspots[0].tags[] | select(.tag == \"nested-loop\") | .evidence" dd.json >ev &&
	expect_grep "^[0-9]*% of the function.s samples are in the loop 0x[0-9a-f]*-0x[0-9a-f]* (dedupe.c:[0-9-]*), at loop depth [2-9]: inside the loop 0x[0-9a-f]*-0x[0-9a-f]* (dedupe.c:[0-9-]*)$" ev &&
	jq -e "any(.questions[]; (.question | test(\"scan inside a scan\")) and .hotspots == [1])" dd.json >/dev/null &&
	hotloop brief --owned "$ROOT/tests/workloads" dd.pb.gz >dd.md &&
	expect_grep "^- tag .nested-loop.: " dd.md &&
	expect_grep "quadratic in the input? .hotloop scale. tells" dd.md
'

test_expect_success 'one pass over sorted input: no nested-loop' '
	hotloop record -o dl.pb.gz -- "$WORKLOADS/dedupe" 0.4 linear >/dev/null 2>&1 &&
	hotloop brief --owned "$ROOT/tests/workloads" --json dl.pb.gz >dl.json &&
	jq -e ".hotspots[0].function == \"dedupe_sorted\"" dl.json >/dev/null &&
	jq -e "all(.hotspots[]; [.tags[].tag] | index(\"nested-loop\") == null)" dl.json >/dev/null
'

test_expect_success 'hotloop asm says the same of the code' '
	hotloop asm "$WORKLOADS/dedupe" --fn dedupe.constprop.0 --profile dd.pb.gz --json >a.json 2>/dev/null ||
	hotloop asm "$WORKLOADS/dedupe" --fn dedupe --profile dd.pb.gz --json >a.json &&
	jq -e "[.tags[].name] | index(\"nested-loop\") != null" a.json >/dev/null &&
	jq -e "any(.loops[]; .depth >= 2)" a.json >/dev/null
'

test_done
