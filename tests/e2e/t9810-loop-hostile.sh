#!/bin/sh
# loop against hostile agents. The user's repository has staged, unstaged,
# untracked and stashed work and a branch of its own; one scripted agent per
# way of breaking a promise (delete its .git, hide a change with
# skip-worktree or assume-unchanged, write outside its tree, change the
# user's HEAD, index, stash and branches, leave orphans and setsid children,
# add a huge or binary file, commit by itself, outlive a kill -9 of the
# loop). In the sandbox each attempt fails or is dropped and the user's
# repository is byte-identical (HEAD, refs, index, stash, every file, every
# object); with --no-sandbox the same acts are caught by the integrity
# check, named, and the loop stops with an error.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-loop.sh"

command -v git >/dev/null || skip_all="needs git"
test_have_prereq SANDBOX || skip_all="no sandbox can be made here (bubblewrap, user and PID namespaces)"
command -v jq >/dev/null || skip_all="needs jq"

U=$SCRATCH/proj
GIT="git -c user.name=t -c user.email=t@t"

test_expect_success 'setup: a project in git with work in progress' '
	spin_project &&
	cat >hotloop.conf <<-\EOC &&
	[project]
		build = make -s
		owned = spin.c
		protected = tests hotloop.conf Makefile
	[gate]
		test = tests/run
	[improve]
		min-improvement = 10%
		max-rejects-in-a-row = 50
		rounds = 1
	[agent]
		timeout = 20s
	[workload "main"]
		run = ./spin 40
		primary = yes
	EOC
	git init -q && git add . && $GIT commit -q -m base && git branch feature &&
	echo "// stashed" >>Makefile && $GIT stash -q &&
	echo "// staged" >>spin.c && git add spin.c && echo "// unstaged" >>spin.c &&
	echo "work in progress" >notes.txt && ln -s notes.txt link &&
	cd .. && cp -a proj pristine
'

# The user's repository as it is: every file and directory, HEAD, the
# index's bytes, the config, hooks, the stash, the refs but the loop's own
# branch (and hotloop's state and kb, which it writes).
snapshot() {
	(cd "$U" &&
	 find . -path ./.git -prune -o -path ./.hotloop -prune -o -path ./kb -prune -o -print | LC_ALL=C sort |
	 while read -r f; do
		if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"
		elif [ -f "$f" ]; then echo "$(stat -c %a "$f") $(sha256sum <"$f") $f"
		else echo "$(stat -c %a "$f") $f"; fi
	 done &&
	 cat .git/HEAD && sha256sum .git/index .git/config .git/logs/refs/stash &&
	 git for-each-ref --format="%(refname) %(objectname)" | grep -v "^refs/heads/hotloop/" &&
	 find .git/hooks .git/info -type f | LC_ALL=C sort | xargs sha256sum)
}
objects() { (cd "$U" && git cat-file --batch-all-objects --batch-check="%(objectname)" | LC_ALL=C sort); }
# identical: the repository is as before, and no object of it is gone
identical() {
	snapshot >after && diff before after &&
	objects >objects.after && test -z "$(LC_ALL=C comm -23 objects.before objects.after)"
}

test_expect_success 'setup: the repository before' '
	snapshot >before && objects >objects.before
'

mkdir agents
# agent NAME: agents/NAME from stdin, with @U@ the user's repository and @S@ this test's directory
agent() { sed -e "s|@U@|$U|g" -e "s|@S@|$SCRATCH|g" >agents/$1 && chmod +x agents/$1; }
# loop NAME [ARGS]: one round with agents/NAME, the summary in NAME.json, stderr in NAME.err
loop() {
	name=$1
	shift
	(cd "$U" && hotloop loop --json --agent "$SCRATCH/agents/$name" "$@") >$name.json 2>$name.err
}
# dropped NAME STAGE REGEX: its one attempt was not kept, decided at STAGE for a reason matching REGEX
dropped() {
	jq -e --arg s "$2" --arg r "$3" ".kept == 0 and (.attempts | length) == 1 and
		.attempts[0].stage == \$s and .attempts[0].commit == null and
		(.attempts[0].reasons | any(test(\$r)))" $1.json >/dev/null || {
		echo "$1:"; jq ".attempts" $1.json; tail -5 $1.err; return 1; }
}
# log NAME: the agent's output of the last loop
log() { cat "$U"/.hotloop/loop/$(ls "$U"/.hotloop/loop | tail -1)/round-*/1-*/agent.log; }

