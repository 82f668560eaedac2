#!/bin/sh
# hotloop asm with a recorded profile: samples land on the instructions of
# the hot loop, the hot set holds 80% of them, and the sample-based rules
# tell a column-wise matrix sum (memory-bound) from a row-wise one, and find
# the division by its samples.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF "perf events are not permitted here (see hotloop doctor)"

rec() { out=$1; shift; hotloop record -o "$out" -- "$@" 2>/dev/null; }

test_expect_success 'dot: the most samples on an instruction inside the loop' '
	rec dot.pb.gz "$WORKLOADS/asmdot-O2" 0.5 &&
	hotloop asm --json "$WORKLOADS/asmdot-O2" --fn dot --profile dot.pb.gz >dot.json &&
	jq -e ".hot_rule == \"samples\" and .samples > 50 and .sample_type == \"samples\"" dot.json >/dev/null &&
	top=$(jq "[.instructions[] | select(.samples > 0)] | max_by(.samples) | .address" dot.json) &&
	jq -e --argjson a "$top" "[.loops[] | select(.innermost and .start <= \$a and \$a <= .end)] | length == 1" dot.json >/dev/null &&
	jq -e --argjson a "$top" ".instructions[] | select(.address == \$a) | .hot and .hot_loop" dot.json >/dev/null &&
	jq -e ".verdict == \"hot loop is scalar FP, not vectorized\"" dot.json >/dev/null
'

test_expect_success 'dot: the hot set holds at least 80% of the samples, shares add up' '
	jq -e "([.instructions[] | select(.hot) | .samples] | add) >= 0.8 * .samples" dot.json >/dev/null &&
	jq -e "([.instructions[] | .samples] | add) == .samples" dot.json >/dev/null &&
	jq -e "([.instructions[] | .share // 0] | add) > 0.999" dot.json >/dev/null
'

test_expect_success 'dot: the text marks the sampled instructions with their share' '
	hotloop asm "$WORKLOADS/asmdot-O2" --fn dot --profile dot.pb.gz >out &&
	expect_grep "^samples   [0-9]* samples in this function" out &&
	expect_grep "^\* *[0-9a-f]* *[0-9.]*% " out &&
	expect_grep "^mix .*samples$" out
'

test_expect_success 'a matrix summed by column: memory-bound' '
	rec cols.pb.gz "$WORKLOADS/asmloops" 0.5 cols &&
	hotloop asm "$WORKLOADS/asmloops" --fn sum_cols --profile cols.pb.gz >out &&
	expect_grep "^verdict   memory-bound: [0-9]*% of hot samples on loads" out &&
	expect_grep "^  memory-bound " out
'

test_expect_success 'summed by row: not memory-bound' '
	rec rows.pb.gz "$WORKLOADS/asmloops" 0.5 rows &&
	hotloop asm --json "$WORKLOADS/asmloops" --fn sum_rows --profile rows.pb.gz >rows.json &&
	jq -e ".samples > 50" rows.json >/dev/null &&
	jq -e "[.tags[].name] | index(\"memory-bound\") == null" rows.json >/dev/null &&
	jq -e ".verdict == \"hot loop is scalar integer code, not vectorized\"" rows.json >/dev/null
'

test_expect_success 'x % d: the division found by its samples' '
	rec mod.pb.gz "$WORKLOADS/asmloops" 0.5 mod 7 &&
	hotloop asm "$WORKLOADS/asmloops" --fn mod_sum --profile mod.pb.gz >out &&
	expect_grep "^verdict   integer division in the hot loop" out &&
	expect_grep "^  division  *idiv at 0x[0-9a-f]* and the two instructions after it hold [0-9]*% of the function.s samples" out
'

test_expect_success '--sample-type picks the value' '
	hotloop asm --json "$WORKLOADS/asmdot-O2" --fn dot --profile dot.pb.gz --sample-type cpu >cpu.json &&
	jq -e ".sample_type == \"cpu\" and .samples > 1000000" cpu.json >/dev/null
'

test_expect_success 'a profile of another program: no samples, the loops instead' '
	rec other.pb.gz "$WORKLOADS/cpuhog" 0.2 &&
	hotloop asm "$WORKLOADS/asmdot-O2" --fn dot --profile other.pb.gz >out &&
	expect_grep "^samples   none of the profile.s [0-9]* samples are in this function" out &&
	expect_grep "^hot       \* the 6 instructions of the innermost loops" out
'

test_expect_success 'a binary rebuilt since the recording: its samples are left out' '
	cp "$WORKLOADS/asmdot-O2" prog &&
	rec prog.pb.gz ./prog 0.3 &&
	cp "$WORKLOADS/asmdot-avx2" prog &&
	hotloop asm prog --fn dot --profile prog.pb.gz >out 2>err &&
	expect_grep "build id .* left out" err &&
	expect_grep "^samples   none of" out
'

test_done
