#!/bin/sh
# hotloop record on a single-threaded program: the hot function on top, the
# profile's shape (sample types, labels, mappings), the command's exit
# status, and the shell-like errors for commands that cannot run.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-profile.sh"

test_expect_code 2 'no command and no pid is a usage error' '
	hotloop record -o x.pb.gz
'

test_expect_code 2 'a command and -p together is a usage error' '
	hotloop record -p 1 -- true
'

test_expect_code 2 'an unknown call graph mode is a usage error' '
	hotloop record --call-graph lbr -- true
'

test_skip_unless PERF 'perf events not permitted here (run as root or lower kernel.perf_event_paranoid)'

test_expect_success 'record cpuhog: default output, one summary line' '
	hotloop record -- "$WORKLOADS/cpuhog" 0.3 2>err &&
	test -s hotloop.pb.gz &&
	gzip -t hotloop.pb.gz &&
	test $(wc -l <err) -eq 1 &&
	expect_grep "^hotloop record: [0-9][0-9]* samples, [0-9][0-9]* lost, [0-9.]* s, wrote .hotloop.pb.gz." err
'

test_skip_unless GO 'go tool pprof is needed to read profiles back'

test_expect_success 'hot_spin has the most self time' '
	hotloop record -o cpu.pb.gz -- "$WORKLOADS/cpuhog" 0.5 &&
	top=$(pp_top_self cpu.pb.gz) &&
	test "$top" = hot_spin || { echo "top self: $top"; pp_top_self cpu.pb.gz; exit 1; }
'

test_expect_success 'hot_spin is called from run_loop or main' '
	pp_calls cpu.pb.gz run_loop hot_spin || pp_calls cpu.pb.gz main hot_spin
'

test_expect_success 'sample types, period and labels' '
	pp_raw cpu.pb.gz >raw &&
	expect_grep "^PeriodType: cpu nanoseconds" raw &&
	expect_grep "^Period: 1001001$" raw &&
	expect_grep "^samples/count cpu/nanoseconds" raw &&
	expect_grep "comm:\[cpuhog\]" raw &&
	expect_grep "pid:\[[0-9]*\] tid:\[[0-9]*\]" raw &&
	expect_grep "^Duration: " raw
'

test_expect_success 'the executable mapping has its file and build id' '
	exe=$(cd "$WORKLOADS" && pwd)/cpuhog &&
	id=$(readelf -n "$exe" | sed -n "s/.*Build ID: *//p") &&
	test -n "$id" &&
	expect_grep "^[0-9]*: 0x[0-9a-f]*/0x[0-9a-f]*/0x[0-9a-f]* $exe $id" raw
'

# addresses are compared as zero-padded hex strings (no 64-bit awk math)
test_expect_success 'every location lies in its mapping range' '
	awk "
		function pad(h) { h = substr(h, 3); while (length(h) < 16) h = \"0\" h; return h }
		/^Locations/ { sec = 1; next }
		/^Mappings/ { sec = 2; next }
		sec == 1 && \$1 ~ /^[0-9]+:\$/ { n++; addr[n] = pad(\$2); m[n] = substr(\$3, 3) }
		sec == 2 && \$1 ~ /^[0-9]+:\$/ {
			split(\$2, r, \"/\"); id = substr(\$1, 1, length(\$1) - 1)
			lo[id] = pad(r[1]); hi[id] = pad(r[2])
		}
		END {
			for (i = 1; i <= n; i++)
				if (addr[i] \"\" < lo[m[i]] \"\" || addr[i] \"\" >= hi[m[i]] \"\") {
					print \"location\", addr[i], \"outside mapping\", m[i]; bad = 1
				}
			exit bad
		}" raw
'

test_expect_code 7 'the exit status of the command passes through' '
	hotloop record -o st.pb.gz -- "$WORKLOADS/cpuhog" 0.1 7
'

test_expect_code 127 'a missing command exits 127 like a shell' '
	hotloop record -o nf.pb.gz -- ./no-such-program 2>err
	rc=$?
	expect_grep "cannot run .\./no-such-program.: command not found" err &&
	test ! -e nf.pb.gz || exit 99
	exit $rc
'

test_expect_code 126 'a file that is not executable exits 126' '
	echo "echo hi" >script.sh &&
	chmod 644 script.sh &&
	hotloop record -o ne.pb.gz -- ./script.sh 2>err
	rc=$?
	expect_grep "cannot run .\./script.sh.: Permission denied" err || exit 99
	exit $rc
'

test_expect_code 143 'a command killed by a signal exits 128+N' '
	hotloop record -o sig.pb.gz -- sh -c "kill -TERM \$\$" 2>err
	rc=$?
	test -s sig.pb.gz || exit 99; exit $rc
'

test_done
