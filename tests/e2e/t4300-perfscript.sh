#!/bin/sh
# perf script text as input: report finds the hot function, and convert's
# folded stacks equal what FlameGraph's stackcollapse-perf.pl makes of the
# same text, for the default fields, -F comm,tid,time,ip,sym,dso, -F
# +srcline, --inline and a comm with a space in it; text read in chunks
# (a pipe, a cut, a line longer than a chunk) reads as the whole file.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF 'perf events not permitted here (run as root or lower kernel.perf_event_paranoid)'
command -v perf >/dev/null || skip_all='perf is not installed'
FLAMEGRAPH=${FLAMEGRAPH:-$ROOT/bench/out/FlameGraph}

# stackcollapse-perf.pl puts the comm at the root of every stack (hotloop
# keeps it as a label) and marks kernel frames only with --kernel; it
# counts the period when headers show one, which is --weight period. It
# also takes every bracketed DSO for the kernel, [vdso] too; hotloop does
# not, so the vDSO's functions lose that mark here.
collapse() {
	perl "$FLAMEGRAPH/stackcollapse-perf.pl" --kernel "$1" 2>/dev/null |
	sed -e 's/^[^;]*;//' -e 's/\(__vdso_[A-Za-z0-9_]*\)_\[k\]/\1/g' |
	awk '{ c = $NF; $NF = ""; sub(/ $/, ""); n[$0] += c }
	     END { for (k in n) printf "%s %.0f\n", k, n[k] }' | LC_ALL=C sort
}

# scaled K FOLDED: its stacks, each once, with K times its count
scaled() {
	awk -v k="$1" '{ c = $NF; $NF = ""; n[$0] += c * k }
	     END { for (s in n) printf "%s%.0f\n", s, n[s] }' "$2" | LC_ALL=C sort
}

same_as_perl() {
	hotloop convert "$1" --to folded --weight period -o - | LC_ALL=C sort > ours &&
	collapse "$1" > theirs &&
	test -s ours && diff ours theirs
}

test_expect_success 'record a callchain profile with perf' '
	perf record -q -g -o perf.data "$WORKLOADS/cpuhog" 0.5 >/dev/null 2>&1 &&
	perf script -i perf.data > s.txt 2>/dev/null &&
	expect_grep "hot_spin+0x" s.txt
'

test_expect_success 'report puts hot_spin on top' '
	hotloop report s.txt --top 1 > top &&
	expect_grep "% .* hot_spin " top &&
	hotloop report s.txt --json > r.json &&
	expect_grep "\"hot_spin\"" r.json
'

test_expect_success 'convert to pprof keeps the cpu time' '
	hotloop convert s.txt -o s.pb.gz &&
	hotloop report s.pb.gz --top 1 > top2 &&
	expect_grep "cpu (nanoseconds)" top2 &&
	expect_grep " hot_spin " top2
'

test_expect_success 'kernel frames are marked in folded stacks' '
	perf record -q -g -o sys.data "$WORKLOADS/forker" 0.3 >/dev/null 2>&1 &&
	perf script -i sys.data > sys.txt 2>/dev/null &&
	hotloop convert sys.txt --to folded -o sys.folded &&
	if grep -q kernel.kallsyms sys.txt
	then
		expect_grep "_\[k\]" sys.folded
	fi
'

test_expect_success 'variants of the fields parse' '
	perf script -i perf.data -F comm,tid,time,ip,sym,dso > f.txt 2>/dev/null &&
	perf script -i perf.data -F +srcline > sl.txt 2>/dev/null &&
	perf script -i perf.data --inline > in.txt 2>/dev/null &&
	for f in f.txt sl.txt in.txt
	do
		hotloop report $f --top 1 > top.$f &&
		expect_grep " hot_spin " top.$f || exit 1
	done &&
	hotloop report sl.txt --by line --top 1 > line.txt &&
	expect_grep "cpuhog.c:[0-9]" line.txt
'

test_expect_success 'a comm with a space in it' '
	cp "$WORKLOADS/cpuhog" "my hog" &&
	perf record -q -g -o sp.data "./my hog" 0.3 >/dev/null 2>&1 &&
	perf script -i sp.data > sp.txt 2>/dev/null &&
	expect_grep "^my hog " sp.txt &&
	hotloop convert sp.txt -o sp.pb.gz &&
	hotloop report sp.pb.gz --top 1 > top.sp &&
	expect_grep " hot_spin " top.sp
'

if ! test -f "$FLAMEGRAPH/stackcollapse-perf.pl"
then
	test_skip 'folded stacks equal stackcollapse-perf.pl' "no FlameGraph at '$FLAMEGRAPH' (set FLAMEGRAPH, or run bench/collapse once)"
else
	test_expect_success 'folded stacks equal stackcollapse-perf.pl' '
		same_as_perl s.txt &&
		same_as_perl f.txt &&
		same_as_perl sl.txt &&
		same_as_perl in.txt &&
		same_as_perl sp.txt
	'
fi

# the text is read in chunks of 256 KiB: through a pipe, cut anywhere,
# with a line longer than a chunk, it gives what the whole file gives
test_expect_success 'text larger than a chunk, from a file and from a pipe' '
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do cat s.txt; done > big.txt &&
	test $(wc -c < big.txt) -gt 300000 &&
	hotloop convert big.txt --to folded --weight period -o file.folded &&
	cat big.txt | hotloop convert - --to folded --weight period -o pipe.folded &&
	test -s file.folded &&
	cmp file.folded pipe.folded &&
	hotloop convert s.txt --to folded --weight period -o one.folded &&
	scaled 16 one.folded > sum1 &&
	scaled 1 file.folded > sum2 &&
	test -s sum1 &&
	cmp sum1 sum2
'

test_expect_success 'cut at any byte near a chunk boundary: read, or refused by line' '
	for n in 262143 262144 262145 300001; do
		head -c $n big.txt > cut.txt &&
		hotloop convert cut.txt --to folded -o cut.folded 2>err; rc=$?
		case $rc in
		0) test -s cut.folded || exit 1 ;;
		1) expect_grep "cut.txt.: line [0-9]" err || exit 1 ;;
		*) cat err; exit 1 ;;
		esac
	done
'

test_expect_success 'a frame line longer than a chunk' '
	{ cat s.txt; head -n 1 s.txt; printf "\t 1214 "; head -c 600000 /dev/zero | tr "\\0" f; printf " (/x)\n\n"; } > long.txt &&
	hotloop convert long.txt --to folded -o long.folded &&
	expect_grep "^fff*f 1\$" long.folded &&
	expect_grep "hot_spin" long.folded
'

test_expect_code 1 'a line that is neither header nor frame names its line' '
	{ head -n 3 s.txt; echo "	what is this"; } > bad.txt &&
	hotloop report bad.txt 2>err; rc=$?
	expect_grep "bad.txt.: line 4: neither a sample header nor a frame" err || exit 99; exit $rc
'

test_done
