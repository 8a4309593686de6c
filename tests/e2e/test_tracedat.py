# SPDX-License-Identifier: MIT
"""`tracekit convert --to tracedat` (export/tracedat*.c): trace-cmd report
and KernelShark read what tracekit writes.

Real recordings are converted to trace.dat. `trace-cmd report` must print
the same kernel events, in the same order per CPU with the same field
text, as `tracekit report`; the user events with the same text (so the
same field values), timestamps, threads and CPUs, in the same order; the
function tracer's calls as the same call graph; with report's selection
options (convert's --until for report's --to), the events report selects.
KernelShark opens a trace.dat under Xvfb (tests/e2e/kernelshark.py): its
window names the file, its CPU plot has one colour per task, and its
screenshot is kept in the build directory
(tests/artifacts/kernelshark-tracedat.png).
"""
import os
import re
import shutil
import struct

import kernelshark
import kernlib
import test_cli
import tklib

GETPPID = tklib.prog("kstat-getppid")
BASIC = tklib.prog("basic")
TC_RE = re.compile(r"^\s*(?P<comm>.*)-(?P<tid>\d+)\s+\[(?P<cpu>\d+)\]\s*(?P<ts>\d+(?:\.\d+)?):"
                   r"\s+(?P<name>[^:\s]+):\s+(?P<text>.*)$")

DROPPED_RE = re.compile(r"^CPU:(\d+) \[(\d+) EVENTS DROPPED\]$")


def record_kernel():
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        tklib.record(d, [GETPPID, "200", "20"], "-e", "test:phase",
                     "-e", "syscalls:sys_enter_getppid", "-e", "syscalls:sys_exit_getppid",
                     "-e", "sched:sched_switch", "-e", "sched:sched_wakeup")
    return d


def write_dat(d, *opts):
    """convert --to tracedat: the file, after checking that nothing was
    said (no warning)."""
    dat = os.path.join(tklib.tmpdir(), "trace.dat")
    p = tklib.tracekit("convert", "--to", "tracedat", d, "-o", dat, *opts, timeout=300)
    assert p.stdout == "" and p.stderr == "", p
    return dat


def tc_lines(tc, dat, *opts):
    """trace-cmd report's event lines: dicts comm, tid, cpu, ts (text as
    printed), name, text; a stack trace's lines ("=> NAME (ADDRESS)") are
    the previous event's "stack", a list of the names."""
    p = tklib.run([tc, "report"] + list(opts) + ["-i", dat])
    out = []
    for line in p.stdout.splitlines():
        if line.startswith("cpus=") or not line.strip():
            continue
        if line.startswith("=> ") and out:
            out[-1].setdefault("stack", []).append(line[3:].rsplit(" (", 1)[0])
            continue
        m = DROPPED_RE.match(line)
        if m:
            out.append(dict(name="DROPPED", cpu=int(m.group(1)), count=int(m.group(2))))
            continue
        m = TC_RE.match(line)
        assert m, "unparsable trace-cmd line: %r" % line
        out.append(dict(comm=m.group("comm").strip(), tid=int(m.group("tid")),
                        cpu=int(m.group("cpu")), ts=m.group("ts"), name=m.group("name"),
                        text=m.group("text").rstrip()))
    assert "Error" not in p.stderr and "FAILED" not in p.stderr, p.stderr[-500:]
    return out


def tk_lines(d, *opts):
    p = tklib.tracekit("report", d, "--no-header", *opts, timeout=300)
    return kernlib.parse_report(p.stdout)


def trace_cmd():
    path = shutil.which("trace-cmd")
    if not path:
        raise tklib.Skip("trace-cmd is not installed (scripts/install-deps installs it)")
    return path


