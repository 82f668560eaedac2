#!/bin/sh
# A server that stalls 200 ms once: the requests due during the stall wait
# (counted late) and their latency from the intended send time shows it in
# p90 and max, while the service time (what a closed loop measures, from
# the actual send) stays low at p90.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-load.sh"

test_expect_success 'a 200 ms stall is in p90 and max from the intended time, not in the service time' '
	loadsrv_start stall && test_when_finished loadsrv_stop &&
	hotloop load http://127.0.0.1:$PORT/ --rate 200 --duration 1s -c 2 --json >out.json &&
	jq -e ".total | .scheduled == 200 and .answered == 200 and .ok == 200 and .late >= 10" out.json >/dev/null &&
	jq -e ".total.latency.max_ns >= 200000000 and .total.latency.p90_ns >= 20000000" out.json >/dev/null &&
	jq -e ".total.service.p90_ns < .total.latency.p90_ns / 2" out.json >/dev/null &&
	jq -e "[.windows[] | select(.latency.max_ns >= 200000000)] | length == 1" out.json >/dev/null
'

test_done
