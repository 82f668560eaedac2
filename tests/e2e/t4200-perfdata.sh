#!/bin/sh
# perf.data as a profile: files that `perf record` wrote go straight into
# report, flame, brief and convert; the hot function and its share agree
# with `perf report`; forks, threads, shared libraries, dwarf call graphs
# and task-clock come through; a rebuilt binary and a truncated or
# pipe-mode file are refused or warned about by name; a file mapped and
# one read whole from a pipe give the same profile.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF "perf events are not permitted here (see hotloop doctor)"
command -v perf >/dev/null 2>&1 || skip_all="the perf tool is not installed (make deps installs linux-perf)"

# perf keeps a copy of every binary it saw in $HOME/.debug, its build-id
# cache: here, in the scratch directory's own home
mkdir -p home
prec() { out=$1; shift; HOME=$PWD/home perf record -q -o "$out" "$@" >/dev/null 2>perf.err; }
row() { jq -r ".rows[$2] | $3" "$1"; }

# perf weighs by period, hotloop's self_pct by samples: close, not equal
test_expect_success 'cpuhog: hot_spin on top, its self share within 2 points of perf report' '
	prec perf.data -g "$WORKLOADS/cpuhog" 0.5 &&
	hotloop report --json perf.data >r.json &&
	test "$(row r.json 0 .name)" = hot_spin &&
	test "$(row r.json 0 .dso)" = cpuhog &&
	ours=$(row r.json 0 .self_pct) &&
	perf report -i perf.data --stdio --no-children --sort sym 2>/dev/null >perf.txt &&
	theirs=$(awk "/\] hot_spin\$/ { sub(\"%\", \"\", \$1); print \$1; exit }" perf.txt) &&
	test -n "$theirs" &&
	awk -v a="$ours" -v b="$theirs" "BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 2) }"
'

# perf's frame pointer walk skips run_loop, the caller of the frameless leaf
# (perf report shows main -> hot_spin too); dwarf call graphs below have it.
test_expect_success 'the profile says what was recorded: cpu-clock, the command, the stack' '
	hotloop report perf.data >r.txt &&
	expect_grep "samples" r.txt &&
	hotloop convert --to folded perf.data -o out.folded &&
	expect_grep ";main;hot_spin [0-9]*\$" out.folded &&
	hotloop convert --to pprof perf.data -o out.pb.gz &&
	hotloop report --json out.pb.gz >p.json &&
	test "$(row p.json 0 .name)" = hot_spin &&
	hotloop brief perf.data >brief.txt &&
	expect_grep "cpu-clock" brief.txt &&
	expect_grep "^# hotloop brief: .*perf record .*cpuhog 0.5\$" brief.txt
'

test_expect_success 'flame reads it' '
	hotloop flame -o flame.svg perf.data &&
	expect_grep "hot_spin" flame.svg
'

test_expect_success 'threads (two threads) and forker (FORK, COMM of children)' '
	prec threads.data -g "$WORKLOADS/threads" 0.4 &&
	hotloop report --json threads.data >t.json &&
	test "$(row t.json 0 .name)" = thread_spin &&
	prec forker.data -g "$WORKLOADS/forker" 0.4 &&
	hotloop report --json forker.data >f.json &&
	test "$(row f.json 0 .name)" = child_spin &&
	test "$(row f.json 0 .dso)" = forker
'

test_expect_success 'usesshlib: the hot function in its DSO' '
	prec shlib.data -g "$WORKLOADS/usesshlib" 0.4 &&
	hotloop report --json shlib.data >s.json &&
	test "$(row s.json 0 .name)" = shlib_hot &&
	test "$(row s.json 0 .dso)" = libhotshlib.so
'

test_expect_success 'task-clock: samples weighed as cpu time' '
	prec tc.data -e task-clock -g "$WORKLOADS/cpuhog" 0.4 &&
	hotloop report --json tc.data >tc.json &&
	test "$(row tc.json 0 .name)" = hot_spin &&
	hotloop convert --to pprof tc.data -o tc.pb.gz &&
	hotloop report --sample-type cpu --json tc.pb.gz >tcc.json &&
	test "$(row tcc.json 0 .name)" = hot_spin
'

test_expect_success 'two events: the first is read (samples found by id), the other named' '
	prec two.data -e task-clock,cpu-clock -g "$WORKLOADS/cpuhog" 0.3 &&
	hotloop report --json two.data >two.json 2>err &&
	test "$(row two.json 0 .name)" = hot_spin &&
	expect_grep "only those of .task-clock. are read, not .cpu-clock." err &&
	theirs=$(perf script -i two.data -F event 2>/dev/null | grep -c "^ *task-clock:") &&
	test "$(jq .total two.json)" = "$theirs"
'

