# SPDX-License-Identifier: MIT
"""Event counts, end to end: nothing committed is lost, what is lost is
counted exactly (discard and overwrite), a killed program or recorder does
not cost data or time.

All tests run prog-basic (tests/progs/basic.c): T threads each fire N
test:seq events (thread, seq, msg = English word of seq % 10) between the
main thread's test:phase "start" and "end".
"""
import ctypes
import os
import re
import shutil
import signal
import struct
import subprocess
import time

import tklib

MSGS = ("zero", "one", "two", "three", "four", "five", "six", "seven",
        "eight", "nine")

HEADER_STREAM_RE = re.compile(r"^# stream (.+)-(\d+): (\d+) events, (\d+) lost\b")


# --------------------------------------------------------------- helpers

def _iter_report(outdir, *opts):
    """Yield the raw lines of `tracekit report OUTDIR --no-header OPTS`,
    streamed (no list of millions of lines); raises if report fails."""
    p = subprocess.Popen([tklib.TRACEKIT, "report", outdir, "--no-header"] + list(opts),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         bufsize=1 << 20)
    try:
        for line in p.stdout:
            yield line
        err = p.stderr.read()
        rc = p.wait(timeout=120)
        assert rc == 0, "tracekit report %s exited %d: %s" % (outdir, rc, err[-2000:])
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()


def scan_seq(outdir, contiguous_from=None):
    """Walk the report of OUTDIR once and check every test:seq event (all
    that were kept: --no-cut in overwrite mode).

    Returns (streams, phases, nlines): streams maps tid -> dict(thread,
    count, first, last, dropped: the sum of its loss lines); phases lists
    the test:phase names in report order; nlines counts all event lines.  Checked on the way: each line
    parses, msg == MSGS[seq % 10], a tid carries one thread value, and seq
    strictly increases per tid in report order; with contiguous_from=S,
    each tid's first seq is S and every next one is exactly previous + 1."""
    streams = {}
    phases = []
    dropped = {}
    nlines = 0
    for line in _iter_report(outdir, "--no-cut"):
        m = re.match(r"^.+-(\d+) \[(\d+) EVENTS DROPPED\]$", line)
        if m:
            dropped[m.group(1)] = dropped.get(m.group(1), 0) + int(m.group(2))
            continue
        nlines += 1
        parts = line.split()
        # COMM-TID [CPU] SEC.USEC: provider:event: fields
        assert len(parts) >= 4, "unparsable report line: %r" % line
        ev = parts[3]
        name_tid = parts[0]
        tid = name_tid[name_tid.rfind("-") + 1:]
        if ev == "test:seq:":
            assert len(parts) == 7 and parts[4].startswith("thread=") and \
                parts[5].startswith("seq=") and parts[6].startswith("msg="), \
                "unparsable test:seq line: %r" % line
            thread = parts[4][7:]
            seq = int(parts[5][4:])
            msg = parts[6][4:]
            if msg != MSGS[seq % 10]:
                raise AssertionError("msg %r for seq %d (want %r): %r"
                                     % (msg, seq, MSGS[seq % 10], line))
            st = streams.get(tid)
            if st is None:
                if contiguous_from is not None and seq != contiguous_from:
                    raise AssertionError("tid %s: first seq is %d, want %d: %r"
                                         % (tid, seq, contiguous_from, line))
                streams[tid] = st = dict(thread=thread, count=1, first=seq, last=seq)
                continue
            if thread != st["thread"]:
                raise AssertionError("tid %s carries thread=%s and thread=%s: %r"
                                     % (tid, st["thread"], thread, line))
            last = st["last"]
            if contiguous_from is not None:
                if seq != last + 1:
                    raise AssertionError("tid %s (thread %s): seq %d follows %d "
                                         "(want %d): %r" % (tid, thread, seq, last,
                                                            last + 1, line))
            elif seq <= last:
                raise AssertionError("tid %s (thread %s): seq %d follows %d "
                                     "(not increasing): %r" % (tid, thread, seq, last, line))
            st["last"] = seq
            st["count"] += 1
        elif ev == "test:phase:":
            phases.append(parts[4] if len(parts) > 4 else "")
        else:
            raise AssertionError("unexpected event in report: %r" % line)
    for t, st in streams.items():
        st["dropped"] = dropped.pop(t, 0)
    assert not dropped, "loss lines of streams with no test:seq: %r" % dropped
    out = {int(t): st for t, st in streams.items()}
    return out, phases, nlines


