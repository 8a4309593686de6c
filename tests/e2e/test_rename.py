# SPDX-License-Identifier: MIT
"""Threads renamed after their first event, and gone before the recorder
reads /proc again (tests/progs/rename-quick.c): each thread goes by its
last name in every event, user and kernel, in every reader (report's
lines and --comm, hist's execname, convert to Chrome JSON and trace.dat
as trace-cmd reads it).  README, "A thread has one name in the whole
trace"; docs/format.md, "Thread names".
"""
import json
import os
import re

import kernlib
import test_tracedat
import tklib

QUICK = tklib.prog("rename-quick")


def record(*opts):
    """Record prog-rename-quick: the trace directory and the thread ids,
    {name: tid} (worker-0, worker-1, renamed)."""
    d = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(d, [QUICK], "-q", "-e", "app:*", *opts)
    tids = {}
    for line in p.stdout.splitlines():
        w = line.split()
        if w[0] == "worker":
            tids["worker-" + w[1]] = int(w[2])
        else:
            tids["renamed"] = int(w[1])
    assert len(tids) == 3, p.stdout
    return d, tids


def expected_user(tids):
    """The user events, (comm, tid, event, text), in time order."""
    return [("worker-0", tids["worker-0"], "app:before", "worker 0"),
            ("worker-0", tids["worker-0"], "app:after", "worker 0"),
            ("worker-1", tids["worker-1"], "app:before", "worker 1"),
            ("worker-1", tids["worker-1"], "app:after", "worker 1"),
            ("renamed", tids["renamed"], "app:before", "main"),
            ("renamed", tids["renamed"], "app:after", "main")]


def counts(d, *opts):
    """report --count: {event: count} ("total" included)."""
    p = tklib.tracekit("report", d, "--count", *opts, check=False)
    if p.returncode:
        return p.stderr.strip()
    return {w[1]: int(w[0]) for w in (l.split() for l in p.stdout.splitlines()) if len(w) == 2}


def lines(d, *opts):
    """report's event lines (kernlib.parse_report: with or without the
    kernel's flag column)."""
    return kernlib.parse_report(tklib.tracekit("report", d, "--no-header", *opts).stdout)


def check_user(d, tids):
    lines_ = lines(d, "--events", "app:*")
    assert [(e["comm"].strip(), e["tid"], e["event"], e["text"]) for e in lines_] == \
        expected_user(tids)
    streams = sorted(l for l in tklib.tracekit("report", d).stdout.splitlines()
                     if l.startswith("# stream "))
    assert streams == sorted("# stream %s-%d: 2 events, 0 lost" % (n, t)
                             for n, t in tids.items()), streams
    assert counts(d, "--comm", "worker*", "--events", "app:*") == \
        {"app:before": 2, "app:after": 2, "total": 4}
    assert counts(d, "--comm", "renamed", "--events", "app:*") == \
        {"app:before": 1, "app:after": 1, "total": 2}
    err = counts(d, "--comm", "prog-rename*", "--events", "app:*")
    assert re.fullmatch(r"tracekit: no event matched --comm 'prog-rename\*' "
                        r"--events 'app:\*' \(\d+ events read\)", err), err


def test_user_events_take_last_name():
    d, tids = record()
    check_user(d, tids)


