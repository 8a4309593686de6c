# SPDX-License-Identifier: MIT
"""End-to-end tests of start / stop / show / reset, and of record's kernel
options that need no reader: kernel tracers (-p), --stack, -P, -F, the
manifest's kernel records and the error paths of these.

Everything runs under kernlib.guard(): the machine-wide tracefs lock, and
the tracing state compared before and after (a difference, or a
tracekit-* instance left behind, fails the test).  Counts are exact:
the programs make a known number of getppid() calls, and a process's
calls are counted either in `tracekit show` or in the kernel's own
per-CPU counts that record saves (kcpu entries=).
"""
import os
import platform
import re
import subprocess
import sys
import time

import kernlib
import test_cli
import test_kernel
import tklib

KSYS = tklib.prog("ksys")
one_error = test_cli.one_error

# A process that waits for a line on stdin, makes N getppid() calls,
# prints "done", then waits for another line and makes N more if it is
# "go" (none at end of input).
GETPPID_ON_CUE = r"""
import os, sys
n = int(sys.argv[1])
print(os.getpid(), flush=True)
sys.stdin.readline()
for _ in range(n):
    os.getppid()
print("done", flush=True)
if sys.stdin.readline() == "go\n":
    for _ in range(n):
        os.getppid()
"""


def tk(*args, **kw):
    kw.setdefault("check", False)
    return tklib.tracekit(*args, **kw)


def instances(fs):
    return sorted(os.listdir(os.path.join(fs, "instances")))