agent delete-git <<\EOA
#!/bin/sh
cat >/dev/null
rm -rf .git
sed -i 's/i < n[^;]*;/i < n \/ 3;/' spin.c
EOA
test_expect_success 'an agent that deletes its .git: the commit holds its change, nothing of the user'"'"'s' '
	loop delete-git &&
	jq -e ".kept == 1 and .attempts[0].verdict == \"keep\"" delete-git.json &&
	best=$(jq -r .best_commit delete-git.json) && start=$(jq -r .start_commit delete-git.json) &&
	(cd "$U" && git diff --name-only $start $best) >names && test "$(cat names)" = spin.c &&
	(cd "$U" && git show $best:spin.c) >kept.c && ! grep -q "staged" kept.c && grep -q "i < n / 3;" kept.c &&
	identical
'

for bit in skip-worktree assume-unchanged; do
	agent $bit <<EOA
#!/bin/sh
cat >/dev/null
git update-index --$bit tests/run
printf '#!/bin/sh\nexit 0\n' >tests/run
sed -i 's/done %lu/done %lu!/' spin.c
EOA
	test_expect_success "a change hidden with --$bit is seen: protected" "
		loop $bit && dropped $bit protected \"protected path .tests/run.\" && identical
	"
done

agent write-outside <<\EOA
#!/bin/sh
cat >/dev/null
echo evil >>@U@/notes.txt
echo evil >>@U@/spin.c
echo evil >../../evil
echo evil >@S@-evil
mkdir -p @U@/.git/hooks && echo evil >@U@/.git/hooks/pre-commit
echo evil >>@U@/.git/config
rm -f @U@/Makefile
echo done trying
EOA
test_expect_success 'an agent that writes outside its tree cannot' '
	loop write-outside && dropped write-outside diff "changed nothing" &&
	log >log && expect_grep "Read-only file system" log && expect_grep "done trying" log &&
	test ! -e "$SCRATCH-evil" && identical
'

agent git-state <<\EOA
#!/bin/sh
cat >/dev/null
cd @U@ || exit 0
git checkout -q -b evil
git reset -q
git stash -q
git stash drop -q; git stash drop -q
git branch -D -q feature
git update-ref -d refs/heads/$(git for-each-ref --format='%(refname:short)' refs/heads/hotloop/ | head -1)
git symbolic-ref HEAD refs/heads/unborn
git update-index --skip-worktree spin.c
echo done trying
EOA
test_expect_success 'an agent that changes the user'"'"'s HEAD, index, stash and branches cannot' '
	loop git-state && log >log && expect_grep "done trying" log && identical
'

agent orphans <<\EOA
#!/bin/sh
cat >/dev/null
setsid sleep 3011 </dev/null >/dev/null 2>&1 &
nohup sleep 3012 </dev/null >/dev/null 2>&1 &
setsid sh -c "sleep 2; echo late >>@U@/notes.txt" </dev/null >/dev/null 2>&1 &
sed -i 's/done %lu/done %lu!/' spin.c
# and spin, the hot function: main alone is rejected at the target stage
sed -i 's|unsigned long x = 1;|unsigned long x = 1; /* seed */|' spin.c
EOA
test_expect_success 'what an agent leaves running dies with it' '
	loop orphans && dropped orphans test "tests failed" &&
	! pgrep -f "sleep 301[12]" && sleep 3 && identical
'

