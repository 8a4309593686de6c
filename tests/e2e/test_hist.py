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


def expected_pairs(events, start_ev, end_ev, key):
    """The latency pairs hist must find: (ticks, start event, end event,
    key) for each end whose key has a pending start; a later start
    replaces a pending one."""
    pending, pairs = {}, []
    for e in events:
        if e["event"] == end_ev:
            k = key(e, "to")
            if k in pending:
                pairs.append((e["ts"] - pending[k]["ts"], pending.pop(k), e, k))
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
