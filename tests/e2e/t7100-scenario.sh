#!/bin/sh
# scenario: a tiny service (tests/workloads/svc.c) under idle -> pressure ->
# idle: CPU under pressure above idle, metrics read, a leaking variant told
# from a clean one, the files and the JSON summary; every bad input (no
# start, never ready, an early exit, a failed load, a taken port, junk
# metric lines); Ctrl-C, SIGTERM and kill -9 leave no process behind and a
# readable timeline. Every test checks that nothing of the scenario is left.
. "$(dirname "$0")/test-lib.sh"

SVC=$WORKLOADS/svc
# each test's processes carry a tag of their own: svc ignores the extra word
left() { pgrep -f "svc .*tag-$1" >/dev/null 2>&1; }
none_left() {
	for i in 1 2 3 4 5 6 7 8 9 10; do left "$1" || return 0; sleep 0.2; done
	echo "left behind:"; pgrep -af "svc .*tag-$1"; return 1
}

test_expect_success 'setup: hotloop.conf with scenarios' '
	cat >hotloop.conf <<-EOF
	[workload "w"]
		run = true
	[scenario "pressure"]
		start = $SVC serve {port} tag-basic
		ready = tcp {port}
		ready-timeout = 10s
		phase = idle 1s
		phase = pressure 2s: $SVC load {port} 4000 tag-basic
		phase = idle 1s
		interval = 100ms
		stop = TERM 5s
	[scenario "leak"]
		start = $SVC serve {port} --leak tag-leak
		ready = log listening on
		phase = idle 1s
		phase = pressure 2s: $SVC load {port} 6000 tag-leak
		phase = idle 1s
	[scenario "clean"]
		start = $SVC serve {port} tag-clean
		ready = tcp {port}
		phase = idle 1s
		phase = pressure 2s: $SVC load {port} 6000 tag-clean
		phase = idle 1s
	[scenario "warm"]
		start = $SVC serve {port} --warm tag-warm
		ready = tcp {port}
		phase = idle 1s
		phase = pressure 2s: $SVC load {port} 6000 tag-warm
		phase = idle 1s
	[scenario "no-start"]
		start = sh -c "echo starting up;echo bad config >&2;exit 3" tag-nostart
		ready = tcp {port}
		phase = idle 1s
	[scenario "never-ready"]
		start = $SVC serve 1 tag-never
		ready = file never-there
		ready-timeout = 1s
		phase = idle 1s
	[scenario "dies"]
		start = sh -c "$SVC serve {port} tag-dies & sleep 1.5;kill -SEGV \\\$!;wait \\\$!" tag-dies
		ready = log listening
		phase = idle 5s
	[scenario "bad-load"]
		start = $SVC serve {port} tag-badload
		ready = tcp {port}
		phase = pressure 3s: sh -c "echo connecting;exit 2" tag-badload
	[scenario "taken"]
		start = $SVC serve {port} tag-taken
		port = 45871
		phase = idle 1s
	[scenario "junk"]
		start = $SVC serve {port} --junk tag-junk
		ready = tcp {port}
		phase = idle 1s
	[scenario "long"]
		start = $SVC serve {port} tag-long
		ready = tcp {port}
		phase = idle 1s
		phase = pressure 30s: $SVC load {port} 2000 tag-long
		phase = idle 1s
	[scenario "polled"]
		start = $SVC serve {port} tag-polled
		ready = cmd $SVC load {port} 1 0.05 tag-polled
		phase = idle 2.5s
		metrics = cmd cat polled.txt
	[scenario "http"]
		start = python3 -m http.server {port} --bind 127.0.0.1 --directory web
		ready = tcp {port}
		phase = idle 2.5s
		metrics = http http://127.0.0.1:{port}/metrics.json
	[scenario "until"]
		start = $SVC serve {port} tag-until
		ready = tcp {port}
		phase = pressure until-exit: $SVC load {port} 3000 1.5 tag-until
		phase = idle 1s
	EOF
	hotloop config >/dev/null
'

