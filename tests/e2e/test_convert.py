# SPDX-License-Identifier: MIT
"""tracekit convert: Chrome trace event JSON, folded stacks and the SVG
flame graph, checked against the trace they come from (known call trees,
known field values, the report's events) and opened by real clients:
speedscope (npm) and the SVG in Debian's headless Chromium, driven by
playwright-core (tests/e2e/browser, installed by scripts/install-deps)."""
import json
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import time

import kernlib
import test_cli
import tklib
from tklib import Skip, prog, record, tmpdir, tracekit

HERE = os.path.dirname(os.path.abspath(__file__))
BROWSER = os.path.join(HERE, "browser")
FUNCTREE = prog("functree")
BASIC = prog("basic")
KSYS = prog("ksys")
one_error = test_cli.one_error

# functree tree's calls (tests/progs/functree.c): stack -> calls
TREE_CALLS = {
    "main": 1, "main;loop_leaf": 1, "main;loop_leaf;leaf": 100,
    "main;recurse": 1, "main;recurse;recurse": 1, "main;recurse;recurse;recurse": 1,
    "main;recurse;recurse;recurse;recurse": 1,
    "main;recurse;recurse;recurse;recurse;recurse": 1,
    "main;jumper": 1, "main;jumper;deep1": 1, "main;jumper;deep1;deep2": 1,
    "main;jumper;deep1;deep2;deep3": 1, "main;jumper;after_jump": 1,
    "main;waiter": 1, "main;waiter;on_signal": 1, "main;waiter;on_signal;handler_work": 1,
    "main;sleeper": 1, "main;lib_add": 1, "main;lib_add;lib_inner": 1,
    "thread_main": 2, "thread_main;worker": 2, "thread_main;worker;leaf": 100,
}


# ---------------------------------------------------------------- helpers

def convert(d, fmt, *opts, out=None):
    """tracekit convert --to FMT D -o OUT; returns OUT's path."""
    out = out or d + "." + fmt
    tracekit("convert", "--to", fmt, d, "-o", out, *opts, timeout=300)
    return out


def written_file(pid, where):
    """The size of the file in directory WHERE that process PID has open
    (named or not: O_TMPFILE), or None."""
    fds = "/proc/%d/fd" % pid
    try:
        names = os.listdir(fds)
    except OSError:
        return None
    for fd in names:
        try:
            target = os.readlink(os.path.join(fds, fd))
            if os.path.dirname(target) == where:
                return os.stat(os.path.join(fds, fd)).st_size
        except OSError:
            continue
    return None


def tree_trace(*opts):
    """The known tree of the program's own functions (its library calls
    left out)."""
    d = os.path.join(tmpdir(), "t")
    p = record(d, [FUNCTREE, "tree"], "-p", "function_graph", "--no-libcall", *opts)
    assert "tree ok" in p.stdout, p.stdout
    rows, total = tklib.summary(p.stderr)
    assert total["lost"] == 0, p.stderr
    return d


def folded(path):
    """'a;b;c N' lines -> {stack: N}; each stack once."""
    out = {}
    for line in open(path).read().splitlines():
        stack, n = line.rsplit(" ", 1)
        assert stack not in out, "stack %r twice" % stack
        out[stack] = int(n)
    return out


def ns(v):
    """A ts or dur in microseconds (3 decimals) as integer nanoseconds."""
    return int(round(v * 1000))


def validate(trace):
    """The trace event format's rules: every element has ph; all but
    metadata have ts, pid, tid; X has dur >= 0; B/E balance per thread;
    flow ends pair; X slices of a thread nest (a slice that starts inside
    another ends inside it).  Returns the events."""
    assert set(trace) >= {"traceEvents", "displayTimeUnit"}, trace.keys()
    events = trace["traceEvents"]
    open_be, flows, slices = {}, {}, {}
    for e in events:
        ph = e.get("ph")
        assert ph in ("M", "X", "B", "E", "i", "s", "f"), e
        assert isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int), e
        assert isinstance(e.get("name"), str) and e["name"], e
        if ph == "M":
            assert e["name"] in ("process_name", "thread_name", "thread_sort_index"), e
            continue
        assert isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, e
        track = (e["pid"], e["tid"])
        if ph == "X":
            assert isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, e
            slices.setdefault(track, []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e))
        elif ph == "B":
            open_be.setdefault(track, []).append(e["name"])
        elif ph == "E":
            assert open_be.get(track), "E without B: %r" % e
            open_be[track].pop()
        elif ph in ("s", "f"):
            assert "id" in e, e
            flows.setdefault(e["id"], {})[ph] = e
        elif ph == "i":
            assert e.get("s") in ("t", "p", "g"), e
    assert not any(open_be.values()), "B without E: %r" % open_be
    for fid, ends in flows.items():
        assert set(ends) == {"s", "f"}, "flow %r: %r" % (fid, ends)
        assert ends["s"]["ts"] <= ends["f"]["ts"], ends
    for track, ss in slices.items():
        ss.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for a, b, e in ss:
            while stack and stack[-1][1] <= a:
                stack.pop()
            assert not stack or b <= stack[-1][1], \
                "track %r: %r crosses %r" % (track, e, stack[-1][2])
            stack.append((a, b, e))
    return events


