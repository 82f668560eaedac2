#!/bin/sh
# hotloop canary NAME: two builds of tests/workloads/canarysrv under the
# same load. An A/A canary passes; a candidate with 3x the work per
# request fails on CPU per request and latency (exit 4); planted errors
# fail at once as critical; a build that exits, one never ready, one that
# stops answering and one that closes connections are each named in the
# verdict, and no service is left behind. Differences are far above noise.
. "$(dirname "$0")/test-lib.sh"

command -v jq >/dev/null 2>&1 || skip_all="jq is missing"

# a name of its own, so pgrep finds this test's services only
test_expect_success 'setup: the service and its canary' '
	cp "$ROOT/tests/workloads/bin/canarysrv" ./csrv7310 &&
	cat >hotloop.conf <<-\EOT
	[canary "svc"]
		start = ./csrv7310 {port} ok 200000
		rate = 200
		connections = 4
		timeout = 500ms
		duration = 3s
		warmup = 1s
		window = 250ms
		stop = TERM 2s
		ready-timeout = 3s
	EOT
	git init -q . && git add hotloop.conf && git -c user.email=t@t -c user.name=t commit -qm c
'

# exits N CMD...: CMD exits with N
exits() {
	want=$1; shift
	"$@"; rc=$?
	[ "$rc" = "$want" ] || { echo "exit $rc, wanted $want: $*" >&2; return 1; }
}

none_left() {
	! pgrep -f csrv7310 >/dev/null
}

test_expect_success 'A/A: the same build twice passes, every file written' '
	hotloop canary svc -o aa --json >aa.json &&
	jq -e ".verdict == \"pass\" and (.metrics | length) == 8 and (.score | type) == \"number\" and
	       (.builds.base.windows | length) == 16 and (.builds.cand.total.answered > 0) and
	       ([.metrics[] | select(.metric == \"errors\")][0].critical == true)" aa.json >/dev/null &&
	test -s aa/report.md && test -s aa/canary.html && test -s aa/canary.json &&
	test -e aa/base/service.log && test -s aa/cand/timeline.json &&
	grep -q "^## Canary .svc.: \*\*pass\*\*" aa/report.md &&
	grep -q "<svg" aa/canary.html && ! grep -q "<script" aa/canary.html &&
	none_left
'

test_expect_success 'a candidate with 3x the work per request fails (exit 4) on CPU per request' '
	exits 4 hotloop canary svc -o slow --cand-cmd "./csrv7310 {port} ok 600000" >slow.out &&
	grep -q "^canary svc: fail" slow.out &&
	grep -q "^cpu-per-request .*high FAIL" slow.out &&
	grep -q "^p50 .*high FAIL" slow.out &&
	grep -q "alternating windows" slow.out &&
	none_left
'

test_expect_success 'planted errors fail as critical, whatever the score' '
	exits 4 hotloop canary svc -o err --cand-cmd "./csrv7310 {port} errors 200000" --json >err.json &&
	jq -e ".verdict == \"fail\" and .critical_failed == true and
	       (.reason | test(\"critical metric .errors.\")) and (.reason | test(\"http_5xx\")) and
	       .builds.cand.total.errors.http_5xx > 0 and .builds.base.total.nr_errors == 0" err.json >/dev/null &&
	none_left
'

test_expect_success 'a build that exits at once is named in the verdict' '
	exits 4 hotloop canary svc -o exit --cand-cmd "./csrv7310 {port} exit" >exit.out 2>exit.err &&
	grep -q "^canary svc: fail.*the candidate: the service exited before it was ready (exit status 3)" exit.out &&
	none_left
'

test_expect_success 'a build that is never ready is named, and stopped' '
	exits 4 hotloop canary svc -o deaf --cand-cmd "./csrv7310 {port} deaf" >deaf.out 2>deaf.err &&
	grep -q "the candidate: the service was not ready after 3 s" deaf.out &&
	none_left
'

test_expect_success 'a base that will not start is an error (exit 1), the candidate stopped' '
	exits 1 hotloop canary svc -o bexit --base-cmd "./csrv7310 {port} exit" >bexit.out 2>bexit.err &&
	grep -q "the base build cannot be judged: the service exited before it was ready" bexit.err &&
	none_left
'

test_expect_success 'a server that stops answering mid-canary fails on timeouts' '
	exits 4 hotloop canary svc -o hang --cand-cmd "./csrv7310 {port} hang 200000" --json >hang.json &&
	jq -e ".verdict == \"fail\" and .critical_failed == true and .builds.cand.total.errors.timeout > 0 and
	       (.reason | test(\"timeout\"))" hang.json >/dev/null &&
	none_left
'

test_expect_success 'a server that closes connections fails, the closes named' '
	exits 4 hotloop canary svc -o close --cand-cmd "./csrv7310 {port} close 200000" --json >close.json &&
	jq -e ".verdict == \"fail\" and .critical_failed == true and .builds.cand.total.errors.closed > 0 and
	       (.reason | test(\"closed\"))" close.json >/dev/null &&
	none_left
'

test_expect_success '--base DIR --cand DIR: each build runs in its own directory' '
	mkdir -p b c && cp csrv7310 b/ && cp csrv7310 c/ &&
	hotloop canary svc -o dirs --base b --cand c --no-build --json >dirs.json &&
	jq -e ".verdict == \"pass\"" dirs.json >/dev/null && none_left
'

test_expect_success 'usage and config errors name what is wrong' '
	exits 2 hotloop canary svc --base b 2>usage.err &&
	grep -q "base and --cand go together" usage.err &&
	exits 1 hotloop canary nosuch 2>nosuch.err &&
	grep -q "unknown canary .nosuch. in .*: the configured ones are .svc." nosuch.err &&
	mkdir bad && printf "[canary \"x\"]\n\tstart = ./s\n\trate = fast\n" >bad/hotloop.conf &&
	exits 1 hotloop canary x -f bad/hotloop.conf 2>bad.err &&
	grep -q "bad value for .rate. in .canary .x..: expected requests a second" bad.err
'

test_done
