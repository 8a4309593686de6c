# SPDX-License-Identifier: MIT
"""End-to-end tests of the runtime's harder cases: events fired from
signal handlers that interrupt the fast path, fork, dlopen'd modules,
enable/disable and probes changed while threads fire, C++ (and the
public header in strict ISO modes and under clang), markers.

The programs are tests/progs/{signal,fork,dlopen,plugin,toggle,cpp}; each
prints what it emitted, and the tests compare that with what `tracekit
report` and babeltrace2 read back.
"""
import os
import re
import shutil

from tklib import (BUILD, SRC, Skip, babeltrace2, babeltrace_lines, fields, prog, record,
                   report_lines,
                   run, summary, tmpdir, tracekit)

DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven",
          "eight", "nine"]
PLUGIN = os.path.join(BUILD, "tests", "progs", "libtkplugin.so")


# ----------------------------------------------------------------- helpers

class Checks:
    """Collects failed checks, so that a test reports all of them at once."""

    def __init__(self):
        self.failed = []

    def check(self, cond, msg):
        if not cond:
            self.failed.append(msg)
        return cond

    def done(self):
        assert not self.failed, "\n  - " + "\n  - ".join(self.failed)


def counts(stdout):
    """'key v1 v2 ...' lines -> {key: [v1, v2, ...]} (ints where possible);
    a key seen more than once keeps a list of lists under key + 's'."""
    out = {}
    for line in stdout.splitlines():
        parts = line.split()
        if not parts:
            continue
        vals = [int(v) if re.fullmatch(r"-?\d+", v) else v for v in parts[1:]]
        out.setdefault(parts[0] + "s", []).append(vals)
        out[parts[0]] = vals
    return out


def command_ok(p, what="the program"):
    """record's stderr says nothing about the command failing."""
    bad = [l for l in p.stderr.splitlines()
           if "exited with status" in l or "killed by signal" in l]
    assert not bad, "%s failed under record: %s\nstdout: %s" % (
        what, bad, p.stdout[-2000:])


def header_processes(outdir):
    """{pid: comm} from the '# process PID (COMM) ...' lines of report."""
    p = tracekit("report", outdir, timeout=300)
    procs = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^# process (\d+) \(([^)]*)\)", line)
        if m:
            procs[int(m.group(1))] = m.group(2)
    return procs


def bt_check(c, outdir, expected):
    """babeltrace2 reads OUTDIR/user without error and finds EXPECTED
    events; returns its event lines."""
    p = run([babeltrace2(), os.path.join(outdir, "user")], timeout=600, check=False)
    lines = [l for l in p.stdout.splitlines() if l.startswith("[")]
    errs = [l for l in p.stderr.splitlines() if " E " in l or "ERROR" in l]
    c.check(p.returncode == 0, "babeltrace2 exited %d: %s" % (
        p.returncode, (errs or p.stderr.splitlines() or [""])[0][:400]))
    c.check(len(lines) == expected,
            "babeltrace2 read %d events, report %d" % (len(lines), expected))
    return lines


def bt_count(c, outdir, expected):
    """bt_check for big traces: babeltrace2 decodes every event of
    OUTDIR/user (its counter sink: no text to make and to read back) and
    counts EXPECTED."""
    p = run([babeltrace2(), os.path.join(outdir, "user"), "-c", "sink.utils.counter",
             "--params=step=+0"], timeout=600, check=False)
    m = re.search(r"^ *(\d+) Event messages$", p.stdout, re.M)
    c.check(p.returncode == 0 and p.stderr == "", "babeltrace2 exited %d: %s" % (
        p.returncode, p.stderr[:400]))
    c.check(m and int(m.group(1)) == expected, "babeltrace2 counted %s events, report %d" % (
        m and m.group(1), expected))


def fast_report(outdir):
    """Like tklib.report_lines, for big traces: (tid, ts, event, text)
    tuples, from `tracekit report --no-header`, which must exit 0 and
    print nothing on stderr; the lines that mark losses are left out."""
    p = tracekit("report", outdir, "--no-header", timeout=300, check=False)
    assert p.returncode == 0 and p.stderr == "", "report: exit %d, stderr %r" % (
        p.returncode, p.stderr[:500])
    out = []
    for line in p.stdout.splitlines():
        if line.endswith(" EVENTS DROPPED]"):
            continue
        head, event, text = line.split(": ", 2)
        who, _, rest = head.rpartition(" [")
        out.append((int(who.rpartition("-")[2]), rest.rpartition(" ")[2], event, text))
    return out


