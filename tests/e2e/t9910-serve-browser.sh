#!/bin/sh
# The dashboard in a real browser: headless Chromium, driven by
# puppeteer-core (serve-browser.js), over `hotloop serve` of a fixture
# project. Every page draws the fixture's loops with nothing on the
# console; an attempt and a line of activity written to the store while a
# page is open appear within 2 s of the commit; the snapshot shows the
# same from file://. Screenshots of every page go to
# $HOTLOOP_ARTIFACTS/serve (default build/test-artifacts/serve).
. "$(dirname "$0")/test-lib.sh"

UNIT=$(dirname "$HOTLOOP")/tests/t-dashboard
BROWSER=$(command -v chromium-headless-shell || true)
NPM=$ROOT/build/npm/node_modules
SHOTS=${HOTLOOP_ARTIFACTS:-$ROOT/build/test-artifacts}/serve
FIX=$SCRATCH/project

if ! command -v node >/dev/null 2>&1; then
	skip_all="node is not installed (make deps installs nodejs)"
elif [ ! -f "$NPM/puppeteer-core/package.json" ]; then
	skip_all="build/npm lacks puppeteer-core (make deps installs it)"
elif [ -z "$BROWSER" ]; then
	skip_all="chromium-headless-shell is not installed (make deps installs it)"
elif ! command -v sqlite3 >/dev/null 2>&1; then
	skip_all="the sqlite3 program is not installed (make deps installs it)"
elif [ ! -x "$UNIT" ]; then
	skip_all="$UNIT is not built (make unit)"
fi

# the server, stopped however the script ends (the live test starts
# another in its place: server.pid names the one up)
trap '[ ! -s "$SCRATCH/server.pid" ] || kill "$(cat "$SCRATCH/server.pid")" 2>/dev/null
	[ -n "$KEEP_SCRATCH" ] || rm -rf "$SCRATCH"' EXIT

q() { sqlite3 -batch -noheader "$FIX/.hotloop/hotloop.db" "$1"; }

test_expect_success 'setup: the fixture project, its snapshot, the server' '
	HOTLOOP_DASH_FIXTURE=$FIX "$UNIT" >unit.out 2>&1 || { cat unit.out; false; } &&
	test -s "$FIX/.hotloop/hotloop.db" &&
	(cd "$FIX" && "$HOTLOOP" serve --snapshot "$SCRATCH/snap") >snap.out &&
	test -s snap/index.html
'

# the server outlives the test that starts it: started here, not in a subshell
if [ -z "$skip_all" ]; then
	: >serve.out
	(cd "$FIX" && exec "$HOTLOOP" serve --port 0 --quiet) >serve.out 2>serve.err &
	server_pid=$!
	echo $server_pid >server.pid
	i=0
	while [ "$(wc -l <serve.out)" -lt 2 ] && [ $i -lt 200 ] && kill -0 $server_pid 2>/dev/null; do
		sleep 0.05; i=$((i + 1))
	done
	URL=$(sed -n 2p serve.out)
fi

