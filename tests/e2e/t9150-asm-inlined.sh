#!/bin/sh
# hotloop asm --fn on a function that was inlined everywhere (no symbol of
# its own): found through DWARF in the function it was inlined into, only
# its copies' code analysed and listed, "inlined into" said in text and
# JSON; with a profile, the samples counted are the copies'; the brief
# shows that verdict for the inlined hotspot.
. "$(dirname "$0")/test-lib.sh"

bin=$WORKLOADS/inlinemix

test_expect_success 'no symbol of its own' '
	! nm "$bin" | grep -q " hash_step$"
'

test_expect_success 'text: inlined into scan, the rest of scan left out' '
	hotloop asm "$bin" --fn hash_step >out &&
	expect_grep "^function  hash_step$" out &&
	expect_grep "^inlined   into scan at 0x[0-9a-f]*-0x[0-9a-f]*: 1 copy, [0-9]* bytes in [0-9]* ranges\\{0,1\\}, [0-9]* instructions$" out &&
	expect_grep "instructions\\{0,1\\} of scan, not inlined hash_step$" out &&
	expect_grep "^hot       \\* the [0-9]* instructions of the innermost loops" out &&
	expect_grep "^verdict   " out
'

test_expect_success 'json: the inlined object, only the copies instructions' '
	hotloop asm --json "$bin" --fn hash_step >in.json &&
	hotloop asm --json "$bin" --fn scan >scan.json &&
	jq -e ".function == \"hash_step\" and .inlined.into == \"scan\" and .inlined.copies == 1" in.json >/dev/null &&
	jq -e ".start == $(jq .start scan.json) and .end == $(jq .end scan.json)" in.json >/dev/null &&
	jq -e ".inlined.all_into == [{\"function\": \"scan\", \"copies\": 1, \"bytes\": .inlined.bytes, \"samples\": null}]" in.json >/dev/null &&
	jq -e "(.inlined.ranges | length) >= 1 and all(.inlined.ranges[]; .start < .end)" in.json >/dev/null &&
	jq -e "(.instructions | length) < $(jq ".instructions | length" scan.json)" in.json >/dev/null &&
	jq -e "all(.instructions[]; .address as \$a | any(\$ranges[]; .start <= \$a and \$a < .end))" \
		--argjson ranges "$(jq .inlined.ranges in.json)" in.json >/dev/null &&
	jq -e "[.instructions[] | select(.hot)] | length > 0 and all(.[]; .inlined == \"hash_step\")" in.json >/dev/null &&
	jq -e ".inlined == null" scan.json >/dev/null
'

test_expect_success 'a name neither a symbol nor inlined is still an error' '
	{ hotloop asm "$bin" --fn no_such_step >out 2>err; test $? -eq 1; } &&
	expect_grep "no function .no_such_step." err
'

test_skip_unless PERF "perf events are not permitted here (see hotloop doctor)"

test_expect_success 'with a profile: the copies samples, the hot set inside them' '
	hotloop record -o mix.pb.gz -- "$bin" 0.5 2>/dev/null &&
	hotloop asm --json "$bin" --fn hash_step --profile mix.pb.gz >p.json &&
	jq -e ".samples > 0 and .inlined.all_into[0].samples == .samples" p.json >/dev/null &&
	jq -e "([.instructions[] | .samples] | add) == .samples" p.json >/dev/null &&
	jq -e ".hot_rule == \"samples\" and all(.instructions[] | select(.hot); .inlined == \"hash_step\")" p.json >/dev/null &&
	hotloop report --json --top 0 mix.pb.gz >r.json &&
	inl=$(jq "[.rows[] | select(.name == \"hash_step\")][0].self" r.json) &&
	test "$(jq .samples p.json)" -ge "$inl" &&
	hotloop asm "$bin" --fn hash_step --profile mix.pb.gz >out &&
	expect_grep "^samples   [0-9]* samples in its inlined code" out
'

test_expect_success 'brief: the inlined hotspot gets the verdict of its code in scan' '
	hotloop brief --owned "$ROOT/tests/workloads" --focus hash_step mix.pb.gz >b.md &&
	expect_grep "^- asm (inlined into .scan.): " b.md &&
	hotloop brief --owned "$ROOT/tests/workloads" --focus hash_step --json mix.pb.gz >b.json &&
	jq -e ".hotspots[0] | .function == \"hash_step\" and .asm_inlined_into == \"scan\" and (.asm | length) > 0" b.json >/dev/null
'

test_done
