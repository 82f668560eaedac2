#!/bin/sh
# loop with [gate] heap = yes: the compare stage measures every run's heap
# (in the sandbox). A 3x faster candidate that mallocs 100 MiB it never
# touches (its peak RSS stays small) is rejected by the ram budget on the
# heap peak; one that makes 200000 more allocations by the allocs rule;
# the kb entries give the metric medians and the heap peaks.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-loop.sh"

command -v git >/dev/null || skip_all="needs git"
test_have_prereq SANDBOX || skip_all="no sandbox can be made here (bubblewrap, user and PID namespaces)"

test_expect_success 'setup: a project in git, its heap measured' '
	spin_project &&
	cat >hotloop.conf <<-\EOC &&
	[project]
		build = make -s
		owned = .
		protected = tests hotloop.conf Makefile
	[gate]
		test = tests/run
		heap = yes
	[improve]
		min-improvement = 10%
		ram-budget = 32M
		ram-budget-on = heap
		max-rejects-in-a-row = 50
		rounds = 1
	[agent]
		timeout = 3s
	[workload "main"]
		run = ./spin 60
		primary = yes
	[metric "allocs"]
		better = lower
		tolerance = 5%
	EOC
	git init -q && git add . && git -c user.name=t -c user.email=t@t commit -q -m base
'

mkdir agents
cat >agents/heapy <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's/i < n;/i < n \/ 3;/' spin.c
sed -i 's/(void)sink;/(void)sink; { static char *volatile keep; keep = malloc(100 << 20); }/' spin.c
EOA
cat >agents/allocy <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's/i < n;/i < n \/ 3;/' spin.c
sed -i 's/(void)sink;/(void)sink; { static char *volatile q; for (int k = 0; k < 200000; k++) { q = malloc(32); free(q); } }/' spin.c
EOA
chmod +x agents/*

loop() {
	(cd proj && hotloop loop --json --agent "$SCRATCH/agents/$1") >$1.json 2>$1.err
}

# dropped AGENT REASON-REGEX: one attempt, not kept, decided at compare
dropped() {
	jq -e --arg r "$2" ".kept == 0 and (.attempts | length) == 1 and
		.attempts[0].stage == \"compare\" and .attempts[0].verdict != \"keep\" and
		(.attempts[0].reasons | any(test(\$r)))" $1.json >/dev/null || {
		echo "$1:"; jq ".attempts" $1.json; tail -5 $1.err; return 1; }
}

test_expect_success '100 MiB of heap never touched: rejected on the heap peak, not on RSS' '
	loop heapy && dropped heapy "heap peak of [0-9]* kB is over the ram budget of 32768 kB" &&
	report=$(grep -l "heap peak of" proj/kb/*/report.md) &&
	expect_grep "^Heap peak: [0-9]* KiB baseline, 10[0-9][0-9][0-9][0-9] KiB candidate, over the ram budget\\.$" $report
'

test_expect_success '200000 more allocations: rejected by the allocs rule' '
	loop allocy && dropped allocy "metric .allocs. of workload .main. rose" &&
	report=$(grep -l "metric .allocs. of workload" proj/kb/*/report.md) &&
	expect_grep "^Metric .allocs. on .main.: [0-9]* to [0-9]* (+[0-9.]*%), beyond its 5% tolerance (lower is better)\\.$" $report
'

test_done
