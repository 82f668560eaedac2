#!/bin/sh
# bench: run counts, JSON shape, exit statuses, fingerprints and metrics,
# peak RSS, timeouts, crashes, a missing command. No timing assertions.
. "$(dirname "$0")/test-lib.sh"

B="hotloop bench --max-wait 0"

test_expect_success 'json: run count, fields and types' '
	$B -n 3 -w 2 --json -- "$WORKLOADS/allocmib" 5 >out.json &&
	jq -e ".runs | length == 3" out.json &&
	jq -e ".warmup_runs | length == 2" out.json &&
	jq -e ".complete == true and .metric == \"cpu\"" out.json &&
	jq -e "[.runs[] | (.wall|type==\"number\") and (.user|type==\"number\") and
		(.sys|type==\"number\") and (.cpu|type==\"number\") and
		(.max_rss_kib|type==\"number\") and .exit_status == 0 and .signal == null and
		.timed_out == false and .failure == null and
		(.stdout_hash|test(\"^[0-9a-f]{16}$\")) and .stdout_bytes > 0 and
		.instructions == null] | all" out.json &&
	jq -e "[.summary.metric, .summary.cpu, .summary.wall, .summary.max_rss_kib][] |
		(.n == 3) and (.median|type==\"number\") and (.mad|type==\"number\") and
		(.cv|type==\"number\") and .min <= .median and .median <= .max" out.json &&
	jq -e ".summary.peak_rss_kib|type==\"number\"" out.json &&
	jq -e ".machine | (.cpus >= 1) and (.load1|type==\"number\") and (.quiet|type==\"boolean\")" out.json &&
	jq -e ".warnings|type==\"array\"" out.json
'

test_expect_success 'fingerprints and metrics are parsed, a bad metric line warned about' '
	$B -n 2 -w 0 --json -- sh -c "echo FINGERPRINT=abc; echo HOTLOOP_METRIC ops=12.5; echo HOTLOOP_METRIC bad" >out.json 2>err &&
	jq -e "[.runs[] | .fingerprints == [\"abc\"] and .metrics.ops == 12.5] | all" out.json &&
	jq -e ".runs[0].stdout_hash == .runs[1].stdout_hash" out.json &&
	expect_grep "malformed metric line" err
'

test_expect_success 'a fingerprint or an argument that is not UTF-8 is kept, each bad byte as U+FFFD' '
	$B -n 1 -w 0 --json -- sh -c "printf \"FINGERPRINT=a\\377b\\n\"" "$(printf "x\377")" >out.json &&
	jq -e ".runs[0].fingerprints == [\"a\\ufffdb\"]" out.json &&
	jq -e ".command | contains(\"x\\ufffd\")" out.json
'

test_expect_success 'the environment is fixed, with --env added' '
	FOO_LEAK=1 $B -n 1 -w 0 --json -e X=42 -- sh -c "echo FINGERPRINT=\$LANG-\${FOO_LEAK:-none}-\$X" >out.json &&
	jq -e ".runs[0].fingerprints == [\"C-none-42\"]" out.json
'

test_expect_success 'peak RSS of a 50 MiB workload is 50 MiB within 10' '
	$B -n 2 -w 0 --json -- "$WORKLOADS/allocmib" 50 >out.json &&
	jq -e "[.runs[] | .max_rss_kib > 40*1024 and .max_rss_kib < 60*1024] | all" out.json &&
	jq -e ".runs[0].fingerprints | length == 1" out.json
'

test_expect_success 'text output: per-run lines and a summary' '
	$B -n 3 -w 1 -- "$WORKLOADS/allocmib" 1 >out &&
	test $(grep -c "^run " out) = 3 && test $(grep -c "^warm-up " out) = 1 &&
	expect_grep "^cpu  *median" out && expect_grep "^peak rss" out &&
	expect_grep "^machine" out
'

test_expect_success 'a timeout kills a sleeping workload and says so' '
	{ $B -n 2 -w 0 -t 0.3 --json -- sleep 30 >out.json 2>err; test $? -eq 1; } &&
	jq -e ".complete == false and (.runs|length) == 1" out.json &&
	jq -e ".runs[0].timed_out == true and (.runs[0].failure|test(\"timed out\"))" out.json &&
	expect_grep "timed out after 0.3 s" err
'

test_expect_success 'a crashing workload is reported with its signal' '
	{ $B -n 3 -w 0 -- "$WORKLOADS/crasher" >out 2>err; test $? -eq 1; } &&
	expect_grep "killed by signal 11" out && expect_grep "killed by signal 11" err &&
	test $(grep -c "^run " out) = 1 &&
	{ $B -n 1 -w 0 --json -- "$WORKLOADS/crasher" >out.json; test $? -eq 1; } &&
	jq -e ".runs[0].signal == 11 and .runs[0].exit_status == 139" out.json
'

test_expect_success 'a failing exit status fails the bench' '
	{ $B -n 2 -w 0 -- sh -c "exit 3" >out 2>err; test $? -eq 1; } &&
	expect_grep "exit status 3" err
'

test_expect_code 127 'a missing command is 127, before any run' '
	$B -n 1 -- no-such-command-hl >out 2>err; rc=$?
	test ! -s out && expect_grep "no-such-command-hl: command not found" err || exit 99; exit $rc
'

test_expect_success '--pin: runs are confined to the CPUs given' '
	$B -n 1 -w 0 --pin 0 --json -- awk "/^Cpus_allowed_list/ { print \"FINGERPRINT=\" \$2 }" /proc/self/status >out.json &&
	jq -e ".runs[0].fingerprints == [\"0\"]" out.json
'

# A spinner on the pinned CPU makes it busy; work on other CPUs would not.
LAST=$(($(getconf _NPROCESSORS_ONLN) - 1))
title='--pin: the quiet check judges the pinned CPU'
if ! test_have_prereq TWO_CPUS; then
	test_skip "$title" "needs two CPUs"
else test_expect_success "$title" '
	taskset -c $LAST sh -c "end=\$((\$(date +%s) + 4)); while [ \$(date +%s) -lt \$end ]; do :; done" &
	spinner=$! &&
	test_when_finished "kill $spinner 2>/dev/null; wait $spinner" &&
	sleep 0.3 &&
	$B -n 1 -w 0 --pin $LAST --max-wait 0.3 --json -- true >out.json &&
	jq -e ".machine.quiet == false and .machine.pinned_busy > 50" out.json &&
	jq -e ".machine.reason | test(\"pinned CPU $LAST busy\")" out.json &&
	jq -e ".warnings | any(test(\"not quiet: pinned CPU\"))" out.json
'
fi

title='--pin takes ranges'
if ! test_have_prereq TWO_CPUS; then
	test_skip "$title" "needs two CPUs"
else test_expect_success "$title" '
	$B -n 1 -w 0 --pin 0-1 --json -- awk "/^Cpus_allowed_list/ { print \"FINGERPRINT=\" \$2 }" /proc/self/status >out.json &&
	jq -e ".runs[0].fingerprints == [\"0-1\"]" out.json
'
fi

test_expect_code 2 'a bad CPU list' '$B --pin 0,,1 -- true'
test_expect_code 2 'a range the wrong way round' '$B --pin 3-1 -- true'
test_expect_code 2 'usage errors' '$B -n 0 -- true'
test_expect_code 2 'an unknown metric' '$B --metric bogus -- true'
test_expect_code 2 'no command' '$B'

test_done
