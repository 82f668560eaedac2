#!/bin/sh
# compare --base REV --cand REV|DIR: two builds of a tiny git project, each
# in its own worktree, measured on every workload of its hotloop.conf. A
# faster primary is kept; a slower guard, other output, failing tests, too
# much memory or a worse declared metric are rejected with the reason; the
# user's tree, index and branch stay as they were and no worktree is left.
. "$(dirname "$0")/test-lib.sh"

test_skip_unless_git() {
	command -v git >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 && return 0
	echo "1..0 # SKIP git or cc is missing"
	exit 0
}
test_skip_unless_git

C="hotloop compare --max-wait 0 --pairs 12 --looks 12 --json"

# params: the work per workload in CPU milliseconds, memory in MiB, the
# fingerprint and the score metric; the program reads them at run time.
setup_repo() {
	mkdir proj && cd proj &&
	git init -q -b main . &&
	git config user.email t@example.com && git config user.name t &&
	cat >prog.c <<-\EOC &&
	#include <stdio.h>
	#include <stdlib.h>
	#include <string.h>
	#include <time.h>

	static double cpu_ms(void)
	{
		struct timespec t;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
	}

	int main(int argc, char **argv)
	{
		char key[64], val[64], fp[64] = "same";
		double ms = 0, score = 100, mem = 0;
		volatile unsigned long x = 0;
		FILE *f = fopen("params", "r");

		if (!f || argc < 2)
			return 2;
		while (fscanf(f, "%63s %63s", key, val) == 2) {
			if (!strcmp(key, argv[1]))
				ms = atof(val);
			else if (!strcmp(key, "mem"))
				mem = atof(val);
			else if (!strcmp(key, "score"))
				score = atof(val);
			else if (!strcmp(key, "fp"))
				snprintf(fp, sizeof(fp), "%s", val);
		}
		fclose(f);
		if (mem > 0) {
			char *p = malloc((size_t)(mem * 1048576));

			if (!p)
				return 3;
			memset(p, 1, (size_t)(mem * 1048576));
			x += p[12345];
		}
		for (double end = cpu_ms() + ms; cpu_ms() < end;)
			x++;
		printf("FINGERPRINT=%s-%s\nHOTLOOP_METRIC score=%g\n", argv[1], fp, score);
		return 0;
	}
	EOC
	printf "prog: prog.c\n\tcc -O1 -o prog prog.c\n" >Makefile &&
	printf "#!/bin/sh\nexit 0\n" >check.sh && chmod +x check.sh &&
	printf "fast 40\nguard 20\nmem 0\nscore 100\nfp same\n" >params &&
	cat >hotloop.conf <<-\EOC &&
	[project]
		build = make
	[gate]
		test = ./check.sh
		fingerprint = yes
		timeout = 20s
	[improve]
		min-improvement = 10%
		guard-regression = 10%
		ram-budget = 64M
	[workload "fast"]
		run = ./prog fast
		primary = yes
	[workload "guard"]
		run = ./prog guard
	[metric "score"]
		better = higher
		tolerance = 5%
	EOC
	printf "prog\n" >.gitignore &&
	git add . && git commit -q -m base && git tag base &&
	cd ..
}

# a candidate commit on a branch of its own: set params key to value
candidate() {
	(cd proj && git checkout -q -b "$1" base &&
	 sed -i "s/^$2 .*/$2 $3/" params && git commit -q -am "$1" &&
	 git checkout -q main)
}

test_expect_success 'setup: a project with a base and candidate commits' '
	setup_repo &&
	candidate faster fast 20 &&
	candidate slowguard fast 20 && (cd proj && git checkout -q slowguard &&
		sed -i "s/^guard .*/guard 40/" params && git commit -q -am slow &&
		git checkout -q main) &&
	candidate otherfp fp other &&
	candidate fatter mem 200 &&
	candidate worse score 80 &&
	(cd proj && git checkout -q -b failtest base &&
	 printf "#!/bin/sh\necho broken >&2\nexit 1\n" >check.sh && git commit -q -am failtest &&
	 git checkout -q main) &&
	(cd proj && git status --porcelain >../status.before && git rev-parse HEAD >../head.before)
'

untouched() {
	(cd proj && git status --porcelain >../status.after &&
	 git rev-parse HEAD >../head.after && git symbolic-ref HEAD >../branch.after &&
	 git worktree list >../worktrees) &&
	{ cmp status.before status.after || { cat status.after; false; }; } && cmp head.before head.after &&
	expect_grep "refs/heads/main" branch.after &&
	test "$(wc -l <worktrees)" = 1 &&
	! test -e proj/prog && ! ls proj/.hotloop/worktrees/* 2>/dev/null &&
	! ls "$XDG_CACHE_HOME"/hotloop/*/* 2>/dev/null
}

test_expect_success 'a 2x faster primary is kept, both workloads measured' '
	(cd proj && $C --base base --cand faster) >out.json &&
	jq -e ".verdict == \"keep\"" out.json &&
	jq -e ".primary.workload == \"fast\" and .primary.change_pct < -30" out.json &&
	jq -e ".guards | length == 1 and .[0].workload == \"guard\"" out.json &&
	jq -e ".base.given == \"base\" and (.candidate.commit | length) == 40" out.json &&
	untouched