def test_trace_cmd_report_same_kernel_events():
    tc = trace_cmd()
    d = record_kernel()
    dat = write_dat(d)
    theirs = [(e["cpu"], e["tid"], e["name"], e["text"])
              for e in tc_lines(tc, dat) if e["name"] != "phase"]
    ours = [(e["cpu"], e["tid"], e["name"], e["text"])
            for e in kernlib.report(d) if e["lat"] is not None]
    assert len(ours) > 400, len(ours)
    assert len(theirs) == len(ours), (len(theirs), len(ours))
    for cpu in sorted({c for c, _, _, _ in ours}):
        a = [x for x in ours if x[0] == cpu]
        b = [x for x in theirs if x[0] == cpu]
        for i, (x, y) in enumerate(zip(a, b)):
            assert x == y, "CPU %d event %d: tracekit %r, trace-cmd %r" % (cpu, i, x, y)
        assert len(a) == len(b)
    assert len([x for x in theirs if x[2] == "sys_enter_getppid"]) >= 200


def section_sizes(tc, dat):
    """trace-cmd dump --summary: {"Kallsyms": bytes, "Saved command lines":
    bytes, ...}."""
    p = tklib.run([tc, "dump", "--summary", "-i", dat])
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"\[([A-Za-z ]+), (\d+) bytes\]", p.stdout)}


def test_size_follows_events():
    """The file holds the kernel symbols and task names that its events
    name, not the machine's whole kallsyms (5 MB) and saved_cmdlines: its
    size follows the events. trace-cmd still names every stack frame and
    every task as tracekit report does."""
    tc = trace_cmd()
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "s")
        tklib.record(d, [GETPPID, "100", "20"], "-e", "test:phase",
                     "-e", "syscalls:sys_enter_getppid", "-e", "sched:sched_switch",
                     "-e", "sched:sched_wakeup", "--stack")
    dat = write_dat(d)
    ours = [e for e in kernlib.report(d) if e["lat"] is not None]
    theirs = [e for e in tc_lines(tc, dat) if e["name"] != "phase"]
    stacks = [e for e in ours if e["name"] == "kernel_stack"]
    assert len(stacks) >= 100 and all(e.get("stack") for e in stacks), len(stacks)
    assert len(theirs) == len(ours), (len(theirs), len(ours))
    for cpu in sorted({e["cpu"] for e in ours}):
        a = [e for e in ours if e["cpu"] == cpu]
        b = [e for e in theirs if e["cpu"] == cpu]
        for i, (x, y) in enumerate(zip(a, b)):
            want = [f.split("+")[0] for f in x.get("stack", [])]
            assert (x["comm"], x["tid"], want) == (y["comm"], y["tid"], y.get("stack", [])), \
                "CPU %d event %d: tracekit %r, trace-cmd %r" % (cpu, i, x, y)
    size = os.path.getsize(dat)
    assert size <= 64 * 1024 + 128 * len(ours), (size, len(ours))
    saved = os.path.getsize(os.path.join(d, "kernel", "kallsyms"))
    sections = section_sizes(tc, dat)
    assert 0 < sections["Kallsyms"] < saved // 100, (sections, saved)
    tasks = {e["tid"] for e in ours} | {int(p) for e in ours if e["name"] == "sched_switch"
                                        for p in kernlib.sched_switch(e["text"])[::2]}
    lines = sections["Saved command lines"]
    assert lines <= sum(len("%d %s\n" % (t, "x" * 16)) for t in tasks), (lines, len(tasks))


def same_order(ours, theirs, key):
    """ours and theirs hold the same events in the same order; events of
    one timestamp (as trace-cmd prints it, in ns) may come in any order."""
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    i = 0
    while i < len(theirs):
        j = i + 1
        while j < len(theirs) and theirs[j]["ts"] == theirs[i]["ts"]:
            j += 1
        a = sorted(key(e) for e in ours[i:j])
        b = sorted(key(e) for e in theirs[i:j])
        assert a == b, "events %d..%d: tracekit %r, trace-cmd %r" % (i, j - 1, a, b)
        i = j