def bt_count(outdir, what="test:seq"):
    """Number of babeltrace2 output lines of OUTDIR/user containing WHAT;
    babeltrace2 must exit 0 with nothing on stderr."""
    p = subprocess.Popen([tklib.babeltrace2(), os.path.join(outdir, "user")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         bufsize=1 << 20)
    n = 0
    try:
        for line in p.stdout:
            if what in line:
                n += 1
        err = p.stderr.read()
        rc = p.wait(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()
    assert rc == 0, "babeltrace2 %s/user exited %d: %s" % (outdir, rc, err[-2000:])
    assert "ERROR" not in err, "babeltrace2 complained: %s" % err[-2000:]
    return n


def bt_discarded(outdir):
    """Sum of the counts in babeltrace2's "Tracer discarded N events"
    warnings on OUTDIR/user (it must exit 0, and never say it "may have"
    discarded events, which gives no count)."""
    p = subprocess.run([tklib.babeltrace2(), os.path.join(outdir, "user")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=300)
    assert p.returncode == 0, "babeltrace2 exited %d: %s" % (p.returncode, p.stderr[-2000:])
    assert "may have discarded" not in p.stderr, \
        "babeltrace2 could not count a loss: %s" % p.stderr[-2000:]
    return sum(int(n) for n in re.findall(r"Tracer discarded (\d+) events", p.stderr))


def tracedat_dropped(outdir):
    """Sum of trace-cmd report's "[N EVENTS DROPPED]" marks on OUTDIR
    converted to trace.dat; None (a reason printed) without trace-cmd."""
    tc = shutil.which("trace-cmd")
    if not tc:
        print("trace.dat not checked: trace-cmd is not installed "
              "(scripts/install-deps installs it)")
        return None
    dat = os.path.join(tklib.tmpdir(), "trace.dat")
    p = tklib.tracekit("convert", "--to", "tracedat", outdir, "-o", dat, timeout=300)
    assert p.stderr == "", "convert said: %s" % p.stderr
    p = tklib.run([tc, "report", dat], timeout=300)
    return sum(int(n) for n in re.findall(r"\[(\d+) EVENTS DROPPED\]", p.stdout))


def check_losses_everywhere(out, stderr, events="test:phase"):
    """The trace OUT's losses, stream by stream and in all, are the
    summary's (record's STDERR): in report's header, babeltrace2's
    warnings and trace-cmd's marks on the converted trace.  Returns the
    summary rows by tid and the total row."""
    rows, total = tklib.summary(stderr)
    assert total is not None, "no total row in summary:\n%s" % stderr
    byrow = rows_by_tid(rows)
    hdr = header_streams(out, events)
    assert {tid: (r["events"], r["lost"]) for tid, r in byrow.items()} == hdr, \
        "report header (tid: events, lost) %r, summary:\n%s" % (hdr, stderr)
    assert sum(lost for _, lost in hdr.values()) == total["lost"]
    nbt = bt_discarded(out)
    assert nbt == total["lost"], "babeltrace2 counts %d discarded, summary %d lost:\n%s" % (
        nbt, total["lost"], stderr)
    dropped = tracedat_dropped(out)
    assert dropped in (None, total["lost"]), \
        "trace-cmd counts %d dropped, summary %d lost:\n%s" % (dropped, total["lost"], stderr)
    return byrow, total


def header_streams(outdir, events="test:phase"):
    """'# stream COMM-TID: N events, M lost' lines of report's header (of
    the events EVENTS): tid -> (events, lost)."""
    p = tklib.tracekit("report", outdir, "--events", events, timeout=120)
    out = {}
    for line in p.stdout.splitlines():
        if not line.startswith("#"):
            break
        m = HEADER_STREAM_RE.match(line)
        if m:
            tid = int(m.group(2))
            assert tid not in out, "stream %d listed twice in header:\n%s" % (tid, p.stdout)
            out[tid] = (int(m.group(3)), int(m.group(4)))
    assert out, "no '# stream' lines in report header:\n%s" % p.stdout[:3000]
    return out


def rows_by_tid(rows):
    out = {}
    for r in rows:
        assert r["tid"] not in out, "tid %d has two summary rows: %r" % (r["tid"], rows)
        out[r["tid"]] = r
    return out


def read_pid(ready_path, timeout=10):
    text = tklib.wait_for_file(ready_path, timeout)
    # the file may be caught between creation and write
    end = time.time() + timeout
    while not text.endswith("\n") and time.time() < end:
        time.sleep(0.005)
        text = open(ready_path).read()
    parts = text.split()
    assert len(parts) == 2 and parts[0] == "ready", "bad ready file: %r" % text
    return int(parts[1])


def pid_alive(pid):
    """True while PID exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return False
    state = stat[stat.rfind(")") + 2:].split()[0]
    return state not in ("Z", "X")


def kill_pid(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def stop_popen(p):
    if p is not None and p.poll() is None:
        tklib.kill_quietly(p)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def _record_starved(out, args, *opts, timeout=60):
    """tracekit record -o OUT OPTS -- ARGS -r READY -w, with the recorder at
    nice 19 and both it and the program pinned to one CPU: the program's
    threads start, fire and exit while the recorder hardly runs (a busy
    machine).  Returns (returncode, stdout, stderr) of record."""
    ready = out + ".ready"
    rec = subprocess.Popen([tklib.TRACEKIT, "record", "-o", out] + list(opts) + ["--"]
                           + args + ["-r", ready, "-w"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = None
    try:
        pid = read_pid(ready)
        cpu = {min(os.sched_getaffinity(0))}
        os.setpriority(os.PRIO_PROCESS, rec.pid, 19)
        os.sched_setaffinity(rec.pid, cpu)
        os.sched_setaffinity(pid, cpu)
        os.kill(pid, signal.SIGUSR1)
        stdout, stderr = rec.communicate(timeout=timeout)
        pid = None
    finally:
        if pid is not None:
            kill_pid(pid)
        stop_popen(rec)
    return rec.returncode, stdout, stderr


# ----------------------------------------------------------------- tests

def test_four_threads_million():
    """4 threads x 1,000,000 events as fast as they can (140 MB in tens of
    ms, faster than memory can be made for it), writers waiting for room
    (--block): every event is there, in order, with the right fields;
    babeltrace2 sees the same number."""
    n, t = 1000000, 4
    out = os.path.join(tklib.tmpdir(), "trace")
    p = tklib.record(out, [tklib.prog("basic"), "-n", str(n), "-t", str(t)],
                     "-b", "65536", "--block", timeout=120)
    rows, total = tklib.summary(p.stderr)
    assert total is not None, "no total row in summary:\n%s" % p.stderr
    assert total["events"] == n * t + 2, "summary total events %d, want %d:\n%s" % (
        total["events"], n * t + 2, p.stderr)
    assert total["lost"] == 0, "summary total lost %d, want 0:\n%s" % (total["lost"], p.stderr)
    for line in ("emitted %d %d" % (i, n) for i in range(t)):
        assert line in p.stdout.splitlines(), "program did not print %r: %r" % (line, p.stdout)

    streams, phases, nlines = scan_seq(out, contiguous_from=0)
    assert phases == ["start", "end"], "test:phase events in report: %r" % phases
    assert len(streams) == t, "test:seq in %d streams, want %d: %r" % (
        len(streams), t, streams)
    threads = sorted(int(st["thread"]) for st in streams.values())
    assert threads == list(range(t)), "thread values %r, want 0..%d" % (threads, t - 1)
    byrow = rows_by_tid(rows)
    for tid, st in streams.items():
        assert st["count"] == n and st["first"] == 0 and st["last"] == n - 1, \
            "tid %d (thread %s): %d events seq %d..%d, want %d events 0..%d" % (
                tid, st["thread"], st["count"], st["first"], st["last"], n, n - 1)
        assert tid in byrow, "tid %d of the report has no summary row:\n%s" % (tid, p.stderr)
        assert byrow[tid]["events"] == n and byrow[tid]["lost"] == 0, \
            "summary row of tid %d: %r" % (tid, byrow[tid])
    assert nlines == n * t + 2, "report printed %d lines, want %d" % (nlines, n * t + 2)

    nbt = bt_count(out)
    assert nbt == n * t, "babeltrace2 printed %d test:seq lines, want %d" % (nbt, n * t)


def _record_small(overwrite, starved):
    """prog-basic -n 200000 -t 2 with 8 KiB per thread; starved: with the
    recorder starved of CPU (see _record_starved)."""
    n, t = 200000, 2
    out = os.path.join(tklib.tmpdir(), "trace")
    opts = ["-b", "8"] + (["--overwrite"] if overwrite else [])
    args = [tklib.prog("basic"), "-n", str(n), "-t", str(t)]
    if starved:
        rc, stdout, stderr = _record_starved(out, args, *opts)
        assert rc == 0, "record exited %d:\n%s" % (rc, stderr)
    else:
        stderr = tklib.record(out, args, *opts, timeout=120).stderr
    try:
        return _check_small(out, n, t, stderr)
    except AssertionError as e:
        raise AssertionError("%s%s: %s" % ("overwrite" if overwrite else "discard",
                                           ", starved recorder" if starved else "",
                                           e)) from None


def _check_small(out, n, t, stderr):
    rows, total = tklib.summary(stderr)
    assert total is not None, "no total row in summary:\n%s" % stderr
    byrow = rows_by_tid(rows)
    streams, phases, nlines = scan_seq(out)
    assert phases == ["start", "end"], "test:phase events in report: %r" % phases
    assert len(streams) == t, "test:seq in %d streams, want %d: %r" % (
        len(streams), t, streams)
    assert sorted(int(st["thread"]) for st in streams.values()) == list(range(t)), \
        "thread values: %r" % streams
    for tid, st in streams.items():
        assert tid in byrow, "tid %d of the report has no summary row:\n%s" % (tid, stderr)
        r = byrow[tid]
        assert r["events"] + r["lost"] == n, \
            "tid %d (thread %s): %d recorded + %d lost = %d, want %d\n%s" % (
                tid, st["thread"], r["events"], r["lost"], r["events"] + r["lost"], n,
                stderr)
        assert r["lost"] > 0, "tid %d: nothing lost with an 8 KiB buffer: %r" % (tid, r)
        assert st["dropped"] == r["lost"], \
            "tid %d: report's loss lines sum to %d, summary says %d lost" % (
                tid, st["dropped"], r["lost"])
        assert st["count"] == r["events"], \
            "tid %d (thread %s): report has %d test:seq lines, summary says %d" % (
                tid, st["thread"], st["count"], r["events"])
    assert total["events"] == sum(r["events"] for r in rows) and \
        total["lost"] == sum(r["lost"] for r in rows), \
        "total row is not the sum of the rows:\n%s" % stderr
    assert nlines == total["events"], "report printed %d lines, summary total is %d" % (
        nlines, total["events"])
    hdr = header_streams(out)
    for tid in streams:
        r = byrow[tid]
        assert hdr.get(tid) == (r["events"], r["lost"]), \
            "report header for tid %d says %r (events, lost), summary says %r" % (
                tid, hdr.get(tid), (r["events"], r["lost"]))
    return out, n, streams, byrow


def test_discard_exact():
    """8 KiB per thread, discard mode: recorded + lost is exactly what each
    thread fired, what is recorded is in order, and report agrees; also
    with the recorder starved of CPU."""
    for starved in (False, True):
        _record_small(overwrite=False, starved=starved)


def test_overwrite_newest():
    """8 KiB per thread, overwrite mode: recorded + lost is exact, and what
    is kept is the newest events, contiguous up to the last one; also with
    the recorder starved of CPU."""
    for starved in (False, True):
        mode = "starved recorder" if starved else "plain"
        out, n, streams, byrow = _record_small(overwrite=True, starved=starved)
        for tid, st in streams.items():
            cnt = byrow[tid]["events"]
            # strictly increasing + first/last span == count => contiguous
            assert st["last"] == n - 1 and st["first"] == n - cnt and \
                st["last"] - st["first"] + 1 == st["count"], \
                "%s: tid %d (thread %s): kept seq %d..%d (%d events), want the " \
                "newest %d..%d" % (mode, tid, st["thread"], st["first"], st["last"],
                                   st["count"], n - cnt, n - 1)
        total = sum(st["count"] for st in streams.values())
        nbt = bt_count(out)
        assert nbt == total, "%s: babeltrace2 printed %d test:seq lines, report %d" % (
            mode, nbt, total)


def test_program_sigkill():
    """SIGKILL the traced program mid-run: everything it committed is in the
    trace, nothing lost, record exits 0 and says the program was killed."""
    d = tklib.tmpdir()
    out, cnt, ready = (os.path.join(d, x) for x in ("trace", "counter", "ready"))
    rec = subprocess.Popen([tklib.TRACEKIT, "record", "-o", out, "--", tklib.prog("basic"),
                            "-f", "-p", "20000", "-c", cnt, "-r", ready],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = None
    try:
        pid = read_pid(ready)
        time.sleep(0.5)
        assert rec.poll() is None, "record ended early: %r" % (rec.communicate(),)
        os.kill(pid, signal.SIGKILL)
        stdout, stderr = rec.communicate(timeout=30)
    finally:
        if pid is not None and rec.poll() is None:
            kill_pid(pid)
        stop_popen(rec)
    with open(cnt, "rb") as f:
        k = struct.unpack("=Q", f.read(8))[0]
    assert k > 1000, "thread 0 committed only %d events in 0.5 s" % k
    assert rec.returncode == 128 + 9, "record exited %d\n%s" % (rec.returncode, stderr)
    assert re.search(r"killed by signal 9\b", stderr), \
        "record does not say the program was killed by signal 9:\n%s" % stderr
    rows, total = tklib.summary(stderr)
    assert total is not None and total["lost"] == 0, "events lost:\n%s" % stderr

    streams, phases, nlines = scan_seq(out, contiguous_from=0)
    assert phases == ["start"], "test:phase events in report: %r" % phases
    assert len(streams) == 1, "test:seq in %d streams: %r" % (len(streams), streams)
    (tid, st), = streams.items()
    assert st["thread"] == "0", "thread value %s" % st["thread"]
    assert st["count"] in (k, k + 1), \
        "thread 0: trace holds seq 0..%d (%d events), the program had committed %d " \
        "(want seq 0..%d, or 0..%d)" % (st["last"], st["count"], k, k - 1, k)
    byrow = rows_by_tid(rows)
    assert tid in byrow and byrow[tid]["events"] == st["count"] and byrow[tid]["lost"] == 0, \
        "summary row of tid %d: %r, report has %d events" % (tid, byrow.get(tid), st["count"])
    hdr = header_streams(out)
    assert hdr.get(tid) == (st["count"], 0), "report header for tid %d: %r" % (tid, hdr.get(tid))
    nbt = bt_count(out)
    assert nbt == st["count"], "babeltrace2 printed %d test:seq lines, report %d" % (
        nbt, st["count"])


PR_SET_CHILD_SUBREAPER = 36


def _set_subreaper(on):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def test_recorder_sigkill():
    """SIGKILL the recorder while the program fires: the program neither
    dies nor blocks; it finishes normally in about its untraced time.

    The program is paced (-p) so that its run time is set by the clock, not
    by the per-event cost: the untraced and traced runs are then comparable,
    and the recorder is killed while the program is still firing."""
    n, pace = 3000000, 400      # 1.2 s either way
    args = [tklib.prog("basic"), "-n", str(n), "-t", "1", "-p", str(pace)]
    d = tklib.tmpdir()
    start = time.monotonic()
    p = tklib.run(args, timeout=60)
    untraced = time.monotonic() - start
    assert "emitted 0 %d" % n in p.stdout.splitlines(), "untraced run: %r" % p.stdout

    out, ready, pout, perr = (os.path.join(d, x)
                              for x in ("trace", "ready", "prog.out", "prog.err"))
    # become the subreaper: the program, orphaned when the recorder dies, is
    # then our child and we can wait for it and read its exit status
    reaper = _set_subreaper(True)
    rec = pid = None
    status = None
    try:
        # files, not pipes: nobody reads a pipe once the recorder is dead
        with open(pout, "w") as fout, open(perr, "w") as ferr:
            rec = subprocess.Popen([tklib.TRACEKIT, "record", "-o", out, "--"]
                                   + args + ["-r", ready], stdout=fout, stderr=ferr)
        pid = read_pid(ready)
        t0 = time.monotonic()
        time.sleep(0.3)
        assert pid_alive(pid), "program already finished %.2f s in; cannot test" % (
            time.monotonic() - t0)
        rec.kill()
        rec.wait(timeout=10)
        killed_at = time.monotonic() - t0
        end = t0 + 60
        while time.monotonic() < end:
            try:
                wpid, st = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:   # not reparented to us: watch /proc
                wpid, st = 0, None
                if not pid_alive(pid):
                    break
            if wpid == pid:
                status = st
                break
            time.sleep(0.002)
        traced = time.monotonic() - t0
        assert time.monotonic() < end, "program still running 60 s after start"
        pid_done = pid
        pid = None
    finally:
        if pid is not None:
            kill_pid(pid)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        stop_popen(rec)
        if reaper:
            _set_subreaper(False)
    if status is not None:
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, \
            "program %d ended with wait status %#x (%s)" % (
                pid_done, status,
                "signal %d" % os.WTERMSIG(status) if os.WIFSIGNALED(status)
                else "exit %d" % os.WEXITSTATUS(status))
    with open(pout) as f:
        text = f.read()
    with open(perr) as f:
        errs = f.read()
    assert "emitted 0 %d" % n in text.splitlines(), \
        "program did not finish normally (recorder killed %.2f s in); stdout %r, " \
        "stderr %r" % (killed_at, text, errs[-2000:])
    limit = 1.5 * untraced + 0.3
    assert traced <= limit, \
        "program took %.2f s with its recorder killed %.2f s in, untraced %.2f s " \
        "(limit %.2f s)" % (traced, killed_at, untraced, limit)


INCOMPLETE = ("tracekit: warning: '%s' is incomplete: its recorder stopped before "
              "finishing it (killed?); reading what it wrote\n")


def test_recorder_sigkill_trace_readable():
    """SIGKILL the recorder 1 s into a recording: the trace it leaves
    (manifest and descriptors written at the start, updated as streams
    came) reads: report exits 0, says the trace is incomplete (stderr
    and header), and holds thread 0's seq from 0 in order, K > 0 and no
    more than the program had committed.  Seqs missing in between were
    lost for want of space (-b 64 on a busy machine) and are counted in
    the stream's header, from the packets if the manifest's last update
    came before the loss."""
    d = tklib.tmpdir()
    out, cnt, ready = (os.path.join(d, x) for x in ("trace", "counter", "ready"))
    rec = subprocess.Popen([tklib.TRACEKIT, "record", "-o", out, "-b", "64", "--",
                            tklib.prog("basic"), "-f", "-p", "20000", "-c", cnt, "-r", ready],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pid = None
    try:
        pid = read_pid(ready)
        time.sleep(1)
        rec.kill()
        rec.wait(timeout=10)
        time.sleep(0.1)
        committed = struct.unpack("=Q", open(cnt, "rb").read(8))[0]
    finally:
        if pid is not None:
            kill_pid(pid)
        stop_popen(rec)
    assert open(os.path.join(out, "tracekit.manifest")).readline() == \
        "tracekit version=1 state=recording\n"
    p = tklib.tracekit("report", out, check=False)
    assert p.returncode == 0 and p.stderr == INCOMPLETE % out, (p.returncode, p.stderr)
    assert p.stdout.splitlines()[1] == (
        "# incomplete: the recorder stopped before finishing it; what it wrote until "
        "then is here, with the counts of its last update")
    seqs, tids = {}, {}
    for line in p.stdout.splitlines():
        m = re.search(r"-(\d+) +\[\d+\] .* test:seq: thread=(\d+) seq=(\d+) msg=(\w+)$", line)
        if m:
            assert m.group(4) == MSGS[int(m.group(3)) % 10], line
            seqs.setdefault(int(m.group(2)), []).append(int(m.group(3)))
            tids[int(m.group(2))] = m.group(1)
    got = seqs.get(0, [])
    assert 0 < len(got) <= committed and got[0] == 0, (len(got), committed)
    assert all(a < b for a, b in zip(got, got[1:])), "seqs out of order"
    lost = re.search(r"^# stream prog-basic-%s: \d+ events, (\d+) lost" % tids[0],
                     p.stdout, re.M)
    assert got[-1] + 1 - len(got) <= int(lost.group(1)), (got[-1] + 1 - len(got), lost)
    # recover: the stream files cut after their last whole packet, the
    # counts those of what is there; babeltrace2 reads it then (it
    # stopped at the zeros allocated ahead of the writes), event for
    # event as report, which reads it as before, now without a warning
    before = report_lines(p.stdout)
    streams = re.findall(r"^# stream \S+: (\d+) events, (\d+) lost", p.stdout, re.M)
    dry = tklib.tracekit("recover", "-n", out, check=True)
    assert open(os.path.join(out, "tracekit.manifest")).readline() == \
        "tracekit version=1 state=recording\n"
    r = tklib.tracekit("recover", out, check=False)
    assert (r.returncode, r.stderr) == (0, ""), r
    assert dry.stdout == r.stdout.replace("recovered", "would recover", 1).replace(
        "written cut", "written to cut"), (dry.stdout, r.stdout)
    m = re.fullmatch(r"recovered '%s': (\d+) user events in (\d+) streams, (\d+) lost; "
                     r"(\d+) bytes never written cut\n" % re.escape(out), r.stdout)
    assert m and int(m.group(1)) == len(before) and int(m.group(2)) == len(streams), \
        (r.stdout, len(before), len(streams))
    assert int(m.group(3)) == sum(int(x[1]) for x in streams), (r.stdout, streams)
    assert open(os.path.join(out, "tracekit.manifest")).readline() == \
        "tracekit version=1 state=recovered\n"
    p2 = tklib.tracekit("report", out, check=True)
    assert p2.stderr == "" and report_lines(p2.stdout) == before
    assert p2.stdout.splitlines()[1].startswith("# recovered: ")
    assert sum(int(x) for x in re.findall(r"^# stream \S+: (\d+) events", p2.stdout, re.M)) \
        == len(before), p2.stdout[:3000]
    assert len(tklib.babeltrace_lines(out)) == len(before)
    r = tklib.tracekit("recover", out, check=True)
    assert r.stdout == "'%s' is recovered already: nothing to recover\n" % out, r.stdout


def report_lines(text):
    """The event lines of report's output TEXT (not its loss lines)."""
    return [l for l in text.splitlines()
            if l and not l.startswith("#") and not l.endswith(" EVENTS DROPPED]")]


def test_thread_exit_kept():
    """Threads that exit long before the program keep their events: once
    as is, once with the recorder starved of CPU so that the threads have
    come and gone before it has looked at their buffers."""
    n, t = 50000, 8
    args = [tklib.prog("basic"), "-n", str(n), "-t", str(t)]
    for mode in ("plain", "starved recorder"):
        out = os.path.join(tklib.tmpdir(), "trace")
        if mode == "plain":
            p = tklib.record(out, args, timeout=60)
            rc, stdout, stderr = p.returncode, p.stdout, p.stderr
        else:
            rc, stdout, stderr = _record_starved(out, args)
        assert rc == 0, "%s: record exited %d:\n%s" % (mode, rc, stderr)
        emitted = sorted(l for l in stdout.splitlines() if l.startswith("emitted"))
        assert emitted == sorted("emitted %d %d" % (i, n) for i in range(t)), \
            "%s: program printed %r" % (mode, stdout)
        rows, total = tklib.summary(stderr)
        assert total is not None and total["events"] == n * t + 2 and \
            total["lost"] == 0 and len(rows) == t + 1, \
            "%s: want %d streams, %d events, 0 lost; summary:\n%s" % (
                mode, t + 1, n * t + 2, stderr)
        streams, phases, nlines = scan_seq(out, contiguous_from=0)
        assert phases == ["start", "end"], "%s: test:phase events in report: %r" % (
            mode, phases)
        assert sorted(int(st["thread"]) for st in streams.values()) == list(range(t)), \
            "%s: threads in the trace: %r" % (
                mode, sorted(st["thread"] for st in streams.values()))
        byrow = rows_by_tid(rows)
        for tid, st in streams.items():
            assert st["count"] == n and st["last"] == n - 1, \
                "%s: tid %d (thread %s): %d events seq %d..%d, want %d" % (
                    mode, tid, st["thread"], st["count"], st["first"], st["last"], n)
            assert tid in byrow and byrow[tid]["events"] == n and byrow[tid]["lost"] == 0, \
                "%s: summary row of tid %d: %r" % (mode, tid, byrow.get(tid))


def test_thread_losing_everything():
    """A thread whose every event is larger than a sub-buffer: its stream
    is in the trace with its 3 losses ("too large"), in report's header,
    for babeltrace2 and in the converted trace.dat, as in the summary."""
    out = os.path.join(tklib.tmpdir(), "trace")
    p = tklib.record(out, [tklib.prog("toobig"), "5", "3", "100000"], timeout=60)
    assert p.stdout.splitlines() == ["emitted 0 5", "emitted 1 3"], p.stdout
    byrow, total = check_losses_everywhere(out, p.stderr, "test:seq")
    hdr_before = header_streams(out, "test:seq")
    assert (total["events"], total["lost"]) == (5, 3), p.stderr
    assert sorted((r["events"], r["lost"]) for r in byrow.values()) == [(0, 3), (5, 0)], \
        p.stderr
    # the summary says why, and what would keep them
    assert "tracekit: 3 events lost as too large: an event must fit in a sub-buffer " \
        "(64 KiB; --subbufs sets fewer, larger ones)\n" in p.stderr, p.stderr
    m = tklib.tracekit("report", out).stdout
    assert re.search(r"^# stream .*-\d+: 0 events, 3 lost \(0 no space, 0 in signal "
                     r"handlers, 3 too large, 0 overwritten\)$", m, re.M), m[:2000]
    # as a recorder killed before its last update of the manifest would
    # leave it: the stream's final packet says what was lost, and recover
    # keeps it
    path = os.path.join(out, "tracekit.manifest")
    text = open(path).read().split("\n", 1)
    open(path, "w").write(text[0] + " state=recording\n" +
                          text[1].replace("lost_big=3", "lost_big=0"))
    r = tklib.tracekit("recover", out)
    assert "5 user events in 2 streams, 3 lost" in r.stdout + r.stderr, r
    assert header_streams(out, "test:seq") == hdr_before, tklib.tracekit("report", out).stdout


def test_losses_after_last_packet():
    """Threads that lose the end of a burst (8 KiB each, discard mode), or
    its beginning (overwrite mode): what they lost after their last packet
    or before their first is counted by babeltrace2 and trace-cmd too, so
    every reader sums to the summary's lost count."""
    n, t = 200000, 2
    for opts in (["-b", "8"], ["-b", "8", "--overwrite"]):
        out = os.path.join(tklib.tmpdir(), "trace")
        p = tklib.record(out, [tklib.prog("basic"), "-n", str(n), "-t", str(t)], *opts,
                         timeout=120)
        try:
            byrow, total = check_losses_everywhere(out, p.stderr)
        except AssertionError as e:
            raise AssertionError("%s: %s" % (" ".join(opts), e)) from None
        assert total["lost"] > 0 and total["events"] + total["lost"] == n * t + 2, \
            p.stderr
