#!/bin/sh
# hotloop asm --json: the document's keys and their types (docs/asm.md),
# with and without a profile.
. "$(dirname "$0")/test-lib.sh"

# Every key of the top-level document with its type.
top_types='{
	binary: (.binary | type), arch: (.arch | type), build_id: (.build_id | type),
	function: (.function | type), system_name: (.system_name | type),
	start: (.start | type), end: (.end | type), size: (.size | type),
	relocatable: (.relocatable | type), inlined: (.inlined | type), sample_type: (.sample_type | type),
	samples: (.samples | type), profile_samples: (.profile_samples | type),
	hot_rule: (.hot_rule | type), hot_instructions: (.hot_instructions | type),
	instructions: (.instructions | type), loops: (.loops | type), mix: (.mix | type),
	loop_free: (.loop_free | type), indirect_jumps: (.indirect_jumps | type),
	tags: (.tags | type), vector: (.vector | type), simd_share: (.simd_share | type),
	verdict: (.verdict | type)
}'

test_expect_success 'without a profile: keys, types, nulls' '
	hotloop asm --json "$WORKLOADS/asmdot-O2" --fn dot >d.json &&
	jq -c "$top_types" d.json >types &&
	cat >want <<-\EOF &&
	{"binary":"string","arch":"string","build_id":"string","function":"string","system_name":"string","start":"number","end":"number","size":"number","relocatable":"boolean","inlined":"null","sample_type":"null","samples":"null","profile_samples":"null","hot_rule":"string","hot_instructions":"number","instructions":"array","loops":"array","mix":"object","loop_free":"boolean","indirect_jumps":"number","tags":"array","vector":"null","simd_share":"number","verdict":"string"}
	EOF
	{ cmp types want || { cat types; false; }; } &&
	jq -e "(keys | length) == 24" d.json >/dev/null &&
	jq -e ".arch == \"x86-64\" and .function == \"dot\" and .hot_rule == \"loops\" and .size == .end - .start" d.json >/dev/null
'

test_expect_success 'each instruction' '
	jq -e "all(.instructions[];
		(.address | type) == \"number\" and (.size | type) == \"number\" and
		(.mnemonic | type) == \"string\" and (.operands | type) == \"string\" and
		(.classes | type) == \"array\" and (.hot | type) == \"boolean\" and
		(.hot_loop | type) == \"boolean\" and .samples == null and .share == null and
		((.file | type) == \"string\" or .file == null) and
		((.line | type) == \"number\" or .line == null) and
		((.inlined | type) == \"string\" or .inlined == null) and
		((.target | type) == \"number\" or .target == null) and
		(.reads | type) == \"array\" and (.writes | type) == \"array\" and
		(if (.classes | index(\"simd\")) then (.simd_width | type) == \"number\" else .simd_width == null end))" d.json >/dev/null &&
	jq -e "[.instructions[].address] == ([.instructions[].address] | sort)" d.json >/dev/null &&
	jq -e "[.instructions[] | select(.mnemonic == \"mulss\")][0].classes == [\"load\", \"fp-scalar\", \"fp-arith\"]" d.json >/dev/null
'

test_expect_success 'loops, mix and tags' '
	jq -e ".loops | length == 1 and (.[0] | .innermost and .parent == null and .head == .start and .depth == 1 and .samples == null)" d.json >/dev/null &&
	jq -e ".loop_free == false and .indirect_jumps == 0" d.json >/dev/null &&
	jq -e ".mix | (keys == [\"function\", \"hot\", \"hot_loop\", \"samples\"]) and .samples == null" d.json >/dev/null &&
	jq -e ".mix.function | keys == ([\"instructions\", \"fp_scalar\", \"fp_div\", \"simd\", \"simd64\", \"simd128\", \"simd256\", \"simd512\", \"simd_scalable\", \"load\", \"store\", \"branch\", \"cond_branch\", \"int_div\", \"call\"] | sort)" d.json >/dev/null &&
	jq -e ".mix.hot == .mix.hot_loop and .mix.hot.fp_scalar == 2" d.json >/dev/null &&
	jq -e "[.tags[].name] == [\"scalar-fp\", \"not-vectorized\"] and all(.tags[]; (.evidence | length) > 10)" d.json >/dev/null
'

test_expect_success 'vectorized: the vector object' '
	hotloop asm --json "$WORKLOADS/asmdot-avx2" --fn dot >v.json &&
	jq -e ".vector.width == 256 and (.vector.isa | startswith(\"AVX\")) and .tags == []" v.json >/dev/null
'

test_have_prereq PERF || skip_all="perf events are not permitted here (see hotloop doctor)"

test_expect_success 'with a profile: samples, shares and the weighted mix' '
	hotloop record -o p.pb.gz -- "$WORKLOADS/asmdot-O2" 0.3 2>/dev/null &&
	hotloop asm --json "$WORKLOADS/asmdot-O2" --fn dot --profile p.pb.gz >p.json &&
	jq -e ".sample_type == \"samples\" and (.samples | type) == \"number\" and .profile_samples >= .samples" p.json >/dev/null &&
	jq -e "all(.instructions[]; (.samples | type) == \"number\" and (.share | type) == \"number\")" p.json >/dev/null &&
	jq -e ".mix.samples | (.instructions > 0.99) and (.load | type) == \"number\"" p.json >/dev/null &&
	jq -e ".hot_rule == \"samples\" and .hot_instructions >= 1" p.json >/dev/null
'

test_done
