#!/bin/sh
# hotloop catalog add --from-kb: a kept attempt of a real loop (an agent
# hoisting strlen() out of a loop's condition) drafted into a catalog entry
# the rule reader accepts, whose pattern finds the code before the change
# and not the code after; a second confirmation raises its confidence. The
# loop's prompt names the catalog's match in the hot function it shows.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-loop.sh"

command -v git >/dev/null || skip_all="needs git"
test_have_prereq SANDBOX || skip_all="no sandbox can be made here (bubblewrap, user and PID namespaces)"

test_expect_success 'setup: a project whose hot function has strlen in its loop condition' '
	mkdir proj && cd proj &&
	cat >hot.c <<-\EOC &&
	/* hot N: counts the commas of a long line N thousand times */
	#include <stdio.h>
	#include <stdlib.h>
	#include <string.h>
	static char line[4001];
	__attribute__((noinline)) unsigned long count(const char *s, unsigned long reps)
	{
		unsigned long n = 0;
		for (unsigned long r = 0; r < reps; r++)
			for (size_t i = 0; i < strlen(s); i++)
				n += s[i] == 44;
		return n;
	}
	int main(int argc, char **argv)
	{
		unsigned long reps = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
		memset(line, 97, 4000);
		printf("done %lu\n", count(line, reps) / 1000);
		return 0;
	}
	EOC
	printf "hot: hot.c\n\tcc -O0 -g -fno-omit-frame-pointer -o hot hot.c\n" >Makefile &&
	mkdir tests && printf "#!/bin/sh\n./hot 1 | grep -q \"^done 0\$\"\n" >tests/run && chmod +x tests/run &&
	printf "hot\n" >.gitignore &&
	cat >hotloop.conf <<-\EOC &&
	[project]
		build = make -s
		owned = .
		protected = tests hotloop.conf Makefile
	[gate]
		test = tests/run
	[improve]
		min-improvement = 10%
		rounds = 1
	[agent]
		timeout = 10s
	[workload "main"]
		run = ./hot 300
		primary = yes
	EOC
	git init -q && git add . && git -c user.name=t -c user.email=t@t commit -q -m base &&
	mkdir ../agents && cat >../agents/hoist <<-\EOA &&
	#!/bin/sh
	grep -q "strlen-in-loop-condition" "$HOTLOOP_PROMPT" || { echo "no catalog match in the prompt"; exit 3; }
	sed -i "s/i < strlen(s)/s[i]/" hot.c
	echo "{\"function\": \"count\", \"title\": \"strlen out of the loop condition\", \"hypothesis\": \"strlen walks the line on every iteration\", \"expected_gain_pct\": 90}" >"$HOTLOOP_PROPOSAL"
	EOA
	chmod +x ../agents/hoist
'

test_expect_success 'a loop keeps the change and writes it up' '
	(cd proj && hotloop loop --json --agent "$SCRATCH/agents/hoist") >loop.json 2>loop.err ||
		{ tail -20 loop.err; exit 1; }
	jq -e ".kept == 1" loop.json >/dev/null || { jq . loop.json; tail -20 loop.err; exit 1; }
	grep -l "^- verdict: keep" proj/kb/*/report.md >kept && test -s kept
'

test_expect_success 'the prompt lists the catalog match in the hot function, in short' '
	prompt=$(ls proj/.hotloop/loop/*/round-*/*/prompt.md | head -1) && test -s "$prompt" &&
	expect_grep "^## Catalog matches in the code shown" "$prompt" &&
	expect_grep "^- .count., line 10: .strlen-in-loop-condition.: strlen(s) in a loop condition.*; instead: .size_t len = strlen(s);.$" "$prompt" &&
	sed -n "/^## Catalog matches/,/^#/p" "$prompt" >section && test $(wc -c <section) -lt 2000
'

test_expect_success 'catalog add --from-kb drafts an entry the reader accepts' '
	slug=$(basename $(dirname $(cat kept))) &&
	(cd proj && hotloop catalog add --from-kb "$slug") >out &&
	expect_grep "catalog/strlen-out-of-the-loop-condition.json: drafted from $slug" out &&
	f=proj/catalog/strlen-out-of-the-loop-condition.json &&
	jq -e ".id == \"strlen-out-of-the-loop-condition\" and .severity == \"hint\" and .confidence == 0.3" $f &&
	jq -e --arg s "$slug" ".confirmed.kb == [\$s] and .confirmed.repositories == [\"proj\"]" $f &&
	jq -e ".rule.pattern == \"i < strlen(s)\" and (.message | test(\"^draft from kb .*refine the rule\"))" $f &&
	jq -e "(.anti_pattern | any(test(\"i < strlen\"))) and (.good_pattern | any(test(\"s\\\\[i\\\\];\")))" $f &&
	jq -e ".hint | test(\"strlen walks the line\")" $f &&
	jq -e ".symbols == [\"count\"] and .languages == [\"c\"]" $f
'

test_expect_success 'the drafted rule finds the old code, not the new' '
	cd proj &&
	commit=$(jq -r ".attempts[] | select(.verdict == \"keep\") | .commit" ../loop.json) &&
	git show HEAD:hot.c >old.c && git show "$commit:hot.c" >new.c &&
	{ hotloop catalog check --no-default --catalog catalog --severity hint old.c >out; test $? -eq 4; } &&
	expect_grep "^old.c:10:.*\[strlen-out-of-the-loop-condition\]" out &&
	hotloop catalog check --no-default --catalog catalog --severity hint new.c >out &&
	test ! -s out
'

test_expect_success 'a confirmation raises the confidence; the same one again does not' '
	cd proj && f=catalog/strlen-out-of-the-loop-condition.json &&
	slug=$(basename $(dirname $(cat ../kept))) &&
	jq ".confirmed.kb = [\"other-01012026\"] | .confidence = 0.3" $f >x && mv x $f &&
	hotloop catalog add --from-kb "$slug" >out &&
	expect_grep "confirmed by $slug (proj); confidence now 0.48" out &&
	jq -e --arg s "$slug" ".confidence == 0.48 and .confirmed.kb == [\"other-01012026\", \$s]" $f &&
	hotloop catalog add --from-kb "$slug" >out &&
	expect_grep "already confirmed" out && jq -e ".confidence == 0.48" $f &&
	hotloop catalog check --no-default --catalog catalog old.c >/dev/null
'

test_expect_success 'an attempt that is not there, or not kept: clear errors' '
	cd proj &&
	{ hotloop catalog add --from-kb no-such-attempt 2>err; test $? -eq 1; } &&
	expect_grep "no attempt .no-such-attempt. in the knowledge base" err &&
	d=kb/a-rejected-one-01012026 && mkdir $d &&
	printf "# a rejected one\n\n- function: count\n- verdict: reject\n\n## What\n\nx\n" >$d/report.md &&
	{ hotloop catalog add --from-kb a-rejected-one 2>err; test $? -eq 1; } &&
	expect_grep "was not kept (reject)" err
'

test_expect_code 2 'no --from-kb is a usage error' 'hotloop catalog add'

test_done
