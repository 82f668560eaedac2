#!/bin/sh
# hotloop scale refuses what it cannot fit before anything runs: a command
# without {n}, fewer than 3 sizes, a bad size list, a workload whose run has
# no {n} or no sizes, an unknown workload (the configured ones are listed).
. "$(dirname "$0")/test-lib.sh"

command -v jq >/dev/null || skip_all="needs jq (apt-get install jq)"

test_expect_success 'a command without {n} is a usage error' '
	{ hotloop scale --sizes 1000,2000,4000 -- "$WORKLOADS/scalework" 1000 2>err; test $? -eq 2; } &&
	expect_grep "the command has no {n}: write {n} where the size goes" err &&
	expect_grep "^usage: hotloop scale" err &&
	test ! -e .hotloop
'

# sizes, and what the error must say
while read -r sizes want; do
	test_expect_success "--sizes '$sizes' is a usage error" '
		{ hotloop scale --sizes "$sizes" -- "$WORKLOADS/scalework" {n} 2>err; test $? -eq 2; } &&
		expect_grep "^hotloop: invalid value .$sizes. for --sizes: $want" err &&
		test ! -e .hotloop
	'
done <<\EOF_CASES
1000,2000 only 2 sizes
1000 only 1 size
, no sizes
1000,abc,4000 .abc. is not a whole number from 1 to 1000000000000000
1000,0,4000 .0. is not a whole number
8,4,8 8 appears twice
1000,2000,4000,x .x. is not a whole number
EOF_CASES

test_expect_success 'a command needs --sizes; a workload and a command are not both given' '
	{ hotloop scale -- "$WORKLOADS/scalework" {n} 2>err; test $? -eq 2; } &&
	expect_grep "a command needs --sizes" err &&
	{ hotloop scale big --sizes 1,2,4 -- "$WORKLOADS/scalework" {n} 2>err; test $? -eq 2; } &&
	expect_grep "give a workload or a command after --, not both" err &&
	{ hotloop scale a b 2>err; test $? -eq 2; } &&
	expect_grep "unexpected argument .b." err &&
	{ hotloop scale --repeat 0 --sizes 1,2,4 -- x {n} 2>err; test $? -eq 2; } &&
	{ hotloop scale --min-samples x --sizes 1,2,4 -- x {n} 2>err; test $? -eq 2; }
'

test_expect_success 'under --json a usage error is an error document' '
	{ hotloop scale --json --sizes 1,2 -- x {n} >out.json 2>err; test $? -eq 2; } &&
	jq -e ".error | test(\"only 2 sizes\")" out.json >/dev/null
'

cat >hotloop.conf <<\EOF_CONF
[workload "grow"]
	run = ./prog {n}
	sizes = 100 200 400
[workload "fixed"]
	run = ./prog 1000
	sizes = 100 200 400
	primary = yes
[workload "nosizes"]
	run = ./prog {n}
EOF_CONF

test_expect_success 'a workload whose run has no {n}: named, with what to add' '
	{ hotloop scale fixed 2>err; test $? -eq 1; } &&
	expect_grep "\[workload \"fixed\"\] runs .\./prog 1000., which has no {n}: add {n} to its .run. line" err &&
	test ! -e .hotloop
'

test_expect_success 'without a name, the primary workload' '
	{ hotloop scale 2>err; test $? -eq 1; } &&
	expect_grep "workload \"fixed\"" err
'

test_expect_success 'an unknown workload: the configured ones are listed' '
	{ hotloop scale nosuch 2>err; test $? -eq 1; } &&
	expect_grep "unknown workload .nosuch. in .*hotloop.conf.: the configured ones are .grow., .fixed., .nosizes.$" err
'

test_expect_success 'a workload without sizes: say how to give them' '
	{ hotloop scale nosizes 2>err; test $? -eq 1; } &&
	expect_grep "\[workload \"nosizes\"\] has no sizes: add .sizes = 1000 2000 4000. .* or pass --sizes" err
'

test_expect_success 'bad sizes in hotloop.conf: the file and line' '
	mkdir bad && printf "[workload \"w\"]\n\trun = ./w {n}\n\tsizes = 10 20\n" >bad/hotloop.conf &&
	{ hotloop scale -f bad/hotloop.conf 2>err; test $? -eq 1; } &&
	expect_grep "bad/hotloop.conf:3: bad value .10 20. for .sizes.: only 2 sizes" err
'

test_done
