#!/bin/sh
# callgrind.out as input: valgrind's callgrind on cpuhog, then report, flame,
# brief and convert read it. Self cost per function must equal
# callgrind_annotate's exclusive cost; totals approximate its inclusive cost.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless VALGRIND "valgrind is not installed"

# "self<TAB>file<TAB>function" for the top rows of callgrind_annotate
annotate_rows() {
	callgrind_annotate --auto=no --threshold=100 "$@" | awk '
		/^ *[0-9,]+ +\( *[0-9.]+%\) +[^ ]/ && !/PROGRAM TOTALS/ && !/=>/ {
			n = $1; gsub(",", "", n)
			rest = $0; sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", rest)
			sub(/ \[.*\]$/, "", rest)
			sub(/ \([0-9]+x\)$/, "", rest)
			i = match(rest, /:[^:]*$/)
			if (!i) next
			print n "\t" substr(rest, 1, i - 1) "\t" substr(rest, i + 1)
		}'
}

# our self (or total) of function $2 whose file ends in $3 in report JSON $1
our() {
	jq -r --arg n "$2" --arg f "$3" --arg k "$4" \
		'[.rows[] | select(.name == $n and (if $f == "???" then .file == "" else (.file | endswith($f | ltrimstr("./"))) end))][0][$k] // "none"' "$1"
}

test_expect_success 'callgrind on cpuhog' '
	valgrind --tool=callgrind --callgrind-out-file=cg.out "$WORKLOADS/cpuhog" 0.05 2>vg.err &&
	head -n 1 cg.out | grep -q "^# callgrind format"
'

test_expect_success 'report: hot_spin on top, self equals callgrind_annotate exclusive cost' '
	hotloop report --json --top 0 cg.out >r.json &&
	test "$(jq -r .sample_type r.json)" = Ir/count &&
	test "$(jq -r ".rows[0].name" r.json)" = hot_spin &&
	annotate_rows cg.out | head -n 8 >ann.tsv &&
	test $(wc -l <ann.tsv) -ge 5 &&
	while IFS="	" read -r n f fn; do
		got=$(our r.json "$fn" "$f" self) &&
		if test "$got" != "$n"; then echo "$f:$fn: ours $got, callgrind_annotate $n"; exit 1; fi
	done <ann.tsv &&
	total=$(callgrind_annotate cg.out | awk "/PROGRAM TOTALS/ { gsub(\",\", \"\", \$1); print \$1 }") &&
	test "$(jq -r .total r.json)" = "$total"
'

test_expect_success 'report: total of run_loop is within 0.1% of the inclusive cost' '
	annotate_rows --inclusive=yes cg.out | awk -F "	" "\$2 ~ /cpuhog[.]c\$/ && \$3 == \"run_loop\" { print \$1 }" >incl &&
	test $(wc -l <incl) -eq 1 &&
	ours=$(our r.json run_loop cpuhog.c total) &&
	theirs=$(cat incl) &&
	echo "run_loop total: ours $ours, callgrind_annotate $theirs" &&
	awk -v a="$ours" -v b="$theirs" "BEGIN { d = a - b; if (d < 0) d = -d; exit !(d * 1000 <= b) }" &&
	main=$(our r.json main cpuhog.c total) &&
	test $((main * 10)) -gt $((ours * 9))
'

test_expect_success 'report --by line: the hottest line is in hot_spin' '
	hotloop report --json --by line cg.out >line.json &&
	test "$(jq -r ".rows[0].name" line.json)" = hot_spin &&
	test "$(jq -r ".rows[0].line" line.json)" -gt 0
'

test_expect_success 'flame draws the stacks' '
	hotloop flame cg.out -o cg.svg &&
	expect_grep "hot_spin" cg.svg &&
	expect_grep "run_loop" cg.svg
'

test_expect_success 'brief attributes to owned source under tests/workloads, stacks complete' '
	hotloop brief --json --owned "$ROOT/tests/workloads" cg.out >b.json &&
	test "$(jq -r ".hotspots[0].function" b.json)" = hot_spin &&
	jq -e ".hotspots[0].attributed_pct > 80" b.json >/dev/null &&
	jq -e ".quality.truncated_pct == 0 and (.quality.warnings | length) == 0" b.json >/dev/null
'

test_expect_success 'convert --to pprof keeps the costs' '
	hotloop convert cg.out -o cg.pb.gz --to pprof &&
	hotloop report --json --top 0 cg.pb.gz >c.json &&
	test "$(jq -c "[.rows[] | [.name, .self, .total]]" c.json)" = \
	     "$(jq -c "[.rows[] | [.name, .self, .total]]" r.json)" &&
	hotloop convert cg.out -o cg.folded --to folded &&
	expect_grep "main;run_loop;hot_spin " cg.folded
'

test_expect_success 'gzipped callgrind output reads the same' '
	gzip -c cg.out >cg.out.gz &&
	hotloop report --json --top 0 cg.out.gz >z.json &&
	test "$(jq -c .rows z.json)" = "$(jq -c .rows r.json)"
'

test_expect_success '--dump-instr=yes: addresses and lines, self still exact' '
	valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cgi.out \
		"$WORKLOADS/cpuhog" 0.05 2>vg.err &&
	grep -q "^positions: instr line" cgi.out &&
	hotloop report --json --top 0 cgi.out >ri.json &&
	test "$(jq -r ".rows[0].name" ri.json)" = hot_spin &&
	annotate_rows cgi.out | head -n 5 >anni.tsv &&
	while IFS="	" read -r n f fn; do
		got=$(our ri.json "$fn" "$f" self) &&
		if test "$got" != "$n"; then echo "$f:$fn: ours $got, callgrind_annotate $n"; exit 1; fi
	done <anni.tsv &&
	hotloop convert cgi.out -o cgi.pb.gz &&
	hotloop flame cgi.out -o cgi.svg
'

test_expect_success 'two events: --sample-type picks one' '
	printf "%s\n" "# callgrind format" "events: Ir Dr" "fl=a.c" "fn=main" "1 10 3" \
		"cfn=f" "calls=1 5" "2 6 2" "fn=f" "5 6 2" >two.out &&
	hotloop report --json --sample-type Dr two.out >d.json &&
	test "$(jq -r .total d.json)" = 5 &&
	test "$(jq -r "[.rows[] | select(.name == \"main\")][0].total" d.json)" = 5
'

test_expect_code 1 'a broken file names its line' '
	printf "%s\n" "# callgrind format" "events: Ir" "fn=main" "1 2 3" >bad.out &&
	hotloop report bad.out 2>err
'

test_expect_success 'the error says what and where' '
	expect_grep "bad.out.: line 4: more costs than the 1 event" err
'

test_expect_success 'hostile inputs under tests/data/callgrind-bad fail with their line' '
	n=0 &&
	for f in "$DATA"/callgrind-bad/*.out*; do
		n=$((n + 1)) &&
		base=${f%.gz} && base=${base%.out} &&
		hotloop report "$f" >/dev/null 2>err
		rc=$?
		if test $rc -ne 1; then echo "$f: exit $rc"; cat err; exit 1; fi
		if ! grep -qF "$(cat "$base.err")" err; then
			echo "$f: expected $(cat "$base.err")"; cat err; exit 1
		fi
	done &&
	test $n -ge 8
'

test_done
