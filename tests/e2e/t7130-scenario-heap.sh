#!/bin/sh
# scenario --heap: the service (tests/workloads/svc.c, 100 mallocs of 64
# bytes per event, 8 MiB held from its start) runs with the heap preload in
# stats mode; its allocs follow the events it handled, its heap-peak holds
# what it keeps, the summary and the report give them; and a build making
# twice the allocations is rejected by an allocs rule in a scenario compare,
# and ram-budget-on = heap (which turns the heap metrics on) limits the
# service's heap-peak.
. "$(dirname "$0")/test-lib.sh"

. "$TEST_DIR/lib-scenario.sh"

SVC=$WORKLOADS/svc

test_expect_success 'setup: scenarios at two load rates' '
	cat >hotloop.conf <<-EOF
	[workload "w"]
		run = true
	[scenario "few"]
		start = $SVC serve {port} --allocs 100 --hold 8192
		ready = tcp {port}
		phase = idle 0.2s
		phase = pressure 1s: $SVC load {port} 300 1
		phase = idle 0.2s
	[scenario "many"]
		start = $SVC serve {port} --allocs 100 --hold 8192
		ready = tcp {port}
		phase = idle 0.2s
		phase = pressure 1s: $SVC load {port} 1500 1
		phase = idle 0.2s
	EOF
'

# allocs and the events the service counted (its last events gauge)
heap_of() {
	jq -r "[.heap.allocs, .heap.heap_peak_bytes, .heap.alloc_bytes, .phases[-1].metrics.events.mean] | @tsv" "$1"
}

test_expect_success 'allocs follow the events handled; heap-peak holds the 8 MiB kept' '
	hotloop scenario few --heap --json -o few >few.json 2>err.txt &&
	hotloop scenario many --heap --json -o many >many.json 2>>err.txt &&
	heap_of few.json >few.tsv && heap_of many.json >many.tsv &&
	cat few.tsv many.tsv &&
	read a1 p1 b1 e1 <few.tsv && read a2 p2 b2 e2 <many.tsv &&
	e1=${e1%.*} && e2=${e2%.*} &&
	test "$e1" -gt 0 && test "$e2" -gt "$e1" &&
	# 100 per event, plus what libc and the start make (a few dozen)
	test "$a1" -ge $((100 * e1)) && test "$a1" -lt $((100 * e1 + 1000)) &&
	test "$a2" -ge $((100 * e2)) && test "$a2" -lt $((100 * e2 + 1000)) &&
	test "$a2" -gt "$a1" &&
	test "$p1" -ge $((8 << 20)) && test "$p2" -ge $((8 << 20)) &&
	test "$b2" -ge $(((8 << 20) + 6400 * e2)) &&
	jq -e ".heap.allocs == $a1" few/summary.json >/dev/null
'

test_expect_success 'per phase: the pressure makes the allocations, every phase holds the 8 MiB' '
	jq -r "[.phases[].heap.allocs] + [.phases[].heap.heap_peak_bytes] + [.phases[-1].metrics.events.mean, .heap.allocs] | @tsv" \
		many.json >phases.tsv &&
	cat phases.tsv &&
	read i1 p i2 h1 h2 h3 e all <phases.tsv && e=${e%.*} &&
	# the calls after a thread last looked for a point (256 at most, or 10 ms) count later
	test "$p" -ge $((95 * e)) && test "$p" -le $((100 * e + 1000)) &&
	test "$i1" -lt 1000 && test "$i2" -lt 1000 && test $((i1 + p + i2)) -le "$all" &&
	test "$h1" -ge $((8 << 20)) && test "$h2" -ge $((8 << 20)) && test "$h3" -ge $((8 << 20))
'

test_expect_success 'the report has the heap line; without --heap the summary has none' '
	hotloop scenario few --heap -o few2 >out.txt 2>err.txt &&
	expect_grep "^heap: the service.s over the whole run: heap-peak [0-9]* [KM]iB, [0-9]* allocs" out.txt &&
	expect_grep "^heap in pressure  *heap-peak [0-9.]* [KM]iB  *[0-9]* allocs" out.txt &&
	hotloop scenario few --json -o few3 >plain.json 2>err.txt &&
	jq -e ".heap == null" plain.json >/dev/null
'

test_expect_success 'setup: a service in git, a build with twice the allocations' '
	mkdir repo && cd repo &&
	svc_project 2000 &&
	cat >hotloop.conf <<-\EOF &&
	[project]
		build = make -s
	[gate]
		test = test -x svc
	[workload "w"]
		run = true
	[improve]
		ram-budget = 4M
		ram-budget-on = heap
	[metric "allocs"]
		better = lower
		tolerance = 20%
	[scenario "pressure"]
		start = ./svc serve {port} --allocs 100 --hold 8192
		ready = tcp {port}
		phase = idle 0.2s
		phase = pressure 0.8s: ./svc load {port} 1000 0.8
		phase = idle 0.2s
	EOF
	printf "svc\n.hotloop/\n*.txt\n*.json\n" >.gitignore &&
	git init -q && git add . && commit base && git tag base &&
	printf "#define WORK_DEFAULT 2000\n#define ALLOC_SCALE 2\n" >build.h && commit doubled && git tag doubled
'

test_expect_code 4 'twice the allocations: rejected by the allocs rule; the heap budget holds heap-peak' '
	cd repo &&
	hotloop scenario pressure --base base --cand doubled --json >../doubled.json 2>../err.txt; rc=$?
	svc_none_left || exit 99
	jq -e "(.verdict == \"reject\") and
		([.metrics[] | select(.name == \"allocs\" and .ok == false and .cand > .base * 1.5)] | length == 1) and
		(.memory.ok == false) and (.memory.cand_heap_peak >= 8388608)" ../doubled.json >/dev/null || {
		jq -c ".verdict, .metrics, .reasons" ../doubled.json; exit 99; }
	jq -r ".reasons[]" ../doubled.json | grep -q "metric .allocs. of workload .pressure. rose" || exit 99
	jq -r ".reasons[]" ../doubled.json | grep -q "heap peak of .* kB is over the ram budget of 4096 kB" || exit 99
	! grep -q "no heap metrics" ../err.txt || exit 99
	exit $rc
'

test_done
