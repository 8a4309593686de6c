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
    """The pid (or ppid) prog-ksys printed ("pid N", "ppid N")."""
    for line in stdout.splitlines():
        if line.startswith(what + " "):
            return int(line.split()[1])
    raise AssertionError("prog-ksys printed no %s: %r" % (what, stdout))


def start_noise():
    """prog-ksys, untraced, making getppid() calls ~every 100 us until
    stopped; returns the Popen (its pid is the 'other process')."""
    d = tklib.tmpdir()
    ready = os.path.join(d, "noise-ready")
    p = subprocess.Popen([KSYS, "-f", "-p", "100", "-r", ready],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tklib.wait_for_file(ready)
    return p


def kernel_lines(events):
    return [e for e in events if not e["event"].startswith("kb:")]


def check_kernel_line(e):
    """A kernel line carries trace-cmd's latency columns."""
    assert e["lat"] is not None and len(e["lat"]) >= 4, \
        "kernel line without latency columns: %r" % e


def record_getppid(outdir, n, *opts):
    """record kb:* and getppid's two events around prog-ksys -n N -s 50;
    returns (CompletedProcess, child pid)."""
    p = tklib.record(outdir, [KSYS, "-n", str(n), "-s", "50"], "-e", "kb:*", *GETPPID, *opts,
                     timeout=60)
    return p, child_pid(p.stdout)


def check_getppid_window(events, pid, n, ppid):
    """Exactly N sys_enter_getppid and N sys_exit_getppid of PID, all
    strictly between its kb:begin and kb:end, alternating enter/exit."""
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
            p, pid = record_getppid(d, N, "-F")
    finally:
        stop(noise)
    events = kernlib.report(d)
    check_getppid_window(events, pid, N, child_pid(p.stdout, "ppid"))
    others = [e for e in kernel_lines(events) if e["tid"] != pid]
    assert not others, "-F: %d kernel events of other pids, first: %r (noise pid %d)" % (
        len(others), others[0], noise.pid)


def test_getppid_without_F():
    """The same without -F: the other process's getppid calls are in the
    trace too (so -F is what filtered them above), and the child's are
    still exactly N, in place."""
    noise = start_noise()
    try:
        with kernlib.guard():
            d = os.path.join(tklib.tmpdir(), "t")
            p, pid = record_getppid(d, N)
    finally:
        stop(noise)
    events = kernlib.report(d)
    check_getppid_window(events, pid, N, child_pid(p.stdout, "ppid"))
    theirs = [e for e in events if e["tid"] == noise.pid]
    assert len([e for e in theirs if e["name"] == "sys_enter_getppid"]) >= 10, \
        "without -F, only %d events of the other process %d (it calls getppid every " \
        "~100 us during the whole recording)" % (len(theirs), noise.pid)


# ---------------------------------------------------------------- 2. sched_switch

def test_sched_switch_sleep():
    """A program that sleeps 50 ms: sched_switch shows it leaving (prev_pid,
    state S) after kb:sleep and coming back (next_pid) before kb:woke."""
    ms = 50
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        p = tklib.record(d, [KSYS, "-s", str(ms)], "-e", "kb:*", "-e", "sched:sched_switch",
                         "-F", timeout=60)
    pid = child_pid(p.stdout)
    events = kernlib.report(d)
    head = tk("report", d, check=True).stdout
    freq = None
    for line in head.splitlines():
        if "clock tsc at " in line:
            freq = int(line.split("clock tsc at ")[1].split()[0])
    assert freq, "no clock frequency in the report header"
    sleep = [i for i, e in enumerate(events) if e["event"] == "kb:sleep" and e["tid"] == pid]
    woke = [i for i, e in enumerate(events) if e["event"] == "kb:woke" and e["tid"] == pid]
    assert len(sleep) == 1 and len(woke) == 1, (sleep, woke)
    s, w = sleep[0], woke[0]
    switches = [(i, kernlib.sched_switch(e["text"])) for i, e in enumerate(events)
                if e["name"] == "sched_switch"]
    for i, _ in switches:
        check_kernel_line(events[i])
    inside = [(i, sw) for i, sw in switches if s < i < w and pid in (sw[0], sw[2])]
    assert len(inside) >= 2, "only %d sched_switch events of pid %d between kb:sleep and " \
        "kb:woke: %r" % (len(inside), pid, [events[i] for i, _ in inside])
    (i_out, (prev, state, _)), (i_in, (_, _, nxt)) = inside[0], inside[-1]
    assert prev == pid and state == "S", \
        "first switch after kb:sleep is not pid %d leaving in state S: %r" % (pid, events[i_out])
    assert nxt == pid, "last switch before kb:woke is not pid %d coming back: %r" % (
        pid, events[i_in])
    assert events[i_out]["tid"] == pid, "the switch away runs on pid %d's line: %r" % (
        pid, events[i_out])
    slept = (events[i_in]["ts"] - events[i_out]["ts"]) / freq
    assert ms / 1000 * 0.9 <= slept < 5, "away for %.3f s, slept %d ms" % (slept, ms)
    # -F keeps switches that do not involve the program out
    strangers = [sw for _, sw in switches if pid not in (sw[0], sw[2])]
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


def signal_run(target, sig):
    """prog-ksys -f under record (-F, getppid events); after 0.3 s send SIG
    to TARGET ('recorder' or 'program').  Returns (record's Popen, stdout,
    stderr, trace dir, pid, ticks committed before the signal, ticks at the
    end)."""
    d = tklib.tmpdir()
    out, cnt, ready = (os.path.join(d, x) for x in ("trace", "counter", "ready"))
    rec = subprocess.Popen([tklib.TRACEKIT, "record", "-o", out, "-e", "kb:*", *GETPPID,
                            "-F", "--", KSYS, "-f", "-p", "20", "-c", cnt, "-r", ready],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = None
    try:
        end = time.time() + 10
        while not (os.path.exists(ready) and os.path.getsize(ready) > 0):
            assert rec.poll() is None and time.time() < end, \
                "the program did not start: %r" % (rec.communicate(),)
            time.sleep(0.01)
        pid = int(open(ready).read().split()[1])
        time.sleep(0.3)
        assert rec.poll() is None, "record ended early: %r" % (rec.communicate(),)
        before = read_counter(cnt)
        os.kill(rec.pid if target == "recorder" else pid, sig)
        stdout, stderr = rec.communicate(timeout=30)
    finally:
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            kernlib.wait_gone(pid)
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    return rec, stdout, stderr, out, pid, before, read_counter(cnt)


def recorder_signal(sig):
    """SIG to the recorder: it ends with status 0, the trace holds every
    tick and getppid the program committed before."""
    with kernlib.guard():
        rec, out, err, d, pid, before, end = signal_run("recorder", sig)
    assert rec.returncode == 0, "record exited %d after %s: %s" % (
        rec.returncode, sig.name, err)
    assert before > 100, "the program committed only %d ticks in 0.3 s" % before
    check_ticks(kernlib.report(d), pid, before, end)


def test_recorder_sigint():
    recorder_signal(signal.SIGINT)


def test_recorder_sigterm():
    recorder_signal(signal.SIGTERM)


def test_program_sigkill():
    with kernlib.guard():
        rec, out, err, d, pid, before, end = signal_run("program", signal.SIGKILL)
    assert rec.returncode == 0, "record exited %d: %s" % (rec.returncode, err)
    assert "killed by signal 9" in err, err
    # the counter is final: tick k is fired before getppid and counted after it
    k, nenter = check_ticks(kernlib.report(d), pid, end, end + 1)
    assert nenter in (end, end + 1) and nenter <= k, \
        "%d sys_enter_getppid for %d ticks (%d counted)" % (nenter, k, end)


# ---------------------------------------------------------------- 4. bad input

def test_error_unknown_kernel_event():
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p = tk("record", "-o", d, "-e", "syscalls:sys_enter_getppidd", "--", KSYS, "-n", "1")
    line = one_error(p, contains=("'syscalls:sys_enter_getppidd'",
                                  "did you mean 'syscalls:sys_enter_getppid'?"))
    assert not os.path.exists(d), "a failed record left %s behind (%s)" % (d, line)
    with kernlib.guard():
        p = tk("record", "-o", d, "-e", "nosuchsystem:foo", "--", KSYS, "-n", "1")
    one_error(p, contains=("'nosuchsystem:foo'",))
    assert not os.path.exists(d)


def test_error_filter_rejected_by_kernel():
    """A filter the kernel's parser refuses: its error_log message, in one
    line, non-zero exit, nothing recorded."""
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p = tk("record", "-o", d, "-e", "sched:sched_switch", "-f", "prev_pidd == 1",
               "--", KSYS, "-n", "1")
    one_error(p, contains=("'prev_pidd == 1'", "sched:sched_switch", "Field not found"))
    assert not os.path.exists(d)
    with kernlib.guard():
        p = tk("record", "-o", d, "-e", "sched:sched_switch", "-f", "prev_pid == abc",
               "--", KSYS, "-n", "1")
    one_error(p, contains=("'prev_pid == abc'", "Invalid value (did you forget quotes)?"))
    assert not os.path.exists(d)


def test_error_tracer_not_available():
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard() as fs:
        avail = open(os.path.join(fs, "available_tracers")).read().split()
        p = tk("record", "-o", d, "-p", "kernel:nosuchtracer", "--", KSYS, "-n", "1")
    one_error(p, contains=("'nosuchtracer'",) + tuple(t for t in avail if t != "blk"))
    assert not os.path.exists(d)


def test_error_not_root_tracefs_mounted():
    """As user nobody, with tracefs mounted: one line, non-zero, nothing
    left (the instance cannot be created)."""
    prefix = test_cli.as_nobody()
    base = tklib.tmpdir()
    os.chmod(base, 0o777)
    d = os.path.join(base, "t")
    with kernlib.guard():
        p = test_cli.run_as(prefix, "record", "-o", d, *GETPPID, "--", KSYS, "-n", "1")
    one_error(p, pattern=r"tracefs|permission|not permitted")
    assert not os.path.exists(d)


def test_error_not_root_tracefs_unmounted():
    """As user nobody, with tracefs not mounted: tracekit cannot mount it;
    one line, non-zero, and tracefs is still not mounted."""
    prefix = test_cli.as_nobody()
    base = tklib.tmpdir()
    os.chmod(base, 0o777)
    d = os.path.join(base, "t")
    with kernlib.guard(mounted=False):
        p = test_cli.run_as(prefix, "record", "-o", d, *GETPPID, "--", KSYS, "-n", "1")
        assert not kernlib.mounts(), "tracefs mounted after a failed record"
    one_error(p, pattern=r"tracefs")
    assert not os.path.exists(d)


def test_mounts_and_unmounts_tracefs():
    """Root with tracefs not mounted: record mounts it, records, and
    unmounts it again (guard(mounted=False) checks it is gone)."""
    with kernlib.guard(mounted=False):
        d = os.path.join(tklib.tmpdir(), "t")
        p, pid = record_getppid(d, 10, "-F")
    check_getppid_window(kernlib.report(d), pid, 10, child_pid(p.stdout, "ppid"))


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
    one_error(p, contains=("function",), pattern=r"not permitted|refuse|locked")
    assert not os.path.exists(d)


def test_ftrace_filter_refusal_reported():
    why = refused("ftrace_filter")
    if not why:
        raise tklib.Skip("this kernel permits set_ftrace_filter: nothing refused to report")
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p = tk("record", "-o", d, "-p", "kernel:function", "-l", "schedule", "--", KSYS,
               "-n", "1")
    one_error(p, pattern=r"not permitted|refuse|locked")
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
    pid = child_pid(p.stdout)
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
    pid = child_pid(p.stdout)
    funcs = [e for e in kernlib.report(d) if e["name"] == "function" and e["tid"] == pid]
    assert len(funcs) == 10 and all("getppid" in e["text"] for e in funcs), funcs[:3]
