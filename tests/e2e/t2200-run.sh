#!/bin/sh
# run: a configured workload built, recorded, reported, drawn and briefed
# into .hotloop/runs/<id>/ with a latest link; {n}; failures of each step.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless PERF 'perf events are not available to this user (hotloop doctor says why)'

# A small project: a program with one hot function, built by make.
test_expect_success 'setup: a project in git with hotloop.conf' '
	mkdir proj && cd proj &&
	cat >spin.c <<-\EOC &&
	#include <stdio.h>
	#include <stdlib.h>
	__attribute__((noinline)) unsigned long spin(unsigned long n)
	{
		unsigned long x = 1;
		for (unsigned long i = 0; i < n; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		return x;
	}
	int main(int argc, char **argv)
	{
		unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
		printf("%lu\n", spin(n * 1000000ul));
		return 0;
	}
	EOC
	printf "spin: spin.c\n\tcc -O1 -g -fno-omit-frame-pointer -o spin spin.c\n" >Makefile &&
	cat >hotloop.conf <<-\EOC &&
	[project]
		build = make
		protected = hotloop.conf Makefile
	[workload "main"]
		run = ./spin 300
		primary = yes
	[workload "sized"]
		run = ./spin {n}
	[workload "nosizes"]
		run = ./spin {n}
	[workload "crash"]
		run = sh -c "kill -SEGV \$\$"
	EOC
	printf "spin\n" >.gitignore &&
	git init -q && git add . && git -c user.name=t -c user.email=t@t commit -q -m base
'

test_expect_success 'run: every file, the latest link, the brief on stdout' '
	(cd proj && hotloop run >../out.md 2>../err) &&
	expect_grep "^# hotloop brief: main" out.md &&
	expect_grep "^### 1. .spin. (spin.c:[0-9]*)" out.md &&
	expect_grep "^run: wrote .*/.hotloop/runs/" err &&
	d=proj/.hotloop/runs/latest &&
	for f in build.log profile.pb.gz stdout.txt record.log report.txt report.json flame.svg brief.md brief.json meta.json; do
		test -s $d/$f || { echo "missing $f"; exit 1; }
	done &&
	cmp out.md $d/brief.md &&
	jq -e ".workload == \"main\" and .ok == true and (.commit|test(\"^[0-9a-f]{40}$\")) and .dirty == false" $d/meta.json &&
	jq -e ".hotspots[0].function == \"spin\"" $d/brief.json &&
	expect_grep "<svg" $d/flame.svg &&
	jq -e ".rows[0].name == \"spin\"" $d/report.json &&
	(cd proj && git status --porcelain) >status && test ! -s status
'

test_expect_success 'a second run gets its own directory; latest follows it' '
	first=$(readlink proj/.hotloop/runs/latest) &&
	(cd proj && hotloop run --no-build --format json >../out.json 2>/dev/null) &&
	second=$(readlink proj/.hotloop/runs/latest) &&
	test "$first" != "$second" && test -d "proj/.hotloop/runs/$first" &&
	jq -e ".hotspots[0].function == \"spin\"" out.json
'

test_expect_success '{n} is replaced by --size' '
	(cd proj && hotloop run sized --size 100 --no-build >/dev/null 2>&1) &&
	jq -e ".command == \"exec ./spin 100\"" proj/.hotloop/runs/latest/meta.json
'

test_expect_success '{n} is the largest of sizes by default' '
	(cd proj && sed -i "0,/run = .\/spin {n}/s//&\n\tsizes = 10 20 40/" hotloop.conf &&
	 hotloop run sized --no-build >/dev/null 2>&1) &&
	jq -e ".command == \"exec ./spin 40\"" proj/.hotloop/runs/latest/meta.json
'

test_expect_code 1 '{n} without --size or sizes is an error' '
	(cd proj && hotloop run nosizes --no-build) 2>err; rc=$?
	expect_grep "give the value of {n} with --size N" err || exit 99; exit $rc
'

test_expect_code 1 'an unknown workload lists the configured ones' '
	(cd proj && hotloop run nosuch) 2>err; rc=$?
	expect_grep "unknown workload .nosuch. in .*: the configured ones are .main., .sized., .nosizes., .crash.$" err || exit 9; exit $rc
'

test_expect_code 1 'a crashing workload fails the run, meta.json says so' '
	before=$(readlink proj/.hotloop/runs/latest)
	(cd proj && hotloop run crash --no-build) >out 2>err; rc=$?
	expect_grep "recording workload .crash. failed" err &&
	test "$(readlink proj/.hotloop/runs/latest)" = "$before" &&
	ls -d proj/.hotloop/runs/*-crash >dirs && test $(wc -l <dirs) = 1 &&
	jq -e ".ok == false" $(cat dirs)/meta.json || exit 99; exit $rc
'

test_expect_code 1 'a failing build fails the run with its output' '
	(cd proj && echo "syntax error" >>spin.c && hotloop run) >out 2>err; rc=$?
	(cd proj && git checkout -q spin.c)
	expect_grep "the build failed" err && expect_grep "syntax" err || exit 99; exit $rc
'

test_expect_code 1 'no hotloop.conf' '
	mkdir empty && cd empty && hotloop run 2>../err; rc=$?
	cd .. && expect_grep "no hotloop.conf" err || exit 99; exit $rc
'

test_expect_code 2 'a bad --call-graph' '(cd proj && hotloop run --call-graph lbr)'

test_done
