# SPDX-License-Identifier: MIT
"""record's summary stays short: the streams that lost or fired the most
(ten), one line for the rest, -v for each; what the processes say of
their call sites once, however many processes say it."""
import os
import re

import tklib

MORE_RE = re.compile(r"^\.\.\. and (\d+) more streams: (\d+) events, (\d+) lost "
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