def kv(text):
    """fields() for texts whose values have no spaces."""
    return dict(x.split("=", 1) for x in text.split(" "))


# ------------------------------------------------------ 1. signal nesting

def _signal(warm):
    out = os.path.join(tmpdir(), "t")
    W = 4
    cmd = [prog("signal"), "-T", str(W), "-m", "real,prof,kill", "-i", "50",
           "-n", "30000", "-H", "1500", "-c", "100000"] + (["-w"] if warm else [])
    # 8 MiB per thread holds every event of a worker (at most 100000 loop
    # events of 21 bytes, and its handlers') even if the recorder never
    # drains: what is lost can only be lost to nesting.
    p = record(out, cmd, "-b", "8192", timeout=120)
    command_ok(p)
    got = counts(p.stdout)
    workers = got["workers"]
    rows, _ = summary(p.stderr)
    by_tid = {r["tid"]: r for r in rows}
    lines = fast_report(out)
    c = Checks()
    c.check(len(workers) == W, "program output: %s" % p.stdout)
    c.check(set(by_tid) == {w[1] for w in workers},
            "streams %s, workers %s: only the workers fire" % (sorted(by_tid), workers))
    c.check(all(l[2] in ("sig:loop", "sig:handler", "sig:start") for l in lines),
            "unexpected events in the trace")
    ns_all = []
    per_tid = {}
    for l in lines:
        per_tid.setdefault(l[0], []).append(l)
    for index, tid, n_loop, n_handler in workers:
        mine = per_tid.get(tid, [])
        row = by_tid.get(tid, dict(events=0, lost=0))
        what = "worker %d (tid %d)" % (index, tid)
        loop = [l for l in mine if l[2] == "sig:loop"]
        handler = [l for l in mine if l[2] == "sig:handler"]
        start = [l for l in mine if l[2] == "sig:start"]
        c.check([kv(l[3]).get("worker") for l in start] ==
                ([str(index)] if warm else []), "%s: sig:start events: %s" % (
                    what, [l[3] for l in start]))

        # The loop is never nested: none of its events may be lost.
        seqs = [int(kv(l[3])["seq"]) for l in loop]
        c.check(seqs == list(range(n_loop)),
                "%s: sig:loop: %d of %d recorded, not seq 0..%d in order (first "
                "difference at index %s)" % (
                    what, len(seqs), n_loop, n_loop - 1,
                    next((i for i, (a, b) in enumerate(zip(seqs, range(n_loop)))
                          if a != b), min(len(seqs), n_loop))))
        c.check(all(kv(l[3])["msg"] == DIGITS[s % 10]
                    for l, s in zip(loop, seqs)),
                "%s: sig:loop: msg does not match seq" % what)

        # A handler's event is recorded or counted as lost: never both,
        # never neither.
        ns_all += [int(kv(l[3])["n"]) for l in handler]
        c.check(all(kv(l[3])["signo"] in ("10", "14", "27") for l in handler),
                "%s: sig:handler: bad signo" % what)
        c.check(n_handler > 0, "%s: no handler event fired: nothing was tested" % what)
        c.check(len(handler) + row["lost"] == n_handler,
                "%s: handler events: %d recorded + %d lost = %d, but %d were fired "
                "(%d neither recorded nor counted as lost)" % (
                    what, len(handler), row["lost"], len(handler) + row["lost"],
                    n_handler, n_handler - len(handler) - row["lost"]))
        c.check(row["events"] == len(mine),
                "%s: summary says %d events, report shows %d" % (what, row["events"], len(mine)))

        # Timestamps of one stream do not go backwards (report keeps a
        # stream's order) and stay within the run.
        ts = [float(l[1]) for l in mine]
        back = [i for i in range(1, len(ts)) if ts[i] < ts[i - 1]]
        c.check(not back, "%s: timestamps go backwards at %d places, first %s -> %s" % (
            what, len(back), mine[back[0] - 1][1] if back else "",
            mine[back[0]][1] if back else ""))
    total_handler = got["handler"][0]
    total_lost = sum(r["lost"] for r in rows)
    c.check(len(set(ns_all)) == len(ns_all) and all(0 <= n < total_handler for n in ns_all),
            "sig:handler: duplicate or out-of-range n")
    c.check(total_lost > 0,
            "no event was lost to nesting in %d handler runs: the handlers "
            "never interrupted the fast path?" % total_handler)
    ts = [float(l[1]) for l in lines]
    span = max(ts) - min(ts) if ts else 0
    c.check(span < 60, "events span %.0f s of a run that took seconds "
            "(first %s, last %s)" % (span, min(ts), max(ts)))

    bt_check(c, out, len(lines))
    c.done()


