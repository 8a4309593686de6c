# SPDX-License-Identifier: MIT
"""report marks where user events were lost, exactly.

prog-basic's threads number their test:seq events 0..N-1, so a thread's
losses are where its numbers jump: each "COMM-TID [K EVENTS DROPPED]"
line must stand where that thread's next number is exactly K past the
one before (before its first event, after its last), its lines must sum
to the header's and the summary's lost count (and babeltrace2's), and
the summary modes (--count) must say on stderr what they leave out.
"""
import os
import re
import shutil
from decimal import Decimal

import tklib
from test_counts import bt_discarded

N, T = 200000, 2
HDR_RE = re.compile(r"^# stream (.+)-(\d+): (\d+) events, (\d+) lost\b")
COUNT_LOST = ("tracekit: warning: %d user events were lost in the streams and time "
              "counted: the counts are short of them (without --count, report marks "
              "where)")
CUT_RE = re.compile(r"^tracekit: warning: overwrite mode: (\d+) events from before "
                    r"(\d+\.\d{6}), where every stream is complete, are left out "
                    r"\(--no-cut counts them\)$")


def listing(out, *opts):
    """report OUT --no-header OPTS as a list of ("ev", tid, ts, seq, line)
    (seq None for other events than test:seq) and ("lost", tid, count,
    line); the event lines' timestamps must not go back."""
    p = tklib.tracekit("report", out, "--no-header", *opts, timeout=300)
    assert p.stderr == "", p.stderr
    items, last = [], None
    for line in p.stdout.splitlines():
        m = tklib.LOST_RE.match(line)
        if m:
            items.append(("lost", int(m.group(2)), int(m.group(3)), line))
            continue
        m = tklib.LINE_RE.match(line)
        assert m, "unparsable report line: %r" % line
        ts = Decimal(m.group(4))
        assert last is None or ts >= last, "time goes back at %r" % line
        last = ts
        seq = int(tklib.fields(m.group(6))["seq"]) if m.group(5) == "test:seq" else None
        items.append(("ev", int(m.group(2)), ts, seq, line))
    return items


def header(out):
    """tid -> (events, lost) of report's header."""
    p = tklib.tracekit("report", out)
    return {int(m.group(2)): (int(m.group(3)), int(m.group(4)))
            for m in map(HDR_RE.match, p.stdout.splitlines()) if m}


def lost_by_tid(items):
    out = {}
    for it in items:
        if it[0] == "lost":
            out[it[1]] = out.get(it[1], 0) + it[2]
    return out


def check_places(items, n, first_seq=None):
    """Each thread's loss lines stand where its seq numbers jump by their
    count (from 0 before its first event, up to N after its last);
    returns tid -> its lines' counts in order.  first_seq: tid -> the
    first seq shown where the listing starts later (a window)."""
    nextseq, pending, counts = {}, {}, {}
    for it in items:
        tid = it[1]
        if it[0] == "lost":
            pending[tid] = pending.get(tid, 0) + it[2]
            counts.setdefault(tid, []).append(it[2])
            continue
        seq = it[3]
        if seq is None:
            assert not pending.get(tid), "loss line before %r, not a test:seq" % it[4]
            continue
        if tid not in nextseq and first_seq is not None:
            nextseq[tid] = first_seq[tid] if not pending.get(tid) else seq - pending[tid]
        want = nextseq.get(tid, 0)
        assert seq - want == pending.get(tid, 0), \
            "tid %d: seq %d after %d, the lines before it say %d lost: %r" % (
                tid, seq, want - 1, pending.get(tid, 0), it[4])
        pending[tid] = 0
        nextseq[tid] = seq + 1
    for tid, left in pending.items():
        if tid in nextseq and n is not None:
            assert n - nextseq[tid] == left, \
                "tid %d: last seq %d, then lines of %d lost (want %d)" % (
                    tid, nextseq[tid] - 1, left, n - nextseq[tid])
    return counts


def record_flood(*opts):
    out = os.path.join(tklib.tmpdir(), "trace")
    p = tklib.record(out, [tklib.prog("basic"), "-n", str(N), "-t", str(T)], "-b", "8",
                     *opts, timeout=120)
    rows, total = tklib.summary(p.stderr)
    assert total and total["lost"] > 0, p.stderr
    return out, {r["tid"]: r for r in rows}, total


