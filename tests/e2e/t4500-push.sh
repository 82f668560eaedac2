#!/bin/sh
# push: a profile goes to a Pyroscope server's /ingest as pprof. A stand-in
# server (push-server.js, node) records each request; the tests check the
# query (name and labels escaped, range, format, units, spyName), the
# headers, and that the "profile" part decodes to the same profile; bad
# names send nothing; a refusing or absent server is a clear failure.
. "$(dirname "$0")/test-lib.sh"

command -v node >/dev/null || skip_all="node is not installed (make deps installs nodejs)"

cat >in.folded <<-\EOC
main;parse;strlen 60
main;parse 10
main;emit;__vfprintf_internal 30
EOC

# start_server DIR STATUS [CERT KEY]: the stand-in server in the background;
# its port in DIR/port, its pid in DIR/pid.
start_server() {
	mkdir -p "$1" || return 1
	node "$TEST_DIR/push-server.js" "$@" >"$1/log" 2>&1 &
	echo $! >"$1/pid"
	i=0
	while [ ! -f "$1/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	test -f "$1/port" || { echo "the test server did not start:"; cat "$1/log"; return 1; }
}
stop_server() { kill "$(cat "$1/pid")" 2>/dev/null; }
url() { echo "http://127.0.0.1:$(cat "$1/port")"; }
nr_requests() { find "$1" -mindepth 1 -maxdepth 1 -type d | wc -l; }
query() { sed -n 's/^[^?]*?//p' "$1/url" | tr '&' '\n'; }

test_expect_success 'a folded profile: POST /ingest?format=pprof with name, range, units, spyName' '
	start_server srv 200 && test_when_finished "stop_server srv" &&
	hotloop push "$(url srv)" in.folded --name "app.cpu{env=ci,region=eu-west-1}" \
		--from 1700000000 --until 1700000010 >out &&
	test "$(cat srv/1/method)" = POST &&
	test "$(sed "s/?.*//" srv/1/url)" = /ingest &&
	query srv/1 >q &&
	expect_grep "^name=app.cpu%7Benv%3Dci%2Cregion%3Deu-west-1%7D$" q &&
	expect_grep "^from=1700000000$" q &&
	expect_grep "^until=1700000010$" q &&
	expect_grep "^format=pprof$" q &&
	expect_grep "^units=samples$" q &&
	expect_grep "^spyName=hotloop$" q &&
	expect_grep "^aggregationType=sum$" q &&
	expect_grep "^sampleRate=[0-9][0-9]*$" q &&
	jq -e ".\"content-type\" | startswith(\"multipart/form-data; boundary=\")" srv/1/headers.json &&
	jq -e ".filename == \"profile.pb.gz\"" srv/1/profile.meta &&
	expect_grep "pushed in.folded as app.cpu{env=ci,region=eu-west-1}" out
'

test_expect_success 'the profile part is gzipped pprof with the same stacks and total' '
	test "$(od -An -tx1 -N2 srv/1/profile | tr -d " ")" = 1f8b &&
	hotloop report --json srv/1/profile >got.json &&
	jq -e ".total == 100 and .sample_type == \"samples/count\"" got.json &&
	hotloop convert srv/1/profile --to folded -o - | sort >got.folded &&
	sort in.folded >want.folded && cmp want.folded got.folded
'

test_expect_success 'headers are sent as given' '
	start_server srvh 200 && test_when_finished "stop_server srvh" &&
	hotloop push "$(url srvh)" in.folded --name app --header "X-Scope-OrgID: team-a" \
		--header "Authorization: Bearer t0k3n" >/dev/null &&
	jq -e ".\"x-scope-orgid\" == \"team-a\" and .authorization == \"Bearer t0k3n\"" srvh/1/headers.json &&
	jq -e ".\"user-agent\" | startswith(\"hotloop/\")" srvh/1/headers.json
'

test_expect_success 'the base URL with a trailing slash or a path prefix' '
	start_server srvp 200 && test_when_finished "stop_server srvp" &&
	hotloop push "$(url srvp)/" in.folded --name app >/dev/null &&
	hotloop push "$(url srvp)/pyroscope//" in.folded --name app >/dev/null &&
	test "$(sed "s/?.*//" srvp/1/url)" = /ingest &&
	test "$(sed "s/?.*//" srvp/2/url)" = /pyroscope/ingest
'

test_expect_success 'without --from/--until a profile without a time ends now' '
	start_server srvt 200 && test_when_finished "stop_server srvt" &&
	t0=$(date +%s) && hotloop push "$(url srvt)" in.folded --name app >/dev/null && t1=$(date +%s) &&
	from=$(query srvt/1 | sed -n "s/^from=//p") && until=$(query srvt/1 | sed -n "s/^until=//p") &&
	test "$until" -ge "$t0" && test "$until" -le "$t1" && test $((until - from)) -eq 1
'

test_expect_success '--from alone keeps the profile'"'"'s span; --json says what was sent' '
	start_server srvj 200 && test_when_finished "stop_server srvj" &&
	hotloop push "$(url srvj)" in.folded --name "app{a=b}" --from 1700000000 --json >out.json &&
	jq -e ".url | test(\"/ingest[?]name=app%7Ba%3Db%7D&from=1700000000&until=1700000001&\")" out.json &&
	jq -e ".status == 200 and .file == \"in.folded\" and .name == \"app{a=b}\" and
		.from == 1700000000 and .until == 1700000001 and (.bytes | type) == \"number\" and .bytes > 0 and
		.stacks == 3 and .sample_type == \"samples\" and .total == 100" out.json &&
	test "$(jq .bytes out.json)" -eq "$(wc -c <srvj/1/profile)"
'

if test_have_prereq PERF; then
test_expect_success 'a recording: pushed with its own time range, hot_spin on top' '
	start_server srvr 200 && test_when_finished "stop_server srvr" &&
	t0=$(date +%s) &&
	hotloop record -o rec.pb.gz -- "$WORKLOADS/cpuhog" 0.3 2>/dev/null &&
	t1=$(date +%s) &&
	hotloop push "$(url srvr)" rec.pb.gz --name "cpuhog{host=ci}" >/dev/null &&
	from=$(query srvr/1 | sed -n "s/^from=//p") && until=$(query srvr/1 | sed -n "s/^until=//p") &&
	test "$from" -ge "$t0" && test "$until" -le $((t1 + 1)) && test "$until" -gt "$from" &&
	query srvr/1 | grep -qx "sampleRate=[0-9]*" &&
	hotloop report --json rec.pb.gz >want.json &&
	hotloop report --json srvr/1/profile >got.json &&
	test "$(jq .total got.json)" = "$(jq .total want.json)" &&
	jq -e ".rows[0].name == \"hot_spin\"" got.json
'
else
test_skip 'a recording: pushed with its own time range, hot_spin on top' 'perf events are not available'
fi

test_expect_success 'a bad label name is refused, naming it, and nothing is sent' '
	start_server srvb 200 && test_when_finished "stop_server srvb" &&
	{ hotloop push "$(url srvb)" in.folded --name "app{env=ci,1zone=a}" 2>err; test $? -eq 2; } &&
	expect_grep "invalid label name .1zone." err &&
	test "$(nr_requests srvb)" -eq 0
'

test_expect_success 'names: each bad one refused before sending, each good one sent' '
	start_server srvn 200 && test_when_finished "stop_server srvn" &&
	for n in "" "{a=b}" "app{a=}" "app{a}" "app{a=b" "app{a=b,a=c}" "app{a=b}x" \
		"app{a=b=c}" "app{a=b,}" "app{a-b=c}" "ap}p" "a,b" "app{a=b{c}"; do
		hotloop push "$(url srvn)" in.folded --name "$n" 2>err; rc=$?
		test $rc -eq 2 || { echo "name \"$n\" gave exit $rc"; exit 1; }
	done &&
	test "$(nr_requests srvn)" -eq 0 &&
	for n in app "app{}" "my.app.cpu{_x=1,Zone2=eu west}"; do
		hotloop push "$(url srvn)" in.folded --name "$n" >/dev/null || { echo "name \"$n\""; exit 1; }
	done &&
	test "$(nr_requests srvn)" -eq 3
'

test_expect_code 1 'a server answering 500: exit 1 with the status and its first line' '
	start_server srv5 500 && test_when_finished "stop_server srv5" &&
	hotloop push "$(url srv5)" in.folded --name app 2>err >out; rc=$?
	expect_grep "refused the profile: HTTP status 500: ingest failed: status 500 from the test server$" err &&
	! grep -q "second line" err && test ! -s out && test "$(nr_requests srv5)" -eq 1 || exit 99; exit $rc
'

test_expect_code 1 'a 400 under --json: the error document' '
	start_server srv4 400 && test_when_finished "stop_server srv4" &&
	hotloop push "$(url srv4)" in.folded --name app --json >out.json 2>/dev/null; rc=$?
	jq -e ".error | test(\"HTTP status 400\")" out.json || exit 99; exit $rc
'

test_expect_code 1 'connection refused: a clear error' '
	start_server srvc 200 && port=$(cat srvc/port) && stop_server srvc &&
	while kill -0 "$(cat srvc/pid)" 2>/dev/null; do sleep 0.05; done &&
	hotloop push "http://127.0.0.1:$port" in.folded --name app 2>err; rc=$?
	expect_grep "cannot send the profile to .http://127.0.0.1:$port/ingest.*is the server running" err || exit 99; exit $rc
'

test_expect_code 1 'a server that never answers: --timeout gives up' '
	start_server srvz 0 && test_when_finished "stop_server srvz" &&
	hotloop push "$(url srvz)" in.folded --name app --timeout 0.5 2>err; rc=$?
	expect_grep "timed out\|Timeout" err || exit 99; exit $rc
'

if command -v openssl >/dev/null; then
test_expect_success 'https, trusting the server'"'"'s certificate with --cacert' '
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
		-addext "subjectAltName=IP:127.0.0.1" -keyout key.pem -out cert.pem 2>/dev/null &&
	start_server srvs 200 cert.pem key.pem && test_when_finished "stop_server srvs" &&
	port=$(cat srvs/port) &&
	hotloop push "https://127.0.0.1:$port" in.folded --name app --cacert cert.pem >/dev/null &&
	test "$(nr_requests srvs)" -eq 1 && test -s srvs/1/profile &&
	{ hotloop push "https://127.0.0.1:$port" in.folded --name app 2>err; test $? -eq 1; } &&
	expect_grep "cannot send the profile to .https://127.0.0.1:$port/ingest.*certificate" err
'
else
test_skip 'https, trusting the server'"'"'s certificate with --cacert' 'openssl is not installed'
fi

test_expect_success 'no FILE: the latest run'"'"'s profile, else an error saying what to pass' '
	mkdir repo && cd repo && git init -q &&
	{ hotloop push http://127.0.0.1:1 --name app 2>err; test $? -eq 1; } &&
	expect_grep "no profile given.*give FILE, or make one with .hotloop run." err &&
	start_server ../srvl 200 && test_when_finished "stop_server ../srvl" &&
	mkdir -p .hotloop/runs/r1 && hotloop convert ../in.folded -o .hotloop/runs/r1/profile.pb.gz &&
	ln -s r1 .hotloop/runs/latest && mkdir sub && cd sub &&
	hotloop push "$(url ../../srvl)" --name app >out &&
	expect_grep "runs/latest/profile.pb.gz" out &&
	test "$(hotloop report --json ../../srvl/1/profile | jq .total)" = 100
'

test_expect_code 2 'usage: no --name' 'hotloop push http://127.0.0.1:1 in.folded'
test_expect_code 2 'usage: not an http URL' '
	hotloop push 127.0.0.1:4040 in.folded --name app 2>err; rc=$?
	expect_grep "not an http:// or https:// URL" err || exit 99; exit $rc
'
test_expect_code 2 'usage: a header without a colon' 'hotloop push http://127.0.0.1:1 in.folded --name app --header Bearer'
test_expect_code 2 'usage: --from after --until' 'hotloop push http://127.0.0.1:1 in.folded --name app --from 20 --until 10'
test_expect_code 1 'an unreadable profile fails before sending' 'hotloop push http://127.0.0.1:1 nope.pb.gz --name app'

test_done