def test_kernel_and_user_events_one_name():
    with kernlib.guard():
        d, tids = record("-e", "raw_syscalls:sys_enter")
    check_user(d, tids)
    names = {t: n for n, t in tids.items()}
    seen = {}
    for e in lines(d):
        if e["tid"] in names:
            seen.setdefault(e["tid"], set()).add(e["comm"].strip())
            if e["event"] == "raw_syscalls:sys_enter":
                seen.setdefault(("sys", e["tid"]), 0)
                seen[("sys", e["tid"])] += 1
    assert {t: seen[t] for t in names} == {t: {n} for t, n in names.items()}, seen
    # the rename itself is a system call: each thread has kernel events
    assert all(seen.get(("sys", t), 0) > 0 for t in names), seen
    sys_counts = {t: seen[("sys", t)] for t in names}
    assert counts(d, "--comm", "worker*", "--events", "raw_syscalls:*") == \
        {"raw_syscalls:sys_enter": sys_counts[tids["worker-0"]] + sys_counts[tids["worker-1"]],
         "total": sys_counts[tids["worker-0"]] + sys_counts[tids["worker-1"]]}

    out = tklib.tracekit("hist", d, "-e", "raw_syscalls:sys_enter",
                         "--key", "common_pid.execname").stdout
    rows = {int(m.group(2)): (m.group(1), int(m.group(3))) for m in
            re.finditer(r"^\{ common_pid: (\S+) +\[(\d+)\] *\} hitcount: +(\d+)$", out, re.M)}
    assert {t: rows[t] for t in names} == \
        {t: (names[t], sys_counts[t]) for t in names}, out

    path = os.path.join(tklib.tmpdir(), "t.json")
    tklib.tracekit("convert", "--to", "chrome", d, "-o", path)
    with open(path) as f:
        events = json.load(f)
    if isinstance(events, dict):
        events = events["traceEvents"]
    named = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name" and e["tid"] in names}
    assert named == names, named

    tc = test_tracedat.trace_cmd()
    dat = test_tracedat.write_dat(d)
    tc_seen = {}
    user = []
    for e in test_tracedat.tc_lines(tc, dat):
        if e["tid"] in names:
            tc_seen.setdefault(e["tid"], set()).add(e["comm"])
            if e["name"] != "sys_enter":
                user.append((e["comm"], e["tid"], e["text"]))
    assert tc_seen == {t: {n} for t, n in names.items()}, tc_seen
    assert user == [(c, t, x) for c, t, _, x in expected_user(tids)], user

    # The manifest's name wins over the kernel's saved_cmdlines (which a
    # thread with the same tid may have left before): give worker-0
    # another name in the manifest only, and every reader follows it.
    w0 = tids["worker-0"]
    with open(os.path.join(d, "tracekit.manifest")) as f:
        manifest = f.read()
    edited = re.sub(r"(^stream .* tid=%d .*comm=)worker-0 " % w0, r"\1edited-w0 ",
                    manifest, flags=re.M)
    assert edited != manifest
    with open(os.path.join(d, "tracekit.manifest"), "w") as f:
        f.write(edited)
    assert {e["comm"].strip() for e in lines(d) if e["tid"] == w0} == {"edited-w0"}
    assert counts(d, "--comm", "edited-w0") == \
        {"app:before": 1, "app:after": 1, "raw_syscalls:sys_enter": sys_counts[w0],
         "total": 2 + sys_counts[w0]}
    dat = test_tracedat.write_dat(d)
    got = {e["comm"] for e in test_tracedat.tc_lines(tc, dat) if e["tid"] == w0}
    assert got == \
        {"edited-w0"}, got


def test_plain_program_kernel_events_take_last_name():
    """A program not built with tracekit renames itself 50 ms after its
    last recorded event: its kernel events went by the name the kernel's
    comm cache had at that event (python3), where a tracekit program's
    go by their last name; and a pid the cache skipped (it takes a lock
    it may not get) went by "<...>".  The recorder reads the command's
    last name before reaping it and the trace names it so."""
    d = os.path.join(tklib.tmpdir(), "t")
    script = ("import ctypes, os, time\n"
              "os.getppid(); os.getppid()\n"
              "time.sleep(0.05)\n"
              "ctypes.CDLL(None).prctl(15, b'renamed', 0, 0, 0)\n"
              "print(os.getpid())\n")
    with kernlib.guard():
        p = tklib.record(d, ["python3", "-c", script], "-q", "-F",
                         "-e", "syscalls:sys_enter_getppid")
    pid = int(p.stdout.split()[-1])
    mine = [e for e in lines(d) if e["tid"] == pid]
    assert len(mine) >= 2 and {e["comm"].strip() for e in mine} == {"renamed"}, mine
    with open(os.path.join(d, "kernel", "saved_cmdlines")) as f:
        assert "%d renamed\n" % pid in f.read()
