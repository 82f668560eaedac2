#!/bin/sh
# hotloop doctor --json: the documented keys with their types (docs/doctor.md),
# the "perf_events" key the test library's PERF prerequisite greps for, and
# checks that say the same as the plain output.
. "$(dirname "$0")/test-lib.sh"

command -v jq >/dev/null || skip_all="needs jq (apt-get install jq)"
if test_have_prereq PERF; then can=0; else can=3; fi

test_expect_code $can 'doctor --json prints one document and exits like doctor' '
	hotloop doctor --json >out; rc=$?
	jq -e "type == \"object\"" out >/dev/null && test "$(jq -s length out)" = 1 || exit 99
	exit $rc
'

test_expect_success 'machine keys have their documented types' '
	hotloop doctor --json >out
	jq -e "
		(.perf_events | type == \"boolean\") and
		(.paranoid | type == \"number\" or type == \"null\") and
		(.root | type == \"boolean\") and
		(.capabilities.perfmon | type == \"boolean\") and
		(.capabilities.sys_admin | type == \"boolean\") and
		(.kernel_samples | type == \"boolean\") and
		(.hardware_events | type == \"boolean\") and
		(.kernel_symbols | type == \"boolean\") and
		(.kptr_restrict | type == \"number\" or type == \"null\") and
		(.mlock_kb | type == \"number\" or type == \"null\") and
		(.mlock_rlimit_kb | type == \"number\" or type == \"null\") and
		(.ring_buffer | type == \"boolean\") and
		(.max_sample_rate | type == \"number\" or type == \"null\") and
		(.tools | keys == [\"git\", \"perf\", \"valgrind\"]) and
		([.tools[] | type == \"string\" or type == \"null\"] | all) and
		(has(\"target\") | not) and
		(.checks | type == \"array\" and length > 0)
	" out
'

test_expect_success 'the PERF prerequisite grep matches exactly when events open' '
	hotloop doctor --json >out
	if jq -e .perf_events out >/dev/null; then
		grep -q "\"perf_events\": *true" out
	else
		! grep -q "\"perf_events\": *true" out
	fi
'

test_expect_success 'values agree with the machine' '
	hotloop doctor --json >out
	if [ -r /proc/sys/kernel/perf_event_paranoid ]; then
		test "$(jq .paranoid out)" = "$(cat /proc/sys/kernel/perf_event_paranoid)"
	fi &&
	if [ -r /proc/sys/kernel/perf_event_mlock_kb ]; then
		test "$(jq .mlock_kb out)" = "$(cat /proc/sys/kernel/perf_event_mlock_kb)"
	fi &&
	if [ "$(id -u)" -eq 0 ]; then jq -e ".root == true" out; else jq -e ".root == false" out; fi &&
	if command -v git >/dev/null; then
		test "$(jq -r .tools.git out)" = "$(command -v git)"
	else jq -e ".tools.git == null" out; fi
'

test_expect_success 'every check has name, status, message, and a remedy when not ok' '
	hotloop doctor --json -- "$WORKLOADS/nofp" >out
	jq -e "[.checks[] |
		(.name | type == \"string\" and test(\"^[a-z_]+$\")) and
		(.status | IN(\"ok\", \"warn\", \"fail\")) and
		(.message | type == \"string\" and length > 0) and
		(if .status == \"ok\" then .remedy == null or (.remedy | type == \"string\")
		 else .remedy | type == \"string\" and length > 0 end)
	] | all" out &&
	jq -e "[.checks[].name] | index(\"frame_pointers\") != null" out
'

test_expect_success 'hardware_events matches its check' '
	hotloop doctor --json >out
	if jq -e ".perf_events" out >/dev/null; then
		jq -e "(.checks[] | select(.name == \"hardware_events\") | .status) ==
		       (if .hardware_events then \"ok\" else \"warn\" end)" out
	fi
'

test_expect_success 'plain lines say the same as the JSON checks' '
	hotloop doctor -- "$WORKLOADS/nofp" | tr -s " " >plain
	hotloop doctor --json -- "$WORKLOADS/nofp" >out
	jq -r ".checks[] | \"\(.status) \(.name) \(.message)\" +
		(if .status != \"ok\" then \": \(.remedy)\" else \"\" end)" out | tr -s " " >expect &&
	diff -u expect plain
'

test_expect_success 'target keys for cpuhog: frame pointers, debug info, PIE' '
	hotloop doctor --json -- "$WORKLOADS/cpuhog" >out
	jq -e "
		.target.path == \"$WORKLOADS/cpuhog\" and
		.target.elf == true and .target.error == null and
		(.target.arch | type == \"string\") and
		.target.type == \"pie\" and .target.pie == true and
		.target.stripped == false and .target.debug_info == true and
		.target.debug_file == null and
		(.target.build_id | test(\"^[0-9a-f]{16,}$\")) and
		.target.frame_pointers == true and
		.target.frame_pointer_share >= 0.8 and
		(.target.functions_checked | type == \"number\" and . > 0) and
		.target.functions_with_frame_pointer <= .target.functions_checked and
		(.target.needed | index(\"libc.so.6\") != null)
	" out
'

test_expect_success 'a target path that is not UTF-8 keeps its key, bad bytes as U+FFFD' '
	cp "$WORKLOADS/cpuhog" "$(printf "hog\377")" &&
	hotloop doctor --json -- "./$(printf "hog\377")" >out
	jq -e ".target.path == \"./hog\\ufffd\" and .target.elf == true" out &&
	jq -e "[.checks[] | .message | type == \"string\"] | all" out
'

test_expect_success 'target keys for nofp: frame pointers false, low share' '
	hotloop doctor --json -- "$WORKLOADS/nofp" >out
	jq -e ".target.frame_pointers == false and .target.frame_pointer_share < 0.8" out
'

test_expect_success 'target keys for a stripped copy' '
	cp "$WORKLOADS/cpuhog" hog && strip hog &&
	hotloop doctor --json -- ./hog >out
	jq -e ".target.stripped == true and .target.debug_info == false and
	       .target.frame_pointers == null and .target.frame_pointer_share == null" out
'

test_expect_success 'target keys for a script: not ELF, the ELF keys are null' '
	printf "#!/bin/sh\n" >script && chmod +x script &&
	hotloop doctor --json -- ./script >out
	jq -e ".target.elf == false and .target.arch == null and .target.type == null and
	       .target.stripped == null and .target.debug_info == null and
	       .target.build_id == null and .target.needed == []" out
'

test_done
