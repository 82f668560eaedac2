#!/bin/sh
# hotloop kb list/show/search on a knowledge base written by hand in the
# documented format (docs/kb.md), found through --dir, hotloop.conf and
# ./kb; JSON shapes; unknown slugs with suggestions; usage errors; the
# attempts in hotloop brief.
. "$(dirname "$0")/test-lib.sh"

entry() {	# entry DIR: report.md from standard input
	mkdir -p "$1" && cat >"$1/report.md"
}
test_must_be_empty_file() { test ! -s "$1" || { cat "$1"; return 1; }; }

test_expect_success 'a knowledge base written by hand' '
	entry kb/hash-table-for-find-word-29112026 <<-\EOF &&
	# hash table for find_word

	- function: find_word
	- verdict: reject
	- date: 2026-11-29 14:03:12 +0000
	- round: 3
	- lens: algorithmic
	- expected gain: 25%
	- change: +3.1% cpu on big [+2.0, +4.2]
	- commit: none

	## What

	A hash table instead of the sorted array.

	## Hypothesis

	A binary search per word is O(log n); a hash table lookup is O(1).

	## Results

	Expected -25%, measured +3.1%: the table misses the cache.

	## Verdict

	**reject**

	- slower: +3.1% cpu on big [+2.0, +4.2]
	- guard small regressed
	  by 0.4%
	EOF
	cat >kb/hash-table-for-find-word-29112026/diff.md <<-\EOF &&
	# Diff: hash table for find_word

	Files changed: `src/words.c` (+1 -1).

	```diff
	--- a/src/words.c
	+++ b/src/words.c
	@@ -1 +1 @@
	-old line
	+new line
	```
	EOF
	entry kb/sorted-index-30112026 <<-\EOF &&
	# Sorted index

	- Function: find_word
	- verdict: keep
	- date: 2026-11-30
	- change: -12.3% cpu on big [-13.1, -11.4]
	- commit: 0123abc

	## Verdict

	- faster on big
	EOF
	entry kb/memoize-hash-word-01122026 <<-\EOF &&
	# memoize the hash of each word

	- function: hash_word
	- verdict: inconclusive

	## Hypothesis

	The same words are hashed again and again.
	EOF
	mkdir kb/.tmp-1-0 && echo "# half" >kb/.tmp-1-0/report.md &&
	echo "not an entry" >kb/index.md
'

test_expect_success 'list: newest first, one line each' '
	hotloop kb list >out 2>err &&
	test_must_be_empty_file err &&
	sed -n 1p out | grep -q "^date  *verdict  *function  *change  *slug$" &&
	sed -n 2p out | grep -q "^2026-12-01  inconclusive  hash_word  *-  *memoize-hash-word-01122026$" &&
	sed -n 3p out | grep -q "^2026-11-30  keep  *find_word  *-12.3% cpu on big \[-13.1, -11.4\]  sorted-index-30112026$" &&
	sed -n 4p out | grep -q "^2026-11-29  reject  *find_word  *+3.1% cpu on big \[+2.0, +4.2\]  *hash-table-for-find-word-29112026$" &&
	test $(wc -l <out) -eq 4
'

test_expect_success 'list --json: the shape of each attempt' '
	hotloop kb list --json >out.json &&
	python3 - out.json <<-\EOF
	import json, sys
	doc = json.load(open(sys.argv[1]))
	assert doc["kb"] == "kb", doc["kb"]
	a = doc["attempts"]
	assert [e["slug"] for e in a] == ["memoize-hash-word-01122026", "sorted-index-30112026",
	                                  "hash-table-for-find-word-29112026"], a
	assert "query" not in doc
	h = a[2]
	types = {"slug": str, "dir": str, "title": str, "function": str, "verdict": str, "date": str,
	         "round": int, "lens": str, "expected_gain_pct": float, "change": str, "what": str,
	         "hypothesis": str, "results": str, "reasons": list}
	for k, t in types.items():
	    assert isinstance(h[k], t), (k, h[k])
	assert h["commit"] is None
	assert h["date"] == "2026-11-29T14:03:12+00:00"
	assert h["expected_gain_pct"] == 25
	assert h["reasons"] == ["slower: +3.1% cpu on big [+2.0, +4.2]", "guard small regressed\nby 0.4%"]
	assert "diff" not in h
	s = a[1]
	assert s["commit"] == "0123abc" and s["function"] == "find_word" and s["round"] is None
	assert s["hypothesis"] is None and s["lens"] is None and s["expected_gain_pct"] is None
	m = a[0]
	assert m["date"] == "2026-12-01T00:00:00+00:00", m["date"]   # from the slug
	assert m["reasons"] == []
	EOF
