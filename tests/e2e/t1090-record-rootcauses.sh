#!/bin/sh
# The workloads of tests/workloads/rootcauses.txt, each with one planted
# root cause: in a recorded profile, by total (self and callees), the
# root-cause function is on top of the functions built from
# tests/workloads/, once the callers on its stacks are discounted and
# with most of its total not in the functions of ours that it calls.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF "perf events are not permitted here (see hotloop doctor)"

table=$ROOT/tests/workloads/rootcauses.txt

# relatives FOLDED FN: "caller NAME" for each frame above FN in some
# stack, "callee NAME" for each frame below its deepest FN (so that a
# recursive FN is not its own callee)
relatives() {
	awk -v fn="$2" '{
		sub(/ [0-9]+$/, "")
		n = split($0, f, ";")
		for (i = 1; i <= n; i++)
			sub(/_\[[ik]\]$/, "", f[i])
		first = last = 0
		for (i = 1; i <= n; i++)
			if (f[i] == fn || index(f[i], fn "(") == 1) {
				if (!first)
					first = i
				last = i
			}
		if (!first)
			next
		for (i = 1; i < first; i++)
			print "caller " f[i]
		for (i = last + 1; i <= n; i++)
			print "callee " f[i]
	}' "$1" | sort -u
}

# root_cause_on_top REPORT_JSON FN RELATIVES: FN is a row, and among the
# owned rows (functions from a file in tests/workloads/)
#  - each one with a larger total is a caller of FN,
#  - each caller's total outside FN's (at most) is below FN's total,
#  - the ones FN calls hold less than half its total together,
# so FN's own cost, with the foreign code it calls, is the largest.
root_cause_on_top() {
	jq -R 'split(" ") | {(.[0]): .[1:] | join(" ")}' "$3" | jq -s . >rel.json &&
	jq -e --arg fn "$2" --slurpfile rel rel.json '
		def is_fn: .name == $fn or (.name | startswith($fn + "("));
		($rel[0] | map(.caller // empty)) as $callers
		| ($rel[0] | map(.callee // empty)) as $callees
		| [.rows[] | select(.file | test("/tests/workloads/[^/]+$"))] as $owned
		| ([.rows[] | select(is_fn)] | max_by(.total)) as $f
		| def caller: .name as $n | $callers | index([$n]) != null;
		  def callee: .name as $n | $callees | index([$n]) != null;
		$f != null and
		($owned | all(is_fn or .total < $f.total or caller)) and
		($owned | all(is_fn or (caller | not) or .total - $f.total < $f.total)) and
		([$owned[] | select((is_fn | not) and callee) | .total] | add // 0) * 2 < $f.total
	' "$1" >/dev/null || {
		echo "wanted $2 on top; its relatives:"
		sed "s/^/  /" "$3"
		echo "owned functions:"
		jq -r '.rows[] | select(.file | test("/tests/workloads/[^/]+$")) |
			"  \(.name) total \(.total) self \(.self)"' "$1"
		return 1
	}
}

test_expect_success 'rootcauses.txt: four or five TAB-separated fields, programs built' '
	grep -v "^#" "$table" | grep -v "^\$" >lines &&
	test -s lines &&
	awk -F"\t" "(NF != 4 && NF != 5) || \$1 == \"\" || \$3 == \"\" || \$4 == \"\" { print; bad = 1 } END { exit bad }" lines &&
	cut -f1 lines | while read -r prog; do test -x "$WORKLOADS/$prog" || exit 1; done
'

grep -v '^#' "$table" | grep -v '^$' >"$SCRATCH/rootcauses" || :
while IFS='	' read -r prog args fn tag rec; do
	test_expect_success "$prog: $fn ($tag) on top of the owned functions" '
		hotloop record $rec -o $prog.pb.gz -- "$WORKLOADS/$prog" $args 2>/dev/null &&
		hotloop report --json --sort total --top 0 $prog.pb.gz >$prog.json &&
		hotloop convert $prog.pb.gz --to folded -o $prog.folded &&
		relatives $prog.folded "$fn" >$prog.rel &&
		root_cause_on_top $prog.json "$fn" $prog.rel
	'
done <"$SCRATCH/rootcauses"

test_expect_success 'qsortfmt with DWARF stacks: compare_records holds most of the time' '
	hotloop record --call-graph dwarf -o qsort-dwarf.pb.gz -- "$WORKLOADS/qsortfmt" 0.4 2>/dev/null &&
	hotloop report --json --sort total --top 0 qsort-dwarf.pb.gz >q.json &&
	jq -e "[.rows[] | select(.name == \"compare_records\")][0].total_pct > 50" q.json >/dev/null
'

test_done
