# test-lib.sh: the small harness every tests/e2e/tNNNN-*.sh script sources.
#
#   test_expect_success 'title' 'commands'   run commands; they must succeed
#   test_expect_code N 'title' 'cmds'         the commands must exit with N
#   test_when_finished 'cmds'                cleanup after the current test
#   test_have_prereq NAME                    PERF, VALGRIND, GO, KERNEL_SYMS, TWO_CPUS, SANDBOX
#   test_skip_unless NAME 'reason'           skip the rest of the tests
#   test_skip 'title' 'reason'               count one test as skipped, say why
#   test_note 'text'                         a figure worth seeing (tests/run-e2e shows it)
#   path_without TOOL                        a $PATH directory without TOOL
#   test_done                                print the tally, exit
#
# Each script runs in a fresh scratch directory; $HOTLOOP is the binary,
# $WORKLOADS the directory with the built test programs, $DATA tests/data.

TEST_DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$TEST_DIR/../.." && pwd)
HOTLOOP=${HOTLOOP:-$ROOT/build/hotloop}
WORKLOADS=$ROOT/tests/workloads/bin
DATA=$ROOT/tests/data
export HOTLOOP WORKLOADS DATA ROOT

# ASan+UBSan builds: fail on the first report, don't drown in leak noise from
# the profiled programs (which are not sanitized).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=99}

test_name=$(basename "$0" .sh)
SCRATCH=$(mktemp -d "/tmp/hotloop-$test_name.XXXXXX")
trap '[ -n "$KEEP_SCRATCH" ] || rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH" || exit 1
# the checkouts compare and the loop make go under the cache: this test's own
XDG_CACHE_HOME=$SCRATCH/.cache
export XDG_CACHE_HOME

n_pass=0 n_fail=0 n_skip=0 skip_all=""
hotloop() { "$HOTLOOP" "$@"; }

test_when_finished() {
	cleanup_cmds="$1; $cleanup_cmds"
}

say() { printf '%s\n' "$*"; }

# The test runs in a subshell; its test_when_finished cleanup runs there too,
# when the subshell ends, even through an `exit` in the test.
run_test() {
	out=$( (cleanup_cmds=""
		trap '[ -z "$cleanup_cmds" ] || (eval "$cleanup_cmds") >/dev/null 2>&1' EXIT
		eval "$1") 2>&1 )
	rc=$?
	return $rc
}

test_expect_success() {
	if [ -n "$skip_all" ]; then
		n_skip=$((n_skip + 1)); say "skip $test_name: $1 ($skip_all)"; return
	fi
	if run_test "$2"; then
		n_pass=$((n_pass + 1)); say "ok $test_name: $1"
	else
		n_fail=$((n_fail + 1)); say "FAIL $test_name: $1"
		printf '%s\n' "$out" | sed 's/^/    /'
	fi
}

test_expect_code() {
	want=$1; shift
	if [ -n "$skip_all" ]; then
		n_skip=$((n_skip + 1)); say "skip $test_name: $1 ($skip_all)"; return
	fi
	run_test "$2"
	if [ $rc -eq "$want" ]; then
		n_pass=$((n_pass + 1)); say "ok $test_name: $1"
	else
		n_fail=$((n_fail + 1)); say "FAIL $test_name: $1 (exit $rc, wanted $want)"
		printf '%s\n' "$out" | sed 's/^/    /'
	fi
}

test_have_prereq() {
	case "$1" in
	PERF)
		# can hotloop sample a trivial command? (root, CAP_PERFMON, or a
		# low enough kernel.perf_event_paranoid)
		"$HOTLOOP" record -F 99 -o "$SCRATCH/.perf-probe.pb.gz" -- true >/dev/null 2>&1 ;;
	VALGRIND) command -v valgrind >/dev/null ;;
	GO) command -v go >/dev/null ;;
	TWO_CPUS) [ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] ;;
	# can bubblewrap make the loop's sandbox here?
	SANDBOX) command -v bwrap >/dev/null &&
		bwrap --die-with-parent --unshare-pid --ro-bind / / --dev /dev --proc /proc true 2>/dev/null ;;
	KERNEL_SYMS) [ -r /proc/kallsyms ] && [ "$(awk 'NR==1{print $1}' /proc/kallsyms)" != 0000000000000000 ] ;;
	*) echo "unknown prereq $1" >&2; return 1 ;;
	esac
}

test_skip() {
	n_skip=$((n_skip + 1)); say "skip $test_name: $1 ($2)"
}

test_note() {
	say "note $test_name: $*"
}

test_skip_unless() {
	test_have_prereq "$1" || skip_all=${2:-"needs $1"}
}

# path_without TOOL: a directory to use as $PATH that has everything of
# /usr/bin and /bin but TOOL (made once; its path on stdout)
path_without() {
	d=$SCRATCH/.path-without-$1
	if [ ! -d "$d" ]; then
		mkdir "$d" &&
		for f in /usr/bin/* /bin/*; do
			case ${f##*/} in "$1") ;; *) [ -e "$d/${f##*/}" ] || ln -s "$f" "$d/" ;; esac
		done
	fi
	echo "$d"
}

# grep that shows what it searched on failure
expect_grep() {
	if ! grep -q -e "$1" "$2"; then
		echo "expected /$1/ in $2:"; head -n 40 "$2"; return 1
	fi
}

test_done() {
	echo "# passed $n_pass failed $n_fail skipped $n_skip"
	[ $n_fail -eq 0 ]
	exit
}
