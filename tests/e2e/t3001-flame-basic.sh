#!/bin/sh
# hotloop flame: default file names, pprof and folded input, standard input
# and output, a self-contained document, and errors.
. "$(dirname "$0")/test-lib.sh"

cpu=$DATA/flame/cpu.folded

test_expect_success 'reads hotloop.pb.gz and writes flame.svg by default' '
	hotloop convert "$cpu" -o hotloop.pb.gz &&
	hotloop flame &&
	expect_grep "<title>hot_spin (90 samples, 90.00%)</title>" flame.svg &&
	expect_grep "hotloop.pb.gz: 100 samples" flame.svg
'

test_expect_success 'pprof and folded input draw the same frames' '
	hotloop flame hotloop.pb.gz -o from-pprof.svg &&
	hotloop flame "$cpu" -o from-folded.svg &&
	grep -o "<title>[^<]*</title><rect[^>]*" from-pprof.svg > a &&
	grep -o "<title>[^<]*</title><rect[^>]*" from-folded.svg > b &&
	test -s a && cmp a b
'

test_expect_success '-o - writes to standard output; - reads standard input' '
	hotloop flame - -o - < "$cpu" > out.svg &&
	expect_grep "<title>hot_spin (90 samples" out.svg &&
	expect_grep "stdin: 100 samples" out.svg &&
	gzip -c "$cpu" | hotloop flame - -o gz.svg &&
	expect_grep "<title>hot_spin (90 samples" gz.svg
'

test_expect_success 'the document is self-contained' '
	hotloop flame "$cpu" -o self.svg &&
	grep -o "https\{0,1\}://[^\"'"'"' )]*" self.svg | sort -u > urls &&
	echo "http://www.w3.org/2000/svg" > want &&
	cmp want urls &&
	expect_grep "<script type=\"text/ecmascript\"><!\[CDATA\[" self.svg &&
	expect_grep "function zoom(" self.svg &&
	expect_grep "function search(" self.svg &&
	! grep -q "<script[^>]*src=" self.svg &&
	! grep -q "<image" self.svg
'

test_expect_success 'the image grows with the depth of the stacks' '
	awk "BEGIN { s = \"f0\"; for (i = 1; i < 300; i++) s = s \";f\" i; print s, 5 }" > deep.folded &&
	hotloop flame deep.folded -o deep.svg &&
	expect_grep "<svg version=\"1.1\" width=\"1200\" height=\"4920\"" deep.svg &&
	expect_grep "<title>f299 (5 samples, 100.00%)</title>" deep.svg
'

test_expect_success 'the output is replaced atomically' '
	echo old > atomic.svg &&
	hotloop flame "$cpu" -o atomic.svg &&
	expect_grep "</svg>" atomic.svg &&
	test -z "$(ls | grep "\.tmp\.")"
'

test_expect_code 1 'a missing profile fails with its name' '
	hotloop flame nosuch.pb.gz -o x.svg 2>err; rc=$?
	expect_grep "cannot open .nosuch.pb.gz.: No such file or directory" err &&
	test ! -e x.svg || exit 99; exit $rc
'

test_expect_code 1 'a missing default profile fails with its name' '
	mkdir empty-dir && cd empty-dir &&
	hotloop flame 2>err; rc=$?
	expect_grep "cannot open .hotloop.pb.gz." err || exit 99; exit $rc
'

test_expect_code 1 'a profile without samples draws nothing' '
	printf "\n\n" > blank.folded &&
	hotloop flame blank.folded -o x.svg 2>err; rc=$?
	expect_grep "nothing to draw: .blank.folded. has no samples" err &&
	test ! -e x.svg || exit 99; exit $rc
'

test_expect_code 1 'an unknown sample type lists the choices' '
	hotloop flame "$cpu" -o x.svg --sample-type cpu 2>err; rc=$?
	expect_grep "no sample type .cpu. (it has: samples)" err || exit 99; exit $rc
'

test_expect_code 1 'a missing base fails with its name' '
	hotloop flame "$cpu" -o x.svg --diff nosuch.folded 2>err; rc=$?
	expect_grep "cannot open .nosuch.folded." err || exit 99; exit $rc
'

test_expect_code 2 'an unknown option is a usage error' 'hotloop flame --bogus'
test_expect_code 2 'two profiles are a usage error' 'hotloop flame "$cpu" "$cpu"'
test_expect_code 2 'a bad --width is a usage error' 'hotloop flame "$cpu" --width 10'
test_expect_code 2 'a bad --min-width is a usage error' 'hotloop flame "$cpu" --min-width 5px'
test_expect_code 2 'a percentage above 100 is a usage error' 'hotloop flame "$cpu" --min-width 101%'
test_expect_code 2 'a missing value is a usage error' 'hotloop flame "$cpu" --title'

test_expect_success '--help prints the usage' '
	hotloop flame --help > help &&
	expect_grep "usage: hotloop flame \[FILE\]" help &&
	expect_grep "\-\-diff BASE" help &&
	expect_grep "\-\-reverse" help
'

test_done
