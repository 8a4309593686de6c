#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/hist.py - tracekit hist's speed, beside trace-cmd's hist and
report on the same workload, in one run.

    bench/hist.py [-r REPEAT] [-m CALLS] [-b KB] [--build DIR]

Two traces of about 2*CALLS events (default 4 M):
  - kernel: bench-kgetppid making CALLS getppid() calls, recorded with
    syscalls:sys_enter_getppid and sys_exit_getppid (-F) by tracekit
    record (--kernel-buffer KB) and by trace-cmd record (-b KB), per CPU;
  - user: prog-basic, two threads of CALLS test:seq events each.
Then, REPEAT times each (output to /dev/null), the wall time of:
  tracekit hist -e sys_enter_getppid --key common_pid    (a histogram)
  tracekit hist --from sys_enter_getppid --to sys_exit_getppid
                --match common_pid                      (a latency)
  the same two on the user trace (key thread; test:seq to test:seq)
  trace-cmd hist -i trace.dat  (its histogram of the same events per task)
  trace-cmd report -i trace.dat (reading the same events as text)
and prints the medians as events read per second of wall time and of
CPU time (user + system: what a run costs whatever else the machine
runs), with the load average before and after.  The recordings hold
the machine-wide tracefs lock and put back any tracing state a tool
left changed (bench/kernel.py's Kept).
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernel as kb  # noqa: E402

EVENTS = ("syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid")


def count_events(tk, d):
    p = kb.run([tk, "report", d, "--count"])
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == "total":
            return int(parts[0])
    raise SystemExit("bench: cannot count the events of %s: %s" % (d, p.stderr.strip()))


def timed(args):
    """(wall seconds, CPU seconds of the child) of running ARGS, output to
    /dev/null; (None, None) if it failed."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = kb.timed(args)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if wall is None:
        return None, None
    return wall, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description="tracekit hist vs trace-cmd hist")
    ap.add_argument("-r", "--repeat", type=int, default=5)
    ap.add_argument("-m", "--calls", type=int, default=2000000)
    ap.add_argument("-b", "--buffer-kb", type=int, default=131072)
    ap.add_argument("--build", default=os.environ.get("TK_BUILD", os.path.join(kb.ROOT, "build")))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: recording kernel events needs root (tracefs)")
    kb.ensure_trace_cmd()
    build = os.path.abspath(a.build)
    tk = os.path.join(build, "cli", "tracekit")
    basic = os.path.join(build, "tests", "progs", "prog-basic")
    tmp = tempfile.mkdtemp(prefix="tracekit-hbench.")
    changed = {}
    try:
        prog = os.path.join(tmp, "bench-kgetppid")
        subprocess.run(["cc", "-O2", "-std=gnu11", "-o", prog,
                        os.path.join(HERE, "bench-kgetppid.c")], check=True)
        ev = [x for e in EVENTS for x in ("-e", e)]
        ktk, utk, dat = (os.path.join(tmp, n) for n in ("k.trace", "u.trace", "trace.dat"))
        kb.note("recording %d getppid calls with tracekit and with trace-cmd" % a.calls)
        with kb.Kept("tracekit", changed):
            p = kb.run([tk, "record", "-q", "-o", ktk, "--kernel-buffer", str(a.buffer_kb)] + ev
                       + ["-F", "--", prog, str(a.calls)])
        if p.returncode:
            sys.exit("bench: tracekit record failed: %s" % p.stderr.strip())
        with kb.Kept("trace-cmd", changed):
            kb.run(["trace-cmd", "record", "-q", "-d", "--no-filter"] + ev
                   + ["-b", str(a.buffer_kb), "-o", dat, "--", prog, str(a.calls)])
        if not os.path.exists(dat):
            sys.exit("bench: trace-cmd record wrote no %s" % dat)
        p = kb.run([tk, "record", "-q", "-o", utk, "-b", "65536", "--", basic,
                    "-n", str(a.calls), "-t", "2"])
        if p.returncode:
            sys.exit("bench: tracekit record of prog-basic failed: %s" % p.stderr.strip())
        nk, nu = count_events(tk, ktk), count_events(tk, utk)
        # its event lines start with blanks (the comm is right-aligned)
        nt = kb.count_lines(["trace-cmd", "report", "-i", dat], skip_prefix=(b"cpus=", b"CPU:"))
        kb.note("events: tracekit kernel %d, user %d; trace-cmd %d; %s" % (
            nk, nu, nt, "changed and put back: %s" % changed if changed else "state kept"))
        cases = [
            ("tracekit hist, kernel histogram (key common_pid)", nk,
             [tk, "hist", ktk, "-e", EVENTS[0], "--key", "common_pid"]),
            ("tracekit hist, kernel latency (enter -> exit)", nk,
             [tk, "hist", ktk, "--from", EVENTS[0], "--to", EVENTS[1],
              "--match", "common_pid"]),
            ("tracekit hist, user histogram (key thread)", nu,
             [tk, "hist", utk, "-e", "test:seq", "--key", "thread"]),
            ("tracekit hist, user latency (seq -> seq)", nu,
             [tk, "hist", utk, "--from", "test:seq", "--to", "test:seq", "--match", "thread"]),
            ("trace-cmd hist (per task, same kernel events)", nt,
             ["trace-cmd", "hist", "-i", dat]),
            ("trace-cmd report (same kernel events as text)", nt,
             ["trace-cmd", "report", "-i", dat]),
        ]
        times = {name: [] for name, _, _ in cases}
        cpu = {name: [] for name, _, _ in cases}
        before = load()
        for r in range(1, a.repeat + 1):
            kb.note("[%d/%d] reading" % (r, a.repeat))
            for name, _, args in cases:
                wall, used = timed(args)
                times[name].append(wall)
                cpu[name].append(used)
        print("load average %s before, %s after" % (before, load()))
        print("| what (%d calls, medians of %d) | events | s | M events/s | CPU s "
              "| M events/CPU s |" % (a.calls, a.repeat))
        print("|---|---|---|---|---|---|")
        for name, n, _ in cases:
            t, c = kb.med(times[name]), kb.med(cpu[name])
            print("| %s | %d | %s | %s | %s | %s |" % (
                name, n, kb.f(t, "%.3f"), kb.f(n / t / 1e6 if t else None, "%.1f"),
                kb.f(c, "%.3f"), kb.f(n / c / 1e6 if c else None, "%.1f")))
    finally:
        if os.environ.get("BENCH_KEEP") != "1":
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
