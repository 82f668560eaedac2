#!/bin/sh
# The replay agent of the wordfreq demo (examples/wordfreq/agent): run as
# hotloop loop runs an agent, round N applies recorded candidate N to a
# scratch copy of the example, and each candidate meets the gate the way it
# is recorded to: failing tests, a protected path, a slower primary, a
# regressed guard, and last a change that is kept.
. "$(dirname "$0")/test-lib.sh"

for tool in git cc make jq; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool is missing"
		exit 0
	fi
done

WF=$ROOT/examples/wordfreq
REPLAY=$WF/agent/replay
BANNER="replay agent (recorded candidates, not an LLM)"
# the loop's own rules from hotloop.conf; only the wait for a quiet machine
# is cut, the machine is what it is
C="hotloop compare --max-wait 0 --json -f hotloop.conf --base main"

# replay N: run the agent for round N on a branch cN of the scratch copy,
# from its worktree, with the prompt on stdin; its stdout goes to out.N
replay() {
	(cd wf && git checkout -q -b "c$1" main &&
	 echo "improve wordfreq" >"$SCRATCH/prompt" &&
	 HOTLOOP_ROUND=$1 HOTLOOP_LENS=algorithmic HOTLOOP_WORKTREE=$SCRATCH/wf \
	 HOTLOOP_PROMPT=$SCRATCH/prompt HOTLOOP_BRIEF=$SCRATCH/prompt \
	 HOTLOOP_PROPOSAL=$SCRATCH/proposal.$1 "$REPLAY" <"$SCRATCH/prompt" >"$SCRATCH/out.$1")
}

commit_candidate() {
	(cd wf && git commit -q -am "candidate $1" && git checkout -q main)
}

# The example without its agent directory (the loop runs the agent from
# outside the worktree) or anything a build left behind. The `big` input
# is a quarter of the demo's (50000 words over the same 8000) so that the
# slow candidate's pairs stay short; every rule of hotloop.conf is kept.
test_expect_success 'setup: the example as a git repository of its own' '
	mkdir wf && (cd "$WF" && tar cf - --exclude=./agent --exclude=./wordfreq \
		--exclude=./gen --exclude=./data --exclude=./.hotloop .) | (cd wf && tar xf -) &&
	test -f wf/src/words.c && ! test -e wf/agent &&
	sed -i "s|^	build = .*|	build = make -j2 wordfreq gen data/small.txt \\&\\& ./gen 50000 8000 >data/big.txt|" \
		wf/hotloop.conf &&
	expect_grep "gen 50000 8000" wf/hotloop.conf &&
	(cd wf && git init -q -b main . &&
	 git config user.email t@example.com && git config user.name t &&
	 git add . && git commit -q -m wordfreq)
'

test_expect_success 'round 1: the build passes, the tests fail' '
	replay 1 &&
	(cd wf && make -s >/dev/null 2>&1) &&
	! (cd wf && make test) >test.out 2>&1 &&
	expect_grep "^FAIL counts" test.out &&
	expect_grep "8 words, 6 distinct" test.out &&
	commit_candidate 1
'

test_expect_success 'round 2: the change edits a protected path, and its edited tests pass' '
	replay 2 &&
	(cd wf && git diff --name-only) >names &&
	expect_grep "^tests/run$" names && expect_grep "^src/tokenize.c$" names &&
	(cd wf && make -s >/dev/null 2>&1 && make test) >test.out 2>&1 &&
	expect_grep "^ok counts" test.out &&
	commit_candidate 2
'

test_expect_code 4 'round 3: compare rejects it, the primary much slower' '
	replay 3 && commit_candidate 3 &&
	(cd wf && $C --cand c3) >c3.json; rc=$?
	jq -e ".verdict == \"reject\" and .correctness.ok" c3.json &&
	jq -e ".primary.workload == \"big\" and .primary.change_pct > 10 and .primary.ci_low_pct > 0" c3.json &&
	jq -e "[.reasons[] | test(\"primary .big. regressed\")] | any" c3.json ||
		{ cat c3.json; exit 1; }
	exit $rc
'

