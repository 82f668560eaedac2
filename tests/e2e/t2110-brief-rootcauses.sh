#!/bin/sh
# brief's proof: on each program of tests/workloads/rootcauses.txt, with
# one planted root cause, that function is hotspot #1 of the brief and
# carries the expected tag.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF 'perf events are not available to this user (hotloop doctor says why)'

table=$ROOT/tests/workloads/rootcauses.txt
grep -v '^#' "$table" | grep -v '^$' >"$SCRATCH/rootcauses" || :

while IFS='	' read -r prog args fn tag rec; do
	test_expect_success "$prog: hotspot #1 is $fn, tagged $tag" '
		hotloop record $rec -o $prog.pb.gz -- "$WORKLOADS/$prog" $args >/dev/null 2>&1 &&
		hotloop brief --owned "$ROOT/tests/workloads" --json $prog.pb.gz >$prog.json &&
		jq -e --arg fn "$fn" --arg tag "$tag" \
			".hotspots[0].function == \$fn and ([.hotspots[0].tags[].tag] | index(\$tag) != null)" \
			$prog.json >/dev/null || {
			echo "brief of $prog:"
			jq -r ".hotspots[] | \"  \\(.rank). \\(.function) \\(.attributed_pct | floor)% [\\([.tags[].tag] | join(\",\"))] \\(.asm // \"\")\"" $prog.json
			exit 1
		}
	'
done <"$SCRATCH/rootcauses"

test_done
