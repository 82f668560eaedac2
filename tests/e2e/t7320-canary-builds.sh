#!/bin/sh
# hotloop canary with what t7310 leaves out: --base REV --cand REV, each
# checked out outside the user's tree and built with [project] build (the
# tree, its index and its branches untouched), and `load = COMMAND`, an
# external load run once per build, where only CPU and RSS are judged.
# A candidate commit with 3x the work per request fails on CPU either way.
. "$(dirname "$0")/test-lib.sh"

command -v jq >/dev/null 2>&1 || skip_all="jq is missing"
command -v git >/dev/null 2>&1 || skip_all="needs git"

# exits N CMD...: CMD exits with N
exits() {
	want=$1; shift
	"$@"; rc=$?
	[ "$rc" = "$want" ] || { echo "exit $rc, wanted $want: $*" >&2; return 1; }
}

none_left() {
	! pgrep -f csrv7320 >/dev/null
}

# a service whose work per request is a file of the tree; the build puts
# the binary (a name of its own, for pgrep) into the tree it builds
test_expect_success 'setup: a service in git, then a commit with 3x the work' '
	cat >hotloop.conf <<-EOT &&
	[project]
		build = cp "$ROOT/tests/workloads/bin/canarysrv" ./csrv7320
	[canary "svc"]
		start = ./csrv7320 {port} ok \$(cat work)
		rate = 200
		connections = 4
		timeout = 500ms
		duration = 3s
		warmup = 1s
		window = 250ms
		stop = TERM 2s
		ready-timeout = 3s
	[canary "cmd"]
		start = ./csrv7320 {port} ok \$(cat work)
		load = "$HOTLOOP" load http://127.0.0.1:{port}/ --rate 200 -c 4 --duration 5s
		duration = 3s
		warmup = 1s
		window = 250ms
		stop = TERM 2s
		ready-timeout = 3s
	EOT
	echo 200000 >work &&
	printf "csrv7320\n" >.gitignore &&
	git init -q . && git add . && git -c user.email=t@t -c user.name=t commit -qm base &&
	echo 600000 >work &&
	git -c user.email=t@t -c user.name=t commit -qam slower &&
	git rev-parse HEAD >head.before && git branch >branches.before &&
	git worktree list --porcelain >worktrees.before
'

test_expect_success '--base REV --cand REV: the same commit twice passes' '
	hotloop canary svc -o aa --base HEAD --cand HEAD --json >aa.json &&
	jq -e ".verdict == \"pass\"" aa.json >/dev/null && none_left
'

test_expect_success '--base HEAD~1 --cand HEAD: 3x the work fails on CPU (exit 4)' '
	exits 4 hotloop canary svc -o slow --base HEAD~1 --cand HEAD --json >slow.json &&
	jq -e "[.metrics[] | select(.metric == \"cpu-per-request\")][0].class == \"high\"" slow.json >/dev/null &&
	none_left
'

test_expect_success 'the user tree, its index and its branches are untouched' '
	! test -e csrv7320 &&
	git diff --quiet HEAD && git diff --cached --quiet &&
	git rev-parse HEAD >head.after && cmp head.before head.after &&
	git branch >branches.after && cmp branches.before branches.after &&
	git worktree list --porcelain >worktrees.after && cmp worktrees.before worktrees.after &&
	test "$(cat work)" = 600000
'

# the builds take their turns whole with a command (docs/canary.md): drift
# of a busy machine between them can fail an A/A by a few percent, so
# only what is judged is checked here, not the verdict
test_expect_success 'load = COMMAND: each build loaded by it, only CPU and RSS judged' '
	test_expect_code_rc=0 &&
	hotloop canary cmd -o cmdaa --base HEAD~1 --cand HEAD~1 --json >cmdaa.json || test_expect_code_rc=$? &&
	test "$test_expect_code_rc" = 0 -o "$test_expect_code_rc" = 4 &&
	jq -e "([.metrics[].metric] | sort) == [\"cpu\", \"rss\"] and
	       (.builds.base.windows | length) > 0 and (.builds.cand.windows | length) > 0" cmdaa.json >/dev/null &&
	grep -q "requests" cmdaa/base/load.log && grep -q "requests" cmdaa/cand/load.log && none_left
'

test_expect_success 'load = COMMAND: 3x the work fails on the CPU it takes' '
	exits 4 hotloop canary cmd -o cmdslow --base HEAD~1 --cand HEAD --json >cmdslow.json &&
	jq -e "[.metrics[] | select(.metric == \"cpu\")][0].class == \"high\"" cmdslow.json >/dev/null &&
	none_left
'

test_done
