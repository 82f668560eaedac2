#!/bin/sh
# schedule install|remove|status against stub systemctl and crontab
# commands that record what they are asked (HOME and XDG_CONFIG_HOME in
# the scratch directory: the real user's timers and crontab are never
# touched): a systemd timer written, enabled, replaced, removed; a crontab
# line added beside the user's own lines and removed from among them;
# failures that leave everything as it was; periods cron cannot run; and
# the installed crontab line run as cron would: one batch of the loop.
. "$(dirname "$0")/test-lib.sh"

mkdir bin home
HOME=$SCRATCH/home XDG_CONFIG_HOME=$SCRATCH/home/.config STUB_LOG=$SCRATCH/stub.log STUB_CRONTAB=$SCRATCH/crontab
PATH=$SCRATCH/bin:$PATH
export HOME XDG_CONFIG_HOME STUB_LOG STUB_CRONTAB PATH
UNITS=$XDG_CONFIG_HOME/systemd/user

cat >bin/systemctl <<\EOF2
#!/bin/sh
echo "systemctl $*" >>"$STUB_LOG"
case "$*" in
*show-environment*) [ -z "$STUB_NO_SYSTEMD" ] || exit 1; echo "PATH=/usr/bin" ;;
*NextElapseUSecRealtime*) echo "Fri 2026-12-04 00:00:00 UTC" ;;
*enable*) [ -z "$STUB_FAIL_ENABLE" ] || { echo "Failed to enable unit: stubbed" >&2; exit 1; } ;;
esac
exit 0
EOF2
cat >bin/crontab <<\EOF2
#!/bin/sh
echo "crontab $*" >>"$STUB_LOG"
case "$1" in
-l) [ -f "$STUB_CRONTAB" ] || { echo "no crontab for tester" >&2; exit 1; }; cat "$STUB_CRONTAB" ;;
-*) exit 2 ;;
*) [ -z "$STUB_FAIL_CRONTAB" ] || { echo "crontab: errors in crontab file" >&2; exit 1; }; cat "$1" >"$STUB_CRONTAB" ;;
esac
EOF2
chmod +x bin/*

test_expect_success 'setup: a project' '
	mkdir "proj dir" && cat >"proj dir/hotloop.conf" <<-\EOC &&
	[workload "main"]
		run = true
	EOC
	printf "# mine\n0 5 * * * echo %%s hi\n" >crontab && cp crontab crontab.mine
'
P="$SCRATCH/proj dir"
sched() { (cd "$P" && hotloop schedule "$@"); }

test_expect_success 'install: a systemd user timer, enabled, running one batch of hotloop loop' '
	sched install --every 1d --agent "claude -p \"say 100%\"" --rounds 3 >out &&
	id=$(sed -n "s/^\(hotloop-proj-dir-[0-9a-f]\{8\}\): systemd user timer installed$/\1/p" out) &&
	test -n "$id" && echo "$id" >id &&
	test -f "$UNITS/$id.service" && test -f "$UNITS/$id.timer" &&
	expect_grep "^OnCalendar=\*-\*-\* 00:00:00$" "$UNITS/$id.timer" &&
	expect_grep "^Persistent=true$" "$UNITS/$id.timer" &&
	expect_grep "^Unit=$id.service$" "$UNITS/$id.timer" &&
	expect_grep "^Type=oneshot$" "$UNITS/$id.service" &&
	expect_grep "^WorkingDirectory=$P$" "$UNITS/$id.service" &&
	expect_grep "^ExecStart=\"$HOTLOOP\" \"loop\" \"-f\" \"$P/hotloop.conf\" \"--agent\" \"claude -p \\\\\"say 100%%\\\\\"\" \"--rounds\" \"3\"$" "$UNITS/$id.service" &&
	! grep -q -- "--every" "$UNITS/$id.service" &&
	expect_grep "^systemctl --user daemon-reload$" stub.log &&
	expect_grep "^systemctl --user enable $id.timer$" stub.log &&
	expect_grep "^systemctl --user restart $id.timer$" stub.log &&
	expect_grep "next start: Fri 2026-12-04" out &&
	cmp crontab crontab.mine
'

test_expect_success 'status, as text and JSON' '
	id=$(cat id) && sched status >st && expect_grep "systemd user timer installed" st &&
	sched status --json >st.json &&
	jq -e --arg id "$id" ".id == \$id and .kind == \"systemd\" and .installed == true and .removed == false and
		(.timer | endswith(\"/\" + \$id + \".timer\")) and (.service | type == \"string\") and
		.cron_line == null and .next == \"Fri 2026-12-04 00:00:00 UTC\" and .both == false" st.json
'

test_expect_success 'install again replaces the timer: another period, one job' '
	id=$(cat id) && sched install --every 10m --json >re.json &&
	jq -e ".kind == \"systemd\" and .every_s == 600" re.json &&
	expect_grep "^OnCalendar=\*:0/10:00$" "$UNITS/$id.timer" &&
	test "$(ls "$UNITS" | wc -l)" = 2 && ! grep -q -- "--agent" "$UNITS/$id.service"
'

test_expect_success 'a period that is not a calendar one counts from the last run' '
	id=$(cat id) && sched install --every 7m >/dev/null &&
	expect_grep "^OnUnitActiveSec=420$" "$UNITS/$id.timer" && ! grep -q OnCalendar "$UNITS/$id.timer"
'

test_expect_code 1 'a timer that cannot be enabled leaves the units as they were' '
	id=$(cat id) && cp "$UNITS/$id.timer" timer.before &&
	(STUB_FAIL_ENABLE=1 && export STUB_FAIL_ENABLE && sched install --every 1h) 2>fail.err; rc=$?
	expect_grep "cannot enable the timer" fail.err && expect_grep "stubbed" fail.err &&
	cmp timer.before "$UNITS/$id.timer" || exit 99
	exit $rc
'

test_expect_success 'install --crontab: a marked line beside the user'"'"'s own, and the timer goes' '
	id=$(cat id) && : >stub.log && sched install --crontab --every 1h >out &&
	expect_grep "crontab line installed" out &&
	head -2 crontab >mine && cmp mine crontab.mine && test "$(wc -l <crontab)" = 3 &&
	line=$(tail -1 crontab) &&
	case "$line" in "0 * * * * cd "*" # $id every 1h") ;; *) echo "line: $line"; exit 1;; esac &&
	expect_grep "^systemctl --user disable $id.timer$" stub.log &&
	! test -e "$UNITS/$id.timer" && ! test -e "$UNITS/$id.service" &&
	cmd=${line#0 \* \* \* \* } && sh -n -c "$cmd" &&
	sched status --json >st.json && jq -e ".kind == \"cron\" and (.cron_line | type == \"string\") and .timer == null" st.json
'

test_expect_code 1 'cron cannot run every 7m: an error, the crontab as it was' '
	cp crontab crontab.before &&
	sched install --crontab --every 7m 2>err; rc=$?
	expect_grep "cron cannot run every 7m" err && cmp crontab.before crontab || exit 99
	exit $rc
'

test_expect_code 1 'a crontab that cannot be written: an error, nothing changed' '
	cp crontab crontab.before &&
	(STUB_FAIL_CRONTAB=1 && export STUB_FAIL_CRONTAB && sched install --crontab --every 5m) 2>err; rc=$?
	expect_grep "cannot install the crontab" err && cmp crontab.before crontab || exit 99
	exit $rc
'

test_expect_success 'remove: exactly the job'"'"'s line goes' '
	sched remove >out && expect_grep "crontab line removed" out &&
	cmp crontab crontab.mine &&
	sched status >st && expect_grep "no timer or crontab line" st &&
	sched remove --json >rm.json && jq -e ".kind == \"none\" and .removed == false and .installed == false" rm.json
'

if test_have_prereq SANDBOX; then
test_expect_success 'the installed crontab line runs one batch of the loop' '
	mkdir "cron proj" && cd "cron proj" && test_when_finished "cd \"$SCRATCH\"" &&
	cat >hotloop.conf <<-\EOC &&
	[project]
		owned = .
	[workload "main"]
		run = sh -c "i=0; while [ \$i -lt 20000 ]; do i=\$((i + 1)); done"
		primary = yes
	EOC
	git init -q && git add . && git -c user.name=t -c user.email=t@t commit -q -m base &&
	hotloop schedule install --crontab --every 1h --agent "echo NO CANDIDATE" --rounds 1 >out &&
	id=$(sed -n "s/^\(hotloop-cron-proj-[0-9a-f]\{8\}\): crontab line installed$/\1/p" out) &&
	line=$(grep " # $id every 1h\$" "$STUB_CRONTAB") &&
	cmd=${line#0 \* \* \* \* } && (cd / && sh -c "$cmd") &&
	expect_grep "0 kept in 1 round (the agent said NO CANDIDATE)" .hotloop/schedule.log &&
	git rev-parse -q --verify "refs/heads/hotloop/$(date +%Y-%m-%d)" >/dev/null &&
	hotloop schedule remove >/dev/null && ! grep -q "$id" "$STUB_CRONTAB"
'
else
	test_skip 'the installed crontab line runs one batch of the loop' 'no sandbox can be made here'
fi

test_expect_success 'no user systemd: cron is chosen' '
	(STUB_NO_SYSTEMD=1 && export STUB_NO_SYSTEMD && sched install --every 30m --json) >auto.json &&
	jq -e ".kind == \"cron\" and (.cron_line | startswith(\"*/30 * * * * \"))" auto.json &&
	sched remove >/dev/null && cmp crontab crontab.mine
'

test_expect_success 'remove takes the timer away: disabled, both files deleted' '
	id=$(cat id) && sched install --systemd >/dev/null && test -f "$UNITS/$id.timer" &&
	: >stub.log && sched remove --json >rm.json &&
	jq -e ".kind == \"systemd\" and .removed == true" rm.json &&
	expect_grep "^systemctl --user disable $id.timer$" stub.log &&
	! test -e "$UNITS/$id.timer" && ! test -e "$UNITS/$id.service"
'

test_expect_code 1 'neither systemd nor cron: install says what to install' '
	nocron=$(path_without crontab) &&
	(PATH=$nocron && STUB_NO_SYSTEMD=1 && export PATH STUB_NO_SYSTEMD && sched install) 2>err; rc=$?
	expect_grep "crontab is not installed" err || exit 99
	exit $rc
'

for bad in "install --every 0s" "install --every 5x" "install --every 10" "status --every 1h" \
	   "remove --crontab" "frob" "" "install --systemd --crontab" "install extra"; do
	test_expect_code 2 "usage error: schedule $bad" "sched $bad"
done

test_done
