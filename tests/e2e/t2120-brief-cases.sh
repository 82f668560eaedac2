#!/bin/sh
# hotloop brief, cases as data: every tests/data/brief/NAME.EXT other than
# NAME.args, .md, .json, .err and the directory NAME.src is a profile in
# text (.perf for perf script text, .folded stacks). Each case runs in a
# directory of its own holding a copy of NAME.src (the sources the profile
# names, a hotloop.conf, a kb/) and the profile with @DIR@ replaced by that
# directory's real path, so frames can name owned sources; it runs there as
#   hotloop brief NAME.EXT ARGS           to give exactly NAME.md
#   hotloop brief NAME.EXT ARGS --json    to give exactly NAME.json
# with nothing on stderr, or must fail (exit 1) with exactly NAME.err on
# stderr; in what it prints the directory is @DIR@ again. NAME has no dots;
# an input or NAME.src may be a symlink to another case's.
. "$(dirname "$0")/test-lib.sh"

# setup NAME FILE: the case's directory, its sources and its profile
setup() {
	rm -rf "$1" && mkdir "$1" &&
	if [ -d "$DATA/brief/$1.src" ]; then cp -R "$DATA/brief/$1.src/." "$1"; fi &&
	dir=$(cd "$1" && pwd -P) &&
	sed "s|@DIR@|$dir|g" "$DATA/brief/$2" >"$1/$2"
}

# brief NAME FILE ARGS...: run it in the case's directory, @DIR@ put back
brief() {
	name=$1 file=$2
	shift 2
	(cd "$name" && hotloop brief "$file" "$@") >raw.out 2>raw.err
	rc=$?
	sed "s|$dir|@DIR@|g" raw.out >out
	sed "s|$dir|@DIR@|g" raw.err >err
	return $rc
}

for in in "$DATA"/brief/*; do
	case $in in *.args|*.md|*.json|*.err|*.src) continue ;; esac
	file=$(basename "$in")
	name=${file%%.*}
	case=$DATA/brief/$name
	args=
	[ -f "$case.args" ] && args=$(cat "$case.args")
	if [ -f "$case.err" ]; then
		test_expect_code 1 "$name: rejected" "
			setup '$name' '$file' || exit 8
			brief '$name' '$file' $args
			rc=\$?
			diff -u '$case.err' err || exit 9
			test ! -s out || { cat out; exit 9; }
			exit \$rc
		"
	fi
	if [ -f "$case.md" ]; then
		test_expect_success "$name: markdown" "
			setup '$name' '$file' &&
			brief '$name' '$file' $args &&
			diff -u '$case.md' out &&
			{ test ! -s err || { cat err; false; }; }
		"
	fi
	if [ -f "$case.json" ]; then
		test_expect_success "$name: json" "
			setup '$name' '$file' &&
			brief '$name' '$file' $args --json &&
			diff -u '$case.json' out &&
			{ test ! -s err || { cat err; false; }; }
		"
	fi
	if ! [ -f "$case.err" ] && ! [ -f "$case.md" ] && ! [ -f "$case.json" ]; then
		test_expect_success "$name: has $name.md, $name.json or $name.err" 'false'
	fi
done

test_done