'

test_expect_success 'show: the report as written, the diff with --diff' '
	hotloop kb show hash-table-for-find-word-29112026 >out &&
	cmp out kb/hash-table-for-find-word-29112026/report.md &&
	hotloop kb show hash-table-for-find-word --diff >out &&
	expect_grep "^- verdict: reject$" out &&
	expect_grep "^-old line$" out &&
	expect_grep "^# Diff: hash table for find_word$" out
'

test_expect_success 'show --json --diff: the attempt with its diff' '
	hotloop kb show --json --diff hash-table-for-find-word >out.json &&
	python3 -c "
import json, sys
e = json.load(open(\"out.json\"))
assert e[\"slug\"] == \"hash-table-for-find-word-29112026\"
assert e[\"diff\"] == \"--- a/src/words.c\n+++ b/src/words.c\n@@ -1 +1 @@\n-old line\n+new line\n\", e[\"diff\"]
"
'

test_expect_success 'search: every word, in any case, and --function exactly' '
	hotloop kb search HASH >out &&
	test $(wc -l <out) -eq 3 &&
	expect_grep "memoize-hash-word-01122026" out &&
	expect_grep "hash-table-for-find-word-29112026" out &&
	hotloop kb search hash cache >out &&
	expect_grep "no attempt in .kb. matches" out &&
	hotloop kb search hash again >out &&
	test $(wc -l <out) -eq 2 && expect_grep "memoize" out &&
	hotloop kb search regressed >out &&
	expect_grep "hash-table-for-find-word" out &&
	hotloop kb search --function find_word >out &&
	test $(wc -l <out) -eq 3 &&
	hotloop kb search --function find >out &&
	expect_grep "matches" out &&
	hotloop kb list --function hash_word >out &&
	test $(wc -l <out) -eq 2
'

test_expect_success 'search --json: the query and the matches' '
	hotloop kb search --json --function find_word sorted >out.json &&
	python3 -c "
import json
d = json.load(open(\"out.json\"))
assert d[\"query\"] == {\"words\": [\"sorted\"], \"function\": \"find_word\"}, d[\"query\"]
assert [a[\"slug\"] for a in d[\"attempts\"]] == [\"sorted-index-30112026\"]
"
'

test_expect_code 1 'an unknown slug is an error naming the nearest' '
	hotloop kb show hash-tabel-for-find-word 2>err; rc=$?
	expect_grep "no attempt .hash-tabel-for-find-word. in .kb." err &&
	expect_grep "^	hash-table-for-find-word-29112026$" err || exit 99; exit $rc
'

test_expect_code 1 'unknown slug under --json: an error document' '
	hotloop kb show --json nothing-like-it >out 2>err; rc=$?
	python3 -c "
import json
assert \"no attempt\" in json.load(open(\"out\"))[\"error\"]
" || exit 99; exit $rc
'

test_expect_success 'a damaged entry is skipped with a warning naming it' '
	mkdir kb/broken-02122026 &&
	printf "\000\001\002" >kb/broken-02122026/report.md &&
	test_when_finished "rm -rf kb/broken-02122026" &&
	hotloop kb list >out 2>err &&
	expect_grep "warning: .kb/broken-02122026/report.md. holds NUL bytes" err &&
	test $(wc -l <out) -eq 4
'

test_expect_success 'the kb of hotloop.conf, from a subdirectory' '
	mkdir -p proj/src proj/notes/attempts &&
	printf "[project]\n\tkb = notes/attempts\n[workload \"w\"]\n\trun = true\n" >proj/hotloop.conf &&
	cp -r kb/sorted-index-30112026 proj/notes/attempts/ &&
	(cd proj/src && hotloop kb list) >out &&
	test $(wc -l <out) -eq 2 && expect_grep "sorted-index-30112026" out &&
	(cd proj/src && hotloop kb list --json) >out.json &&
	grep -q "\"kb\": \".*/proj/notes/attempts\"" out.json &&
	hotloop kb list -f proj/hotloop.conf >out &&
	expect_grep "sorted-index-30112026" out
'

test_expect_success 'no knowledge base: no attempts yet' '
	mkdir empty && (cd empty && hotloop kb list) >out &&
	expect_grep "^no attempts yet in .kb.$" out &&
	hotloop kb list --dir empty/none --json >out.json &&
	python3 -c "
import json
d = json.load(open(\"out.json\"))
assert d == {\"kb\": \"empty/none\", \"attempts\": []}, d
"
'

cat >words.folded <<-\EOC
main;count_words;find_word;strcmp 60
main;count_words;find_word 20
main;count_words;hash_word 20
EOC

test_expect_success 'brief --kb: the attempts on each hotspot, and the question they raise' '
	hotloop brief --kb kb words.folded >out.md &&
	expect_grep "^- knowledge base: kb, 3 attempts" out.md &&
	expect_grep "^- tried before: keep (-12.3% cpu on big \[-13.1, -11.4\]) kb/sorted-index-30112026$" out.md &&
	expect_grep "^- tried before: reject (+3.1% cpu on big \[+2.0, +4.2\]) kb/hash-table-for-find-word-29112026: A binary search per word is O(log n); a hash table lookup is O(1).$" out.md &&
	expect_grep "^- tried before: inconclusive kb/memoize-hash-word-01122026: The same words are hashed again and again.$" out.md &&
	expect_grep "^- .find_word. was improved before (kept), -12.3% cpu on big \[-13.1, -11.4\]: see kb/sorted-index-30112026 and the attempt before it. What is left to gain, and where?$" out.md &&
	hotloop brief --kb kb --json words.folded >out.json &&
	jq -e ".kb == {\"dir\": \"kb\", \"attempts\": 3}" out.json &&
	jq -e "[.hotspots[0].kb[].slug] == [\"sorted-index-30112026\", \"hash-table-for-find-word-29112026\"]" out.json &&
	jq -e ".hotspots[0].kb[0] | .verdict == \"keep\" and .hypothesis == null and (.change|type) == \"string\"" out.json &&
	jq -e ".questions[0] | (.question | startswith(\"\`find_word\` was improved before\")) and .hotspots == [1]" out.json &&
	jq -e ".hotspots[1].function == \"hash_word\" and (.hotspots[1].kb|length) == 1" out.json
'

test_expect_success 'brief: the kb of hotloop.conf when it exists, none without' '
	cp words.folded proj/ &&
	(cd proj && hotloop brief --json words.folded) >out.json &&
	jq -e ".kb == {\"dir\": \"notes/attempts\", \"attempts\": 1}" out.json &&
	jq -e ".hotspots[0].kb[0].slug == \"sorted-index-30112026\"" out.json &&
	mkdir nokb && cp words.folded nokb/ && (cd nokb && hotloop brief --json words.folded) >out.json &&
	jq -e ".kb == null and .hotspots[0].kb == []" out.json
'

test_expect_code 1 'brief --kb: a missing directory is an error' '
	hotloop brief --kb nowhere words.folded 2>err; rc=$?
	expect_grep "no knowledge base at .nowhere." err || exit 99; exit $rc
'

test_expect_code 2 'no subcommand' 'hotloop kb'
test_expect_code 2 'a misspelled subcommand' '
	hotloop kb serach x 2>err; rc=$?; expect_grep "did you mean .search." err || exit 99; exit $rc
'
test_expect_code 2 'an unknown option' 'hotloop kb list --frobnicate'
test_expect_code 2 'an option without its value' 'hotloop kb list --dir'
test_expect_code 2 'show without a slug' 'hotloop kb show'
test_expect_code 2 'search without words or --function' 'hotloop kb search'
test_expect_code 2 '--diff without show' 'hotloop kb list --diff'
test_expect_code 1 'an invalid hotloop.conf' '
	mkdir bad && printf "[project\n" >bad/hotloop.conf && cd bad && hotloop kb list
'

test_done
