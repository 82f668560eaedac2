#!/bin/sh
# hotloop catalog check on the starter catalog's own examples: every entry
# has examples under tests/data/catalog/<id>/, finds its bad ones and
# none of its good ones.
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'the shipped catalog has at least 12 entries, each with examples' '
	n=0 &&
	for e in "$ROOT"/catalog/*.json; do
		id=$(basename "$e" .json) && n=$((n + 1)) &&
		ls "$DATA/catalog/$id"/bad.* "$DATA/catalog/$id"/good.* >/dev/null ||
			{ echo "no examples for $id"; exit 1; }
	done &&
	test $n -ge 12
'

test_expect_success 'every entry finds its bad examples and none of its good ones' '
	for d in "$DATA"/catalog/*/; do
		id=$(basename "$d") &&
		for f in "$d"bad* "$d"good*; do
			{ hotloop catalog check --severity error --format json "$f" >out.json; test $? -eq 0 -o $? -eq 4; } &&
			n=$(jq --arg id "$id" "[.findings[] | select(.rule == \$id)] | length" out.json) &&
			case "$f" in
			*/bad*) test "$n" -ge 1 || { echo "$id does not find $f"; exit 1; } ;;
			*) test "$n" -eq 0 || { echo "$id finds $f"; cat out.json; exit 1; } ;;
			esac
		done
	done
'

test_expect_success 'the text form: FILE:LINE:COL: severity: message [id]' '
	{ hotloop catalog check "$DATA/catalog/strlen-in-loop-condition/bad.c" >out; test $? -eq 4; } &&
	expect_grep "^$DATA/catalog/strlen-in-loop-condition/bad.c:[0-9]*:[0-9]*: warning: strlen(s) in a loop condition" out &&
	expect_grep "\[strlen-in-loop-condition\]$" out
'

test_done
