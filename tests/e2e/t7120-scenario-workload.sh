#!/bin/sh
# A workload judged by a scenario: `compare --base/--cand` over it (the
# service's judged phase as the workload's measure), and the improve loop
# on a service: its brief from the service's CPU profile under the
# pressure, a scripted agent's cheaper handler kept on the loop's branch.
. "$(dirname "$0")/test-lib.sh"

. "$TEST_DIR/lib-scenario.sh"

test_expect_success 'setup: a service in git judged by its scenario' '
	mkdir repo && cd repo &&
	svc_project 40000 &&
	printf "#!/bin/sh\ni=0\nwhile [ \$i -lt 20000 ]\ndo i=\$((i+1))\ndone\necho done\n" >spin.sh && chmod +x spin.sh &&
	cat >hotloop.conf <<-\EOF &&
	[project]
		build = make -s
		owned = .
		protected = hotloop.conf Makefile
	[improve]
		rounds = 1
		min-share = 0%
	[agent]
		timeout = 10s
	[workload "service"]
		scenario = pressure
		primary = yes
	[workload "spin"]
		run = ./spin.sh
	[metric "events"]
		better = higher
		tolerance = 10%
	[scenario "pressure"]
		start = ./svc serve {port}
		ready = tcp {port}
		phase = idle 0.3s
		phase = pressure 1.5s: ./svc load {port} 3000
		phase = idle 0.3s
		runs = 6
	EOF
	printf "svc\n.hotloop/\nkb/\n" >.gitignore &&
	git init -q && git add . && commit base && git tag base &&
	echo "#define WORK_DEFAULT 10000" >build.h && commit faster && git tag faster &&
	git checkout -q base &&
	hotloop config --json >../conf.json &&
	jq -e ".workloads[0].scenario == \"pressure\" and .scenarios[0].runs == 6" ../conf.json >/dev/null
'

test_expect_success 'compare --base/--cand judges the workload by its scenario, a command workload beside it' '
	cd repo &&
	hotloop compare --base base --cand faster --json >../cmp.json 2>../cmp.err &&
	svc_none_left &&
	jq -e "(.verdict == \"keep\") and (.primary.workload == \"service\") and (.primary.pairs == 6) and
		(.primary.change_pct < -20) and (.metrics[0].name == \"events\") and .metrics[0].ok and
		(.guards[0].workload == \"spin\") and (.guards[0].pairs == 6)" ../cmp.json >/dev/null &&
	ls -d .hotloop/scenarios/pressure/*-gate/base-1 >/dev/null
'

test_expect_code 1 'a scenario workload has no command for scale; run and scenario together are refused' '
	cd repo &&
	hotloop scale service 2>../err.txt; rc=$?
	expect_grep "is judged by scenario .pressure.: scale runs a command at sizes" ../err.txt || exit 99
	printf "[workload \"x\"]\n\trun = true\n\tscenario = pressure\n[scenario \"pressure\"]\n\tstart = true\n\tphase = idle 1s\n" >../both.conf &&
	hotloop config -f ../both.conf 2>../err2.txt; [ $? -eq 1 ] || exit 99
	expect_grep "has both .run. and .scenario." ../err2.txt || exit 99
	exit $rc
'

test_skip_unless PERF 'perf events are not available to this user (hotloop doctor says why)'

test_expect_success 'run: the brief of a service is its CPU under the pressure' '
	cd repo &&
	hotloop run service --format json >../brief.json 2>../run.err &&
	svc_none_left &&
	jq -e ".hotspots[0].function == \"handle_event\"" ../brief.json >/dev/null &&
	test -s .hotloop/runs/latest/scenario/profile.pb.gz &&
	test -s .hotloop/runs/latest/scenario/graph.html
'

# The agent changes a macro in build.h, no function: min-share = 0% above
# turns the loop's target stage off (docs/loop.md), this test is about the
# scenario.
test_expect_success 'loop: a cheaper handler is kept on the branch; the tree is untouched' '
	cd repo &&
	mkdir -p ../agents &&
	printf "#!/bin/sh\necho \"#define WORK_DEFAULT 10000\" >build.h\n" >../agents/cheaper && chmod +x ../agents/cheaper &&
	sandbox="" && { test_have_prereq SANDBOX || sandbox=--no-sandbox; } &&
	before=$(git status --porcelain; git rev-parse HEAD) &&
	hotloop loop $sandbox --json --agent "$SCRATCH/agents/cheaper" >../loop.json 2>../loop.err &&
	svc_none_left &&
	jq -e ".kept == 1 and .attempts[0].verdict == \"keep\"" ../loop.json >/dev/null &&
	branch=$(jq -r .branch ../loop.json) &&
	git show "$branch":build.h | grep -q "WORK_DEFAULT 10000" &&
	grep -q "handle_event" .hotloop/loop/*/round-01/1-*/prompt.md &&
	test -s .hotloop/loop/*/round-01/scenario/profile.pb.gz &&
	test "$before" = "$(git status --porcelain; git rev-parse HEAD)"
'

test_done