def cued_child(n):
    p = subprocess.Popen([sys.executable, "-c", GETPPID_ON_CUE, str(n)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline())
    return p, pid


def cue(p, expect_done=True):
    p.stdin.write("go\n")
    p.stdin.flush()
    if expect_done:
        assert p.stdout.readline().strip() == "done"


def finish(p):
    p.stdin.close()
    p.wait(timeout=30)


def cleanup(child, instance):
    """After a test: the child gone, and the instance if it is left."""
    if child.poll() is None:
        child.kill()
        child.wait()
    tk("reset", "-B", instance)


def show_getppid(pid, *opts):
    """Lines of `tracekit show` (instance 'tracekit' or -B NAME) that are
    pid PID's sys_getppid() events."""
    p = tk("show", *opts)
    assert p.returncode == 0, p.stderr
    mine = re.compile(r"^\s*\S+-%d\s+\[\d+\] \S+ +[\d.]+: sys_getppid\(\)$" % pid)
    return [l for l in p.stdout.splitlines() if mine.match(l)], p.stdout


def manifest(d):
    """The kernel and kcpu records of DIR's manifest, as dicts."""
    kernel, kcpu = None, []
    for line in open(os.path.join(d, "tracekit.manifest")):
        kind, _, rest = line.rstrip("\n").partition(" ")
        rec = dict(kv.split("=", 1) for kv in rest.split())
        if kind == "kernel":
            kernel = rec
        elif kind == "kcpu":
            kcpu.append(rec)
    return kernel, kcpu


def kernel_entries(d):
    _, kcpu = manifest(d)
    return sum(int(c["entries"]) for c in kcpu)


# ---------------------------------------------------------------- start/stop/show/reset

def test_start_stop_show_reset():
    """start -P follows one process: exactly its N calls while started;
    none after stop; show twice shows the same; reset removes the
    instance and leaves the state as it was."""
    n = 25
    with kernlib.guard() as fs:
        child, pid = cued_child(n)
        try:
            p = tk("start", "-e", "syscalls:sys_enter_getppid", "-P", str(pid))
            assert p.returncode == 0 and p.stderr == (
                "tracekit: tracing syscalls:sys_enter_getppid of process %d in instance "
                "'tracekit'; 'tracekit show' prints it, 'extract' saves it, 'stop' and "
                "'reset' end it\n" % pid), p.stderr
            assert "tracekit" in instances(fs)
            inst = os.path.join(fs, "instances", "tracekit")
            assert open(os.path.join(inst, "tracing_on")).read().strip() == "1"
            assert open(os.path.join(inst, "set_event_pid")).read().split() == [str(pid)]
            cue(child)
            p = tk("stop")
            assert p.returncode == 0 and not p.stderr, p.stderr
            assert open(os.path.join(inst, "tracing_on")).read().strip() == "0"
            cue(child, expect_done=False)  # N more calls, after the stop
            finish(child)
            mine, out = show_getppid(pid)
            assert len(mine) == n, "show holds %d sys_getppid of pid %d, want %d:\n%s" % (
                len(mine), pid, n, out[-2000:])
            again, _ = show_getppid(pid)
            # the same events; their seconds come from a TSC-to-clock
            # conversion measured by each show, which may move the last digit
            no_ts = lambda lines: [re.sub(r" [\d.]+: ", " : ", l) for l in lines]
            assert no_ts(again) == no_ts(mine), "show consumed the events"
            assert "# tracer: nop" in out
            p = tk("reset")
            assert p.returncode == 0 and not p.stderr, p.stderr
            assert "tracekit" not in instances(fs)
        finally:
            cleanup(child, "tracekit")


def test_start_kernel_buffer_is_records_option():
    """start's kernel buffer goes by record's name, --kernel-buffer, and
    by trace-cmd's -b alike: both size the instance's buffer the same,
    and what the kernel made of it is said when it rounded it up."""
    with kernlib.guard() as fs:
        made = {}
        for opt in ("--kernel-buffer", "-b"):
            p = tk("start", "-B", "tkbuf", opt, "16", "-e", "sched:sched_switch")
            try:
                inst = os.path.join(fs, "instances", "tkbuf")
                made[opt] = int(open(os.path.join(inst, "buffer_size_kb")).read().split()[0])
                assert p.returncode == 0 and p.stderr.splitlines()[1:] == [
                    "tracekit: --kernel-buffer 16: the kernel made %d KiB per CPU (it rounds "
                    "up to whole pages of events)" % made[opt]], p.stderr
            finally:
                assert tk("reset", "-B", "tkbuf").returncode == 0
        # 16 KiB is 5 pages of 4080 bytes of events: 19 KiB
        assert made["-b"] == made["--kernel-buffer"] and 16 < made["-b"] < 24, made
        test_cli.one_error(tk("start", "-B", "tkbuf", "-b", "2", "-e", "sched:sched_switch"),
                           rc=2, exact="tracekit: --kernel-buffer '2': buffer size must be a "
                                       "number of KiB, at least 4")
        assert "--kernel-buffer KB" in tk("start", "--help").stdout


def start_cued(child, pid):
    """start the 'tracekit' instance on PID's getppid() calls, then cue
    CHILD: the CLOCK_MONOTONIC times around its calls."""
    assert tk("start", "-e", "syscalls:sys_enter_getppid", "-P", str(pid)).returncode == 0
    t0 = time.monotonic()
    cue(child)
    return t0, time.monotonic()


def test_show_seconds():
    """show prints the TSC-clocked instance's timestamps as seconds of
    CLOCK_MONOTONIC, as report does: the N calls fall between the times
    taken around them; --ts raw prints the kernel's ticks."""
    n = 10
    with kernlib.guard():
        child, pid = cued_child(n)
        try:
            t0, t1 = start_cued(child, pid)
            secs, _ = show_getppid(pid)
            raw, _ = show_getppid(pid, "--ts", "raw")
        finally:
            cleanup(child, "tracekit")
    assert len(secs) == len(raw) == n, (secs, raw)
    ts = [float(re.search(r" ([\d.]+): sys_getppid", l).group(1)) for l in secs]
    assert all(re.search(r" \d+\.\d{6}: sys_getppid", l) for l in secs), secs[:2]
    assert t0 - 0.001 <= ts[0] and ts[-1] <= t1 + 0.001 and ts == sorted(ts), (t0, ts, t1)
    ticks = [int(re.search(r" (\d+): sys_getppid", l).group(1)) for l in raw]
    assert ticks == sorted(ticks) and ticks[0] > 10**9, ticks[:2]
    one_error(tk("show", "--ts", "real"), rc=2, exact="tracekit: --ts 'real': use mono or raw")


def test_extract():
    """start, N calls, stop, extract: a trace directory that report reads,
    with exactly the N getppid() calls of the process, at the times they
    were made; the events have left the instance; errors are one line."""
    n = 12
    d = os.path.join(tklib.tmpdir(), "x")
    with kernlib.guard():
        child, pid = cued_child(n)
        try:
            t0, t1 = start_cued(child, pid)
            assert tk("stop").returncode == 0
            p = tk("extract", "-o", d)
            assert (p.returncode, p.stderr) == (
                0, "tracekit: %d kernel events (0 lost) of instance 'tracekit' extracted to "
                   "'%s'\n" % (n, d)), p.stderr
            assert show_getppid(pid)[0] == []
            one_error(tk("extract", "-o", d), rc=1,
                      exact="tracekit: cannot create trace directory '%s': it exists (give "
                            "another -o)" % d)
        finally:
            cleanup(child, "tracekit")
        one_error(tk("extract", "-o", d + "2"), rc=1, exact="tracekit: no instance 'tracekit'")
    evs = kernlib.report(d)
    assert [(e["tid"], e["name"]) for e in evs] == [(pid, "sys_enter_getppid")] * n, evs[:3]
    secs = [float(e["ts"]) for e in kernlib.parse_report(tk("report", d, "--no-header").stdout)]
    assert t0 - 0.001 <= secs[0] and secs[-1] <= t1 + 0.001, (t0, secs, t1)
    k, kcpu = manifest(d)
    assert (k["instance"], k["events"], k["pid_filter"]) == (
        "tracekit", "syscalls:sys_enter_getppid", str(pid)), k
    assert sum(int(c["entries"]) for c in kcpu) == n


def test_start_named_instance_and_stack():
    """-B NAME, and --stack: each event is followed by its kernel stack."""
    n = 5
    with kernlib.guard() as fs:
        child, pid = cued_child(n)
        try:
            p = tk("start", "-B", "tracekit-t1", "--stack", "-e",
                   "syscalls:sys_enter_getppid", "-P", str(pid))
            assert p.returncode == 0 and p.stderr == (
                "tracekit: tracing syscalls:sys_enter_getppid of process %d in instance "
                "'tracekit-t1'; 'tracekit show -B tracekit-t1' prints it, 'extract' saves it, "
                "'stop' and 'reset' end it\n" % pid), p.stderr
            cue(child)
            assert tk("stop", "-B", "tracekit-t1").returncode == 0
            cue(child, expect_done=False)
            finish(child)
            mine, out = show_getppid(pid, "-B", "tracekit-t1")
            assert len(mine) == n, out[-2000:]
            # each sys_getppid line is followed by "<stack trace>" and " => " frames
            lines = out.splitlines()
            stacks = 0
            for i, l in enumerate(lines):
                if l in mine:
                    assert "<stack trace>" in lines[i + 1], lines[i:i + 3]
                    assert lines[i + 2].lstrip().startswith("=> "), lines[i:i + 3]
                    stacks += 1
            assert stacks == n
            assert tk("reset", "-B", "tracekit-t1").returncode == 0
            assert "tracekit-t1" not in instances(fs)
        finally:
            cleanup(child, "tracekit-t1")


def test_start_errors():
    """Each mistake: one line, the status, and no instance left."""
    tracers = test_kernel.instance_tracers()
    with kernlib.guard() as fs:
        try:
            one_error(tk("start"), rc=2,
                      exact="tracekit: nothing to trace: give -e EVENT or -p TRACER")
            one_error(tk("start", "-e", "sched:sched_swich"), rc=1,
                      exact="tracekit: unknown kernel event 'sched:sched_swich' "
                            "(did you mean 'sched:sched_switch'?)")
            one_error(tk("start", "-e", "sched:sched_switch", "-f", "prev_pidd == 1"),
                      rc=1, exact="tracekit: bad filter 'prev_pidd == 1' for "
                                  "'sched:sched_switch' at column 11: Field not found")
            test_kernel.check_not_available(one_error(tk("start", "-p", "bogus"), rc=1),
                                            "bogus", tracers)
            one_error(tk("start", "-e", "sched:sched_switch", "-C", "bogus-clock"), rc=1,
                      pattern=r"^tracekit: the kernel offers no trace clock 'bogus-clock' "
                              r"\(offered: .*x86-tsc.*\)$")
            one_error(tk("start", "-e", "sched:sched_switch", "-P", "999999999"), rc=1,
                      exact="tracekit: no process with pid 999999999")
            assert "tracekit" not in instances(fs)
            for verb in ("stop", "show", "reset"):
                one_error(tk(verb, "-B", "nosuch"), rc=1,
                          exact="tracekit: no instance 'nosuch'")
            one_error(tk("stop"), rc=1, exact="tracekit: no instance 'tracekit'")
            one_error(tk("reset"), rc=1, exact="tracekit: no instance 'tracekit'")
            assert tk("start", "-e", "sched:sched_switch").returncode == 0
            one_error(tk("start", "-e", "sched:sched_switch"), rc=1,
                      exact="tracekit: instance 'tracekit' exists already "
                            "('tracekit reset -B tracekit' removes it)")
            assert tk("reset").returncode == 0
            assert "tracekit" not in instances(fs)
        finally:
            tk("reset", "-B", "tracekit")


def test_reset_stale_instances():
    """A recorder killed by SIGKILL leaves tracekit-PID behind: reset
    removes it, and -a leaves a running recorder's instance alone."""
    with kernlib.guard() as fs:
        dead = subprocess.Popen(["true"])
        dead.wait()
        stale = "tracekit-%d" % dead.pid
        os.mkdir(os.path.join(fs, "instances", stale))
        d = os.path.join(tklib.tmpdir(), "t")
        rec = subprocess.Popen([tklib.TRACEKIT, "record", "-q", "-o", d, "-e",
                                "sched:sched_switch", "--", "sleep", "30"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        live = "tracekit-%d" % rec.pid
        try:
            wait_tracing(rec, os.path.join(fs, "instances", live))
            p = tk("reset", "-a")
            assert p.returncode == 0, p.stderr
            assert p.stderr == "tracekit: warning: instance '%s' belongs to a running " \
                               "recorder: left alone\n" % live, p.stderr
            assert stale not in instances(fs) and live in instances(fs)
            os.mkdir(os.path.join(fs, "instances", stale))
            p = tk("reset")
            assert p.returncode == 0 and not p.stderr, p.stderr
            assert stale not in instances(fs) and live in instances(fs)
        finally:
            rec.terminate()
            rec.communicate(timeout=30)
            if os.path.isdir(os.path.join(fs, "instances", stale)):
                os.rmdir(os.path.join(fs, "instances", stale))
        assert rec.returncode == 128 + 15  # sleep's status: SIGTERM, passed on
        assert live not in instances(fs)


# ---------------------------------------------------------------- record's kernel options

def wait_tracing(rec, inst):
    """Wait until recorder REC's instance INST is tracing (its events are
    enabled and tracing_on is 1: the last thing record sets up)."""
    end = time.time() + 10
    while time.time() < end:
        assert rec.poll() is None, "record ended: %r" % (rec.communicate(),)
        try:
            if open(os.path.join(inst, "tracing_on")).read().strip() == "1" and \
                    open(os.path.join(inst, "set_event")).read().strip():
                return
        except OSError:
            pass
        time.sleep(0.01)
    raise AssertionError("%s did not start tracing" % inst)


def record_ksys(d, n, *opts):
    p = tklib.record(d, [KSYS, "-n", str(n)], "-q", "-e", "syscalls:sys_enter_getppid",
                     *opts, timeout=60)
    return p


def test_record_F_counts_exact():
    """-F: the kernel's own count of recorded events grows by exactly N
    with N more getppid() calls of the command (nobody else's count), and
    the manifest says what was set."""
    with kernlib.guard():
        base = tklib.tmpdir()
        record_ksys(os.path.join(base, "a"), 0, "-F")
        pb = record_ksys(os.path.join(base, "b"), 300, "-F")
    a, b = kernel_entries(os.path.join(base, "a")), kernel_entries(os.path.join(base, "b"))
    assert b - a == 300, "with -F: %d events for 0 calls, %d for 300" % (a, b)
    k, kcpu = manifest(os.path.join(base, "b"))
    assert k["events"] == "syscalls:sys_enter_getppid" and k["tracer"] == "nop"
    assert k["event_fork"] == "1" and k["stack"] == "0" and k["clock"] == "x86-tsc"
    # docs/format.md: the command's pid alone with -F
    assert k["pid_filter"] == re.search(r"^pid (\d+)$", pb.stdout, re.M).group(1), \
        (k["pid_filter"], pb.stdout)
    assert k["instance"].startswith("tracekit-") and int(k["page_size"]) >= 4096
    assert int(k["cpus"]) == len(kcpu) >= 1
    for c in kcpu:
        f = os.path.join(base, "b", c["file"])
        assert os.path.getsize(f) == int(c["bytes"]) == int(c["pages"]) * int(k["page_size"])
        assert c["overrun"] == "0" and c["dropped"] == "0"
    d = os.path.join(base, "b", "kernel")
    for f in ("header_page", "header_event", "kallsyms", "printk_formats",
              "saved_cmdlines", "formats/syscalls/sys_enter_getppid",
              "formats/ftrace/kernel_stack", "formats/ftrace/function"):
        assert os.path.getsize(os.path.join(d, f)) > 0, f
    assert sorted(os.listdir(os.path.join(d, "stats"))) == \
        sorted("cpu%s" % c["cpu"] for c in kcpu)


def test_record_stack_doubles_entries():
    """--stack: a kernel stack entry rides with every event, so the same
    run records exactly twice as many entries."""
    with kernlib.guard():
        base = tklib.tmpdir()
        record_ksys(os.path.join(base, "a"), 50, "-F")
        record_ksys(os.path.join(base, "b"), 50, "-F", "--stack")
    a, b = kernel_entries(os.path.join(base, "a")), kernel_entries(os.path.join(base, "b"))
    assert a >= 50 and b == 2 * a, "%d entries without --stack, %d with" % (a, b)
    assert manifest(os.path.join(base, "b"))[0]["stack"] == "1"


def test_record_P_kernel_only():
    """-P PID with kernel events only: the process need not be
    instrumented; exactly its N calls are recorded; record ends when the
    process does."""
    n = 40
    with kernlib.guard() as fs:
        child, pid = cued_child(n)
        d = os.path.join(tklib.tmpdir(), "t")
        rec = subprocess.Popen([tklib.TRACEKIT, "record", "-o", d, "-P", str(pid), "-e",
                                "syscalls:sys_enter_getppid"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            inst = os.path.join(fs, "instances", "tracekit-%d" % rec.pid)
            wait_tracing(rec, inst)
            cue(child)
            finish(child)
            out, err = rec.communicate(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
            if rec.poll() is None:
                rec.kill()
                rec.communicate()
    assert rec.returncode == 0, err
    assert "KERNEL CPU" in err and "kernel total" in err, err
    total = [l.split() for l in err.splitlines() if l.startswith("kernel total")][0]
    assert total[2:] == [str(n), "0", total[4]], total
    assert kernel_entries(d) == n
    assert manifest(d)[0]["pid_filter"] == str(pid)


def test_record_tracers():
    """-p nop records; the tracer list on a bad name; the kernel's refusal
    of the function tracer in one line (where it refuses)."""
    tracers = test_kernel.instance_tracers()
    with kernlib.guard() as fs:
        d = os.path.join(tklib.tmpdir(), "t")
        p = tklib.record(d, ["true"], "-q", "-p", "nop", "-e", "sched:sched_switch")
        assert p.returncode == 0 and not p.stderr, p.stderr
        assert manifest(d)[0]["tracer"] == "nop"
        assert manifest(d)[0]["pid_filter"] == "%"  # the empty value: no pid filter
        d2 = os.path.join(tklib.tmpdir(), "t")
        test_kernel.check_not_available(
            one_error(tk("record", "-o", d2, "-p", "kernel:bogus", "--", "true"), rc=1),
            "bogus", tracers)
        assert not os.path.exists(d2)
        refused = kernlib.probe_refused(fs).get("function")
        p = tk("record", "-o", d2, "-p", "kernel:function", "--", "true")
    if not refused:
        raise tklib.Skip("this kernel permits the function tracer: no refusal to check")
    one_error(p, rc=1, exact="tracekit: the kernel does not permit the function tracer "
                             "here (current_tracer: Operation not permitted)")
    assert not os.path.exists(d2)


def test_record_option_errors():
    """Kernel options that make no sense alone: one line, nothing left."""
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        one_error(tk("record", "-o", d, "-F", "--", "true"), rc=1,
                  exact="tracekit: -F applies to kernel events: give one "
                        "(-e SYSTEM:EVENT) or a kernel tracer (-p)")
        one_error(tk("record", "-o", d, "--stack", "--", "true"), rc=1,
                  exact="tracekit: --stack applies to kernel events: give one "
                        "(-e SYSTEM:EVENT) or a kernel tracer (-p)")
        one_error(tk("record", "-o", d, "-l", "schedule", "-e", "sched:sched_switch",
                     "--", "true"), rc=1,
                  exact="tracekit: -l, -n and -g need a function tracer "
                        "(-p function or -p function_graph)")
        one_error(tk("record", "-o", d, "-F", "-P", "1", "-e", "sched:sched_switch"), rc=2,
                  exact="tracekit: -F is for a command; -P PID already limits the "
                        "kernel's events to PID")
        one_error(tk("record", "-o", d, "-e", "sched:sched_switch", "-P", "999999"), rc=1,
                  exact="tracekit: no process with pid 999999")
        assert not os.path.exists(d)


# ---------------------------------------------------------------- record: summary, -e errors

def last_line(err):
    return err.rstrip("\n").splitlines()[-1]


def test_record_summary_kernel_only_and_mixed():
    """Kernel events only: no user stream table, and the last line counts
    the kernel's events; with user events too, both tables and one line
    for both."""
    with kernlib.guard():
        base = tklib.tmpdir()
        d = os.path.join(base, "k")
        p = tklib.record(d, [KSYS, "-n", "100"], "-e", "syscalls:sys_enter_getppid", "-F",
                         timeout=60)
        assert p.returncode == 0, p.stderr
        n = kernel_entries(d)
        assert n >= 100
        assert "STREAM" not in p.stderr and "streams" not in p.stderr, p.stderr
        assert "KERNEL CPU" in p.stderr
        assert last_line(p.stderr) == "tracekit: %d kernel events recorded in '%s'" % (n, d)
        d2 = os.path.join(base, "m")
        p = tklib.record(d2, [KSYS, "-n", "100"], "-e", "kb:*", "-e",
                         "syscalls:sys_enter_getppid", "-F", timeout=60)
        assert p.returncode == 0, p.stderr
        rows, total = tklib.summary(p.stderr)
        assert total["events"] == 2 and len(rows) == 1, p.stderr  # kb:begin, kb:end
        assert "KERNEL CPU" in p.stderr
        assert last_line(p.stderr) == \
            "tracekit: 1 stream of 1 process and %d kernel events recorded in '%s'" % (
                kernel_entries(d2), d2)


def test_record_unknown_kernel_event_of_known_system():
    """An unknown event of a kernel system is a kernel error, with the
    closest kernel name, and --force does not make it a user event; a
    system that is neither the kernel's nor the program's: one line."""
    with kernlib.guard() as fs:
        d = os.path.join(tklib.tmpdir(), "t")
        want = ("tracekit: unknown kernel event 'sched:sched_swich' "
                "(did you mean 'sched:sched_switch'?)")
        one_error(tk("record", "-o", d, "-e", "sched:sched_swich", "--", KSYS), rc=1,
                  exact=want)
        one_error(tk("record", "-o", d, "--force", "-e", "sched:sched_swich", "--", KSYS),
                  rc=1, exact=want)
        # a glob system part, and a program that defines no events
        one_error(tk("record", "-o", d, "-e", "sch*:nosuch", "--", "true"), rc=1,
                  exact="tracekit: unknown kernel event 'sch*:nosuch'")
        one_error(tk("record", "-o", d, "-e", "nosuchsys:ev", "--", KSYS), rc=1,
                  exact="tracekit: unknown event 'nosuchsys:ev': 'nosuchsys' is neither a "
                        "kernel event system nor a provider of '%s' (--force records anyway)"
                  % KSYS)
        one_error(tk("record", "-o", d, "-e", "nosuchsys", "--", "true"), rc=1,
                  exact="tracekit: unknown event 'nosuchsys': 'nosuchsys' is neither a "
                        "kernel event system nor a provider of 'true'")
        assert not os.path.exists(d)
        assert not [i for i in instances(fs) if i.startswith("tracekit")]
        # --force keeps what may be a user provider loaded later
        p = tk("record", "-o", d, "-q", "--force", "-e", "nosuchsys:ev", "--", KSYS)
        assert p.returncode == 0 and not p.stderr, p.stderr
        assert manifest(d)[0] is None  # nothing asked of the kernel


# ---------------------------------------------------------------- record --overwrite

CLOSE_BASE = 1000000
# Pinned to one CPU, closes N descriptors that are not open (EBADF):
# fd CLOSE_BASE .. CLOSE_BASE+N-1, in order.
CLOSES = r"""
import os, sys
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
for i in range(int(sys.argv[1])):
    try:
        os.close(%d + i)
    except OSError:
        pass
""" % CLOSE_BASE


def test_record_overwrite_keeps_newest():
    """--overwrite with kernel events and a small buffer: the kernel's
    buffer keeps the newest events, flushed at the end: the file holds
    the last E of the N calls, in order, the program's last call last,
    and the kernel's overrun count is exactly the N - E overwritten."""
    n = 6000
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        p = tklib.record(d, [sys.executable, "-c", CLOSES, str(n)], "--kernel-buffer", "8",
                         "--overwrite",
                         "-F", "-e", "syscalls:sys_enter_close", "-f", "fd >= %d" % CLOSE_BASE,
                         timeout=60)
    assert p.returncode == 0, p.stderr
    k, kcpu = manifest(d)
    entries = sum(int(c["entries"]) for c in kcpu)
    overrun = sum(int(c["overrun"]) for c in kcpu)
    assert 0 < entries < n and entries + overrun == n, (entries, overrun)
    assert sum(int(c["dropped"]) for c in kcpu) == 0
    assert [int(c["entries"]) > 0 for c in kcpu].count(True) == 1, kcpu
    text = tklib.run([tklib.TRACEKIT, "report", d, "--no-header", "--ts", "raw"]).stdout
    lines = text.splitlines()
    # the kernel marks where it overwrote: first, with the count if it fit,
    # in trace-cmd's words
    cpu = [c["cpu"] for c in kcpu if int(c["entries"])][0]
    m = re.fullmatch(r"CPU:%s \[(?:(\d+) )?EVENTS DROPPED\]" % cpu, lines[0])
    assert m and m.group(1) in (None, str(overrun)), lines[0]
    evs = kernlib.parse_report("\n".join(lines[1:]))
    assert all(e["name"] == "sys_enter_close" for e in evs)
    fds = [int(e["text"].split("fd:")[1].split()[0], 16) for e in evs]
    assert fds == list(range(CLOSE_BASE + n - entries, CLOSE_BASE + n)), \
        "kept fds %s..%s (%d), want the last %d" % (hex(fds[0]), hex(fds[-1]), len(fds), entries)
    assert last_line(p.stderr) == \
        "tracekit: %d kernel events (%d lost) recorded in '%s'" % (entries, overrun, d)


def test_record_overwrite_cut_at_kernel_cpu():
    """--overwrite with a small kernel buffer and a large user one: the
    kernel CPUs keep the last few of 20000 getppid() calls, the user
    stream everything.  report starts where the latest overwritten CPU
    begins (kb:begin, before it, is left out; kb:end is there), says so
    in the header; --no-cut shows kb:begin."""
    n = 20000
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        tklib.record(d, [KSYS, "-n", str(n)], "--overwrite", "--kernel-buffer", "8",
                     "-e", "kb:*", "-e", "syscalls:sys_enter_getppid", "-F", timeout=60)
    _, kcpu = manifest(d)
    overwritten = {int(c["cpu"]) for c in kcpu if int(c["overrun"])}
    assert overwritten, kcpu

    def lines(*opts):
        text = tklib.run([tklib.TRACEKIT, "report", d, "--no-header", "--ts", "raw"] +
                         list(opts)).stdout
        return [l for l in text.splitlines() if "EVENTS DROPPED" not in l]

    kept = kernlib.parse_report("\n".join(lines("--no-cut")))
    firsts = {}
    for e in kept:
        if e["lat"] is not None:
            firsts.setdefault(e["cpu"], e["ts"])
    cut_cpu = max(overwritten, key=lambda c: firsts[c])
    cut = firsts[cut_cpu]
    shown = kernlib.parse_report("\n".join(lines()))
    assert shown == [e for e in kept if e["ts"] >= cut]
    names = [e["event"] for e in shown]
    assert "kb:begin" not in names and names[-1] == "kb:end", names[:3] + names[-3:]
    assert [e["event"] for e in kept if e["event"].startswith("kb:")] == ["kb:begin", "kb:end"]
    head = [l for l in tklib.run([tklib.TRACEKIT, "report", d, "--ts", "raw"]).stdout
            .splitlines() if l.startswith("# overwrite mode:")]
    assert head == ["# overwrite mode: every stream is complete from %d, where kernel cpu %d "
                    "begins; older events are left out (--no-cut shows them)" % (cut, cut_cpu)]


def test_record_user_and_kernel_buffer_sizes():
    """-b sizes the user events' per-thread buffers only; --kernel-buffer
    the kernel's per-CPU buffers (the kernel's default without it); -b
    where every -e is a kernel event is an error that names the option."""
    with kernlib.guard() as fs:
        sizes = {}
        for opts in ([], ["-b", "64"], ["-b", "64", "--kernel-buffer", "32"],
                     ["--user-buffer", "64", "--kernel-buffer", "1024"]):
            d = os.path.join(tklib.tmpdir(), "t")
            p = tklib.record(d, [KSYS, "-n", "5"], "-e", "kb:*", "-e",
                             "syscalls:sys_enter_getppid", "-F", *opts)
            k, _ = manifest(d)
            rows, total = tklib.summary(p.stderr)
            sizes[" ".join(opts)] = (int(k["buffer_kb"]), total["events"])
            # what the kernel made of --kernel-buffer is said when it differs
            made = int(k["buffer_kb"])
            asked = int(opts[-1]) if "--kernel-buffer" in opts else made
            note = ["tracekit: --kernel-buffer %d: the kernel made %d KiB per CPU (it rounds "
                    "up to whole pages of events)" % (asked, made)]
            said = [l for l in p.stderr.splitlines() if l.startswith("tracekit: --kernel-buffer")]
            assert said == (note if made != asked else []), (opts, made, p.stderr)
        # the kernel rounds up to whole pages, and adds its own
        default_kb = sizes[""][0]
        assert default_kb > 128 and sizes["-b 64"] == (default_kb, 2), sizes
        for opts, kb in (("-b 64 --kernel-buffer 32", 32),
                         ("--user-buffer 64 --kernel-buffer 1024", 1024)):
            # pages of 4080 bytes of events: 32 KiB is 9 pages, 35 KiB
            assert kb < sizes[opts][0] < kb + 8 and sizes[opts][1] == 2, sizes
        d = os.path.join(tklib.tmpdir(), "t")
        test_cli.one_error(
            tklib.tracekit("record", "-o", d, "-b", "64", "-e", "syscalls:sys_enter_getppid",
                           "--", KSYS, "-n", "5", check=False),
            exact="tracekit: -b sizes the per-thread buffers of user events, and every -e is "
                  "a kernel event: the kernel's per-CPU buffer is --kernel-buffer KB")
        test_cli.one_error(
            tklib.tracekit("record", "-o", d, "--kernel-buffer", "2", "--", KSYS, check=False),
            rc=2, exact="tracekit: --kernel-buffer '2': buffer size must be a number of KiB, "
                        "at least 4")
        assert not os.path.exists(d)


# ---------------------------------------------------------------- record -P: user and kernel

def test_record_P_user_and_kernel_events():
    """-P PID of an instrumented process with a user and a kernel event:
    both, of that process only, interleaved as it made them (each tick,
    then its getppid())."""
    with kernlib.guard() as fs:
        tmp = tklib.tmpdir()
        ready = os.path.join(tmp, "ready")
        prog = subprocess.Popen([KSYS, "-f", "-p", "2000", "-r", ready],
                                stdout=subprocess.PIPE, text=True)
        d = os.path.join(tmp, "t")
        rec = None
        try:
            end = time.time() + 10
            while not os.path.exists(ready) or not open(ready).read().endswith("\n"):
                assert time.time() < end, "prog-ksys did not get ready"
                time.sleep(0.01)
            _, pid, tid = open(ready).read().split()
            pid, tid = int(pid), int(tid)
            head = dict(prog.stdout.readline().split(None, 1) for _ in range(4))
            tasks = {int(t) for t in head["tasks"].split()}
            assert int(head["pid"]) == pid and tid in tasks, head
            rec = subprocess.Popen([tklib.TRACEKIT, "record", "-o", d, "-P", str(pid), "-e",
                                    "kb:tick", "-e", "syscalls:sys_enter_getppid"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_tracing(rec, os.path.join(fs, "instances", "tracekit-%d" % rec.pid))
            time.sleep(0.3)
            rec.send_signal(2)
            out, err = rec.communicate(timeout=30)
        finally:
            prog.kill()
            prog.wait()
            if rec and rec.poll() is None:
                rec.kill()
                rec.communicate()
    assert rec.returncode == 0, err
    # docs/format.md: with -P every thread of the process, comma separated
    assert sorted(int(t) for t in manifest(d)[0]["pid_filter"].split(",")) == sorted(tasks)
    evs = kernlib.report(d)
    assert {e["tid"] for e in evs} <= tasks, ({e["tid"] for e in evs}, tasks)
    assert all(e["comm"] == "prog-ksys" for e in evs), {e["comm"] for e in evs}
    worker = [e for e in evs if e["tid"] == tid]
    ticks = [i for i, e in enumerate(worker) if e["event"] == "kb:tick"]
    assert len(ticks) >= 20, "%d ticks in 0.3 s" % len(ticks)
    seqs = [int(worker[i]["text"].split("=")[1]) for i in ticks]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    # between one tick and the next: exactly its getppid()
    for a, b in zip(ticks, ticks[1:]):
        between = [e["event"] for e in worker[a + 1:b]]
        assert between == ["syscalls:sys_enter_getppid"], (worker[a], between)
    assert last_line(err).startswith("tracekit: 1 stream of 1 process and ")


# ---------------------------------------------------------------- start's clock

def test_start_clock_default_and_chosen():
    """start uses record's clock (the user events' one) unless -C says."""
    with kernlib.guard() as fs:
        clock = os.path.join(fs, "instances", "tracekit", "trace_clock")
        try:
            assert tk("start", "-e", "sched:sched_switch").returncode == 0
            want = "[x86-tsc]" if platform.machine() in ("x86_64", "i686") else "[mono]"
            assert want in open(clock).read().split()
            assert tk("reset").returncode == 0
            assert tk("start", "-C", "mono", "-e", "sched:sched_switch").returncode == 0
            assert "[mono]" in open(clock).read().split()
            assert tk("reset").returncode == 0
        finally:
            tk("reset", "-B", "tracekit")
