#!/bin/sh
# hotloop report, cases as data: every tests/data/report/NAME.EXT other than
# NAME.args, NAME.out and NAME.err is a profile (.folded stacks, .perf for
# perf script text, .callgrind, .pb.gz for pprof written once with hotloop
# convert; the content decides, as for the user), reported on from this
# directory under its own name with the arguments in NAME.args (if any).
# With NAME.out stdout must be exactly NAME.out and stderr empty; with
# NAME.err the report must fail (exit 1) with exactly NAME.err on stderr, and
# print NAME.out when there is one (the {"error": ...} of --json), else
# nothing. NAME has no dots; an input may be a symlink to another case's,
# to see one profile several ways.
. "$(dirname "$0")/test-lib.sh"

for in in "$DATA"/report/*; do
	case $in in *.args|*.out|*.err) continue ;; esac
	file=$(basename "$in")
	name=${file%%.*}
	case=$DATA/report/$name
	args=
	[ -f "$case.args" ] && args=$(cat "$case.args")
	if [ -f "$case.err" ]; then
		test_expect_code 1 "$name: rejected" "
			cp '$in' '$file' || exit 8
			hotloop report '$file' $args >out 2>err
			rc=\$?
			diff -u '$case.err' err || exit 9
			if [ -f '$case.out' ]; then
				diff -u '$case.out' out || exit 9
			else
				test ! -s out || { cat out; exit 9; }
			fi
			exit \$rc
		"
	elif [ -f "$case.out" ]; then
		test_expect_success "$name" "
			cp '$in' '$file' &&
			hotloop report '$file' $args >out 2>err &&
			diff -u '$case.out' out &&
			{ test ! -s err || { cat err; false; }; }
		"
	else
		test_expect_success "$name: has $name.out or $name.err" 'false'
	fi
done

test_done
