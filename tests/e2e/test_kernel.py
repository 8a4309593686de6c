# SPDX-License-Identifier: MIT
"""End-to-end tests of kernel events recorded through tracefs, in the same
trace as user events.

Each test runs under kernlib.guard(): the machine-wide tracefs lock, and
the global tracing state compared before and after (any difference, or a
tracekit-* instance left, fails the test).  The traced program is
prog-ksys (tests/progs/ksys.c): user events kb:* around getppid() system
calls and sleeps, so that counts, pids and order are known exactly.
"""
import os
import re
import signal
import struct
import subprocess
import time

import kernlib
import test_cli
import tklib

KSYS = tklib.prog("ksys")
GETPPID = ("-e", "syscalls:sys_enter_getppid", "-e", "syscalls:sys_exit_getppid")
one_error = test_cli.one_error
stop = test_cli.stop


# ---------------------------------------------------------------- helpers

def tk(*args, **kw):
    kw.setdefault("check", False)
    return tklib.tracekit(*args, **kw)


def child_pid(stdout, what="pid"):
    """The pid (or ppid, or its worker thread's tid) prog-ksys printed
    ("pid N", "ppid N", "tid N")."""
    for line in stdout.splitlines():
        if line.startswith(what + " "):
            return int(line.split()[1])
    raise AssertionError("prog-ksys printed no %s: %r" % (what, stdout))


def tasks(stdout):
    """Every thread of prog-ksys (it prints "tasks TID...")."""
    for line in stdout.splitlines():
        if line.startswith("tasks "):
            return {int(t) for t in line.split()[1:]}
    raise AssertionError("prog-ksys printed no tasks: %r" % stdout)


