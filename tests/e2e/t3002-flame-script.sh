#!/bin/sh
# hotloop flame: the embedded script, run under node on a small DOM built
# from the SVG (flame-script.js): zoom, search, details, and labels cut by
# the same rule as the C code.
. "$(dirname "$0")/test-lib.sh"

command -v node >/dev/null 2>&1 || skip_all="node is not installed"
run() { node "$TEST_DIR/flame-script.js" "$@"; }

test_expect_success 'setup' '
	hotloop flame "$DATA/flame/cpu.folded" -o cpu.svg &&
	printf "%s\n" \
		"main;a_rather_long_function_name_to_cut;leaf_with_a_long_name 80" \
		"main;short 5" "main;mid_sized_name_here 4" "main;x 1" "main;y_two 10" > names.folded &&
	hotloop flame names.folded -o names.svg
'

test_expect_success 'labels: the script cuts names as the C code does' '
	run names.svg > drawn &&
	run names.svg click:short unzoom > redrawn &&
	cmp drawn redrawn &&
	grep -q "^a_rather_long_function_name_to_cut|.*|a_rather_long_function_name_to_cut$" drawn &&
	grep -q "^mid_sized_name_here|.*|mid..$" drawn &&
	grep -q "^x|.*|$" drawn
'

test_expect_success 'click zooms: the frame fills the width, ancestors fade, others hide' '
	run cpu.svg click:run_loop > out &&
	grep -q "^run_loop|10.00|1180.00|shown|" out &&
	grep -q "^hot_spin|117.27|1072.73|shown|" out &&
	grep -q "^cold_path|10.00|107.27|shown|" out &&
	grep -q "^main|10.00|1180.00|faded|" out &&
	grep -q "^all|10.00|1180.00|faded|" out &&
	grep -q "^setup|.*|hidden|" out &&
	grep -q "^unzoom: shown" out
'

test_expect_success 'Reset Zoom, Escape and a click on "all" restore the graph' '
	run cpu.svg > before &&
	run cpu.svg click:hot_spin unzoom > a &&
	run cpu.svg click:hot_spin escape > b &&
	run cpu.svg click:hot_spin click:all > c &&
	cmp before a && cmp before b && cmp before c &&
	grep -q "^unzoom: hidden" a
'

test_expect_success 'Ctrl-F highlights matches and counts nested ones once' '
	run cpu.svg "find:run_loop|hot_spin" > out &&
	grep -q "^run_loop|.*|rgb(230,0,230)|" out &&
	grep -q "^hot_spin|.*|rgb(230,0,230)|" out &&
	! grep -q "^cold_path|.*|rgb(230,0,230)|" out &&
	grep -q "^matched: Matched: 99.00% (2 frames)" out &&
	grep -q "^search: Reset Search" out
'

test_expect_success 'the Search control searches, and a second click resets' '
	run cpu.svg > before &&
	run cpu.svg "button:^(cold|set)" > out &&
	grep -q "^matched: Matched: 10.00% (2 frames)" out &&
	run cpu.svg "button:cold" "button:" > reset &&
	cmp before reset
'

test_expect_success 'Escape clears the search' '
	run cpu.svg > before &&
	run cpu.svg find:hot escape > after &&
	cmp before after
'

test_expect_success 'an invalid regular expression is reported, not thrown' '
	run cpu.svg "find:(" > out &&
	grep -q "^alert: Invalid regular expression" out &&
	grep -q "^search: Search" out
'

test_expect_success 'hover shows the details' '
	run cpu.svg hover:hot_spin > out &&
	grep -q "^details: hot_spin (90 samples, 90.00%)$" out
'

test_expect_success 'search keeps differential colours to restore' '
	hotloop flame "$DATA/flame/diff.folded" --diff "$DATA/flame/diff.base" -o diff.svg &&
	run diff.svg > before &&
	run diff.svg find:grew escape > after &&
	cmp before after &&
	grep -q "^grew|.*|rgb(255,40,40)|" before
'

test_done
