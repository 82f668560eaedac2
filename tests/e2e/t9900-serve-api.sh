#!/bin/sh
# hotloop serve over the project t-dashboard writes (HOTLOOP_DASH_FIXTURE):
# each API answer's shape, a store left byte for byte as it was by every
# kind of request, paths that try to leave .hotloop/ and kb/, the Host
# header and the token, oversized and idle requests, the limit of live
# clients, server-sent events from another process's writes, and the
# sanitized static snapshot. Every server is on 127.0.0.1 (one on
# 127.0.0.2), bounded in time, and killed at the end.
. "$(dirname "$0")/test-lib.sh"

UNIT=$(dirname "$HOTLOOP")/tests/t-dashboard
SECRET=SECRET-MARKER-0451	# what lies outside the served roots in the fixture

command -v curl >/dev/null || skip_all="needs curl (apt-get install curl)"
command -v jq >/dev/null || skip_all="needs jq (apt-get install jq)"
[ -x "$UNIT" ] || skip_all="$UNIT is not built (make unit)"

# every server this script starts is stopped, whatever happens
trap 'for f in "$SCRATCH"/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
	[ -n "$KEEP_SCRATCH" ] || rm -rf "$SCRATCH"' EXIT

# start_server NAME ARGS...: `hotloop serve --port 0 ARGS` in the background;
# its URL in NAME.url (a line of its stdout), its pid in NAME.pid
start_server() {
	name=$1
	shift
	"$HOTLOOP" serve --port 0 "$@" >"$SCRATCH/$name.out" 2>"$SCRATCH/$name.err" &
	echo $! >"$SCRATCH/$name.pid"
	i=0
	while [ $i -lt 100 ]; do
		url=$(grep '^http://' "$SCRATCH/$name.out")
		if [ -n "$url" ]; then
			echo "$url" >"$SCRATCH/$name.url"
			return 0
		fi
		kill -0 "$(cat "$SCRATCH/$name.pid")" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	echo "the server did not start:"
	cat "$SCRATCH/$name.err"
	return 1
}

stop_server() {
	if [ -f "$SCRATCH/$1.pid" ]; then
		kill "$(cat "$SCRATCH/$1.pid")" 2>/dev/null
		rm -f "$SCRATCH/$1.pid"
	fi
}

# req URL [CURL ARGS]: the status on stdout; the body in ./body, the headers in ./head
req() {
	u=$1
	shift
	curl -sS --path-as-is --connect-timeout 5 -m 10 -o body -D head -w '%{http_code}' "$@" "$u"
}

# shape URL JQ: the answer is 200 JSON and the jq expression holds for it
shape() {
	st=$(req "$U$1") &&
	{ [ "$st" = 200 ] || { echo "$1: $st"; cat body; return 1; }; } &&
	grep -qi '^content-type: application/json' head &&
	{ jq -e "$2" body >/dev/null || { echo "$1 does not hold: $2"; head -c 2000 body; echo; return 1; }; }
}

# the store's bytes, and its -wal's size (none: 0)
store_state() {
	sha256sum <proj/.hotloop/hotloop.db
	wc -c <proj/.hotloop/hotloop.db-wal 2>/dev/null || echo 0
}

# wait_for FILE PATTERN: until the pattern is in the file, at most 20 s
wait_for() {
	i=0
	while [ $i -lt 200 ]; do
		grep -q -e "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "no /$2/ in $1 after 20 s:"
	cat "$1"
	return 1
}

test_expect_success 'setup: the fixture project, and a server on it' '
	HOTLOOP_DASH_FIXTURE=$SCRATCH/proj "$UNIT" &&
	test -f proj/.hotloop/hotloop.db &&
	test -d proj/kb &&
	store_state >state.before &&
	start_server main --quiet --db "$SCRATCH/proj/.hotloop/hotloop.db" &&
	grep -q "^http://127\.0\.0\.1:[0-9][0-9]*/$" main.url &&
	expect_grep "^serving the dashboard of $SCRATCH/proj$" main.out
'

