#!/bin/sh
# hotloop store: a repository without a store (it says so and makes one,
# kept out of git status), a file that is not a store (a clear error, the
# file left alone), and a store filled with the sqlite3 CLI: the counts
# and the last loop's attempts, plain and as JSON.
. "$(dirname "$0")/test-lib.sh"

command -v sqlite3 >/dev/null || skip_all="needs the sqlite3 CLI (apt-get install sqlite3)"
command -v jq >/dev/null || skip_all="needs jq (apt-get install jq)"

test_expect_success 'a repository without a store: says so, creates it, exit 0' '
	mkdir repo && (cd repo && git init -q . && mkdir sub) &&
	(cd repo/sub && hotloop store) >out &&
	expect_grep "^store  $(cd repo && pwd -P)/.hotloop/hotloop.db (schema [1-9][0-9]*)" out &&
	expect_grep "there was no store here: created an empty one" out &&
	expect_grep "^loops  *0$" out &&
	expect_grep "^no loops yet" out &&
	test -f repo/.hotloop/hotloop.db &&
	test -z "$(cd repo && git status --porcelain)"
'

test_expect_success 'the second time it is only read' '
	(cd repo && hotloop store) >out &&
	! grep -q "created" out &&
	(cd repo && hotloop store --json) >out.json &&
	test "$(jq -r .created out.json)" = false &&
	test "$(jq .schema out.json)" -ge 1 &&
	test "$(jq .schema_found out.json)" = "$(jq .schema out.json)" &&
	test "$(jq -c .counts out.json)" = "{\"loops\":0,\"runs\":0,\"measurements\":0,\"attempts\":0,\"activity\":0}" &&
	test "$(jq .last_loop out.json)" = null
'

test_expect_success 'a file that is not a store: a clear error, exit 1, the file unchanged' '
	i=0 && while [ $i -lt 64 ]; do echo "line $i of a text file"; i=$((i + 1)); done >garbage.db &&
	cp garbage.db garbage.orig &&
	{ hotloop store --db garbage.db >out 2>err; test $? -eq 1; } &&
	expect_grep "^hotloop: cannot open .garbage.db.: file is not a database" err &&
	expect_grep "move it away" err &&
	test ! -s out &&
	cmp garbage.db garbage.orig &&
	{ hotloop store --json --db garbage.db >out.json 2>err; test $? -eq 1; } &&
	jq -e ".error | test(\"not a database\")" out.json >/dev/null &&
	cmp garbage.db garbage.orig
'

test_expect_success 'a truncated store: a clear error, exit 1' '
	cp repo/.hotloop/hotloop.db whole.db &&
	head -c 10000 whole.db >cut.db &&
	{ hotloop store --db cut.db 2>err; test $? -eq 1; } &&
	expect_grep "cannot open .cut.db.: .*damaged" err
'

test_expect_success 'a store written by a newer hotloop is refused' '
	cp repo/.hotloop/hotloop.db newer.db &&
	sqlite3 newer.db "PRAGMA user_version = 7" &&
	{ hotloop store --db newer.db 2>err; test $? -eq 1; } &&
	expect_grep "written by a newer hotloop: schema 7, this one knows [1-6]$" err
'

cat >fill.sql <<\EOF
INSERT INTO loops (started_at, updated_at, finished_at, repo, branch, base_commit, status,
	stop_reason, rounds_planned)
VALUES (1714500000, 1714500000, 1714500100, '/src/old', 'hotloop/2024-04-30', 'aaaa',
	'stopped', 'interrupted', 3);
INSERT INTO loops (started_at, updated_at, repo, branch, base_commit, best_commit, status,
	rounds_planned, config_json)
VALUES (1714564803.5, 1714564803.5, '/src/proj', 'hotloop/2024-05-01', '0123456789abcdef0123',
	'feedfacefeedface', 'running', 5, '{"improve": {"rounds": 5}}');
INSERT INTO attempts (loop_id, round, function, verdict, reasons_json, stage, started_at,
	updated_at)
VALUES (1, 1, 'old_fn', 'reject', '[]', 'build', 1, 1);
INSERT INTO attempts (loop_id, round, lens, function, verdict, reasons_json, stage, change_pct,
	ci_low_pct, ci_high_pct, commit_sha, started_at, updated_at)
