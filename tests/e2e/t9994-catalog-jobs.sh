#!/bin/sh
# hotloop catalog scan -j N: many files at once, the same output (text,
# JSON, notes) whatever the number of threads.
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'setup: a tree of many files, some skipped or broken' '
	for i in 1 2 3 4 5 6; do
		mkdir -p tree/t$i && cp -r "$DATA/catalog" tree/t$i/data &&
		cp "$ROOT"/lib/catalog-*.c tree/t$i/ || exit 1
	done &&
	printf "int f(void) { for (;;) { strlen(\\0" >tree/t3/bin.c &&
	printf "void g(void) { while (strlen(s) { }\\n" >tree/t5/broken.c
'

test_expect_success '-j1 and -j4 give the same text, notes and JSON' '
	{ hotloop catalog scan -j1 --severity error tree >one.out 2>one.err; test $? -eq 0; } &&
	hotloop catalog scan -j 4 --severity error tree >four.out 2>four.err &&
	cmp one.out four.out && cmp one.err four.err &&
	test $(wc -l <one.out) -gt 50 &&
	expect_grep "bin.c: skipped: a binary file" one.err &&
	expect_grep "broken.c: syntax errors" one.err &&
	hotloop catalog scan -j1 --severity error --format json tree >one.json 2>/dev/null &&
	hotloop catalog scan --jobs 4 --severity error --format json tree >four.json 2>/dev/null &&
	cmp one.json four.json &&
	jq -e ".files > 100 and .skipped == 1 and .syntax_errors >= 1" one.json
'

test_expect_success 'the default (one per CPU) gives the same as -j1' '
	hotloop catalog scan --severity error tree >def.out 2>/dev/null &&
	cmp one.out def.out
'

test_expect_code 2 'a bad -j is a usage error' '
	hotloop catalog scan -j 0 tree 2>err; rc=$?
	expect_grep "invalid -j .0.: give 1 to 256 threads" err || exit 99; exit $rc
'

test_done
