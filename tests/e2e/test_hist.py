# SPDX-License-Identifier: MIT
"""tracekit hist: event histograms and latencies, checked exactly.

prog-latency (tests/progs/latency.c) makes requests of known length: it
busy-waits a known number of TSC ticks between lat:start and lat:done and
puts the ticks it measured in lat:done's gap field, then makes one start
without a done, one done without a start and one start replaced by a
second.  hist's counts, sums, min/max/percentiles and slowest instances
are compared with what the program printed and with the raw timestamps
`tracekit report --ts raw` shows for the same events.  Kernel pairs come
from a real recording of prog-kstat-getppid.
"""
import os
import re

import kernlib
import tklib

LATENCY = tklib.prog("latency")
GETPPID = tklib.prog("kstat-getppid")
N = 200
WARM = 1000000  # the warm-up pair's id


def clock_freq(d):
    with open(os.path.join(d, "tracekit.manifest")) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == "clock":
                return int(dict(p.split("=", 1) for p in parts[1:] if "=" in p)["freq"])
    raise AssertionError("no clock record in %s's manifest" % d)


def record_latency(n=N):
    d = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(d, [LATENCY, str(n)])
    gaps = {int(m.group(1)): int(m.group(2))
            for m in re.finditer(r"^gap (\d+) (\d+)$", p.stdout, re.M)}
    sums = {int(m.group(1)): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"^sum (\d+) (\d+) (\d+)$", p.stdout, re.M)}
    assert len(gaps) == n and len(sums) == 5, p.stdout[-500:]
    return d, gaps, sums


def hist(*args, check=True):
    return tklib.tracekit("hist", *args, check=check)


def parse_latency(out):
    """count/min/p50/p90/p99/max (ns), the unmatched counts, the slowest
    rows, and the log2 rows (lo, hi, count) of hist's latency output."""
    m = re.search(r"^count (\d+)  min (\d+) ns  p50 (\d+) ns  p90 (\d+) ns  "
                  r"p99 (\d+) ns  max (\d+) ns$", out, re.M)
    assert m, out
    stats = dict(zip(("count", "min", "p50", "p90", "p99", "max"), map(int, m.groups())))
    m = re.search(r"^unmatched: (\d+) starts without an end, (\d+) ends without a start, "
                  r"(\d+) starts replaced by a later one$", out, re.M)
    assert m, out
    unmatched = tuple(map(int, m.groups()))
    slow = [dict(ns=int(m.group(1)), start=m.group(2), end=m.group(3), key=m.group(4))
            for m in re.finditer(r"^\s+(\d+) ns  from (.*?)  to (.*?)  (\S+=.*)$", out, re.M)]
    rows = [tuple(map(int, m.groups()))
            for m in re.finditer(r"^\s*(\d+) -> (\d+)\s+: (\d+)\s+\|", out, re.M)]
    return stats, unmatched, slow, rows


def nearest_rank(values, p):
    k = (len(values) * p + 99) // 100
    return values[max(k, 1) - 1]


def expected_pairs(events, start_ev, end_ev, key, keep=lambda e: True):
    """The latency pairs hist must find: (ticks, start event, end event,
    key) for each end whose key has a pending start; a later start
    replaces a pending one; a start that keep() refuses is pending but
    ends nothing."""
    pending, pairs = {}, []
    for e in events:
        if e["event"] == end_ev:
            k = key(e, "to")
            if k in pending:
                start = pending.pop(k)
                if keep(start):
                    pairs.append((e["ts"] - start["ts"], start, e, k))
        if e["event"] == start_ev:
            pending[key(e, "from")] = e
    return pairs