def test_signal_nesting():
    """Handlers interrupt threads whose buffer exists (SIGALRM from a
    50 us ITIMER_REAL, SIGPROF, SIGUSR1 from tgkill every 50 us)."""
    _signal(warm=True)


def test_signal_nesting_first_event():
    """Same, but each thread's first event (which creates its buffer) is
    fired while the handlers are already firing theirs."""
    _signal(warm=False)


# ------------------------------------------------------------------ 2. fork

def _fork_record(*opts, args=()):
    out = os.path.join(tmpdir(), "t")
    p = record(out, [prog("fork")] + list(args), *opts, timeout=120)
    command_ok(p)
    got = counts(p.stdout)
    parent_pid, parent_tid, parent_count = got["parent"]
    children = [(pid, status) for pid, status in got.get("childs", [])]
    assert all(st == 0 for _, st in children), "a child failed: %s" % children
    return out, p, got, parent_pid, parent_tid, parent_count, [pid for pid, _ in children]


def _check_parent(c, lines, tid, total, before):
    par = [l for l in lines if l["event"] == "fork:parent"]
    c.check(all(l["tid"] == tid for l in par),
            "fork:parent events outside the forking thread's stream")
    f = [fields(l["text"]) for l in par]
    c.check([int(x["seq"]) for x in f] == list(range(total)),
            "fork:parent: %d events, expected seq 0..%d" % (len(par), total - 1))
    c.check([x["phase"] for x in f] == ["before"] * before + ["after"] * (total - before),
            "fork:parent: wrong phases")


def test_fork():
    """The child's events are in a stream of its own, with its pid; the
    parent's stream has only the parent's events, every one of them."""
    A, B, M, K = 120, 80, 50, 3
    out, p, got, ppid, ptid, pcount, kids = _fork_record(
        args=["-a", str(A), "-b", str(B), "-c", str(M), "-k", str(K)])
    c = Checks()
    c.check(pcount == A + B and ppid == ptid, "program output: %s" % got)
    c.check(len(kids) == K and len(set(kids)) == K, "children: %s" % kids)
    lines = report_lines(out)
    _check_parent(c, lines, ppid, A + B, A)
    c.check(all(l["comm"] == "prog-fork" for l in lines if l["tid"] == ppid),
            "parent's comm is not prog-fork")
    for k, kid in enumerate(kids):
        mine = [l for l in lines if l["tid"] == kid]
        c.check(all(l["event"] == "fork:child" for l in mine),
                "child %d: other events in its stream" % kid)
        f = [fields(l["text"]) for l in mine]
        c.check([(int(x["child"]), int(x["seq"])) for x in f] ==
                [(k, i) for i in range(M)],
                "child %d (#%d): %d events, expected child=%d seq 0..%d" % (
                    kid, k, len(mine), k, M - 1))
        c.check(all(l["comm"] == "fork-child" for l in mine),
                "child %d: comm is not fork-child" % kid)
    c.check(len(lines) == A + B + K * M, "%d events in all, expected %d" % (
        len(lines), A + B + K * M))

    rows, total = summary(p.stderr)
    by_tid = {r["tid"]: r for r in rows}
    c.check(set(by_tid) == {ppid} | set(kids), "streams: %s" % rows)
    c.check(by_tid.get(ppid, {}).get("events") == A + B and
            by_tid.get(ppid, {}).get("pid") == ppid, "parent's stream: %s" % by_tid.get(ppid))
    for kid in kids:
        r = by_tid.get(kid, {})
        c.check(r.get("pid") == kid and r.get("events") == M and r.get("lost") == 0,
                "child %d's stream (pid, events, lost): %s" % (kid, r))
    procs = header_processes(out)
    c.check(procs.get(ppid) == "prog-fork", "header: process %d: %s" % (ppid, procs))
    for kid in kids:
        c.check(procs.get(kid) == "fork-child", "header: no '# process %d (fork-child)' "
                "line: %s" % (kid, procs))

    bt = bt_check(c, out, len(lines))
    for kid in kids:
        n = sum(1 for l in bt if "fork:child" in l and "pid = %d, tid = %d" % (kid, kid) in l)
        c.check(n == M, "babeltrace2: %d fork:child events with pid %d, expected %d" % (
            n, kid, M))
    c.done()