VALUES (2, 1, 'allocation', 'tokenize', 'keep', '["cpu -4.2% [-5.1%, -3.3%]"]', 'compare',
	-4.2, -5.1, -3.3, 'feedfacefeedface', 1714564900, 1714564900);
INSERT INTO attempts (loop_id, round, function, verdict, reasons_json, stage, started_at,
	updated_at)
VALUES (2, 2, 'parse_line', 'reject', '["the tests failed (exit 1)", "it''s \"quoted\""]',
	'test', 1714565000, 1714565000);
INSERT INTO runs (loop_id, kind, started_at, updated_at) VALUES (2, 'compare', 1, 1);
INSERT INTO measurements (run_id, workload, pair_index, side, position, warmup, cpu_s, created_at)
VALUES (1, 'big', 0, 'base', 0, 0, 0.5, 1), (1, 'big', 0, 'cand', 1, 0, 0.48, 1),
	(1, 'big', NULL, 'base', NULL, 1, 0.51, 1);
INSERT INTO activity (at, loop_id, level, kind, message)
VALUES (1714564803.5, 2, 'info', 'round-start', 'round 1 of 5');
EOF

test_expect_success 'filled with sqlite3: the counts and the last loop with its attempts' '
	sqlite3 repo/.hotloop/hotloop.db <fill.sql &&
	(cd repo && hotloop store) >out &&
	expect_grep "^loops  *2$" out &&
	expect_grep "^runs  *1$" out &&
	expect_grep "^measurements  *3$" out &&
	expect_grep "^attempts  *3$" out &&
	expect_grep "^activity  *1$" out &&
	expect_grep "^last loop 2: running, started 2024-05-01 12:00:03 UTC" out &&
	expect_grep "^  branch  hotloop/2024-05-01" out &&
	expect_grep "^  base    0123456789ab, best feedfacefeed" out &&
	expect_grep "^  rounds  5 planned, 2 attempted" out &&
	expect_grep "^    1  keep  *compare  *-4.2%  \[-5.1%, -3.3%\]  *tokenize (allocation) -> feedfacefeed" out &&
	expect_grep "^       - cpu -4.2% \[-5.1%, -3.3%\]" out &&
	expect_grep "^    2  reject  *test  *-  *-  *parse_line" out &&
	expect_grep "^       - it.s \"quoted\"" out &&
	! grep -q old_fn out
'

test_expect_success '--json has the same' '
	(cd repo && hotloop store --json) >out.json &&
	test "$(jq -c .counts out.json)" = "{\"loops\":2,\"runs\":1,\"measurements\":3,\"attempts\":3,\"activity\":1}" &&
	test "$(jq .last_loop.id out.json)" = 2 &&
	test "$(jq -r .last_loop.status out.json)" = running &&
	test "$(jq .last_loop.started_at out.json)" = 1714564803.5 &&
	test "$(jq .last_loop.finished_at out.json)" = null &&
	test "$(jq .last_loop.rounds_planned out.json)" = 5 &&
	test "$(jq .last_loop.config.improve.rounds out.json)" = 5 &&
	test "$(jq ".last_loop.attempts | length" out.json)" = 2 &&
	test "$(jq -r ".last_loop.attempts | map(.verdict) | join(\",\")" out.json)" = keep,reject &&
	test "$(jq -r ".last_loop.attempts[0].reasons[0]" out.json)" = "cpu -4.2% [-5.1%, -3.3%]" &&
	test "$(jq ".last_loop.attempts[0].change_pct" out.json)" = -4.2 &&
	test "$(jq -r ".last_loop.attempts[1].reasons[1]" out.json)" = "it'\''s \"quoted\"" &&
	test "$(jq ".last_loop.attempts[1].change_pct" out.json)" = null &&
	jq -e ".last_loop.attempts[] | (.id|type) == \"number\" and (.reasons|type) == \"array\"
		and (.function|type) == \"string\" and (has(\"diff\")|not)" out.json >/dev/null
'

test_expect_success 'outside a git repository without --db: exit 1' '
	mkdir nogit &&
	{ (cd nogit && hotloop store 2>../err); test $? -eq 1; } &&
	expect_grep "not inside a git repository" err &&
	test ! -e nogit/.hotloop
'

test_expect_code 2 'an unknown option is a usage error' 'hotloop store --frobnicate'

test_done
