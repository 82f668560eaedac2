#!/bin/sh
# loop: the target stage and the target-gain check, with scripted agents on
# a program of three functions whose shares follow from their loop counts
# (hot 59%, warm 39%, cold 2%, on any CPU). A change of cold alone is
# rejected at `target` before it is built, naming it and its share; a
# change of hot, or of hot and cold, passes; a keep whose gain came from
# warm while hot got dearer is said to be one, and rejected with
# require-target-gain = yes. Then --from REV and brief --rev.
. "$(dirname "$0")/test-lib.sh"

command -v git >/dev/null || skip_all="needs git"
test_have_prereq SANDBOX || skip_all="no sandbox can be made here (bubblewrap, user and PID namespaces)"
test_have_prereq PERF || skip_all="perf events are not permitted here: the loop profiles the best"

test_expect_success 'setup: a project in git' '
	mkdir proj && cd proj &&
	cp "$DATA/loop-target/three.c" . &&
	printf "three: three.c\n\tcc -O1 -g -fno-omit-frame-pointer -o three three.c\n" >Makefile &&
	mkdir tests && printf "#!/bin/sh\n./three 1 | grep -q \"^done 1\$\"\n" >tests/run && chmod +x tests/run &&
	cat >hotloop.conf <<-\EOC &&
	[project]
		build = make -s
		owned = .
		protected = tests hotloop.conf Makefile
	[gate]
		test = tests/run
	[improve]
		min-improvement = 10%
		min-share = 5%
		max-rejects-in-a-row = 50
		rounds = 1
	[agent]
		timeout = 5s
	[workload "main"]
		run = ./three 20
		primary = yes
	EOC
	printf "three\n" >.gitignore &&
	git init -q && git add . && git -c user.name=t -c user.email=t@t commit -q -m base
'

mkdir agents
cat >agents/cold <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's|SPIN(n / 10, x);|SPIN(n / 20, x);|' three.c
EOA
cat >agents/outside <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's|^#define SPIN(count, x)|#define SPIN(count, x) /* the kernel */|' three.c
EOA
cat >agents/hot <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's|SPIN(3 \* n, x);|SPIN(n, x);|' three.c
EOA
cat >agents/hot-and-cold <<\EOA
#!/bin/sh
cat >/dev/null
sed -i -e 's|SPIN(3 \* n, x);|SPIN(n, x);|' -e 's|SPIN(n / 10, x);|SPIN(n / 20, x);|' three.c
EOA
# hot does a fifth more, warm a tenth of its work: the primary is ~24%
# faster, all of it from warm, and hot, the target, got dearer
cat >agents/elsewhere <<\EOA
#!/bin/sh
cat >/dev/null
sed -i -e 's|SPIN(3 \* n, x);|SPIN(3 * n + 3 * n / 5, x);|' -e 's|SPIN(2 \* n, x);|SPIN(n / 5, x);|' three.c
EOA
chmod +x agents/*

# loop AGENT [ARGS]: one round with agents/AGENT on a branch of its own, the summary in AGENT.json
loop() {
	name=$1
	shift
	(cd proj && git for-each-ref --format="%(refname)" refs/heads/hotloop/ | xargs -r -n1 git update-ref -d) &&
	(cd proj && hotloop loop --json --agent "$SCRATCH/agents/$name" "$@") >$name.json 2>$name.err
}

test_expect_success 'a change of a cold function alone is rejected at target, before it is built' '
	loop cold &&
	jq -e ".kept == 0 and .attempts[0].stage == \"target\" and .attempts[0].verdict == \"reject\" and
		(.attempts[0].reasons[0] | test(\"^target: changed only cold \\\\([0-9.]+%\\\\), under \\\\[improve\\\\] min-share 5%\"))" cold.json ||
		{ cat cold.json; exit 1; }
	dir=$(jq -r ".attempts[0].dir" cold.json) && test -s "$dir/diff.patch" && ! test -e "$dir/build.log"
'

test_expect_success 'a change outside every function is rejected at target, naming the lines' '
	loop outside &&
	jq -e ".attempts[0].stage == \"target\" and
		(.attempts[0].reasons[0] | test(\"changed no function \\\\(three.c:10\\\\)\"))" outside.json ||
		{ cat outside.json; exit 1; }
'

test_expect_success 'a change of the hot function passes the target stage and is kept; its target got cheaper' '
	loop hot &&
	jq -e ".kept == 1 and .attempts[0].verdict == \"keep\" and .attempts[0].target == \"hot\" and
		.attempts[0].target_share > 0.4 and .attempts[0].target_cheaper == true and
		(.attempts[0].target_gain | test(\"^target hot: [0-9.]+% -> [0-9.]+% of the samples .*: cheaper$\"))" hot.json ||
		{ cat hot.json; exit 1; }
	grep -l "^The target hot: .*: cheaper\\.$" proj/kb/*/report.md >kb.hits && test -s kb.hits
