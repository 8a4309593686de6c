#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/kernel.py - kernel events: tracekit record/report side by side
with trace-cmd record/report, in one run.

    bench/kernel.py [-r REPEAT] [-m CALLS] [-b KB] [--build DIR]
    (or: bench/run --kernel [REPEAT]; TK_REPORT=PATH: the tracekit that reads)

A workload making CALLS getppid() system calls (bench-kgetppid.c, timed
inside the program) runs untraced, under `tracekit record` and under
`trace-cmd record`, both with syscalls:sys_enter_getppid and
syscalls:sys_exit_getppid and -b KB per CPU, REPEAT times each
(interleaved); the table gives medians: ns per call, ns added per kernel
event, events lost, and where the time goes: the workload's own CPU time
added per event (the kernel writing the event) and the recorder's CPU
time per event.  Then each tool's report reads its last trace
(output to /dev/null), REPEAT times: events per second.  See
bench/README.md, "Kernel events".

Every traced run holds the machine-wide tracefs lock (tests/e2e/kernlib.py)
and compares the global tracing state before and after; what a tool left
changed is printed and put back (trace-cmd leaves buffer_size_kb at its
-b).  tracefs is mounted for the run if it was not, and unmounted after.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import kernlib  # noqa: E402
import tklib  # noqa: E402

EVENTS = ("syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid")
EVENTS_PER_CALL = 2
NOT_BUILT = "n/a (not built yet)"
TK_REPORT = None   # the tracekit that reads (env TK_REPORT, else --build's)


def note(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def run(args, **kw):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          **kw)


def ensure_trace_cmd():
    if shutil.which("trace-cmd"):
        return
    if os.geteuid() != 0:
        sys.exit("bench: trace-cmd is missing: run as root or install it")
    note("installing trace-cmd")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "trace-cmd"], check=True, env=env,
                   stdout=subprocess.DEVNULL)


class Kept:
    """Context: the tracefs lock held, tracefs mounted, and the global
    state put back after the run if the tool left it changed."""

    def __init__(self, who, changed):
        self.who, self.changed = who, changed

    def __enter__(self):
        self.lock = kernlib.lock()
        self.lock.__enter__()
        self.fs = kernlib._tracefs_locked()
        try:
            self.path = self.fs.__enter__()
            self.before = kernlib.snapshot(self.path)
        except BaseException:
            self.lock.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        try:
            diff = kernlib.diff(self.before, kernlib.snapshot(self.path))
            if diff:
                self.changed.setdefault(self.who, set()).update(d.split(":")[0] for d in diff)
                kernlib.restore(self.path, self.before)
                left = kernlib.diff(self.before, kernlib.snapshot(self.path))
                if left:
                    note("%s left tracing state changed that could not be restored: %s"
                         % (self.who, "; ".join(left)))
        finally:
            self.fs.__exit__(None, None, None)
            self.lock.__exit__(None, None, None)
        return False


def parse_prog(out):
    v = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("pid", "calls", "ns", "ns_per_call",
                                            "cpu_ns_per_call"):
            v[parts[0]] = float(parts[1])
    return v


def manifest_lost(d):
    """Kernel events lost in a tracekit trace: overrun + dropped of the
    manifest's kcpu records (None if there are none)."""
    path = os.path.join(d, "tracekit.manifest")
    lost, seen = 0, False
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0] != "kcpu":
                continue
            kv = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
            lost += int(kv.get("overrun", 0)) + int(kv.get("dropped", 0))
            seen = True
    return lost if seen else None


def trace_cmd_lost(dat):
    """Events the kernel overwrote or dropped during a trace-cmd recording:
    the per-CPU buffer statistics trace-cmd saved ('overrun', 'commit
    overrun', 'dropped events')."""
    p = run(["trace-cmd", "report", "-i", dat, "--stat"])
    lost, seen = 0, False
    for line in p.stdout.splitlines():
        key, _, val = line.partition(":")
        if key.strip() in ("overrun", "commit overrun", "dropped events"):
            lost += int(val.split()[0])
            seen = True
    return lost if seen else None


def count_lines(args, skip_prefix=()):
    """Run ARGS, count output lines not starting with SKIP_PREFIX."""
    n = 0
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as p:
        for line in p.stdout:
            if not line.startswith(skip_prefix):
                n += 1
    return n


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(args):
    t0 = time.monotonic()
    p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        note("%s failed: %s" % (" ".join(args), p.stderr.strip().splitlines()[-1:]))
        return None
    return dt


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def rng(xs):
    xs = [x for x in xs if x is not None]
    return "%.1f-%.1f" % (min(xs), max(xs)) if xs else ""


def f(v, fmt="%.1f", na="n/a"):
    return na if v is None else fmt % v


