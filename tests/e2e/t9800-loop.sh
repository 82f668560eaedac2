#!/bin/sh
# loop: scripted agents on a throwaway git repository. A real improvement
# is kept and committed on hotloop/<date>; each bad candidate is dropped
# for its own reason (protected path, tests, fingerprint, slower, guard,
# memory, a hanging, failing or idle agent); the user's tree is untouched;
# a second loop is refused; kill -9 then a rerun recovers. Effects are 2x
# or more, far above noise.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-loop.sh"

command -v git >/dev/null || skip_all="needs git"
test_have_prereq SANDBOX || skip_all="no sandbox can be made here (bubblewrap, user and PID namespaces)"

# spin N: N million rounds of an LCG, then "done N"; spin.c is the code the
# agents edit, tests/run the test they must not touch.
test_expect_success 'setup: a project in git' '
	spin_project &&
	cat >hotloop.conf <<-\EOC &&
	[project]
		build = make -s
		owned = .
		protected = tests hotloop.conf Makefile
	[gate]
		test = tests/run
	[improve]
		min-improvement = 10%
		guard-regression = 10%
		guard-floor = 2ms
		ram-budget = 64M
		max-rejects-in-a-row = 50
		rounds = 1
	[agent]
		timeout = 3s
	[workload "main"]
		run = ./spin 60
		primary = yes
	[workload "small"]
		run = ./spin 15
	EOC
	git init -q && git add . && git -c user.name=t -c user.email=t@t commit -q -m base &&
	echo "work in progress" >notes.txt && echo "// local edit" >>spin.c
'

# the user's tree as it is: every file, the index, HEAD and the branch
# (kb/, where the loop writes up its attempts, aside)
snapshot() {
	(cd proj && find . -path ./.git -prune -o -path ./.hotloop -prune -o -path ./kb -prune -o -type f -print | sort |
	 xargs sha1sum && git status --porcelain -- . ":!kb" && git rev-parse HEAD && git symbolic-ref HEAD)
}

# The scripted agents, each a shell script in agents/. Those that change
# main also touch spin, the hot function: a change of main (cold) alone is
# rejected at the target stage (t9850) before the stage they are about.
mkdir agents
cat >agents/protected <<\EOA
#!/bin/sh
cat >/dev/null
echo "# cheat" >>tests/run
sed -i 's/i < n;/i < n \/ 2;/' spin.c
EOA
cat >agents/breaks <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's|unsigned long x = 1;|unsigned long x = 1; /* seed */|' spin.c
sed -i 's/done %lu/done %lu!/' spin.c
EOA
cat >agents/fingerprint <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's|unsigned long x = 1;|unsigned long x = 1; /* seed */|' spin.c
sed -i 's/printf("done %lu\\n", n);/printf(n > 1 ? "Done %lu\\n" : "done %lu\\n", n);/' spin.c
EOA
cat >agents/slower <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's/i < n;/i < 3 * n;/' spin.c
EOA
cat >agents/guard <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's/i < n;/i < (n > 30000000 ? n \/ 3 : n * 3);/' spin.c
EOA
cat >agents/memory <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's|unsigned long x = 1;|unsigned long x = 1; /* seed */|' spin.c
sed -i 's/(void)sink;/(void)sink; { static char *volatile keep; keep = malloc(200 << 20); memset(keep, 1, 200 << 20); }/' spin.c
EOA
cat >agents/hangs <<\EOA
#!/bin/sh
cat >/dev/null
sleep 30
EOA
cat >agents/fails <<\EOA
#!/bin/sh
cat >/dev/null
exit 3
EOA
cat >agents/idle <<\EOA
#!/bin/sh
cat >/dev/null
true
EOA
cat >agents/nothing <<\EOA
#!/bin/sh
cat >/dev/null
echo NO CANDIDATE
EOA
cat >agents/good <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's/i < n;/i < n \/ 3;/' spin.c
echo '{"function": "spin", "title": "a third of the loop", "hypothesis": "fewer rounds", "expected_gain_pct": 66}' >"$HOTLOOP_PROPOSAL"
test -s "$HOTLOOP_PROMPT" && test -s "$HOTLOOP_BRIEF" && test "$HOTLOOP_LENS" = algorithmic &&
test "$HOTLOOP_WORKTREE" = "$PWD" && test "$HOTLOOP_ROUND" -gt 1 &&
grep -q "Brief of the current best" "$HOTLOOP_PROMPT"
EOA
chmod +x agents/*

test_expect_success 'setup: the user tree before' '
	snapshot >before
'

# loop AGENT: one round with agents/AGENT, the summary in AGENT.json
loop() {
	name=$1
	shift
	(cd proj && hotloop loop --json --agent "$SCRATCH/agents/$name" "$@") >$name.json 2>$name.err
}

# dropped AGENT STAGE REASON-REGEX: one attempt, not kept, decided at STAGE
dropped() {
	jq -e --arg s "$2" --arg r "$3" ".kept == 0 and (.attempts | length) == 1 and
		.attempts[0].stage == \$s and .attempts[0].verdict != \"keep\" and .attempts[0].commit == null and
		(.attempts[0].reasons | any(test(\$r)))" $1.json >/dev/null || {
		echo "$1:"; jq ".attempts" $1.json; tail -5 $1.err; return 1; }
}

test_expect_success 'a protected path is rejected before anything is built' '
	loop protected && dropped protected protected "protected path .tests/run." &&
	test ! -e proj/.hotloop/loop/*/round-01/1-algorithmic/build.log
