#!/bin/sh
# brief: the right hotspot first with its tag and snippet, JSON shape,
# where owned code comes from (--owned, hotloop.conf, the git top level,
# the main executable fallback), the budget, --focus, profiles without
# line information or symbols, and bad input.
. "$(dirname "$0")/test-lib.sh"

OWN="--owned $ROOT/tests/workloads"

# Folded stacks need no sampling: a profile without files or lines.
cat >plain.folded <<-\EOC
main;parse;strlen 60
main;parse 10
main;emit;__vfprintf_internal 30
EOC

test_expect_success 'folded stacks (no DSOs, no lines): libc functions are foreign by name' '
	hotloop brief --json plain.folded >out.json &&
	jq -e ".hotspots[0].function == \"parse\" and .hotspots[0].attributed_pct == 70" out.json &&
	jq -e ".hotspots[0].file == null and .hotspots[0].snippet == null" out.json &&
	jq -e "[.hotspots[0].tags[].tag] == [\"string\"]" out.json &&
	jq -e "[.hotspots[1].tags[].tag] == [\"formatting\"]" out.json &&
	jq -e ".hotspots[0].callees[0].function == \"strlen\"" out.json &&
	jq -e ".quality.samples == 100" out.json
'

test_expect_success 'markdown: sections, a question per tag' '
	hotloop brief plain.folded >out.md &&
	expect_grep "^### 1. .parse." out.md &&
	expect_grep "^- tag .string.: string functions = 86% of its attributed time (strlen 86%)" out.md &&
	expect_grep "^## Hot path" out.md && expect_grep "^## Rollups" out.md &&
	expect_grep "^## Suggested questions" out.md &&
	expect_grep "^- Does .parse. scan or copy the same bytes" out.md
'

test_skip_unless PERF 'perf events are not available to this user (hotloop doctor says why)'

test_expect_success 'setup: record cpuhog and libccall' '
	hotloop record -o cpuhog.pb.gz -- "$WORKLOADS/cpuhog" 0.4 2>/dev/null &&
	hotloop record -o strlen.pb.gz -- "$WORKLOADS/libccall" 0.4 strlen 2>/dev/null
'

# The hot line is one of the loop's two (the for and the multiply): which
# of them takes the samples is the CPU's skid, not the program's.
test_expect_success 'cpuhog: hot_spin first, a compute leaf, its source line marked' '
	hotloop brief $OWN cpuhog.pb.gz >out.md &&
	expect_grep "^# hotloop brief: .*cpuhog 0.4" out.md &&
	expect_grep "^### 1. .hot_spin. (cpuhog.c:[0-9]*)" out.md &&
	expect_grep "^- tag .compute-leaf.: self / total = " out.md &&
	expect_grep "^>  *[0-9]*  *[0-9.]*% | .*\\(i < 200000\\|x = x \\* 6364136223846793005ul\\)" out.md &&
	expect_grep "^- callers: run_loop 100.0%" out.md
'