test_expect_code 4 'round 4: compare rejects it on the guard small, the primary faster' '
	replay 4 && commit_candidate 4 &&
	(cd wf && $C --cand c4) >c4.json; rc=$?
	jq -e ".verdict == \"reject\" and .correctness.ok" c4.json &&
	jq -e ".primary.workload == \"big\" and .primary.ci_high_pct < -50" c4.json &&
	jq -e ".guards | length == 1 and .[0].workload == \"small\" and .[0].regressed" c4.json &&
	jq -e "[.reasons[] | test(\"guard .small. regressed\")] | any" c4.json ||
		{ cat c4.json; exit 1; }
	exit $rc
'

test_expect_success 'round 5: compare keeps it, both workloads faster, same output' '
	replay 5 && commit_candidate 5 &&
	(cd wf && $C --cand c5) >c5.json ||
		{ cat c5.json; exit 1; }
	jq -e ".verdict == \"keep\" and .correctness.ok" c5.json &&
	jq -e "[.correctness.fingerprints[] | .match] == [true, true]" c5.json &&
	jq -e ".primary.ci_high_pct < -50 and .guards[0].ci_high_pct < 0" c5.json
'

test_expect_success 'every round says it is a replay and writes its proposal' '
	for n in 1 2 3 4 5; do
		head -n 1 out.$n >first &&
		expect_grep "^$BANNER: round $n of 5: [a-z]" first &&
		jq -e "(.title | length) > 0 and (.function | length) > 0 and
			(.hypothesis | length) > 0 and (.expected_gain_pct | type) == \"number\"" \
			proposal.$n >/dev/null || exit 1
	done &&
	jq -e ".function == \"find_word\"" proposal.5 &&
	jq -e ".function == \"tokenize\"" proposal.2
'

test_expect_success 'round 6: NO CANDIDATE, nothing changed, no proposal' '
	(cd wf && git checkout -q main) &&
	(cd wf && HOTLOOP_ROUND=6 HOTLOOP_PROPOSAL=$SCRATCH/proposal.6 "$REPLAY" </dev/null) >out.6 &&
	expect_grep "^$BANNER: round 6: all 5 candidates replayed" out.6 &&
	expect_grep "^NO CANDIDATE$" out.6 &&
	! test -e proposal.6 && test -z "$(cd wf && git status --porcelain)"
'

test_expect_success 'the whole prompt is read: a large one does not break its writer' '
	(cd wf && { head -c 1048576 /dev/zero; echo $? >"$SCRATCH/writer.rc"; } |
	 HOTLOOP_ROUND=6 "$REPLAY" >/dev/null) &&
	test "$(cat writer.rc)" = 0
'

test_expect_code 1 'a candidate that no longer applies is refused, the tree untouched' '
	(cd wf && git checkout -q c3 && git status --porcelain >"$SCRATCH/before") &&
	(cd wf && HOTLOOP_ROUND=3 "$REPLAY" </dev/null) >out 2>err; rc=$?
	expect_grep "^$BANNER: round 3 of 5" out &&
	expect_grep "candidate 3 (03-sorted-early-exit.patch) no longer applies" err &&
	expect_grep "moved on" err &&
	(cd wf && git status --porcelain) >after && cmp before after || exit 99
	exit $rc
'

test_expect_success 'a worktree below the top of its repository gets every file patched' '
	(cd wf && git checkout -q main) &&
	mkdir -p mono/examples && cp -R wf mono/examples/wordfreq && rm -rf mono/examples/wordfreq/.git &&
	(cd mono && git init -q -b main . &&
	 git config user.email t@example.com && git config user.name t &&
	 git add . && git commit -q -m mono) &&
	(cd mono/examples/wordfreq && HOTLOOP_ROUND=5 "$REPLAY" </dev/null >/dev/null) &&
	(cd mono && git diff --name-only) >names &&
	expect_grep "^examples/wordfreq/src/words.c$" names &&
	expect_grep "^examples/wordfreq/src/words.h$" names
'

test_expect_code 2 'a round that is not a number is a usage error' '
	HOTLOOP_ROUND=two "$REPLAY" </dev/null
'

test_done