agent runtime <<\EOA
#!/bin/sh
cat >/dev/null
sed -e 's/i < n;/i < n \/ 3 + 1;/' \
    -e 's|(void)sink;|(void)sink; if (system("echo evil >>@U@/notes.txt 2>/dev/null; setsid sleep 3014 </dev/null >/dev/null 2>\&1 \&")) return 1;|' \
    "$DATA/loop/spin.c" >spin.c
EOA
test_expect_success 'a candidate whose program writes outside and leaves a daemon: built, tested and measured in the sandbox' '
	loop runtime && jq -e ".attempts[0].stage == \"compare\"" runtime.json &&
	! pgrep -f "sleep 3014" && identical
'

agent huge <<\EOA
#!/bin/sh
cat >/dev/null
head -c 2000000 /dev/zero | tr "\0" "/" >>spin.c
EOA
agent binary <<\EOA
#!/bin/sh
cat >/dev/null
printf "\0\1\2" >>spin.c
EOA
agent unowned <<\EOA
#!/bin/sh
cat >/dev/null
echo "int evil;" >evil.c
sed -i 's/i < n[^;]*;/i < n \/ 9;/' spin.c
EOA
test_expect_success 'a file over max-file-size is rejected at diff, and nothing reaches the repository' '
	du -sk "$U/.git" | cut -f1 >size.before &&
	loop huge && dropped huge diff "spin.c. is [0-9]* bytes, over \\[improve\\] max-file-size" &&
	test $(du -sk "$U/.git" | cut -f1) -lt $(($(cat size.before) + 500)) && identical
'
test_expect_success 'a binary file is rejected at diff' '
	loop binary && dropped binary diff "spin.c. is a binary file" && identical
'
test_expect_success 'a new file outside [project] owned is rejected at diff, by name' '
	loop unowned && dropped unowned diff "evil.c. is a new file outside \\[project\\] owned" && identical
'

agent commits <<\EOA
#!/bin/sh
cat >/dev/null
sed -i 's/i < n[^;]*;/i < n \/ 9;/' spin.c
git -c user.name=a -c user.email=a@a commit -q -am "the agent's own"
EOA
test_expect_success 'an agent that commits by itself: hotloop takes the tree' '
	loop commits &&
	jq -e ".kept == 1 and (.attempts[0].reasons | any(test(\"the agent made commits; hotloop takes the tree\")))" commits.json &&
	(cd "$U" && git log -1 --format=%s $(jq -r .best_commit commits.json)) >subject &&
	! grep -q "the agent" subject && identical
'

agent lingers <<\EOA
#!/bin/sh
cat >/dev/null
setsid sh -c 'while :; do echo late >>"$0/spin.c"; echo late >>@U@/notes.txt; sleep 0.1; done' "$PWD" \
	</dev/null >/dev/null 2>&1 &
exec sleep 60
EOA
agent idle <<\EOA
#!/bin/sh
cat >/dev/null
EOA
test_expect_success 'kill -9 of the loop: its agent dies too, and the rerun gets a tree of its own' '
	(cd "$U" && exec "$HOTLOOP" loop --agent "$SCRATCH/agents/lingers") >/dev/null 2>&1 &
	pid=$! &&
	for i in $(seq 200); do pgrep -f "sleep 60" >/dev/null && break; sleep 0.1; done &&
	pgrep -f "sleep 60" >/dev/null && sleep 0.5 &&
	kill -9 $pid && wait $pid; sleep 0.5;
	! pgrep -f "sleep 60" && ! pgrep -f "while :; do echo late" &&
	loop idle && dropped idle diff "changed nothing" && identical
'

