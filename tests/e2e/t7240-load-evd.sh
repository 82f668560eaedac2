#!/bin/sh
# The example service's HTTP front under hotloop load: each request is one
# event checked by the rules and answered with its verdict, so evd's own
# count of events equals the answers; a malformed event is a 400.
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'setup: evd built in a copy' '
	cp -r "$ROOT/examples/evd" evd && make -s -C evd clean all >build.log 2>&1
'

test_expect_success 'evd --http: 200/s for 2 s, 400 verdicts, 400 events in its metrics' '
	cd evd &&
	{ ./evd --port 0 --http 0 --config conf/default.conf >evd.out 2>evd.err & } &&
	pid=$! && test_when_finished "kill $pid" && i=0 &&
	while ! grep -q "^evd: listening" evd.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
	port=$(sed -n "s/^evd: http on 127\.0\.0\.1:\([0-9]*\)$/\1/p" evd.out) && test -n "$port" &&
	hotloop load http://127.0.0.1:$port/check -d "EV 1 1000 exec /tmp/x.sh" --rate 200 --duration 2s -c 4 --json >../ok.json &&
	jq -e ".total | .answered == 400 and .ok == 400 and .nr_errors == 0" ../ok.json >/dev/null &&
	hotloop load http://127.0.0.1:$port/check -d "not an event" --rate 50 --duration 1s --json >../bad.json &&
	jq -e ".total | .answered == 50 and .errors.http_4xx == 50" ../bad.json >/dev/null &&
	kill $pid && i=0 && while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
	grep -qx "HOTLOOP_METRIC events=400" evd.out && grep -qx "HOTLOOP_METRIC malformed=50" evd.out
'

test_done
