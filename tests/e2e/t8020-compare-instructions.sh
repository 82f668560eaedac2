#!/bin/sh
# compare --metric instructions: one callgrind run per side plus a
# confirming repeat; the same command counts the same instructions.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless VALGRIND 'valgrind is not installed'

test_expect_success 'A/A counts identical instructions: exact, change 0, not kept' '
	{ hotloop compare --max-wait 0 --metric instructions --json \
		"$WORKLOADS/fixedwork 2" "$WORKLOADS/fixedwork 2" >out.json; test $? -eq 4; } &&
	jq -e ".primary.metric == \"instructions\" and .primary.exact == true" out.json &&
	jq -e ".primary.change_pct == 0 and .pairs == 2 and .verdict == \"reject\"" out.json
'

test_expect_success 'half the work counts about half the instructions and is kept' '
	hotloop compare --max-wait 0 --metric instructions --json \
		"$WORKLOADS/fixedwork 4" "$WORKLOADS/fixedwork 2" >out.json &&
	jq -e ".verdict == \"keep\" and .primary.exact == true and .primary.change_pct < -30" out.json
'

test_done
