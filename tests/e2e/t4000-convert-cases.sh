#!/bin/sh
# hotloop convert, cases as data: every tests/data/convert/NAME.in is folded
# text converted with the arguments in NAME.args (if any). With NAME.out the
# folded output must equal it, directly and after a trip through pprof; with
# NAME.err the conversion must fail (exit 1) with that message.
. "$(dirname "$0")/test-lib.sh"

for in in "$DATA"/convert/*.in; do
	case=${in%.in}
	name=$(basename "$case")
	args=
	[ -f "$case.args" ] && args=$(cat "$case.args")
	if [ -f "$case.err" ]; then
		test_expect_code 1 "$name: rejected" "
			rm -f out.folded
			hotloop convert '$in' -o out.folded 2>err
			rc=\$?
			grep -F -q -e \"\$(cat '$case.err')\" err || { cat err; exit 9; }
			test ! -e out.folded || exit 8
			exit \$rc
		"
		continue
	fi
	test_expect_success "$name: folded to folded" "
		hotloop convert '$in' -o out.folded $args &&
		cmp '$case.out' out.folded
	"
	test_expect_success "$name: through pprof and back" "
		hotloop convert '$in' -o mid.pb.gz &&
		hotloop convert mid.pb.gz -o back.folded $args &&
		cmp '$case.out' back.folded
	"
done

test_done
