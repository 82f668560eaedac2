#!/bin/sh
# hotloop init: writes a commented starter that hotloop config accepts,
# guesses the build and test commands from a Makefile, and never overwrites
# an existing hotloop.conf without --force.
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'init in an empty directory writes a valid config' '
	mkdir empty && cd empty &&
	hotloop init >out && expect_grep "wrote hotloop.conf" out &&
	expect_grep "^# " hotloop.conf &&
	hotloop config >norm &&
	expect_grep "^	build = \"\"" norm &&
	expect_grep "^\[workload \"main\"\]" norm
'

test_expect_success 'init guesses from a Makefile with a test target and the usual dirs' '
	mkdir proj && cd proj && mkdir src tests &&
	printf "all:\n\ttrue\ntest: all\n\ttrue\nbench:\n\ttrue\n" >Makefile &&
	hotloop init >/dev/null &&
	hotloop config >norm &&
	expect_grep "^	build = make -j2$" norm &&
	expect_grep "^	test = make test$" norm &&
	expect_grep "^	owned = src$" norm &&
	expect_grep "^	protected = tests hotloop.conf$" norm &&
	expect_grep "^	run = make bench$" norm
'

test_expect_success 'a check target when there is no test target' '
	mkdir proj2 && cd proj2 &&
	printf "check:\n\ttrue\ntesting:\n\ttrue\n" >Makefile &&
	hotloop init >/dev/null && hotloop config >norm &&
	expect_grep "^	test = make check$" norm
'

test_expect_code 1 'init refuses to overwrite' '
	mkdir keep && cd keep &&
	echo "# mine" >hotloop.conf &&
	hotloop init 2>err; rc=$?
	expect_grep "already exists.*--force" err &&
	test "$(cat hotloop.conf)" = "# mine" || exit 99; exit $rc
'

test_expect_success 'init --force overwrites, leaving no temporary file' '
	mkdir force && cd force &&
	echo "# mine" >hotloop.conf &&
	hotloop init --force >/dev/null && hotloop config >/dev/null &&
	! grep -q "^# mine" hotloop.conf && test "$(ls -A)" = hotloop.conf
'

test_expect_code 1 'init --force fails when hotloop.conf cannot be replaced' '
	mkdir dir && cd dir && mkdir hotloop.conf &&
	hotloop init --force 2>err; rc=$?
	test -d hotloop.conf && test -s err || exit 99; exit $rc
'

test_expect_code 2 'an unknown option is a usage error' 'hotloop init --frobnicate'

test_done
