#!/bin/sh
# A server that never answers: every request is a timeout (those sent, and
# those that waited for a connection past their timeout unsent), and the
# command ends after the duration and one timeout, not when the server
# does. SIGTERM stops a long run at once with what it has.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-load.sh"

test_expect_success 'a server that never answers: timeouts, and the command ends' '
	loadsrv_start never && test_when_finished loadsrv_stop &&
	timeout 30 "$HOTLOOP" load http://127.0.0.1:$PORT/ --rate 100 --duration 1s --timeout 0.5s -c 4 --json >out.json &&
	jq -e ".total | .scheduled == 100 and .answered == 0 and .errors.timeout == 100 and .nr_errors == 100 and .sent >= 4 and .late > 0" out.json >/dev/null &&
	jq -e ".elapsed_s < 10" out.json >/dev/null
'

test_expect_success 'SIGTERM: exit 130, the windows so far and the summary' '
	loadsrv_start ok && test_when_finished loadsrv_stop &&
	{ "$HOTLOOP" load http://127.0.0.1:$PORT/ --rate 100 --duration 60s --json >out.json & } &&
	pid=$! && test_when_finished "kill $pid" &&
	sleep 1.5 && kill -TERM $pid; wait $pid; rc=$? &&
	test $rc -eq 130 &&
	jq -e ".cancelled == true and .total.answered > 0 and .total.scheduled == .total.answered + .total.nr_errors and .elapsed_s < 30" out.json >/dev/null
'

test_done
