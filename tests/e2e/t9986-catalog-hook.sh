#!/bin/sh
# hotloop catalog hook: a pre-commit hook reviewing the staged content. A
# staged anti-pattern stops `git commit`, a clean change passes, a hook
# already there is chained (run first) and put back by remove, and
# core.hooksPath is where the hook goes.
. "$(dirname "$0")/test-lib.sh"

STRLEN="$DATA/catalog/strlen-in-loop-condition/bad.c"

g() { git -c user.email=t@example.com -c user.name=t "$@"; }

test_expect_success 'install in a repository with no hook' '
	g init -q repo && cd repo &&
	echo "int x;" >base.c && g add base.c && g commit -qm base &&
	hotloop catalog hook status >st && expect_grep "^no pre-commit hook" st &&
	hotloop catalog hook install >out && expect_grep "installed .*/.git/hooks/pre-commit" out &&
	test -x .git/hooks/pre-commit &&
	hotloop catalog hook status >st && expect_grep "^hotloop.s pre-commit hook" st
'

test_expect_success 'a staged anti-pattern stops git commit; HEAD stays' '
	cd repo && head=$(git rev-parse HEAD) &&
	cp "$STRLEN" bad.c && g add bad.c &&
	! g commit -qm bad >out 2>&1 &&
	expect_grep "^bad.c:4:.*strlen-in-loop-condition" out &&
	test "$(git rev-parse HEAD)" = "$head"
'

test_expect_success 'the staged content counts, not the work tree' '
	cd repo && g reset -q &&
	printf "int ok(void)\n{\n\treturn 1;\n}\n" >bad.c && g add bad.c &&
	cp "$STRLEN" bad.c &&
	g commit -qm clean >out 2>&1 &&
	git checkout -q bad.c && g add bad.c && ! g commit -qm bad2 >out 2>&1 &&
	g reset -q && rm bad.c
'

test_expect_success 'a clean change passes, and below the severity passes' '
	cd repo &&
	echo "int y;" >clean.c && g add clean.c && g commit -qm clean2 &&
	hotloop catalog hook install --severity error >out &&
	cp "$STRLEN" warn.c && g add warn.c && g commit -qm warn >out 2>&1 &&
	expect_grep "^warn.c:" out &&
	hotloop catalog hook install >out
'

test_expect_success 'remove: no hook again' '
	cd repo && hotloop catalog hook remove >out &&
	expect_grep "^removed" out && test ! -e .git/hooks/pre-commit &&
	hotloop catalog hook remove >out && expect_grep "nothing to remove" out
'

test_expect_success 'a hook already there is chained, run first, and put back by remove' '
	cd repo &&
	printf "#!/bin/sh\necho theirs ran >>\"\$(git rev-parse --git-dir)/theirs.log\"\ntest ! -e stop-theirs\n" >.git/hooks/pre-commit &&
	chmod +x .git/hooks/pre-commit && cp .git/hooks/pre-commit theirs.orig &&
	hotloop catalog hook install >out &&
	expect_grep "the hook that was there runs first" out &&
	cmp theirs.orig .git/hooks/pre-commit.hotloop-chained &&
	echo "int z;" >z.c && g add z.c && g commit -qm z &&
	expect_grep "theirs ran" .git/theirs.log &&
	touch stop-theirs && echo "int w;" >w.c && g add w.c && ! g commit -qm w 2>/dev/null &&
	rm stop-theirs && g reset -q && rm w.c &&
	cp "$STRLEN" bad.c && g add bad.c && ! g commit -qm bad 2>/dev/null && g reset -q && rm bad.c &&
	hotloop catalog hook install --severity error >/dev/null &&
	cmp theirs.orig .git/hooks/pre-commit.hotloop-chained &&
	hotloop catalog hook remove >out && expect_grep "the one before is back" out &&
	cmp theirs.orig .git/hooks/pre-commit && test ! -e .git/hooks/pre-commit.hotloop-chained
'

test_expect_success 'a foreign hook with the chained name taken: refused, nothing changed' '
	cd repo && echo other >.git/hooks/pre-commit.hotloop-chained &&
	{ hotloop catalog hook install 2>err; test $? -eq 1; } &&
	expect_grep "is not hotloop.s hook, and .* is taken" err &&
	cmp theirs.orig .git/hooks/pre-commit &&
	{ hotloop catalog hook remove 2>err; test $? -eq 1; } &&
	expect_grep "is not hotloop.s hook: left as it is" err &&
	cmp theirs.orig .git/hooks/pre-commit &&
	rm .git/hooks/pre-commit.hotloop-chained .git/hooks/pre-commit
'

test_expect_success 'core.hooksPath: the hook goes there' '
	cd repo && git config core.hooksPath "my hooks" &&
	hotloop catalog hook install >out &&
	test -x "my hooks/pre-commit" && test ! -e .git/hooks/pre-commit &&
	cp "$STRLEN" bad.c && g add bad.c && ! g commit -qm bad 2>/dev/null &&
	hotloop catalog hook remove >/dev/null && test ! -e "my hooks/pre-commit" &&
	g commit -qm bad-but-no-hook
'

test_expect_code 1 'outside a repository' 'mkdir plain && cd plain && GIT_CEILING_DIRECTORIES=$SCRATCH hotloop catalog hook status'
test_expect_code 2 'an unknown action' 'hotloop catalog hook frob'
test_expect_code 2 'no action' 'hotloop catalog hook'

test_done
