#!/bin/sh
# hotloop serve under load, on 127.0.0.1 only: 200 live clients of
# /api/events and 1,000 API requests a second for 10 s, open-loop, over
# the main endpoints (serve-load.js), while another process writes
# activity rows that every client must receive. Every request sent is
# answered 200 (no error, timeout or reset); the rate reached is printed,
# not asserted: a slow machine (or the ASan build) sends fewer, which the
# note says. The server's peak RSS stays within 64 MiB of its start; a
# third round grows it by at most 8 MiB (the first two fill the malloc
# arenas of the server's threads, a few MiB); clients that went away are
# released within seconds, the 257th live client gets 503; SIGTERM stops
# it with exit 0 (under ASan, with no leak reported).
. "$(dirname "$0")/test-lib.sh"

command -v node >/dev/null || skip_all="node is not installed (make deps installs nodejs)"
command -v sqlite3 >/dev/null || skip_all="needs the sqlite3 CLI (apt-get install sqlite3)"
command -v jq >/dev/null || skip_all="needs jq (apt-get install jq)"
command -v curl >/dev/null || skip_all="needs curl (apt-get install curl)"

SSE=200 RATE=1000 SECS=10 INSERTS=5 MAX_CLIENTS=256
RSS_BOUND_KIB=$((64 * 1024)) GROWTH_KIB=$((8 * 1024))
DB=proj/.hotloop/hotloop.db
# under ASan, freed memory waits in a quarantine (256 MiB by default) before
# it is used again: a small one, so RSS shows the server's memory, not it
export ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=4"

clients() { timeout 180 node "$TEST_DIR/serve-load.js" "$@"; }
kib() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB$/\1/p" "/proc/$(cat srv.pid)/status"; }
sockets() { ls -l "/proc/$(cat srv.pid)/fd" 2>/dev/null | grep -c "socket:"; }
# the server in the background (for 10 minutes at most); its pid in
# srv.pid, its exit status in srv.exit once it ends
start_server() {
	timeout 600 sh -c '"$0" serve --port 0 --db "$1" --quiet & echo $! >srv.pid; wait $!; echo $? >srv.exit' \
		"$HOTLOOP" "$DB" >srv.out 2>srv.err &
}
url() { sed -n 2p srv.out | sed "s,/$,,"; }
# ASan's allocator keeps what each size class once held: a leak shows as
# LeakSanitizer's report at the exit, and RSS gets twice the margin
asan() { grep -q "libasan\|libclang_rt.asan" "/proc/$(cat srv.pid)/maps"; }
alive() { kill -0 "$(cat srv.pid)" 2>/dev/null; }
# wait_released: until the server holds no more sockets than when it started,
# 10 s at most: the watcher finds the clients that closed while their streams
# waited (were it left to the pings, every 15 s, it would take two of them)
wait_released() {
	i=0
	while [ "$(sockets)" -gt "$(cat sockets.start)" ]; do
		i=$((i + 1))
		[ $i -le 100 ] || { echo "still $(sockets) sockets after 10 s, $(cat sockets.start) at the start"; return 1; }
		sleep 0.1
	done
	alive || { echo "the server is gone:"; cat srv.err; return 1; }
	echo "$((i / 10)).$((i % 10))" >released.s
}
# check_round N: every request sent was answered 200, every client had its
# hello and every row written
check_round() {
	jq -e '.error == null and .errors == 0 and .ok == .sent and .ok == .completed and .ok > 0 and
	       .scheduled == .sent + .behind and
	       .sse.hello == .sse.clients and .sse.refused == 0 and .sse.errors == 0 and
	       .sse.insert_errors == [] and .sse.inserted == .sse.inserts and .sse.inserted > 0 and
	       .sse.missing == 0 and .sse.wrong == 0 and
	       ([.by_endpoint[] | .sent == .ok and .ok > 0] | all and length == 6)' round$1.json >/dev/null ||
	{ jq . round$1.json; return 1; }
}
note_round() {
	[ -s round$1.json ] || return 0
	test_note "round $1: $(jq -r '"\(.ok) of \(.scheduled) requests answered 200 in \(.seconds) s: \(.rate)/s" +
		" (\(.errors) errors; \(.behind) not sent, over 256 outstanding); latency from the scheduled" +
		" time p50 \(.latency_ms.p50) ms, p99 \(.latency_ms.p99) ms; \(.sse.clients) live clients got" +
		" \(.sse.inserted) rows each, the slowest \(.sse.delivery_ms_max) ms after its write"' round$1.json)"
}

