#!/bin/sh
# hotloop catalog scan --profile: findings in hot functions first with
# their function's self and total share, those without samples last or
# dropped by --min-share; in text, JSON and SARIF. strlenloop has
# strlen-in-loop-condition in its hot count_upper and alloc-in-loop in
# make_lines, which runs once.
. "$(dirname "$0")/test-lib.sh"

SRC=$ROOT/tests/workloads/strlenloop.c

test_expect_success 'setup: a folded profile where count_upper is hot' '
	cp "$SRC" . &&
	printf "main;scan_lines;count_upper;strlen 90\nmain;scan_lines;count_upper 8\nmain 2\n" >prof.folded
'

test_expect_success 'text: the hot finding first with its shares, no samples after' '
	{ hotloop catalog scan --profile prof.folded strlenloop.c >out 2>/dev/null; test $? -eq 4; } &&
	sed -n 1p out | grep -q "^ 98.0% total   8.0% self  strlenloop.c:[0-9]*:[0-9]*: warning: .*\[strlen-in-loop-condition\] in count_upper()$" &&
	sed -n 2p out | grep -q "^  no samples  .*\[alloc-in-loop\] in make_lines()$"
'

test_expect_success 'without a profile the order is the file order' '
	hotloop catalog scan strlenloop.c >plain 2>/dev/null
	sed -n 1p plain | grep -q "^strlenloop.c:.*\[strlen-in-loop-condition\]$" &&
	sed -n 2p plain | grep -q "^strlenloop.c:.*\[alloc-in-loop\]$"
'

test_expect_success 'json and sarif carry the shares' '
	hotloop catalog scan --profile prof.folded --format json strlenloop.c >out.json 2>/dev/null
	jq -e ".findings[0] | .rule == \"strlen-in-loop-condition\" and .function == \"count_upper\" and
	       .sampled == true and .total_share == 0.98 and .self_share == 0.08" out.json &&
	jq -e ".findings[1] | .function == \"make_lines\" and .sampled == false and .total_share == 0" out.json &&
	hotloop catalog scan --profile prof.folded --format sarif strlenloop.c >out.sarif 2>/dev/null
	jq -e ".runs[0].results[0] | .ruleId == \"strlen-in-loop-condition\" and .rank == 98 and
	       .properties.function == \"count_upper\" and .properties.totalShare == 0.98 and
	       .properties.selfShare == 0.08" out.sarif &&
	jq -e ".runs[0].results[1].properties.sampled == false" out.sarif
'

test_expect_success '--min-share drops the findings of colder functions' '
	hotloop catalog scan --profile prof.folded --min-share 5% strlenloop.c >min 2>/dev/null
	test $(wc -l <min) -eq 1 && grep -q "strlen-in-loop-condition" min
'

test_expect_code 2 '--min-share without --profile is a usage error' '
	hotloop catalog scan --min-share 5 strlenloop.c 2>err; rc=$?
	expect_grep "needs --profile" err || exit 99; exit $rc
'

test_expect_code 1 'a profile that does not read is an error' '
	echo "not a profile" >bad.pb.gz &&
	hotloop catalog scan --profile bad.pb.gz strlenloop.c 2>err
'

if test_have_prereq PERF; then
test_expect_success 'a recording of strlenloop: the hot strlen finding first, with most of the time' '
	hotloop record -o rec.pb.gz -- "$WORKLOADS/strlenloop" 2>/dev/null &&
	hotloop catalog scan --profile rec.pb.gz --format json "$SRC" >rec.json 2>/dev/null
	jq -e ".findings[0] | .rule == \"strlen-in-loop-condition\" and .function == \"count_upper\" and
	       .sampled and .total_share > 0.5" rec.json &&
	jq -e ".findings[1] | .rule == \"alloc-in-loop\" and .total_share < .5" rec.json
'
else
test_skip 'a recording of strlenloop: the hot strlen finding first' 'perf events are not available'
fi

test_done
