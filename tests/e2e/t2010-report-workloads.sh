#!/bin/sh
# report on profiles of our own workloads: the known hot function on top by
# self and total, shared libraries as their DSO, inlined functions named,
# C++ demangled, kernel frames tagged.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF "perf events are not permitted here (see hotloop doctor)"

rec() { name=$1; shift; hotloop record -o "$SCRATCH/$name.pb.gz" -- "$WORKLOADS/$name" "$@" 2>/dev/null; }
row() { jq -r ".rows[$2] | $3" "$1"; }

test_expect_success 'cpuhog: hot_spin on top by self, its callers on top by total' '
	rec cpuhog 0.5 &&
	hotloop report --json cpuhog.pb.gz >self.json &&
	test "$(row self.json 0 .name)" = hot_spin &&
	jq -e ".rows[0].self_pct > 60 and .rows[0].file != \"\" and .rows[0].dso == \"cpuhog\"" self.json >/dev/null &&
	hotloop report --json --sort total cpuhog.pb.gz >total.json &&
	jq -e "[.rows[] | select(.name==\"run_loop\")][0].total_pct > 90" total.json >/dev/null &&
	jq -e "[.rows[].name] | index(\"run_loop\") < index(\"hot_spin\")" total.json >/dev/null
'

test_expect_success 'cpuhog --by line: the hottest line is inside hot_spin' '
	hotloop report --json --by line cpuhog.pb.gz >line.json &&
	test "$(row line.json 0 .name)" = hot_spin &&
	line=$(row line.json 0 .line) &&
	start=$(grep -n "hot_spin(unsigned long n)" "$ROOT/tests/workloads/cpuhog.c" | cut -d: -f1) &&
	test "$line" -gt "$start" && test "$line" -lt $((start + 8))
'

test_expect_success 'threads: thread_spin on top' '
	rec threads 0.4 &&
	hotloop report --json threads.pb.gz >r.json &&
	test "$(row r.json 0 .name)" = thread_spin
'

test_expect_success 'shared library: shlib_hot in libhotshlib.so' '
	rec usesshlib 0.4 &&
	hotloop report --json usesshlib.pb.gz >r.json &&
	test "$(row r.json 0 .name)" = shlib_hot &&
	test "$(row r.json 0 .dso)" = libhotshlib.so &&
	hotloop report --json --by dso usesshlib.pb.gz >dso.json &&
	test "$(row dso.json 0 .name)" = libhotshlib.so
'

test_expect_success 'inlined: mix_step named and marked inlined, inside outer_loop' '
	rec inlined 0.4 &&
	hotloop report --json inlined.pb.gz >r.json &&
	test "$(row r.json 0 .name)" = mix_step &&
	test "$(row r.json 0 .inlined)" = true &&
	jq -e "[.rows[] | select(.name==\"outer_loop\")][0] | .inlined == false and .total_pct > 90" r.json >/dev/null &&
	hotloop report inlined.pb.gz >r.txt && expect_grep "mix_step .*\[inlined\]" r.txt
'

test_expect_success 'C++: the method demangled' '
	rec cxxhog 0.4 &&
	hotloop report --json cxxhog.pb.gz >r.json &&
	test "$(row r.json 0 .name)" = "hotns::Matrix::multiply(int)"
'

test_have_prereq KERNEL_SYMS || skip_all="kernel symbols are hidden (kptr_restrict)"

test_expect_success 'kernel frames are tagged' '
	rec libccall 0.4 write &&
	hotloop report --json --top 0 libccall.pb.gz >r.json &&
	jq -e "[.rows[] | select(.kernel)] | length > 0" r.json >/dev/null &&
	jq -e "[.rows[] | select(.kernel)] | all(.dso == \"[kernel.kallsyms]\")" r.json >/dev/null
'

test_done
