#!/bin/sh
# hotloop doctor where perf_event_open is denied: a seccomp filter (set up
# by a few lines of python with ctypes) makes the system call fail with
# EACCES, as in a locked-down container. doctor must exit 3, say
# "perf_events": false, fail the check with a remedy, and keep reporting
# the rest (tools, target).
. "$(dirname "$0")/test-lib.sh"

case $(uname -m) in
x86_64) nr=298 arch=0xc000003e ;;
aarch64) nr=241 arch=0xc00000b7 ;;
*) skip_all="no seccomp test for $(uname -m)" ;;
esac
command -v python3 >/dev/null || skip_all="needs python3 (to install a seccomp filter)"

cat >noperf.py <<PY
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
ins = [(0x20, 0, 0, 4), (0x15, 0, 3, $arch), (0x20, 0, 0, 0), (0x15, 0, 1, $nr),
       (0x06, 0, 0, 0x00050000 | 13), (0x06, 0, 0, 0x7fff0000)]
prog = b"".join(struct.pack("HBBI", *i) for i in ins)
buf = ctypes.create_string_buffer(prog)
class fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fp = fprog(len(ins), ctypes.addressof(buf))
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(fp), 0, 0):
    sys.exit("cannot install the seccomp filter: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])
PY

noperf() { python3 "$SCRATCH/noperf.py" "$HOTLOOP" "$@"; }

test_expect_code 3 'denied perf events: exit 3' '
	noperf doctor >out
'

test_expect_success 'the perf_events check fails with a remedy' '
	noperf doctor >out; cat out
	expect_grep "^fail *perf_events *perf_event_open was denied (Permission denied).*: allow perf_event_open" out ||
	expect_grep "^fail *perf_events *perf events not permitted (kernel.perf_event_paranoid=[0-9]*): run as root or .sysctl kernel.perf_event_paranoid=1." out
'

test_expect_success 'checks that need events are left out, the rest remain' '
	noperf doctor >out
	! grep -q "^[a-z]* *\(kernel_samples\|hardware_events\|mlock\) " out &&
	expect_grep "^[a-z]* *git " out && expect_grep "^[a-z]* *kernel_symbols " out
'

test_expect_success 'JSON: perf_events false, so the PERF prerequisite does not match' '
	noperf doctor --json >out
	! grep -q "\"perf_events\": *true" out &&
	expect_grep "\"perf_events\": false" out &&
	! grep -q "\"error\"" out
'

test_expect_code 3 'with a target, denied perf events still exit 3' '
	noperf doctor -- "$WORKLOADS/cpuhog" >out; rc=$?
	expect_grep "^ok *frame_pointers" out || exit 99
	exit $rc
'

test_done