def test_fork_no_follow():
    """--no-follow: the children's events are not recorded, all of the
    parent's are."""
    A, B, M, K = 120, 80, 50, 2
    out, p, got, ppid, ptid, pcount, kids = _fork_record(
        "--no-follow", args=["-a", str(A), "-b", str(B), "-c", str(M), "-k", str(K)])
    c = Checks()
    c.check(pcount == A + B and len(kids) == K, "program output: %s" % got)
    lines = report_lines(out)
    c.check(not [l for l in lines if l["event"] == "fork:child" or l["tid"] in kids],
            "children's events recorded despite --no-follow")
    _check_parent(c, lines, ppid, A + B, A)
    c.check(len(lines) == A + B, "%d events, expected %d" % (len(lines), A + B))
    rows, _ = summary(p.stderr)
    c.check([r["tid"] for r in rows] == [ppid], "streams: %s" % rows)
    procs = header_processes(out)
    c.check(not set(kids) & set(procs), "header lists a child: %s" % procs)
    bt_check(c, out, len(lines))
    c.done()


def test_fork_from_thread():
    """A second thread forks (10 times) while a third fires events: every
    stream of the parent still has its exact events, each child its own."""
    A, B, M, K = 100, 100, 20, 10
    out, p, got, ppid, ftid, fcount, kids = _fork_record(  # -v: each of the 12 streams
        "-b", "8192", "-v", args=["-t", "-a", str(A), "-b", str(B), "-c", str(M), "-k", str(K)])
    bg_tid, bg_count = got["bg"]
    c = Checks()
    c.check(fcount == A + B and ftid != ppid and len(kids) == K,
            "program output: %s" % got)
    lines = report_lines(out)
    _check_parent(c, lines, ftid, A + B, A)
    bg = [l for l in lines if l["event"] == "fork:bg"]
    c.check(all(l["tid"] == bg_tid for l in bg), "fork:bg events outside bg's stream")
    bf = [fields(l["text"]) for l in bg]
    c.check([int(x["seq"]) for x in bf] == list(range(bg_count)),
            "fork:bg: %d events recorded, %d fired (seq 0..%d expected)" % (
                len(bg), bg_count, bg_count - 1))
    c.check(all(int(x["check"]) == int(x["seq"]) * 7 + 3 for x in bf),
            "fork:bg: check != seq * 7 + 3")
    for k, kid in enumerate(kids):
        mine = [l for l in lines if l["tid"] == kid]
        c.check([(l["event"], fields(l["text"]).get("child"), fields(l["text"]).get("seq"))
                 for l in mine] == [("fork:child", str(k), str(i)) for i in range(M)],
                "child %d (#%d): %d events, expected child=%d seq 0..%d" % (
                    kid, k, len(mine), k, M - 1))
    c.check(len(lines) == A + B + bg_count + K * M, "%d events in all, expected %d" % (
        len(lines), A + B + bg_count + K * M))
    rows, _ = summary(p.stderr)
    by_tid = {r["tid"]: r for r in rows}
    c.check(set(by_tid) == {ftid, bg_tid} | set(kids), "streams: %s" % rows)
    c.check(all(r["lost"] == 0 for r in rows), "events lost: %s" % rows)
    c.check(by_tid.get(bg_tid, {}).get("events") == bg_count and
            by_tid.get(ftid, {}).get("events") == A + B, "summary: %s" % rows)
    for kid in kids:
        c.check(by_tid.get(kid, {}).get("pid") == kid, "child %d's stream: %s" % (
            kid, by_tid.get(kid)))
    bt_check(c, out, len(lines))
    c.done()