'

test_expect_success 'an edit of several functions passes when the largest share reaches min-share' '
	loop hot-and-cold &&
	jq -e ".attempts[0].stage != \"target\" and .attempts[0].target == \"hot\"" hot-and-cold.json ||
		{ cat hot-and-cold.json; exit 1; }
'

test_expect_success 'a keep whose gain came from elsewhere is said to be one' '
	loop elsewhere &&
	jq -e ".kept == 1 and .attempts[0].target == \"hot\" and .attempts[0].target_cheaper == false and
		(.attempts[0].reasons | map(test(\"^target hot: .*did not get cheaper \\\\(the gain came from elsewhere\\\\)$\")) | any)" elsewhere.json ||
		{ cat elsewhere.json; exit 1; }
'

test_expect_success 'with require-target-gain = yes that keep is rejected at target' '
	sed -i "s/^min-share = 5%/&\nrequire-target-gain = yes/" proj/hotloop.conf &&
	expect_grep "^require-target-gain = yes" proj/hotloop.conf &&
	test_when_finished "sed -i /require-target-gain/d proj/hotloop.conf" &&
	loop elsewhere &&
	jq -e ".kept == 0 and .attempts[0].stage == \"target\" and .attempts[0].verdict == \"reject\" and
		.attempts[0].change_pct < -10 and
		(.attempts[0].reasons | map(test(\"did not get cheaper.*require-target-gain = yes$\")) | any)" elsewhere.json ||
		{ cat elsewhere.json; exit 1; }
'

test_expect_success 'setup: HEAD moves on past the commit that ran' '
	(cd proj && git rev-parse HEAD >../deployed &&
	 sed -i "s|SPIN(2 \\* n, x);|SPIN(2 * n, x); /* HEAD */|" three.c &&
	 git -c user.name=t -c user.email=t@t commit -q -am "after the deploy" &&
	 git rev-parse HEAD >../head)
'

test_expect_success '--from REV starts the branch at REV, and the user branch stays' '
	loop hot --from "$(cat deployed)" &&
	jq -e --arg d "$(cat deployed)" ".start_commit == \$d and .kept == 1" hot.json || { cat hot.json; exit 1; }
	branch=$(jq -r .branch hot.json) &&
	(cd proj && git rev-parse "$branch^" && git rev-parse HEAD) >revs &&
	test "$(sed -n 1p revs)" = "$(cat deployed)" && test "$(sed -n 2p revs)" = "$(cat head)" &&
	(cd proj && git show "$branch:three.c") >kept.c && ! grep -q "HEAD" kept.c
'

test_expect_code 1 '--from a commit the day'"'"'s branch does not come from is refused' '
	(cd proj && hotloop loop --agent "$SCRATCH/agents/hot" --from HEAD) 2>err; rc=$?
	expect_grep "does not come from --from HEAD" err || exit 99; exit $rc
'

test_expect_code 1 '--from what names no commit is an error' '
	(cd proj && hotloop loop --agent "$SCRATCH/agents/hot" --from no-such-rev) 2>err; rc=$?
	expect_grep "no-such-rev. names no commit" err || exit 99; exit $rc
'

# The loop's profiles name the sources of checkouts gone since, as a
# profile from production names those of the machine that built it.
test_expect_success 'brief --rev reads the snippets from that commit, not the working tree' '
	prof=$(ls proj/.hotloop/loop/*/round-01/profile.pb.gz | tail -1) && test -s "$prof" &&
	(cd proj && sed -i "s|SPIN(2 \\* n, x);.*|SPIN(2 * n, x); /* WORKTREE */|" three.c) &&
	test_when_finished "(cd proj && git checkout -q three.c)" &&
	hotloop brief -f proj/hotloop.conf --context 20 "$prof" >none.md &&
	expect_grep "source: cannot read .*three.c" none.md &&
	hotloop brief -f proj/hotloop.conf --context 20 --rev "$(cat deployed)" "$prof" >deployed.md &&
	hotloop brief -f proj/hotloop.conf --context 20 --rev HEAD "$prof" >head.md &&
	expect_grep "SPIN(2 \\* n, x);\$" deployed.md && ! grep -q "HEAD \\*/" deployed.md &&
	expect_grep "SPIN(2 \\* n, x); /\\* HEAD \\*/" head.md &&
	! grep -q WORKTREE deployed.md head.md
'

test_expect_code 1 'brief --rev of what names no commit is an error' '
	prof=$(ls proj/.hotloop/loop/*/round-01/profile.pb.gz | tail -1) &&
	hotloop brief -f proj/hotloop.conf --rev no-such-rev "$prof" 2>err; rc=$?
	expect_grep "no-such-rev. names no commit" err || exit 99; exit $rc
'

test_done