def main():
    ap = argparse.ArgumentParser(description="kernel events: tracekit vs trace-cmd")
    ap.add_argument("-r", "--repeat", type=int, default=5)
    ap.add_argument("-m", "--calls", type=int, default=2000000)
    ap.add_argument("-b", "--buffer-kb", type=int, default=4096)
    ap.add_argument("--build", default=os.environ.get("TK_BUILD", os.path.join(ROOT, "build")))
    a = ap.parse_args()
    if a.repeat < 1 or a.calls < 1 or a.buffer_kb < 8:
        ap.error("REPEAT, CALLS >= 1 and KB >= 8")
    if os.geteuid() != 0:
        sys.exit("bench: the kernel benchmark needs root (tracefs)")
    ensure_trace_cmd()
    tk = os.path.join(os.path.abspath(a.build), "cli", "tracekit")
    # why: lets a reader built elsewhere read this build's traces
    global TK_REPORT
    TK_REPORT = os.environ.get("TK_REPORT") or tk
    tmp = tempfile.mkdtemp(prefix="tracekit-kbench.")
    changed = {}
    try:
        return bench(a, tk, tmp, changed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench(a, tk, tmp, changed):
    prog = os.path.join(tmp, "bench-kgetppid")
    subprocess.run(["cc", "-O2", "-g", "-std=gnu11", "-Wall", "-Wextra", "-o", prog,
                    os.path.join(ROOT, "bench", "bench-kgetppid.c")], check=True)
    ev_opts = [x for e in EVENTS for x in ("-e", e)]
    kb = str(a.buffer_kb)
    calls = str(a.calls)
    expected = a.calls * EVENTS_PER_CALL

    # Can tracekit record kernel events yet?
    tk_why = None
    if not os.access(tk, os.X_OK):
        tk_why = "%s is not built" % tk
    else:
        with Kept("tracekit", changed):
            p = run([tk, "record", "-q", "-o", os.path.join(tmp, "probe")] + ev_opts
                    + ["--", prog, "1"])
        if p.returncode != 0:
            tk_why = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0]
    if tk_why:
        note("tracekit rows: %s (%s)" % (NOT_BUILT, tk_why))

    res = {k: [] for k in ("plain", "tc", "tk", "tkF")}
    cpu = {k: [] for k in res}   # the workload's CPU ns per call
    rec = {k: [] for k in res}   # the recorder's CPU ns per event
    lost = {k: [] for k in ("tc", "tk", "tkF")}
    tc_dat = os.path.join(tmp, "trace.dat")
    tk_dir = os.path.join(tmp, "tk")
    tc_cmd = ["trace-cmd", "record", "-d", "--no-filter"] + ev_opts + ["-b", kb, "-o", tc_dat,
                                                                          "--", prog, calls]
    for r in range(1, a.repeat + 1):
        note("[%d/%d] untraced, trace-cmd record, tracekit record" % (r, a.repeat))
        p = run([prog, calls])
        v = parse_prog(p.stdout)
        res["plain"].append(v.get("ns_per_call"))
        cpu["plain"].append(v.get("cpu_ns_per_call"))
        with Kept("trace-cmd", changed):
            c0 = children_cpu()
            p = run(tc_cmd)
            c1 = children_cpu()
        v = parse_prog(p.stdout)
        # trace-cmd exits 1 here after recording (it cannot reset
        # set_ftrace_filter on this kernel): judge by the workload's output
        if "ns_per_call" not in v or not os.path.exists(tc_dat):
            note("trace-cmd record failed: %s" % p.stderr.strip()[-300:])
        else:
            res["tc"].append(v["ns_per_call"])
            lost["tc"].append(trace_cmd_lost(tc_dat))
            note_cpu(cpu, rec, "tc", v, c1 - c0, a.calls)
        if tk_why:
            continue
        for key, extra in (("tk", []), ("tkF", ["-F"])):
            d = tk_dir if key == "tk" else tk_dir + "F"
            with Kept("tracekit", changed):
                c0 = children_cpu()
                p = run([tk, "record", "-o", d, "--kernel-buffer", kb] + ev_opts + extra + ["--", prog, calls])
                c1 = children_cpu()
            v = parse_prog(p.stdout)
            if p.returncode != 0 or "ns_per_call" not in v:
                note("tracekit record %s failed: %s" % (" ".join(extra),
                                                        p.stderr.strip()[-300:]))
                continue
            res[key].append(v["ns_per_call"])
            lost[key].append(manifest_lost(d))
            note_cpu(cpu, rec, key, v, c1 - c0, a.calls)

    # Reading the last trace of each tool.
    rd = {k: [] for k in ("tc", "tk", "tkc")}
    n_tc = n_tk = None
    if res["tc"]:
        note("counting trace-cmd report's events")
        n_tc = count_lines(["trace-cmd", "report", "-i", tc_dat], skip_prefix=(b"cpus=",))
    if res["tk"]:
        note("counting tracekit report's events")
        n_tk = count_lines([TK_REPORT, "report", "--no-header", tk_dir])
    for r in range(1, a.repeat + 1):
        note("[%d/%d] reading" % (r, a.repeat))
        if n_tc:
            rd["tc"].append(timed(["trace-cmd", "report", "-i", tc_dat]))
        if n_tk:
            rd["tk"].append(timed([TK_REPORT, "report", tk_dir]))
            rd["tkc"].append(timed([TK_REPORT, "report", "--count", tk_dir]))

    table(a, tk, res, cpu, rec, lost, rd, n_tc, n_tk, expected, tk_why, changed)
    return 0


