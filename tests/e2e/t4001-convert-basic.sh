#!/bin/sh
# hotloop convert: output format from the extension or --to, standard input
# and output, gzipped input, usage errors, and hostile input.
. "$(dirname "$0")/test-lib.sh"

in=$DATA/convert/kernel-and-inlined.in
want=$DATA/convert/kernel-and-inlined.out

test_expect_success 'the extension picks the format' '
	hotloop convert "$in" -o a.pb.gz &&
	hotloop convert "$in" -o a.pb &&
	hotloop convert "$in" -o a.pprof &&
	hotloop convert a.pb.gz -o a.folded &&
	hotloop convert a.pb -o a.txt &&
	cmp "$want" a.folded && cmp "$want" a.txt &&
	gzip -t a.pb.gz && gzip -t a.pprof
'

test_expect_success 'pprof output is a real pprof profile' '
	hotloop convert "$in" -o p.pb.gz &&
	zcat p.pb.gz > raw.pb &&
	hotloop convert raw.pb --to folded -o - > again.folded &&
	cmp "$want" again.folded
'

test_expect_success '--to overrides the extension; - is standard output' '
	hotloop convert "$in" --to folded -o out.pb.gz &&
	cmp "$want" out.pb.gz &&
	hotloop convert "$in" --to folded -o - > stdout.folded &&
	cmp "$want" stdout.folded
'

test_expect_success '- reads standard input, gzipped or not' '
	hotloop convert - -o s.folded < "$in" &&
	cmp "$want" s.folded &&
	gzip -c "$in" > in.folded.gz &&
	hotloop convert - -o z.folded < in.folded.gz &&
	cmp "$want" z.folded
'

test_expect_success 'the input format comes from the content, not the name' '
	cp "$in" looks-like.pb.gz &&
	hotloop convert looks-like.pb.gz -o n.folded &&
	cmp "$want" n.folded
'

test_expect_success '--weight names a sample type; period falls back to the last' '
	hotloop convert "$DATA/convert/two-columns.in" -o two.pb.gz &&
	hotloop convert two.pb.gz -o base.folded --weight base &&
	cmp "$DATA/convert/two-columns-base.out" base.folded &&
	hotloop convert two.pb.gz -o period.folded --weight period &&
	cmp "$DATA/convert/two-columns.out" period.folded
'

test_expect_code 1 'an unknown --weight lists the sample types' '
	hotloop convert "$in" -o x.folded --weight alloc_space 2>err; rc=$?
	expect_grep "no sample type .alloc_space. (it has: samples)" err || exit 99; exit $rc
'

test_expect_code 2 'an unknown extension asks for --to' '
	hotloop convert "$in" -o out.svg 2>err; rc=$?
	expect_grep "cannot tell the output format from .out.svg.: use --to pprof, folded or speedscope" err || exit 99
	exit $rc
'

test_expect_code 2 'an unknown format is a usage error' '
	hotloop convert "$in" -o x.json --to chrome 2>err; rc=$?
	expect_grep "unknown output format .chrome." err || exit 99; exit $rc
'

test_expect_code 2 'no output is a usage error' 'hotloop convert "$in"'
test_expect_code 2 'no input is a usage error' 'hotloop convert -o x.folded'
test_expect_code 2 'two inputs are a usage error' 'hotloop convert "$in" "$in" -o x.folded'
test_expect_code 2 '--weight with pprof output is a usage error' \
	'hotloop convert "$in" -o x.pb.gz --weight samples'
test_expect_code 2 'a missing option value is a usage error' 'hotloop convert "$in" -o x.folded --to'

test_expect_code 1 'a missing input fails' '
	hotloop convert nosuch.pb.gz -o x.folded 2>err; rc=$?
	expect_grep "cannot open .nosuch.pb.gz.: No such file or directory" err || exit 99; exit $rc
'

test_expect_code 1 'an empty input fails' '
	: > empty && hotloop convert empty -o x.folded 2>err; rc=$?
	expect_grep "cannot read .empty.: the file is empty" err || exit 99; exit $rc
'

test_expect_code 1 'binary garbage fails cleanly' '
	head -c 4096 /dev/urandom > garbage &&
	hotloop convert garbage -o x.folded 2>err; rc=$?
	expect_grep "cannot read .garbage." err && test ! -e x.folded || exit 99; exit $rc
'

test_expect_code 1 'a NUL byte in folded text fails with its line' '
	printf "main;a 1\nmain;b\0c 2\n" > nul.folded &&
	hotloop convert nul.folded -o x.pb.gz 2>err; rc=$?
	expect_grep "line 2: contains a NUL byte" err || exit 99; exit $rc
'

test_expect_code 1 'a huge line fails with its line' '
	{ echo "main 1"; head -c 5000000 /dev/zero | tr "\0" a; echo " 1"; } > huge.folded &&
	hotloop convert huge.folded -o x.pb.gz 2>err; rc=$?
	expect_grep "line 2: longer than 4194304 bytes" err || exit 99; exit $rc
'

test_expect_success 'a deep stack within the cap converts' '
	awk "BEGIN { s = \"f0\"; for (i = 1; i < 20000; i++) s = s \";f\" (i % 10); print s, 3 }" > deep.folded &&
	hotloop convert deep.folded -o deep.pb.gz &&
	hotloop convert deep.pb.gz -o deep2.folded &&
	cmp deep.folded deep2.folded
'

test_expect_code 1 'a stack deeper than the cap fails with its line' '
	awk "BEGIN { s = \"f\"; for (i = 0; i < 70000; i++) s = s \";f\"; print s, 3 }" > deeper.folded &&
	hotloop convert deeper.folded -o x.pb.gz 2>err; rc=$?
	expect_grep "line 1: stack deeper than 65536 frames" err || exit 99; exit $rc
'

test_expect_success 'a failed conversion leaves an existing output alone' '
	echo keep > out.folded &&
	! hotloop convert "$DATA/convert/negative-count.in" -o out.folded 2>/dev/null &&
	echo keep | cmp - out.folded &&
	test -z "$(ls | grep tmp)"
'

test_skip_unless GO 'go is not installed (go tool pprof reads our output)'

test_expect_success 'go tool pprof reads a profile made from folded stacks' '
	hotloop convert "$in" -o go.pb.gz &&
	HOME=$PWD GOFLAGS= go tool pprof -top go.pb.gz > top 2>&1 &&
	expect_grep "250 .* mix_step (inline)" top &&
	expect_grep "17 .* ksys_read$" top
'

test_done