def test_loss_lines_discard():
    """8 KiB per thread, discard mode: the lines stand where the numbers
    jump and sum, per thread, to the header's, the summary's and
    babeltrace2's counts; --count says the total on stderr."""
    out, rows, total = record_flood()
    items = listing(out)
    counts = check_places(items, N)
    sums = {tid: sum(c) for tid, c in counts.items()}
    assert sums == {tid: r["lost"] for tid, r in rows.items() if r["lost"]}, (sums, rows)
    assert {tid: v[1] for tid, v in header(out).items()} == \
        {tid: r["lost"] for tid, r in rows.items()}
    assert sum(sums.values()) == total["lost"]
    if shutil.which("babeltrace2"):
        assert bt_discarded(out) == total["lost"]
    else:
        print("babeltrace2 not checked: not installed")
    assert sum(1 for it in items if it[0] == "ev") == total["events"]

    p = tklib.tracekit("report", out, "--count")
    assert p.returncode == 0
    assert p.stderr == COUNT_LOST % total["lost"] + "\n", p.stderr
    assert p.stdout.splitlines()[-1].split() == [str(total["events"]), "total"], p.stdout

    # a thread chosen: its lines only, all of them
    tid = max(rows, key=lambda t: rows[t]["lost"])
    sel = listing(out, "--tid", str(tid))
    assert {it[1] for it in sel} == {tid}
    assert check_places(sel, N) == {tid: counts[tid]}
    p = tklib.tracekit("report", out, "--count", "--tid", str(tid))
    assert p.stderr == COUNT_LOST % rows[tid]["lost"] + "\n", p.stderr

    # events of no thread of the trace: nothing to say
    p = tklib.tracekit("report", out, "--count", "--events", "test:phase", "--comm", "nosuch",
                       check=False)
    assert p.returncode == 1 and "EVENTS DROPPED" not in p.stdout + p.stderr, p


def window_expected(items, lo, hi):
    """The loss lines of the full listing ITEMS whose place meets the
    window [lo, hi] (None: open): (tid, count) in order; and those that
    may be shown or not: after a thread's last event, when that is before
    lo (the thread's final packet, which counted them, may be later)."""
    want, maybe, last = [], [], {}
    for i, it in enumerate(items):
        if it[0] == "ev":
            last[it[1]] = it[2]
            continue
        tid = it[1]
        after = last.get(tid)
        before = next((x[2] for x in items[i + 1:] if x[0] == "ev" and x[1] == tid), None)
        if before is None and lo is not None and (after is None or after < lo):
            maybe.append((tid, it[2]))
        elif (lo is None or before is None or before >= lo) and \
                (hi is None or after is None or after <= hi):
            want.append((tid, it[2]))
    return want, maybe