# ---------------------------------------------------------------- 3. dlopen

def _dlopen(n, rounds, *opts):
    out = os.path.join(tmpdir(), "t")
    p = record(out, [prog("dlopen"), PLUGIN, str(n), str(rounds)], *opts)
    command_ok(p)
    got = counts(p.stdout)
    assert got.get("plugins") == [[r, n + 1] for r in range(rounds)], p.stdout
    return out, p, report_lines(out)


def _plugin_expected(n, rounds, keep=lambda ev, i: True):
    exp = []
    for r in range(rounds):
        if keep("hello", None):
            exp.append(("plugin:hello", "round=%d greeting=hi from the plugin" % r))
        for i in range(n):
            if keep("value", i):
                exp.append(("plugin:value", "round=%d i=%d half=%s" % (r, i, "%g" % (i / 2.0))))
    return exp


def test_dlopen():
    """Events of a dlopen'd module, recorded like the program's own, in
    two dlopen/dlclose rounds; left out when not asked for."""
    N, R = 25, 2
    c = Checks()
    # Everything (default: all).
    out, p, lines = _dlopen(N, R)
    got = [(l["event"], l["text"]) for l in lines]
    exp = ([("test:phase", "before")] + _plugin_expected(N, R) +
           [("test:phase", "after")])
    c.check(got == exp, "all events: got %d events, expected %d; first difference: %s" % (
        len(got), len(exp), next(((g, e) for g, e in zip(got, exp) if g != e), None)))
    bt = bt_check(c, out, len(lines))
    c.check(sum(1 for l in bt if "plugin:value" in l) == N * R,
            "babeltrace2: wrong number of plugin:value events")

    # Only the program's provider: no plugin event.
    out, p, lines = _dlopen(N, R, "-e", "test:*")
    got = [(l["event"], l["text"]) for l in lines]
    c.check(got == [("test:phase", "before"), ("test:phase", "after")],
            "-e test:*: %d events: %s" % (len(got), got[:4]))

    # Only the plugin's events (not in the program's ELF files: --force).
    out, p, lines = _dlopen(N, R, "--force", "-e", "plugin:*")
    got = [(l["event"], l["text"]) for l in lines]
    exp = _plugin_expected(N, R)
    c.check(got == exp, "--force -e plugin:*: %d events, expected %d; first "
            "difference: %s" % (len(got), len(exp),
                                next(((g, e) for g, e in zip(got, exp) if g != e), None)))
    bt_check(c, out, len(lines))

    # Without --force the pre-check refuses an event the ELF files lack.
    q = tracekit("record", "-o", os.path.join(tmpdir(), "t"), "-e", "plugin:*", "--",
                 prog("dlopen"), PLUGIN, str(N), str(R), check=False)
    c.check(q.returncode != 0 and "plugin:*" in q.stderr and "plugin " not in q.stdout,
            "-e plugin:* without --force: exit %d, stderr %r, stdout %r" % (
                q.returncode, q.stderr[-300:], q.stdout[-200:]))
    c.done()


def test_dlopen_filter():
    """A filter on an event of a dlopen'd module."""
    N, R = 25, 2
    out, p, lines = _dlopen(N, R, "--force", "-e", "plugin:value", "-f", "i >= 20 && round == 1")
    got = [(l["event"], l["text"]) for l in lines]
    exp = [e for e in _plugin_expected(N, R, lambda ev, i: ev == "value" and i >= 20)
           if e[1].startswith("round=1 ")]
    assert got == exp, "got %s, expected %s" % (got, exp)


def test_list_plugin():
    """tracekit list reads a shared module's events and fields."""
    p = tracekit("list", PLUGIN)
    c = Checks()
    blocks = {}
    for block in p.stdout.strip().split("\n\n"):
        head, _, rest = block.partition("\n")
        blocks[head.strip()] = rest
    c.check(set(blocks) == {"plugin:hello", "plugin:value"}, "events listed: %s" % list(blocks))
    hello, value = blocks.get("plugin:hello", ""), blocks.get("plugin:value", "")
    for text, want in ((hello, "field:int32_t round;"),
                       (hello, "field:__data_loc char[] greeting;"),
                       (hello, 'print fmt: "round=%d greeting=%s", round, greeting'),
                       (value, "field:int32_t round;"),
                       (value, "field:uint64_t i;"),
                       (value, "field:double half;"),
                       (value, 'print fmt: "round=%d i=%lu half=%g", round, i, half')):
        c.check(want in text, "%r missing from:\n%s" % (want, text))
    names = tracekit("list", "--names", PLUGIN).stdout.split()
    c.check(sorted(names) == ["plugin:hello", "plugin:value"], "--names: %s" % names)
    c.done()