'

test_expect_code 4 'a 2x slower guard is rejected and named' '
	(cd proj && $C --base base --cand slowguard) >out.json; rc=$?
	jq -e ".verdict == \"reject\" and .guards[0].regressed" out.json &&
	jq -e "[.reasons[] | test(\"guard .guard. regressed\")] | any" out.json ||
		{ cat out.json; exit 1; }
	untouched || exit 99; exit $rc
'

test_expect_code 4 'a different fingerprint is a correctness reject' '
	(cd proj && $C --base base --cand otherfp) >out.json; rc=$?
	jq -e ".verdict == \"reject\" and .correctness.ok == false" out.json &&
	jq -e "[.reasons[] | test(\"different fingerprint\")] | any" out.json && untouched || exit 99; exit $rc
'

test_expect_code 4 'failing tests reject before anything is measured' '
	(cd proj && $C --base base --cand failtest) >out.json 2>err; rc=$?
	jq -e ".verdict == \"reject\" and .pairs == 0" out.json &&
	jq -e "[.reasons[] | test(\"tests failed\")] | any" out.json &&
	expect_grep broken err && untouched || exit 99; exit $rc
'

test_expect_code 4 'a candidate over the ram budget is rejected' '
	(cd proj && $C --base base --cand fatter) >out.json; rc=$?
	jq -e ".verdict == \"reject\" and .memory.ok == false" out.json &&
	jq -e "[.reasons[] | test(\"ram budget\")] | any" out.json && untouched || exit 99; exit $rc
'

test_expect_success '--ram-budget on the command line overrides the config' '
	(cd proj && $C --ram-budget 1G --min-improvement 0 --base base --cand fatter) >out.json;
	jq -e ".memory.ok == true" out.json && untouched
'

test_expect_code 4 'a declared metric dropping 20% is rejected' '
	(cd proj && $C --base base --cand worse) >out.json; rc=$?
	jq -e ".verdict == \"reject\"" out.json &&
	jq -e "[.reasons[] | test(\"metric .score.\")] | any" out.json && untouched || exit 99; exit $rc
'

test_expect_success '--cand DIR measures an uncommitted change in place' '
	(cd proj && sed -i "s/^fast .*/fast 20/" params && git status --porcelain >../status.dirty) &&
	(cd proj && $C --base HEAD --cand . -f hotloop.conf) >out.json; rc=$?
	(cd proj && git status --porcelain >../status.after2 && git checkout -q params && rm -f prog) &&
	test $rc = 0 && jq -e ".verdict == \"keep\" and .candidate.commit == null" out.json &&
	cmp status.dirty status.after2 && untouched
'

test_expect_success 'a stale worktree from a killed run is cleaned up' '
	(cd proj && mkdir -p .hotloop/worktrees &&
	 git worktree add -q --detach .hotloop/worktrees/base-000000000000 base) &&
	(cd proj && $C --base base --cand faster) >out.json &&
	untouched
'

test_expect_code 1 'a failing build names the build and its output' '
	(cd proj && git checkout -q -b badbuild base && echo "syntax error" >>prog.c &&
	 git commit -q -am bad && git checkout -q main) &&
	(cd proj && hotloop compare --base base --cand badbuild) >out 2>err; rc=$?
	expect_grep "candidate.s build failed" err && expect_grep "syntax" err &&
	untouched || exit 99; exit $rc
'

test_expect_code 1 'a build that hangs is killed at build-timeout' '
	(cd proj && git checkout -q -b slowbuild base &&
	 printf "prog: prog.c\n\tsleep 60\n\tcc -O1 -o prog prog.c\n" >Makefile &&
	 git commit -q -am slow && git checkout -q main &&
	 sed "s/^\([[:space:]]*\)build = make\$/&\n\1build-timeout = 1s/" hotloop.conf >slow.conf) &&
	expect_grep "build-timeout = 1s" proj/slow.conf &&
	(cd proj && hotloop compare -f slow.conf --base base --cand slowbuild) >out 2>err; rc=$?
	rm -f proj/slow.conf
	expect_grep "candidate.s build timed out after 1 s" err && expect_grep "sleep 60" err &&
	untouched || exit 99; exit $rc
'

test_expect_code 1 'a second compare on the same repository is refused' '
	mkdir -p proj/.hotloop && echo 4242 >proj/.hotloop/worktrees.lock &&
	{ flock -o proj/.hotloop/worktrees.lock sleep 30 & } &&
	holder=$! &&
	test_when_finished "kill $holder" &&
	sleep 0.2 &&
	(cd proj && hotloop compare --base base --cand faster) >out 2>err; rc=$?
	expect_grep "another hotloop (pid 4242) is using the checkouts of" err &&
	untouched || exit 99; exit $rc
'

test_expect_code 2 'the two forms do not mix' '
	hotloop compare --base base true true
'

test_done
