#!/usr/bin/python3
# bench/scenario-psutil.py: a psutil-based CPU recorder, as people write
# them (psrecord and the like), for bench/scenario to set against hotloop's
# timeline. Once a second it reads psutil.Process(PID).cpu_times() and that
# of each of its children (recursive), and prints the CPU used since the
# last reading as % of one core, with the wall-clock times of both
# readings:
#
#   scenario-psutil.py PID [SECONDS]
#   -> "T_START T_END CPU_PCT" lines, T as seconds since the epoch
#
# Each process is followed by pid and start time, so a pid reused is a new
# process; one that appears counts all its CPU in its first second, one
# that ends loses what it used since its last reading. Stops when PID is
# gone, or after SECONDS.
import sys
import time

import psutil


def cpu_of(p):
    t = p.cpu_times()
    return t.user + t.system


def read(root):
    """(wall time, {(pid, create_time): cpu seconds}) for root and its descendants"""
    out = {}

    def add(p):
        try:
            with p.oneshot():
                out[(p.pid, p.create_time())] = cpu_of(p)
        except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
            pass

    # root first, right after the time: listing the children scans all of /proc
    t = time.time()
    add(root)
    try:
        for p in root.children(recursive=True):
            add(p)
    except psutil.NoSuchProcess:
        pass
    return t, out


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: scenario-psutil.py PID [SECONDS]")
    pid = int(sys.argv[1])
    limit = float(sys.argv[2]) if len(sys.argv) == 3 else 1e9
    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        sys.exit("scenario-psutil.py: no process %d" % pid)
    last_t, last = read(root)
    start = time.monotonic()
    k = 1
    while time.monotonic() - start < limit:
        # sample on a fixed grid, one second apart, so the lines do not drift
        time.sleep(max(0.0, start + k - time.monotonic()))
        k += 1
        if not root.is_running():
            break
        t, now = read(root)
        used = sum(v - last.get(key, 0.0) for key, v in now.items())
        print("%.6f %.6f %.3f" % (last_t, t, 100.0 * used / (t - last_t)), flush=True)
        last, last_t = now, t


if __name__ == "__main__":
    main()
