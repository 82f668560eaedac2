#!/bin/sh
# hotloop mcp's JSON-RPC as bytes on its standard input: version
# negotiation, requests before initialize, errors for bad lines (an
# overlong one included) without losing the session, tool errors carrying
# lib/'s message, and the exit when standard input ends. No perf needed.
. "$(dirname "$0")/test-lib.sh"

command -v jq >/dev/null 2>&1 || skip_all="jq is missing"

init() {
	printf '{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"t9951","version":"1"}}}\n' "$1"
}

# serve IN OUT: the server's answers to the lines of IN, one JSON value a line
serve() {
	hotloop mcp <"$1" >"$2" 2>"$2.err"
}

# serve_wait IN OUT N: the same, standard input held open until N answers
# came (the end of input cancels what still runs, as the protocol's
# shutdown says), at most a minute
serve_wait() {
	rm -f fifo && mkfifo fifo &&
	{ hotloop mcp <fifo >"$2" 2>"$2.err" & } &&
	exec 3>fifo && cat "$1" >&3 &&
	i=0 && while [ "$(wc -l <"$2")" -lt "$3" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	exec 3>&-
	wait
}

test_expect_success 'each version spoken is answered as asked, any other with the newest' '
	for v in 2025-11-25 2025-06-18 2025-03-26 2024-11-05 1999-01-01; do
		init $v >in && serve in out &&
		jq -e ".id == \"i\" and .jsonrpc == \"2.0\" and .result.serverInfo.name == \"hotloop\" and
			(.result.capabilities.tools | type) == \"object\"" out >/dev/null &&
		jq -r .result.protocolVersion out >>got || exit 1
	done &&
	printf "2025-11-25\n2025-06-18\n2025-03-26\n2025-11-25\n2025-11-25\n" >want &&
	test_cmp_ok=$(cmp want got && echo yes) && test "$test_cmp_ok" = yes
'

test_expect_success 'protocol 2025-03-26: a batch gets one array, the tool run by the worker in it' '
	{ init 2025-03-26 &&
	  echo "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"kb_search\",\"arguments\":{\"query\":\"x\"}}}]" &&
	  echo "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"; } >in &&
	serve_wait in out 3 &&
	test "$(wc -l <out)" = 3 &&
	jq -s -e "[.[] | select(type == \"array\")] | length == 1 and (.[0] | length == 2 and
		([.[].id] | sort) == [1, 2] and (.[] | select(.id == 2) | .result.content | length) > 0)" out >/dev/null &&
	jq -s -e "[.[] | select(type == \"object\" and .id == 3)] | length == 1" out >/dev/null
'

test_expect_success 'before initialize only ping is answered' '
	{ echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}" &&
	  echo "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}" &&
	  init 2025-11-25; } >in &&
	serve in out &&
	jq -s -e "length == 3 and .[0].error.code == -32600 and (.[0].error.message | test(\"initialize\")) and
		.[1].result == {} and .[2].result.protocolVersion == \"2025-11-25\"" out >/dev/null
'

