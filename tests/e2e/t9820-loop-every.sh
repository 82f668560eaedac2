#!/bin/sh
# loop --every: batches of rounds with sleeps between them under one lock
# (a second loop is refused, naming the holder), round numbers going on
# across batches, a failed batch told and the next one run, SIGTERM ending
# a sleep at once and a batch cleanly (no checkout left, exit 130), and
# periods that are not ones. Short periods; nothing is timed.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-loop.sh"

command -v git >/dev/null || skip_all="needs git"
test_have_prereq SANDBOX || skip_all="no sandbox can be made here (bubblewrap, user and PID namespaces)"

# The baseline's tests fail once for each flag file in flags/ (the gate may write there).
test_expect_success 'setup: a project in git' '
	mkdir flags && spin_project &&
	cat >tests/run <<-EOT &&
	#!/bin/sh
	for f in $SCRATCH/flags/*; do [ -e "\$f" ] && { rm -f "\$f"; echo "failing once"; exit 1; }; done
	./spin 1 | grep -q "^done 1\$"
	EOT
	chmod +x tests/run &&
	cat >hotloop.conf <<-EOC &&
	[project]
		build = make -s
		owned = .
		protected = tests hotloop.conf Makefile
	[gate]
		test = tests/run
		writable = $SCRATCH/flags
	[improve]
		max-rejects-in-a-row = 50
		rounds = 1
	[agent]
		timeout = 20s
	[workload "main"]
		run = ./spin 5
		primary = yes
	EOC
	git init -q && git add . && git -c user.name=t -c user.email=t@t commit -q -m base
'

mkdir agents
cat >agents/idle <<\EOA
#!/bin/sh
cat >/dev/null
true
EOA
cat >agents/hangs <<\EOA
#!/bin/sh
cat >/dev/null
exec sleep 300
EOA
chmod +x agents/*

test_expect_success 'two batches, a sleep between them, round numbers going on' '
	(cd proj && hotloop loop --every 1s --batches 2 --json --agent "$SCRATCH/agents/idle") >two.json 2>two.err &&
	jq -s -e "length == 2 and .[1].first_round == .[0].first_round + 1 and
		(.[0].attempts[0].round | type == \"number\") and .[1].attempts[0].round == .[0].attempts[0].round + 1 and
		all(.[]; .error == null and .rounds == 1)" two.json &&
	expect_grep "batch 1 done; the next starts at [0-9-]* [0-9:]*" two.err &&
	! grep -q "batch 2 done; the next" two.err &&
	test "$(ls proj/.hotloop/loop | wc -l)" = 2
'

test_expect_success 'a failed batch is told, and the next one runs' '
	touch flags/one &&
	(cd proj && hotloop loop --every 1s --batches 2 --agent "$SCRATCH/agents/idle") >failed.out 2>failed.err; rc=$?
	test $rc = 1 && ! test -e flags/one &&
	expect_grep "the baseline fails its own tests" failed.err &&
	expect_grep "batch 1 failed" failed.err &&
	expect_grep "batch 1 done; the next starts" failed.err &&
	expect_grep "^hotloop/.*: 0 kept in 1 round" failed.out
'

# wait_for FILE REGEX: until FILE holds a line matching REGEX (60 s at most)
wait_for() {
	for i in $(seq 600); do grep -q -e "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	echo "never saw /$2/ in $1:"; cat "$1"; return 1
}

test_expect_success 'one process holds the lock for all its batches; SIGTERM in a sleep ends it at once' '
	(cd proj && exec "$HOTLOOP" loop --every 1h --agent "$SCRATCH/agents/idle") >held.out 2>held.err &
	pid=$! &&
	test_when_finished "kill $pid 2>/dev/null" &&
	wait_for held.err "batch 1 done; the next starts" &&
	grep -qx "$pid" proj/.hotloop/lock &&
	! (cd proj && hotloop loop --agent "$SCRATCH/agents/idle") 2>second.err &&
	expect_grep "another hotloop loop (pid $pid) is running" second.err &&
	! (cd proj && hotloop loop --every 1m --agent "$SCRATCH/agents/idle") 2>third.err &&
	expect_grep "another hotloop loop (pid $pid) is running" third.err &&
	kill -TERM $pid &&
	{ wait $pid; rc=$?; } ; test $rc = 130 &&
	flock -n proj/.hotloop/lock true &&
	expect_grep "^hotloop/.*: 0 kept in 1 round" held.out
'

test_expect_success 'SIGTERM in a batch ends it cleanly: no checkout left, the summary, exit 130' '
	(cd proj && exec "$HOTLOOP" loop --every 1s --json --agent "$SCRATCH/agents/hangs") >term.json 2>term.err &
	pid=$! &&
	test_when_finished "kill $pid 2>/dev/null" &&
	for i in $(seq 600); do pgrep -f "sleep 300" >/dev/null && break; sleep 0.1; done &&
	pgrep -f "sleep 300" >/dev/null &&
	kill -TERM $pid &&
	{ wait $pid; rc=$?; } ; test $rc = 130 &&
	jq -s -e "length == 1 and .[0].interrupted and .[0].stop_reason == \"interrupted\"" term.json &&
	! grep -q "the next starts" term.err &&
	! ls -d "$XDG_CACHE_HOME"/hotloop/*/*/tree 2>/dev/null &&
	! pgrep -f "sleep 300" &&
	flock -n proj/.hotloop/lock true
'

for bad in 0s 10 1.5h 5x -1m 367d ""; do
	test_expect_code 2 "--every '$bad' is a usage error" "
		(cd proj && hotloop loop --every '$bad' --agent true) 2>err; rc=\$?
		expect_grep 'invalid period' err || exit 99; exit \$rc
	"
done
test_expect_code 2 '--batches needs --every' '(cd proj && hotloop loop --batches 2 --agent true)'
test_expect_code 2 '--batches 0 is a usage error' '(cd proj && hotloop loop --every 1s --batches 0 --agent true)'

test_done
