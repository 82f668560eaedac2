#!/bin/sh
# hotloop catalog scan DIR...: every C and C++ file of a tree in name
# order, dot-directories left out, loops of symbolic links noted and not
# followed twice; the same findings as catalog check on the same files.
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'a tree: C and C++ files only, in name order, .git left out' '
	mkdir -p tree/b tree/a/deep tree/.git &&
	cp "$DATA/catalog/strlen-in-loop-condition/bad.c" tree/b/s.c &&
	cp "$DATA/catalog/endl-in-loop/bad.cc" tree/a/deep/e.cc &&
	cp "$DATA/catalog/strlen-in-loop-condition/bad.c" tree/.git/hidden.c &&
	echo "strlen" >tree/a/notes.txt &&
	ln -s .. tree/b/up &&
	{ hotloop catalog scan tree >out 2>err; test $? -eq 4; } &&
	sed "s/:.*//" out >files &&
	printf "tree/a/deep/e.cc\ntree/b/s.c\n" >expect &&
	cmp expect files &&
	expect_grep "tree/b/up: not entered: a directory already scanned" err
'

test_expect_success 'the same findings as check on the same files' '
	hotloop catalog check --format json tree/a/deep/e.cc tree/b/s.c | jq -c ".findings" >a &&
	hotloop catalog scan --format json tree | jq -c ".findings" >b &&
	cmp a b
'

test_expect_success 'a file among the directories, a missing one noted' '
	{ hotloop catalog scan --format json tree/b/s.c nothere >out.json 2>err; test $? -eq 4; } &&
	jq -e ".files == 1 and .skipped == 1" out.json &&
	expect_grep "nothere: skipped" err
'

test_expect_code 2 'no directory is a usage error' 'hotloop catalog scan'

test_done
