#!/bin/sh
# scenario --base/--cand: two builds of a service (tests/workloads/svc.c)
# judged under the same scenario, alternating, through the gate's verdict:
# a 2x slower handler rejected (exit 4), a 2x faster one kept, one that is
# "faster" because it drops half the events rejected on its events rate,
# and the JSON in compare's shape. Nothing is left running after each.
. "$(dirname "$0")/test-lib.sh"

. "$TEST_DIR/lib-scenario.sh"

test_expect_success 'setup: a service in git, three more builds of it' '
	mkdir repo && cd repo &&
	svc_project 20000 &&
	cat >hotloop.conf <<-\EOF &&
	[project]
		build = make -s
	[gate]
		test = test -x svc
	[workload "w"]
		run = true
	[metric "events"]
		better = higher
		tolerance = 10%
	[scenario "pressure"]
		start = ./svc serve {port}
		ready = tcp {port}
		phase = idle 0.3s
		phase = pressure 1.5s: ./svc load {port} 3000
		phase = idle 0.3s
	EOF
	printf "svc\n.hotloop/\n*.txt\n" >.gitignore &&
	git init -q && git add . && commit base && git tag base &&
	echo "#define WORK_DEFAULT 40000" >build.h && commit slower && git tag slower &&
	echo "#define WORK_DEFAULT 10000" >build.h && commit faster && git tag faster &&
	printf "#define WORK_DEFAULT 20000\n#define DROP_HALF 1\n" >build.h && commit drops && git tag drops
'

test_expect_code 4 'a 2x slower handler is rejected' '
	cd repo &&
	hotloop scenario pressure --base base --cand slower >../out.txt 2>../err.txt; rc=$?
	svc_none_left || exit 99
	expect_grep "^verdict: reject" ../out.txt || exit 99
	expect_grep "primary .pressure. regressed" ../out.txt || exit 99
	expect_grep "each run.s timeline and graph: .*/.hotloop/scenarios/pressure/.*-compare/{base,cand}-N/" ../out.txt || exit 99
	exit $rc
'

test_expect_success 'a 2x faster handler is kept; the JSON is compare'"'"'s; each run'"'"'s files are kept' '
	cd repo &&
	hotloop scenario pressure --base base --cand faster --json >../keep.json 2>../err.txt &&
	svc_none_left &&
	jq -e "(.verdict == \"keep\") and (.primary.workload == \"pressure\") and (.primary.metric == \"cpu\") and
		(.primary.change_pct < -20) and (.primary.pairs == 6) and
		(.metrics[0].name == \"events\") and .metrics[0].ok and (.metrics[0].base > 2000) and
		(.reasons | type == \"array\") and (.runs | length == 12) and
		(.base.given == \"base\") and (.candidate.given == \"faster\") and
		has(\"memory\") and has(\"correctness\") and has(\"machine\")" ../keep.json >/dev/null &&
	dir=$(jq -r .runs_dir ../keep.json) &&
	test -s "$dir/base-1/timeline.json" && test -s "$dir/cand-6/graph.html" &&
	jq -e ".outcome == \"done\"" "$dir/cand-3/summary.json" >/dev/null &&
	git status --porcelain >../st && test ! -s ../st
'

test_expect_code 4 'cheaper because it drops half the events: rejected on the events rate' '
	cd repo &&
	hotloop scenario pressure --base base --cand drops --json >../drops.json 2>../err.txt; rc=$?
	svc_none_left || exit 99
	jq -e "(.verdict == \"reject\") and (.primary.change_pct < 0) and
		(.metrics[0].ok == false) and (.metrics[0].cand < .metrics[0].base * 0.8)" ../drops.json >/dev/null || exit 99
	jq -r ".reasons[]" ../drops.json | grep -q "metric .events. of workload .pressure. fell" || exit 99
	exit $rc
'

test_expect_code 2 '--base without --cand, --overlay with them: usage errors' '
	cd repo &&
	hotloop scenario pressure --base base 2>err.txt; rc=$?
	expect_grep "base and --cand go together" err.txt || exit 99
	hotloop scenario pressure --base base --cand faster --overlay x 2>err.txt; [ $? -eq 2 ] || exit 99
	hotloop scenario pressure --base base --cand faster --runs 0 2>/dev/null; [ $? -eq 2 ] || exit 99
	exit $rc
'

test_done