def test_trace_cmd_report_same_user_events():
    """Two threads' events (so both CPUs' pages) and test:kinds with every
    field kind: same text, thread, CPU, time and order; the raw fields of
    test:kinds (trace-cmd -R) are its known values."""
    tc = trace_cmd()
    d = os.path.join(tklib.tmpdir(), "u")
    tklib.record(d, [BASIC, "-n", "400", "-t", "2", "-k"])
    dat = write_dat(d)
    theirs = tc_lines(tc, dat, "-t")
    ours = tk_lines(d)
    assert len(ours) == 2 + 800 + 1, len(ours)
    for e in ours:
        e["name"] = e["event"].split(":", 1)[1]
        e["ts"] = "%.6f" % e["ts"]
    for e in theirs:
        secs, frac = e["ts"].split(".")
        e["us"] = tklib.secs_text(int(secs) * 10**9 + int(frac))
    key = lambda e: (e["tid"], e["cpu"], e["name"], e["text"])  # noqa: E731
    same_order(ours, theirs, key)
    for a, b in zip(sorted(ours, key=key), sorted(theirs, key=key)):
        assert a["ts"] == b["us"] and a["comm"] == b["comm"], (a, b)
    assert {e["cpu"] for e in theirs} == {e["cpu"] for e in ours}
    raw = [e for e in tc_lines(tc, dat, "-R") if e["name"] == "kinds"]
    assert len(raw) == 1, raw
    assert raw[0]["text"] == (
        "a=-8 b=-1600 c=-320000 d=-6400000000 e=200 f=65000 g=4000000000 "
        "h=18000000000000000000 p=0x1234abcd x=2.5 comm=abcdefgh s=hello world "
        "bytes=ARRAY[de, ad, be, ef]"), raw[0]["text"]


def test_raw_timestamps():
    """--ts raw: trace-cmd prints the recorded counter, as report --ts raw."""
    tc = trace_cmd()
    d = os.path.join(tklib.tmpdir(), "u")
    tklib.record(d, [BASIC, "-n", "50"])
    theirs = tc_lines(tc, write_dat(d, "--ts", "raw"))
    ours = kernlib.report(d)
    assert [(e["tid"], int(e["ts"]), e["text"]) for e in theirs] == \
        [(e["tid"], e["ts"], e["text"]) for e in ours]


def test_times_as_trace_cmd():
    """Times print as trace-cmd report prints them (microseconds rounded
    to the nearest, as libtraceevent rounds to its precision): report's
    line and trace-cmd's line of each event carry the same time text."""
    tc = trace_cmd()
    d = os.path.join(tklib.tmpdir(), "u")
    tklib.record(d, [BASIC, "-n", "200"])
    dat = write_dat(d)
    theirs = tc_lines(tc, dat)
    ns = tc_lines(tc, dat, "-t")
    out = tklib.tracekit("report", d, "--no-header").stdout.splitlines()
    line = re.compile(r"^\s*.*-(?P<tid>\d+) \[\d+\] (?P<ts>\d+\.\d+): [^: ]+:[^: ]+: (?P<text>.*)$")
    ours = [m for m in map(line.match, out) if m]
    assert len(ours) == len(theirs) == len(ns) > 200, (len(ours), len(theirs), len(ns))
    assert sorted((e["tid"], e["ts"], e["text"]) for e in theirs) == \
        sorted((int(m.group("tid")), m.group("ts"), m.group("text").rstrip()) for m in ours)
    # a time whose nanoseconds round up is printed rounded up (not truncated)
    ups = [(a["ts"], b["ts"]) for a, b in zip(ns, theirs) if int(a["ts"][-3:]) >= 500]
    assert ups and all(b != a[:-3] for a, b in ups), ups[:3]


def graph_calls(lines):
    """Per thread, the calls of function_graph lines as (depth, name) in
    order, read from the text after '|' (entries "f() {" and leaves
    "f();"; exits are counted)."""
    calls, exits = {}, {}
    for e in lines:
        if e["name"] not in ("funcgraph_entry", "funcgraph_exit"):
            continue
        text = e["text"].split("|", 1)[1][2:]
        body = text.lstrip(" ")
        depth = (len(text) - len(body)) // 2
        if e["name"] == "funcgraph_exit" or body.startswith("}"):
            exits[e["tid"]] = exits.get(e["tid"], 0) + 1
            continue
        calls.setdefault(e["tid"], []).append((depth, body.split("(")[0]))
        if body.endswith("();"):
            exits[e["tid"]] = exits.get(e["tid"], 0) + 1
    return calls, exits