test_expect_success 'bad lines get JSON-RPC errors and the session goes on' '
	{ init 2025-11-25 &&
	  echo "this is not json" &&
	  head -c 5000000 /dev/zero | tr "\\0" x && echo &&
	  echo "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"no/such\"}" &&
	  echo "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}" &&
	  echo "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":\"x\"}" &&
	  echo "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}" &&
	  echo "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}"; } >in &&
	serve in out &&
	jq -s -e "length == 7 and
		.[1].error.code == -32700 and .[1].id == null and
		.[2].error.code == -32700 and (.[2].error.message | test(\"longer than\")) and
		.[3].error.code == -32601 and .[3].id == 3 and
		.[4].error.code == -32602 and (.[4].error.message | test(\"unknown tool .nope.\")) and
		.[5].error.code == -32602 and
		.[6].id == 6 and .[6].result == {}" out >/dev/null
'

test_expect_success 'a tool error is a result with isError and lib/s message, also on stderr' '
	{ init 2025-11-25 &&
	  echo "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"report\",\"arguments\":{\"profile\":\"/etc/hostname\"}}}"; } >in &&
	serve_wait in out 2 &&
	jq -s -e ".[1].result.isError == true and (.[1].result.structuredContent == null) and
		(.[1].result.content[0].text | test(\"outside the project\"))" out >/dev/null &&
	expect_grep "^hotloop: .*/etc/hostname.* is outside the project" out.err
'

test_expect_success 'tools/list: every tool with its schemas' '
	{ init 2025-11-25 && echo "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"}"; } >in &&
	serve in out &&
	jq -s -e ".[1].result.tools | map(.name) | sort ==
		([\"asm\",\"bench\",\"brief\",\"compare\",\"flame\",\"kb_search\",\"kb_show\",\"loop_status\",
		  \"record\",\"report\",\"scale\",\"scenario\"])" out >/dev/null &&
	jq -s -e "[.[1].result.tools[] | (.inputSchema.type == \"object\" and .outputSchema.type == \"object\" and
		(.outputSchema.required | length) > 0)] | all" out >/dev/null
'

test_expect_success 'the end of input cancels the tool running: its workload goes too' '
	{ init 2025-11-25 &&
	  echo "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"bench\",\"arguments\":{\"command\":[\"sh\",\"-c\",\"echo \$\$ >>pids; exec sleep 300\"],\"runs\":3,\"warmup\":0}}}"; } >in &&
	rm -f fifo && mkfifo fifo &&
	{ timeout 120 "$HOTLOOP" mcp --allow-commands <fifo >out 2>out.err & } && srv=$! &&
	exec 3>fifo && cat in >&3 &&
	i=0 && while ! test -s pids && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done &&
	pid=$(head -n 1 pids) && kill -0 "$pid" &&
	exec 3>&- &&
	wait $srv &&
	! kill -0 "$pid" 2>/dev/null &&
	test "$(wc -l <out)" = 1
'

if test_have_prereq PERF; then
test_expect_success 'a cancelled record stops its command at once; the session goes on' '
	git init -q rec && cd rec &&
	test_when_finished "cd .." &&
	{ init 2025-11-25 &&
	  echo "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}" &&
	  echo "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"record\",\"arguments\":{\"command\":[\"sh\",\"-c\",\"echo \$\$ >>pids; exec sleep 300\"]},\"_meta\":{\"progressToken\":\"p\"}}}"; } >in &&
	rm -f fifo && mkfifo fifo &&
	{ timeout 120 "$HOTLOOP" mcp --allow-commands <fifo >out 2>out.err & } && srv=$! &&
	exec 3>fifo && cat in >&3 &&
	i=0 && while ! test -s pids && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done &&
	pid=$(head -n 1 pids) && kill -0 "$pid" &&
	echo "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":9,\"reason\":\"t9951\"}}" >&3 &&
	echo "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"kb_search\",\"arguments\":{\"query\":\"x\"}}}" >&3 &&
	i=0 && while ! grep -q "\"id\":10" out && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done &&
	! kill -0 "$pid" 2>/dev/null &&
	hl=$(ps -o pid= --ppid "$srv") && test -n "$hl" &&
	test -z "$(ps -o pid= --ppid $hl)" &&
	exec 3>&- &&
	wait $srv &&
	! grep -q "\"id\":9" out &&
	test "$(grep -c "\"id\":10" out)" = 1
'
else
	test_skip 'a cancelled record stops its command at once; the session goes on' 'perf cannot sample here'
fi

test_expect_success 'it exits 0 when standard input ends; usage errors exit 2' '
	: >empty && hotloop mcp <empty >out 2>err && ! test -s out &&
	test_expect_code_rc=0; hotloop mcp --nope </dev/null >out 2>err || test_expect_code_rc=$? &&
	test "$test_expect_code_rc" = 2 && expect_grep "unknown option" err &&
	test_expect_code_rc=0; hotloop mcp --root /no/such/dir </dev/null >out 2>err || test_expect_code_rc=$? &&
	test "$test_expect_code_rc" = 2
'

test_done