'
test_expect_success 'a change that fails the tests is rejected' '
	loop breaks && dropped breaks test "^tests failed"
'
test_expect_success 'a change of the output is rejected on its fingerprint' '
	loop fingerprint && dropped fingerprint fingerprint "output|fingerprint"
'
test_expect_success 'a slower candidate is rejected' '
	loop slower && dropped slower compare "primary .main. regressed"
'
test_expect_success 'a faster primary with a slower guard is rejected, naming the guard' '
	loop guard && dropped guard compare "guard .small."
'
test_expect_success 'a candidate over the ram budget is rejected' '
	loop memory && dropped memory compare "peak RSS|budget"
'
test_expect_success 'a hanging agent is killed at [agent] timeout' '
	loop hangs && dropped hangs agent "killed after"
'
test_expect_success 'an agent that fails is recorded, not kept' '
	loop fails && dropped fails agent "exit status 3"
'
test_expect_success 'an agent that changes nothing is recorded, not kept' '
	loop idle && dropped idle diff "changed nothing"
'
test_expect_success 'NO CANDIDATE ends the loop' '
	(cd proj && hotloop loop --json --rounds 3 --agent "$SCRATCH/agents/nothing") >nothing.json &&
	jq -e ".rounds == 1 and .stop_reason == \"the agent said NO CANDIDATE\" and .attempts[0].verdict == \"no-candidate\"" nothing.json
'

# The dashboard watches the store while the loop of the next test runs in
# another process: its events are read as they come.
test_expect_success 'setup: the dashboard listens' '
	(cd proj && exec "$HOTLOOP" serve --port 0 --quiet) >serve.out 2>serve.err &
	echo $! >serve.pid &&
	for i in $(seq 100); do test -s serve.out && break; sleep 0.1; done &&
	url=$(sed -n 2p serve.out) && case "$url" in http://127.0.0.1:*) ;; *) cat serve.out serve.err; false;; esac &&
	echo "$url" >serve.url &&
	{ curl -sN --max-time 600 "${url}api/events" >events.txt 2>/dev/null & echo $! >curl.pid; } &&
	for i in $(seq 100); do grep -q "^event: hello" events.txt && break; sleep 0.1; done &&
	expect_grep "^event: hello" events.txt
'

