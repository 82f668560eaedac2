#!/bin/sh
# hotloop's profiles are plain pprof: go tool pprof reads them and finds the
# same functions and the same totals as hotloop report.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF "perf events are not permitted here (see hotloop doctor)"
test_have_prereq GO || skip_all="go is not installed (golang-go)"

gopprof() { go tool pprof -symbolize=none -sample_index=samples -nodefraction=0 -edgefraction=0 "$@" 2>/dev/null; }

test_expect_success 'record cpuhog' '
	hotloop record -o "$SCRATCH/cpuhog.pb.gz" -- "$WORKLOADS/cpuhog" 0.5
'

test_expect_success 'go tool pprof -top: same total, same top function, same self' '
	gopprof -top -nodecount=200 cpuhog.pb.gz >top.txt &&
	hotloop report --json --top 0 cpuhog.pb.gz >rep.json &&
	total=$(jq .total rep.json) &&
	expect_grep "of $total total" top.txt &&
	first=$(sed -n "/flat%/{n;p;q}" top.txt) &&
	echo "$first" | grep -q " hot_spin\$" &&
	self=$(jq ".rows[] | select(.name==\"hot_spin\") | .self" rep.json) &&
	test "$(echo "$first" | awk "{print \$1}")" = "$self"
'

test_expect_success 'go tool pprof -traces shows the call path and labels' '
	gopprof -traces cpuhog.pb.gz >traces.txt &&
	expect_grep "hot_spin" traces.txt &&
	expect_grep "run_loop" traces.txt &&
	expect_grep "pid:" traces.txt &&
	expect_grep "comm:" traces.txt
'

test_expect_success 'every function hotloop reports, go tool pprof reports with the same flat' '
	gopprof -top -nodecount=1000 cpuhog.pb.gz >top.txt &&
	jq -r ".rows[] | select(.self > 0) | \"\(.self) \(.name)\"" rep.json | sort >ours &&
	sed -n "/flat%/,\$p" top.txt | sed 1d | awk "\$1 > 0 {n=\$6; for (i=7;i<=NF;i++) n=n\" \"\$i; print \$1, n}" | sed "s/ (inline)\$//" | sort >theirs &&
	diff ours theirs
'

test_done