def test_trace_cmd_draws_function_graph():
    """The same call graph; trace-cmd report -R (raw records, no leaves
    folded) has as many entries and exits as report --count counts
    (docs/viewing.md says to count with it)."""
    tc = trace_cmd()
    d = os.path.join(tklib.tmpdir(), "g")
    tklib.record(d, [tklib.prog("functree"), "tree"], "-p", "function_graph")
    dat = write_dat(d)
    theirs = tc_lines(tc, dat)
    ours = tk_lines(d)
    ours_calls, ours_exits = graph_calls(ours)
    assert len(ours_calls) == 3 and sum(len(c) for c in ours_calls.values()) > 100
    assert graph_calls(theirs) == (ours_calls, ours_exits)
    assert any(c == (0, "main") for c in ours_calls[min(ours_calls)])
    counts = dict(reversed(line.split()) for line in
                  tklib.tracekit("report", d, "--count").stdout.splitlines())
    raw = {}
    for e in tc_lines(tc, dat, "-R"):
        raw[e["name"]] = raw.get(e["name"], 0) + 1
    for name in ("funcgraph_entry", "funcgraph_exit"):
        assert raw[name] == int(counts["ftrace:" + name]), (name, raw, counts)
    assert raw["funcgraph_exit"] > len([e for e in theirs if e["name"] == "funcgraph_exit"])


def lost_before_last_events(d):
    """Per stream file of trace D, the events_discarded of its last packet
    holding events (docs/format.md, Streams): what was lost before it."""
    total = 0
    udir = os.path.join(d, "user")
    for name in os.listdir(udir):
        if name == "metadata":
            continue
        data = open(os.path.join(udir, name), "rb").read()
        off, last = 0, 0
        while off + 80 <= len(data):
            content, size, _, discarded = struct.unpack_from("<4Q", data, off + 32)
            if content > 80 * 8:
                last = discarded
            off += size // 8
        total += last
    return total


def test_user_losses_marked():
    """A recording that lost user events: trace-cmd prints the same
    events and, where each stream went on after a loss (and on the last
    page for what was lost after a stream's last event), EVENTS DROPPED
    lines whose counts add up to what the recorder counted lost."""
    tc = trace_cmd()
    d = os.path.join(tklib.tmpdir(), "l")
    # losses before a later packet need the recorder to drain while the
    # writers run: small buffers, a long run, and up to three tries (on a
    # loaded machine a run can end before the first drain)
    for _ in range(3):
        shutil.rmtree(d, ignore_errors=True)
        _, total = tklib.summary(tklib.record(d, [BASIC, "-n", "500000", "-t", "2"],
                                              "-b", "32").stderr)
        lost = lost_before_last_events(d)
        if lost:
            break
    assert lost > 0, "nothing was lost before a later packet in three recordings"
    theirs = tc_lines(tc, write_dat(d))
    assert sum(e["count"] for e in theirs if e["name"] == "DROPPED") == total["lost"]
    counts = dict(reversed(line.split()) for line in
                  tklib.tracekit("report", d, "--count").stdout.splitlines())
    assert int(counts["test:seq"]) == len([e for e in theirs if e["name"] == "seq"]), counts


def test_selection_as_report():
    """--tid, --events and --from/--until keep what report keeps with the
    same options (--to for --until): same events, per CPU, same text."""
    tc = trace_cmd()
    d = record_kernel()
    all_events = kernlib.report(d)
    tid = [e["tid"] for e in all_events if e["event"] == "test:phase"][0]
    sel = ["--tid", str(tid), "--events", "syscalls:*", "--events", "test:*"]
    ours = kernlib.report(d, *sel)
    names = {e["event"] for e in ours}
    assert names == {"test:phase", "syscalls:sys_enter_getppid",
                     "syscalls:sys_exit_getppid"}, names
    assert len(ours) == 2 * 200 + 2, len(ours)  # 200 calls, 2 phases
    theirs = tc_lines(tc, write_dat(d, *sel))
    ours = [(e["cpu"], e["tid"], e["name"], e["text"]) for e in ours]
    theirs = [(e["cpu"], e["tid"], e["name"], e["text"]) for e in theirs]
    for cpu in range(max(c for c, _, _, _ in ours + theirs) + 1):
        assert [e for e in ours if e[0] == cpu] == [e for e in theirs if e[0] == cpu], cpu
    # a window: from the 100th event to the 300th (in clock ticks)
    lo, hi = str(all_events[100]["ts"]), str(all_events[300]["ts"])
    ours = [(e["cpu"], e["tid"], e["name"], e["text"])
            for e in kernlib.report(d, "--from", lo, "--to", hi)]
    theirs = [(e["cpu"], e["tid"], e["name"], e["text"])
              for e in tc_lines(tc, write_dat(d, "--ts", "raw", "--from", lo, "--until", hi))]
    assert len(ours) >= 201, len(ours)
    for cpu in range(max(c for c, _, _, _ in ours + theirs) + 1):
        assert [e for e in ours if e[0] == cpu] == [e for e in theirs if e[0] == cpu], cpu