test_expect_success '--call-graph dwarf: unwound to main through the user stack' '
	prec dwarf.data --call-graph dwarf,8192 "$WORKLOADS/cpuhog" 0.3 &&
	hotloop report --json --sort total dwarf.data >d.json &&
	jq -e "[.rows[] | select(.name==\"run_loop\")][0].total_pct > 90" d.json >/dev/null &&
	hotloop report --json dwarf.data >ds.json &&
	test "$(row ds.json 0 .name)" = hot_spin
'

test_expect_success 'a rebuilt binary (another build id) is not symbolized with the new code' '
	cc -O1 -g -fno-omit-frame-pointer -o prog "$ROOT/tests/workloads/cpuhog.c" \
		-Wl,--build-id=0x1111111111111111111111111111111111111111 &&
	prec rebuilt.data -g ./prog 0.3 &&
	HOME=$PWD/home hotloop report --json rebuilt.data >before.json &&
	test "$(row before.json 0 .name)" = hot_spin &&
	cc -O1 -g -fno-omit-frame-pointer -o prog "$ROOT/tests/workloads/cpuhog.c" \
		-Wl,--build-id=0x2222222222222222222222222222222222222222 &&
	mkdir -p nocache &&
	HOME=$PWD/nocache hotloop report --json rebuilt.data >after.json 2>err &&
	expect_grep "prog.* has build id .2222222222222222222222222222222222222222., not .1111111111111111111111111111111111111111. as recorded" err &&
	! jq -e "[.rows[].name] | index(\"hot_spin\")" after.json >/dev/null
'

test_expect_success 'the recorded build is found in perf'"'"'s build-id cache when the file changed' '
	test -f home/.debug/.build-id/11/11111111111111111111111111111111111111/elf &&
	HOME=$PWD/home hotloop report --json rebuilt.data >cached.json 2>err &&
	test "$(row cached.json 0 .name)" = hot_spin &&
	! grep -q "has build id" err
'

test_expect_success 'a mapped file that is now a FIFO is not opened for reading (no hang)' '
	cp "$WORKLOADS/cpuhog" ./fifoprog &&
	prec fifo.data -g ./fifoprog 0.2 &&
	rm fifoprog && mkfifo fifoprog &&
	HOME=$PWD/nocache timeout 60 "$HOTLOOP" report --json fifo.data >fifo.json 2>err &&
	expect_grep "fifoprog. is not a regular file" err
'

test_expect_code 1 'a truncated copy fails naming the offset' '
	head -c 3000 perf.data >cut.data &&
	hotloop report cut.data 2>err;
	rc=$?;
	expect_grep "cannot read .cut.data.: the data section (.*) is out of the file at byte 40" err || exit 99
	exit $rc
'

test_expect_code 1 'a pipe-mode file is refused with a remedy' '
	perf record -q -o - "$WORKLOADS/cpuhog" 0.1 >pipe.data 2>/dev/null &&
	hotloop report pipe.data 2>err;
	rc=$?;
	expect_grep "pipe-mode perf.data .* not supported: convert it with .perf inject" err || exit 99
	exit $rc
'

# a file is mapped and read round by round, standard input read whole:
# the same profile either way; cut short inside its records, an error
test_expect_success 'mapped from a file or read whole from a pipe: the same profile' '
	hotloop convert perf.data --to folded -o mapped.folded &&
	cat perf.data | hotloop convert - --to folded -o piped.folded &&
	test -s mapped.folded &&
	cmp mapped.folded piped.folded
'

test_expect_code 1 'cut short inside its records: refused with the byte' '
	size=$(wc -c < perf.data) &&
	head -c $((size / 2)) perf.data > half.data &&
	hotloop report half.data >/dev/null 2>err; rc=$?
	expect_grep "cannot read .half.data.: .* at byte [0-9]" err || exit 99; exit $rc
'

test_expect_success 'seed files under tests/data/perfdata decode' '
	for f in "$DATA"/perfdata/*.data; do
		hotloop report --json "$f" >seed.json || exit 1
		jq -e ".rows | length > 0" seed.json >/dev/null || exit 1
	done
'

# inputs the fuzzer found: each is read (exit 0) or refused with a message
# (exit 1); never a crash or, under the sanitized build, a sanitizer report
test_expect_success 'files that once broke the reader are read or refused cleanly' '
	n=0 &&
	for f in "$DATA"/perfdata-bad/*; do
		n=$((n + 1))
		hotloop report "$f" >/dev/null 2>err; rc=$?
		case $rc in
		0) ;;
		1) expect_grep "cannot read" err || exit 1 ;;
		*) echo "$f: exit $rc"; cat err; exit 1 ;;
		esac
	done &&
	test $n -ge 2
'

test_done