# ---------------------------------------------------------------- 4. toggle

def test_toggle():
    """10,000 tk_enable/tk_disable and 10,000 probe connect/disconnect
    while two threads fire the event: nothing breaks, every recorded event
    is whole, the probe never sees bad arguments nor runs late.  The
    threads pause 10 us between events (-p): each toggle still has events
    on both sides of it.  A toggle costs ~1 ms while both CPUs are busy
    (a disconnect waits for the firing threads to leave the probe):
    100,000 of them took this test 77 to 130 s."""
    out = os.path.join(tmpdir(), "t")
    T, N = 2, 10000
    p = record(out, [prog("toggle"), "-n", str(N), "-t", str(T), "-p", "10000"],
               "-e", "tog:start", timeout=120)
    command_ok(p, "prog-toggle")
    got = counts(p.stdout)
    c = Checks()
    c.check(got["probe_bad"] == [0] and got["probe_late"] == [0] and got["errors"] == [0],
            "program: %s" % p.stdout)
    c.check(got["enable_matched"] == [N], "tk_enable matched %s events in "
            "%d calls, expected 1 each" % (got["enable_matched"], N))
    c.check(got["probe_calls"][0] > 0, "the probe was never called")
    fired = {t: n for t, n in got["fireds"]}

    r = tracekit("report", out, "--no-header", timeout=300, check=False)
    c.check(r.returncode == 0 and r.stderr == "",
            "report: exit %d, stderr %r" % (r.returncode, r.stderr[:500]))
    lines = r.stdout.count("\n")
    starts = len(re.findall(r": tog:start: threads=%d toggles=%d$" % (T, N), r.stdout, re.M))
    # every other line is a tog:ev; one regex over the whole text
    line_re = re.compile(r"^\s*.+-(\d+) \[\d+\] \d+\.\d+: tog:ev: thread=(\d+) "
                         r"seq=(\d+) triple=(\d+) msg=(\S+)$", re.M)
    evs, bad, per_tid = 0, [], {}
    for tid, thread, seq, triple, msg in line_re.findall(r.stdout):
        tid, thread, seq = int(tid), int(thread), int(seq)
        if thread >= T or int(triple) != seq * 3 + 1 or msg != DIGITS[seq % 10]:
            bad.append((tid, thread, seq, triple, msg))
        last = per_tid.get(tid)
        if last is not None and (last[0] != thread or seq <= last[1]):
            bad.append((tid, thread, seq, triple, msg))
        per_tid[tid] = (thread, seq, (last[2] + 1) if last else 1)
        evs += 1
    c.check(evs + starts == lines, "%d report lines are neither tog:ev nor tog:start" % (
        lines - evs - starts))
    c.check(not bad, "%d inconsistent events, first: %r" % (len(bad), bad[:3]))
    c.check(starts == 1, "tog:start: %d events" % starts)
    c.check(evs > 0, "no tog:ev event was recorded: tk_enable did not record")
    for tid, (thread, seq, n) in per_tid.items():
        c.check(n <= fired.get(thread, 0) and seq < fired.get(thread, 0),
                "thread %d: %d events recorded (last seq %d), %s fired" % (
                    thread, n, seq, fired.get(thread)))
    rows, total = summary(p.stderr)
    c.check(total and total["events"] == evs + starts,
            "summary total %s, report %d events" % (total, evs + starts))
    bt_count(c, out, evs + starts)
    c.done()


def test_toggle_no_session():
    """The same without a recorder: tk_enable finds the event (probes only),
    the probe runs and sees consistent arguments, nothing breaks."""
    p = run([prog("toggle"), "-n", "5000", "-t", "2", "-p", "1000"], timeout=60,
            check=False)
    got = counts(p.stdout)
    assert p.returncode == 0, "exit %d: %s %s" % (p.returncode, p.stdout, p.stderr)
    assert got["enable_matched"] == [5000] and got["probe_calls"][0] > 0, p.stdout


