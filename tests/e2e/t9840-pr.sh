#!/bin/sh
# pr: the kept commits of a loop's branch as format-patch files with their
# bodies (kb report, verdict, interval, diff stat), or as pull requests by
# a configured command on stacked head branches, its placeholders quoted
# so a hostile title runs nothing; a command that fails stops there and a
# rerun goes on; bad input changes nothing. Effects are 3x, far above noise.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-loop.sh"

command -v git >/dev/null || skip_all="needs git"
command -v jq >/dev/null || skip_all="needs jq"
test_have_prereq SANDBOX || skip_all="no sandbox can be made here (bubblewrap, user and PID namespaces)"

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
		max-rejects-in-a-row = 50
		rounds = 2
	[agent]
		timeout = 20s
	[workload "main"]
		run = ./spin 60
		primary = yes
	EOC
	git init -q -b main && git add . && git -c user.name=t -c user.email=t@t commit -q -m base
'

# Round 1 cuts the loop to a third, round 2 to a ninth: two keeps, the
# second built on the first; the first's title is hostile to a shell.
mkdir agents
cat >agents/thirds <<EOA
#!/bin/sh
cat >/dev/null
if grep -q "i < n / 3;" spin.c; then
	sed -i "s|i < n / 3;|i < n / 9;|" spin.c
	echo '{"function": "spin", "title": "a ninth", "expected_gain_pct": 66}' >"\$HOTLOOP_PROPOSAL"
else
	sed -i "s/i < n;/i < n \\/ 3;/" spin.c
	echo '{"function": "spin", "title": "a \\"third\\" \$(touch pwned) \`touch pwned2\` it'"'"'s", "expected_gain_pct": 66}' >"\$HOTLOOP_PROPOSAL"
fi
EOA
chmod +x agents/thirds

test_expect_success 'setup: a loop keeps two changes' '
	(cd proj && hotloop loop --json --agent "$SCRATCH/agents/thirds") >loop.json 2>loop.err &&
	jq -e ".kept == 2" loop.json || { jq .attempts loop.json; tail loop.err; exit 1; }
	jq -r .branch loop.json >branch && jq -r "[.attempts[].commit] | .[]" loop.json >commits &&
	test "$(wc -l <commits)" = 2
'
B=$(cat branch 2>/dev/null)
D=$(echo "$B" | tr / -)

