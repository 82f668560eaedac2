#!/bin/sh
# hotloop load at a rate any machine holds: the counts are exact (N at
# rate R for D seconds is R*D scheduled, sent, answered), the same seed
# gives the same Poisson schedule, the windows add up to the totals, the
# warmup is left out, and the JSON has its shape. HTTP (lengths and
# chunked replies), a request file, and the line protocol.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-load.sh"

test_expect_success 'constant rate: 200/s for 2 s is 400 sent, answered, ok' '
	loadsrv_start ok && test_when_finished loadsrv_stop &&
	hotloop load http://127.0.0.1:$PORT/ --rate 200 --duration 2s -c 4 --json >out.json &&
	jq -e ".total | .scheduled == 400 and .sent == 400 and .answered == 400 and .ok == 400 and .nr_errors == 0" out.json >/dev/null &&
	jq -e "([.windows[].sent] | add) == 400 and ([.windows[].answered] | add) == 400 and (.windows | length) >= 2" out.json >/dev/null &&
	jq -e ".total.latency | .count == 400 and .p50_ns > 0 and .p50_ns <= .p90_ns and .p90_ns <= .p99_ns and .p99_ns <= .p999_ns and .p999_ns <= .max_ns" out.json >/dev/null &&
	jq -e ".total.service.count == 400 and .total.service.p50_ns <= .total.latency.p50_ns" out.json >/dev/null &&
	loadsrv_stop && grep -qx "requests=400" srv.out
'

test_expect_success 'the JSON document has its keys and types' '
	loadsrv_start ok && test_when_finished loadsrv_stop &&
	hotloop load http://127.0.0.1:$PORT/x --rate 100 --duration 0.5s --window 250ms --json >out.json &&
	jq -e "(.target | type) == \"string\" and .protocol == \"http\" and .schedule == \"constant\" and .seed == null and
		.rate == 100 and .connections == 16 and .duration_s == 0.5 and .window_s == 0.25 and .timeout_s == 2 and
		(.elapsed_s | type) == \"number\" and .cancelled == false and
		(.windows[0] | (.start_s | type) == \"number\" and (.end_s | type) == \"number\" and (.warmup | type) == \"boolean\" and
			(.throughput | type) == \"number\" and (.latency.p99_ns | type) == \"number\" and
			(.errors | keys) == [\"closed\",\"http_4xx\",\"http_5xx\",\"malformed\",\"refused\",\"reset\",\"timeout\"]) and
		(.total.histogram | startswith(\"h1;\")) and (.total.throughput | type) == \"number\"" out.json >/dev/null
'

test_expect_success 'a warmup is sent but left out of the totals' '
	loadsrv_start ok && test_when_finished loadsrv_stop &&
	hotloop load http://127.0.0.1:$PORT/ --rate 200 --warmup 1s --duration 1s --json >out.json &&
	jq -e ".total.scheduled == 200 and .total.answered == 200 and .warmup_s == 1" out.json >/dev/null &&
	jq -e "([.windows[] | select(.warmup) | .sent] | add) == 200 and ([.windows[].sent] | add) == 400" out.json >/dev/null &&
	loadsrv_stop && grep -qx "requests=400" srv.out
'

test_expect_success 'poisson: the same seed, the same count; another seed, another schedule' '
	loadsrv_start ok && test_when_finished loadsrv_stop &&
	hotloop load http://127.0.0.1:$PORT/ --rate 300 --duration 1s --poisson --seed 7 --json >a.json &&
	hotloop load http://127.0.0.1:$PORT/ --rate 300 --duration 1s --poisson --seed 7 --json >b.json &&
	n=$(jq .total.scheduled a.json) && test "$n" = "$(jq .total.scheduled b.json)" &&
	jq -e ".schedule == \"poisson\" and .seed == 7 and .total.sent == .total.scheduled and .total.answered == .total.scheduled" a.json >/dev/null &&
	test "$n" -gt 240 && test "$n" -lt 360 &&
	for s in 1 2 3 4 5 6; do
		hotloop load http://127.0.0.1:$PORT/ --rate 300 --duration 1s --poisson --seed $s --json | jq .total.scheduled
	done >counts &&
	test "$(sort -u counts | wc -l)" -gt 1
'

test_expect_success 'a request file: its requests in turn, with their bodies' '
	loadsrv_start ok && test_when_finished loadsrv_stop &&
	printf "GET /a HTTP/1.1\nHost: x\n\nGET /b HTTP/1.1\nHost: x\n\n" >reqs.txt &&
	hotloop load http://127.0.0.1:$PORT/ --request reqs.txt --rate 100 --duration 1s --json >out.json &&
	jq -e ".total.answered == 100 and .total.ok == 100" out.json >/dev/null
'

test_expect_success 'the line protocol: a line out, a line back' '
	loadsrv_start line && test_when_finished loadsrv_stop &&
	hotloop load 127.0.0.1:$PORT --line "GET k" --rate 200 --duration 1s -c 2 --json >out.json &&
	jq -e ".protocol == \"line\" and .total.answered == 200 and .total.ok == 200 and .total.nr_errors == 0" out.json >/dev/null &&
	hotloop load tcp://127.0.0.1:$PORT --line "GET k" --rate 50 --duration 0.2s >out.txt &&
	grep -q "^requests: *10 scheduled, 10 sent .* 10 answered, 10 ok" out.txt
'

test_expect_success 'the text form: a row per window, then the summary' '
	loadsrv_start ok && test_when_finished loadsrv_stop &&
	hotloop load http://127.0.0.1:$PORT/ --rate 100 --duration 1s --window 0.5s --warmup 0.5s >out.txt &&
	head -1 out.txt | grep -q "^window .*sent .*answered .*p99.9 .*errors" &&
	grep -q "^0-0.5s\*" out.txt && grep -q "^0.5-1s " out.txt &&
	grep -q "after 0.5s of warmup" out.txt &&
	grep -q "^requests: *100 scheduled, 100 sent" out.txt &&
	grep -q "^latency: .*p99.9 .*(from the intended send time)" out.txt &&
	grep -q "^errors: *none" out.txt
'

test_done
