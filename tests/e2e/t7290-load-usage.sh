#!/bin/sh
# hotloop load refuses what it cannot do with a clear message and exit 2
# (1 for a request file that is not requests), before it sends anything;
# under --json the error is a JSON document.
. "$(dirname "$0")/test-lib.sh"

while read -r want args; do
	test_expect_code 2 "usage: $args" '
		hotloop load '"$args"' 2>err.txt; rc=$?
		grep -q -e "'"$want"'" err.txt || { cat err.txt; exit 99; }
		exit $rc
	'
done <<'EOF_CASES'
expected.the.URL --rate 10
--rate.is.required http://127.0.0.1:9/
https.is.not.supported https://127.0.0.1:9/ --rate 10
a.port.is.a.number http://127.0.0.1:0/ --rate 10
a.port.is.a.number http://127.0.0.1:70000/ --rate 10
no.host http:///x --rate 10
needs.a.port 127.0.0.1 --rate 10 --line x
give.the.line.to.send 127.0.0.1:9 --rate 10
--line.is.for.a.tcp.target http://127.0.0.1:9/ --rate 10 --line x
without.a.path tcp://127.0.0.1:9/x --rate 10 --line x
cannot.resolve http://no-such-host.invalid/ --rate 10
invalid.value.'0'.for.--rate http://127.0.0.1:9/ --rate 0
invalid.value.'fast'.for.--rate http://127.0.0.1:9/ --rate fast
invalid.value.'5x'.for.--duration http://127.0.0.1:9/ --rate 10 --duration 5x
--duration.must.be.more.than.0 http://127.0.0.1:9/ --rate 10 --duration 0
--window.is.10ms.or.more http://127.0.0.1:9/ --rate 10 --window 1ms
--connections http://127.0.0.1:9/ --rate 10 -c 0
--seed.is.the.seed.of.--poisson http://127.0.0.1:9/ --rate 10 --seed 3
invalid.header http://127.0.0.1:9/ --rate 10 -H nocolon
exclude.each.other http://127.0.0.1:9/ --rate 10 --request f -X POST
unknown.option http://127.0.0.1:9/ --rate 10 --bogus
unexpected.argument http://127.0.0.1:9/ extra --rate 10
EOF_CASES

test_expect_code 1 'a request file that is not requests: exit 1, named' '
	printf "GET /\n\n" >bad.txt &&
	hotloop load http://127.0.0.1:9/ --rate 10 --request bad.txt 2>err.txt; rc=$?
	grep -q "request 1: expected .METHOD PATH HTTP/1.1." err.txt && grep -q "in .bad.txt." err.txt || exit 99
	hotloop load http://127.0.0.1:9/ --rate 10 --request missing.txt 2>err2.txt; [ $? -eq 1 ] || exit 99
	grep -q "cannot open .missing.txt." err2.txt || exit 99
	exit $rc
'

test_expect_code 2 'under --json a usage error is a JSON document' '
	hotloop load http://127.0.0.1:0/ --rate 10 --json >out.json 2>/dev/null; rc=$?
	jq -e ".error | test(\"a port is a number\")" out.json >/dev/null || exit 99
	exit $rc
'

test_done