test_expect_success 'no command: format-patch files and their bodies' '
	(cd proj && hotloop pr) >out &&
	dir=proj/.hotloop/pr/$D && test "$(ls $dir/*.patch | wc -l)" = 2 && test "$(ls $dir/*.md | wc -l)" = 2 &&
	for p in $dir/*.patch; do test -f "${p%.patch}.md" || exit 1; done &&
	first=$(ls $dir/0001-*.md) && second=$(ls $dir/0002-*.md) &&
	expect_grep "^- verdict: keep$" $first && expect_grep "^- change: -[0-9.]*% cpu on main \[" $first &&
	expect_grep "^## Results" $first && expect_grep "interval" $first &&
	expect_grep "^## Diff stat" $first && expect_grep "spin.c | 2 +-" $first &&
	expect_grep "Change 1 of 2, stacked: it goes into .main." $first &&
	expect_grep "^# a ninth" $second && expect_grep "Change 2 of 2" $second &&
	expect_grep "^$B: 2 kept changes not on main$" out && expect_grep "patch: .*0001-" out &&
	! test -e proj/pwned && ! test -e proj/pwned2 && ! test -e pwned
'

test_expect_success 'the patches apply on the base and give the branch'"'"'s tree' '
	git clone -q proj applied && (cd applied && git -c user.name=t -c user.email=t@t am -q "$SCRATCH"/proj/.hotloop/pr/$D/*.patch) &&
	test "$(cd applied && git rev-parse HEAD^{tree})" = "$(cd proj && git rev-parse $B^{tree})"
'

test_expect_success '--json' '
	(cd proj && hotloop pr --json) >pr.json &&
	jq -e --arg b "$B" --arg c1 "$(sed -n 1p commits)" --arg c2 "$(sed -n 2p commits)" ".branch == \$b and
		.base == \"main\" and .mode == \"format-patch\" and .dry_run == false and .sent == 0 and
		(.prs | length) == 2 and .prs[0].commit == \$c1 and .prs[1].commit == \$c2 and
		(.prs[0].title | startswith(\"perf: spin: a \\\"third\\\"\")) and (.prs[0].kb | type == \"string\") and
		(.prs[0].patch | endswith(\".patch\")) and (.prs[0].body | endswith(\".md\")) and
		.prs[0].head == null and .prs[0].command == null and .prs[0].skipped == false" pr.json
'

cat >record <<\EOF2
#!/bin/sh
# record: each argument on a line of its own, then a blank line
for a in "$@"; do printf "%s\n" "$a"; done >>"$SCRATCH_LOG"
echo >>"$SCRATCH_LOG"
echo "https://example.invalid/pr/$(grep -c "^$" "$SCRATCH_LOG")"
EOF2
chmod +x record
SCRATCH_LOG=$SCRATCH/sent.log
export SCRATCH_LOG

snapshot() { (cd proj && git status --porcelain && git rev-parse HEAD && git symbolic-ref HEAD); }

test_expect_success 'a command: one pull request per kept commit, stacked, the title one word that runs nothing' '
	snapshot >before &&
	(cd proj && hotloop pr --command "$SCRATCH/record {title} {body} {branch} {base} {commit}") >out &&
	! test -e proj/pwned && ! test -e proj/pwned2 && ! test -e pwned &&
	test "$(grep -c "^$" sent.log)" = 2 &&
	title=$(sed -n 1p sent.log) &&
	case "$title" in "perf: spin: a \"third\" \$(touch pwned) \`touch pwned2\` it'"'"'s (main -"*) ;;
		*) echo "title: $title"; exit 1;; esac &&
	h1=$(sed -n 3p sent.log) && b1=$(sed -n 4p sent.log) && h2=$(sed -n 9p sent.log) && b2=$(sed -n 10p sent.log) &&
	test "$b1" = main && test "$h1" = "hotloop-pr/${B#hotloop/}/1" && test "$b2" = "$h1" &&
	test "$h2" = "hotloop-pr/${B#hotloop/}/2" &&
	test "$(cd proj && git rev-parse $h1)" = "$(sed -n 1p commits)" &&
	test "$(cd proj && git rev-parse $h2)" = "$(sed -n 2p commits)" &&
	test -f "$(sed -n 2p sent.log)" && expect_grep "^- verdict: keep" "$(sed -n 2p sent.log)" &&
	expect_grep "https://example.invalid/pr/2" out && expect_grep "^2 sent$" out &&
	snapshot >after && cmp before after
'

test_expect_success 'again: what was sent is skipped' '
	: >sent.log && (cd proj && hotloop pr --command "$SCRATCH/record {title}" --json) >again.json &&
	jq -e ".sent == 0 and all(.prs[]; .skipped)" again.json && ! test -s sent.log
'

test_expect_code 1 'a command that fails stops there; the rerun goes on from it' '
	(cd proj && git branch -D -q hotloop-pr/${B#hotloop/}/1 hotloop-pr/${B#hotloop/}/2) &&
	rm proj/.hotloop/pr/$D.sent && : >sent.log &&
	(cd proj && hotloop pr --command "test {branch} != hotloop-pr/${B#hotloop/}/2 && $SCRATCH/record {branch}") >fail.out 2>fail.err; rc=$?
	expect_grep "the \[pr\] command failed for [0-9a-f]* .perf: spin: a ninth" fail.err &&
	expect_grep "exit status 1" fail.err && expect_grep "hotloop pr. again goes on from this one" fail.err &&
	(cd proj && git rev-parse -q --verify hotloop-pr/${B#hotloop/}/1) >/dev/null &&
	! (cd proj && git rev-parse -q --verify hotloop-pr/${B#hotloop/}/2) &&
	test "$(wc -l <proj/.hotloop/pr/$D.sent)" = 1 &&
	(cd proj && hotloop pr --command "$SCRATCH/record {branch}" --json) >rerun.json &&
	jq -e ".sent == 1 and .prs[0].skipped and (.prs[1].skipped | not)" rerun.json &&
	test "$(grep -c "^$" sent.log)" = 2 || exit 99
	exit $rc
'

test_expect_success '[pr] command from the config; --dry-run runs nothing; --command "" writes patches' '
	rm proj/.hotloop/pr/$D.sent && : >sent.log &&
	printf "[pr]\n\tcommand = $SCRATCH/record {title} --base {base}\n" >>proj/hotloop.conf &&
	(cd proj && hotloop pr --dry-run --json -o "$SCRATCH/dry") >dry.json &&
	jq -e ".mode == \"command\" and .dry_run and .sent == 0 and
		(.prs[0].command | startswith(\"$SCRATCH/record '"'"'perf: spin: a \\\"third\\\"\")) and
		(.prs[1].command | endswith(\"--base '"'"'hotloop-pr/${B#hotloop/}/1'"'"'\"))" dry.json &&
	! test -s sent.log && test -f "$(jq -r .prs[0].body dry.json)" &&
	(cd proj && hotloop pr --command "" --json) >nocmd.json && jq -e ".mode == \"format-patch\"" nocmd.json &&
	(cd proj && hotloop pr --json) >cfg.json && jq -e ".mode == \"command\" and .sent == 2" cfg.json &&
	(cd proj && git checkout -q hotloop.conf)
'

test_expect_code 1 'a placeholder inside quotes: an error before anything is written' '
	(cd proj && hotloop pr --command "echo \"{title}\"" -o "$SCRATCH/quoted") 2>err; rc=$?
	expect_grep "{title} is inside quotes" err && ! test -e quoted || exit 99
	exit $rc
'

test_expect_code 1 '-o names a directory that is not empty: refused, left as it was' '
	mkdir full && echo mine >full/keep &&
	(cd proj && hotloop pr -o "$SCRATCH/full") 2>err; rc=$?
	expect_grep "is not empty" err && test "$(ls full)" = keep || exit 99
	exit $rc
'

test_expect_code 1 'a branch with no kept commit' '
	(cd proj && git branch hotloop/empty main && hotloop pr --branch hotloop/empty) 2>err; rc=$?
	expect_grep "no kept commit on hotloop/empty that main does not have" err || exit 99
	exit $rc
'

test_expect_code 1 'no such branch' '
	(cd proj && hotloop pr --branch hotloop/1999-01-01) 2>err; rc=$?
	expect_grep "no branch .hotloop/1999-01-01." err || exit 99
	exit $rc
'

test_expect_code 1 'an unknown base' '
	(cd proj && hotloop pr --base nope) 2>err; rc=$?
	expect_grep "no commit .nope." err || exit 99
	exit $rc
'

test_expect_code 2 'usage: an unexpected argument' '(cd proj && hotloop pr extra)'

test_done