def start_noise():
    """prog-ksys, untraced, making getppid() calls ~every 100 us until
    stopped; returns the Popen, with .tid its worker thread (the task
    making the calls)."""
    d = tklib.tmpdir()
    ready = os.path.join(d, "noise-ready")
    p = subprocess.Popen([KSYS, "-f", "-p", "100", "-r", ready],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.tid = int(tklib.wait_for_file(ready).split()[2])
    return p


def kernel_lines(events):
    return [e for e in events if not e["event"].startswith("kb:")]


def check_kernel_line(e):
    """A kernel line carries trace-cmd's latency columns."""
    assert e["lat"] is not None and len(e["lat"]) >= 4, \
        "kernel line without latency columns: %r" % e


def record_getppid(outdir, n, *opts):
    """record kb:* and getppid's two events around prog-ksys -n N -s 50;
    returns (CompletedProcess, the worker thread's tid)."""
    p = tklib.record(outdir, [KSYS, "-n", str(n), "-s", "50"], "-e", "kb:*", *GETPPID, *opts,
                     timeout=60)
    return p, child_pid(p.stdout, "tid")


def check_getppid_window(events, pid, n, ppid):
    """Exactly N sys_enter_getppid and N sys_exit_getppid of task PID (the
    worker thread), all strictly between its kb:begin and kb:end,
    alternating enter/exit; getppid returned PPID."""
    mine = [e for e in events if e["tid"] == pid]
    begin = [e for e in mine if e["event"] == "kb:begin"]
    end = [e for e in mine if e["event"] == "kb:end"]
    assert len(begin) == 1 and len(end) == 1, \
        "kb:begin %d times, kb:end %d times (want once each)" % (len(begin), len(end))
    assert begin[0]["text"] == "n=%d" % n and end[0]["text"] == "n=%d" % n, (begin, end)
    b, e_ = begin[0]["ts"], end[0]["ts"]
    assert isinstance(b, int) and b < e_, "raw timestamps: begin %r, end %r" % (b, e_)
    enter = [e for e in mine if e["name"] == "sys_enter_getppid"]
    exit_ = [e for e in mine if e["name"] == "sys_exit_getppid"]
    assert len(enter) == n and len(exit_) == n, \
        "pid %d: %d sys_enter_getppid and %d sys_exit_getppid, want %d of each" % (
            pid, len(enter), len(exit_), n)
    outside = [e for e in enter + exit_ if not b < e["ts"] < e_]
    assert not outside, "%d getppid events of pid %d not strictly between kb:begin (%d) " \
        "and kb:end (%d), first: %r" % (len(outside), pid, b, e_, outside[0])
    for e in enter + exit_:
        check_kernel_line(e)
    # the kernel's print formats: "" and "0x%lx", ret (getppid's value)
    assert all(e["text"] == "" for e in enter), \
        "sys_enter_getppid text: %r" % {e["text"] for e in enter}
    assert all(e["text"] == "0x%x" % ppid for e in exit_), \
        "sys_exit_getppid text %r, getppid() returned %d" % ({e["text"] for e in exit_}, ppid)
    # in report order (merged by time): begin, (enter, exit) x N, end
    seq = [e["name"] for e in mine if e["name"] in ("begin", "end", "sys_enter_getppid",
                                                    "sys_exit_getppid")]
    want = ["begin"] + ["sys_enter_getppid", "sys_exit_getppid"] * n + ["end"]
    assert seq == want, "pid %d: events out of order: first difference at %d of %d" % (
        pid, next(i for i, (x, y) in enumerate(zip(seq + [None], want)) if x != y), len(want))
    ts = [e["ts"] for e in events]
    assert ts == sorted(ts), "report is not sorted by timestamp"


# ---------------------------------------------------------------- 1. getppid

N = 1000


def test_getppid_exact_with_F():
    """-F: exactly N getppid enter/exit events of the child, strictly
    between its two user events; none of the busy process next to it."""
    noise = start_noise()
    try:
        with kernlib.guard():
            d = os.path.join(tklib.tmpdir(), "t")
            p, tid = record_getppid(d, N, "-F")
    finally:
        stop(noise)
    events = kernlib.report(d)
    check_getppid_window(events, tid, N, child_pid(p.stdout, "ppid"))
    mine = tasks(p.stdout)
    others = [e for e in kernel_lines(events) if e["tid"] not in mine]
    assert not others, "-F: %d kernel events of other tasks than %r, first: %r (noise: %d)" % (
        len(others), mine, others[0], noise.tid)


def test_getppid_without_F():
    """The same without -F: the other process's getppid calls are in the
    trace too (so -F is what filtered them above), and the child's are
    still exactly N, in place."""
    noise = start_noise()
    try:
        with kernlib.guard():
            d = os.path.join(tklib.tmpdir(), "t")
            p, tid = record_getppid(d, N)
    finally:
        stop(noise)
    events = kernlib.report(d)
    check_getppid_window(events, tid, N, child_pid(p.stdout, "ppid"))
    theirs = [e for e in events if e["tid"] == noise.tid]
    assert len([e for e in theirs if e["name"] == "sys_enter_getppid"]) >= 10, \
        "without -F, only %d events of the other process's task %d (it calls getppid " \
        "every ~100 us during the whole recording)" % (len(theirs), noise.tid)


def test_mono_clock_fallback():
    """Where the TSC is not usable (forced here with TRACEKIT_CLOCK=mono,
    read once when the recording starts), user events are stamped with
    CLOCK_MONOTONIC and the kernel instance gets the mono trace_clock:
    the two still merge exactly, and the trace says which clock it is."""
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        p = tklib.record(d, [KSYS, "-n", str(N), "-s", "50"], "-e", "kb:*", *GETPPID,
                         timeout=60, env={"TRACEKIT_CLOCK": "mono"})
        assert "tracekit: events stamped with CLOCK_MONOTONIC (kernel events: trace_clock " \
            "mono): TRACEKIT_CLOCK=mono" in p.stderr.splitlines(), p.stderr
        bad = tk("record", "-o", d, "--", KSYS, env={"TRACEKIT_CLOCK": "hpet"})
        one_error(bad, rc=2, exact="tracekit: TRACEKIT_CLOCK='hpet': use tsc or mono")
    events = kernlib.report(d)
    check_getppid_window(events, child_pid(p.stdout, "tid"), N, child_pid(p.stdout, "ppid"))
    manifest = open(os.path.join(d, "tracekit.manifest")).read()
    assert re.search(r"^clock source=mono freq=1000000000 ", manifest, re.M), manifest
    assert re.search(r"^kernel .* clock=mono ", manifest, re.M), manifest
    head = tk("report", d, check=True).stdout.splitlines()[1]
    assert ", clock mono at 1000000000 Hz, " in head, head


def test_runtime_makes_no_getpid_getppid_gettid():
    """-F on a program that makes exactly 777 getppid(), 777 getpid() and
    777 gettid() calls in its main thread, its events recorded too: the
    trace holds 777 of each, not the runtime's too (its set-up made a
    getppid() for its HELLO and three getpid(), for the HELLO, its
    buffers and its control socket, and the main thread's stream a
    gettid(); now it reads its pid from /proc/self/stat with its name,
    the main thread's tid is the pid, and the recorder reads the
    parent's from /proc), and the manifest's ppid is still the parent,
    the recorder."""
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        rec = subprocess.Popen([tklib.TRACEKIT, "record", "-q", "-o", d, "-e", "test:*",
                                "-e", "syscalls:sys_enter_getppid",
                                "-e", "syscalls:sys_enter_getpid",
                                "-e", "syscalls:sys_enter_gettid", "-F", "--",
                                tklib.prog("kstat-getppid"), "777", "0", "all"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = rec.communicate(timeout=60)
    assert rec.returncode == 0 and err == "", err
    p = tk("report", d, "--count")
    counts = {l.split()[1]: int(l.split()[0]) for l in p.stdout.splitlines()}
    assert counts == {"syscalls:sys_enter_getppid": 777, "syscalls:sys_enter_getpid": 777,
                      "syscalls:sys_enter_gettid": 777, "test:phase": 2,
                      "total": 3 * 777 + 2}, p.stdout
    ppids = re.findall(r"^process pid=(\d+) ppid=(\d+) ", open(os.path.join(
        d, "tracekit.manifest")).read(), re.M)
    assert [pp for _, pp in ppids] == [str(rec.pid)], ppids
    # the pid read from /proc/self/stat is the process's
    assert out.startswith("ppid %d calls 777" % rec.pid), out


def test_func_globs_belong_to_their_tracer():
    """-l after -p user:function_graph is the user tracer's alone: with
    kernel events beside, nothing is written to the kernel's
    set_ftrace_filter (which this kernel may refuse), and only work() is
    traced; before any -p, -l goes with the first -p; after a kernel -p,
    to the kernel."""
    functk = tklib.prog("functk")
    with kernlib.guard() as fs:
        refused = kernlib.probe_refused(fs)
        d = os.path.join(tklib.tmpdir(), "a")
        p = tk("record", "-q", "-o", d, "-p", "user:function_graph", "-l", "work", "-e",
               "syscalls:sys_enter_getppid", "-F", "--", functk)
        assert (p.returncode, p.stderr) == (0, ""), p.stderr
        d2 = os.path.join(tklib.tmpdir(), "b")
        p = tk("record", "-q", "-o", d2, "-l", "work", "-p", "user:function", "-e",
               "syscalls:sys_enter_getppid", "-F", "--", functk)
        assert (p.returncode, p.stderr) == (0, ""), p.stderr
        d3 = os.path.join(tklib.tmpdir(), "c")
        p3 = tk("record", "-q", "-o", d3, "-p", "user:function", "-p", "kernel:function",
                "-l", "nosuchfunction_tk", "--", functk)
    rows = tk("report", d, "--profile").stdout.splitlines()[2:]
    assert [r.split()[:2] for r in rows] == [["work", "3"]], rows
    assert manifest_kernel(d)["tracer"] == "nop"
    counts = tk("report", d2, "--count").stdout.split()
    assert counts == ["3", "ftrace:function", "3", "total"], counts
    # the kernel's -l: refused here, or no such function
    assert p3.returncode != 0, p3.stderr
    if "ftrace_filter" in refused or "function" in refused:
        assert "set_ftrace_filter" in p3.stderr or "function tracer" in p3.stderr, p3.stderr
    else:
        assert "nosuchfunction_tk" in p3.stderr, p3.stderr


def manifest_kernel(d):
    """The kernel record of DIR's manifest, as a dict."""
    for line in open(os.path.join(d, "tracekit.manifest")):
        if line.startswith("kernel "):
            return dict(kv.split("=", 1) for kv in line.split()[1:])
    raise AssertionError("no kernel record in %s" % d)


# ---------------------------------------------------------------- 2. sched_switch

def clock_freq(outdir):
    """Ticks per second of the trace's timestamps (manifest 'clock freq=')."""
    with open(os.path.join(outdir, "tracekit.manifest")) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == "clock":
                return float(dict(p.split("=", 1) for p in parts[1:] if "=" in p)["freq"])
    raise AssertionError("no clock record in %s's manifest" % outdir)


def wakeup_pid(text):
    """The woken pid of a sched_wakeup line (kernel format or trace-cmd's)."""
    m = re.search(r"(?:\bpid=|:)(\d+) ", text)
    assert m, "unparsable sched_wakeup text: %r" % text
    return int(m.group(1))


def test_sched_switch_sleep():
    """A program that sleeps 50 ms: between kb:sleep and kb:woke,
    sched_switch shows it leaving once in state S, then sched_wakeup wakes
    it >= 50 ms later, and it comes back (next_pid) after the wakeup.

    This kernel sometimes does not record the switch back into the task
    (seen with its own 'trace' file, tracekit not involved), so a missing
    switch-in after the wakeup is tolerated; a switch-in before the
    wakeup, a second sleep, or an unbalanced away/back sequence is not."""
    ms = 50
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        p = tklib.record(d, [KSYS, "-s", str(ms)], "-e", "kb:*", "-e", "sched:sched_switch",
                         "-e", "sched:sched_wakeup", timeout=60)
    pid = child_pid(p.stdout, "tid")
    events = kernlib.report(d)
    freq = clock_freq(d)
    sleep = [i for i, e in enumerate(events) if e["event"] == "kb:sleep" and e["tid"] == pid]
    woke = [i for i, e in enumerate(events) if e["event"] == "kb:woke" and e["tid"] == pid]
    assert len(sleep) == 1 and len(woke) == 1, (sleep, woke)
    s, w = sleep[0], woke[0]
    mine = []   # (index, 'out' / 'in' / 'wake', state)
    for i in range(s + 1, w):
        e = events[i]
        if e["name"] == "sched_switch":
            check_kernel_line(e)
            prev, state, nxt = kernlib.sched_switch(e["text"])
            if prev == pid:
                mine.append((i, "out", state))
            elif nxt == pid:
                mine.append((i, "in", None))
        elif e["name"] == "sched_wakeup" and wakeup_pid(e["text"]) == pid:
            mine.append((i, "wake", None))
    what = [events[i]["text"] for i, _, _ in mine]
    sleeps = [k for k, (_, kind, st) in enumerate(mine) if kind == "out" and st == "S"]
    assert len(sleeps) == 1, "pid %d left %d times in state S between kb:sleep and kb:woke: " \
        "%r" % (pid, len(sleeps), what)
    k = sleeps[0]
    i_out = mine[k][0]
    assert events[i_out]["tid"] == pid, "the switch away is not on pid %d's line: %r" % (
        pid, events[i_out])
    # before the sleep: preemptions (out R, in) in pairs
    kinds = [kind for _, kind, _ in mine[:k] if kind != "wake"]
    assert kinds == ["out", "in"] * (len(kinds) // 2), "before the sleep: %r" % what
    after = mine[k + 1:]
    assert after and after[0][1] == "wake", \
        "after leaving in state S, the next event of pid %d is not its wakeup: %r" % (pid, what)
    slept = (events[after[0][0]]["ts"] - events[i_out]["ts"]) / freq
    assert ms / 1000 * 0.9 <= slept < 5, "woken %.3f s after leaving, slept %d ms" % (slept, ms)
    rest = [kind for _, kind, _ in after[1:]]
    assert rest in ([], ["in"]) or rest[:1] == ["in"], \
        "after its wakeup pid %d does not come back first: %r" % (pid, what)
    assert events[w]["ts"] > events[after[0][0]]["ts"]


def test_sched_switch_F():
    """-F with sched_switch: the program leaving for its sleep (state S)
    between kb:sleep and kb:woke, and no switch that involves none of the
    program's tasks."""
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        p = tklib.record(d, [KSYS, "-s", "50"], "-e", "kb:*", "-e", "sched:sched_switch", "-F",
                         timeout=60)
    pid = child_pid(p.stdout, "tid")
    events = kernlib.report(d)
    s = [i for i, e in enumerate(events) if e["event"] == "kb:sleep" and e["tid"] == pid]
    w = [i for i, e in enumerate(events) if e["event"] == "kb:woke" and e["tid"] == pid]
    assert len(s) == 1 and len(w) == 1, (s, w)
    switches = [(i, kernlib.sched_switch(e["text"])) for i, e in enumerate(events)
                if e["name"] == "sched_switch"]
    left = [i for i, sw in switches if s[0] < i < w[0] and sw[0] == pid and sw[1] == "S"]
    assert len(left) == 1, "pid %d left %d times in state S between kb:sleep and kb:woke" % (
        pid, len(left))
    mine = tasks(p.stdout)
    strangers = [sw for _, sw in switches if sw[0] not in mine and sw[2] not in mine]
    assert not strangers, "-F: sched_switch of other tasks: %r" % strangers[:3]


# ---------------------------------------------------------------- 3. signals

def read_counter(path):
    with open(path, "rb") as f:
        data = f.read(8)
    return struct.unpack("=Q", data)[0] if len(data) == 8 else 0


def check_ticks(events, pid, at_least, at_most=None):
    """kb:tick seq 0..K-1 contiguous with AT_LEAST <= K (<= AT_MOST), and
    for each of the first AT_LEAST ticks (those committed before the stop)
    its getppid enter and exit right after it, in time order.  Returns K
    and the number of sys_enter_getppid of PID."""
    mine = [e for e in events if e["tid"] == pid]
    ticks = [int(e["text"].split("=")[1]) for e in mine if e["event"] == "kb:tick"]
    k = len(ticks)
    assert ticks == list(range(k)), "kb:tick seqs not 0..%d contiguous" % (k - 1)
    assert k >= at_least, "trace holds %d ticks, the program had committed %d before " \
        "the stop" % (k, at_least)
    if at_most is not None:
        assert k <= at_most, "trace holds %d ticks, the program made only %d" % (k, at_most)
    seq = [e["name"] for e in mine if e["name"] in ("tick", "sys_enter_getppid",
                                                    "sys_exit_getppid")]
    nenter = seq.count("sys_enter_getppid")
    assert nenter >= at_least, "%d sys_enter_getppid, but %d getppid calls were " \
        "committed before the stop" % (nenter, at_least)
    want = ["tick", "sys_enter_getppid", "sys_exit_getppid"] * at_least
    got = seq[:len(want)]
    if got != want:
        i = next(i for i, (x, y) in enumerate(zip(got, want)) if x != y)
        raise AssertionError("pid %d: tick / getppid order broken at event %d: %r, want %r"
                             % (pid, i, got[max(0, i - 3):i + 3], want[max(0, i - 3):i + 3]))
    return k, nenter


def end_run(rec, pid):
    """Kill the program PID (None: it never started) and the recorder
    REC (a Popen) if they are still there, and wait for both."""
    if pid is not None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        kernlib.wait_gone(pid)
    if rec.poll() is None:
        rec.kill()
        rec.wait()


def signal_run(target, sig, opts=(), after=0.3):
    """prog-ksys -f under record (-F, getppid events, OPTS); after AFTER
    seconds send SIG to TARGET ('recorder' or 'program').  Returns
    (record's Popen, stdout, stderr, trace dir, the worker's tid, ticks
    committed before the signal, ticks at the end)."""
    d = tklib.tmpdir()
    out, cnt, ready = (os.path.join(d, x) for x in ("trace", "counter", "ready"))
    rec = subprocess.Popen([tklib.TRACEKIT, "record", "-o", out, "-e", "kb:*", *GETPPID,
                            "-F", *opts, "--", KSYS, "-f", "-p", "20", "-c", cnt,
                            "-r", ready],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=tklib.default_sigint)
    pid = None
    try:
        end = time.time() + 10
        while not (os.path.exists(ready) and os.path.getsize(ready) > 0):
            assert rec.poll() is None and time.time() < end, \
                "the program did not start: %r" % (rec.communicate(),)
            time.sleep(0.01)
        pid, tid = (int(x) for x in open(ready).read().split()[1:3])
        time.sleep(after)
        assert rec.poll() is None, "record ended early: %r" % (rec.communicate(),)
        before = read_counter(cnt)
        os.kill(rec.pid if target == "recorder" else pid, sig)
        if target == "recorder" and sig == signal.SIGKILL:
            # the program holds record's pipes open: end it too
            rec.wait(timeout=30)
            os.kill(pid, signal.SIGKILL)
            kernlib.wait_gone(pid)
        stdout, stderr = rec.communicate(timeout=30)
    finally:
        end_run(rec, pid)
    return rec, stdout, stderr, out, tid, before, read_counter(cnt)


def recorder_signal(sig):
    """SIG to the recorder: it passes it on to the program, which it kills,
    and ends with the program's status (128 + SIG); the trace holds every
    tick and getppid the program committed before."""
    with kernlib.guard():
        rec, out, err, d, tid, before, end = signal_run("recorder", sig)
    assert rec.returncode == 128 + sig, "record exited %d after %s: %s" % (
        rec.returncode, sig.name, err)
    assert before > 100, "the program committed only %d ticks in 0.3 s" % before
    # the counter is final: tick k is fired before getppid and counted
    # after it, so the signal may come between the two (one tick more)
    check_ticks(kernlib.report(d), tid, before, end + 1)


def test_recorder_sigint():
    recorder_signal(signal.SIGINT)


def test_recorder_sigterm():
    recorder_signal(signal.SIGTERM)


def test_program_sigkill():
    with kernlib.guard():
        rec, out, err, d, tid, before, end = signal_run("program", signal.SIGKILL)
    assert rec.returncode == 128 + 9, "record exited %d: %s" % (rec.returncode, err)
    assert "killed by signal 9" in err, err
    # the counter is final: tick k is fired before getppid and counted after it
    k, nenter = check_ticks(kernlib.report(d), tid, end, end + 1)
    assert nenter in (end, end + 1) and nenter <= k, \
        "%d sys_enter_getppid for %d ticks (%d counted)" % (nenter, k, end)


def test_recorder_sigkill_trace_readable():
    """SIGKILL the recorder 1 s in: the trace it leaves reads, user and
    kernel events alike (a kernel file may end inside a page): report
    exits 0 and says the trace is incomplete; the ticks are 0..K-1
    contiguous, and each getppid there comes after its own tick.
    `tracekit reset` removes the instance the recorder left."""
    with kernlib.guard():
        rec, out, err, d, tid, before, end = signal_run("recorder", signal.SIGKILL,
                                                        opts=("-b", "64", "--kernel-buffer", "64"),
                                                        after=1)
        assert tk("reset").returncode == 0
    assert rec.returncode == -signal.SIGKILL
    p = tk("report", d, "--no-header")
    assert p.returncode == 0 and p.stderr == (
        "tracekit: warning: '%s' is incomplete: its recorder stopped before finishing it "
        "(killed?); reading what it wrote\n"
        "tracekit: warning: the kernel events of the recorder's last second may be missing: "
        "instance 'tracekit-%d', which held them, is gone\n" % (d, rec.pid)), (p.returncode, p.stderr)
    events = kernlib.parse_report(p.stdout)
    k, nenter = check_ticks(events, tid, 0, end)
    assert k > 0 and nenter > 0, (k, nenter)
    # each CPU's file ends where its last whole page was written, so the
    # kernel side has holes; what it has sits between the right ticks
    between, bad = [], []
    for e in (e for e in events if e["tid"] == tid):
        if e["name"] == "tick":
            if between not in ([], ["sys_enter_getppid"], ["sys_exit_getppid"],
                               ["sys_enter_getppid", "sys_exit_getppid"]):
                bad.append(between)
            between = []
        else:
            between.append(e["name"])
    assert not bad, bad[:3]


def test_recorder_sigkill_keeps_kernel_events():
    """A program makes 502 getppid() calls (main thread 1, worker 500 + 1)
    and sleeps: its kernel events are far from half the CPU's buffer, yet
    they reach the trace while the recorder runs (every CPU's pages are
    read each second, the partial page too), so that once the recorder
    is killed with SIGKILL, report shows all 502.  It says the kernel's
    lost counts are unknown and what the killed recorder's instance may
    still hold, with the command that saves it (which then holds none of
    the 502); once reset removed the instance, that it is gone."""
    d = tklib.tmpdir()
    out, cnt, ready = (os.path.join(d, x) for x in ("trace", "counter", "ready"))
    with kernlib.guard():
        rec = subprocess.Popen([tklib.TRACEKIT, "record", "-q", "-o", out, "-e", "kb:*",
                                "-e", "syscalls:sys_enter_getppid", "-F", "--", KSYS,
                                "-n", "500", "-f", "-p", "100000000", "-c", cnt, "-r", ready],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               preexec_fn=tklib.default_sigint)
        pid = None
        try:
            tklib.wait_for_file(ready)
            pid = int(open(ready).read().split()[1])
            counts = {}
            end = time.time() + 20
            while counts.get("syscalls:sys_enter_getppid") != 502:
                assert rec.poll() is None and time.time() < end, \
                    "the kernel events did not reach the trace: %r" % counts
                time.sleep(0.1)
                if read_counter(cnt) != 1:
                    continue  # the worker's loop has not made its getppid yet
                p = tk("report", out, "--count")
                counts = {l.split()[1]: int(l.split()[0]) for l in p.stdout.splitlines()}
            os.kill(rec.pid, signal.SIGKILL)
            rec.wait(timeout=30)
        finally:
            end_run(rec, pid)
        inst = "tracekit-%d" % rec.pid
        incomplete = ("tracekit: warning: '%s' is incomplete: its recorder stopped before "
                      "finishing it (killed?); reading what it wrote" % out)
        left = ("the kernel events of the recorder's last second may be missing: instance "
                "'%s' still holds them ('tracekit extract -B %s -o %s-kernel' saves them)"
                % (inst, inst, out))
        p = tk("report", out)
        assert p.returncode == 0 and p.stderr.splitlines() == [
            incomplete, "tracekit: warning: " + left], p.stderr
        head = [l for l in p.stdout.splitlines() if l.startswith("# kernel")]
        assert head[1:] == ["# kernel cpu %d: %d pages, lost unknown" % (
            i, os.path.getsize(os.path.join(out, "kernel", "cpu%d.raw" % i)) // 4096)
            for i in range(len(head) - 2)] + ["# kernel: " + left], head
        counts = tk("report", out, "--count").stdout.split()
        assert counts[:2] == ["502", "syscalls:sys_enter_getppid"], counts
        x = tk("extract", "-B", inst, "-o", out + "-kernel")
        assert x.returncode == 0 and x.stderr == (
            "tracekit: 0 kernel events (0 lost) of instance '%s' extracted to '%s-kernel'\n"
            % (inst, out)), x.stderr
        assert tk("reset").returncode == 0
        p = tk("report", out, "--no-header")
        assert p.stderr.splitlines() == [
            incomplete, "tracekit: warning: the kernel events of the recorder's last second "
            "may be missing: instance '%s', which held them, is gone" % inst], p.stderr


# ---------------------------------------------------------------- 4. bad input

def test_error_unknown_kernel_event():
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p = tk("record", "-o", d, "-e", "syscalls:sys_enter_getppidd", "--", KSYS, "-n", "1")
    one_error(p, exact="tracekit: unknown kernel event 'syscalls:sys_enter_getppidd' (did you "
                       "mean 'syscalls:sys_enter_getppid'?)")
    assert not os.path.exists(d), "a failed record left %s behind" % d
    with kernlib.guard():
        p = tk("record", "-o", d, "-e", "nosuchsystem:foo", "--", KSYS, "-n", "1")
    one_error(p, exact="tracekit: unknown event 'nosuchsystem:foo': 'nosuchsystem' is neither "
                       "a kernel event system nor a provider of '%s' (--force records anyway)"
              % KSYS)
    assert not os.path.exists(d)


def kernel_filter_error(fs, event, flt):
    """(message, 1-based column) the kernel's error_log gives for FLT on
    EVENT ('system:name'), asked in a scratch instance."""
    inst = os.path.join(fs, "instances", "tkprobe-%d" % os.getpid())
    os.mkdir(inst)
    try:
        try:
            with open(os.path.join(inst, "events", *event.split(":"), "filter"), "w") as f:
                f.write(flt)
        except OSError:
            pass
        else:
            raise AssertionError("the kernel accepts filter %r for %s" % (flt, event))
        with open(os.path.join(inst, "error_log")) as f:
            log = f.read().splitlines()
    finally:
        os.rmdir(inst)
    # [ts] event filter parse error: error: MESSAGE / "  Command: FLT" / caret line
    i = max(i for i, l in enumerate(log) if "error: " in l)
    msg = log[i].split("error: ", 2)[-1]
    cmd, caret = log[i + 1], log[i + 2]
    return msg, caret.index("^") - cmd.index("Command: ") - len("Command: ") + 1


def test_error_filter_rejected_by_kernel():
    """A filter the kernel's parser refuses: its error_log message and
    position, in one line, non-zero exit, nothing recorded."""
    d = os.path.join(tklib.tmpdir(), "t")
    for flt in ("prev_pidd == 1", "prev_pid == abc"):
        with kernlib.guard() as fs:
            msg, col = kernel_filter_error(fs, "sched:sched_switch", flt)
            p = tk("record", "-o", d, "-e", "sched:sched_switch", "-f", flt,
                   "--", KSYS, "-n", "1")
        one_error(p, exact="tracekit: bad filter '%s' for 'sched:sched_switch' at column %d: %s"
                  % (flt, col, msg))
        assert not os.path.exists(d)


def instance_tracers():
    """The tracers a tracefs instance offers here (the top level may offer
    more, e.g. blk, that an instance cannot use), as (usable, refused):
    nop and those current_tracer takes, and {name: strerror} of those it
    refuses."""
    usable, refused = ["nop"], {}
    with kernlib.tracefs() as fs:
        inst = os.path.join(fs, "instances", "tkprobe-%d" % os.getpid())
        os.mkdir(inst)
        try:
            with open(os.path.join(inst, "available_tracers")) as f:
                offered = f.read().split()
            for t in offered:
                if t == "nop":
                    continue
                try:
                    with open(os.path.join(inst, "current_tracer"), "w") as f:
                        f.write(t)
                    usable.append(t)
                except OSError as e:
                    refused[t] = e.strerror
            with open(os.path.join(inst, "current_tracer"), "w") as f:
                f.write("nop")
        finally:
            os.rmdir(inst)
    return usable, refused


def check_not_available(line, tracer, tracers):
    """LINE is record's or start's "tracer TRACER is not available" line,
    naming TRACERS (what instance_tracers() found, outside kernlib's lock),
    as list -t does."""
    usable, refused = tracers
    m = re.fullmatch(r"tracekit: tracer '%s' is not available \(available: ([^;]*)"
                     r"(?:; refused here: (.*))?\)" % re.escape(tracer), line)
    assert m, line
    assert sorted(m.group(1).split()) == sorted(usable), (line, usable)
    said = dict(re.findall(r"(\S+) \(([^)]*)\)", m.group(2) or ""))
    assert said == refused, (line, refused)


def test_error_tracer_not_available():
    """A tracer the kernel does not have, and one it has only at the top
    level (not in an instance, where tracekit records): one line naming
    the tracers that can be used."""
    d = os.path.join(tklib.tmpdir(), "t")
    tracers = instance_tracers()
    usable, refused = tracers
    with kernlib.guard() as fs:
        top = open(os.path.join(fs, "available_tracers")).read().split()
        p = tk("record", "-o", d, "-p", "kernel:nosuchtracer", "--", KSYS, "-n", "1")
    check_not_available(one_error(p), "nosuchtracer", tracers)
    assert not os.path.exists(d)
    top_only = [t for t in top if t not in usable and t not in refused]
    if not top_only:
        return
    with kernlib.guard():
        p = tk("record", "-o", d, "-p", "kernel:" + top_only[0], "--", KSYS, "-n", "1")
    check_not_available(one_error(p), top_only[0], tracers)
    assert not os.path.exists(d)


def test_error_not_root_tracefs_mounted():
    """As user nobody, with tracefs mounted: one line, non-zero, nothing
    left (it cannot read tracefs)."""
    prefix = test_cli.as_nobody()
    base = tklib.tmpdir()
    os.chmod(base, 0o777)
    d = os.path.join(base, "t")
    with kernlib.guard() as fs:
        p = test_cli.run_as(prefix, "record", "-o", d, *GETPPID, "--", KSYS, "-n", "1")
    one_error(p, exact="tracekit: cannot read the kernel's events in '%s': Permission denied"
              % fs)
    assert not os.path.exists(d)


def test_error_not_root_tracefs_unmounted():
    """As user nobody, with tracefs not mounted: tracekit cannot mount it;
    one line, non-zero, nothing mounted after."""
    prefix = test_cli.as_nobody()
    base = tklib.tmpdir()
    os.chmod(base, 0o777)
    d = os.path.join(base, "t")
    with kernlib.guard():
        p, left = kernlib.run_unmounted(prefix + [tklib.TRACEKIT, "record", "-o", d, *GETPPID,
                                                  "--", KSYS, "-n", "1"])
    assert not left, "mounted after a failed record: %s" % left
    one_error(p, exact="tracekit: cannot mount tracefs on '/sys/kernel/tracing': "
                       "Operation not permitted (kernel events need root)")
    assert not os.path.exists(d)


def test_mounts_and_unmounts_tracefs():
    """Root with tracefs not mounted: record mounts it, records, and
    unmounts it again."""
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p, left = kernlib.run_unmounted([tklib.TRACEKIT, "record", "-o", d, "-e", "kb:*",
                                         *GETPPID, "-F", "--", KSYS, "-n", "10", "-s", "50"])
    assert p.returncode == 0, "record exited %d: %s" % (p.returncode, p.stderr)
    assert not left, "record left tracefs/debugfs mounted: %s" % left
    check_getppid_window(kernlib.report(d), child_pid(p.stdout, "tid"), 10,
                         child_pid(p.stdout, "ppid"))


# ---------------------------------------------------------------- 5. refused features

def refused(feature):
    with kernlib.tracefs() as fs:
        return kernlib.probe_refused(fs).get(feature)


def test_function_tracer_refusal_reported():
    """Where the kernel refuses the function tracer, record says so in one
    line at run time, and leaves nothing behind."""
    why = refused("function")
    if not why:
        raise tklib.Skip("this kernel permits the function tracer: nothing refused to report")
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p = tk("record", "-o", d, "-p", "kernel:function", "--", KSYS, "-n", "1")
    one_error(p, exact="tracekit: the kernel does not permit the function tracer here "
                       "(current_tracer: Operation not permitted)")
    assert not os.path.exists(d)


def test_ftrace_filter_refusal_reported():
    why = refused("ftrace_filter")
    if not why:
        raise tklib.Skip("this kernel permits set_ftrace_filter: nothing refused to report")
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p = tk("record", "-o", d, "-p", "kernel:function", "-l", "schedule", "--", KSYS,
               "-n", "1")
    one_error(p, exact="tracekit: cannot open 'set_ftrace_filter': Operation not permitted "
                       "(the kernel does not permit function filters here)")
    assert not os.path.exists(d)


def test_function_tracer():
    """The kernel's function tracer, where the kernel permits it."""
    why = refused("function")
    if why:
        raise tklib.Skip(why)
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        p = tklib.record(d, [KSYS, "-n", "10"], "-e", "kb:*", "-p", "kernel:function", "-F",
                         timeout=60)
    pid = child_pid(p.stdout, "tid")
    funcs = [e for e in kernlib.report(d) if e["name"] == "function" and e["tid"] == pid]
    assert funcs, "no function events of pid %d" % pid


def test_function_tracer_filter():
    """-l FUNC, where the kernel permits set_ftrace_filter."""
    why = refused("function") or refused("ftrace_filter")
    if why:
        raise tklib.Skip(why)
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        p = tklib.record(d, [KSYS, "-n", "10"], "-p", "kernel:function", "-l",
                         "__x64_sys_getppid", "-F", timeout=60)
    pid = child_pid(p.stdout, "tid")
    funcs = [e for e in kernlib.report(d) if e["name"] == "function" and e["tid"] == pid]
    assert len(funcs) == 10 and all("getppid" in e["text"] for e in funcs), funcs[:3]