def test_latency_exact():
    d, gaps, _ = record_latency()
    freq = clock_freq(d)
    events = kernlib.report(d)
    pairs = expected_pairs(events, "lat:start", "lat:done",
                           lambda e, side: int(tklib.fields(e["text"])["id"]))
    assert len(pairs) == N + 2  # the requests, the warm-up, the replaced one
    # each request's interval holds the wait the program measured
    for ticks, _, _, k in pairs:
        if k in gaps:
            assert ticks >= gaps[k], (k, ticks, gaps[k])
    p = hist(d, "--from", "lat:start", "--to", "lat:done", "--match", "id",
             "--slowest", "3", "--unit", "ns")
    stats, unmatched, slow, rows = parse_latency(p.stdout)
    ns = sorted(t * 10**9 // freq for t, _, _, _ in pairs)
    assert stats == dict(count=len(ns), min=ns[0], p50=nearest_rank(ns, 50),
                         p90=nearest_rank(ns, 90), p99=nearest_rank(ns, 99),
                         max=ns[-1]), (stats, ns[:3], ns[-3:])
    assert unmatched == (1, 1, 1), unmatched
    assert sum(c for _, _, c in rows) == len(ns)
    for lo, hi, c in rows:
        assert c == len([v for v in ns if (v >= lo or lo == 0) and v <= hi]), (lo, hi, c)
    # the slowest: the last request (20 M ticks more), as report shows it
    want = sorted(pairs, key=lambda x: -x[0])[:3]
    assert [s["key"] for s in slow] == ["id=%d" % k for _, _, _, k in want], slow
    shown = {(e["tid"], e["ts"]): e for e in kernlib.parse_report(
        tklib.tracekit("report", d, "--no-header").stdout)}
    for s, (ticks, a, b, _) in zip(slow, want):
        assert s["ns"] == ticks * 10**9 // freq
        for text, e in ((s["start"], a), (s["end"], b)):
            m = re.match(r"^\s*(.*)-(\d+) \[(\d+)\] (\d+\.\d+)$", text)
            assert m, text
            assert int(m.group(2)) == e["tid"] and int(m.group(3)) == e["cpu"]
    # the raw clock: same ticks
    p = hist(d, "--from", "lat:start", "--to", "lat:done", "--match", "id",
             "--slowest", "1", "--ts", "raw", "--unit", "ns")
    start = re.search(r"from .*\] (\d+)  to", p.stdout).group(1)
    assert int(start) == want[0][1]["ts"], (start, want[0][1])


def test_latency_selection():
    """-f on the start event's fields and --tid/--comm on its thread pick
    which intervals count, as a synthetic event's start trigger filter."""
    d, _, _ = record_latency()
    freq = clock_freq(d)
    events = kernlib.report(d)
    ident = lambda e, side: int(tklib.fields(e["text"])["id"])
    small = lambda e: ident(e, "from") < 50
    pairs = expected_pairs(events, "lat:start", "lat:done", ident, small)
    assert 0 < len(pairs) < N
    base = ("--from", "lat:start", "--to", "lat:done", "--match", "id", "--unit", "ns")
    out = hist(d, *base, "-f", "id < 50", "--slowest", "1000").stdout
    stats, unmatched, slow, _ = parse_latency(out)
    ns = sorted(t * 10**9 // freq for t, _, _, _ in pairs)
    assert (stats["count"], stats["min"], stats["max"]) == (len(ns), ns[0], ns[-1]), stats
    assert sorted(int(s["key"][3:]) for s in slow) == sorted(k for _, _, _, k in pairs)
    starts = [e for e in events if e["event"] == "lat:start"]
    m = re.search(r"^not selected: (\d+) starts \(-f, --pid, --tid, --comm\)$", out, re.M)
    assert m and int(m.group(1)) == len([e for e in starts if not small(e)]), out
    assert unmatched[1] == 1, unmatched  # the done without a start, only
    tid = starts[0]["tid"]
    all_pairs = expected_pairs(events, "lat:start", "lat:done", ident)
    for sel in (("--tid", str(tid)), ("--comm", "prog-lat*")):
        stats, _, _, _ = parse_latency(hist(d, *base, *sel).stdout)
        assert stats["count"] == len([x for x in all_pairs if x[1]["tid"] == tid]), (sel, stats)
    # -f knows the fields --key knows of every event, as report -F does
    mine = len([x for x in all_pairs if x[1]["tid"] == tid])
    pid = tklib.report_lines(d)[0]["tid"]
    for flt in ("tid == %d" % tid, "common_pid == %d" % tid,
                'comm ~ "prog-lat*" && tid == %d' % tid,
                'common_comm == "prog-latency" && pid == %d && tid == %d' % (pid, tid)):
        stats, _, _, _ = parse_latency(hist(d, *base, "-f", flt).stdout)
        assert stats["count"] == mine, (flt, stats)
    assert mine == len(all_pairs)  # one thread: no start of another
    p = hist(d, *base, "-f", "tid != %d" % tid, check=False)
    assert p.returncode == 1 and p.stderr.startswith(
        "tracekit: no 'lat:done' matched a 'lat:start' on id"), p.stderr
    cpus = {}
    for x in all_pairs:
        cpus[x[1]["cpu"]] = cpus.get(x[1]["cpu"], 0) + 1
    for cpu, n in cpus.items():
        for flt in ("cpu == %d" % cpu, "common_cpu == %d" % cpu):
            stats, _, _, _ = parse_latency(hist(d, *base, "-f", flt).stdout)
            assert stats["count"] == n, (flt, stats, cpus)
    p = hist(d, *base, "--tid", str(tid + 100000), check=False)
    assert p.returncode == 1 and p.stderr.startswith(
        "tracekit: no 'lat:done' matched a 'lat:start' on id"), p.stderr
    p = hist(d, "-e", "lat:done", "--key", "id", "--tid", str(tid), check=False)
    assert p.returncode == 2 and p.stderr == (
        "tracekit: --pid, --tid and --comm select the starts of a latency (--from/--to)\n"), p.stderr


def test_latency_per_key():
    """--key: one histogram per value of the start event's key, each with
    the exact count, min and max of its pairs."""
    d, _, _ = record_latency()
    freq = clock_freq(d)
    ident = lambda e, side: int(tklib.fields(e["text"])["id"])
    pairs = expected_pairs(kernlib.report(d), "lat:start", "lat:done", ident)
    groups = {}
    for t, a, _, _ in pairs:
        groups.setdefault(ident(a, "from") // 100 * 100, []).append(t * 10**9 // freq)
    assert len(groups) == 4, groups.keys()  # 0-99, 100-199, 200 (the replaced), warm-up
    out = hist(d, "--from", "lat:start", "--to", "lat:done", "--match", "id",
               "--key", "id.buckets=100", "--unit", "ns").stdout
    assert out.startswith("# latency from lat:start to lat:done, matched on id, "
                          "one histogram per id.buckets=100\n"), out[:200]
    heads = re.findall(r"^\{ id: (\d+) ~ (\d+) \}$", out, re.M)
    stats = re.findall(r"^count (\d+)  min (\d+) ns .* max (\d+) ns$", out, re.M)
    got = {int(lo): tuple(map(int, st)) for (lo, _), st in zip(heads, stats)}
    assert len(heads) == len(stats) == len(groups), out
    assert got == {k: (len(v), min(v), max(v)) for k, v in groups.items()}, (got, groups)
    assert [int(lo) for lo, _ in heads] == [1000000, 0, 100, 200]  # as they first started


def test_user_function_names():
    """Function addresses of -p function_graph are named from the trace's
    saved symbols, as report names them: --key func.sym, and the match
    field of the slowest calls; one histogram per thread."""
    d = os.path.join(tklib.tmpdir(), "t")
    tklib.record(d, [tklib.prog("functree"), "tree"], "-p", "function_graph")
    out = hist(d, "-e", "ftrace:funcgraph_entry", "--key", "func.sym").stdout
    assert "\n# keys: func.sym  values: hitcount  sort: count\n" in out, out[:300]
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"^\{ func: (\S+) +\} hitcount: +(\d+)$", out, re.M)}
    # functree.c: leaf 100 times from main, 50 in each of 2 threads
    assert (counts.get("leaf"), counts.get("worker"), counts.get("thread_main"),
            counts.get("recurse")) == (200, 2, 2, 5), out
    out = hist(d, "--from", "ftrace:funcgraph_entry", "--to", "ftrace:funcgraph_exit",
               "--match", "tid,func", "--key", "tid", "--slowest", "1").stdout
    slow = re.findall(r"  tid=(\d+) func=(\S+)$", out, re.M)
    assert [f for _, f in slow] == ["main"], out[-400:]
    tids = re.findall(r"^\{ tid: (\d+) \}$", out, re.M)
    assert len(tids) == 3 and tids[0] == slow[0][0], tids  # main, then 2 threads
    # leaf(): 200 calls, each a pair
    out = hist(d, "--from", "ftrace:funcgraph_entry", "--to", "ftrace:funcgraph_exit",
               "--match", "tid,func", "-f", "func == 0x%x" % leaf_address(d)).stdout
    assert re.search(r"^count 200  ", out, re.M), out


def test_filter_by_function_name():
    """-f names a user function as the kernel's FIELD.function does (or
    a pointer compared with a quoted string): a latency's starts, and
    the events of a histogram; a name no function has matches nothing;
    an order on a name is one error line."""
    d = os.path.join(tklib.tmpdir(), "t")
    tklib.record(d, [tklib.prog("functree"), "tree"], "-p", "function_graph")
    lat = ("--from", "ftrace:funcgraph_entry", "--to", "ftrace:funcgraph_exit",
           "--match", "tid,func", "--unit", "ns", "--slowest", "1000")
    by_addr = hist(d, *lat, "-f", "func == 0x%x" % leaf_address(d)).stdout
    stats, _, slow, _ = parse_latency(by_addr)
    assert stats["count"] == 200 and len(slow) == 200, stats
    assert {s["key"].split()[1] for s in slow} == {"func=leaf"}, slow[:3]
    for f in ('func == "leaf"', "func.function == leaf", "func.function ~ 'lea*'",
              "func.function == leaf && depth < 1000"):
        assert hist(d, *lat, "-f", f).stdout == by_addr, f
    # every entry but leaf's: the 200 leaf() starts are the ones left out
    out = hist(d, *lat, "-f", 'func.function != "leaf"').stdout
    m = re.search(r"^not selected: (\d+) starts ", out, re.M)
    assert m and int(m.group(1)) == 200, out
    out = hist(d, "-e", "ftrace:funcgraph_entry", "--key", "func.sym",
               "-f", 'func.function ~ "deep*" || func == "recurse"').stdout
    rows = re.findall(r"^\{ func: (\S+) +\} hitcount: +(\d+)$", out, re.M)
    assert sorted(rows) == [("deep1", "1"), ("deep2", "1"), ("deep3", "1"),
                            ("recurse", "5")], out
    out = hist(d, "-e", "ftrace:funcgraph_entry", "--key", "func.sym",
               "-f", "func.function == no_such_function").stdout
    assert re.search(r"^    Hits: 0$", out, re.M), out
    p = hist(d, *lat, "-f", "func.function < leaf", check=False)
    assert p.returncode == 1 and p.stdout == "" and p.stderr == (
        "tracekit: bad filter 'func.function < leaf' for 'ftrace:funcgraph_entry' at "
        "column 15: operator '<' "
        "does not compare a function's name: use '==', '!=' or '~'\n"), p.stderr
    p = hist(d, *lat, "-f", "depth.function == leaf", check=False)
    assert p.returncode == 1 and p.stderr.startswith(
        "tracekit: bad filter 'depth.function == leaf' for 'ftrace:funcgraph_entry' at "
        "column 6: "
        "postfix '.function' needs an address, 'depth' is"), p.stderr


def leaf_address(d):
    """leaf's address in the recorded process, from the table of func.hex."""
    hexes = hist(d, "-e", "ftrace:funcgraph_entry", "--key", "func.hex").stdout
    m = re.search(r"^\{ func: (0x[0-9a-f]+) +\} hitcount: +200$", hexes, re.M)
    assert m, hexes
    return int(m.group(1), 16)


def test_marker_sites_of_one_name():
    """Two tk_mark call sites of one name, one without an argument (it
    fires first) and one with two: every hit of both is counted, in the
    table and as latency starts, with no warning."""
    d = os.path.join(tklib.tmpdir(), "t")
    tklib.record(d, [tklib.prog("marks"), "40"])
    tid = {e["tid"] for e in tklib.report_lines(d)}.pop()
    p = hist(d, "-e", "app:tick", "--key", "tid")
    assert p.stderr == "", p.stderr
    assert re.findall(r"^\{ tid: +(\d+) \} hitcount: +(\d+)$", p.stdout, re.M) == \
        [(str(tid), "80")], p.stdout
    assert re.search(r"^    Hits: 80$", p.stdout, re.M), p.stdout
    # the one without an argument has none of the other's fields
    p = hist(d, "-e", "app:tick", "--key", "a0", check=False)
    assert p.returncode == 1 and p.stderr.startswith(
        "tracekit: event 'app:tick' has no field 'a0'"), p.stderr
    # each tick starts an interval that the next ends: 79 of them
    p = hist(d, "--from", "app:tick", "--to", "app:tick", "--match", "tid")
    assert p.stderr == "" and re.search(r"^count 79  ", p.stdout, re.M), p.stdout


def test_table_exact():
    d, gaps, sums = record_latency()
    p = hist(d, "-e", "lat:done", "--key", "kind", "--val", "gap", "--sort", "kind")
    rows = [tuple(map(int, m.groups())) for m in re.finditer(
        r"^\{ kind: +(\d+) \} hitcount: +(\d+)  gap: +(\d+)$", p.stdout, re.M)]
    want = [(k, sums[k][1] + (2 if k == 0 else 0), sums[k][0]) for k in range(5)]
    assert rows == want + [(9, 1, 0)], (rows, want)
    assert re.search(r"^    Hits: %d$" % (N + 3), p.stdout, re.M), p.stdout
    assert re.search(r"^    Entries: 6$", p.stdout, re.M), p.stdout
    # count sorted largest first, --limit, a filter, two keys
    p = hist(d, "-e", "lat:done", "--key", "kind,comm", "--limit", "1", "-f", "kind < 9")
    first = re.findall(r"^\{ kind: +(\d+), comm: (\S+) +\} hitcount: +(\d+)$", p.stdout, re.M)
    assert first == [("0", "prog-latency", str(sums[0][1] + 2))], p.stdout
    # -F, report's name for the filter, is the same option
    assert hist(d, "-e", "lat:done", "--key", "kind,comm", "--limit", "1", "-F",
                "kind < 9").stdout == p.stdout
    assert re.search(r"^    Filtered out: 1$", p.stdout, re.M), p.stdout
    # the gaps in power-of-two buckets (ftrace's: the power of two at or
    # above the value), smallest first
    p = hist(d, "-e", "lat:done", "--key", "gap.log2", "--sort", "gap")
    got = [tuple(map(int, m.groups())) for m in re.finditer(
        r"^\{ gap: +~ 2\^(\d+) \} hitcount: +(\d+)$", p.stdout, re.M)]
    want = {0: 3}  # the warm-up and the two extra dones have gap 0
    for g in gaps.values():
        b = (g - 1).bit_length() if g > 1 else 0
        want[b] = want.get(b, 0) + 1
    assert got == sorted(want.items()), (got, want)


def test_bad_input():
    d, _, _ = record_latency(10)
    cases = [
        (["-e", "lat:dnoe", "--key", "id"],
         "tracekit: event 'lat:dnoe' is not in trace '%s' (did you mean 'lat:done'?)" % d),
        (["-e", "lat:done", "--key", "kindd"],
         "tracekit: event 'lat:done' has no field 'kindd' (did you mean 'kind'?)"),
        (["--from", "lat:start", "--to", "lat:done", "--match", "idd"],
         "tracekit: event 'lat:start' has no field 'idd' (did you mean 'id'?)"),
        (["--from", "lat:done", "--to", "lat:start", "--match", "id"],
         "tracekit: no 'lat:start' matched a 'lat:done' on id in trace '%s' "
         "(13 lat:done, 14 lat:start)" % d),
        (["-e", "lat:done", "--key", "kind.log3"],
         "tracekit: key 'kind.log3': unknown modifier '.log3' (use hex, log2, "
         "buckets=N, execname or sym)"),
        (["-e", "lat:done", "--key", "kind", "--sort", "gap"],
         "tracekit: --sort 'gap': 'gap' is neither count nor a key or value"),
        (["--from", "lat:start", "--to", "lat:done"],
         "tracekit: a latency needs --from, --to and --match"),
    ]
    for args, line in cases:
        p = hist(d, *args, check=False)
        assert p.returncode != 0 and p.stdout == "" and p.stderr == line + "\n", \
            (args, p.returncode, p.stdout[:200], p.stderr)
    p = hist(os.path.join(d, "nosuch"), "-e", "lat:done", "--key", "id", check=False)
    assert p.returncode == 1 and p.stderr.startswith("tracekit: ") and \
        len(p.stderr.splitlines()) == 1, p.stderr


def test_slowest_marks_lost_events():
    """8 KiB buffers lose events: an interval between two test:seq events
    of a thread with events lost between them (a 'lost N events' slice
    of the Chrome JSON, from the last event before to the first after)
    is counted on the 'lost events:' line and marked in the slowest;
    none other is.  Bursts of 2000 events 2 ms apart, so that each
    thread loses in the middle of its events (a thread firing without
    pause could record its first packet only, then lose the rest: no
    interval between two of its events)."""
    import json
    d = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(d, [tklib.prog("basic"), "-n", "200000", "-t", "2", "-s", "2000,2000"],
                     "-b", "8", timeout=120)
    assert tklib.summary(p.stderr)[1]["lost"] > 0, p.stderr
    tklib.tracekit("convert", "-q", "--to", "chrome", d, "-o", d + ".json")
    events = json.load(open(d + ".json"))["traceEvents"]
    ns = lambda us: int(round(us * 1000))  # noqa: E731
    seq = {}
    for e in events:
        if e["name"] == "test:seq":
            seq.setdefault(e["tid"], set()).add(ns(e["ts"]))
    gaps = set()
    for e in events:
        if e.get("cat") != "lost":
            continue
        tid = e["tid"] & ~(1 << 29)
        a, b = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        if a in seq.get(tid, ()) and b in seq[tid]:
            gaps.add((tid, tklib.secs_text(a), b - a))
    assert gaps, "no loss between two events of a thread"
    out = hist(d, "--from", "test:seq", "--to", "test:seq", "--match", "thread",
               "--slowest", "200", "--unit", "ns").stdout
    m = re.search(r"^lost events: (\d+) intervals have events lost in between", out, re.M)
    assert m and int(m.group(1)) == len(gaps), (out[-3000:], gaps)
    slow = re.findall(r"^\s+(\d+) ns  from\s+\S+-(\d+) \[\d+\] (\d+\.\d+)  to .*?"
                      r"thread=\d+(  \[events lost in between\])?$", out, re.M)
    assert len(slow) == 200, out[-3000:]
    for dur, tid, start, mark in slow:
        # the same interval: its start (as printed) and its length (the
        # JSON's is a difference of ns, hist's ticks in ns: 1 ns apart)
        gap = [g for g in gaps if g[:2] == (int(tid), start) and abs(g[2] - int(dur)) <= 1]
        assert bool(mark) == bool(gap), (dur, tid, start, mark, gaps)
    assert any(s[3] for s in slow), out[-3000:]


def test_kernel_syscall_pairs():
    """sys_enter_getppid -> sys_exit_getppid of a thread: one pair per
    call, on a real recording; the histogram of sys_enter_getppid by
    common_pid counts the same calls."""
    n = 300
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        p = tklib.record(d, [GETPPID, str(n)], "-e", "test:phase",
                         "-e", "syscalls:sys_enter_getppid", "-e", "syscalls:sys_exit_getppid",
                         "-F")
    events = kernlib.report(d)
    pid = [e["tid"] for e in events if e["event"] == "test:phase"][0]
    marks = [i for i, e in enumerate(events) if e["event"] == "test:phase"]
    inside = [e for e in events[marks[0]:marks[1]] if e["name"] == "sys_enter_getppid"]
    assert len(inside) == n, len(inside)  # the program's calls, as report shows them
    enters = [e for e in events if e["name"] == "sys_enter_getppid" and e["tid"] == pid]
    exits = [e for e in events if e["name"] == "sys_exit_getppid" and e["tid"] == pid]
    assert len(enters) == len(exits) >= n
    out = hist(d, "--from", "syscalls:sys_enter_getppid", "--to", "syscalls:sys_exit_getppid",
               "--match", "common_pid", "--unit", "ns", "--slowest", "1").stdout
    stats, unmatched, slow, _ = parse_latency(out)
    pairs = expected_pairs(events, "syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid",
                           lambda e, side: e["tid"])
    freq = clock_freq(d)
    ns = sorted(t * 10**9 // freq for t, _, _, _ in pairs)
    assert stats["count"] == len(enters) == len(ns), (stats, len(enters))
    assert (stats["min"], stats["max"]) == (ns[0], ns[-1])
    assert unmatched == (0, 0, 0)
    assert slow[0]["key"] == "common_pid=%d" % pid
    out = hist(d, "-e", "syscalls:sys_enter_getppid", "--key", "common_pid.execname").stdout
    m = re.search(r"^\{ common_pid: (\S+) \[(\d+)\] \} hitcount: +(\d+)$", out, re.M)
    assert m and int(m.group(2)) == pid and int(m.group(3)) == len(enters), out
    # -f on the thread's name, number and CPU, as --key has them
    for flt in ('common_comm ~ "prog-kstat*"', 'comm ~ "prog-kstat*"', "tid == %d" % pid):
        out = hist(d, "-e", "syscalls:sys_enter_getppid", "--key", "common_pid",
                   "-f", flt).stdout
        assert re.findall(r"^\{ common_pid: +(\d+) \} hitcount: +(\d+)$", out, re.M) == \
            [(str(pid), str(len(enters)))], (flt, out)
    for cpu in {e["cpu"] for e in enters}:
        out = hist(d, "-e", "syscalls:sys_enter_getppid", "--key", "common_pid",
                   "-f", "common_pid == %d && cpu == %d" % (pid, cpu)).stdout
        assert re.search(r"^    Hits: %d$" % len([e for e in enters if e["cpu"] == cpu]),
                         out, re.M), out
    assert "prog-kstat-getppid".startswith(m.group(1)), m.group(1)


def test_kernel_wakeup_to_switch():
    """sched_wakeup -> sched_switch of the woken pid (pid=next_pid), on a
    program that sleeps: hist's pairs are those the trace shows."""
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        tklib.record(d, [GETPPID, "1", "30"], "-e", "test:phase",
                     "-e", "sched:sched_wakeup", "-e", "sched:sched_switch")
    events = kernlib.report(d)
    pid = [e["tid"] for e in events if e["event"] == "test:phase"][0]

    def key(e, side):
        if side == "from":
            m = re.search(r"(?:\bpid=|:)(\d+) ", e["text"])  # kernel or plugin text
            assert m, e["text"]
            return int(m.group(1))
        return kernlib.sched_switch(e["text"])[2]
    pairs = expected_pairs(events, "sched:sched_wakeup", "sched:sched_switch", key)
    mine = [x for x in pairs if x[3] == pid]
    assert mine, "no wakeup of pid %d followed by its switch-in" % pid
    out = hist(d, "--from", "sched:sched_wakeup", "--to", "sched:sched_switch",
               "--match", "pid=next_pid", "--unit", "ns", "--slowest", "100000").stdout
    stats, _, slow, _ = parse_latency(out)
    freq = clock_freq(d)
    ns = sorted(t * 10**9 // freq for t, _, _, _ in pairs)
    assert (stats["count"], stats["min"], stats["max"]) == (len(ns), ns[0], ns[-1]), stats
    assert len([s for s in slow if s["key"] == "pid=%d" % pid]) == len(mine)