U=$(cat "$SCRATCH/main.url" 2>/dev/null)
U=${U%/}
PORT=${U##*:}

test_expect_success 'the page and its assets' '
	test "$(req "$U/")" = 200 && grep -qi "^content-type: text/html" head &&
	grep -qi "^content-security-policy: default-src .none." head &&
	grep -qi "^x-content-type-options: nosniff" head &&
	test "$(req "$U/index.html")" = 200 &&
	test "$(req "$U/dash.js")" = 200 && grep -qi "^content-type: text/javascript" head &&
	test "$(req "$U/dash.css")" = 200 && grep -qi "^content-type: text/css" head &&
	test "$(req "$U/nothing.html")" = 404
'

test_expect_success '/api/overview and /api/loops' '
	shape /api/overview "(.store.version | type == \"number\") and
		(.store.counts | [.loops, .runs, .measurements, .attempts, .activity] | all(type == \"number\")) and
		.store.counts.loops == 2 and .store.counts.attempts == 9 and
		(.loops | type == \"array\" and length == 2) and (.gains | type == \"array\" and length == 2) and
		(.profiles | type == \"array\") and (.activity | type == \"array\" and length == 20) and
		(.last_activity_id | type == \"number\") and .kb_entries == 9 and .scenario_runs == 2" &&
	shape /api/loops ".loops | length == 2 and all(
		(.id | type == \"number\") and (.status | type == \"string\") and (.branch | type == \"string\") and
		(.base_commit | type == \"string\") and (.attempts | type == \"number\") and
		(.kept | type == \"number\") and (.started_at | type == \"number\"))"
'

test_expect_success '/api/attempts and /api/attempts/ID' '
	shape /api/attempts ".total == 9 and (.attempts | length == 9 and all(
		(.id | type == \"number\") and (.loop_id | type == \"number\") and (.round | type == \"number\") and
		(.verdict | type == \"string\") and (.stage | type == \"string\") and (.reasons | type == \"array\") and
		(.kept | type == \"number\") and (.kb_slug | type == \"string\") and (has(\"diff\") | not)))" &&
	shape "/api/attempts?loop=1&limit=2" ".total == 4 and (.attempts | length == 2)" &&
	shape /api/attempts/1 "(.attempt.diff | type == \"string\") and .attempt.verdict == \"keep\" and
		(.attempt.commit_sha | type == \"string\") and (.runs | length == 1) and
		(.runs[0].summary.verdict == \"keep\") and (.runs[0].workloads | length == 2) and
		(.runs[0].workloads[0].pairs | length == 10) and
		(.runs[0].workloads[0].pairs[0].base.value | type == \"number\") and
		(.runs[0].workloads[0].warmups | type == \"array\") and
		(.kb.slug == .attempt.kb_slug) and (.kb.report_md | type == \"string\")" &&
	shape /api/attempts/3 ".attempt.function == \"<script>alert(\\\"fw\\\")</script>\" and .runs == []" &&
	test "$(req "$U/api/attempts/999")" = 404 &&
	test "$(req "$U/api/attempts/abc")" = 400 &&
	test "$(req "$U/api/attempts?limit=0")" = 400
'

test_expect_success '/api/benchmarks: the gains, their product so far' '
	shape /api/benchmarks "(.workloads | map(.workload) == [\"big\", \"small\"]) and
		(.workloads[0].points | length == 2 and all(
			(.change_pct | type == \"number\") and (.total_pct | type == \"number\") and
			(.base_median | type == \"number\") and (.cand_median | type == \"number\") and
			(.commit | type == \"string\") and (.primary == true))) and
		(.workloads[0].points[1].total_pct * 1000 | round) == -55000 and
		(.loops | type == \"array\" and length == 2)"
'

test_expect_success '/api/profiles, a flame graph, its top and a difference' '
	shape /api/profiles "(.latest | type == \"array\") and (.profiles | length == 11 and all(
		(.id | type == \"number\") and (.kind | type == \"string\") and (.workload | type == \"string\")))
		and (.profiles | map(select(.workload == \"big\")) | all(.summary.hotspots | type == \"array\"
			and all((.function | type == \"string\") and (.self_pct | type == \"number\"))))" &&
	jq -r "[.profiles[] | select(.workload == \"big\") | .id] | sort | .[]" body >big.ids &&
	test "$(wc -l <big.ids)" = 9 &&
	a=$(sed -n 1p big.ids) && b=$(sed -n 2p big.ids) &&
	test "$(req "$U/api/profiles/$a/flame.svg")" = 200 &&
	grep -qi "^content-type: image/svg+xml" head &&
	grep -qi "^content-security-policy:.*script-src .unsafe-inline." head &&
	grep -q "<svg" body && ! grep -q "<script>alert" body &&
	shape "/api/profiles/$a/top?n=5" "(.rows | length == 5) and .rows[0].name == \"find_word\" and
		(.rows[0].self_pct | type == \"number\") and .run_id == $a" &&
	test "$(req "$U/api/profiles/$a/top?n=0")" = 400 &&
	test "$(req "$U/api/flame-diff/$a/$b.svg")" = 200 &&
	grep -qi "^content-type: image/svg+xml" head && grep -q "<svg" body &&
	test "$(req "$U/api/flame-diff/$a/$b")" = 400
'

test_expect_success '/api/scenarios, /api/kb and /api/activity' '
	shape /api/scenarios ".runs | length == 2 and all((.scenario | type == \"string\") and
		(.run | type == \"string\") and (.outcome | type == \"string\") and (.phases | type == \"array\"))" &&
	run=$(jq -r ".runs[] | select(.outcome == \"done\") | .run" body) &&
	shape "/api/scenarios/pressure/$run" "(.summary.phases | length == 3) and
		(.timeline.points | type == \"array\" and length == 40) and (.timeline.metrics | type == \"object\")" &&
	shape /api/kb ".total == 9 and (.entries | length == 9 and all((.slug | type == \"string\") and
		(.title | type == \"string\") and (.reasons | type == \"array\")))" &&
	slug=$(jq -r ".entries[] | select(.verdict == \"keep\") | .slug" body | head -n 1) &&
	shape "/api/kb/$slug" "(.title | type == \"string\") and (.diff | type == \"string\") and
		(.report_md | type == \"string\")" &&
	shape "/api/kb?q=hash" ".entries | length == 2" &&
	shape "/api/activity?after=0&limit=3" ".activity | length == 3 and all((.id | type == \"number\") and
		(.at | type == \"number\") and (.kind | type == \"string\") and (.message | type == \"string\"))" &&
	test "$(req "$U/api/activity?after=-1")" = 400 &&
	test "$(req "$U/api/nothing")" = 404
'

test_expect_success 'HEAD answers with the headers only' '
	test "$(req "$U/api/overview" -I)" = 200 &&
	grep -qi "^content-type: application/json" head &&
	! tr -d "\r" <body | grep -v -e "^HTTP/" -e "^[A-Za-z-]*: " -e "^\$"
'

test_expect_success 'other methods: 405 with Allow; a body: refused; the server goes on' '
	for m in POST PUT DELETE PATCH OPTIONS; do
		test "$(req "$U/api/overview" -X $m)" = 405 &&
		grep -qi "^allow: GET, HEAD" head &&
		jq -e ".error | type == \"string\"" body >/dev/null || { echo "$m"; cat head; return 1; }
	done &&
	test "$(req "$U/api/attempts/1" -X POST --data "verdict=keep")" = 405 &&
	test "$(req "$U/api/overview" -X PUT --data-binary @proj/.hotloop/hotloop.db)" = 405 &&
	test "$(req "$U/api/overview" -X GET --data "x=1")" = 413 &&
	test "$(req "$U/api/overview" -X GET -H "Transfer-Encoding: chunked" --data "x=1")" = 413 &&
	test "$(req "$U/api/overview")" = 200
'

test_expect_success 'paths cannot leave the served roots' '
	for p in "/../etc/passwd" "/api/../../etc/passwd" "/api/%2e%2e/%2e%2e/etc/passwd" \
		 "/api/kb/%2e%2e%2f%2e%2e%2fetc%2fpasswd" "/api/kb%2f..%2f..%2fetc%2fpasswd" \
		 "/api/kb/%252e%252e%252fetc" "/api/scenarios/..%2f..%2f..%2fetc/passwd" \
		 "/api/kb/%00../../etc/passwd" "/api/kb/linked-outside-entry%00" "/%2e%2e/%2e%2e/etc/passwd" \
		 "/api/profiles/1/..%2f..%2f..%2f..%2fetc%2fpasswd" "/..%5c..%5cetc%5cpasswd" \
		 "/api/kb/linked-outside-entry" "/api/kb/linked-outside-report" \
		 "/api/scenarios/linked/20240501-000000"; do
		st=$(req "$U$p") &&
		case $st in 400|404) ;; *) echo "$p: $st"; cat body; return 1 ;; esac &&
		! grep -q "root:" body && ! grep -q "$SECRET" body || { echo "$p"; cat body; return 1; }
	done
'

test_expect_success 'a profile linked out of .hotloop/, by a symlink or by "..", is refused' '
	test "$(req "$U/api/profiles")" = 200 &&
	for w in linked dotdot; do
		id=$(jq -r ".profiles[] | select(.workload == \"$w\") | .id" body) &&
		test -n "$id" &&
		for p in "/api/profiles/$id/flame.svg" "/api/profiles/$id/top"; do
			test "$(req "$U$p")" = 404 &&
			jq -e ".error == \"outside the served directories\"" body >/dev/null || return 1
		done &&
		req "$U/api/profiles" >/dev/null || return 1
	done
'

test_expect_success 'nothing from outside in any list' '
	for p in /api/overview /api/kb "/api/kb?q=outside" /api/scenarios /api/attempts /api/profiles; do
		test "$(req "$U$p")" = 200 && ! grep -q "$SECRET" body && ! grep -q "linked-outside" body ||
		{ echo "$p"; return 1; }
	done
'

test_expect_success 'the Host header on a loopback bind' '
	test "$(req "$U/api/overview" -H "Host: 127.0.0.1:$PORT")" = 200 &&
	test "$(req "$U/api/overview" -H "Host: localhost:$PORT")" = 200 &&
	test "$(req "$U/" -H "Host: evil.example")" = 421 &&
	test "$(req "$U/api/overview" -H "Host: evil.example:$PORT")" = 421 &&
	test "$(req "$U/api/overview" -H "Host: 127.0.0.1:$((PORT % 65535 + 1))")" = 421 &&
	test "$(req "$U/api/overview" -H "Host: 10.1.2.3:$PORT")" = 421 &&
	test "$(req "$U/api/overview" -H "Host:")" = 421 &&
	jq -e ".error | test(\"Host\")" body >/dev/null
'

test_expect_success 'a 100 KB header or URL: an error status; the server goes on' '
	awk "BEGIN { printf \"X-Big: \"; for (i = 0; i < 100000; i++) printf \"a\"; print \"\" }" >big.header &&
	st=$(req "$U/api/overview" -H @big.header) &&
	case $st in 4[0-9][0-9]) ;; *) echo "a big header: $st"; return 1 ;; esac &&
	q=$(cut -c 8- big.header) &&
	st=$(req "$U/api/overview?x=$q") &&
	case $st in 4[0-9][0-9]) ;; *) echo "a big URL: $st"; return 1 ;; esac &&
	test "$(req "$U/api/overview")" = 200
'

test_expect_success 'the store is as it was, byte for byte, after every request' '
	store_state >state.after &&
	cmp state.before state.after &&
	test "$(sed -n 2p state.after)" = 0
'

# 127.0.0.2 is loopback too, but not the address the server takes for its own
if [ -z "$skip_all" ] && start_server tok --quiet --host 127.0.0.2 --db "$SCRATCH/proj/.hotloop/hotloop.db" >/dev/null; then
	test_expect_success 'off loopback a token is required: query, cookie, Bearer; Host still checked' '
		grep -q "^http://127\.0\.0\.2:[0-9]*/?token=[0-9a-f]\{32\}$" tok.url &&
		url=$(cat tok.url) && base=${url%%\?*} && token=${url##*token=} && base=${base%/} &&
		tport=${base##*:} &&
		test "$(req "$base/api/overview")" = 401 &&
		jq -e ".error | test(\"token\")" body >/dev/null &&
		test "$(req "$base/")" = 401 &&
		test "$(req "$base/?token=$token" -c jar)" = 200 &&
		grep -qi "^set-cookie: hotloop_token=$token; .*HttpOnly" head &&
		test "$(req "$base/api/overview" -b jar)" = 200 &&
		test "$(req "$base/api/overview?token=$token")" = 200 &&
		test "$(req "$base/api/overview" -H "Authorization: Bearer $token")" = 200 &&
		wrong=$(echo "$token" | tr 0-9a-f 1-9a-f0) &&
		test ${#wrong} = ${#token} &&
		test "$(req "$base/api/overview" -H "Authorization: Bearer $wrong")" = 401 &&
		test "$(req "$base/api/overview?token=$wrong")" = 401 &&
		test "$(req "$base/api/overview" -b "hotloop_token=$wrong")" = 401 &&
		test "$(req "$base/api/overview" -H "Authorization: Basic $token")" = 401 &&
		test "$(req "$base/api/overview" -H "Host: evil.example" -H "Authorization: Bearer $token")" = 421 &&
		test "$(req "$base/api/overview" -H "Host: evil.example:$tport" -b jar)" = 421 &&
		test "$(req "$base/api/overview" -H "Host: 127.0.0.2:$tport" -H "Authorization: Bearer $token")" = 200 &&
		test "$(req "$base/api/overview" -H "Host: 192.0.2.7:$tport" -H "Authorization: Bearer $token")" = 200 &&
		test "$(req "$base/api/overview" -H "Host: [::1]:$tport" -H "Authorization: Bearer $token")" = 200 &&
		test "$(req "$base/api/overview" -H "Host: 127.0.0.2:1" -H "Authorization: Bearer $token")" = 421
	'
else
	test_skip 'off loopback a token is required' "cannot listen on 127.0.0.2 here: $(cat "$SCRATCH/tok.err")"
fi
stop_server tok

test_expect_success 'a given --token: shorter than 16 characters is a usage error' '
	{ hotloop serve --port 0 --token short 2>err; test $? -eq 2; } &&
	expect_grep "at least 16" err
'

# what follows writes to the store: a fixture of its own
test_expect_success 'setup: a second fixture; a server with a 2 s timeout, one with 3 live clients at most' '
	HOTLOOP_DASH_FIXTURE=$SCRATCH/live "$UNIT" &&
	start_server live --quiet --timeout 2 --db "$SCRATCH/live/.hotloop/hotloop.db" &&
	start_server few --quiet --max-clients 3 --db "$SCRATCH/live/.hotloop/hotloop.db"
'

L=$(cat "$SCRATCH/live.url" 2>/dev/null)
L=${L%/}
F=$(cat "$SCRATCH/few.url" 2>/dev/null)
F=${F%/}

test_expect_success 'SSE: hello, then another process'"'"'s activity line and a change' '
	{ curl -sSN --connect-timeout 5 -m 60 "$L/api/events" >events.out 2>events.err & echo $! >events.pid; } &&
	test_when_finished "kill \$(cat events.pid) 2>/dev/null" &&
	wait_for events.out "^event: hello" &&
	expect_grep "^data: {\"last_activity_id\":[0-9][0-9]*}" events.out &&
	HOTLOOP_DASH_ACTIVITY=$SCRATCH/live HOTLOOP_DASH_MESSAGE="$(printf "from elsewhere \377 <b>")" "$UNIT" &&
	wait_for events.out "^event: change" &&
	expect_grep "^event: activity" events.out &&
	grep -A1 "^event: activity" events.out | grep "^data: " >activity.data &&
	sed "s/^data: //" activity.data | jq -e ".kind == \"note\" and (.message | test(\"from elsewhere\")) and
		(.message | test(\"\\ufffd\")) and (.id | type == \"number\") and (.at | type == \"number\")" >/dev/null &&
	grep -A1 "^event: change" events.out | sed -n "s/^data: //p" |
		jq -e ".counts.activity == .last_activity_id" >/dev/null
'

test_expect_success 'a kept answer is not given after a change: the change event comes after it is gone' '
	{ curl -sSN --connect-timeout 5 -m 60 "$L/api/events" >events3.out 2>&1 & echo $! >events3.pid; } &&
	test_when_finished "kill \$(cat events3.pid) 2>/dev/null" &&
	wait_for events3.out "^event: hello" &&
	test "$(req "$L/api/activity")" = 200 && cp body act1.json &&
	test "$(req "$L/api/overview")" = 200 && cp body ov1.json &&
	test "$(req "$L/api/activity")" = 200 && cmp body act1.json &&
	HOTLOOP_DASH_ACTIVITY=$SCRATCH/live HOTLOOP_DASH_MESSAGE="kept answers go" "$UNIT" &&
	wait_for events3.out "^event: change" &&
	test "$(req "$L/api/activity")" = 200 &&
	jq -e "[.activity[] | select(.message == \"kept answers go\")] | length == 1" body >/dev/null &&
	test "$(req "$L/api/overview")" = 200 &&
	jq -e --slurpfile old ov1.json ".last_activity_id > \$old[0].last_activity_id" body >/dev/null
'

test_expect_success 'a kept answer is not given after the kb changes: a new entry is listed' '
	test "$(req "$L/api/kb")" = 200 &&
	n=$(jq ".entries | length" body) &&
	slug=$(ls "$SCRATCH/live/kb" | grep -v "\.md\$" | head -1) &&
	cp -r "$SCRATCH/live/kb/$slug" "$SCRATCH/live/kb/$slug-copy" &&
	i=0 &&
	while [ $i -lt 50 ]; do
		test "$(req "$L/api/kb")" = 200 &&
		test "$(jq ".entries | length" body)" -gt "$n" && break
		sleep 0.1
		i=$((i + 1))
	done &&
	test $i -lt 50
'

test_expect_success 'SSE: a live stream outlasts the idle timeout' '
	{ curl -sSN --connect-timeout 5 -m 60 "$L/api/events" >events2.out 2>&1 & echo $! >events2.pid; } &&
	test_when_finished "kill \$(cat events2.pid) 2>/dev/null" &&
	wait_for events2.out "^event: hello" &&
	sleep 3 &&
	HOTLOOP_DASH_ACTIVITY=$SCRATCH/live HOTLOOP_DASH_MESSAGE="after the timeout" "$UNIT" &&
	wait_for events2.out "after the timeout"
'

test_expect_success '--max-clients 3: a fourth /api/events gets 503, the API goes on' '
	for i in 1 2 3; do
		{ curl -sSN --connect-timeout 5 -m 60 "$F/api/events" >sse$i.out 2>&1 & echo $! >sse$i.pid; }
	done &&
	test_when_finished "for i in 1 2 3; do kill \$(cat sse\$i.pid) 2>/dev/null; done" &&
	for i in 1 2 3; do wait_for sse$i.out "^event: hello" || return 1; done &&
	test "$(req "$F/api/events")" = 503 &&
	jq -e ".error | test(\"too many\")" body >/dev/null &&
	test "$(req "$F/api/overview")" = 200
'

if command -v python3 >/dev/null 2>&1; then
	test_expect_success 'a client that connects and sends nothing is closed (--timeout 2)' '
		lport=${L##*:} &&
		timeout 30 python3 -c "
import socket, sys, time
s = socket.create_connection((\"127.0.0.1\", $lport), timeout=5)
s.settimeout(20)
t = time.time()
data = s.recv(100)
sys.exit(0 if data == b\"\" else 1)
" &&
		test "$(req "$L/api/overview")" = 200
	'
else
	test_skip 'a client that connects and sends nothing is closed' 'python3 is not installed'
fi
stop_server live
stop_server few

test_expect_success '--snapshot DIR: the page, data.js, the assets and the SVGs' '
	hotloop serve --db "$SCRATCH/proj/.hotloop/hotloop.db" --snapshot snap >out 2>err &&
	expect_grep "^wrote snap: [0-9]* answers in [0-9]* files" out &&
	for f in index.html data.js dash.js dash.css; do test -s snap/$f || return 1; done &&
	ls snap/api/profiles/*/flame.svg >svgs && test "$(wc -l <svgs)" = 9 &&
	ls snap/api/flame-diff/*/*.svg >diffs && test "$(wc -l <diffs)" = 3 &&
	grep -q "<script src=\"data.js\"></script>" snap/index.html &&
	head -n 1 snap/data.js | grep -q "^/\* hotloop dashboard snapshot \*/$" &&
	sed -n "2s/^window.HOTLOOP_SNAPSHOT = \(.*\);$/\1/p" snap/data.js >data.json &&
	# each JSON answer: 8 lists, 9 attempts, 9 tops, 2 scenario runs, 9 kb entries; the assets list

	jq -e "(.[\"/api/overview\"].store.counts.attempts == 9) and (.[\"/api/attempts/1\"].attempt.diff |
		type == \"string\") and (keys | length == 38) and
		(.[\"/api/assets\"] | length == 12)" data.json >/dev/null &&
	expect_grep "the snapshot goes without /api/profiles/[0-9]*/flame.svg: .*outside the served" err &&
	store_state >state.snap && cmp state.before state.snap
'

test_expect_success 'the snapshot holds no absolute path, home, host or user name' '
	find snap -type f >files &&
	! grep -rlF "$SCRATCH" snap &&
	! grep -rlF "$SECRET" snap &&
	! grep -rlE "/(tmp|usr|home|root|etc|var)/" snap/index.html snap/data.js $(cat svgs diffs) &&
	if [ -n "$HOME" ] && [ "$HOME" != / ]; then ! grep -rlF "$HOME" snap; fi &&
	h=$(hostname) &&
	if [ ${#h} -ge 3 ] && [ "$h" != localhost ]; then ! grep -lwF "$h" snap/data.js $(cat svgs diffs); fi &&
	u=$(id -un) &&
	if [ "$u" != root ] && [ ${#u} -ge 3 ]; then ! grep -lwF "$u" snap/data.js $(cat svgs diffs); fi
'

test_expect_success 'a second snapshot into the same DIR replaces it whole' '
	echo stale >snap/stale.txt &&
	hotloop serve --db "$SCRATCH/proj/.hotloop/hotloop.db" --snapshot snap >out 2>err &&
	test ! -e snap/stale.txt &&
	test -s snap/index.html && test -s snap/data.js &&
	! ls -d snap.tmp-* snap.old-* 2>/dev/null
'

test_expect_success 'a snapshot into a foreign directory is refused and leaves it as it was' '
	mkdir foreign && echo mine >foreign/notes.txt && mkdir foreign/sub && echo deep >foreign/sub/x &&
	(cd foreign && find . -exec ls -ld {} + | sort) >foreign.before &&
	{ hotloop serve --db "$SCRATCH/proj/.hotloop/hotloop.db" --snapshot foreign >out 2>err; test $? -eq 1; } &&
	expect_grep "^hotloop: .foreign. holds files and is not a dashboard snapshot" err &&
	test "$(wc -l <err)" = 1 &&
	(cd foreign && find . -exec ls -ld {} + | sort) >foreign.after &&
	cmp foreign.before foreign.after &&
	test "$(cat foreign/notes.txt)" = mine &&
	! ls -d foreign.tmp-* 2>/dev/null
'

test_expect_success 'a store of a newer schema is refused at start' '
	HOTLOOP_DASH_NEWER=$SCRATCH/newer.db "$UNIT" &&
	cp newer.db newer.orig &&
	{ timeout 20 "$HOTLOOP" serve --port 0 --db newer.db >out 2>err; test $? -eq 1; } &&
	expect_grep "^hotloop: cannot open .newer.db.: written by a newer hotloop: schema [0-9]*, this one knows" err &&
	! grep -q "^http" out &&
	{ timeout 20 "$HOTLOOP" serve --db newer.db --snapshot snap2 >out 2>err; test $? -eq 1; } &&
	test ! -e snap2 &&
	cmp newer.db newer.orig
'

test_expect_success 'a file that is not a store is refused at start, and left alone' '
	i=0 && while [ $i -lt 64 ]; do echo "line $i of a text file"; i=$((i + 1)); done >notastore.db &&
	cp notastore.db notastore.orig &&
	{ timeout 20 "$HOTLOOP" serve --port 0 --db notastore.db >out 2>err; test $? -eq 1; } &&
	expect_grep "^hotloop: cannot open .notastore.db.: file is not a database" err &&
	! grep -q "^http" out &&
	cmp notastore.db notastore.orig &&
	{ timeout 20 "$HOTLOOP" serve --port 0 --db missing.db >out 2>err; test $? -eq 1; } &&
	expect_grep "no store at .missing.db." err
'

stop_server main
test_done