test_expect_success 'a real improvement is kept: a commit on hotloop/<date>' '
	loop good &&
	jq -e ".kept == 1 and .attempts[0].verdict == \"keep\" and .attempts[0].change_pct < -30 and
		(.attempts[0].commit|test(\"^[0-9a-f]{40}$\")) and .best_commit == .attempts[0].commit and
		.total.change_pct < -30" good.json &&
	branch=$(jq -r .branch good.json) &&
	(cd proj && git log -1 --format=%s "$branch") >subject &&
	expect_grep "^perf: spin: a third of the loop (main -[0-9.]*%)$" subject &&
	(cd proj && git show --stat "$branch" | grep -q "spin.c")
'

test_expect_success 'the dashboard showed the loop as it ran' '
	test_when_finished "kill \$(cat serve.pid) \$(cat curl.pid)" &&
	for i in $(seq 50); do grep -q "\"kind\":\"loop-end\"" events.txt && break; sleep 0.1; done &&
	kill $(cat curl.pid) 2>/dev/null; url=$(cat serve.url) &&
	for k in loop-start profiled round-start agent-done verdict kept loop-end; do
		expect_grep "^data: {\"id\":[0-9]*,.*\"kind\":\"$k\"" events.txt || exit 1
	done &&
	expect_grep "^event: change" events.txt &&
	commit=$(jq -r .attempts[0].commit good.json) &&
	curl -sf --max-time 20 "${url}api/attempts?limit=1" >last.json &&
	jq -e --arg c "$commit" ".attempts[0].commit_sha == \$c and .attempts[0].verdict == \"keep\"" last.json &&
	id=$(jq .attempts[0].id last.json) &&
	curl -sf --max-time 20 "${url}api/attempts/$id" >one.json &&
	jq -e ".runs[0].workloads | length >= 1 and (.[0].pairs | length) >= 2" one.json &&
	curl -sf --max-time 20 "${url}api/benchmarks" >bench.json &&
	jq -e --arg c "$commit" "[.workloads[].points[] | select(.commit == \$c)] | length >= 1" bench.json &&
	curl -sf --max-time 20 "${url}api/profiles" >prof.json &&
	jq -e ".latest | length >= 1" prof.json
'

test_expect_success 'every attempt is in the knowledge base and the store' '
	n=$(ls -d proj/kb/*-[0-9]*/ | wc -l) &&
	test "$n" -ge 11 &&
	for d in proj/kb/*-[0-9]*/; do test -s $d/report.md || exit 1; done &&
	kept=$(grep -l "^- verdict: keep" proj/kb/*/report.md) && test $(echo "$kept" | wc -l) = 1 &&
	expect_grep "^## Results" $kept && expect_grep "Measured -[0-9.]*% on the primary workload .main." $kept &&
	expect_grep "^- agent: ..*" $kept &&
	test -s $(dirname $kept)/diff.md && expect_grep "i < n / 3" $(dirname $kept)/diff.md &&
	grep -l "protected path" proj/kb/*/report.md >/dev/null &&
	expect_grep "a-third-of-the-loop" proj/kb/index.md &&
	(cd proj && hotloop kb search --function spin --json) >kb.json &&
	jq -e ".attempts | length >= 1 and any(.[]; .verdict == \"keep\")" kb.json &&
	(cd proj && hotloop store --json) >store.json &&
	jq -e ".counts.attempts >= 11 and .counts.loops >= 11 and .counts.measurements >= 24" store.json &&
	sqlite3 proj/.hotloop/hotloop.db "SELECT count(*) FROM measurements m JOIN runs r ON m.run_id = r.id
		JOIN attempts a ON r.attempt_id = a.id WHERE a.verdict = '"'keep'"' AND m.pair_index IS NOT NULL" >n &&
	test "$(cat n)" -ge 24
'

test_expect_success 'the prompt carries the knowledge base' '
	loop idle &&
	expect_grep "a-third-of-the-loop" proj/.hotloop/loop/$(ls proj/.hotloop/loop | tail -1)/round-*/1-algorithmic/prompt.md
'

test_expect_success 'the next loop continues the branch from its tip' '
	loop idle && jq -e ".start_commit == $(jq .best_commit good.json)" idle.json
'

test_expect_success 'round numbers go on across loops on the branch, in the kb index too' '
	cp idle.json idle1.json && loop idle --rounds 2 &&
	jq -e --argjson n "$(jq .attempts[0].round idle1.json)" ".first_round == \$n + 1 and
		.rounds == 2 and ([.attempts[].round] == [\$n + 1, \$n + 2])" idle.json &&
	last=$(jq .attempts[1].round idle.json) &&
	expect_grep "^- \*\*.*, round $last): no-candidate\|^- \*\*.*, round $last): error\|^- \*\*.*, round $last): reject" proj/kb/index.md &&
	test -d proj/.hotloop/loop/$(ls proj/.hotloop/loop | tail -1)/round-$(printf %02d $last) &&
	sqlite3 proj/.hotloop/hotloop.db "SELECT max(round) FROM attempts" >max && test "$(cat max)" = "$last"
'

# Two agents at once with two lenses: both improve on the best (n / 3
# rounds), one 4x, one 2x; the larger gain wins.
cat >agents/two <<\EOA
#!/bin/sh
cat >/dev/null
case "$HOTLOOP_LENS" in
algorithmic) sed -i 's/i < n[^;]*;/i < n \/ 12;/' spin.c ;;
*) sed -i 's/i < n[^;]*;/i < n \/ 6;/' spin.c ;;
esac
echo "{\"function\": \"spin\", \"title\": \"$HOTLOOP_LENS cut\"}" >"$HOTLOOP_PROPOSAL"
EOA
chmod +x agents/two

test_expect_success 'a tournament: two agents at once, the best keep wins the round' '
	loop two --parallel 2 --lenses algorithmic,locality &&
	jq -e ".kept == 1 and (.attempts | length) == 2" two.json &&
	jq -e ".attempts[] | select(.lens == \"algorithmic\") | .verdict == \"keep\" and .commit != null" two.json &&
	jq -e ".attempts[] | select(.lens == \"locality\") | .stage == \"tournament\" and .commit == null and
		(.reasons | any(test(\"a better candidate won\")))" two.json
'

test_expect_success 'the user tree, index, HEAD and branch are untouched' '
	snapshot >after && cmp before after &&
	(cd proj && git worktree list) >wt && test $(wc -l <wt) = 1
'

# The first loop ends some steps after its SIGTERM: wait (10 s at most) until it lets go of the lock.
lock_free() {
	for i in $(seq 100); do flock -n "$SCRATCH/proj/.hotloop/lock" true && return 0; sleep 0.1; done
	return 1
}

test_expect_code 1 'a second loop on the same repository is refused' '
	(cd proj && exec "$HOTLOOP" loop --agent "$SCRATCH/agents/hangs") >/dev/null 2>first.err &
	first=$! &&
	test_when_finished "kill $first 2>/dev/null; wait $first; lock_free" &&
	for i in $(seq 100); do grep -qx "$first" proj/.hotloop/lock 2>/dev/null && break; sleep 0.1; done &&
	(cd proj && hotloop loop --agent "$SCRATCH/agents/idle") 2>second.err; rc=$?
	expect_grep "another hotloop loop (pid [0-9]*) is running" second.err || exit 99; exit $rc
'

test_expect_success 'kill -9 mid-round, then a rerun cleans up and goes on' '
	(cd proj && exec "$HOTLOOP" loop --agent "$SCRATCH/agents/hangs") >/dev/null 2>&1 &
	pid=$! &&
	for i in $(seq 100); do ls -d "$XDG_CACHE_HOME"/hotloop/*/*/tree/.git >/dev/null 2>&1 && break; sleep 0.1; done &&
	ls -d "$XDG_CACHE_HOME"/hotloop/*/*/tree/.git &&
	kill -9 $pid && wait $pid; sleep 0.2;
	loop idle && jq -e ".attempts[0].stage == \"diff\"" idle.json &&
	snapshot >after && cmp before after &&
	(cd proj && git worktree list) >wt && test $(wc -l <wt) = 1
'

test_expect_code 1 'no agent configured' '
	(cd proj && hotloop loop) 2>err; rc=$?
	expect_grep "no agent: set \\[agent\\] command" err || exit 99; exit $rc
'
test_expect_code 2 'a bad --parallel' '(cd proj && hotloop loop --parallel 0 --agent true)'

test_done
