#!/bin/sh
# hotloop config: finds hotloop.conf up to the git top level, prints it
# normalized (and the normalized form reads back the same), reports every
# error with file and line, and the --json document has its documented keys.
. "$(dirname "$0")/test-lib.sh"

command -v jq >/dev/null || skip_all="needs jq (apt-get install jq)"

test_expect_success 'the bundled example validates' '
	(cd "$ROOT/examples/wordfreq" && hotloop config >"$SCRATCH/out") &&
	expect_grep "^\[workload \"big\"\]" out &&
	expect_grep "^	run = ./wordfreq data/big.txt" out &&
	expect_grep "^	test = make test" out &&
	expect_grep "^	owned = src$" out &&
	(cd "$ROOT/examples/wordfreq" && hotloop config --json) >out.json &&
	test "$(jq -r .primary out.json)" = big &&
	test "$(jq -r ".workloads | map(.name) | join(\",\")" out.json)" = big,small
'

test_expect_success 'found in a parent directory, up to the git top level' '
	mkdir -p repo/.git repo/sub/dir &&
	cp "$DATA/config/full.conf" repo/hotloop.conf &&
	(cd repo/sub/dir && hotloop config --json) >out.json &&
	test "$(jq -r .file out.json)" = "$(cd repo && pwd -P)/hotloop.conf"
'

test_expect_code 1 'not beyond the git top level' '
	mkdir -p outer/repo/.git outer/repo/sub &&
	cp "$DATA/config/full.conf" outer/hotloop.conf &&
	cd outer/repo/sub && hotloop config 2>err; rc=$?
	expect_grep "no hotloop.conf in .* run .hotloop init" err || exit 99; exit $rc
'

test_expect_success 'the normalized form reads back to the same config' '
	for f in "$DATA"/config/[!e]*.conf; do
		hotloop config -f "$f" >norm.conf &&
		hotloop config --json -f "$f" | jq "del(.file)" >a.json &&
		hotloop config --json -f norm.conf | jq "del(.file)" >b.json &&
		cmp a.json b.json || { echo "$f"; exit 1; }
	done
'

test_expect_code 1 'every error is reported with its file and line' '
	cat >hotloop.conf <<-\EOF_CONF &&
	[improve]
		min-improvment = 3%
		guard-regression = 2
	[workload "a"]
		run = ./a
		primary = yes
	[workload "b"]
		primary = yes
	EOF_CONF
	hotloop config 2>err; rc=$?
	expect_grep "^hotloop: hotloop.conf:2: unknown key .min-improvment. in \[improve\] (did you mean .min-improvement.?)" err &&
	expect_grep "^hotloop: hotloop.conf:3: bad value .2. for .guard-regression." err &&
	expect_grep "^hotloop: hotloop.conf:7: \[workload \"b\"\] has no .run. command" err &&
	expect_grep "^hotloop: hotloop.conf:8: two primary workloads" err &&
	test $(wc -l <err) = 4 || exit 99; exit $rc
'

test_expect_code 1 'under --json an error is a document' '
	printf "[gate]\n\ttimeout = 1s\n" >hotloop.conf &&
	hotloop config --json >out 2>/dev/null; rc=$?
	jq -e ".error | test(\"no workload\")" out >/dev/null || exit 99; exit $rc
'

test_expect_success '--json has the documented keys and types' '
	hotloop config --json -f "$DATA/config/full.conf" >out.json &&
	jq -e "
		(.file | type == \"string\") and
		(.project.build | type == \"string\") and
		(.project.owned | type == \"array\") and
		(.project.protected | type == \"array\") and
		(.project.kb | type == \"string\") and
		(.project.brief_budget == 4000) and
		(.gate.test | type == \"string\") and
		(.gate.fingerprint | type == \"boolean\") and
		(.gate.timeout_s | type == \"number\") and
		(.improve.metric | type == \"string\") and
		(.improve.min_improvement == 0.03) and
		(.improve.guard_regression == 0.02) and
		(.improve.guard_floor_s == 0.005) and
		(.improve.ram_budget_bytes == 2147483648) and
		(.improve.suspicious_speedup | type == \"number\") and
		(.improve.rounds == 10) and
		(.improve.max_rejects_in_a_row == 3) and
		(.improve.min_share == 0.05) and
		(.improve.lenses == [\"algorithmic\", \"locality\"]) and
		(.agent.command == \"claude -p\") and
		(.agent.timeout_s == 1200) and
		(.primary == \"big\") and
		(.workloads[0].sizes == [1000, 2000, 4000]) and
		(.workloads[1] == {name: \"small\", run: \"./wordfreq data/small.txt\", primary: false, timeout_s: 60, scenario: null, sizes: []}) and
		(.metrics[0] == {name: \"events_per_second\", better: \"higher\", tolerance: 0.02}) and
		(.scenarios[0].phases[1] == {name: \"pressure\", kind: \"pressure\", seconds: 60, until_exit: false, load: \"ab -n 1000 \\\"http://localhost:{port}/#x\\\"\"}) and (.scenarios[0].judge == \"pressure\") and (.scenarios[0].stop == {signal: \"INT\", grace_s: 5})
	" out.json >/dev/null
'

test_expect_code 1 'a missing -f file is an error' 'hotloop config -f nonexistent.conf'
test_expect_code 2 'an unknown option is a usage error' 'hotloop config --frobnicate'
test_expect_code 2 'an extra argument is a usage error' 'hotloop config extra'

test_done
