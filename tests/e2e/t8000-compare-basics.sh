#!/bin/sh
# compare: A/A gives no keep, half the work is kept, twice the work is
# rejected, the JSON document's shape, missing commands and usage errors.
# Effects are far above noise (2x); nothing asserts a time.
. "$(dirname "$0")/test-lib.sh"

C="hotloop compare --max-wait 0 --pairs 12"
FW="$WORKLOADS/fixedwork"

# A noise-proof bar: an A/A keep would need its whole interval below -25%.
test_expect_success 'A/A: the same command is not kept' '
	{ $C --json --min-improvement 25% "$FW 40" "$FW 40" >out.json; rc=$?; } &&
	test $rc -ne 0 && test $rc -ne 127 &&
	jq -e ".verdict != \"keep\"" out.json &&
	jq -e ".correctness.ok == true and .correctness.fingerprints[0].match == true" out.json
'

test_expect_success 'half the work is kept, with a change around -50%' '
	$C --json "$FW 40" "$FW 20" >out.json &&
	jq -e ".verdict == \"keep\" and .primary.change_pct < -30" out.json &&
	jq -e ".primary.ci_high_pct < 0 and .pairs == 12 and .decision == \"decided-keep\"" out.json
'

test_expect_code 4 'twice the work is rejected with a reason about the primary' '
	$C "$FW 20" "$FW 40" >out; rc=$?
	expect_grep "^verdict: reject" out && expect_grep "primary .primary. regressed" out || exit 99
	exit $rc
'

test_expect_success 'json: shape and types' '
	$C --json "$FW 40" "$FW 20" >out.json &&
	jq -e "(.reasons|type==\"array\") and (.reasons|length) >= 1 and (.suspicious|type==\"boolean\")" out.json &&
	jq -e ".primary | .workload == \"primary\" and .metric == \"cpu\" and
		(.change_pct|type==\"number\") and (.ci_low_pct <= .change_pct) and
		(.change_pct <= .ci_high_pct) and (.noise_pct|type==\"number\") and .exact == false" out.json &&
	jq -e ".guards == [] and .metrics == [] and .memory.budget_kb == null and
		.memory.cand_peak_rss_kb > 0 and .memory.ok == true" out.json &&
	jq -e ".correctness.test == \"not-run\" and .interrupted == false and .looks == [12] and
		.looks_taken == 1 and .order == \"abba\" and (.machine.quiet|type==\"boolean\")" out.json
'

test_expect_success 'text: verdict, primary with interval, pairs, noise, reasons' '
	$C --order random "$FW 40" "$FW 20" >out &&
	expect_grep "^verdict: keep" out &&
	expect_grep "^primary .*interval .*12 pairs, noise" out &&
	expect_grep "^reasons:" out && expect_grep "^  - primary .primary. improved" out
'

test_expect_code 127 'a missing command is an error and nothing runs' '
	$C "$FW 1; touch ran" "no-such-command-xyz 1" 2>err; rc=$?
	expect_grep "no-such-command-xyz: command not found" err && test ! -e ran || exit 99; exit $rc
'

test_expect_code 127 'a missing command under --json is an error document' '
	$C --json "no-such-command-xyz" "$FW 1" >out.json; rc=$?
	jq -e ".error | test(\"not found\")" out.json || exit 99; exit $rc
'

# The candidate prints the CPUs it may run on; it matches the base's "0" only when pinned.
test_expect_success '--pin: every run on the CPU given, the quiet check on it' '
	P="awk \"/^Cpus_allowed_list/ { print \\\"FINGERPRINT=\\\" \\\$2 }\" /proc/self/status" &&
	{ $C --json --pin 0 --pairs 2 --looks 2 "echo FINGERPRINT=0" "$P" >out.json; test $? -ne 2; } &&
	jq -e ".correctness.fingerprints[0].match == true" out.json &&
	jq -e ".machine.pinned_busy | type == \"number\"" out.json &&
	{ $C --pin 0 --pairs 2 --looks 2 "true" "true" >out; true; } &&
	expect_grep "^machine:  pinned CPU 0 busy" out
'

test_expect_code 2 '--pin needs CPU numbers' '$C --pin x "true" "true"'

test_expect_code 2 'one command is a usage error' '
	$C "$FW 1"
'

test_expect_code 2 'looks must increase' '
	$C --looks 12,6 "$FW 1" "$FW 1"
'

test_expect_code 2 'an unknown metric is a usage error' '
	$C --metric bogus "$FW 1" "$FW 1"
'

test_done
