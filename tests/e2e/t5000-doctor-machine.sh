#!/bin/sh
# hotloop doctor without a target: one line per machine check, the exit code
# follows whether perf events work, and every problem names a remedy.
. "$(dirname "$0")/test-lib.sh"

if test_have_prereq PERF; then can=0; else can=3; fi

test_expect_code $can 'doctor exits 0 when perf events work, 3 when not' '
	hotloop doctor >out
'

test_expect_success 'every line is a status, a check name and a message' '
	hotloop doctor >out; test -s out &&
	! grep -v -E "^(ok|warn|fail) +[a-z_]+ +[^ ]" out
'

test_expect_success 'the machine checks are all there' '
	hotloop doctor >out
	for c in perf_events paranoid kernel_symbols sample_rate valgrind git perf; do
		expect_grep "^[a-z]* *$c " out || return 1
	done
'

test_expect_success 'perf_events line agrees with the exit code' '
	hotloop doctor >out; rc=$?
	if [ $rc -eq 0 ]; then expect_grep "^ok *perf_events" out
	else test $rc -eq 3 && expect_grep "^fail *perf_events" out; fi
'

test_expect_success 'the kernel samples check appears only when events work' '
	hotloop doctor >out
	if test_have_prereq PERF; then expect_grep "^[a-z]* *kernel_samples" out
	else ! grep -q kernel_samples out; fi
'

test_expect_success 'unprivileged: no kernel samples, remedy names the paranoid sysctl' '
	command -v setpriv >/dev/null || { echo "no setpriv: skipped"; return 0; }
	[ "$(id -u)" -eq 0 ] || { echo "not root: skipped"; return 0; }
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	[ "$paranoid" -ge 2 ] || { echo "paranoid $paranoid allows kernel samples: skipped"; return 0; }
	cp "$HOTLOOP" ./hl && chmod 755 . ./hl &&
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all ./hl doctor >out
	cat out
	expect_grep "^ok *paranoid\|^warn *paranoid.*perf_event_paranoid=1\|^fail *paranoid.*perf_event_paranoid=1" out &&
	if grep -q "^ok *perf_events" out; then
		expect_grep "^warn *kernel_samples.*sysctl kernel.perf_event_paranoid=1" out &&
		expect_grep "(unprivileged)" out
	fi
'

test_expect_success 'the sandbox: ok where bubblewrap makes one, else a warning that says what the loop does' '
	hotloop doctor --json >out.json &&
	status=$(jq -r ".checks[] | select(.name == \"sandbox\") | .status" out.json) &&
	if test_have_prereq SANDBOX; then test "$status" = ok; else test "$status" = warn; fi &&
	nobwrap=$(path_without bwrap) &&
	PATH=$nobwrap hotloop doctor >out &&
	expect_grep "^warn  *sandbox  *bubblewrap is not installed (apt-get install bubblewrap): hotloop loop refuses to run an agent without --no-sandbox" out
'

test_expect_code 2 'an unknown option is a usage error' '
	hotloop doctor --bogus
'

test_expect_success '--help prints the usage with the exit codes' '
	hotloop doctor --help >out &&
	expect_grep "usage: hotloop doctor \[--json\] \[-- CMD" out &&
	expect_grep "127" out
'

test_done