cat >fill.sql <<\EOF
-- two loops of 50 attempts (every tenth kept; compare runs of 10
-- pairs and 2 warm-ups on two workloads), profile runs, 100 activity rows
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2)
INSERT INTO loops (started_at, updated_at, finished_at, repo, branch, base_commit,
	best_commit, status, stop_reason, rounds_planned)
SELECT 1.7e9 + i * 1e4, 1.7e9 + i * 1e4 + 5000, 1.7e9 + i * 1e4 + 5000, '/src/proj',
	'hotloop/load-' || i, printf('%040x', i), printf('%040x', i + 100), 'finished',
	'rounds done', 50
FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
INSERT INTO attempts (loop_id, round, lens, function, hypothesis, expected_gain_pct,
	verdict, reasons_json, stage, change_pct, ci_low_pct, ci_high_pct, diff, commit_sha,
	agent_exit_status, agent_seconds, started_at, updated_at, finished_at)
SELECT (i - 1) / 50 + 1, (i - 1) % 50 + 1, 'algorithmic', 'fn_' || (i % 17),
	'a hypothesis about fn_' || (i % 17), 5.0,
	CASE WHEN i % 10 = 0 THEN 'keep' WHEN i % 10 < 6 THEN 'reject'
	     WHEN i % 10 < 9 THEN 'inconclusive' ELSE 'error' END,
	'["a reason for attempt ' || i || '", "cpu +1.2% [-0.5%, +2.9%]"]',
	CASE WHEN i % 10 = 9 THEN 'build' ELSE 'compare' END,
	-3.5 + i % 7, -4.5 + i % 7, -2.5 + i % 7,
	'--- a/src/fn.c' || char(10) || '+++ b/src/fn.c' || char(10) ||
	replace(hex(zeroblob(60)), '00', '+	a line of the diff of attempt ' || i || char(10)),
	CASE WHEN i % 10 = 0 THEN printf('%040x', 1000 + i) END, 0, 60.0, 1.7e9 + i * 100,
	1.7e9 + i * 100 + 90, 1.7e9 + i * 100 + 90
FROM n;
INSERT INTO runs (loop_id, attempt_id, kind, commit_sha, workload, metric, started_at,
	updated_at, finished_at)
SELECT loop_id, id, 'compare', commit_sha, 'big', 'cpu', started_at, updated_at, finished_at
FROM attempts WHERE verdict IN ('keep', 'reject', 'inconclusive');
WITH RECURSIVE k(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM k WHERE j < 23)
INSERT INTO measurements (run_id, workload, pair_index, side, position, warmup, wall_s,
	user_s, sys_s, cpu_s, max_rss_kib, exit_status, value, created_at)
SELECT r.id, CASE WHEN j < 12 THEN 'big' ELSE 'small' END, (j % 12) / 2,
	CASE WHEN j % 2 THEN 'cand' ELSE 'base' END, j % 2, (j % 12) < 2,
	1.0 + (j % 5) * 0.01, 0.9, 0.05, 0.95 + (r.id % 3) * 0.01 - (j % 2) * 0.03, 20000 + j, 0,
	0.95 + (r.id % 3) * 0.01 - (j % 2) * 0.03, r.started_at
FROM runs r, k WHERE r.kind = 'compare';
INSERT INTO runs (loop_id, attempt_id, kind, commit_sha, workload, metric, started_at,
	updated_at, finished_at, profile_path, summary_json)
SELECT loop_id, id, 'candidate', commit_sha, 'big', 'cpu', started_at, updated_at,
	finished_at, '.hotloop/profiles/' || id || '.pb.gz', '{"samples": ' || (id * 37 % 5000) || '}'
FROM attempts WHERE id % 5 = 0;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
INSERT INTO activity (at, loop_id, level, kind, message)
SELECT 1.7e9 + i * 300, (i - 1) / 50 + 1, 'info', 'round', 'round ' || i || ': measuring' FROM n;
EOF

test_expect_success 'a store with loops, attempts, measurements, profiles, activity and a kb entry' '
	hotloop store --db "$DB" >/dev/null &&
	sqlite3 "$DB" <fill.sql &&
	mkdir -p proj/kb/a-hash-table-for-fn-1-01012026 &&
	printf "# a hash table for fn_1\n\n- function: fn_1\n- verdict: reject\n- round: 3\n\n## What\n\nA table.\n" \
		>proj/kb/a-hash-table-for-fn-1-01012026/report.md &&
	hotloop store --db "$DB" --json >store.json &&
	jq -e ".counts.attempts == 100 and .counts.measurements > 1000 and .counts.activity == 100" store.json &&
	sqlite3 "$DB" "SELECT group_concat(id) FROM (SELECT id FROM attempts WHERE id % 7 = 1)" >ids &&
	test -s ids