agent stops <<\EOA
#!/bin/sh
cat >/dev/null
# round numbers go on across loops: the second round is the one that finds its first keep
grep -q "n / 27" spin.c && exec sleep 60
sed -i 's/i < n[^;]*;/i < n \/ 27;/' spin.c
EOA
test_expect_code 130 'after SIGTERM the summary says what was kept and where the branch is' '
	(cd "$U" && exec "$HOTLOOP" loop --json --rounds 2 --agent "$SCRATCH/agents/stops") >stops.json 2>stops.err &
	pid=$! &&
	for i in $(seq 600); do pgrep -f "sleep 60" >/dev/null && break; sleep 0.1; done &&
	kill -TERM $pid; wait $pid; rc=$?
	branch=$(jq -r .branch stops.json) &&
	jq -e ".interrupted and .kept == 1 and .rounds == 2 and .best_commit != .start_commit and
		.stop_reason == \"interrupted\"" stops.json &&
	test "$(cd "$U" && git rev-parse $branch)" = "$(jq -r .best_commit stops.json)" &&
	identical || exit 99
	exit $rc
'

# --no-sandbox: nothing stops the agent; the integrity check names what it did
restore() { rm -rf "$U" && cp -a pristine "$U"; }
test_expect_code 1 'with --no-sandbox, a change to the user'"'"'s git state is caught and stops the loop' '
	test_when_finished restore &&
	loop git-state --no-sandbox; rc=$?
	dropped git-state integrity "the user.s repository changed while the agent ran" &&
	jq -e ".stop_reason == \"the user'"'"'s repository changed\" and (.integrity | test(\"HEAD was\"))" git-state.json &&
	expect_grep "the user.s repository changed while the agent ran" git-state.err &&
	expect_grep "HEAD was .ref: refs/heads/master\\|HEAD was .ref: refs/heads/main" git-state.err &&
	expect_grep "ref was: refs/heads/feature" git-state.err &&
	expect_grep "the stash changed" git-state.err &&
	expect_grep "index entry" git-state.err &&
	expect_grep "the loop.s branch hotloop/.* is at nothing" git-state.err || exit 99
	exit $rc
'
test_expect_code 1 'with --no-sandbox, writes outside the tree are caught and named' '
	test_when_finished restore &&
	loop write-outside --no-sandbox; rc=$?
	dropped write-outside integrity "the user.s repository changed" &&
	expect_grep "notes.txt: modified" write-outside.err &&
	expect_grep "Makefile: deleted" write-outside.err &&
	expect_grep "git directory: hooks/pre-commit: added" write-outside.err &&
	expect_grep "git directory: config: modified" write-outside.err || exit 99
	rm -f "$SCRATCH-evil"
	exit $rc
'

test_expect_success 'with --no-sandbox, what the agent leaves running is killed when it exits' '
	loop orphans --no-sandbox && dropped orphans test "tests failed" &&
	expect_grep "killed [0-9]* process.* the agent left running" orphans.err &&
	! pgrep -f "sleep 301[12]" && sleep 3 && identical
'

# The profile of the best runs outside the sandbox: a kept program that
# misbehaves there is caught by the integrity check, and its daemon killed.
agent runtime2 <<\EOA
#!/bin/sh
cat >/dev/null
grep -q "n / 5" spin.c && exit 0
sh "@S@/agents/runtime" </dev/null && sed -i "s|n / 3|n / 5|" spin.c
EOA
test_expect_code 1 'a kept program that writes outside when profiled stops the next round' '
	test_when_finished restore &&
	loop runtime2 --rounds 2; rc=$?
	jq -e ".kept == 1 and .stop_reason == \"the user'"'"'s repository changed\" and
		(.integrity | test(\"while the best so far was built, tested and profiled\"))" runtime2.json &&
	expect_grep "notes.txt: modified" runtime2.err &&
	expect_grep "killed [0-9]* process.* the best.s workload left running" runtime2.err &&
	! pgrep -f "sleep 3014" || exit 99
	exit $rc
'

test_expect_code 1 'no sandbox to be had: the loop refuses, and says how to go on' '
	nobwrap=$(path_without bwrap) &&
	(cd "$U" && PATH=$nobwrap "$HOTLOOP" loop --agent "$SCRATCH/agents/idle") 2>refused.err; rc=$?
	expect_grep "cannot run the agent in a sandbox: bubblewrap is not installed" refused.err &&
	expect_grep "pass --no-sandbox" refused.err && identical || exit 99
	exit $rc
'

test_done
