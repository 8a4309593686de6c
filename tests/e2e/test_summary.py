# SPDX-License-Identifier: MIT
"""What record says: a short summary (the streams that lost or fired the
most, ten (eleven when that is all), one line for the rest, -v for each; what the processes say of
their call sites once, however many say it), no word that a command
defines no events when a program it runs does, and the way to trace the
functions of a process started without the runtime."""
import os
import re
import subprocess
import time

import tklib

MORE_RE = re.compile(r"^\.\.\. and (\d+) more streams?: (\d+) events, (\d+) lost "
                     r"\(record -v lists each, report's header too\)$", re.M)


def test_many_streams_summed_up():
    """20 threads of 1,000 events and the main thread's 2: the ten
    threads listed, most lost then most events first, the eleven others
    in one line whose counts complete the total; -v lists all 21 by
    thread id."""
    out = os.path.join(tklib.tmpdir(), "t")
    cmd = [tklib.prog("basic"), "-n", "1000", "-t", "20"]
    p = tklib.record(out, cmd)
    rows, total = tklib.summary(p.stderr)
    assert total == dict(events=20002, lost=0, bytes=total["bytes"]), p.stderr
    assert [r["events"] for r in rows] == [1000] * 10, p.stderr
    assert rows == sorted(rows, key=lambda r: (-r["lost"], -r["events"], r["tid"])), p.stderr
    more = MORE_RE.findall(p.stderr)
    assert more == [("11", "10002", "0")], p.stderr
    assert sum(r["events"] for r in rows) + 10002 == total["events"]
    p = tklib.record(out, cmd, "-v")
    rows, total = tklib.summary(p.stderr)
    assert len(rows) == 21 and not MORE_RE.search(p.stderr), p.stderr
    assert [r["tid"] for r in rows] == sorted(r["tid"] for r in rows), p.stderr
    assert sorted(r["events"] for r in rows) == [2] + [1000] * 20, p.stderr
    assert sum(r["bytes"] for r in rows) == total["bytes"], p.stderr


def test_eleven_streams_listed():
    """Ten threads and the main thread: eleven rows, not ten and a line
    '... and 1 more stream' that saves nothing."""
    out = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(out, [tklib.prog("basic"), "-n", "100", "-t", "10"])
    rows, total = tklib.summary(p.stderr)
    assert len(rows) == 11 and not MORE_RE.search(p.stderr), p.stderr
    assert total["events"] == 1002, p.stderr


def test_losses_listed_first():
    """Threads that lost events come before those that fired more and
    lost none: -b 8 and 12 threads, so that some lose."""
    out = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(out, [tklib.prog("basic"), "-n", "50000", "-t", "12"], "-b", "8")
    rows, total = tklib.summary(p.stderr)
    assert total["lost"] > 0, p.stderr
    assert len(rows) == 10 and rows[0]["lost"] > 0, p.stderr
    assert rows == sorted(rows, key=lambda r: (-r["lost"], -r["events"], r["tid"])), p.stderr
    (n, events, lost), = [tuple(map(int, m)) for m in MORE_RE.findall(p.stderr)]
    assert n == 3 and sum(r["lost"] for r in rows) + lost == total["lost"], p.stderr
    assert sum(r["events"] for r in rows) + events == total["events"], p.stderr


def test_process_notes_once():
    """A program that forks three children: four processes with static
    keys, said in one line."""
    out = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(out, [tklib.prog("fork"), "-k", "3"])
    notes = [l for l in p.stderr.splitlines() if "call sites" in l]
    assert len(notes) == 1 and re.match(
        r"^tracekit: prog-fork-\d+ and 3 more processes: call sites are static keys$",
        notes[0]), p.stderr


NO_EVENTS = ("tracekit: warning: no tracekit events: 'sh' defines none (not linked "
             "with libtracekit), nor did any program it ran\n")


def test_no_events_said_once_known():
    """sh -c './prog' execs an instrumented program: its events are
    recorded and nothing says that 'sh' defines none (with and without
    --no-follow); a command that runs nothing instrumented is said so, at
    the end."""
    out = os.path.join(tklib.tmpdir(), "t")
    for opts in ([], ["--no-follow"]):
        p = tklib.record(out, ["sh", "-c", "%s -n 100" % tklib.prog("basic")], *opts)
        rows, total = tklib.summary(p.stderr)
        assert total["events"] == 102 and "defines" not in p.stderr, (opts, p.stderr)
    p = tklib.record(out, ["sh", "-c", "true"])
    assert p.stderr.count("defines none") == 1 and NO_EVENTS in p.stderr, p.stderr
    assert p.stderr.index(NO_EVENTS) > p.stderr.index("total "), p.stderr


def test_attach_function_tracer_without_runtime():
    """record -p function -P on a patchable build started without the
    runtime: the error says how to start it with it (docs/functrace.md)."""
    path = os.path.realpath(tklib.prog("functree"))
    app = subprocess.Popen([path, "bytes"], stdout=subprocess.PIPE)
    try:
        end = time.time() + 10
        while os.path.realpath("/proc/%d/exe" % app.pid) != path and time.time() < end:
            time.sleep(0.01)  # until it runs the program
        d = os.path.join(tklib.tmpdir(), "t")
        p = tklib.tracekit("record", "-p", "function", "-P", str(app.pid), "-o", d,
                           check=False)
    finally:
        app.kill()
        app.wait()
    assert p.returncode == 1 and p.stderr == (
        "tracekit: process %d is not instrumented with tracekit (no control socket "
        "@tracekit-%d: Connection refused); for -p function start it with the runtime: "
        "LD_PRELOAD=libtracekit.so.0 TRACEKIT_FUNCTRACE=1 in its environment (unless "
        "it links libtracekit), or record it from its start: tracekit record -p "
        "function -- CMD\n" % (app.pid, app.pid)), p.stderr
    assert not os.path.exists(d)