def test_loss_lines_window():
    """--from and --to keep the lines whose place (between the events
    before and after) meets the window, and only those."""
    out, rows, total = record_flood()
    items = listing(out)
    evs = [it for it in items if it[0] == "ev"]
    lo, hi = evs[len(evs) // 3][2], evs[2 * len(evs) // 3][2]
    for opts, a, b in ((["--to", str(hi)], None, hi), (["--from", str(lo)], lo, None),
                       (["--from", str(lo), "--to", str(hi)], lo, hi)):
        want, maybe = window_expected(items, a, b)
        got = [(it[1], it[2]) for it in listing(out, *opts) if it[0] == "lost"]
        assert [g for g in got if g not in maybe] == want, \
            "%s: loss lines %r, want %r (and maybe %r)" % (" ".join(opts), got, want, maybe)
        p = tklib.tracekit("report", out, "--count", *opts)
        n = sum(c for _, c in got)
        assert p.stderr == (COUNT_LOST % n + "\n" if n else ""), (opts, p.stderr)


def test_loss_lines_overwrite():
    """Overwrite mode: what a thread's ring overwrote stands before its
    first kept event (whose number is that count); the cut listing keeps
    the lines of the streams it shows from their start, and --count says
    how many events the cut left out."""
    out, rows, total = record_flood("--overwrite")
    items = listing(out, "--no-cut")
    counts = check_places(items, N)
    workers = {tid for tid, r in rows.items() if r["lost"]}
    assert counts == {tid: [rows[tid]["lost"]] for tid in workers}, (counts, rows)
    for tid in workers:  # the line comes before the thread's first event
        first = next(i for i, it in enumerate(items) if it[1] == tid)
        assert items[first][0] == "lost", items[first]
    if shutil.which("babeltrace2"):
        assert bt_discarded(out) == total["lost"]

    cut = listing(out)
    first_seq = {it[1]: it[3] for it in reversed(cut) if it[0] == "ev" and it[3] is not None}
    cut_counts = check_places(cut, N, first_seq)
    # a stream that begins at or after the cut has its line; the others
    # began before it, and their losses with them
    cut_ts = min(it[2] for it in cut if it[0] == "ev")
    starts = {tid: next(it[2] for it in items if it[0] == "ev" and it[1] == tid)
              for tid in workers}
    assert set(cut_counts) == {tid for tid in workers if starts[tid] >= cut_ts}, \
        (cut_counts, starts, cut_ts)
    assert cut_counts, "no stream begins at the cut"

    nocut = tklib.tracekit("report", out, "--count", "--no-cut")
    assert nocut.stderr == COUNT_LOST % total["lost"] + "\n", nocut.stderr
    p = tklib.tracekit("report", out, "--count")
    assert p.returncode == 0
    lines = p.stderr.splitlines()
    assert len(lines) == 2 and lines[0] == COUNT_LOST % sum(map(sum, cut_counts.values())), \
        p.stderr
    m = CUT_RE.match(lines[1])
    assert m, p.stderr
    total_cut = int(p.stdout.splitlines()[-1].split()[0])
    total_all = int(nocut.stdout.splitlines()[-1].split()[0])
    assert total_all == total["events"] and int(m.group(1)) == total_all - total_cut, \
        (p.stdout, nocut.stdout, p.stderr)
    assert Decimal(m.group(2)) == cut_ts


def test_loss_lines_thread_lost_all():
    """A thread whose every event was lost (too large) has its line
    before the listing's first event; --count says it too."""
    out = os.path.join(tklib.tmpdir(), "trace")
    tklib.record(out, [tklib.prog("toobig"), "5", "3", "100000"], timeout=60)
    items = listing(out)
    lost = [it for it in items if it[0] == "lost"]
    assert len(lost) == 1 and lost[0][2] == 3 and items[0] is lost[0], items
    assert [it[1] for it in items[1:]] == [items[1][1]] * 5, items
    p = tklib.tracekit("report", out, "--count")
    assert p.stderr == COUNT_LOST % 3 + "\n", p.stderr


def test_scribbled_discarded_counts_capped():
    """The packets' events_discarded are the program's: a stream whose
    second packet says 10^9 or 2^64-1 events lost gets loss lines that
    still sum to the recorder's count in the header (they said
    [1000000000 EVENTS DROPPED], or no number, and --count summed past
    2^64), each with its number."""
    import struct
    base = os.path.join(tklib.tmpdir(), "t")
    tklib.record(base, [tklib.prog("basic"), "-n", "20000", "-t", "2"], "-b", "8")
    want = header(base)
    assert sum(lost for _, lost in want.values()) > 0, want
    for value in (10 ** 9, 2 ** 64 - 1):
        out = os.path.join(tklib.tmpdir(), "s%d" % (value & 0xff))
        shutil.copytree(base, out)
        udir = os.path.join(out, "user")
        name = max((f for f in os.listdir(udir) if f != "metadata"),
                   key=lambda f: os.path.getsize(os.path.join(udir, f)))
        path = os.path.join(udir, name)
        data = bytearray(open(path, "rb").read())
        second = struct.unpack_from("<Q", data, 40)[0] // 8  # packet_size, bits
        assert len(data) > second + 64, (name, len(data), second)
        struct.pack_into("<Q", data, second + 56, value)  # events_discarded
        open(path, "wb").write(data)
        assert header(out) == want
        items = listing(out)
        got = lost_by_tid(items)
        assert got == {tid: lost for tid, (_, lost) in want.items() if lost}, (got, want)
        p = tklib.tracekit("report", out, "--count")
        assert COUNT_LOST % sum(got.values()) in p.stderr, p.stderr
