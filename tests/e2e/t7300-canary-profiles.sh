#!/bin/sh
# hotloop canary --profiles: two versions of a program recorded, the
# function made cheaper found cheaper, the one left alone found dearer in
# share (what shares are), the same version found the same; folded files
# for exact counts; bad input.
. "$(dirname "$0")/test-lib.sh"

command -v jq >/dev/null 2>&1 || skip_all="jq is missing"

# version LOOPS: hot() does LOOPS steps a call, cold() 20000: their shares follow on any CPU
version() {
	cat >v.c <<EOT
#include <stdint.h>
#include <time.h>
volatile uint64_t sink;
__attribute__((noinline)) uint64_t hot(uint64_t x)
{ for (long i = 0; i < $1; i++) x = x * 6364136223846793005ull + 1442695040888963407ull; return x; }
__attribute__((noinline)) uint64_t cold(uint64_t x)
{ for (long i = 0; i < 20000; i++) x = x * 2862933555777941757ull + 3037000493ull; return x; }
int main(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do { sink = hot(sink); sink = cold(sink); clock_gettime(CLOCK_MONOTONIC, &b); }
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 1500000000L);
	return 0;
}
EOT
	cc -O1 -g -fno-inline -o "$2" v.c
}

if test_have_prereq PERF; then
test_expect_success 'setup: two versions recorded, and the first again' '
	version 180000 v1 && version 60000 v2 &&
	hotloop record -o base.pb.gz -- ./v1 2>>record.log &&
	hotloop record -o again.pb.gz -- ./v1 2>>record.log &&
	hotloop record -o cand.pb.gz -- ./v2 2>>record.log
'

test_expect_success 'the function made cheaper is cheaper; the other one dearer in share' '
	hotloop canary --profiles base.pb.gz cand.pb.gz --json >d.json &&
	jq -e "(.functions[] | select(.function == \"hot\") | .class == \"cheaper\" and .relative < 0) and
	       (.functions[] | select(.function == \"cold\") | .class == \"dearer\" and .change_low > 0)" d.json >/dev/null &&
	hotloop canary --profiles base.pb.gz cand.pb.gz >d.txt &&
	expect_grep "^cheaper (" d.txt && expect_grep " hot$" d.txt
'

# at 95% over all functions an A/A comparison flags one by chance 1 time in 20: ask for 99.9%
test_expect_success 'the same version twice: hot and cold the same' '
	hotloop canary --profiles base.pb.gz again.pb.gz --confidence 99.9 --json >s.json &&
	jq -e "[.functions[] | select(.function == \"hot\" or .function == \"cold\") | .class] == [\"same\", \"same\"]" s.json >/dev/null
'
else
	test_skip 'two recorded versions compared' 'perf cannot sample here'
fi

test_expect_success 'folded stacks: exact counts, a new function, --by total, --top' '
	printf "main;run;hot 9000\nmain;run;cold 1000\nmain;tiny 10\n" >b.folded &&
	printf "main;run;hot 5000\nmain;run;cold 1000\nmain;tiny 12\nmain;newfn 300\n" >c.folded &&
	hotloop canary --profiles b.folded c.folded --json >f.json &&
	jq -e ".base_samples == 10010 and .cand_samples == 6312 and .tested == 3 and
	       (.functions[] | select(.function == \"newfn\") | .class == \"dearer\" and .relative == null) and
	       (.functions[] | select(.function == \"tiny\") | .class == \"untested\")" f.json >/dev/null &&
	hotloop canary --profiles b.folded c.folded --by total --json >t.json &&
	jq -e ".functions[] | select(.function == \"main\") | .class == \"same\" and .base_share == 1" t.json >/dev/null &&
	hotloop canary --profiles b.folded c.folded --top 1 >top.txt &&
	expect_grep "1 more" top.txt &&
	hotloop canary --profiles b.folded c.folded --work 10,10 --json >w.json &&
	jq -e ".per_work and (.functions[] | select(.function == \"cold\") | .class == \"same\" and .base_rate == 100) and
	       (.functions[] | select(.function == \"hot\") | .class == \"cheaper\")" w.json >/dev/null &&
	hotloop canary --profiles b.folded c.folded --work 10,10 >w.txt &&
	expect_grep "samples per unit of work" w.txt
'

test_expect_success 'bad input: a clear error, exit 1 or 2' '
	test_expect_code_rc=0; hotloop canary --profiles b.folded >out 2>err || test_expect_code_rc=$? &&
	test "$test_expect_code_rc" = 2 && expect_grep "two files" err &&
	test_expect_code_rc=0; hotloop canary b.folded c.folded >out 2>err || test_expect_code_rc=$? &&
	test "$test_expect_code_rc" = 2 && expect_grep "profiles" err &&
	test_expect_code_rc=0; hotloop canary --profiles b.folded no-such >out 2>err || test_expect_code_rc=$? &&
	test "$test_expect_code_rc" = 1 && expect_grep "no-such" err &&
	test_expect_code_rc=0; hotloop canary --profiles b.folded c.folded --confidence 120 >out 2>err ||
		test_expect_code_rc=$? &&
	test "$test_expect_code_rc" = 2 && expect_grep "confidence" err &&
	test_expect_code_rc=0; hotloop canary --profiles b.folded c.folded --work 10 >out 2>err || test_expect_code_rc=$? &&
	test "$test_expect_code_rc" = 2 && expect_grep "BASE,CAND" err &&
	: >empty.folded &&
	test_expect_code_rc=0; hotloop canary --profiles empty.folded c.folded >out 2>err || test_expect_code_rc=$? &&
	test "$test_expect_code_rc" = 1 && test -s err
'

test_done
