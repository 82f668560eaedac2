#!/bin/sh
# hotloop catalog review: findings only on lines git's diff adds or changes
# (the work tree, or the index with --cached, against --base, the upstream's
# merge-base or HEAD), on names with spaces, quotes and newlines, renames,
# deleted and binary files; a non-git directory and a bad --base are errors.
. "$(dirname "$0")/test-lib.sh"

STRLEN="$DATA/catalog/strlen-in-loop-condition/bad.c"

Q="q\"u'o.c"
NL="new
line.c"
export Q NL
has_file() { jq -e --arg f "$1" "[.findings[].file] | any(. == \$f)" "$2" >/dev/null; }

g() { git -c user.email=t@example.com -c user.name=t "$@"; }

test_expect_success 'a repository with an old anti-pattern, committed' '
	g init -q repo && cd repo &&
	cp "$STRLEN" old.c &&
	printf "int g(int n)\n{\n\treturn n;\n}\n" >"a b.c" &&
	echo text >notes.txt && printf "x\0y" >blob.c &&
	g add . && g commit -qm one
'

test_expect_success 'nothing changed: no finding, though old.c has one' '
	(cd repo && hotloop catalog review >out 2>err) &&
	test ! -s repo/out
'

test_expect_success 'a new finding on a changed line of a spaced name; the old one is not reported' '
	cd repo &&
	printf "int g(const char *s)\n{\n\tint n = 0;\n\tfor (int i = 0; i < strlen(s); i++)\n\t\tn++;\n\treturn n;\n}\n" >"a b.c" &&
	echo "/* a comment */" >>old.c &&
	{ hotloop catalog review >out 2>err; test $? -eq 4; } &&
	expect_grep "^a b.c:4:[0-9]*: warning: .*strlen-in-loop-condition" out &&
	! grep -q "^old.c" out
'

test_expect_success 'names with quotes and newlines, renames, deletions, binary files' '
	cd repo &&
	printf "long q(const char *u)\n{\n\tlong k = 0;\n\tdo k++; while (k < strlen(u));\n\treturn k;\n}\n" >"$Q" && printf "int h(char *t)\n{\n\twhile (n < strlen(t)) n++;\n}\n" >"$NL" &&
	printf "\0\1\2" >bin.c && g add . &&
	g mv notes.txt moved.c && g mv old.c "ren ame.c" && g rm -q blob.c &&
	{ hotloop catalog review --format json >out.json 2>err; test $? -eq 4; } &&
	has_file "$Q" out.json && has_file "$NL" out.json && has_file "a b.c" out.json &&
	! has_file "ren ame.c" out.json && ! has_file bin.c out.json && ! has_file moved.c out.json &&
	jq -e ".base_from == \"head\" and .cached == false and (.changed_files | type) == \"number\"" out.json &&
	jq -e "(.base | test(\"^[0-9a-f]{40}\$\")) and .upstream == null" out.json
'

test_expect_success '--cached reviews the index, not the work tree' '
	cd repo && g commit -qm two &&
	cp "$STRLEN" staged.c && g add staged.c &&
	printf "int clean(void)\n{\n\treturn 0;\n}\n" >staged.c &&
	cp "$STRLEN" unstaged.c && g add -N unstaged.c 2>/dev/null; g reset -q unstaged.c &&
	{ hotloop catalog review --cached >out 2>err; test $? -eq 4; } &&
	expect_grep "^staged.c:" out &&
	! grep -q "^unstaged.c" out &&
	hotloop catalog review >out2 2>err2 &&
	test ! -s out2
'

test_expect_success '--base REV, and the severity' '
	cd repo && g add . && g commit -qm three &&
	hotloop catalog review >out 2>err && test ! -s out &&
	{ hotloop catalog review --base HEAD~2 >out 2>err; test $? -eq 4; } &&
	expect_grep "^a b.c:" out &&
	hotloop catalog review --base HEAD~2 --severity error >out 2>err &&
	expect_grep "^a b.c:" out
'

test_expect_success 'the default base: the merge-base with the upstream' '
	g clone -q repo clone && cd clone &&
	cp "$STRLEN" mine.c && g add mine.c && g commit -qm mine &&
	{ hotloop catalog review --format json >out.json 2>err; test $? -eq 4; } &&
	jq -e ".base_from == \"upstream\" and .upstream == \"origin/master\" or .upstream == \"origin/main\"" out.json &&
	jq -e "[.findings[].file] == [\"mine.c\"]" out.json
'

test_expect_success 'the first commit: against the empty tree' '
	g init -q fresh && cd fresh && cp "$STRLEN" a.c && g add a.c &&
	{ hotloop catalog review --cached --format json >out.json 2>err; test $? -eq 4; } &&
	jq -e ".base_from == \"empty\" and (.findings | length) >= 1" out.json
'

test_expect_code 1 'a directory that is not in a repository' '
	mkdir plain && cd plain &&
	GIT_CEILING_DIRECTORIES=$SCRATCH hotloop catalog review 2>err; rc=$?
	expect_grep "needs a git repository" err && exit $rc
'

test_expect_success 'a bad --base: a clear error, also in JSON' '
	cd repo &&
	{ hotloop catalog review --base no-such-rev 2>err; test $? -eq 1; } &&
	expect_grep "cannot resolve --base .no-such-rev." err &&
	{ hotloop catalog review --base --upload-pack=x --format json >out.json 2>err; test $? -eq 1; } &&
	jq -e ".error | test(\"invalid --base\")" out.json
'

test_expect_success 'review writes SARIF and GitHub annotations as scan does' '
	cd repo &&
	{ hotloop catalog review --base HEAD~2 --format sarif >out.sarif 2>err; test $? -eq 4; } &&
	jq -e ".version == \"2.1.0\" and ([.runs[0].results[].ruleId] | index(\"strlen-in-loop-condition\") != null)" out.sarif &&
	jq -e "[.runs[0].results[].locations[0].physicalLocation.artifactLocation.uri] | index(\"a%20b.c\") != null" out.sarif &&
	{ hotloop catalog review --base HEAD~2 --format github >out.gh 2>err; test $? -eq 4; } &&
	expect_grep "^::warning file=a b.c,line=4,.*::" out.gh
'

test_expect_code 2 'an unknown --format is a usage error' 'cd repo && hotloop catalog review --format xml'

test_expect_code 2 'a FILE is a usage error' 'cd repo && hotloop catalog review x.c'

test_done