def test_filter_is_the_recorders_only():
    """A recording filter selects what is recorded; the program's own probe
    on the same event still sees every hit (200), with any filter."""
    want = {"status >= 400": [i for i in range(200) if i % 10 == 3 or i % 25 == 0],
            "id < 0": [],
            "status == 200 && id < 20": [i for i in range(20)
                                         if i % 10 != 3 and i % 25 != 0],
            None: list(range(200))}
    c = Checks()
    for flt, ids in want.items():
        out = os.path.join(tmpdir(), "t")
        opts = ["-e", "srv:req_end"] + (["-f", flt] if flt else [])
        p = record(out, [prog("probefilter")], *opts)
        command_ok(p, "prog-probefilter")
        got = counts(p.stdout)
        c.check(got["probe_calls"] == [200] and got["probe_errors"] == [28],
                "-f %r: the program's probe saw %s" % (flt, p.stdout.split("\n")))
        rec = [int(fields(l["text"])["id"]) for l in report_lines(out)
               if l["event"] == "srv:req_end"]
        c.check(rec == ids, "-f %r: recorded ids %s, want %s" % (flt, rec, ids))
        rows, total = summary(p.stderr)
        c.check(total and total["events"] == len(ids) and total["lost"] == 0,
                "-f %r: summary %s" % (flt, total))
    c.done()


# ------------------------------------------------------------------- 5. C++

def test_cpp():
    """TK_EVENT, tk_trace, tk_mark and probes from C++17 (-Werror)."""
    out = os.path.join(tmpdir(), "t")
    p = record(out, [prog("cpp")])
    command_ok(p, "prog-cpp")
    got = counts(p.stdout)
    c = Checks()
    c.check(got["probe_static"] == [5, 10] and got["probe_lambda"] == [5, 10],
            "probes: %s" % p.stdout)
    lines = report_lines(out)
    exp = [("cpp:kinds", "a=-5 b=-9000000000 c=65535 d=12345678901234 p=0xcafe "
                         "x=1.25 tag=abcdef s=from std::string")]
    exp += [("cpp:item", "i=%d twice=%d name=item-%d" % (i, 2 * i, i)) for i in range(5)]
    exp += [("cpp:item", "i=%d twice=%d name=late-%d" % (i, 2 * i, i)) for i in range(2)]
    exp += [("cpp:hello", "hello c++ 17"),
            ("cpp:value", "v=0.750000 p=0xbeef u=3000000000"),
            ("cpp:none", "no args")]
    got_ev = [(l["event"], l["text"]) for l in lines]
    c.check(got_ev == exp, "report:\n    %s\nexpected:\n    %s" % (
        "\n    ".join(map(str, got_ev)), "\n    ".join(map(str, exp))))
    bt = bt_check(c, out, len(lines))
    kinds = [l for l in bt if "cpp:kinds" in l]
    c.check(kinds and "bytes = [ [0] = 1, [1] = 2, [2] = 3 ]" in kinds[0],
            "babeltrace2: cpp:kinds bytes: %s" % kinds)
    c.done()


def _syntax_check(compiler, *args):
    path = shutil.which(compiler)
    if not path:
        raise Skip("%s is not installed" % compiler)
    inc = ["-I", os.path.join(SRC, "include"), "-I", os.path.join(SRC, "tests", "progs")]
    return run([path, "-fsyntax-only"] + inc + list(args), timeout=120, check=False)


def test_cpp_strict_iso():
    """The public header, tk_mark without arguments included, compiles in
    strict ISO modes too (-std=c++17 / -std=c11: no GNU comma elision),
    not only in gnu++17 / gnu11 as the build uses."""
    c = Checks()
    for compiler, std, src in (("g++", "-std=c++17", "cpp.cc"),
                               ("gcc", "-std=c11", "toggle.c")):
        p = _syntax_check(compiler, std, "-Wall", "-Wextra", "-Werror",
                          os.path.join(SRC, "tests", "progs", src))
        first = [l for l in p.stderr.splitlines() if "error" in l][:2]
        c.check(p.returncode == 0, "%s %s %s: exit %d: %s" % (
            compiler, std, src, p.returncode, " | ".join(first)))
    c.done()


