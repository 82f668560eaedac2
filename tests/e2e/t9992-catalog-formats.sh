#!/bin/sh
# hotloop catalog scan/check --format sarif|github: SARIF 2.1.0 that the
# official schema accepts, rules from the catalog, URIs relative to the
# root; GitHub annotations with GitHub's escaping of % \r \n , and :.
. "$(dirname "$0")/test-lib.sh"

PKG=$ROOT/build/npm/node_modules/@microsoft/jest-sarif
validate() { node "$TEST_DIR/sarif-validate.js" "$1" "$PKG"; }

test_expect_success 'setup: a tree with findings, one name needing escapes' '
	mkdir -p tree/sub "tree/a b" &&
	cp "$DATA/catalog/strlen-in-loop-condition/bad.c" tree/sub/s.c &&
	cp "$DATA/catalog/print-per-item/bad.c" "tree/a b/p,1:x.c"
'

test_expect_success 'sarif: version, driver, a rule per entry, results with regions' '
	{ hotloop catalog scan --format sarif tree >out.sarif; test $? -eq 4; } &&
	jq -e ".version == \"2.1.0\" and (.runs | length) == 1" out.sarif &&
	jq -e ".runs[0].tool.driver | .name == \"hotloop\" and (.version | type) == \"string\" and
	       (.rules | length) >= 12 and
	       (.rules[] | select(.id == \"strlen-in-loop-condition\") |
	        .defaultConfiguration.level == \"warning\" and (.help.text | test(\"size_t len = strlen\")) and
	        (.shortDescription.text | length) > 0 and (.fullDescription.text | length) > 0)" out.sarif &&
	jq -e ".runs[0].results | length == 2" out.sarif &&
	jq -e ".runs[0] as \$r | \$r.results[] | select(.ruleId == \"strlen-in-loop-condition\") |
	       .level == \"warning\" and (.message.text | test(\"strlen\")) and
	       \$r.tool.driver.rules[.ruleIndex].id == .ruleId and
	       .locations[0].physicalLocation.artifactLocation.uri == \"tree/sub/s.c\" and
	       (.locations[0].physicalLocation.region | .startLine == 4 and .startColumn == 25 and
	        .endLine == 4 and .endColumn == 34)" out.sarif &&
	jq -e ".runs[0].results[] | select(.ruleId == \"print-per-item\") | .level == \"note\" and
	       .locations[0].physicalLocation.artifactLocation.uri == \"tree/a%20b/p%2C1%3Ax.c\"" out.sarif
'

test_expect_success 'sarif: no findings is an empty results list' '
	hotloop catalog check --format sarif "$DATA/catalog/strlen-in-loop-condition/good.c" >empty.sarif &&
	jq -e ".runs[0].results == []" empty.sarif
'

if [ -f "$PKG/lib/schemas/sarif-2.1.0-rtm.5.json" ] && command -v node >/dev/null; then
test_expect_success 'sarif: the official SARIF 2.1.0 schema accepts it' '
	validate out.sarif && validate empty.sarif
'
test_expect_success 'the schema check can fail: a result without a message does not conform' '
	jq "del(.runs[0].results[0].message) | .runs[0].results[0].level = \"loud\"" out.sarif >broken.sarif &&
	! validate broken.sarif 2>/dev/null
'
else
test_skip 'sarif: the official SARIF 2.1.0 schema accepts it' 'needs node and build/npm (make deps)'
test_skip 'the schema check can fail' 'needs node and build/npm (make deps)'
fi

test_expect_success 'github: ::warning / ::notice lines, properties escaped' '
	{ hotloop catalog scan --format github tree >out.gh; test $? -eq 4; } &&
	expect_grep "^::warning file=tree/sub/s.c,line=4,col=25,endLine=4,endColumn=34,title=strlen-in-loop-condition::strlen(s) in a loop condition" out.gh &&
	expect_grep "^::notice file=tree/a b/p%2C1%3Ax.c,line=5,col=3,endLine=5,endColumn=23,title=print-per-item::printf() per item" out.gh &&
	test $(wc -l <out.gh) -eq 2
'

test_expect_success 'github: a message with %, CR and LF is escaped' '
	mkdir -p cat && cat >cat/odd.json <<-\EOF &&
	{ "id": "odd", "languages": ["c"], "severity": "error", "message": "100% of $F: a\nb\rc, d",
	  "rule": { "pattern": "$F()" } }
	EOF
	printf "void f(void) { g(); }\n" >odd.c &&
	{ hotloop catalog check --no-default --catalog cat --format github odd.c >odd.gh; test $? -eq 4; } &&
	expect_grep "^::error file=odd.c,line=1,col=16,endLine=1,endColumn=19,title=odd::100%25 of g: a%0Ab%0Dc, d$" odd.gh
'

test_expect_code 2 'an unknown --format names the four' '
	hotloop catalog check --format xml x.c 2>err; rc=$?
	expect_grep "use text, json, sarif or github" err || exit 99; exit $rc
'

test_done
