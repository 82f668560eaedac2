#!/bin/sh
# record --off-cpu: where threads leave their CPU and for how long, as the
# off-cpu and wall sample types next to on-CPU time; the brief's sleep,
# lock and blocked tags come from that evidence.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF 'perf events not permitted here (run as root or lower kernel.perf_event_paranoid)'

# share PROFILE TYPE FN: FN's total share of TYPE in percent (0 when absent)
share() {
	hotloop report --json --sample-type "$2" --sort total --top 0 "$1" |
	jq -r --arg fn "$3" '[.rows[] | select(.name == $fn) | .total_pct] | max // 0'
}

test_expect_success 'record --off-cpu counts the switches and writes four sample types' '
	hotloop record --off-cpu -o off.pb.gz -- "$WORKLOADS/offcpu" 0.6 2>err &&
	cat err &&
	grep "times off CPU" err &&
	hotloop report --json --sample-type samples off.pb.gz >/dev/null &&
	for t in cpu off-cpu wall; do
		hotloop report --json --sample-type $t off.pb.gz >$t.json || return 1
	done &&
	jq -e ".sample_type == \"off-cpu/nanoseconds\" and .total > 0" off-cpu.json
'

test_expect_success 'wall time is on-CPU time plus off-CPU time' '
	cpu=$(jq .total cpu.json) && off=$(jq .total off-cpu.json) && wall=$(jq .total wall.json) &&
	echo "cpu $cpu off $off wall $wall" &&
	test "$wall" -eq $((cpu + off))
'

test_expect_success 'the default sample type stays the on-CPU samples' '
	hotloop report --json off.pb.gz >default.json &&
	jq -e ".sample_type == \"samples/count\"" default.json &&
	test "$(jq -r "[.rows[] | select(.file | test(\"/tests/workloads/\"))][0].name" default.json)" = crunch
'

test_expect_success 'off CPU: the function that sleeps and the one that takes the lock' '
	s=$(share off.pb.gz off-cpu pace_batches) && l=$(share off.pb.gz off-cpu update_shared) &&
	echo "pace_batches $s%, update_shared $l%" &&
	awk -v s="$s" -v l="$l" "BEGIN { exit !(s >= 10 && l >= 10) }"
'

test_expect_success 'brief --sample-type off-cpu: sleep, lock and blocked tags with their evidence' '
	hotloop brief --json --sample-type off-cpu --owned "$ROOT/tests/workloads" off.pb.gz >brief.json &&
	jq -e "[.hotspots[] | select(.function == \"pace_batches\") | .tags[] | select(.tag == \"sleep\")] | length == 1" brief.json &&
	jq -e "[.hotspots[] | select(.function == \"update_shared\") | .tags[] | select(.tag == \"lock\")] | length == 1" brief.json &&
	jq -e "[.hotspots[] | select(.function == \"main\") | .tags[] | select(.tag == \"blocked\")] | length == 1" brief.json &&
	hotloop brief --sample-type off-cpu --owned "$ROOT/tests/workloads" off.pb.gz >brief.md &&
	grep "tag .sleep.: sleeping off CPU = [0-9]*% of its attributed time (usleep" brief.md &&
	grep "Why does .pace_batches. sleep?" brief.md
'

test_expect_success 'on-CPU, the same profile has no off-CPU tags' '
	hotloop brief --json --owned "$ROOT/tests/workloads" off.pb.gz >on.json &&
	jq -e "[.hotspots[].tags[] | select(.tag == \"sleep\" or .tag == \"blocked\")] | length == 0" on.json
'

test_expect_success 'flame --sample-type off-cpu draws the time blocked' '
	hotloop flame --sample-type off-cpu -o off.svg off.pb.gz &&
	grep -q "pace_batches" off.svg
'

test_expect_code 1 'without --off-cpu there is no off-cpu sample type to pick' '
	hotloop record -o on.pb.gz -- "$WORKLOADS/cpuhog" 0.1 2>/dev/null &&
	hotloop report --sample-type off-cpu on.pb.gz 2>err
'

test_expect_success '... and the error names the types there are' '
	grep "has no sample type .off-cpu. (it has: samples, cpu)" err
'

test_done