test_expect_success 'json: the documented keys and types' '
	hotloop brief $OWN --json cpuhog.pb.gz >out.json &&
	jq -e ".quality | (.samples > 0) and (.unknown_pct|type==\"number\") and
		(.truncated_pct|type==\"number\") and (.warnings|type==\"array\") and .event == \"cpu-clock\"" out.json &&
	jq -e ".hotspots[0] | .rank == 1 and .function == \"hot_spin\" and .file == \"cpuhog.c\" and
		(.line|type==\"number\") and (.self_pct <= .total_pct) and (.attributed_pct > 50) and
		(.tags|type==\"array\") and (.snippet.text | split(\"\\n\") | length) == 13 and .snippet.hot_line == .line and
		(.snippet.first_line == .line - 6) and (.line as \$l | .snippet.pct | has(\$l | tostring)) and
		(.callers|length) >= 1 and (.callees|type==\"array\")" out.json &&
	jq -e "(.questions|length) >= 1 and .questions[0].hotspots[0] == 1 and (.questions[0].question|type==\"string\") and (.folded_tags|type==\"array\")" out.json &&
	jq -e "(.hot_path|length) >= 3 and .hot_path[-1].function == \"hot_spin\"" out.json &&
	jq -e "(.rollup.dso[0].name == \"cpuhog\") and (.rollup.dir|type==\"array\")" out.json &&
	jq -e ".truncated == false and .cut == null and .owned.from == \"--owned\"" out.json
'

test_expect_success 'foreign time is charged to the owned caller: strlen to count_long' '
	hotloop brief $OWN --json strlen.pb.gz >out.json &&
	jq -e ".hotspots[0].function == \"count_long\"" out.json &&
	jq -e "[.hotspots[0].tags[].tag] | index(\"string\") != null" out.json &&
	jq -e ".hotspots[0].self_pct < 20 and .hotspots[0].attributed_pct > 80" out.json
'

test_expect_success 'owned code from hotloop.conf [project] owned' '
	mkdir -p proj && printf "[project]\n\towned = src\n[workload \"w\"]\n\trun = true\n" >proj/hotloop.conf &&
	mkdir -p proj/src && (cd proj && hotloop brief --json ../cpuhog.pb.gz >../out.json) &&
	jq -e ".owned.roots == [\"$SCRATCH/proj/src\"] and (.owned.from|test(\"owned in\"))" out.json &&
	jq -e ".owned.main_executable_fallback == true and .hotspots[0].function == \"hot_spin\"" out.json &&
	jq -e ".quality.warnings | any(test(\"--owned\"))" out.json
'

test_expect_success 'a bad hotloop.conf is an error' '
	printf "[project]\n\tbogus = 1\n" >proj/hotloop.conf &&
	(cd proj && { hotloop brief ../cpuhog.pb.gz >/dev/null 2>../err; test $? -eq 1; }) &&
	expect_grep "hotloop.conf:2" err
'

test_expect_success 'the budget drops snippets first and says so' '
	hotloop brief $OWN --budget 0 cpuhog.pb.gz >full.md &&
	hotloop brief $OWN --budget 150 cpuhog.pb.gz >cut.md &&
	test $(wc -c <cut.md) -lt $(wc -c <full.md) &&
	expect_grep "^## Cut to fit 150 tokens" cut.md &&
	expect_grep "^### 1. .hot_spin." cut.md &&
	! grep -q "^\`\`\`" cut.md &&
	hotloop brief $OWN --budget 150 --json cpuhog.pb.gz >cut.json &&
	jq -e ".truncated == true and (.cut|test(\"snippet\")) and .hotspots[0].snippet == null" cut.json
'

test_expect_success 'json and markdown keep the same snippets at the same budget' '
	for p in cpuhog.pb.gz strlen.pb.gz; do for budget in 0 150 250 400 4000; do
		hotloop brief $OWN --budget $budget $p >b.md &&
		hotloop brief $OWN --budget $budget --json $p >b.json &&
		md=$(grep -c "^\`\`\`" b.md || :) &&
		json=$(jq "[.hotspots[] | select(.snippet != null)] | length" b.json) &&
		echo "$p, budget $budget: markdown $((md / 2)) snippets, json $json" &&
		test $((md / 2)) -eq "$json" || return 1
	done; done
'

test_expect_success '--focus keeps one function' '
	hotloop brief $OWN --focus cold_spin --json cpuhog.pb.gz >out.json &&
	jq -e "(.hotspots|length) == 1 and .hotspots[0].function == \"cold_spin\"" out.json
'

test_expect_code 1 '--focus on a function without samples is an error' '
	hotloop brief $OWN --focus no_such_fn cpuhog.pb.gz >out 2>err; rc=$?
	expect_grep "no owned function matching .no_such_fn." err || exit 99; exit $rc
'

test_expect_success 'a stripped binary: unknown frames, a warning, still a brief' '
	cp "$WORKLOADS/cpuhog" ./stripped && strip ./stripped &&
	hotloop record -o stripped.pb.gz -- ./stripped 0.3 2>/dev/null &&
	hotloop brief --json stripped.pb.gz >out.json &&
	jq -e ".quality.unknown_pct > 50" out.json &&
	jq -e ".quality.warnings | any(test(\"without a symbol\"))" out.json
'

test_expect_code 1 'not a profile' '
	echo "garbage that is not a profile" | gzip >bad.pb.gz
	hotloop brief bad.pb.gz >out 2>err; rc=$?
	test ! -s out && expect_grep "bad.pb.gz" err || exit 99; exit $rc
'
test_expect_code 1 'a missing profile' 'hotloop brief no-such-file.pb.gz'
test_expect_code 1 'a missing --owned directory' 'hotloop brief --owned /no/such/dir cpuhog.pb.gz'
test_expect_code 2 'an unknown format' 'hotloop brief --format xml cpuhog.pb.gz'
test_expect_code 2 'two profiles' 'hotloop brief cpuhog.pb.gz strlen.pb.gz'

test_done