def note_cpu(cpu, rec, key, v, tool_s, calls):
    """The workload's CPU ns per call, and the rest of the tool's CPU
    time (TOOL_S seconds, the workload's included) per kernel event."""
    c = v.get("cpu_ns_per_call")
    cpu[key].append(c)
    if c is not None:
        rec[key].append((tool_s * 1e9 / calls - c) / EVENTS_PER_CALL)


def table(a, tk, res, cpu, rec, lost, rd, n_tc, n_tk, expected, tk_why, changed):
    tc_v = run(["trace-cmd", "--version"]).stdout.split()
    tc_v = tc_v[2] if len(tc_v) > 2 else "?"
    rev = run(["git", "-C", ROOT, "describe", "--always", "--dirty"]).stdout.strip()

    def added(key, what=res):
        m, b = med(what[key]), med(what["plain"])
        return None if m is None or b is None else (m - b) / EVENTS_PER_CALL

    print("7. Kernel events: %d getppid() calls, %d kernel events each (%s),"
          % (a.calls, EVENTS_PER_CALL, " + ".join(EVENTS)))
    print("   -b %d KiB per CPU, median of %d runs; tracekit %s, trace-cmd %s, Linux %s"
          % (a.buffer_kb, a.repeat, rev, tc_v, os.uname().release))
    row = "  %-36s %8s %15s %14s  %-15s | %14s  %12s"
    print(row % ("", "ns/call", "added ns/event", "lost (kernel)", "ns/call range",
                 "workload cpu", "recorder cpu"))
    print(row % ("", "", "", "", "", "added ns/event", "ns/event"))
    rows = (("untraced", "plain"), ("trace-cmd record -d --no-filter", "tc"),
            ("tracekit record", "tk"), ("tracekit record -F", "tkF"))
    for label, key in rows:
        if key.startswith("tk") and tk_why:
            print("  %-36s %s" % (label, NOT_BUILT))
            continue
        lo = "-" if key == "plain" else f(med(lost.get(key, [])), "%.0f")
        ad = "-" if key == "plain" else f(added(key))
        wc = "-" if key == "plain" else f(added(key, cpu))
        rc = "-" if key == "plain" else f(med(rec[key]))
        print(row % (label, f(med(res[key])), ad, lo, rng(res[key]), wc, rc))
    if not tk_why and added("tk") and added("tc"):
        print("  %-36s %8s %14.2fx" % ("tracekit / trace-cmd added cost", "",
                                         added("tk") / added("tc")))
    print()
    print("8. Reading the last run's trace, output to /dev/null, median of %d runs" % a.repeat)
    print("                                           events    events/s")

    def rate(n, xs):
        m = med(xs)
        return None if n is None or m is None or m == 0 else n / m

    r_tc, r_tk, r_tkc = rate(n_tc, rd["tc"]), rate(n_tk, rd["tk"]), rate(n_tk, rd["tkc"])
    for label, n, r in (("trace-cmd report", n_tc, r_tc), ("tracekit report", n_tk, r_tk),
                        ("tracekit report --count (decode only)", n_tk, r_tkc)):
        if label.startswith("tracekit") and tk_why:
            print("  %-36s %s" % (label, NOT_BUILT))
            continue
        print("  %-38s %9s %10s" % (label, f(n, "%d"), f(r and r / 1e6, "%.2fM")))
    if r_tk and r_tc:
        print("  %-38s %20.2fx" % ("tracekit report / trace-cmd report", r_tk / r_tc))
    print()
    print("   (events: lines each report printed, every event of the trace; the workload")
    print("    made %d; lost: the kernel's overrun + dropped counts, summed over CPUs)" % expected)
    for who, keys in sorted(changed.items()):
        print("   %s left global tracing state changed (put back by the benchmark): %s"
              % (who, ", ".join(sorted(keys))))


if __name__ == "__main__":
    sys.exit(main())
