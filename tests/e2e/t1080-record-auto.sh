#!/bin/sh
# --call-graph auto, the default: where glibc or libstdc++ (built without
# frame pointers) is on the stack, the owned function that calls it keeps
# the share that DWARF unwinding gives it; where the stack is deeper than
# the stack copy, the kernel's frame pointer chain takes over; and a copy
# too short to reach code with frame pointers is counted and reported.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF 'perf events not permitted here (run as root or lower kernel.perf_event_paranoid)'

# total_pct PROFILE FN: FN's total share in percent (0 when absent)
total_pct() {
	hotloop report --json --sort total --top 0 "$1" |
	jq -r --arg fn "$2" '[.rows[] | select(.name == $fn) | .total_pct] | max // 0'
}

# at_least_90pct_of WORKLOAD FN: FN's total by default is at least 90% of
# its total with --call-graph dwarf, and above half the samples
at_least_90pct_of() {
	hotloop record -o "$1-auto.pb.gz" -- "$WORKLOADS/$1" 0.5 2>"$1-auto.err" &&
	hotloop record --call-graph dwarf -o "$1-dwarf.pb.gz" -- "$WORKLOADS/$1" 0.5 2>/dev/null &&
	a=$(total_pct "$1-auto.pb.gz" "$2") && d=$(total_pct "$1-dwarf.pb.gz" "$2") &&
	echo "$2: $a% by default, $d% with dwarf" &&
	awk -v a="$a" -v d="$d" "BEGIN { exit !(a >= 0.9 * d && a > 50) }"
}

test_expect_success 'qsortfmt: compare_records (snprintf under qsort) by default' '
	at_least_90pct_of qsortfmt compare_records
'

test_expect_success 'lockcontend: record_event (a contended mutex) by default' '
	at_least_90pct_of lockcontend record_event
'

test_expect_success 'allocchurn: tokenize (malloc and free) by default' '
	at_least_90pct_of allocchurn tokenize
'

test_expect_success 'cxxsort: part_less (std::sort, ostringstream) by default' '
	at_least_90pct_of cxxsort part_less
'

test_expect_success 'the default mode says nothing of short copies when there are none' '
	! grep "cut where" qsortfmt-auto.err
'

test_expect_success 'deepcall: 100 frames above memchr, deeper than the copy, still reach main' '
	hotloop record -o deep.pb.gz -- "$WORKLOADS/deepcall" 0.5 2>/dev/null &&
	m=$(total_pct deep.pb.gz main) && echo "main: $m%" &&
	awk -v m="$m" "BEGIN { exit !(m >= 90) }"
'

test_expect_success 'a stack copy too short is counted in the summary, the profile and the brief' '
	hotloop record --call-graph auto,1024 -o short.pb.gz -- "$WORKLOADS/qsortfmt" 0.5 2>short.err &&
	cat short.err &&
	grep "stacks (.*%) cut where the 1024-byte stack copy ended (raise it with --call-graph auto,SIZE)" short.err &&
	hotloop report --json --top 0 short.pb.gz >/dev/null &&
	hotloop brief short.pb.gz >brief.md &&
	grep "^- sample quality: .*% cut where the stack copy ended)" brief.md &&
	hotloop brief --json short.pb.gz >brief.json &&
	jq -e ".quality.short_copy_pct > 10" brief.json
'

test_expect_success 'fp and dwarf stay: fp loses compare_records under qsort' '
	hotloop record --call-graph fp -o fp.pb.gz -- "$WORKLOADS/qsortfmt" 0.5 2>/dev/null &&
	f=$(total_pct fp.pb.gz compare_records) && d=$(total_pct qsortfmt-dwarf.pb.gz compare_records) &&
	echo "fp $f%, dwarf $d%" &&
	awk -v f="$f" -v d="$d" "BEGIN { exit !(f < 0.9 * d) }"
'

test_expect_code 2 'auto with a stack size out of range is a usage error' '
	hotloop record --call-graph auto,4 -- true
'

test_expect_code 2 'an unknown call graph mode is a usage error' '
	hotloop record --call-graph lbr -- true
'

test_done