def chrome(d, *opts):
    path = convert(d, "chrome", *opts)
    return validate(json.load(open(path)))


def node():
    path = shutil.which("node")
    if not path:
        raise Skip("node is not installed")
    if not os.path.exists("/usr/bin/chromium") and not os.environ.get("TK_CHROMIUM"):
        raise Skip("chromium is not installed (scripts/install-deps installs it)")
    for mod in ("playwright-core", "speedscope"):
        if not os.path.isdir(os.path.join(BROWSER, "node_modules", mod)):
            raise Skip("%s is not installed in tests/e2e/browser (scripts/install-deps)" % mod)
    return path


def devtools(path):
    """What Chrome DevTools' trace engine (npm chrome-devtools-frontend,
    tests/e2e/browser/devtools-trace.mjs) made of Chrome JSON file PATH:
    {"threads": [{pid, tid, name, calls: {name: n}}], "flows": [[[name,
    pid, tid, ts], ...]]}."""
    exe = shutil.which("node")
    if not exe:
        raise Skip("node is not installed (scripts/install-deps installs it)")
    for mod in ("chrome-devtools-frontend", "esbuild"):
        if not os.path.isdir(os.path.join(BROWSER, "node_modules", mod)):
            raise Skip("%s is not installed in tests/e2e/browser (scripts/install-deps)" % mod)
    p = tklib.run([exe, os.path.join(BROWSER, "devtools-trace.mjs"), path], timeout=180)
    return json.loads(p.stdout.strip().splitlines()[-1])