'

test_expect_success 'serve starts on a free port of 127.0.0.1' '
	start_server &&
	i=0 &&
	while [ -z "$(sed -n 2p srv.out)" ]; do
		i=$((i + 1)) &&
		if [ $i -gt 300 ]; then echo "no URL after 30 s:"; cat srv.out srv.err; exit 1; fi &&
		sleep 0.1
	done &&
	url | grep -q "^http://127\.0\.0\.1:[1-9][0-9]*$" &&
	kib VmRSS >rss.start && test -s rss.start &&
	sockets >sockets.start && test "$(cat sockets.start)" -ge 1 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" --max-time 10 "$(url)/api/overview")" = 200
'

test_expect_success "round 1: $SSE live clients and $RATE requests/s for $SECS s, every one answered 200" '
	alive &&
	clients load "$(url)" "$DB" $SSE $RATE $SECS $INSERTS "$(cat ids)" >round1.json &&
	check_round 1 &&
	alive
'
note_round 1

test_expect_success 'the clients that went away are released' '
	wait_released && kib VmRSS >rss.1 && kib VmHWM >hwm.1
'
[ -s released.s ] && test_note "the 200 closed clients were released $(cat released.s) s after their close"

test_expect_success 'peak RSS within 64 MiB of the start' '
	test $(($(cat hwm.1) - $(cat rss.start))) -lt $RSS_BOUND_KIB ||
	{ echo "VmHWM $(cat hwm.1) kB, $(cat rss.start) kB at the start"; false; }
'

test_expect_success 'round 2, the same: no error' '
	clients load "$(url)" "$DB" $SSE $RATE $SECS $INSERTS "$(cat ids)" >round2.json &&
	check_round 2 &&
	wait_released && kib VmRSS >rss.2 && kib VmHWM >hwm.2
'
note_round 2

test_expect_success 'round 3, the same: no error; RSS grew by at most 8 MiB (16 under ASan), peak still within 64 MiB' '
	clients load "$(url)" "$DB" $SSE $RATE $SECS $INSERTS "$(cat ids)" >round3.json &&
	check_round 3 &&
	wait_released && kib VmRSS >rss.3 && kib VmHWM >hwm.3 &&
	growth=$GROWTH_KIB &&
	if asan; then growth=$((2 * GROWTH_KIB)); fi &&
	test $(($(cat rss.3) - $(cat rss.2))) -le $growth ||
	{ echo "VmRSS $(cat rss.3) kB after round 3, $(cat rss.2) kB after round 2"; false; } &&
	test $(($(cat hwm.3) - $(cat rss.start))) -lt $RSS_BOUND_KIB ||
	{ echo "VmHWM $(cat hwm.3) kB, $(cat rss.start) kB at the start"; false; }
'
note_round 3
[ -s rss.3 ] && test_note "RSS: $(cat rss.start) kB at the start; after each round $(cat rss.1), $(cat rss.2)," \
	"$(cat rss.3) kB; peak $(cat hwm.3) kB"

test_expect_success "$MAX_CLIENTS live clients say hello; the next one gets 503" '
	clients limit "$(url)" $MAX_CLIENTS >limit1.json &&
	jq -e ".hello == $MAX_CLIENTS and .errors == [] and .extra.status == 503 and .extra.hello == false and
	       (.extra.body | fromjson | .error | test(\"too many live clients\"))" limit1.json >/dev/null ||
	{ cat limit1.json; false; }
'

test_expect_success 'once they close, they are released: as many again' '
	wait_released &&
	clients limit "$(url)" $MAX_CLIENTS >limit2.json &&
	jq -e ".hello == $MAX_CLIENTS and .extra.status == 503" limit2.json >/dev/null ||
	{ cat limit2.json; false; }
'

test_expect_success 'SIGTERM stops it: exit 0 (under ASan: no leak reported)' '
	wait_released &&
	test "$(curl -s -o /dev/null -w "%{http_code}" --max-time 10 "$(url)/api/attempts")" = 200 &&
	kill -TERM "$(cat srv.pid)" &&
	i=0 &&
	while [ ! -s srv.exit ]; do
		i=$((i + 1)) && if [ $i -gt 300 ]; then echo "still running 30 s after SIGTERM"; exit 1; fi &&
		sleep 0.1
	done &&
	{ test "$(cat srv.exit)" = 0 || { echo "exit $(cat srv.exit)"; cat srv.err; false; }; } &&
	if [ -s srv.err ]; then cat srv.err; false; fi
'

# a test that failed may have left it running
! alive 2>/dev/null || kill -TERM "$(cat srv.pid)"
test_done