def test_errors():
    """Bad input: one line, no file left behind; '-o -' is refused (the
    file is written with seeks)."""
    base = tklib.tmpdir()
    d = os.path.join(base, "u")
    tklib.record(d, [BASIC, "-n", "3"])
    out = os.path.join(base, "missing", "x.dat")
    test_cli.one_error(tklib.tracekit("convert", "--to", "tracedat", d, "-o", out,
                                      check=False), rc=1,
                       exact="tracekit: cannot create '%s': No such file or directory" % out)
    assert not os.path.exists(os.path.dirname(out))
    p = tklib.tracekit("convert", "--to", "tracedat", d, "-o", "-", check=False)
    test_cli.one_error(p, rc=2, exact="tracekit: --to tracedat writes its file with seeks: "
                       "it cannot go to standard output (give -o FILE)")
    assert p.stdout == ""
    p = tklib.tracekit("convert", "--to", "chrome", d, "--ts", "raw", check=False)
    test_cli.one_error(p, rc=2, exact="tracekit: --ts raw: only --to tracedat writes the "
                       "recorded clock ticks")
    out = os.path.join(base, "x.dat")
    test_cli.one_error(tklib.tracekit("convert", "--to", "tracedat", d, "-o", out,
                                      "--events", "sched:*", check=False), rc=1,
                       exact="tracekit: no event matched --events 'sched:*' (5 events read)")
    assert os.listdir(base) == ["u"], os.listdir(base)


def bar_colours(png):
    """Colours of the screenshot that are saturated (not the greys of the
    window) and cover at least 300 pixels: the CPU plot's task bars (the
    Marker A button's green is a gradient of small areas)."""
    p = tklib.run(["convert", png, "-format", "%c", "histogram:info:-"])
    out = set()
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(\d+): \(\s*(\d+),\s*(\d+),\s*(\d+)", line)
        if m:
            n, rgb = int(m.group(1)), [int(v) for v in m.group(2, 3, 4)]
            if n >= 300 and max(rgb) - min(rgb) > 60:
                out.add(tuple(rgb))
    return out


def test_kernelshark_opens_it():
    """KernelShark loads the file (its window names it), says no error,
    and its CPU plot draws the three threads' events, a colour each.  The
    main thread waits 10 ms before it starts each worker and before its
    end, the workers 2 ms after each event, so that each has a bar wide
    enough to be seen however they were scheduled (the main thread's was
    a pixel wide when a worker ran at once on its CPU)."""
    tool = kernelshark.missing()
    if tool:
        raise tklib.Skip("%s is not installed (scripts/install-deps installs it)" % tool)
    d = os.path.join(tklib.tmpdir(), "u")
    tklib.record(d, [BASIC, "-n", "5", "-t", "2", "-D", "10000", "-s", "1,2000"])
    dat = write_dat(d)
    art = os.path.join(tklib.BUILD, "tests", "artifacts")
    os.makedirs(art, exist_ok=True)
    shot = os.path.join(art, "kernelshark-tracedat.png")
    title, out = kernelshark.shot(dat, shot)
    assert title == "Kernel Shark (%s)" % dat, title
    assert "Loading" in out and "rror" not in out, out[-500:]
    assert len(bar_colours(shot)) == 3, bar_colours(shot)
