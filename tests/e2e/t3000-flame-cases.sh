#!/bin/sh
# hotloop flame, cases as data: every tests/data/flame/NAME.folded is drawn
# with the arguments in NAME.args (if any; they may use $DATA). The SVG must
# be well-formed XML, contain every line of NAME.grep as a fixed string, and
# contain none of the lines that start with '!'.
. "$(dirname "$0")/test-lib.sh"

well_formed() {
	if command -v xmllint >/dev/null 2>&1; then
		xmllint --noout "$1"
	else
		python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1"
	fi
}

# every line of $1 (a .grep file) is in $2, or, after '!', is not
expect_lines() {
	while IFS= read -r line; do
		case $line in
		!*)
			if grep -F -q -e "${line#!}" "$2"; then
				echo "unexpected in $2: ${line#!}"; return 1
			fi ;;
		*)
			if ! grep -F -q -e "$line" "$2"; then
				echo "missing from $2: $line"; return 1
			fi ;;
		esac
	done < "$1"
}

for in in "$DATA"/flame/*.folded; do
	case=${in%.folded}
	name=$(basename "$case")
	args=
	[ -f "$case.args" ] && args=$(cat "$case.args")
	test_expect_success "$name" "
		hotloop flame '$in' -o '$name.svg' $args &&
		well_formed '$name.svg' &&
		expect_lines '$case.grep' '$name.svg'
	"
done

test_done
