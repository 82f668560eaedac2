#!/bin/sh
# brief: a shared library built in the project's tree is owned code, like
# the program that loads it: from the git top level, through a symbolic
# link to the project, and from far away (the main executable fallback,
# which takes the tree the program was built in), with source paths that
# the symbolizer joined with the compilation directory, shown relative to
# the root, their snippets read.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF 'perf events are not available to this user (hotloop doctor says why)'

# A program in app/ whose time goes to hot_lib_spin in lib/, built as make
# builds from build/: relative names with "..", the library next to the
# program (as libtool's .libs/ holds both).
make_project() {
	mkdir -p "$1/app" "$1/lib" "$1/build" &&
	cat >"$1/lib/hot.c" <<-\EOC &&
	/* the library's hot function */
	volatile unsigned long hot_sink;

	__attribute__((noinline)) unsigned long hot_lib_spin(unsigned long n)
	{
		unsigned long x = n;

		for (unsigned long i = 0; i < 2000000; i++)
			x = x * 6364136223846793005ul + i;	/* HOT */
		hot_sink = x;
		return x;
	}
	EOC
	cat >"$1/app/main.c" <<-\EOC &&
	/* calls the library until the time given has passed */
	#include <stdlib.h>
	#include <time.h>
	#include <unistd.h>
	unsigned long hot_lib_spin(unsigned long n);

	int main(int argc, char **argv)
	{
		double secs = argc > 1 ? atof(argv[1]) : 0.4;
		struct timespec t0, t;
		unsigned long x = 1;

		alarm(20);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			x += hot_lib_spin(x);
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
		return (int)(x & 1) * 0;
	}
	EOC
	(cd "$1/build" &&
	 cc -O2 -g -fPIC -shared -o libhot.so ../app/../lib/hot.c &&
	 cc -O2 -g -o app ../app/main.c -L. -lhot -Wl,-rpath,"\$ORIGIN")
}

test_expect_success 'setup: a project with a program and its own library, recorded' '
	make_project proj && git init -q proj &&
	(cd proj && hotloop record -o ../in.pb.gz -- build/app 0.5 2>/dev/null)
'

test_expect_success 'from the git top level: the library function is an owned hotspot' '
	(cd proj && hotloop brief --json ../in.pb.gz >../out.json) &&
	jq -e ".owned.main_executable_fallback == false and .owned.roots == [\"$SCRATCH/proj\"]" out.json &&
	jq -e ".hotspots[0].function == \"hot_lib_spin\" and .hotspots[0].dso == \"libhot.so\"" out.json &&
	jq -e ".hotspots[0].file == \"lib/hot.c\" and .hotspots[0].attributed_pct > 50" out.json &&
	jq -e ".hotspots[0].snippet.hot_line > 0" out.json &&
	jq -e ".hotspots[0].snippet.text | test(\"HOT\")" out.json &&
	jq -e "[.rollup.dir[].name] | index(\"lib/\") != null" out.json
'

test_expect_success 'report names the normalized absolute source path' '
	hotloop report --by line --json in.pb.gz >rep.json &&
	jq -e "[.rows[] | .file // empty] | any(. == \"$SCRATCH/proj/lib/hot.c\")" rep.json &&
	! jq -e "[.rows[] | .file // empty] | any(test(\"/[.][.]?/\"))" rep.json
'

# The compiler names the directory by $PWD, the link; the roots are real paths.
test_expect_success 'built and profiled through a symbolic link to the project' '
	mkdir real && git init -q real && ln -s real link && make_project link &&
	readelf --debug-dump=info link/build/libhot.so | grep -q "DW_AT_comp_dir.*$SCRATCH/link/build" &&
	(cd link && hotloop record -o ../link.pb.gz -- build/app 0.5 2>/dev/null &&
	 hotloop brief --json ../link.pb.gz >../out.json) &&
	jq -e ".owned.roots == [\"$SCRATCH/real\"] and .owned.main_executable_fallback == false" out.json &&
	jq -e ".hotspots[0].function == \"hot_lib_spin\" and .hotspots[0].file == \"lib/hot.c\"" out.json &&
	jq -e ".hotspots[0].snippet.hot_line > 0" out.json
'

test_expect_success 'from far away: the library built next to the program is owned' '
	mkdir far && (cd far && hotloop brief --json ../in.pb.gz >../out.json) &&
	jq -e ".owned.main_executable_fallback == true and .owned.main_executable_tree == \"$SCRATCH/proj\"" out.json &&
	jq -e ".hotspots[0].function == \"hot_lib_spin\" and .hotspots[0].attributed_pct > 50" out.json &&
	jq -e ".hotspots[0].file == \"$SCRATCH/proj/lib/hot.c\"" out.json &&
	(cd far && hotloop brief ../in.pb.gz >../out.md) &&
	expect_grep "^- owned code: the main executable and the files of $SCRATCH/proj;" out.md &&
	expect_grep "^### 1. .hot_lib_spin. ($SCRATCH/proj/lib/hot.c:[0-9]*)" out.md
'

test_expect_success 'from far away, no git: the tree is the program directory' '
	make_project plain &&
	(cd plain && hotloop record -o ../plain.pb.gz -- build/app 0.5 2>/dev/null) &&
	(cd far && hotloop brief --json ../plain.pb.gz >../out.json) &&
	jq -e ".owned.main_executable_tree == \"$SCRATCH/plain/build\"" out.json &&
	jq -e ".hotspots[0].function == \"hot_lib_spin\"" out.json
'

test_done
