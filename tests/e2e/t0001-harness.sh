#!/bin/sh
# The test harness itself: test_when_finished cleanups run, even through
# an exit in the test, and the test's status is kept.
. "$(dirname "$0")/test-lib.sh"
test_expect_success 'cleanup runs on success' 'test_when_finished "touch $SCRATCH/c1" && true'
test_expect_success 'cleanup ran' 'test -f $SCRATCH/c1'
test_expect_code 1 'cleanup runs through exit' 'test_when_finished "touch $SCRATCH/c2"; exit 1'
test_expect_success 'cleanup ran after exit' 'test -f $SCRATCH/c2'
test_expect_code 3 'status kept' 'test_when_finished "false"; exit 3'
test_done
