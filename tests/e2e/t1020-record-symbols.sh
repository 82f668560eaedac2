#!/bin/sh
# Every location is symbolized when the profile is written: shared
# libraries, inline chains and C++ names, with nothing left for pprof to do.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-profile.sh"

test_skip_unless PERF 'perf events not permitted here (run as root or lower kernel.perf_event_paranoid)'
test_skip_unless GO 'go tool pprof is needed to read profiles back'

test_expect_success 'usesshlib: shlib_hot is on top, in libhotshlib.so' '
	hotloop record -o sh.pb.gz -- "$WORKLOADS/usesshlib" 0.5 &&
	test "$(pp_top_self sh.pb.gz)" = shlib_hot &&
	lib=$(pp_mapping_of sh.pb.gz shlib_hot) &&
	case "$lib" in */libhotshlib.so) ;; *) echo "mapping: $lib"; exit 1 ;; esac
'

test_expect_success 'usesshlib with dwarf: main calls shlib_hot across the library boundary' '
	hotloop record --call-graph dwarf -o shd.pb.gz -- "$WORKLOADS/usesshlib" 0.3 &&
	pp_calls shd.pb.gz main shlib_hot
'

test_expect_success 'inlined: mix_step is an inlined frame inside outer_loop' '
	hotloop record -o inl.pb.gz -- "$WORKLOADS/inlined" 0.5 &&
	pp_inlined_into inl.pb.gz mix_step outer_loop &&
	pp_calls inl.pb.gz outer_loop mix_step &&
	pp_traces inl.pb.gz | grep -q "mix_step (inline)"
'

test_expect_success 'inlined: source lines of the inlined code' '
	pp_raw inl.pb.gz >raw &&
	expect_grep "mix_step .*inlined\.c:[0-9]" raw
'

test_expect_success 'cxxhog: hotns::Matrix::multiply(int) demangled' '
	hotloop record -o cxx.pb.gz -- "$WORKLOADS/cxxhog" 0.5 &&
	test "$(pp_top_self cxx.pb.gz)" = "hotns::Matrix::multiply(int)"
'

test_expect_success 'mappings say what was symbolized' '
	pp_raw cxx.pb.gz >raw &&
	exe=$(cd "$WORKLOADS" && pwd)/cxxhog &&
	expect_grep " $exe [0-9a-f]* \[FN\]\[FL\]\[LN\]\[IN\]" raw
'

test_expect_success 'clockhog: the vdso is symbolized in its own mapping' '
	hotloop record -o vdso.pb.gz -- "$WORKLOADS/clockhog" 0.5 &&
	test "$(pp_top_self vdso.pb.gz)" = __vdso_clock_gettime &&
	test "$(pp_mapping_of vdso.pb.gz __vdso_clock_gettime)" = "[vdso]"
'

test_expect_success 'clockhog with dwarf: unwinding goes through the vdso' '
	hotloop record --call-graph dwarf -o vdsod.pb.gz -- "$WORKLOADS/clockhog" 0.5 &&
	pp_calls vdsod.pb.gz __clock_gettime __vdso_clock_gettime &&
	pp_calls vdsod.pb.gz read_clock wl_now &&
	pp_calls vdsod.pb.gz main read_clock
'

test_done
