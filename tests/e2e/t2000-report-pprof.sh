#!/bin/sh
# report on pprof files from another producer (Go's runtime/pprof) and on
# bad input: the ranking, the JSON shape, and clean errors.
. "$(dirname "$0")/test-lib.sh"

if test_have_prereq GO; then
	(cd "$SCRATCH" && GOFLAGS=-mod=mod go run "$ROOT/tests/workloads/goprof/main.go" go.pb.gz) \
		>/dev/null 2>&1
fi
[ -s go.pb.gz ] || skip_all="go is missing or could not build tests/workloads/goprof"

test_expect_success 'go profile: the hot Go function is on top' '
	hotloop report --top 0 go.pb.gz >out &&
	sed -n 3p out | grep -q "main.goHotLoop" &&
	expect_grep "runtime.main" out
'

test_expect_success 'json: keys and types' '
	hotloop report --json --top 2 go.pb.gz >out.json &&
	jq -e "(.total|type==\"number\") and (.stacks|type==\"number\") and
	       (.sample_type==\"samples/count\") and (.rows|length==2) and
	       (.rows[0]|(.name|type==\"string\") and (.self|type==\"number\") and
	        (.self_pct|type==\"number\") and (.total|type==\"number\") and
	        (.total_pct|type==\"number\") and (.file|type==\"string\") and
	        (.line|type==\"number\") and (.dso|type==\"string\") and
	        (.inlined|type==\"boolean\"))" out.json >/dev/null &&
	jq -e ".rows[0].name==\"main.goHotLoop\" and .rows[0].self*2 > .total" out.json >/dev/null
'

test_expect_success 'sort by total puts the root first' '
	hotloop report --json --sort total go.pb.gz >out.json &&
	jq -e ".rows[0].total_pct >= 90 and .rows[0].total >= .rows[1].total" out.json >/dev/null
'

test_expect_success 'by file and by dso' '
	hotloop report --json --by file go.pb.gz >file.json &&
	jq -e "[.rows[].name] | any(endswith(\"goprof/main.go\"))" file.json >/dev/null &&
	hotloop report --json --by dso go.pb.gz >dso.json &&
	jq -e ".rows | length >= 1" dso.json >/dev/null
'

skip_all=""

test_expect_code 2 'unknown --by is a usage error' 'hotloop report --by colour x.pb.gz'
test_expect_code 2 'bad --top is a usage error' 'hotloop report --top many x.pb.gz'
test_expect_code 1 'missing file' 'hotloop report nosuch.pb.gz'

test_expect_success 'corrupt and truncated input give a clean error' '
	head -c 3000 /dev/urandom >junk.pb.gz &&
	{ hotloop report junk.pb.gz 2>err; test $? -eq 1; } &&
	expect_grep "^hotloop: cannot read .junk.pb.gz." err &&
	printf "\037\213\010\000garbage" >trunc.pb.gz &&
	{ hotloop report trunc.pb.gz 2>err; test $? -eq 1; } &&
	expect_grep "^hotloop: cannot read .trunc.pb.gz." err
'

test_expect_success 'json error document' '
	{ hotloop report --json nosuch.pb.gz >out.json 2>/dev/null; test $? -eq 1; } &&
	jq -e ".error | test(\"nosuch.pb.gz\")" out.json >/dev/null
'

test_expect_success 'json error document for a path that is not UTF-8: bad bytes as U+FFFD' '
	bad=$(printf "no\377such.pb.gz") &&
	{ hotloop report --json "$bad" >out.json 2>/dev/null; test $? -eq 1; } &&
	jq -e ".error | test(\"no\\ufffdsuch.pb.gz\")" out.json >/dev/null
'

# Out of memory is a message and exit status 1, not abort()'s 134: a gzip
# bomb of a folded profile inflates past the address space ulimit -v leaves.
# ASan reserves terabytes of shadow at start, so a sanitized build cannot run.
OOM_KB=98304
oom_title='out of memory: a message on stderr and exit status 1'
printf "main 1\n" >small.folded
if ldd "$HOTLOOP" 2>/dev/null | grep -q libasan || nm "$HOTLOOP" 2>/dev/null | grep -q __asan_init; then
	test_skip "$oom_title" "a sanitized build: ASan does not start under ulimit -v"
elif ! (ulimit -v $OOM_KB && hotloop report small.folded) >/dev/null 2>&1; then
	test_skip "$oom_title" "hotloop does not start under ulimit -v $OOM_KB here"
else
test_expect_code 1 "$oom_title" '
	yes "main;parse;strlen 1" | head -c 268435456 | gzip -1 >big.folded.gz || exit 99
	(ulimit -v $OOM_KB && hotloop report --json big.folded.gz) >out 2>err
	rc=$?
	expect_grep "^hotloop: out of memory (allocating [0-9]* bytes)$" err || exit 99
	test $(wc -l <err) -eq 1 || { cat err; exit 99; }
	test ! -s out || { cat out; exit 99; }
	exit $rc
'
fi

test_expect_success 'a full disk is an error, not a silent success' '
	test -w /dev/full || { echo "no /dev/full"; exit 0; }
	printf "\n" | hotloop report --help >/dev/full 2>err && exit 1
	expect_grep "cannot write output" err
'

test_done
