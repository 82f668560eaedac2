#!/bin/sh
# The profile is written atomically: a record killed with SIGKILL never
# leaves a partial profile under the final name.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF 'perf events not permitted here (run as root or lower kernel.perf_event_paranoid)'

test_expect_success 'kill -9 mid-run leaves no file under the final name' '
	"$HOTLOOP" record -o killed.pb.gz -- "$WORKLOADS/cpuhog" 2 &
	rec=$! &&
	sleep 0.5 &&
	kill -9 $rec &&
	{ wait $rec; true; } &&
	test ! -e killed.pb.gz
'

test_expect_success 'an existing profile is replaced whole' '
	echo old >prof.pb.gz &&
	hotloop record -o prof.pb.gz -- "$WORKLOADS/cpuhog" 0.2 &&
	gzip -t prof.pb.gz &&
	! ls prof.pb.gz.tmp.* 2>/dev/null
'

test_expect_success 'an unwritable output fails before the command runs' '
	! hotloop record -o no-such-dir/x.pb.gz -- sh -c "echo ran >ran" 2>err &&
	expect_grep "cannot create .no-such-dir/x.pb.gz" err &&
	test ! -e ran
'

test_done
