#!/bin/sh
# hotloop catalog check on files it cannot use: unparsable, huge, binary,
# symbolic-link loops, directories, unknown languages and missing files
# are noted and counted, and the other files are still checked; a file
# nested too deep is matched down to a depth, with a note.
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'bad files are noted, counted, and the good one checked' '
	cp "$DATA/catalog/strlen-in-loop-condition/bad.c" ok.c &&
	printf "int f( { for (;; strlen(s)) \n" >broken.c &&
	printf "int x;\0\1\2\n" >binary.c &&
	head -c 17000000 /dev/zero | tr "\0" " " >huge.c &&
	ln -s loop1.c loop2.c && ln -s loop2.c loop1.c &&
	mkdir dir.c && echo "x" >notes.txt &&
	{ hotloop catalog check broken.c binary.c huge.c loop1.c dir.c notes.txt missing.c ok.c >out 2>err; test $? -eq 4; } &&
	expect_grep "^ok.c:[0-9]*:[0-9]*: warning: .*strlen-in-loop-condition" out &&
	expect_grep "binary.c: skipped: a binary file" err &&
	expect_grep "huge.c: skipped: .* bytes, more than" err &&
	expect_grep "loop1.c: skipped: a loop of symbolic links" err &&
	expect_grep "dir.c: skipped: a directory" err &&
	expect_grep "notes.txt: skipped: not C or C++" err &&
	expect_grep "missing.c: skipped: No such file" err &&
	expect_grep "broken.c: syntax errors" err &&
	expect_grep "2 files checked, 6 skipped, 1 with syntax errors" err
'

test_expect_success 'the counts in JSON' '
	{ hotloop catalog check --format json broken.c binary.c ok.c >out.json 2>err; test $? -eq 4; } &&
	jq -e ".files == 2 and .skipped == 1 and .syntax_errors == 1 and (.notes | length) == 2" out.json
'

test_expect_success 'a file nested deeper than 1000 levels: matched above that, noted' '
	{ printf "void f(void) {\n\tfor (;;) p = malloc(1);\n" &&
	  i=0; while [ $i -lt 3000 ]; do printf "{"; i=$((i + 1)); done &&
	  printf "q = malloc(2);" &&
	  i=0; while [ $i -lt 3000 ]; do printf "}"; i=$((i + 1)); done && echo "}"; } >deep.c &&
	{ hotloop catalog check deep.c >out 2>err; test $? -eq 4; } &&
	expect_grep "^deep.c:2:.*malloc(1) in a loop" out &&
	expect_grep "deep.c: nests deeper than 1000 levels" err
'

test_expect_code 2 'no file is a usage error' 'hotloop catalog check'
test_expect_code 2 'an unknown subcommand is a usage error' 'hotloop catalog frob x.c'
test_expect_code 2 'a bad --severity is a usage error' 'hotloop catalog check --severity loud x.c'
test_expect_code 2 'a bad --format is a usage error' 'hotloop catalog check --format xml x.c'

test_done
