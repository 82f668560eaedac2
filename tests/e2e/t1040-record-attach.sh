#!/bin/sh
# -p PID attaches to a running process (all its threads) until --duration
# or SIGINT; SIGINT during `record -- CMD` goes to the command and the
# profile is still written.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-profile.sh"

test_skip_unless PERF 'perf events not permitted here (run as root or lower kernel.perf_event_paranoid)'
test_skip_unless GO 'go tool pprof is needed to read profiles back'

test_expect_success '-p with --duration profiles a running cpuhog' '
	"$WORKLOADS/cpuhog" 5 &
	pid=$! &&
	test_when_finished "kill $pid" &&
	sleep 0.2 &&
	hotloop record -p $pid --duration 0.5 -o att.pb.gz 2>err &&
	expect_grep "wrote .att.pb.gz." err &&
	test "$(pp_top_self att.pb.gz)" = hot_spin &&
	test "$(pp_label_values att.pb.gz hot_spin pid)" = "$pid" &&
	kill -0 $pid
'

test_expect_success '-p follows every thread of the process' '
	"$WORKLOADS/threads" 5 &
	pid=$! &&
	test_when_finished "kill $pid" &&
	sleep 0.2 &&
	hotloop record -p $pid --duration 0.5 -o attt.pb.gz &&
	pp_label_values attt.pb.gz thread_spin tid >tids &&
	test $(wc -l <tids) -eq 2
'

test_expect_success '-p stops at SIGINT and still writes the profile' '
	"$WORKLOADS/cpuhog" 5 &
	pid=$! &&
	test_when_finished "kill $pid" &&
	sleep 0.2 &&
	"$HOTLOOP" record -p $pid -o int.pb.gz 2>err &
	rec=$! &&
	sleep 0.5 &&
	kill -INT $rec &&
	wait $rec &&
	test "$(pp_top_self int.pb.gz)" = hot_spin
'

test_expect_success '-p stops when the process exits' '
	"$WORKLOADS/cpuhog" 0.5 &
	pid=$! &&
	hotloop record -p $pid -o gone.pb.gz &&
	test -s gone.pb.gz
'

test_expect_code 1 '-p of a process that does not exist fails' '
	sh -c "exit 0" & dead=$! && wait $dead
	hotloop record -p $dead -o no.pb.gz 2>err
	rc=$?
	expect_grep "no such process" err && test ! -e no.pb.gz || exit 99; exit $rc
'

# A background job of a non-interactive shell starts with SIGINT ignored,
# and the command would inherit that: env restores the default for it.
test_expect_code 130 'SIGINT to record -- CMD is passed on; profile written' '
	"$HOTLOOP" record -o cint.pb.gz -- \
		env --default-signal=INT "$WORKLOADS/cpuhog" 5 2>err &
	rec=$! &&
	sleep 0.5 &&
	kill -INT $rec
	wait $rec
	rc=$?
	test "$(pp_top_self cint.pb.gz)" = hot_spin || exit 99; exit $rc
'

test_expect_code 143 '--duration with a command ends it with SIGTERM' '
	hotloop record --duration 0.3 -o dur.pb.gz -- "$WORKLOADS/cpuhog" 5
	rc=$?
	test -s dur.pb.gz || exit 99; exit $rc
'

# Refusal is exit 3 with the reason; an unprivileged user attaching to
# init is refused whatever kernel.perf_event_paranoid says.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -z "$skip_all" ]; then
	test_expect_code 3 'refused perf events exit 3 with the reason' '
		chmod 711 . && mkdir w && chmod 777 w &&
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$HOTLOOP" record -p 1 --duration 0.1 -o w/no.pb.gz 2>err
		rc=$?
		expect_grep "perf events not permitted (kernel.perf_event_paranoid=-*[0-9]*)" err &&
		expect_grep "CAP_PERFMON" err &&
		test ! -e w/no.pb.gz || exit 99
		exit $rc
	'
else
	n_skip=$((n_skip + 1))
	say "skip $test_name: refused perf events exit 3 (needs root and setpriv to drop privileges)"
fi

test_done
