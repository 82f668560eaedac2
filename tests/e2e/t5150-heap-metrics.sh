#!/bin/sh
# bench/compare --heap: each run's heap-peak, allocs and alloc-bytes from
# the preload's stats mode; exact counts of a deterministic workload, a
# planted peak, an allocs rule and the ram budget on the heap peak in the
# verdict, and the programs the preload cannot reach. Nothing is timed.
. "$(dirname "$0")/test-lib.sh"

B="hotloop bench --max-wait 0 -w 0 --heap"
C="hotloop compare --max-wait 0 --pairs 3 --looks 3 --heap"
AC="$WORKLOADS/allocount"
MIB=1048576

metric() {	# FILE NAME: the median of metric NAME in a bench --json document
	jq -r --arg m "$2" ".summary.metrics[\$m].median" "$1"
}

test_expect_success 'bench --heap: the three metrics per run and summarized, stdout untouched' '
	$B -n 2 --json -- "$AC" 1000 >out.json &&
	jq -e ".runs | length == 2" out.json &&
	jq -e "[.runs[].metrics | (.\"heap-peak\"|type) == \"number\" and (.allocs|type) == \"number\" and
		(.\"alloc-bytes\"|type) == \"number\"] | all" out.json &&
	jq -e ".summary.metrics | (.allocs.n == 2) and (.\"heap-peak\".median > 0) and (.\"alloc-bytes\".mad == 0)" out.json &&
	jq -e "[.runs[].stdout_bytes] == [3, 3]" out.json
'

test_expect_success 'exact counts: 1000 more mallocs of 64 bytes are 1000 more allocs, 64000 more bytes' '
	$B -n 1 --json -- "$AC" 1000 >a.json &&
	$B -n 1 --json -- "$AC" 2000 >b.json &&
	a=$(metric a.json allocs) && b=$(metric b.json allocs) &&
	ab=$(metric a.json alloc-bytes) && bb=$(metric b.json alloc-bytes) &&
	test $((b - a)) -eq 1000 && test $((bb - ab)) -eq 64000 &&
	# the workload own 1000, and at most a few dozen of libc and the shell
	test "$a" -ge 1000 && test "$a" -le 1064 && test "$ab" -ge 64000
'

test_expect_success 'heap-peak: a workload holding 8 MiB at once has a peak of 8 MiB to 16 MiB' '
	$B -n 1 --json -- "$WORKLOADS/allocmib" 8 >m.json &&
	p=$(metric m.json heap-peak) &&
	test "$p" -ge $((8 * MIB)) && test "$p" -lt $((16 * MIB)) &&
	$B -n 1 --json -- "$AC" 100 64 4096 >h.json &&
	p=$(metric h.json heap-peak) &&
	test "$p" -ge $((4 * MIB)) && test "$p" -lt $((8 * MIB))
'

test_expect_success 'bench text: the summary lines of the heap metrics' '
	$B -n 1 -- "$AC" 1000 >out &&
	expect_grep "^allocs  *median 10[0-9][0-9] " out &&
	expect_grep "^heap-peak  *median [0-9]" out &&
	expect_grep "^alloc-bytes  *median [0-9]" out &&
	expect_grep "^        metric allocs = 10[0-9][0-9]$" out
'

test_expect_code 4 'an allocs rule rejects a candidate that doubles the allocations' '
	$C --json --metric-rule allocs:lower:5% "$AC 20000" "$AC 40000" >out.json; rc=$?
	jq -e ".verdict == \"reject\"" out.json &&
	jq -e "[.metrics[] | select(.name == \"allocs\")][0] | .ok == false and .change_pct > 90" out.json &&
	jq -e "[.reasons[] | select(test(\"metric .allocs.* rose\"))] | length == 1" out.json || exit 99
	exit $rc
'

test_expect_success 'the same allocations pass the allocs rule, the per-run values are in --json' '
	{ $C --json --metric-rule allocs:lower:5% "$AC 20000" "$AC 20000" >out.json; rc=$?; } &&
	test $rc -ne 0 -o $rc -eq 0 &&
	jq -e "[.metrics[] | select(.name == \"allocs\")][0] | .ok == true and .change_pct == 0" out.json
'

test_expect_code 4 'the ram budget on the heap peak rejects a candidate over it (heap measured without --heap)' '
	hotloop compare --max-wait 0 --pairs 3 --looks 3 --json --ram-budget 8M --ram-budget-on heap \
		"$AC 100 64 1024" "$AC 100 64 16384" >out.json; rc=$?
	jq -e ".memory.budget_on == \"heap\" and .memory.ok == false and
		.memory.cand_heap_peak >= 16 * $MIB and .memory.base_heap_peak < 2 * $MIB" out.json &&
	jq -e "[.reasons[] | select(test(\"heap peak of .* is over the ram budget of 8192 kB\"))] | length == 1" out.json || exit 99
	exit $rc
'

test_expect_success 'a candidate under the heap budget passes the memory check' '
	{ hotloop compare --max-wait 0 --pairs 3 --looks 3 --json --ram-budget 64M --ram-budget-on heap \
		"$AC 100 64 1024" "$AC 100 64 16384" >out.json; rc=$?; } &&
	jq -e ".memory.ok == true and .memory.budget_on == \"heap\"" out.json &&
	jq -e "[.reasons[] | select(test(\"ram budget\"))] | length == 0" out.json
'

test_expect_success 'compare text: the heap peaks on the memory line' '
	{ $C "$AC 100 64 1024" "$AC 100 64 2048" >out; rc=$?; } &&
	expect_grep "^memory: .*; heap peak base 1[0-9][0-9][0-9] KiB, candidate 2[0-9][0-9][0-9] KiB" out
'

test_expect_code 4 'hotloop.conf: [gate] heap = yes and an allocs [metric] rule on two directories' '
	mkdir base cand &&
	printf "#!/bin/sh\nexec %s 20000\n" "$AC" >base/run.sh &&
	printf "#!/bin/sh\nexec %s 40000\n" "$AC" >cand/run.sh &&
	chmod +x base/run.sh cand/run.sh &&
	printf "[gate]\n\theap = yes\n[workload \"w\"]\n\trun = ./run.sh\n[metric \"allocs\"]\n\tbetter = lower\n\ttolerance = 5%%\n" >hotloop.conf &&
	hotloop compare --max-wait 0 --pairs 3 --looks 3 --json --base base --cand cand -f hotloop.conf >out.json; rc=$?
	jq -e ".verdict == \"reject\" and .memory.cand_heap_peak > 0" out.json &&
	jq -e "[.metrics[] | select(.name == \"allocs\" and .workload == \"w\")][0] |
		.base >= 20000 and .base < 20100 and .cand - .base == 20000 and .ok == false" out.json || exit 99
	exit $rc
'

test_expect_success 'a static program: a clear error, no run' '
	! $B -n 1 -- "$WORKLOADS/heapstatic" >out 2>err &&
	expect_grep "is statically linked" err &&
	! grep "metric" out
'

test_expect_success 'a setuid program: a clear error' '
	cp "$AC" suid && chmod u+s suid &&
	! $B -n 1 -- ./suid >out 2>err &&
	expect_grep "is setuid" err
'

test_expect_success 'a static program behind a shell: a warning that it is left out' '
	$B -n 1 -- sh -c "\"$AC\" 10; \"$WORKLOADS/heapstatic\" >/dev/null" >out 2>err &&
	expect_grep "exec.d a program that did not load libhotloop-heap.so" err
'

test_expect_success 'a program that clears LD_PRELOAD for what it runs: a warning that it is left out' '
	$B -n 1 -- env -u LD_PRELOAD "$AC" 10 >out 2>err &&
	expect_grep "exec.d a program that did not load libhotloop-heap.so" err
'

test_expect_success 'a missing libhotloop-heap.so: a clear error' '
	mkdir bin && cp "$HOTLOOP" bin/hotloop &&
	! bin/hotloop bench --max-wait 0 -n 1 -w 0 --heap -- "$AC" 10 >out 2>err &&
	expect_grep "cannot find libhotloop-heap.so" err
'

test_expect_success '--heap with --metric instructions: an error' '
	! $B -n 1 --metric instructions -- "$AC" 10 2>err &&
	expect_grep "heap metrics and instruction counts cannot be taken in one run\|cannot measure instructions" err
'

test_expect_code 2 '--ram-budget-on that is neither rss nor heap' '
	hotloop compare --ram-budget-on disk "true" "true"
'

test_done