def browser(*args):
    p = tklib.run([node(), os.path.join(BROWSER, "browser.mjs")] + list(args), timeout=180)
    return json.loads(p.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- folded

def test_folded_calls_exact():
    """--calls: one line per stack of the known tree, its exact calls."""
    d = tree_trace()
    assert folded(convert(d, "folded", "--calls")) == TREE_CALLS


def test_folded_self_time():
    """Default weights: self time in ns; all stacks add up to the root
    calls' durations (as the Chrome JSON gives them), the 20 ms sleeper
    is the heaviest callee."""
    d = tree_trace()
    f = folded(convert(d, "folded"))
    assert set(f) <= set(TREE_CALLS) and {"main", "main;sleeper"} <= set(f), f
    events = chrome(d)
    roots = [e for e in events if e["ph"] == "X" and e["name"] in ("main", "thread_main")]
    assert len(roots) == 3, roots
    total = sum(ns(e["dur"]) for e in roots)
    # each call's self time is its duration less its children's, so the
    # sum telescopes to the roots' durations
    assert sum(f.values()) == total, (sum(f.values()), total)
    # the heaviest callee (main's own time, which waits for its thread,
    # grows with the machine's load)
    callees = [v for k, v in f.items() if ";" in k]
    assert f["main;sleeper"] >= 20000000 and f["main;sleeper"] == max(callees), f


def test_folded_self_time_is_profiles():
    """The self times of folded stacks, added up per function, are report
    --profile's self times to the nanosecond (one walk of the calls, one
    rule for a call's time), for every function whose calls all returned;
    those that never did (longjmp) are counted in the profile, not timed."""
    d = tree_trace()
    mine = {}
    for stack, n in folded(convert(d, "folded")).items():
        leaf = stack.rsplit(";", 1)[-1]
        mine[leaf] = mine.get(leaf, 0) + n
    out = tracekit("report", d, "--profile").stdout.splitlines()[2:]
    prof = {r.split()[0]: r.split()[1:] for r in out}
    unfinished = {"deep1", "deep2", "deep3"}
    assert set(prof) == set(mine), (sorted(prof), sorted(mine))
    for f in unfinished:
        assert prof[f] == ["1", "-", "-", "-", "-"] and mine[f] >= 0, (f, prof[f])
    theirs = {f: int(v[2].replace(".", "")) for f, v in prof.items() if f not in unfinished}
    assert theirs == {f: n for f, n in mine.items() if f not in unfinished}, (theirs, mine)


def test_folded_on_cpu():
    """The default weight is wall-clock self time: sleeper's 20 ms
    nanosleep is in it. --on-cpu takes out the time each thread was
    switched out (sched_switch): sleeper keeps its time on a CPU only, no
    stack gains, and the switches back in are read even when the
    selection keeps only the function tracer's events. Without
    sched_switch in the trace, and with --calls or a format that weighs
    nothing, it is refused."""
    with kernlib.guard():
        d = os.path.join(tmpdir(), "t")
        p = record(d, [FUNCTREE, "tree"], "-p", "function_graph", "--no-libcall",
                   "-e", "sched:sched_switch", "-F")
    assert "tree ok" in p.stdout, p.stdout
    wall = folded(convert(d, "folded"))
    on = folded(convert(d, "folded", "--on-cpu", out=d + ".on"))
    assert set(on) <= set(wall) and all(on[k] <= wall[k] for k in on), (on, wall)
    assert wall["main;sleeper"] >= 20000000, wall
    assert on.get("main;sleeper", 0) < 5000000, on
    assert on["main;loop_leaf;leaf"] > 0, on
    sel = folded(convert(d, "folded", "--on-cpu", "--events", "ftrace:*", out=d + ".sel"))
    assert sel == on, (sel, on)
    svg = open(convert(d, "svg", "--on-cpu")).read()
    assert re.search(r'id="info"[^>]*>[0-9.]+ [mun]?s by self time on a CPU<', svg), svg[:2000]
    t = tree_trace()
    one_error(tracekit("convert", "--to", "folded", "--on-cpu", t, "-o", "-", check=False),
              rc=1, exact="tracekit: --on-cpu: trace '%s' has no sched:sched_switch events "
              "(record them with -e sched:sched_switch)" % t)
    one_error(tracekit("convert", "--to", "svg", "--on-cpu", "--calls", d, check=False),
              rc=2, exact="tracekit: --on-cpu weighs function_graph calls by time: not with --calls")
    one_error(tracekit("convert", "--to", "chrome", "--on-cpu", d, check=False),
              rc=2, exact="tracekit: --on-cpu: only --to folded and --to svg weigh stacks")


def test_folded_func_stack():
    """-p function --func-stack: the stacks recorded with each entry
    (no function_graph calls), one per call: main below its untraced libc
    caller (an address), recurse 5 deep."""
    d = os.path.join(tmpdir(), "t")
    record(d, [FUNCTREE, "tree"], "-p", "function", "--func-stack", "-l", "recurse", "-l",
           "main")
    f = folded(convert(d, "folded"))
    roots = {s.split(";")[0] for s in f}
    assert len(roots) == 1 and re.fullmatch(r"0x[0-9a-f]+", roots.pop()), f
    got = {s.split(";", 1)[1]: n for s, n in f.items()}
    assert got == {";".join(["main"] + ["recurse"] * k): 1 for k in range(6)}, got


def test_folded_kernel_stacks():
    """--stack: each getppid entry's kernel stack, outermost first (the
    system call entry); the stacks' counts add up to the events (the
    program's 40 calls and the runtime's own)."""
    n = 40
    with kernlib.guard():
        d = os.path.join(tmpdir(), "t")
        record(d, [KSYS, "-n", str(n)], "-q", "-e", "syscalls:sys_enter_getppid", "-F",
               "--stack", timeout=60)
    count = tracekit("report", d, "--count", "--events", "syscalls:sys_enter_getppid").stdout
    events = int(re.search(r"^\s*(\d+) syscalls:sys_enter_getppid$", count, re.M).group(1))
    assert events >= n, count
    f = folded(convert(d, "folded"))
    assert sum(f.values()) == events, (f, count)
    for s in f:
        assert s.startswith("entry_SYSCALL") and ";do_syscall_64;" in s, f


# ---------------------------------------------------------------- chrome

def test_chrome_function_graph():
    """Every call of the known tree is one X slice of its thread, named;
    deep1..3 (left by longjmp) say they are unfinished; threads and the
    process are named."""
    d = tree_trace()
    events = chrome(d)
    calls = {}
    for e in events:
        if e["ph"] == "X":
            assert e["cat"] in ("function_graph", "function_graph,unfinished"), e
            calls[e["name"]] = calls.get(e["name"], 0) + 1
    want = {}
    for stack, n in TREE_CALLS.items():
        want[stack.split(";")[-1]] = want.get(stack.split(";")[-1], 0) + n
    assert calls == want, calls
    unfinished = sorted(e["name"] for e in events if e.get("cat") == "function_graph,unfinished")
    assert unfinished == ["deep1", "deep2", "deep3"], unfinished
    names = {(e["pid"], e["tid"], e["name"]): e["args"] for e in events if e["ph"] == "M"}
    pids = {e["pid"] for e in events if e["ph"] == "X"}
    assert len(pids) == 1
    pid = pids.pop()
    assert names[(pid, 0, "process_name")] == {"name": "prog-functree"}, names
    tids = {e["tid"] for e in events if e["ph"] == "X"}
    assert len(tids) == 3 and all((pid, t, "thread_name") in names for t in tids), names
    sleeper = [e for e in events if e.get("name") == "sleeper"][0]
    assert sleeper["dur"] >= 20000, sleeper


def test_chrome_user_events():
    """User events are instants with their fields as args, every kind
    (test:kinds' known values), in order and at the report's times."""
    d = os.path.join(tmpdir(), "t")
    record(d, [BASIC, "-n", "50", "-k"])
    events = chrome(d)
    kinds = [e for e in events if e["name"] == "test:kinds"]
    assert len(kinds) == 1 and kinds[0]["ph"] == "i" and kinds[0]["cat"] == "test", kinds
    args = kinds[0]["args"]
    want = dict(test_cli.KINDS)
    want["p"] = "0x1234abcd"
    want["bytes"] = "deadbeef"
    want["common_cpu"] = [r for r in tklib.report_lines(d) if r["event"] == "test:kinds"][0]["cpu"]
    assert args == want, args
    seq = [e for e in events if e["name"] == "test:seq"]
    lines = [r for r in tklib.report_lines(d) if r["event"] == "test:seq"]
    assert len(seq) == len(lines) == 50
    for e, r in zip(seq, lines):
        want = {k: (v if k == "msg" else int(v)) for k, v in tklib.fields(r["text"]).items()}
        want["common_cpu"] = r["cpu"]
        assert e["args"] == want, (e, r)
        # the report prints seconds.microseconds of the same clock
        assert tklib.secs_text(ns(e["ts"])) == r["ts"], (e, r)
        assert e["tid"] == r["tid"]


def test_chrome_lost_events():
    """8 KiB buffers lose events: each stream's 'lost N events' slices add
    up to what the recorder counted lost for it, and the events kept are
    all there."""
    d = os.path.join(tmpdir(), "t")
    p = record(d, [BASIC, "-n", "200000", "-t", "2"], "-b", "8", timeout=120)
    rows, total = tklib.summary(p.stderr)
    assert total["lost"] > 0, p.stderr
    events = chrome(d)
    lost, kept = {}, {}
    for e in events:
        if e.get("cat") == "lost":
            assert e["name"] == "lost %d events" % e["args"]["lost"], e
            assert e["tid"] & 1 << 29, e  # the thread's lost track
            tid = e["tid"] & ~(1 << 29)
            lost[tid] = lost.get(tid, 0) + e["args"]["lost"]
        elif e["name"] == "test:seq":
            kept[e["tid"]] = kept.get(e["tid"], 0) + 1
    for r in rows:
        assert lost.get(r["tid"], 0) == r["lost"], (r, lost)
        if r["name"] != "prog-basic" or r["tid"] in kept:
            assert kept.get(r["tid"], 0) in (r["events"], r["events"] - 1), (r, kept)


def test_chrome_kernel_events():
    """User and kernel events on one timeline: the worker's N getppid
    calls are N 'getppid' slices between kb:begin and kb:end, returning its
    ppid; its 50 ms sleep is a sleeping slice between kb:sleep and
    kb:woke on its scheduling track, ended by a wakeup; each wakeup's
    arrow goes from where the woken thread becomes runnable to where it
    runs next."""
    n, ms = 25, 50
    with kernlib.guard():
        d = os.path.join(tmpdir(), "t")
        p = record(d, [KSYS, "-n", str(n), "-s", str(ms)], "-e", "kb:*", "-e",
                   "syscalls:sys_enter_getppid", "-e", "syscalls:sys_exit_getppid",
                   "-e", "sched:sched_switch", "-e", "sched:sched_wakeup", timeout=60)
    tid = int(re.search(r"^tid (\d+)$", p.stdout, re.M).group(1))
    ppid = int(re.search(r"^ppid (\d+)$", p.stdout, re.M).group(1))
    events = chrome(d)
    mine = lambda name: [e for e in events if e["name"] == name and e["tid"] == tid]
    begin, end = mine("kb:begin"), mine("kb:end")
    sleep, woke = mine("kb:sleep"), mine("kb:woke")
    assert len(begin) == len(end) == len(sleep) == len(woke) == 1
    calls = mine("getppid")
    assert len(calls) == n, calls
    for c in calls:
        assert c["ph"] == "X" and c["cat"] == "syscall" and c["args"]["ret"] == ppid, c
        assert begin[0]["ts"] <= c["ts"] and ns(c["ts"]) + ns(c["dur"]) <= ns(end[0]["ts"]), c
    track = tid | 1 << 30
    sched = [e for e in events if e["tid"] == track]
    slept = [e for e in sched if e["ph"] == "X" and e["name"] == "sleeping"
             and sleep[0]["ts"] <= e["ts"] and e["ts"] + e["dur"] <= woke[0]["ts"]]
    assert len(slept) == 1 and slept[0]["dur"] >= ms * 1000 * 0.9, sched
    wake_at = ns(slept[0]["ts"]) + ns(slept[0]["dur"])
    runnable = [e for e in sched if e["ph"] == "X" and e["name"] == "runnable"
                and ns(e["ts"]) == wake_at]
    assert len(runnable) == 1, "no runnable slice from the wakeup on: %r" % sched
    # every arrow: from a wakeup (where a runnable slice starts on the
    # woken thread's track) to the start of its next running slice
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    slices = {}
    for e in events:
        if e["ph"] == "X" and e.get("cat") == "sched":
            slices.setdefault((e["tid"], e["name"], ns(e["ts"])), e)
    ends = [e for e in events if e["ph"] == "f"]
    assert ends, "no wakeup arrow"
    for f in ends:
        assert (f["tid"], "running", ns(f["ts"])) in slices, f
        assert (f["tid"], "runnable", ns(starts[f["id"]]["ts"])) in slices, (starts[f["id"]], f)
    # this kernel sometimes does not record a task's switch back in
    # (test_kernel.test_sched_switch_sleep): then its wakeup has no arrow
    mine = [f for f in ends if f["tid"] == track and ns(starts[f["id"]]["ts"]) == wake_at]
    assert len(mine) <= 1, mine
    names = {(e["pid"], e["tid"], e["name"]): e["args"] for e in events if e["ph"] == "M"}
    assert names[(calls[0]["pid"], track, "thread_name")]["name"].endswith(" %d sched" % tid)


def test_chrome_kernel_filtered():
    """-F records switches and wakeups between the command's threads and
    others: only the command's threads get scheduling slices (another
    task is seen only when it meets them)."""
    with kernlib.guard():
        d = os.path.join(tmpdir(), "t")
        p = record(d, [KSYS, "-s", "20"], "-e", "kb:*", "-e", "sched:sched_switch", "-e",
                   "sched:sched_wakeup", "-F", timeout=60)
    pid = int(re.search(r"^pid (\d+)$", p.stdout, re.M).group(1))
    events = chrome(d)
    assert {e["pid"] for e in events} == {pid}, {(e["pid"], e["name"]) for e in events}
    assert any(e["name"] == "sleeping" for e in events)
    # every wakeup names its waker "COMM TID", the task report shows the
    # sched_wakeup in; a waker with no track (another task, left out by
    # -F, or the idle task) has the mark on the woken thread's own track
    woke = set()
    for e in kernlib.report(d, "--events", "sched:sched_wakeup"):
        woken = int(re.search(r"(?:\bpid=|:)(\d+) ", e["text"]).group(1))
        woke.add((woken, "%s %d" % (e["comm"] if e["tid"] else "<idle>", e["tid"])))
    tracks = {e["tid"] & ~(1 << 30) for e in events if e.get("cat") == "sched"}
    marks = [e for e in events if e["ph"] == "i" and e["name"] == "wakeup"]
    assert marks, "no wakeup"
    for e in marks:
        woken, waker = e["args"]["woken"], e["args"]["waker"]
        assert (woken, waker) in woke, (e, woke)
        by = int(waker.rsplit(" ", 1)[1])
        assert e["tid"] == (by if by in tracks else woken) | 1 << 30, (e, tracks)


def wait_until(cond, timeout=60):
    end = time.time() + timeout
    while not cond():
        assert time.time() < end, "timed out"
        time.sleep(0.01)


def test_chrome_kernel_lost():
    """4 KiB kernel buffers overflow while the recorder is stopped: the
    'lost N events' slices of the kernel's CPU tracks add up to the losses
    report counts."""
    d = os.path.join(tmpdir(), "t")
    ticks = os.path.join(tmpdir(), "ticks")
    with kernlib.guard():
        rec = subprocess.Popen(
            [tklib.TRACEKIT, "record", "-o", d, "-q", "--kernel-buffer", "4",
             "-e", "syscalls:sys_enter_getppid", "-e", "syscalls:sys_exit_getppid",
             "-F", "--", KSYS, "-f", "-c", ticks],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            done = lambda: struct.unpack("<Q", open(ticks, "rb").read(8))[0]
            wait_until(lambda: os.path.exists(ticks) and os.path.getsize(ticks) == 8
                       and done() > 1000)
            os.kill(rec.pid, signal.SIGSTOP)
            # far more than 4 KiB per CPU can hold while nothing reads it
            first = done()
            wait_until(lambda: done() > first + 20000)
            os.kill(rec.pid, signal.SIGCONT)
            subprocess.run(["pkill", "-TERM", "-f", "prog-ksys -f -c " + ticks])
            _, err = rec.communicate(timeout=120)
        finally:
            if rec.poll() is None:
                os.kill(rec.pid, signal.SIGCONT)
                tklib.kill_quietly(rec)
                rec.wait()
    # the program's status, as a shell gives it
    assert rec.returncode == 128 + signal.SIGTERM, (rec.returncode, err)
    count = tracekit("report", d, "--count").stdout
    m = re.search(r"^\s*(\d+) kernel events lost$", count, re.M)
    assert m and int(m.group(1)) > 0, count
    events = chrome(d)
    lost = [e for e in events if e.get("cat") == "lost"]
    assert lost and all(e["pid"] == 0 for e in lost), lost
    assert sum(e["args"]["lost"] for e in lost) == int(m.group(1)), (lost, count)
    cpus = {e["tid"]: e["args"]["name"] for e in events
            if e["ph"] == "M" and e["pid"] == 0 and e["name"] == "thread_name"}
    assert all(cpus[e["tid"]] == "CPU %d" % e["tid"] for e in lost), cpus


# ---------------------------------------------------------------- clients

def test_speedscope_opens_chrome_json():
    """speedscope (npm) in headless Chromium loads the JSON: the profile
    is named after the process and thread, and its Sandwich table lists
    the functions of the known tree."""
    node()
    d = tree_trace()
    path = convert(d, "chrome")
    got = browser("speedscope", path, "")
    assert got["errors"] == [] and got["blocked"] == [], got
    assert got["title"] == os.path.basename(path) + " - speedscope", got
    assert any(re.fullmatch(r"prog-functree \(pid \d+\), prog-functree \(tid \d+\).*", t)
               for t in got["toolbar"]), got["toolbar"]
    for name in ("main", "sleeper", "loop_leaf", "recurse", "jumper"):
        assert name in got["frames"], (name, got["frames"])


def test_devtools_reads_chrome_json():
    """Chrome DevTools' own trace importer (its Performance panel's, run
    in Node) reads the JSON of the known tree recorded with its
    scheduling: each thread by its name, with every call of the tree as a
    slice of its name; each scheduling track named; and every wakeup
    arrow bound at both ends (DevTools binds a flow's ends only to events
    of the same ts, thread and category), from the waker's scheduling
    track to the woken thread's running slice, among them the worker
    waking main from pthread_join.  That wakeup happens only when main
    blocks in pthread_join before the worker ends, which the scheduler
    decides: up to three recordings are made until one has it."""
    for attempt in range(3):
        joined, flows = devtools_tree_checked()
        if joined:
            return
    assert joined, flows


def devtools_tree_checked():
    """test_devtools_reads_chrome_json's recording and checks; (whether a
    worker's arrow woke main, the flows)."""
    with kernlib.guard():
        d = os.path.join(tmpdir(), "t")
        p = record(d, [FUNCTREE, "tree"], "-p", "function_graph", "--no-libcall",
                   "-e", "sched:sched_switch", "-e", "sched:sched_wakeup", "-F")
    assert "tree ok" in p.stdout, p.stdout
    path = convert(d, "chrome")
    events = json.load(open(path))["traceEvents"]
    got = devtools(path)
    threads = {(t["pid"], t["tid"]): t for t in got["threads"]}
    named = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    comm = {r["tid"]: r["comm"] for r in kernlib.report(d)}
    calls = {}
    users = [k for k in threads if k[1] < 1 << 29]
    assert len(users) == 3, threads
    for key in users:
        assert threads[key]["name"] == named[key] == comm[key[1]], (threads[key], named)
        sched = threads.get((key[0], key[1] | 1 << 30))
        assert sched and sched["name"] == "%s %d sched" % (comm[key[1]], key[1]), sched
        assert sched["calls"].get("running", 0) >= 1, sched
        for name, n in threads[key]["calls"].items():
            calls[name] = calls.get(name, 0) + n
    want = {}
    for stack, n in TREE_CALLS.items():
        want[stack.split(";")[-1]] = want.get(stack.split(";")[-1], 0) + n
    assert calls == want, (calls, want)
    starts = [e for e in events if e["ph"] == "s"]
    assert starts and len(got["flows"]) == len(starts), (len(got["flows"]), len(starts))
    main = [k for k in users if threads[k]["calls"].get("main")][0]
    joined = False
    for flow in got["flows"]:
        assert len(flow) == 2, flow
        (_, p0, t0, _), (name1, p1, t1, ts1) = flow
        assert t0 >= 1 << 30 and t1 >= 1 << 30 and name1 == "running", flow
        assert any(e["ph"] == "X" and e["name"] == "running" and (e["pid"], e["tid"]) == (p1, t1)
                   and ns(e["ts"]) == ns(ts1) for e in events), flow
        joined |= t0 != main[1] | 1 << 30 and t1 == main[1] | 1 << 30
    return joined, got["flows"]


def test_svg_in_chromium():
    """The SVG in headless Chromium, offline (a request for anything but
    a local file is refused and fails the test): the widest frame above
    main is sleeper; hovering names it with its share; a click zooms it
    to the full width; a search colours it and reports its share."""
    node()
    d = tree_trace()
    path = convert(d, "svg")
    got = browser("svg", path, "sleep", "")
    assert got["errors"] == [] and got["blocked"] == [], got
    assert got["hot"] == "sleeper" and got["label"] == "sleeper", got
    m = re.fullmatch(r"sleeper \((\d+\.\d+) ms, (\d+\.\d+)%\)", got["hover"])
    assert m and float(m.group(1)) >= 20, got
    assert abs(got["zoomed_width"] - 1180) < 0.01, got
    # the share to one decimal (JS) beside the same share to two (C): 52.55
    # in the title may be 52.5 or 52.6 here, so no rounding of the text
    matched = re.fullmatch(r"Matched: (\d+\.\d)%", got["matched"])
    assert matched and abs(float(matched.group(1)) - float(m.group(2))) <= 0.055 + 1e-9, got


# ---------------------------------------------------------------- errors

def test_convert_errors():
    """Bad input: one line, non-zero exit, no file left (not even a
    temporary one), and a file of that name from before stays."""
    d = tree_trace()
    out = os.path.join(tmpdir(), "o")
    os.mkdir(out)
    target = os.path.join(out, "x.json")
    open(target, "w").write("old")
    one_error(tracekit("convert", "--to", "pdf", d, "-o", target, check=False), rc=2,
              exact="tracekit: unknown format 'pdf' (formats: chrome, folded, svg, tracedat)")
    one_error(tracekit("convert", d, check=False), rc=2,
              exact="tracekit: convert needs --to FORMAT (see 'tracekit convert --help')")
    one_error(tracekit("convert", "--to", "chrome", d + "-none", "-o", target, check=False),
              rc=1, contains=(d + "-none",))
    one_error(tracekit("convert", "--to", "chrome", d, "-o", os.path.join(out, "no", "x.json"),
                       check=False), rc=1,
              exact="tracekit: cannot create '%s': No such file or directory"
              % os.path.join(out, "no", "x.json"))
    # a stream file made malformed in its middle: the events of its middle
    # packet (not the padding after them, which readers skip)
    stream = [os.path.join(d, "user", f) for f in os.listdir(os.path.join(d, "user"))
              if f != "metadata"][0]
    data = bytearray(open(stream, "rb").read())
    sizes = test_cli.packets(stream)
    at = sum(size for _, size in sizes[:len(sizes) // 2]) + 80  # past its header
    assert sizes[len(sizes) // 2][0] > 80 + 64, sizes
    data[at:at + 64] = b"\xff" * 64
    open(stream, "wb").write(bytes(data))
    for fmt in ("chrome", "folded", "svg", "tracedat"):
        line = one_error(tracekit("convert", "--to", fmt, d, "-o", target, check=False), rc=1)
        assert stream in line, line
        assert sorted(os.listdir(out)) == ["x.json"], os.listdir(out)
        assert open(target).read() == "old"


def test_nothing_to_fold():
    """A trace of user events only, no stack and no function_graph call:
    folded and svg say there is nothing to fold, exit 1 and write no
    file (an empty flame graph would be no answer); with --stacks on a
    function_graph trace, the same, naming the options that record
    stacks. chrome and tracedat write those events."""
    d = os.path.join(tmpdir(), "t")
    record(d, [BASIC, "-n", "10"])
    for fmt, suffix in (("folded", ".folded"), ("svg", ".svg")):
        one_error(tracekit("convert", "--to", fmt, d, check=False), rc=1,
                  exact="tracekit: nothing to fold in trace '%s': no stack and no "
                  "function_graph call in the events read" % d)
        assert not os.path.exists(d + suffix)
    assert os.path.getsize(convert(d, "chrome")) > 0
    t = tree_trace()
    p = tracekit("convert", "--to", "folded", "--stacks", t, "-o", "-", check=False)
    one_error(p, rc=1, exact="tracekit: nothing to fold in trace '%s': no stack was "
              "recorded with the events read (record --ustack, --stack or --func-stack)" % t)
    assert p.stdout == ""


def test_selection_as_report():
    """--tid, --events, --from/--until keep in every format what report
    keeps with the same options (convert's --until is report's --to):
    the main thread's calls only, exactly; a window of test:seq events
    only, the same ones; nothing matched is an error, no file left."""
    d = tree_trace()
    pid = int(re.search(r"prog-functree-(\d+)", tracekit("report", d).stdout).group(1))
    want = {k: v for k, v in TREE_CALLS.items() if not k.startswith("thread_main")}
    assert folded(convert(d, "folded", "--calls", "--tid", str(pid))) == want
    assert {e["tid"] for e in chrome(d, "--tid", str(pid)) if e["ph"] != "M"} == {pid}
    svg = open(convert(d, "svg", "--calls", "--tid", str(pid))).read()
    assert "loop_leaf" in svg and "thread_main" not in svg
    assert re.search(r'id="info"[^>]*>%d calls<' % sum(want.values()), svg), svg[:2000]
    u = os.path.join(tmpdir(), "u")
    record(u, [BASIC, "-n", "100", "-t", "2"])
    lines = tklib.report_lines(u)
    lo, hi = lines[20]["ts"], lines[150]["ts"]
    sel = [r for r in tklib.report_lines(u, "--events", "test:seq", "--from", lo, "--to", hi)]
    assert 100 < len(sel) < 200 and {r["event"] for r in sel} == {"test:seq"}, len(sel)
    got = [e for e in chrome(u, "--events", "test:seq", "--from", lo, "--until", hi)
           if e["ph"] == "i"]
    assert [(e["tid"], e["args"]["seq"]) for e in got] == \
        [(r["tid"], int(tklib.fields(r["text"])["seq"])) for r in sel]
    out = os.path.join(tmpdir(), "none.json")
    one_error(tracekit("convert", "--to", "chrome", u, "-o", out, "--comm", "nosuch*",
                       check=False), rc=1,
              exact="tracekit: no event matched --comm 'nosuch*' (%d events read)" % len(lines))
    assert not os.path.exists(out)
    one_error(tracekit("convert", "--to", "chrome", u, "--from", hi, "--until", lo,
                       check=False), rc=2,
              exact="tracekit: --from '%s' is after --until '%s'" % (hi, lo))


def test_progress_on_a_terminal():
    """With stderr a terminal, a long conversion shows a progress line
    (rewritten in place, cleared at the end); the output is the same as
    without one."""
    import pty
    d = os.path.join(tmpdir(), "t")
    record(d, [BASIC, "-n", "100000", "-t", "2"], "-b", "65536", timeout=120)
    master, slave = pty.openpty()
    out = d + ".json"
    p = subprocess.Popen([tklib.TRACEKIT, "convert", "--to", "chrome", d, "-o", out],
                         stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    assert p.wait(timeout=120) == 0, seen
    os.close(master)
    text = seen.decode()
    lines = re.findall(r"\rtracekit: converting '[^']+': (\d+) events \((\d+)%\)\x1b\[K", text)
    assert lines, repr(text[:300])
    assert all(0 < int(n) <= 200004 and 0 <= int(pc) <= 100 for n, pc in lines), lines
    assert text.endswith("\r\x1b[K"), repr(text[-40:])
    quiet = convert(d, "chrome", out=d + ".quiet.json")
    assert tklib.run(["cmp", out, quiet]).returncode == 0


def peak_anon_kb(args):
    """Run ARGS; the largest anonymous resident memory (kB, RssAnon of
    /proc/PID/status) seen while it ran, and its exit status. The mapped
    trace files are not counted: their pages are the page cache's."""
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while p.poll() is None:
        try:
            with open("/proc/%d/status" % p.pid) as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.002)
    p.stderr.read()
    p.stderr.close()
    return peak, p.returncode


def test_memory_does_not_grow_with_the_trace():
    """Conversion streams: every format converts a function_graph trace
    20 times larger (prog-funcburst, 2.4 M events, 43 MB) in the same
    anonymous memory, within 1 MiB, as one of 122,000 events: the same
    functions and stacks, more calls."""
    small, large = os.path.join(tmpdir(), "s"), os.path.join(tmpdir(), "l")
    for d, n in ((small, "400"), (large, "8000")):
        p = record(d, [prog("funcburst"), n], "-p", "function_graph", "-b", "65536",
                   timeout=120)
        assert tklib.summary(p.stderr)[1]["lost"] == 0, p.stderr
    for fmt in ("chrome", "folded", "svg", "tracedat"):
        kb = {}
        for d in (small, large):
            kb[d], rc = peak_anon_kb([tklib.TRACEKIT, "convert", "-q", "--to", fmt, d,
                                      "-o", d + ".out"])
            assert rc == 0 and kb[d] > 0, (fmt, d, rc)
        assert kb[large] <= kb[small] + 1024, (fmt, kb[small], kb[large])


def test_convert_output_names():
    """The default output is DIR plus the format's suffix (a file of that
    name is replaced); '-o -' writes to standard output (the same bytes);
    a progress line only on a terminal (not here)."""
    d = tree_trace()
    open(d + ".folded", "w").write("old\n")  # replaced, as the docs say
    p = tracekit("convert", "--to", "folded", d)
    assert p.stdout == "" and p.stderr == "", p
    a = open(d + ".folded").read()
    assert a != "old\n" and folded(d + ".folded")
    p = tracekit("convert", "--to", "folded", d, "-o", "-")
    assert p.stdout == a and p.stderr == ""
    tracekit("convert", "--to", "chrome", d + "/")
    assert json.load(open(d + ".json"))["traceEvents"]


def test_output_kinds_of_file():
    """-o names a device, a FIFO, a symlink, a directory, a file in the
    trace: a device or FIFO is written in place (never replaced by a
    regular file), a symlink's target is replaced (the link stays), a
    directory or the trace itself is refused at once; a conversion ended
    by SIGTERM leaves no temporary file."""
    d = os.path.join(tmpdir(), "t")
    record(d, [BASIC])
    base = tmpdir()
    whole = open(convert(d, "chrome", out=os.path.join(base, "whole.json")), "rb").read()

    full = os.path.join(base, "full")
    os.mknod(full, 0o600 | stat.S_IFCHR, os.makedev(1, 7))  # as /dev/full
    p = tracekit("convert", "--to", "chrome", d, "-o", full, check=False)
    assert p.returncode == 1 and p.stderr == \
        "tracekit: cannot write '%s': No space left on device\n" % full, p.stderr
    assert stat.S_ISCHR(os.stat(full).st_mode)

    fifo = os.path.join(base, "fifo")
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
    p = tracekit("convert", "--to", "chrome", d, "-o", fifo, check=False)
    assert p.returncode == 0, p.stderr
    assert reader.communicate(timeout=60)[0] == whole
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)

    target = os.path.join(base, "target")
    with open(target, "w") as f:
        f.write("old")
    link = os.path.join(base, "link")
    os.symlink(target, link)
    assert tracekit("convert", "--to", "chrome", d, "-o", link).returncode == 0
    assert os.path.islink(link) and open(target, "rb").read() == whole

    for out, why in ((base, "it is a directory"),
                     (os.path.join(d, "x.json"), "it is inside the trace being read")):
        p = tracekit("convert", "--to", "chrome", d, "-o", out, check=False)
        assert p.returncode == 1 and p.stderr == \
            "tracekit: cannot write '%s': %s\n" % (out, why), p.stderr
    p = tracekit("convert", "--to", "chrome", d, "-o", "", check=False)
    assert p.returncode == 1 and p.stderr == "tracekit: empty output file name\n", p.stderr

    # a conversion that writes until it is killed: a FIFO nobody reads
    # would block, so a large function_graph trace and SIGTERM once it
    # has written (its temporary file may have no name)
    big = os.path.join(tmpdir(), "big")
    record(big, [prog("funcburst")], "-p", "function_graph")
    out = os.path.join(base, "big.json")
    before = sorted(os.listdir(base))
    conv = subprocess.Popen([tklib.TRACEKIT, "convert", "-q", "--to", "chrome", big, "-o", out])
    deadline = time.time() + 60
    while not written_file(conv.pid, base) and conv.poll() is None and time.time() < deadline:
        time.sleep(0.001)
    if conv.poll() is not None:
        raise Skip("the conversion ended before it could be signalled")
    conv.send_signal(signal.SIGTERM)
    assert conv.wait(timeout=60) == -signal.SIGTERM
    assert sorted(os.listdir(base)) == before, os.listdir(base)
