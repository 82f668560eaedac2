#!/bin/sh
# compare: a candidate that prints another fingerprint, crashes, uses more
# memory than the budget or moves a declared metric the wrong way is
# rejected with the reason; --no-fingerprint ignores the output; Ctrl-C
# prints a partial verdict.
. "$(dirname "$0")/test-lib.sh"

C="hotloop compare --max-wait 0 --pairs 12"
FW="$WORKLOADS/fixedwork"

test_expect_code 4 'a different FINGERPRINT is a correctness failure' '
	$C --json "$FW 20" "$FW 10; echo FINGERPRINT=other" >out.json; rc=$?
	jq -e ".verdict == \"reject\" and .correctness.ok == false" out.json &&
	jq -e ".correctness.fingerprints[0].match == false" out.json &&
	jq -e "[.reasons[] | test(\"different fingerprint\")] | any" out.json || exit 99; exit $rc
'

test_expect_success '--no-fingerprint ignores the output' '
	$C --no-fingerprint --json "$FW 40" "$FW 20; echo FINGERPRINT=other" >out.json &&
	jq -e ".verdict == \"keep\" and .correctness.fingerprints == []" out.json
'

test_expect_code 4 'a crashing candidate is rejected, not an error' '
	$C --json "$FW 20" "$WORKLOADS/crasher" >out.json; rc=$?
	jq -e ".verdict == \"reject\" and .correctness.ok == false and .pairs == 0" out.json &&
	jq -e "[.reasons[] | test(\"candidate .*signal 11\")] | any" out.json || exit 99; exit $rc
'

test_expect_code 4 'a candidate failing with a status is rejected, text says so' '
	$C "$FW 20" "$FW 20; exit 3" >out; rc=$?
	expect_grep "^verdict: reject" out && expect_grep "status 3" out || exit 99; exit $rc
'

test_expect_code 4 'a candidate that times out is rejected' '
	$C --json --timeout 0.5 "$FW 10" "sleep 30" >out.json; rc=$?
	jq -e ".verdict == \"reject\" and .correctness.ok == false" out.json &&
	jq -e "[.reasons[] | test(\"timed out\")] | any" out.json || exit 99; exit $rc
'

test_expect_code 4 'a failing baseline is rejected and named' '
	$C "$FW 10; exit 1" "$FW 10" >out; rc=$?
	expect_grep "^verdict: reject" out && expect_grep "baseline" out || exit 99; exit $rc
'

test_expect_code 4 'a candidate over the ram budget is rejected' '
	$C --json --ram-budget 20M "$FW 20" "$FW 10 80" >out.json; rc=$?
	jq -e ".verdict == \"reject\" and .memory.ok == false and .memory.budget_kb == 20480" out.json &&
	jq -e ".memory.cand_peak_rss_kb > 60000" out.json &&
	jq -e "[.reasons[] | test(\"ram budget\")] | any" out.json || exit 99; exit $rc
'

test_expect_code 4 'a declared metric 20% lower fails its 2% tolerance' '
	$C --json --metric-rule score:higher:2% \
		"$FW 20; echo HOTLOOP_METRIC score=100" "$FW 10; echo HOTLOOP_METRIC score=80" >out.json; rc=$?
	jq -e ".verdict == \"reject\" and .metrics[0].name == \"score\" and .metrics[0].ok == false" out.json &&
	jq -e ".metrics[0].change_pct < -19 and .metrics[0].change_pct > -21" out.json &&
	jq -e "[.reasons[] | test(\"score\")] | any" out.json || exit 99; exit $rc
'

test_expect_code 130 'an interrupt prints a partial verdict' '
	"$HOTLOOP" compare --max-wait 0 --pairs 2000 --looks 2000 --json "$FW 20" "$FW 20" >out.json &
	pid=$!
	sleep 1 && kill -INT $pid
	wait $pid; rc=$?
	jq -e ".interrupted == true and .pairs > 0 and .pairs < 2000" out.json || exit 99; exit $rc
'

test_done
