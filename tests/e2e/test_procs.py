# SPDX-License-Identifier: MIT
"""Processes that come and go: the recorder keeps what the trace needs of
a process that is gone (its stream class, its manifest lines) and nothing
of one that left nothing in it, so that a program that forks thousands of
children, or thousands of connections that only say HELLO, cost neither
the drain loop nor the index."""
import os
import re

import tklib

HOSTILE = tklib.prog("hostile")


def classes(d):
    """The stream ids of the CTF metadata's stream classes."""
    with open(os.path.join(d, "user", "metadata")) as f:
        return re.findall(r"^stream \{\n\tid = (\d+);", f.read(), re.M)


def manifest(d, kind):
    """The manifest's lines of KIND (process, stream), as dicts."""
    with open(os.path.join(d, "tracekit.manifest")) as f:
        return [tklib.fields(l) for l in f.read().splitlines()
                if l.startswith(kind + " ")]


def counted(d):
    """The events report --count counts in all."""
    last = tklib.tracekit("report", "--count", d).stdout.splitlines()[-1].split()
    return int(last[0])


def babeltrace_count(d):
    return len(tklib.babeltrace_lines(d))


def test_hello_flood_leaves_no_class():
    """3,000 connections that only said HELLO each stayed in the recorder
    to the end: a stream class and a manifest line each, rendered again at
    every index (16,000 took 10.7 s and made an 8.5 MB metadata; 50,000
    kept the recorder busy for minutes before the program's own events).
    Gone without an event, they leave nothing; the program's 20,000
    events are all there."""
    d = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(d, [HOSTILE, "hellos", "3000", "20000"], timeout=300)
    assert p.stdout == "fired 20000\n", p.stdout
    rows, total = tklib.summary(p.stderr)
    assert (total["events"], total["lost"]) == (20000, 0), p.stderr[-1500:]
    assert len(classes(d)) == 1, len(classes(d))
    procs = manifest(d, "process")
    assert len(procs) == 1, len(procs)
    assert [s["class"] for s in manifest(d, "stream")] == [procs[0]["class"]]
    assert counted(d) == 20000
    assert babeltrace_count(d) == 20000
    assert "3001 processes" in p.stderr, p.stderr[-500:]


def test_silent_children_leave_no_class():
    """A program that forks 300 children that fire no event (follow-fork
    is the default): each child kept a class in the metadata, a manifest
    line, and its place in the drain loop.  Only the parent, which fired
    20 events, is in the trace."""
    d = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(d, [tklib.prog("fork"), "-a", "10", "-b", "10", "-k", "300",
                         "-c", "0"], timeout=300)
    assert len(classes(d)) == 1, len(classes(d))
    procs = manifest(d, "process")
    parent = re.search(r"^parent (\d+) ", p.stdout, re.M).group(1)
    assert len(procs) == 1 and procs[0]["pid"] == parent, (procs, parent)
    rows, total = tklib.summary(p.stderr)
    assert (total["events"], total["lost"]) == (20, 0), p.stderr[-1500:]
    assert counted(d) == 20
    assert babeltrace_count(d) == 20


def test_children_that_fire_keep_their_class():
    """Children that fired events keep their class, their manifest lines
    and every event once gone, beside silent ones that leave nothing."""
    d = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(d, [tklib.prog("fork"), "-a", "5", "-b", "5", "-k", "60",
                         "-c", "3"], "-q", timeout=300)
    procs = manifest(d, "process")
    assert len(classes(d)) == 61 == len(procs), (len(classes(d)), len(procs))
    assert sorted(classes(d)) == sorted(x["class"] for x in procs)
    streams = manifest(d, "stream")
    assert len(streams) == 61, len(streams)
    assert {s["class"] for s in streams} == {x["class"] for x in procs}
    children = [s for s in streams if s["comm"] == "fork-child"]
    assert len(children) == 60 and all(s["events"] == "3" for s in children), \
        children[:3]
    for x in procs:
        path = os.path.join(d, x["events"])
        assert os.path.getsize(path) > 0, path
    assert counted(d) == 190
    lines = tklib.babeltrace_lines(d)
    assert len(lines) == 190
    assert sum("fork:child" in l for l in lines) == 180


def test_orphan_child_decoded():
    """A process that forks and exits without an event (as a daemon
    does) leaves the recorder before its child fires: the child, which
    records with its parent's events, still has them (its 50 events
    decoded by report and babeltrace2)."""
    d = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(d, ["sh", "-c", HOSTILE + " orphan 50; sleep 1"], "-q",
                     timeout=120)
    assert p.stdout == "child fired 50\n", p.stdout
    procs = manifest(d, "process")
    assert len(procs) == 1, procs
    assert counted(d) == 50
    lines = tklib.babeltrace_lines(d)
    assert len(lines) == 50 and all("test:seq" in l for l in lines), lines[:3]


def test_more_streams_than_descriptors():
    """Each live stream holds its file open: more of them than the
    recorder may have descriptors (RLIMIT_NOFILE's hard limit, here 128)
    ended the recording ("cannot create ...: Too many open files", its
    events lost).  Idle streams' files are closed and opened again at
    need: the 300 threads' events are all there."""
    import resource

    def low():
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))
    d = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(d, [tklib.prog("many"), "-t", "300"], "-v", timeout=300,
                     preexec_fn=low)
    rows, total = tklib.summary(p.stderr)
    assert (len(rows), total["events"], total["lost"]) == (300, 300, 0), \
        p.stderr[-1500:]
    assert re.search(r"^tracekit: \d+ times a stream's file was closed while idle",
                     p.stderr, re.M), p.stderr[-1500:]
    assert counted(d) == 300
    assert babeltrace_count(d) == 300