test_expect_success 'setup: what the fixture holds, from the store' '
	case "$URL" in http://127.0.0.1:[0-9]*/) ;; *) cat serve.out serve.err; false ;; esac &&
	kept=$(q "SELECT id FROM attempts WHERE verdict = '\''keep'\'' AND commit_sha IS NOT NULL AND kb_slug IS NOT NULL ORDER BY id LIMIT 1") &&
	rejected=$(q "SELECT id FROM attempts WHERE verdict = '\''reject'\'' ORDER BY id LIMIT 1") &&
	test -n "$kept" && test -n "$rejected" &&
	slug=$(q "SELECT kb_slug FROM attempts WHERE id = $kept") &&
	"$HOTLOOP" kb list --json --dir "$FIX/kb" >kb.json &&
	title=$(jq -r --arg s "$slug" ".attempts[] | select(.slug == \$s) | .title" kb.json) &&
	test -n "$title" &&
	# a word of its title that not every entry has
	word=$(jq -r --arg s "$slug" "[.attempts[] | .title | ascii_downcase] as \$all |
		.attempts[] | select(.slug == \$s) | .title | ascii_downcase | split(\" \") |
		map(select(length > 3) as \$w | select([\$all[] | select(contains(\$w))] | length < (\$all | length))) |
		sort_by(-length) | .[0] // empty" kb.json) &&
	test -n "$word" &&
	# the newest run with a timeline, inside .hotloop/ (not through a link out)
	tl=$(cd "$FIX/.hotloop/scenarios" && find . -mindepth 3 -maxdepth 3 -type f -name timeline.json | sort -t/ -k3r | head -n 1) &&
	scenario=$(echo "$tl" | cut -d/ -f2) && run=$(echo "$tl" | cut -d/ -f3) &&
	test -n "$scenario" && test -n "$run" &&
	# the runs the dashboard may show: real directories, none reached through a link out
	runs=$(find "$FIX/.hotloop/scenarios" -mindepth 2 -maxdepth 2 -type d | wc -l) &&
	# the kb entries likewise: neither the directory nor its report.md a link
	kb_entries=$(jq -r ".attempts[].slug" kb.json | while read -r e; do
		test -L "$FIX/kb/$e" || test -L "$FIX/kb/$e/report.md" || echo "$e"; done | wc -l) &&
	sum="$FIX/.hotloop/scenarios/$scenario/$run/summary.json" &&
	tl="$FIX/.hotloop/scenarios/$scenario/$run/timeline.json" &&
	run_id=$(q "SELECT id FROM runs WHERE attempt_id = $kept AND kind = '\''compare'\'' ORDER BY id LIMIT 1") &&
	w1=$(q "SELECT workload FROM measurements WHERE run_id = $run_id ORDER BY id LIMIT 1") &&
	profile=$(q "SELECT max(id) FROM runs WHERE profile_path IS NOT NULL AND workload =
		(SELECT workload FROM runs WHERE id = $run_id)") &&
	test -n "$profile" &&
	# the profiles the server must refuse to read: gone, or not inside .hotloop/
	state=$(realpath "$FIX/.hotloop") &&
	refused=$(q "SELECT id || '\''|'\'' || profile_path FROM runs WHERE profile_path IS NOT NULL" |
		while IFS="|" read -r id p; do
			real=$(realpath -e "$p" 2>/dev/null) &&
			case $real in "$state"/*) test -f "$real" ;; *) false ;; esac || echo "$id"
		done | jq -s -c .) &&
	jq -n --arg npm "$NPM" --arg browser "$BROWSER" --arg url "$URL" --arg snap "$SCRATCH/snap/index.html" \
		--arg db "$FIX/.hotloop/hotloop.db" --arg sqlite3 "$(command -v sqlite3)" --arg shots "$SHOTS" \
		--arg profile "$SCRATCH/.browser" --arg hotloop "$HOTLOOP" --arg project "$FIX" \
		--arg server_pid "$SCRATCH/server.pid" --arg server_out "$SCRATCH/serve.out" \
		--arg server_err "$SCRATCH/serve.err" \
		--argjson loops "$(q "SELECT count(*) FROM loops")" \
		--argjson attempts "$(q "SELECT count(*) FROM attempts")" \
		--argjson verdicts "$(q "SELECT json_group_array(v) FROM (SELECT coalesce(verdict, '\''none'\'') AS v FROM attempts ORDER BY v)")" \
		--argjson activity "$(q "SELECT count(*) FROM activity")" \
		--argjson last_activity "$(q "SELECT max(id) FROM activity")" \
		--argjson gain_workloads "$(q "SELECT count(DISTINCT m.workload) FROM attempts a
			JOIN runs r ON r.attempt_id = a.id AND r.kind = '\''compare'\''
			JOIN measurements m ON m.run_id = r.id AND m.warmup = 0 AND m.side IS NOT NULL
			WHERE a.commit_sha IS NOT NULL")" \
		--argjson kept "$kept" --arg kept_fn "$(q "SELECT function FROM attempts WHERE id = $kept")" \
		--arg kept_commit "$(q "SELECT commit_sha FROM attempts WHERE id = $kept")" \
		--argjson kept_dots "$(q "SELECT count(*) FROM measurements WHERE run_id = $run_id AND warmup = 0
			AND workload = '\''$w1'\'' AND side IS NOT NULL AND value IS NOT NULL")" \
		--argjson rejected "$rejected" --argjson latest "$profile" --argjson refused "$refused" \
		--argjson rejected_reasons "$(q "SELECT json_array_length(reasons_json) FROM attempts WHERE id = $rejected")" \
		--arg scenario "$scenario" --arg run "$run" --argjson runs "$runs" \
		--argjson phases "$(jq ".phases | length" "$sum")" \
		--argjson metrics "$(jq ".metrics // {} | length" "$tl")" \
		--argjson kb_entries "$kb_entries" \
		--arg slug "$slug" --arg title "$title" --arg word "$word" \
		"{npm: \$npm, browser: \$browser, url: \$url, snapshot: \$snap, db: \$db, sqlite3: \$sqlite3,
		  shots: \$shots, profile: \$profile, hotloop: \$hotloop, project: \$project,
		  server_pid: \$server_pid, server_out: \$server_out, server_err: \$server_err, expect: {
			loops: \$loops, attempts: \$attempts, verdicts: \$verdicts, activity: \$activity,
			last_activity: \$last_activity, gain_workloads: \$gain_workloads,
			kept: {id: \$kept, function: \$kept_fn, commit: \$kept_commit, dots: \$kept_dots, kb: true},
			rejected: {id: \$rejected, reasons: \$rejected_reasons},
			profile: \$latest, refused: \$refused,
			scenario: {name: \$scenario, run: \$run, phases: \$phases, metrics: \$metrics},
			scenario_runs: \$runs,
			kb: {entries: \$kb_entries, slug: \$slug, title: \$title, word: \$word}}}" >config.json &&
	rm -rf "$SHOTS" && mkdir -p "$SHOTS"
'

[ -n "$skip_all" ] || [ -s config.json ] || skip_all="the setup failed"

# browse MODE: serve-browser.js in that mode; its output in MODE.out
browse() {
	timeout 300 node "$TEST_DIR/serve-browser.js" "$1" config.json >"$1.out" 2>&1
	rc=$?
	cat "$1.out"
	return $rc
}

test_expect_success 'every page shows the fixture, with nothing on the console' '
	browse pages
'

test_expect_success 'the snapshot from file://: the same pages, nothing but file:// loaded' '
	browse snapshot
'

test_expect_success 'an attempt and a line of activity written to the store appear within 2 s; after a restart of the server, what came meanwhile' '
	browse live &&
	grep "^commit to DOM" live.out
'

test_expect_success 'the server is still up and served no error' '
	kill -0 "$(cat server.pid)" && test ! -s serve.err
'

if [ -z "$skip_all" ]; then
	sed -n "s/^commit to DOM/# commit to DOM/p" live.out 2>/dev/null
	say "# screenshots: $SHOTS"
fi
test_done