test_expect_success 'pressure: CPU above idle, events read, files written' '
	test_when_finished "pkill -9 -f tag-basic" &&
	hotloop scenario pressure -o out >table.txt 2>err.txt &&
	none_left basic &&
	for f in timeline.json timeline.csv graph.html summary.json service.log; do
		test -s out/$f || { echo "no $f"; exit 1; }
	done &&
	expect_grep "^pressure .*(judged)" table.txt &&
	expect_grep "^memory: RSS .* it returned to its level" table.txt &&
	expect_grep "^sampler: .* samples every 0.1 s" table.txt &&
	jq -e "
		(.scenario == \"pressure\") and (.outcome == \"done\") and (.error == null) and
		(.judge == \"pressure\") and ([.phases[].name] == [\"idle\", \"pressure\", \"idle-2\"]) and
		(.phases[1].cpu_pct.mean > .phases[0].cpu_pct.mean + 1) and
		(.phases[1].cpu_pct.mean > .phases[2].cpu_pct.mean + 1) and
		(.phases[1].cpu_pct | (.p50 <= .p95 and .p95 <= .max)) and
		(.phases[1].cpu_machine_pct.mean > 0) and
		(.phases[1].metrics.events.rate_per_s > 1000) and
		(.phases[1].metrics.sent.total > 4000) and
		(.phases[0].metrics.events.total == 0) and
		(.phases[1].rss_kb | (.start > 0 and .end > 0 and .max >= .start)) and
		(.phases[1].vsz_kb.max > 0) and (.phases[1].threads >= 1) and
		(.leak.verdict == \"returned\") and (.leak.rss_before_kb > 0) and
		(.service.status == {exit: 0}) and (.service.killed_after_grace == false) and
		(.sampler.samples >= 30) and (.sampler.cpu_pct < 5) and
		(.files.graph | endswith(\"out/graph.html\"))
	" out/summary.json >/dev/null &&
	jq -e "
		(.phases | length == 3) and (.points | length >= 30) and
		(.points | all(.cpu_pct >= 0 and .rss_kb >= 0 and .threads >= 0)) and
		(.points[-1] | has(\"ctx_voluntary\") and has(\"read_bytes\") and has(\"major_faults\") and has(\"psi_cpu_pct\")) and
		(.metrics.events | length > 5) and (.malformed_metric_lines == 0)
	" out/timeline.json >/dev/null &&
	head -1 out/timeline.csv | grep -q "^t,phase,cpu_pct," &&
	test $(grep -c ",pressure," out/timeline.csv) -ge 15
'

test_expect_success '--json and the default directory under .hotloop/scenarios/NAME/' '
	test_when_finished "pkill -9 -f tag-basic" &&
	hotloop scenario pressure --json >doc.json 2>/dev/null &&
	none_left basic &&
	dir=$(jq -r .files.summary doc.json | xargs dirname) &&
	case "$dir" in */.hotloop/scenarios/pressure/2*) ;; *) echo "dir $dir"; exit 1 ;; esac &&
	jq -e "(.phases[1] | has(\"name\") and has(\"start_s\") and has(\"end_s\") and has(\"cpu_pct\") and
		has(\"cpu_machine_pct\") and has(\"rss_kb\") and has(\"vsz_kb\") and has(\"threads\") and has(\"metrics\")) and
		(.leak | has(\"rss_before_kb\") and has(\"rss_after_kb\") and has(\"verdict\")) and
		(.files | type == \"object\")" doc.json >/dev/null &&
	jq -S "del(.files)" doc.json >a && jq -S "del(.files)" "$dir/summary.json" >b && cmp a b
'

test_expect_success '--overlay: a second run laid over the first in graph.html; a bad overlay costs no run' '
	test_when_finished "pkill -9 -f tag-basic" &&
	hotloop scenario pressure -o second --overlay out >/dev/null 2>&1 &&
	none_left basic &&
	grep -q "\"overlay" second/graph.html &&
	! cmp -s out/graph.html second/graph.html &&
	{ hotloop scenario pressure -o third --overlay nowhere >/dev/null 2>err.txt; test $? -eq 1; } &&
	expect_grep "cannot read the overlay .nowhere/timeline.json." err.txt &&
	test ! -e third
'

if test_have_prereq PERF; then
test_expect_success 'profile = cpu (--profile cpu): the judged phase recorded, the handler on top' '
	test_when_finished "pkill -9 -f tag-basic" &&
	hotloop scenario pressure --profile cpu -o prof >prof.txt 2>/dev/null &&
	none_left basic &&
	expect_grep "^profile: prof/profile.pb.gz, the CPU of the service in phase .pressure." prof.txt &&
	jq -e ".profile.error == null and (.files.profile | endswith(\"prof/profile.pb.gz\"))" prof/summary.json >/dev/null &&
	hotloop report prof/profile.pb.gz --json >rep.json &&
	jq -e ".rows[0].name == \"handle_event\"" rep.json >/dev/null
'
else
	test_skip 'profile = cpu (--profile cpu): the judged phase recorded, the handler on top' 'perf events are not available to this user'
fi

test_expect_success 'a leaking service is told from a clean one, and from one that keeps a cache' '
	test_when_finished "pkill -9 -f tag-leak; pkill -9 -f tag-clean; pkill -9 -f tag-warm" &&
	hotloop scenario leak -o leak --json >leak.json 2>/dev/null &&
	hotloop scenario clean -o clean --json >clean.json 2>/dev/null &&
	hotloop scenario warm -o warm >warm.txt 2>/dev/null &&
	none_left leak && none_left clean && none_left warm &&
	jq -e ".leak.verdict == \"grew\" and .leak.rss_after_kb > .leak.rss_before_kb + 1024 and
		.leak.rss_end_pressure_kb > .leak.rss_mid_pressure_kb" leak.json >/dev/null &&
	jq -e ".leak.verdict == \"returned\"" clean.json >/dev/null &&
	jq -e ".leak.verdict == \"held\" and .leak.rss_after_kb > .leak.rss_before_kb + 3000" warm/summary.json >/dev/null &&
	expect_grep "^memory: .*it kept what it took early in the pressure, but stopped growing" warm.txt
'

test_expect_success 'until-exit: the phase ends when its load does' '
	test_when_finished "pkill -9 -f tag-until" &&
	hotloop scenario until -o until --json >until.json 2>/dev/null &&
	none_left until &&
	jq -e ".phases[0] | (.end_s - .start_s) > 1.2 and (.end_s - .start_s) < 6 and .metrics.sent.total > 3000" until.json >/dev/null
'

test_expect_success 'ready = cmd; metrics = cmd: NAME=VALUE lines and HOTLOOP_METRIC lines, polled' '
	test_when_finished "pkill -9 -f tag-polled" &&
	printf "depth=3\nHOTLOOP_METRIC conns=2 queue=5\nnot a metric\n" >polled.txt &&
	hotloop scenario polled -o polled --json >polled.json 2>/dev/null &&
	none_left polled &&
	jq -e ".outcome == \"done\" and .phases[0].metrics.depth.mean == 3 and .phases[0].metrics.queue.mean == 5 and
		.phases[0].metrics.conns.n >= 2" polled.json >/dev/null
'

if command -v python3 >/dev/null; then
test_expect_success 'metrics = http: a JSON object of numbers, fetched each second' '
	test_when_finished "pkill -9 -f \"http.server.*--directory web\"" &&
	mkdir -p web && printf "{\"queue_depth\": 7, \"events\": 120, \"name\": \"x\"}" >web/metrics.json &&
	hotloop scenario http -o http --json >http.json 2>/dev/null &&
	jq -e ".outcome == \"done\" and .phases[0].metrics.queue_depth.mean == 7 and .phases[0].metrics.events.n >= 2 and
		(.phases[0].metrics | has(\"name\") | not)" http.json >/dev/null
'
else
	test_skip 'metrics = http: a JSON object of numbers, fetched each second' 'no python3 for a web server'
fi

test_expect_success 'malformed metric lines are counted and ignored, with a warning' '
	test_when_finished "pkill -9 -f tag-junk" &&
	hotloop scenario junk -o junk >junk.txt 2>/dev/null &&
	none_left junk &&
	expect_grep "^warning: [0-9]* malformed metric lines ignored" junk.txt &&
	jq -e ".malformed_metric_lines > 0 and (.metrics.events | length > 0)" junk/timeline.json >/dev/null
'

test_expect_code 1 'a service that cannot start: its status and last lines; the timeline stays' '
	test_when_finished "pkill -9 -f tag-nostart" &&
	hotloop scenario no-start -o nostart >out.txt 2>err.txt; rc=$?
	none_left nostart || exit 99
	expect_grep "the service exited before it was ready (exit status 3); its last lines:" err.txt || exit 99
	expect_grep "^    bad config" err.txt || exit 99
	jq -e ".outcome == \"exited\" and (.phases | length == 0)" nostart/summary.json >/dev/null || exit 99
	jq -e ".points | type == \"array\"" nostart/timeline.json >/dev/null || exit 99
	exit $rc
'

test_expect_code 1 'never ready: a timeout naming the probe' '
	test_when_finished "pkill -9 -f tag-never" &&
	hotloop scenario never-ready -o never 2>err.txt; rc=$?
	none_left never || exit 99
	expect_grep "not ready after 1 s: the probe .file never-there. never succeeded" err.txt || exit 99
	jq -e ".outcome == \"not-ready\"" never/summary.json >/dev/null || exit 99
	exit $rc
'

test_expect_code 1 'a service that dies mid-phase: the signal, the phase, the partial timeline' '
	test_when_finished "pkill -9 -f tag-dies" &&
	hotloop scenario dies -o dies 2>err.txt; rc=$?
	none_left dies || exit 99
	expect_grep "the service exited during phase .idle. (exit status 139)" err.txt || exit 99
	jq -e ".outcome == \"exited\" and (.phases | length == 1) and .phases[0].samples > 3" dies/summary.json >/dev/null || exit 99
	exit $rc
'

test_expect_code 1 'a failed load: the phase and the command' '
	test_when_finished "pkill -9 -f tag-badload" &&
	hotloop scenario bad-load -o badload 2>err.txt; rc=$?
	none_left badload || exit 99
	expect_grep "phase .pressure.: the load .sh -c \"echo connecting;exit 2\" tag-badload. failed (exit status 2)" err.txt || exit 99
	expect_grep "^    connecting" err.txt || exit 99
	jq -e ".outcome == \"load-failed\"" badload/summary.json >/dev/null || exit 99
	exit $rc
'

test_expect_code 1 'a taken port is named' '
	test_when_finished "pkill -9 -f tag-holder; pkill -9 -f tag-taken" &&
	($SVC serve 45871 tag-holder >/dev/null 2>&1 &) &&
	for i in 1 2 3 4 5 6 7 8 9 10; do (exec 3<>/dev/tcp/127.0.0.1/45871) 2>/dev/null && break; sleep 0.2; done
	hotloop scenario taken -o taken 2>err.txt; rc=$?
	none_left taken || exit 99
	expect_grep "port 45871 is taken: something else listens on 127.0.0.1:45871" err.txt || exit 99
	exit $rc
'

test_expect_code 1 'an unknown scenario names the configured ones; no name is a usage error' '
	hotloop scenario nope 2>err.txt; rc=$?
	expect_grep "unknown scenario .nope. in .*: the configured ones are .pressure., .leak." err.txt || exit 99
	hotloop scenario 2>/dev/null; [ $? -eq 2 ] || exit 99
	exit $rc
'

# Interrupted mid-pressure: hotloop stops the load and the service, writes
# what it has and exits 130; killed with -9, the guards take everything down.
interrupt() {
	"$HOTLOOP" scenario long -o "$2" >/dev/null 2>"$2.err" &
	pid=$!
	for i in $(seq 1 50); do grep -q "phase pressure" "$2.err" 2>/dev/null && break; sleep 0.1; done
	sleep 0.5
	left long && touch "$2.alive"
	kill -"$1" $pid
	wait $pid
}

test_expect_success 'Ctrl-C (SIGINT): exit 130, nothing left, the timeline readable' '
	test_when_finished "pkill -9 -f tag-long" &&
	interrupt INT int; rc=$?
	[ $rc -eq 130 ] || { echo "exit $rc"; cat int.err; exit 1; }
	none_left long &&
	jq -e ".outcome == \"interrupted\" and (.phases | length == 2)" int/summary.json >/dev/null &&
	test $(grep -c ",pressure," int/timeline.csv) -ge 3
'

test_expect_success 'SIGTERM: exit 130, nothing left' '
	test_when_finished "pkill -9 -f tag-long" &&
	interrupt TERM term; rc=$?
	[ $rc -eq 130 ] || { echo "exit $rc"; exit 1; }
	none_left long &&
	jq -e ".outcome == \"interrupted\"" term/summary.json >/dev/null
'

test_expect_success 'kill -9: the service and the load die with hotloop; the CSV is readable' '
	test_when_finished "pkill -9 -f tag-long" &&
	interrupt KILL killed
	test -e killed.alive || { echo "the scenario was not running when hotloop was killed"; exit 1; }
	none_left long &&
	head -1 killed/timeline.csv | grep -q "^t,phase," &&
	test $(grep -c ",idle," killed/timeline.csv) -ge 5 &&
	awk -F, "NR > 1 && NF != 21 { bad = 1 } END { exit bad }" killed/timeline.csv
'

test_done
