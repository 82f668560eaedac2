#!/bin/sh
# hotloop's pprof, decoded by another implementation of profile.proto: the
# npm pprof-format package (installed into build/npm by make deps). Sample
# types, totals, string_table[0] == "" and the top function agree with
# hotloop report.
. "$(dirname "$0")/test-lib.sh"

NPM=$ROOT/build/npm/node_modules
command -v node >/dev/null || skip_all="node is not installed (make deps installs nodejs)"
[ -f "$NPM/pprof-format/package.json" ] || skip_all="build/npm lacks pprof-format (make deps installs it)"
decode() { NODE_PATH=$NPM node "$TEST_DIR/pprof-check.js" "$1"; }

cat >in.folded <<-\EOC
main;parse;strlen 60
main;parse 10
main;emit;__vfprintf_internal 30
EOC

test_expect_success 'a convert from folded stacks' '
	hotloop convert in.folded -o conv.pb.gz &&
	decode conv.pb.gz >conv.json &&
	jq -e ".sample_types == [\"samples/count\"] and .totals == [100] and .string0 == \"\" and
		.samples == 3 and .top == \"strlen\"" conv.json
'

if test_have_prereq PERF; then
test_expect_success 'a recording of cpuhog: types, totals, hot_spin on top, mappings' '
	hotloop record -o rec.pb.gz -- "$WORKLOADS/cpuhog" 0.3 2>/dev/null &&
	decode rec.pb.gz >rec.json &&
	hotloop report --json rec.pb.gz >rep.json &&
	jq -e ".sample_types == [\"samples/count\", \"cpu/nanoseconds\"] and .string0 == \"\" and
		.top == \"hot_spin\" and .mappings > 0 and .totals[1] > 0" rec.json &&
	test "$(jq ".totals[0]" rec.json)" = "$(jq .total rep.json)"
'
else
test_skip 'a recording of cpuhog: types, totals, hot_spin on top, mappings' 'perf events are not available'
fi

test_expect_success 'the check can fail: a profile cut short, or not a profile at all' '
	gzip -dc conv.pb.gz >conv.pb &&
	head -c 40 conv.pb >cut.pb &&
	! decode cut.pb >/dev/null 2>&1 &&
	printf "\377\377\377\377\377\377\377\377\377\377\377" >junk.pb &&
	! decode junk.pb >/dev/null 2>&1
'

test_done