def test_header_clang_wall():
    """Events defined in a .c file compile without warnings under clang
    -Wall -Wextra -Werror (their unused static helpers included)."""
    p = _syntax_check("clang", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
                      os.path.join(SRC, "tests", "progs", "signal.c"))
    first = [l for l in p.stderr.splitlines() if "error" in l][:2]
    assert p.returncode == 0, "clang: exit %d: %s" % (p.returncode, " | ".join(first))


# --------------------------------------------------------------- 6. markers

def _marker_name(raw):
    """app_tick -> app:tick; no underscore -> mark:NAME."""
    prov, sep, ev = raw.partition("_")
    return "%s:%s" % (prov, ev) if sep and prov and ev else "mark:" + raw


def test_marker():
    """Markers: the report shows exactly what printf makes of the format
    and arguments (%d %i %s %p %f %g %e %ld %lu %x %u %c %lld, widths,
    %%, no argument), named by splitting at the first underscore."""
    out = os.path.join(tmpdir(), "t")
    p = record(out, [prog("toggle"), "-M"])
    command_ok(p)
    exp = []
    for line in p.stdout.splitlines():
        assert line.startswith("expect "), line
        raw, _, text = line[len("expect "):].partition("|")
        exp.append((_marker_name(raw), text))
    assert len(exp) >= 16 and ("app:multi_part", "first underscore splits: 1") in exp \
        and ("mark:plain", "no underscore 7") in exp, exp
    lines = report_lines(out)
    got = [(l["event"], l["text"]) for l in lines]
    c = Checks()
    for i, (g, e) in enumerate(zip(got, exp)):
        c.check(g == e, "marker %d: report %r, printf %r" % (i, g, e))
    c.check(len(got) == len(exp), "%d marker events, %d fired" % (len(got), len(exp)))
    # Filtering by the split name works too.
    sel = report_lines(out, "--events", "app:loop")
    c.check([l["text"] for l in sel] == ["iteration %d" % i for i in range(5)],
            "--events app:loop: %s" % [l["text"] for l in sel])
    out2 = os.path.join(tmpdir(), "t2")
    p2 = record(out2, [prog("toggle"), "-M"], "-e", "app:tick", "-e", "mark:*")
    command_ok(p2)
    got2 = [(l["event"], l["text"]) for l in report_lines(out2)]
    c.check(got2 == [("app:tick", "tick 42 of main"), ("mark:plain", "no underscore 7")],
            "-e app:tick -e mark:*: %s" % got2)
    bt_check(c, out, len(lines))
    c.done()


def test_marker_header_alone():
    """A program that includes only <tracekit/marker.h> registers its
    markers as one that includes the whole API does: recorded, both call
    sites of one name with their own formats, in order."""
    out = os.path.join(tmpdir(), "t")
    p = record(out, [prog("marks"), "3"])
    command_ok(p)
    assert "1 stream of 1 process recorded" in p.stderr, p.stderr
    got = [(l["event"], l["text"]) for l in report_lines(out)]
    assert got == [("app:tick", "start")] * 3 + \
        [("app:tick", "tick %d of 3" % i) for i in range(3)] + [("app:done", "done")], got


def test_extended_header_after_long_gap():
    """Two events 1.8 s apart on one thread: more than 2^32 TSC ticks at
    this machine's clock, so the second takes the extended header (u64
    time); report and babeltrace2 both place it exactly."""
    d = os.path.join(tmpdir(), "t")
    record(d, [prog("ksys"), "-s", "1800"], "-e", "kb:*")
    freq = int(re.search(r"^clock .*freq=(\d+)", open(os.path.join(d, "tracekit.manifest")).read(),
                         re.M).group(1))
    raw = [int(re.search(r"\] (\d+): kb:", l).group(1))
           for l in tracekit("report", d, "--ts", "raw", "--no-header").stdout.splitlines()]
    assert len(raw) == 2, raw
    if raw[1] - raw[0] < 1 << 32:
        raise Skip("the TSC runs at %d Hz: 1.8 s is less than 2^32 ticks" % freq)
    assert 1.8 <= (raw[1] - raw[0]) / freq < 3.0, (raw, freq)
    bt = babeltrace_lines(d, "--clock-cycles")
    assert [int(l.split("]")[0].strip("[")) for l in bt] == raw, (bt, raw)
