#!/bin/sh
# convert --to speedscope: one sampled profile, frames shared and named
# with their files, stacks root first, weights that add up; checked against
# the schema speedscope publishes (file-format-schema.json, from its npm
# package, with ajv).
. "$(dirname "$0")/test-lib.sh"

cat >in.folded <<-\EOC
main;parse;strlen 60
main;parse 10
main;emit;__vfprintf_internal 30
EOC

NPM=$ROOT/build/npm/node_modules
SCHEMA=$NPM/speedscope/dist/release/file-format-schema.json
validate() { NODE_PATH=$NPM node "$TEST_DIR/speedscope-validate.js" "$1" "$SCHEMA"; }

test_expect_success 'folded stacks to speedscope: frames, stacks root first, weights' '
	hotloop convert in.folded -o out.speedscope.json &&
	jq -e ".\"\$schema\" == \"https://www.speedscope.app/file-format-schema.json\" and
		.exporter == \"hotloop\" and .name == \"in.folded\" and .activeProfileIndex == 0" out.speedscope.json &&
	jq -e ".profiles | length == 1" out.speedscope.json &&
	jq -e ".profiles[0] | .type == \"sampled\" and .unit == \"none\" and .startValue == 0 and
		.endValue == 100 and (.weights | add) == 100 and (.samples | length) == (.weights | length)" out.speedscope.json &&
	jq -e "[.shared.frames[].name] | sort == [\"__vfprintf_internal\", \"emit\", \"main\", \"parse\", \"strlen\"]" out.speedscope.json &&
	jq -r ".profiles[0] as \$p | .shared.frames as \$f | range(\$p.samples | length) |
		([\$p.samples[.][] | \$f[.].name] | join(\";\")) + \" \" + (\$p.weights[.] | tostring)" out.speedscope.json |
		sort >stacks &&
	sort in.folded >want && cmp want stacks
'

test_expect_success 'a name that is not UTF-8 keeps its frame, each bad byte as U+FFFD' '
	printf "main;bad\377name 5\n" >bad.folded &&
	hotloop convert bad.folded -o bad.speedscope.json &&
	jq -e "[.shared.frames[].name] | sort == [\"bad\\ufffdname\", \"main\"]" bad.speedscope.json
'

if test_have_prereq PERF; then
test_expect_success 'a recording: source files and first lines; cpu weights in nanoseconds' '
	hotloop record -o rec.pb.gz -- "$WORKLOADS/cpuhog" 0.2 2>/dev/null &&
	hotloop convert rec.pb.gz --to speedscope --weight period -o - >rec.json &&
	jq -e ".profiles[0].unit == \"nanoseconds\" and .profiles[0].name == \"cpu\"" rec.json &&
	jq -e ".shared.frames[] | select(.name == \"hot_spin\") | (.file | test(\"cpuhog.c$\")) and .line > 0" rec.json &&
	jq -e ".profiles[0] as \$p | .shared.frames as \$f |
		[range(\$p.weights | length)] | max_by(\$p.weights[.]) as \$i |
		\$f[\$p.samples[\$i][-1]].name == \"hot_spin\" and \$f[\$p.samples[\$i][0]].name != \"hot_spin\"" rec.json
'
else
test_skip 'a recording: source files and first lines; cpu weights in nanoseconds' 'perf events are not available'
fi

if [ -f "$SCHEMA" ] && [ -d "$NPM/ajv" ] && command -v node >/dev/null; then
test_expect_success 'the output conforms to speedscope'"'"'s published schema' '
	validate out.speedscope.json &&
	{ ! test -f rec.json || validate rec.json; }
'
test_expect_success 'the schema check can fail: a document without frames does not conform' '
	jq "del(.shared)" out.speedscope.json >broken.json &&
	! validate broken.json 2>/dev/null
'
else
test_skip 'the output conforms to speedscope'"'"'s published schema' 'needs node and build/npm (make deps)'
test_skip 'the schema check can fail' 'needs node and build/npm (make deps)'
fi

test_expect_code 2 'an unknown --to names speedscope among the choices' '
	hotloop convert in.folded --to chrome -o x 2>err; rc=$?
	expect_grep "use pprof, folded or speedscope" err || exit 99; exit $rc
'

test_done
