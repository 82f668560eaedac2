#!/bin/sh
# A project's own catalog: --catalog DIR and ./catalog/ read with the
# shipped one (an id replaces the shipped entry), --no-default; malformed
# entries are an error naming the file and the field, and exit 1.
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'a project catalog of its own' '
	mkdir mine && cat >mine/qsort-in-loop.json <<-\EOF &&
	{ "id": "qsort-in-loop", "languages": ["c"], "message": "qsort per iteration",
	  "severity": "error",
	  "rule": { "pattern": "qsort($$$)", "inside": { "kind": "for_statement", "stopBy": "end" } } }
	EOF
	printf "void f(void)\n{\n\tfor (;;)\n\t\tqsort(a, n, 4, cmp);\n}\n" >q.c &&
	{ hotloop catalog check --no-default --catalog mine q.c >out; test $? -eq 4; } &&
	expect_grep "^q.c:4:3: error: qsort per iteration \[qsort-in-loop\]" out &&
	mkdir catalog && cp mine/*.json catalog/ &&
	{ hotloop catalog check q.c >out; test $? -eq 4; } &&
	expect_grep "qsort-in-loop" out
'

test_expect_success 'an entry with the same id replaces the shipped one' '
	sed "s/\"warning\"/\"hint\"/" "$ROOT/catalog/strlen-in-loop-condition.json" >catalog/strlen-in-loop-condition.json &&
	hotloop catalog check "$DATA/catalog/strlen-in-loop-condition/bad.c" >out &&
	expect_grep ": hint: strlen" out
'

bad_entry() {	# bad_entry FIELD JSON-RULE: the error names the file and FIELD
	rm -rf bad && mkdir bad && printf "%s\n" "$2" >bad/x.json &&
	{ hotloop catalog check --no-default --catalog bad q.c >out 2>err; test $? -eq 1; } &&
	expect_grep "bad/x.json: field .$1.: " err
}

test_expect_success 'malformed entries name the file and the field' '
	R="\"id\": \"x\", \"languages\": [\"c\"], \"message\": \"m\"" &&
	bad_entry rule "{ $R, \"rule\": {} }" &&
	bad_entry rule.kind "{ $R, \"rule\": { \"kind\": 3 } }" &&
	bad_entry rule.frob "{ $R, \"rule\": { \"frob\": 1 } }" &&
	bad_entry rule.regex "{ $R, \"rule\": { \"regex\": \"(\" } }" &&
	bad_entry rule.pattern "{ $R, \"rule\": { \"pattern\": \"for (((\" } }" &&
	bad_entry rule.has.stopBy "{ $R, \"rule\": { \"has\": { \"kind\": \"x\", \"stopBy\": \"far\" } } }" &&
	bad_entry rule.follows.field "{ $R, \"rule\": { \"follows\": { \"kind\": \"x\", \"field\": \"body\" } } }" &&
	bad_entry "rule.all\[1\].not.kind" "{ $R, \"rule\": { \"all\": [ { \"kind\": \"a\" }, { \"not\": { \"kind\": \"\" } } ] } }" &&
	bad_entry rule.any "{ $R, \"rule\": { \"any\": [] } }" &&
	bad_entry "languages\[0\]" "{ \"id\": \"x\", \"languages\": [\"go\"], \"message\": \"m\", \"rule\": { \"kind\": \"a\" } }" &&
	bad_entry severity "{ $R, \"severity\": \"loud\", \"rule\": { \"kind\": \"a\" } }" &&
	bad_entry confidence "{ $R, \"confidence\": 2, \"rule\": { \"kind\": \"a\" } }" &&
	bad_entry id "{ \"id\": \"Bad Id\", \"languages\": [\"c\"], \"message\": \"m\", \"rule\": { \"kind\": \"a\" } }" &&
	bad_entry confirmed.kb "{ $R, \"confirmed\": { \"kb\": \"one\" }, \"rule\": { \"kind\": \"a\" } }" &&
	bad_entry anti_pattern "{ $R, \"anti_pattern\": 5, \"rule\": { \"kind\": \"a\" } }"
'

test_expect_success 'a missing field and bad JSON are named too' '
	rm -rf bad && mkdir bad && echo "{ \"id\": \"x\" }" >bad/x.json &&
	{ hotloop catalog check --no-default --catalog bad q.c 2>err; test $? -eq 1; } &&
	expect_grep "bad/x.json: field .message. is missing" err &&
	echo "{ \"id\": " >bad/x.json &&
	{ hotloop catalog check --no-default --catalog bad q.c 2>err; test $? -eq 1; } &&
	expect_grep "bad/x.json:[0-9]*:[0-9]*: not valid JSON" err
'

test_done
