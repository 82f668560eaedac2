#!/bin/sh
# hotloop catalog check --format json: the document's keys and types, the
# captured metavariables; exit 4 only for findings at or above --severity.
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'the JSON document' '
	{ hotloop catalog check --format json "$DATA/catalog/strlen-in-loop-condition/bad.c" >out.json; test $? -eq 4; } &&
	jq -e "(.findings | type) == \"array\" and (.files == 1) and (.lines | type) == \"number\" and
	       .skipped == 0 and .syntax_errors == 0 and (.notes == []) and .severity == \"warning\" and
	       .entries >= 12" out.json &&
	jq -e ".findings[0] | (keys == [\"captures\", \"column\", \"confidence\", \"end_column\", \"end_line\",
	       \"file\", \"function\", \"line\", \"message\", \"rule\", \"severity\"]) and .rule == \"strlen-in-loop-condition\" and
	       .captures.S == \"s\" and (.line | type) == \"number\" and .end_line >= .line" out.json
'

test_expect_success 'exit 4 at or above --severity, 0 below it and when clean' '
	f="$DATA/catalog/print-per-item/bad.c" &&
	{ hotloop catalog check "$f" >out; test $? -eq 0; } &&
	expect_grep ": info: printf() per item" out &&
	{ hotloop catalog check --severity info "$f" >/dev/null; test $? -eq 4; } &&
	{ hotloop catalog check --severity error "$DATA/catalog/strlen-in-loop-condition/bad.c" >/dev/null; test $? -eq 0; } &&
	hotloop catalog check "$DATA/catalog/strlen-in-loop-condition/good.c" >out &&
	test ! -s out
'

test_expect_success 'an error under --format json is {"error": ...} on stdout' '
	mkdir bad &&
	echo "{ \"id\": 1, \"languages\": [\"c\"], \"message\": \"m\", \"rule\": { \"kind\": \"a\" } }" >bad/x.json &&
	{ hotloop catalog check --no-default --catalog bad --format json x.c >out.json 2>err; test $? -eq 1; } &&
	jq -e ".error | test(\"bad/x.json: field .id.: must be a string\")" out.json
'

test_done
