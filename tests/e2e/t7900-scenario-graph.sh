#!/bin/sh
# graph.html in a real browser: the sample pages the unit test
# t-scenario-graph writes (HOTLOOP_GRAPH_OUT=DIR) are drawn by headless
# Chromium. Each panel gets its lines, the phases their names, nothing is
# logged to the console, and no hostile name becomes markup.
. "$(dirname "$0")/test-lib.sh"

UNIT=$(dirname "$HOTLOOP")/tests/t-scenario-graph
BROWSER=$(command -v chromium-headless-shell || command -v chromium || true)

# draw FILE: its DOM once the script ran in FILE.dom, the console's lines in FILE.console
draw() {
	timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --user-data-dir="$SCRATCH/.browser" \
		--window-size=1200,900 --enable-logging=stderr --v=0 --virtual-time-budget=2000 --dump-dom \
		"file://$SCRATCH/$1" >"$1.dom" 2>"$1.log" &&
	{ grep ":CONSOLE" "$1.log" >"$1.console" || true; } &&
	if [ -s "$1.console" ]; then cat "$1.console"; return 1; fi
}

# the panels and runs that have a line: "panel run" per line, sorted
lines_of() {
	grep -o 'class="series" data-panel="[^"]*" data-run="[0-9]"' "$1" |
	sed 's/.*data-panel="\([^"]*\)" data-run="\([0-9]\)"/\1 \2/' | sort -u
}

[ -x "$UNIT" ] || skip_all="$UNIT is not built (make unit)"

test_expect_success 'setup: the unit test writes the sample pages' '
	HOTLOOP_GRAPH_OUT=$SCRATCH "$UNIT" >unit.out 2>&1 || { cat unit.out; false; } &&
	for f in graph single empty hostile; do test -s $f.html || exit 1; done
'

if command -v node >/dev/null 2>&1; then
	test_expect_success 'the embedded script is valid JavaScript' '
		sed -n "/^<script>$/,/^<\/script>$/p" graph.html | sed "1d;\$d" >graph.js &&
		test -s graph.js &&
		node --check graph.js
	'
else
	test_skip 'the embedded script is valid JavaScript' 'node is not installed'
fi

[ -n "$skip_all" ] || [ -n "$BROWSER" ] || skip_all="neither chromium-headless-shell nor chromium is installed"

test_expect_success 'with an overlay: every panel has a line of each run, no console message' '
	draw graph.html &&
	expect_grep "data-drawn=\"8\"" graph.html.dom &&
	for p in cpu rss virt metric:events rate:events metric:dropped rate:dropped metric:queue_depth; do
		echo "$p 0" && echo "$p 1"
	done | sort >expect &&
	lines_of graph.html.dom >actual &&
	{ cmp -s expect actual || { diff expect actual; false; }; } &&
	! grep -q "NaN" graph.html.dom
'

test_expect_success 'the phases are named on top, with their mean CPU in each run' '
	expect_grep "class=\"phase-name idle\">idle</text>" graph.html.dom &&
	expect_grep "class=\"phase-name\">pressure</text>" graph.html.dom &&
	expect_grep "class=\"phase-name idle\">idle-2</text>" graph.html.dom &&
	test $(grep -o "CPU mean <tspan[^>]*>[0-9.]*%</tspan> / <tspan[^>]*>[0-9.]*%</tspan>" graph.html.dom | wc -l) = 3 &&
	expect_grep "<span class=\"legend-item\"><span class=\"swatch\"[^>]*></span>candidate</span>" graph.html.dom
'

test_expect_success 'one run, its last phase still running' '
	draw single.html &&
	expect_grep "data-drawn=\"8\"" single.html.dom &&
	! lines_of single.html.dom | grep -q " 1$" &&
	test $(lines_of single.html.dom | wc -l) = 8 &&
	expect_grep "running, CPU mean" single.html.dom
'

test_expect_success 'nothing sampled: three empty panels' '
	draw empty.html &&
	expect_grep "data-drawn=\"3\"" empty.html.dom &&
	test $(grep -o ">no samples<" empty.html.dom | wc -l) = 3 &&
	! grep -q "class=\"series\"" empty.html.dom
'

test_expect_success 'hostile names stay text' '
	draw hostile.html &&
	expect_grep "data-drawn=\"5\"" hostile.html.dom &&
	expect_grep "<h1 id=\"title\">&lt;b&gt;hostile&lt;/b&gt;</h1>" hostile.html.dom &&
	expect_grep "class=\"panel-title\">&lt;/script&gt;&lt;b&gt;x</text>" hostile.html.dom &&
	expect_grep "class=\"panel-title\">&lt;!--&lt;script&gt;</text>" hostile.html.dom &&
	! grep -q "<b>" hostile.html.dom
'

test_done
