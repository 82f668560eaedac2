#!/bin/sh
# The hub: help and --help agree for every command, every command has a
# docs page, typos get a suggestion, usage errors exit 2.
. "$(dirname "$0")/test-lib.sh"

commands() { hotloop help | sed -n 's/^  \([a-z]*\) .*/\1/p'; }

test_expect_success 'the command list is not empty' '
	test "$(commands | wc -l)" -ge 5
'

test_expect_success 'help CMD equals CMD --help, and each has a docs page' '
	for c in $(commands); do
		hotloop help $c >a && hotloop $c --help >b && cmp a b &&
		grep -q "^usage: hotloop $c" a &&
		test -f "$ROOT/docs/$c.md" || { echo "command $c"; exit 1; }
	done
'

test_expect_success 'the bash completion knows every command and its long options' '
	comp="$ROOT/contrib/completion/hotloop.bash" &&
	for c in $(commands); do
		grep -q "commands=\".*\b$c\b" "$comp" || { echo "completion lacks $c"; exit 1; }
		for o in $(hotloop help $c | grep -o -- "--[a-z][a-z-]*" | sort -u); do
			grep -q "^	$c).*$o\b" "$comp" || { echo "completion lacks $c $o"; exit 1; }
		done
	done
'

test_expect_success '--version' '
	hotloop --version | grep -q "^hotloop [0-9]"
'

test_expect_success 'a typo gets the nearest command' '
	{ hotloop reprot 2>err; test $? -eq 2; } &&
	expect_grep "not a hotloop command" err && expect_grep "report" err
'

test_expect_code 2 'no command is a usage error' 'hotloop'
test_expect_code 2 'an unknown global option is a usage error' 'hotloop --frobnicate'

test_done
