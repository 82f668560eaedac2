#!/bin/sh
# What goes wrong is counted by kind, never lost: answers with status 500
# and 404, connections closed before the reply, refused connections,
# replies that are not HTTP. Every scheduled request is accounted for.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-load.sh"

test_expect_success 'status 500 and 404: answered, counted as http_5xx and http_4xx' '
	loadsrv_start errors && test_when_finished loadsrv_stop &&
	hotloop load http://127.0.0.1:$PORT/ --rate 200 --duration 1s -c 1 --json >out.json &&
	jq -e ".total | .answered == 200 and .ok == 160 and .errors.http_5xx == 20 and .errors.http_4xx == 20 and .nr_errors == 40" out.json >/dev/null
'

test_expect_success 'connections closed unanswered: closed, then reopened' '
	loadsrv_start close && test_when_finished loadsrv_stop &&
	hotloop load http://127.0.0.1:$PORT/ --rate 200 --duration 1s -c 1 --json >out.json &&
	jq -e ".total | .sent == 200 and .answered == 160 and .errors.closed == 40 and .nr_errors == 40" out.json >/dev/null
'

test_expect_success 'nothing listens: every request refused, none sent' '
	loadsrv_start ok && port=$PORT && loadsrv_stop &&
	hotloop load http://127.0.0.1:$port/ --rate 100 --duration 1s --json >out.json &&
	jq -e ".total | .scheduled == 100 and .sent == 0 and .answered == 0 and .errors.refused == 100" out.json >/dev/null &&
	hotloop load http://127.0.0.1:$port/ --rate 20 --duration 0.5s >out.txt &&
	grep -q "^errors: *refused 10$" out.txt
'

test_expect_success 'a reply that is not HTTP: malformed' '
	loadsrv_start garbage && test_when_finished loadsrv_stop &&
	hotloop load http://127.0.0.1:$PORT/ --rate 100 --duration 1s -c 2 --json >out.json &&
	jq -e ".total | .sent == 100 and .answered == 0 and .errors.malformed == 100" out.json >/dev/null
'

test_done
