#!/bin/sh
# loop with [gate] canary = NAME: a keep at compare then runs the canary,
# the best's service against the candidate's, each built, each in its own
# sandbox. A 3x faster candidate whose service answers every 20th request
# with a 500 passes compare and is rejected at the canary stage (errors
# are critical), the canary's files beside the attempt; the same speedup
# alone passes the canary and is kept, the canary's verdict among its
# reasons; a [gate] canary naming no [canary] section is a config error.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-loop.sh"

command -v git >/dev/null || skip_all="needs git"
command -v jq >/dev/null || skip_all="jq is missing"
test_have_prereq SANDBOX || skip_all="no sandbox can be made here (bubblewrap, user and PID namespaces)"

test_expect_success 'setup: a project in git with a service and its canary' '
	spin_project &&
	printf "spin: spin.c\n\tcc -O1 -g -fno-omit-frame-pointer -o spin spin.c\n\tcp \"%s\" ./csrv9870\n" \
		"$ROOT/tests/workloads/bin/canarysrv" >Makefile &&
	echo ok >mode &&
	printf "spin\ncsrv9870\n" >.gitignore &&
	cat >hotloop.conf <<-\EOC &&
	[project]
		build = make -s
		owned = .
		protected = tests hotloop.conf Makefile
	[gate]
		test = tests/run
		canary = svc
	[improve]
		min-improvement = 10%
		max-rejects-in-a-row = 50
		rounds = 1
	[agent]
		timeout = 3s
	[workload "main"]
		run = ./spin 60
		primary = yes
	[canary "svc"]
		start = ./csrv9870 {port} $(cat mode) 20000
		rate = 200
		connections = 4
		timeout = 500ms
		duration = 2s
		warmup = 500ms
		window = 250ms
		stop = TERM 2s
		ready-timeout = 3s
	EOC
	git init -q && git add . && git -c user.name=t -c user.email=t@t commit -q -m base
'

mkdir agents
cat >agents/erring <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's/i < n;/i < n \/ 3;/' spin.c
echo errors >mode
EOA
cat >agents/faster <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's/i < n;/i < n \/ 3;/' spin.c
EOA
chmod +x agents/*

loop() {
	(cd proj && git for-each-ref --format="%(refname)" refs/heads/hotloop/ | xargs -r -n1 git update-ref -d) &&
	(cd proj && hotloop loop --json --agent "$SCRATCH/agents/$1") >$1.json 2>$1.err
}

none_left() {
	! pgrep -f csrv9870 >/dev/null
}

test_expect_success 'faster, but its service errs: rejected at the canary stage' '
	loop erring &&
	jq -e ".kept == 0 and (.attempts | length) == 1 and .attempts[0].stage == \"canary\" and
		.attempts[0].verdict == \"reject\" and
		(.attempts[0].reasons | any(test(\"^the canary .svc. failed: .*errors\")))" erring.json ||
		{ jq ".attempts" erring.json; tail -20 erring.err; exit 1; }
	dir=$(jq -r ".attempts[0].dir" erring.json) &&
	test -s "$dir/canary/report.md" && test -s "$dir/canary/canary.json" &&
	jq -e ".verdict == \"fail\" and .critical_failed == true" "$dir/canary/canary.json" >/dev/null &&
	report=$(grep -l "the canary .svc. failed" proj/kb/*/report.md) && test -n "$report" &&
	none_left
'

test_expect_success 'the same speedup alone passes the canary and is kept' '
	loop faster &&
	jq -e ".kept == 1 and .attempts[0].verdict == \"keep\" and
		(.attempts[0].reasons | any(test(\"^the canary .svc.: (pass|marginal), \")))" faster.json ||
		{ jq ".attempts" faster.json; tail -20 faster.err; exit 1; }
	none_left
'

test_expect_success 'a [gate] canary that names no [canary] section: a config error' '
	sed "s/canary = svc/canary = nosuch/" proj/hotloop.conf >bad.conf &&
	test_expect_code_rc=0 && hotloop config -f bad.conf >out 2>err || test_expect_code_rc=$? &&
	test "$test_expect_code_rc" = 1 &&
	expect_grep "\\[gate\\]: .canary = nosuch. names no \\[canary\\] section" err
'

test_done
