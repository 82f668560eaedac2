#!/bin/sh
# record --heap where the preload cannot go, and bad options: a clear
# message and no profile, never an empty one.
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'a static program: the clear message, no profile' '
	! hotloop record --heap -o st.pb.gz -- "$WORKLOADS/heapstatic" >out 2>err &&
	expect_grep "is statically linked" err &&
	test ! -e st.pb.gz &&
	test ! -s out
'

test_expect_success 'a setuid program: the clear message, no profile' '
	cp "$WORKLOADS/heapsite" suid &&
	chmod u+s suid &&
	! hotloop record --heap -o su.pb.gz -- ./suid 2>err &&
	expect_grep "is setuid" err &&
	test ! -e su.pb.gz
'

test_expect_code 127 'a command that does not exist' '
	hotloop record --heap -o x.pb.gz -- ./no-such-program
'

test_expect_code 2 '--heap-rate without --heap' '
	hotloop record --heap-rate 1 -- true
'

test_expect_code 2 '--heap-rate that is not a size' '
	hotloop record --heap --heap-rate lots -- true
'

test_expect_code 2 '--heap with a CPU option (-F)' '
	hotloop record --heap -F 99 -- true
'

test_expect_code 2 '--heap with -p' '
	hotloop record --heap -p 1
'

test_done
