#!/bin/sh
# hotloop asm without a profile: the verdict of each workload's hot loop
# from its code alone (scalar FP, vectorized, division, branch-heavy,
# scalar integer), and functions found by C++ name, in a shared library
# and in an object file.
. "$(dirname "$0")/test-lib.sh"

verdict() { hotloop asm "$@" >out && sed -n 's/^verdict   //p' out; }

test_expect_success 'float dot product at -O2: scalar FP, not vectorized' '
	v=$(verdict "$WORKLOADS/asmdot-O2" --fn dot) &&
	test "$v" = "hot loop is scalar FP, not vectorized" &&
	expect_grep "^  scalar-fp .*mulss, addss" out &&
	expect_grep "^  not-vectorized " out
'

test_expect_success 'the same at -O3 -march=x86-64-v3: vectorized, 256-bit' '
	v=$(verdict "$WORKLOADS/asmdot-avx2" --fn dot) &&
	case "$v" in "vectorized (AVX"*", 256-bit)") ;; *) echo "$v"; false ;; esac &&
	! grep -q "^  not-vectorized" out
'

test_expect_success 'x % runtime divisor: integer division in the hot loop' '
	v=$(verdict "$WORKLOADS/asmloops" --fn mod_sum) &&
	test "$v" = "integer division in the hot loop" &&
	expect_grep "^  division  *idiv at 0x" out
'

test_expect_success 'a test and a store per bit: branch-heavy' '
	v=$(verdict "$WORKLOADS/asmloops" --fn tally) &&
	case "$v" in "branch-heavy: "*) ;; *) echo "$v"; false ;; esac &&
	expect_grep "^  branchy  *5 of the" out
'

test_expect_success 'a matrix summed by column, without samples: scalar integer code' '
	v=$(verdict "$WORKLOADS/asmloops" --fn sum_cols) &&
	test "$v" = "hot loop is scalar integer code, not vectorized"
'

test_expect_success 'the listing: hot loop marked, grouped by source line' '
	hotloop asm "$WORKLOADS/asmdot-O2" --fn dot >out &&
	expect_grep "^hot       \* the 6 instructions of the innermost loops" out &&
	test "$(grep -c "^\* " out)" -eq 6 &&
	expect_grep "^workloads/asmdot.c:[0-9]*$" out &&
	grep "^\* " out | grep -q mulss
'

test_expect_success 'inlined code: its lines name the inlined function' '
	hotloop asm "$WORKLOADS/inlined" --fn outer_loop >out &&
	expect_grep "^workloads/inlined.c:[0-9]* (inlined mix_step)$" out &&
	hotloop asm --json "$WORKLOADS/inlined" --fn outer_loop >o.json &&
	jq -e "[.instructions[] | select(.hot) | .inlined] | any(. == \"mix_step\")" o.json >/dev/null
'

test_expect_success 'a C++ method by its demangled name, with or without parameters' '
	hotloop asm "$WORKLOADS/cxxhog" --fn "hotns::Matrix::multiply(int)" >a &&
	hotloop asm "$WORKLOADS/cxxhog" --fn hotns::Matrix::multiply >b &&
	cmp a b &&
	expect_grep "^function  hotns::Matrix::multiply(int) (_ZN" a
'

test_expect_success 'a function of a shared library' '
	hotloop asm "$WORKLOADS/libhotshlib.so" --fn shlib_hot >out &&
	expect_grep "^function  shlib_hot$" out && expect_grep "^verdict   " out
'

test_expect_success 'a function by an address inside it' '
	start=$(hotloop asm --json "$WORKLOADS/asmloops" --fn mod_sum | jq .start) &&
	hotloop asm "$WORKLOADS/asmloops" --fn "$(printf "0x%x" $((start + 3)))" >out &&
	expect_grep "^function  mod_sum$" out
'

test_expect_success 'a stripped file: symbols and lines from its debug file' '
	cp "$WORKLOADS/asmloops" prog &&
	objcopy --only-keep-debug prog prog.debug && strip prog &&
	objcopy --add-gnu-debuglink=prog.debug prog &&
	hotloop asm prog --fn mod_sum >out &&
	expect_grep "^verdict   integer division in the hot loop" out &&
	expect_grep "^workloads/asmloops.c:[0-9]*$" out &&
	mkdir .debug && mv prog.debug .debug/ &&
	hotloop asm prog --fn mod_sum >out &&
	expect_grep "^function  mod_sum$" out
'

test_expect_success 'an object file: offsets in its section, calls are not loops' '
	cat >obj.c <<-\EOF &&
	double sqrt(double);
	double norm(const double *x, int n)
	{
		double s = 0;
		for (int i = 0; i < n; i++)
			s += x[i] * x[i];
		return sqrt(s);
	}
	EOF
	cc -O2 -c obj.c -o obj.o &&
	hotloop asm obj.o --fn norm >out &&
	expect_grep "offsets in its section" out &&
	expect_grep "^verdict   hot loop is scalar FP, not vectorized" out
'

test_expect_success 'a long function lists its hot region; --all lists everything' '
	{
		echo "int big(const int *x, int n) { int s = 0;"
		i=0; while [ $i -lt 120 ]; do echo "s ^= x[$i] * $((i + 3));"; i=$((i + 1)); done
		echo "for (int i = 0; i < n; i++) s += x[i] % 7 == 3; return s; }"
	} >big.c &&
	cc -O1 -c big.c -o big.o &&
	hotloop asm big.o --fn big >short &&
	hotloop asm big.o --fn big --all >all &&
	expect_grep "^          \.\.\. [0-9]* instructions$" short &&
	! grep -q "^          \.\.\." all &&
	test "$(wc -l <all)" -gt $(($(wc -l <short) + 100))
'

test_done
