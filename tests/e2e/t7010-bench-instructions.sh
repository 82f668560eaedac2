#!/bin/sh
# bench --metric instructions: callgrind under setarch -R counts the same
# instructions for identical runs.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless VALGRIND 'valgrind is not installed'

test_expect_success 'identical runs count identical instructions' '
	hotloop bench --max-wait 0 -n 2 -w 0 --metric instructions --json -- "$WORKLOADS/allocmib" 1 >out.json &&
	jq -e ".metric == \"instructions\"" out.json &&
	jq -e "[.runs[].instructions] | (.[0] > 100000) and (.[0] == .[1])" out.json &&
	jq -e ".summary.metric.cv == 0" out.json &&
	jq -e ".runs[0].fingerprints | length == 1" out.json
'

test_done
