#!/bin/sh
# hotloop scale on scalework, whose count_duplicate_pairs is quadratic in N
# and sum_items linear: the exponents come out near 2 and 1, the quadratic
# one is flagged superlinear, and the JSON and each size's profile are
# saved where docs/scale.md says. A run that fails at one size stops
# everything with an error naming the size.
. "$(dirname "$0")/test-lib.sh"

command -v jq >/dev/null || skip_all="needs jq (apt-get install jq)"
test_have_prereq PERF || skip_all="perf events are not permitted here (see hotloop doctor)"

# ~0.5 s at the largest size; at 1999 Hz each function has 30+ samples at the
# smallest, whose 25 ms keep the noise of a busy machine small; three runs
# per size (--repeat 3) keep one disturbed run from bending the fit
SIZES=2500,4000,6300,10000
fn() { jq -e "[.functions[] | select(.function == \"$2\")][0] | $3" "$1" >/dev/null; }

test_expect_success 'the quadratic function ~n^2 and superlinear, the linear one ~n^1' '
	hotloop scale -F 1999 --repeat 3 --sizes $SIZES -- "$WORKLOADS/scalework" {n} >out 2>err &&
	J=.hotloop/scale/cmd.json &&
	jq -r ".functions[] | select(.function == \"count_duplicate_pairs\" or .function == \"sum_items\") |
		\"\(.function) \(.exponent) [\(.ci_low), \(.ci_high)] r2 \(.r2)\"" $J >&2 &&
	fn $J count_duplicate_pairs ".fitted and .exponent >= 1.6 and .exponent <= 2.4 and .superlinear" &&
	fn $J count_duplicate_pairs ".file | endswith(\"scalework.c\")" &&
	fn $J sum_items ".fitted and .exponent >= 0.6 and .exponent <= 1.4 and (.superlinear | not)" &&
	fn $J count_duplicate_pairs ".ci_low <= .exponent and .exponent <= .ci_high and .r2 <= 1" &&
	fn $J main ".cost_seconds[3] > .cost_seconds[0]" &&
	jq -e ".program.fitted and .program.exponent > 1.1 and .program.exponent < 2.4" $J >/dev/null &&
	expect_grep "^count_duplicate_pairs .*~n^[12]\.[0-9] superlinear" out &&
	expect_grep "^sum_items .*~n^[01]\.[0-9] linear" out &&
	expect_grep "^(program)" out &&
	expect_grep "wrote .*\.hotloop/scale/cmd.json. and 4 profiles" err
'

test_expect_success 'the JSON: its keys, types and one run per size, ascending' '
	J=.hotloop/scale/cmd.json &&
	jq -e ".workload == \"cmd\" and (.command | endswith(\"scalework {n}\")) and
	       .sizes == [2500, 4000, 6300, 10000] and (.runs | map(.n)) == .sizes" $J >/dev/null &&
	jq -e ".runs | all(.samples > 0 and .seconds > 0 and .wall_seconds >= 0 and (.profile | type) == \"string\")" $J >/dev/null &&
	jq -e ".functions | length > 2 and all(
		(.function | type) == \"string\" and (.file | type) == \"string\" and
		(.superlinear | type) == \"boolean\" and (.fitted | type) == \"boolean\" and
		(.cost_seconds | length) == 4 and (.self_seconds | length) == 4 and (.samples | length) == 4 and
		(if .fitted then (.exponent | type) == \"number\" and (.r2 | type) == \"number\" and .reason == null
		 else .exponent == null and .ci_low == null and .ci_high == null and (.reason | startswith(\"too few samples\")) end))" $J >/dev/null &&
	jq -e "[.functions[].cost_seconds[3]] | . == (sort | reverse)" $J >/dev/null &&
	jq -e ".program | (.exponent | type) == \"number\" and (.ci_low | type) == \"number\" and
	       (.ci_high | type) == \"number\" and (.r2 | type) == \"number\"" $J >/dev/null
'

test_expect_success 'each size has its profile, as recorded, and .hotloop is ignored by git' '
	for n in 2500 4000 6300 10000; do
		p=$(jq -r ".runs[] | select(.n == $n) | .profile" .hotloop/scale/cmd.json) &&
		test "$p" = "$SCRATCH/.hotloop/scale/cmd/n$n.pb.gz" &&
		hotloop report --json --sort total "$p" >r.json &&
		test "$(jq .total r.json)" = "$(jq ".runs[] | select(.n == $n) | .samples" .hotloop/scale/cmd.json)" &&
		jq -e "[.rows[].name] | index(\"count_duplicate_pairs\") != null" r.json >/dev/null || exit 1
	done &&
	test "$(cat .hotloop/.gitignore)" = "*"
'

test_expect_success '--repeat adds the runs up; -o writes the JSON elsewhere; --json prints it' '
	mkdir rep && cd rep &&
	hotloop scale --json -F 999 --repeat 2 --min-samples 1 -o res.json --sizes 500,1000,2000 \
		-- "$WORKLOADS/scalework" {n} >out.json 2>err &&
	jq -S . res.json >a && jq -S . out.json >b && cmp a b &&
	test ! -e .hotloop/scale/cmd.json &&
	for n in 500 1000 2000; do
		hotloop report --json .hotloop/scale/cmd/n$n.pb.gz >r.json &&
		test "$(jq .total r.json)" = "$(jq ".runs[] | select(.n == $n) | .samples" res.json)" &&
		test "$(jq ".runs[] | select(.n == $n) | .samples" res.json)" -gt 0 || exit 1
	done &&
	test "$(LC_ALL=C ls .hotloop/scale)" = cmd &&
	test "$(LC_ALL=C ls .hotloop/scale/cmd | tr "\n" " ")" = "n1000.pb.gz n2000.pb.gz n500.pb.gz "
'

test_expect_success 'a workload that fails at one size: the error names the size' '
	{ hotloop scale -o fail.json --sizes 600,1200,2400 -- \
		sh -c "test \$1 -lt 1200 && exec \"$WORKLOADS/scalework\" \$1" sh {n} 2>err; test $? -eq 1; } &&
	expect_grep "the workload failed at size 1200: exit status 1" err &&
	test ! -e fail.json &&
	: the last complete result stays as it was &&
	jq -e ".sizes == [2500, 4000, 6300, 10000]" .hotloop/scale/cmd.json >/dev/null &&
	test "$(LC_ALL=C ls .hotloop/scale)" = "$(printf "cmd\ncmd.json")" &&
	test "$(LC_ALL=C ls .hotloop/scale/cmd | tr "\n" " ")" = "n10000.pb.gz n2500.pb.gz n4000.pb.gz n6300.pb.gz "
'

test_expect_success 'a workload killed by a signal at one size: named too' '
	{ hotloop scale -o fail.json --sizes 600,1200,2400 -- \
		sh -c "test \$1 -lt 2400 || kill -SEGV \$\$; exec \"$WORKLOADS/scalework\" \$1" sh {n} 2>err; test $? -eq 1; } &&
	expect_grep "the workload failed at size 2400: killed by signal 11" err
'

test_done
