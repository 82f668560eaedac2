#!/bin/sh
# hotloop mcp driven by the official MCP TypeScript SDK's client
# (tests/e2e/mcp-client.js): initialize, every tool listed with its
# schemas, record -> brief -> compare on the example with each
# structuredContent checked against its outputSchema (ajv), errors as
# lib/ says them, resources; then a bench cancelled halfway must leave no
# process behind, and a workload printing on stdout must not reach the
# protocol's stream.
. "$(dirname "$0")/test-lib.sh"

NPM=$ROOT/build/npm
if ! command -v node >/dev/null 2>&1; then
	skip_all="node is not installed (make deps installs nodejs)"
elif [ ! -f "$NPM/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
     [ ! -f "$NPM/node_modules/ajv/package.json" ]; then
	skip_all="build/npm lacks @modelcontextprotocol/sdk or ajv (make deps installs them)"
fi
for tool in git cc make jq; do
	command -v $tool >/dev/null 2>&1 || skip_all="$tool is missing"
done
test_have_prereq PERF || skip_all=${skip_all:-"perf events are not permitted here (record needs them)"}

client() {
	jq -n --arg npm "$NPM" --arg hotloop "$HOTLOOP" --arg dir "$SCRATCH/$2" --arg log "$SCRATCH/$1.log" \
		'{npm: $npm, hotloop: $hotloop, dir: $dir, log: $log}' >"$1.json" &&
	timeout 900 node "$TEST_DIR/mcp-client.js" "$1" "$1.json" >"$1.out" 2>&1
	rc=$?
	cat "$1.out"
	[ $rc -eq 0 ] || { echo "server's stderr:"; tail -n 30 "$1.log"; return 1; }
}

# The example as its own repository, as t9700 makes it (a smaller big
# input), with the recorded hash-index candidate on the branch cand.
test_expect_success 'setup: the example as a git repository, a candidate on a branch' '
	mkdir wf && (cd "$ROOT/examples/wordfreq" && tar cf - --exclude=./agent --exclude=./wordfreq \
		--exclude=./gen --exclude=./data --exclude=./.hotloop .) | (cd wf && tar xf -) &&
	sed -i "s|^	build = .*|	build = make -j2 wordfreq gen data/small.txt \\&\\& ./gen 50000 8000 >data/big.txt|" \
		wf/hotloop.conf &&
	(cd wf && git init -q -b main . &&
	 git config user.email t@example.com && git config user.name t &&
	 git add . && git commit -q -m wordfreq &&
	 git checkout -q -b cand &&
	 git apply "$ROOT/examples/wordfreq/agent/candidates/05-hash-index.patch" &&
	 git commit -q -am "find words through a hash index" && git checkout -q main)
'

test_expect_success 'an SDK client drives record -> brief -> compare on the example, and every tool' '
	client example wf &&
	expect_grep "^ok: brief: the planted hot function first" example.out &&
	expect_grep "^ok: compare: a verdict" example.out &&
	! grep -q "^not ok" example.out &&
	(cd wf && git status --porcelain --untracked-files=no) >status &&
	! test -s status
'

test_expect_success 'setup: a project with a slow workload (and its child) and a noisy one' '
	mkdir slow &&
	cat >slow/slow.sh <<-\EOS &&
	#!/bin/sh
	echo $$ >>pids
	sleep 300 &
	echo $! >>pids
	wait
	EOS
	cat >slow/noisy.sh <<-\EOS &&
	#!/bin/sh
	echo "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[],\"isError\":true}}"
	echo "not json at all"
	echo "noise on stderr" >&2
	i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done
	EOS
	chmod +x slow/slow.sh slow/noisy.sh &&
	printf "[project]\n\tbuild = echo {\\\\\"jsonrpc\\\\\": 1}\n[workload \"slow\"]\n\trun = ./slow.sh\n\ttimeout = 600s\n[workload \"noisy\"]\n\trun = ./noisy.sh\n" >slow/hotloop.conf &&
	(cd slow && hotloop config >/dev/null)
'

test_expect_success 'a cancelled bench leaves no process; stdout noise stays out of the stream' '
	client cancel slow &&
	expect_grep "^ok: cancel: the server has no process left" cancel.out &&
	! grep -q "^not ok" cancel.out
'

test_done
