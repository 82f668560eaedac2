#!/bin/sh
# hotloop scale WORKLOAD: the run line of a hotloop.conf workload, {n}
# replaced, in the config's directory, at its 'sizes' (or --sizes); the
# results go under the git top level, which git status does not show.
. "$(dirname "$0")/test-lib.sh"

command -v jq >/dev/null || skip_all="needs jq (apt-get install jq)"
command -v git >/dev/null || skip_all="needs git"
test_have_prereq PERF || skip_all="perf events are not permitted here (see hotloop doctor)"

test_expect_success 'setup: a git project with two scaling workloads' '
	mkdir proj && cd proj &&
	git init -q . && git config user.email t@example.com && git config user.name t &&
	mkdir -p app/sub && cp "$WORKLOADS/scalework" app/ &&
	cat >app/hotloop.conf <<-\EOF_CONF &&
	[workload "small"]
		run = ./scalework {n}
		sizes = 200 400 800
		primary = yes
	[workload "grow"]
		run = ./scalework {n} && test {n} -gt 0
		sizes = 10000, 2500 5000
	EOF_CONF
	git add app && git commit -qm conf
'

test_expect_success 'a named workload at its sizes, in the config directory' '
	cd proj/app/sub &&
	hotloop scale --json -F 1999 grow >"$SCRATCH/out.json" 2>"$SCRATCH/err" &&
	J="$SCRATCH/proj/.hotloop/scale/grow.json" &&
	jq -S . "$J" >"$SCRATCH/a" && jq -S . "$SCRATCH/out.json" >"$SCRATCH/b" && cmp "$SCRATCH/a" "$SCRATCH/b" &&
	jq -e ".workload == \"grow\" and .command == \"./scalework {n} && test {n} -gt 0\" and
	       .sizes == [2500, 5000, 10000]" "$SCRATCH/out.json" >/dev/null &&
	jq -r ".functions[] | select(.function == \"count_duplicate_pairs\" or .function == \"sum_items\") |
		\"\(.function) \(.exponent) [\(.ci_low), \(.ci_high)]\"" "$SCRATCH/out.json" >&2 &&
	jq -e "[.functions[] | select(.function == \"count_duplicate_pairs\")][0] |
	       .fitted and .exponent >= 1.6 and .exponent <= 2.4 and .superlinear" "$SCRATCH/out.json" >/dev/null &&
	jq -e "[.functions[] | select(.function == \"sum_items\")][0] |
	       .fitted and .exponent >= 0.6 and .exponent <= 1.4 and (.superlinear | not)" "$SCRATCH/out.json" >/dev/null &&
	for n in 2500 5000 10000; do
		test -s "$SCRATCH/proj/.hotloop/scale/grow/n$n.pb.gz" || exit 1
	done &&
	! test -e .hotloop && ! test -e ../.hotloop &&
	test -z "$(git status --porcelain)"
'

test_expect_success 'hotloop run feeds the growth exponents into the brief' '
	cd proj/app &&
	hotloop run grow --no-build --format json >"$SCRATCH/brief.json" 2>"$SCRATCH/err" &&
	jq -e ".hotspots[] | select(.function == \"count_duplicate_pairs\") |
	       .growth.exponent > 1.3 and ([.tags[].tag] | index(\"superlinear\") != null)" \
		"$SCRATCH/brief.json" >/dev/null &&
	jq -e ".hotspots[] | select(.function == \"sum_items\") | .growth.exponent < 1.3 and
	       ([.tags[].tag] | index(\"superlinear\") == null)" "$SCRATCH/brief.json" >/dev/null &&
	jq -e ".scale | test(\"/.hotloop/scale/grow.json$\")" "$SCRATCH/proj/.hotloop/runs/latest/meta.json" >/dev/null
'

test_expect_success 'brief --workload joins the saved exponents; without it there are none' '
	cd proj/app &&
	P="$SCRATCH/proj/.hotloop/runs/latest/profile.pb.gz" &&
	hotloop brief --json --workload grow "$P" >"$SCRATCH/with.json" &&
	jq -e ".hotspots[] | select(.function == \"count_duplicate_pairs\") | .growth.exponent > 1.3" \
		"$SCRATCH/with.json" >/dev/null &&
	hotloop brief --json "$P" >"$SCRATCH/without.json" &&
	jq -e "[.hotspots[].growth] | all(. == null)" "$SCRATCH/without.json" >/dev/null &&
	{ hotloop brief --workload nosuch "$P" 2>"$SCRATCH/err"; test $? -eq 1; } &&
	expect_grep "unknown workload .nosuch." "$SCRATCH/err"
'

test_expect_success 'run --scale runs the scale check itself: superlinear without a second command' '
	cd proj/app &&
	rm -rf "$SCRATCH/proj/.hotloop/scale" &&
	hotloop run grow --no-build --scale --format json >"$SCRATCH/brief.json" 2>"$SCRATCH/err" &&
	test -s "$SCRATCH/proj/.hotloop/scale/grow.json" &&
	jq -e ".hotspots[] | select(.function == \"count_duplicate_pairs\") |
	       .growth.exponent > 1.3 and ([.tags[].tag] | index(\"superlinear\") != null)" \
		"$SCRATCH/brief.json" >/dev/null &&
	jq -e ".scale | test(\"/.hotloop/scale/grow.json$\")" "$SCRATCH/proj/.hotloop/runs/latest/meta.json" >/dev/null
'

test_expect_code 1 'run --scale on a workload without sizes says what to add' '
	mkdir -p ns && printf "[workload \"w\"]\n\trun = %s {n}\n" "$WORKLOADS/scalework" >ns/hotloop.conf &&
	(cd ns && hotloop run w --size 100 --no-build --scale) >/dev/null 2>"$SCRATCH/err"; rc=$?
	expect_grep "has no sizes for --scale: add .sizes = " "$SCRATCH/err" || exit 99; exit $rc
'

test_expect_success 'without a name the primary; --sizes over the config; a table by default' '
	cd proj/app &&
	hotloop scale --min-samples 1 --sizes 100,300,900 >"$SCRATCH/out" 2>"$SCRATCH/err" &&
	J="$SCRATCH/proj/.hotloop/scale/small.json" &&
	jq -e ".workload == \"small\" and .sizes == [100, 300, 900]" "$J" >/dev/null &&
	expect_grep "^# .small. at 3 sizes, 100 to 900" "$SCRATCH/out" &&
	expect_grep "^(program) " "$SCRATCH/out" &&
	test -z "$(git status --porcelain)"
'

test_expect_success 'a configured workload that fails at one size: the size is named' '
	cd proj/app &&
	printf "[workload \"w\"]\n\trun = test {n} -lt 300 && ./scalework {n}\n\tsizes = 100 200 400\n" >fail.conf &&
	{ hotloop scale -f fail.conf 2>"$SCRATCH/err"; test $? -eq 1; } &&
	expect_grep "the workload failed at size 400: exit status 1" "$SCRATCH/err"
'

test_done
