# SPDX-License-Identifier: MIT
"""tracekit convert, hist and report's selection on traces and options
that try to break them: names that are not UTF-8 or not XML, outputs killed halfway,
traces cut or scribbled over.  Each output must stay well-formed (JSON
that parses, SVG that an XML parser reads), or the command must fail
with one 'tracekit: ...' line and leave no file behind."""
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time
import xml.dom.minidom

import kernlib
import tklib
from test_convert import written_file
from tklib import prog, record, tmpdir, tracekit

FUNCTREE = prog("functree")
BASIC = prog("basic")


def tree_trace(name="t"):
    """function_graph calls of functree's known tree, in TMP/NAME (bytes
    allowed)."""
    d = os.path.join(tmpdir().encode(), name.encode() if isinstance(name, str) else name)
    # the sanitizer build preloads its runtime into a program built
    # without ASan: let ASan start second
    env = {"ASAN_OPTIONS": "verify_asan_link_order=0:detect_leaks=0"} \
        if os.environ.get("TK_SANITIZED") else None
    p = record(os.fsdecode(d), [FUNCTREE, "tree"], "-p", "function_graph", "--no-libcall",
               errors="surrogateescape", env=env)
    assert "tree ok" in p.stdout, p.stdout
    return os.fsdecode(d)


def svg_text(path):
    """The SVG at PATH parsed by an XML parser (expat): its <text> of id
    'title', and every <title>."""
    doc = xml.dom.minidom.parse(path)
    texts = {t.getAttribute("id"): "".join(n.data for n in t.childNodes if n.nodeType == n.TEXT_NODE)
             for t in doc.getElementsByTagName("text")}
    titles = ["".join(n.data for n in t.childNodes) for t in doc.getElementsByTagName("title")]
    return texts, titles


def test_svg_names_not_utf8():
    """A title and a trace directory whose names are no UTF-8 (a Latin-1
    byte, a cut sequence): the SVG stays well-formed XML, the bytes shown
    as U+FFFD; markup in the title stays text."""
    d = tree_trace(b"tr\xe9ce")
    out = os.path.join(os.path.dirname(d), "a.svg")
    title = os.fsdecode(b"x\xff</text><script>alert(1)</script>&\xe2\x82")
    tracekit("convert", "--to", "svg", d, "-o", out, "--title", title, errors="surrogateescape")
    texts, titles = svg_text(out)
    assert texts["title"] == "x\ufffd</text><script>alert(1)</script>&\ufffd\ufffd", texts["title"]
    assert any(t.startswith("main (") for t in titles), titles[:5]
    tracekit("convert", "--to", "svg", d, "-o", out, errors="surrogateescape")
    texts, _ = svg_text(out)
    assert texts["title"] == "Flame graph of " + os.path.dirname(d) + "/tr\ufffdce", texts["title"]


def test_killed_midway_leaves_nothing():
    """convert killed by SIGKILL halfway through (1 MB written): the
    older file of that name is as it was, and no other file is left in
    its directory (no hidden temporary file as large as the output)."""
    top = tmpdir()
    d = os.path.join(top, "t")
    record(d, [BASIC, "-n", "500000"])
    out = os.path.join(top, "out.json")
    with open(out, "w") as f:
        f.write("older\n")
    p = subprocess.Popen([tklib.TRACEKIT, "convert", "--to", "chrome", d, "-o", out, "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while (written_file(p.pid, top) or 0) < (1 << 20):
            assert p.poll() is None, "convert ended before 1 MB: %s" % p.stderr.read()
            assert time.monotonic() < deadline, "convert wrote no 1 MB in 60 s"
            time.sleep(0.005)
        p.kill()
    finally:
        p.wait()
        p.stderr.close()
    assert p.returncode == -signal.SIGKILL, p.returncode
    with open(out) as f:
        assert f.read() == "older\n"
    assert sorted(os.listdir(top)) == ["out.json", "t"], os.listdir(top)


def test_times_past_64_bits():
    """--from/--to times past what 64 bits of nanoseconds hold (584
    years) are after every event: --from selects none, --to all (they
    wrapped around to a few seconds)."""
    d = os.path.join(tmpdir(), "t")
    record(d, [BASIC, "-n", "10"])
    every = len(tklib.report_lines(d))
    assert every == 12, every  # test:phase start, 10 test:seq, test:phase end
    for t in ("18446744079", "18446744073.709551616", "18446744073.7095516",
              "99999999999999999999", "+18446744079"):
        p = tracekit("report", d, "--no-header", "--from", t, check=False)
        assert p.returncode == 1 and p.stderr == \
            "tracekit: no event matched --from '%s' (%d events read)\n" % (t, every), p.stderr
        assert len(tklib.report_lines(d, "--to", t)) == every, t


def test_chrome_thread_ids_past_int():
    """A thread id whose sort index (3 * tid) passes INT_MAX, as a
    scribbled manifest or kernel page gives: the JSON names the thread
    and sorts it (the converter crashed on a NULL name)."""
    d = tree_trace()
    man = os.path.join(d, "tracekit.manifest")
    with open(man) as f:
        text = f.read()
    tid = re.search(r"^stream .* tid=(\d+) ", text, re.M).group(1)
    with open(man, "w") as f:
        f.write(re.sub(r"\btid=%s\b" % tid, "tid=800000000", text))
    out = os.path.join(tmpdir(), "t.json")
    tracekit("convert", "--to", "chrome", d, "-o", out)
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    names = [e for e in events if e["ph"] == "M" and e["tid"] == 800000000]
    assert [e["args"] for e in names] == [{"name": "prog-functree"}, {"sort_index": 2400000000}], names
    assert any(e["ph"] == "X" and e["tid"] == 800000000 and e["name"] == "main" for e in events)


def test_nesting_bounded():
    """10,000 function entries each one level deeper than the last (the
    function tracer nests 1,024 at most): a thread keeps 4,096 calls
    open, an entry past them ends the innermost; so the flame graph is
    4,096 frames deep, the deepest weighing the 5,905 entries past the
    bound (a deeper trace made folded stacks quadratic in its depth: 3 M
    levels ran for more than 5 minutes)."""
    d = os.path.join(tmpdir(), "t")
    record(d, [prog("deepcalls"), "10000"], "-b", "4096")
    out = os.path.join(tmpdir(), "t.svg")
    tracekit("convert", "--to", "svg", "--calls", d, "-o", out)
    frames = [g for g in xml.dom.minidom.parse(out).getElementsByTagName("g")
              if g.getAttribute("class") == "f"]
    depth = {int(g.getAttribute("data-d")): int(g.getAttribute("data-v")) for g in frames}
    assert len(frames) == 4097 and sorted(depth) == list(range(4097)), len(frames)
    assert depth[0] == 10000 and depth[4095] == 5906 and depth[4096] == 5905, \
        (depth[0], depth[4095], depth[4096])


PACKET = struct.Struct("<IIQQQQQQQIIII")  # common/ringbuf-layout.h


def packets(path):
    """Offsets of the CTF packets of stream file PATH."""
    with open(path, "rb") as f:
        data = f.read()
    out, off = [], 0
    while off + PACKET.size <= len(data):
        size = PACKET.unpack_from(data, off)[6] // 8
        if not size:
            break
        out.append(off)
        off += size
    return out


def test_latency_time_going_back():
    """A stream whose second packet is stamped 2^34 ticks earlier (a
    scribbled header): an end stamped before its start is left out and
    counted, not shown as a latency of 584 years minus a bit.  Whether
    the packets split a start from its end or an end from the next
    start, one of the two pairings (start to end, end to next start, on
    the thread) meets it once."""
    d = os.path.join(tmpdir(), "t")
    p = record(d, [prog("latency"), "3000"])
    with open(os.path.join(d, "tracekit.manifest")) as f:
        main = re.search(r"^stream file=(\S+) pid=(\d+) tid=\2 ", f.read(), re.M).group(1)
    path = os.path.join(d, main)
    offs = packets(path)
    assert len(offs) >= 2, offs
    with open(path, "r+b") as f:
        f.seek(offs[1] + 16)  # timestamp_begin
        begin = struct.unpack("<Q", f.read(8))[0]
        f.seek(offs[1] + 16)
        f.write(struct.pack("<Q", begin - (1 << 34)))
    back = 0
    for a, b in (("lat:start", "lat:done"), ("lat:done", "lat:start")):
        out = tracekit("hist", d, "--from", a, "--to", b, "--match", "common_pid",
                       "--unit", "s").stdout
        m = re.search(r"^left out: (\d+) ends stamped before their start", out, re.M)
        back += int(m.group(1)) if m else 0
        longest = float(re.search(r"  max ([\d.]+) s$", out, re.M).group(1))
        assert longest < 3600, (a, b, out)
    assert back == 1, back


def test_bad_filter_one_line():
    """report -F that no event's fields fit, or --events that match
    nothing: one line, exit 1, and (in the sanitizer build) nothing left
    unfreed to report (the trace, its events and their states were)."""
    d = os.path.join(tmpdir(), "t")
    record(d, [BASIC, "-n", "10"])
    for opts, line in (
            (["-F", "nope == 1"], "bad filter 'nope == 1' at column 1: unknown field 'nope'"),
            (["-F", "seq == -1"], "bad filter 'seq == -1' for 'test:seq' at column 8: "
             "negative integer '-1' for unsigned field 'seq'"),
            (["--events", "nope:*"], "--events 'nope:*' matches no event of the trace")):
        p = tracekit("report", d, *opts, check=False)
        assert p.returncode == 1 and p.stderr.startswith("tracekit: " + line) and \
            p.stderr.count("\n") == 1, p.stderr[-3000:]


# A child's maxrss counts the memory of the process it was forked from
# (until its exec): this one is forked from a small Python, not from the
# test's (some 60 MB).
MAX_RSS = """
import os, sys
pid = os.fork()
if not pid:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(status, usage.ru_maxrss)
"""


def max_rss_kb(argv):
    """Run ARGV (its output thrown away); its maximum resident memory in
    KiB.  It must exit 0."""
    p = tklib.run([sys.executable, "-S", "-c", MAX_RSS] + argv)
    status, rss = p.stdout.split()
    assert status == "0", (argv, p.stderr[-2000:])
    return int(rss)


def test_convert_memory_not_trace_size():
    """convert and hist read a 4 M-event trace (about 80 MB) in far
    less resident memory than its size: the pages of the files read are
    given back (its RSS was the trace's size and more, every page of the
    mapped files kept)."""
    if os.environ.get("TK_SANITIZED"):
        raise tklib.Skip("ASan's shadow memory is no measure: normal build only")
    d = os.path.join(tmpdir(), "t")
    # buffers that hold it all: nothing lost however busy the machine
    record(d, [BASIC, "-n", "2000000", "-t", "2"], "-q", "-b", "65536", "--pool", "196608")
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)
    assert size > 64 << 20, size
    out = os.path.join(tmpdir(), "t.json")
    for args in (["convert", "--to", "chrome", "-q", d, "-o", out],
                 ["hist", d, "-e", "test:seq", "--key", "thread"]):
        rss = max_rss_kb([tklib.TRACEKIT] + args)
        assert rss * 1024 < size // 3, (args[0], rss, size)


DESC_HEAD = struct.Struct("<IHHIIHHHH")  # include/tracekit/desc.h


def rename_event(d, old, provider, name):
    """Rewrite DIR/events/1.desc (records of u32 id, u32 size and a
    descriptor) so that event OLD (its name) is PROVIDER:NAME (bytes)."""
    path = os.path.join(d, "events", "1.desc")
    with open(path, "rb") as f:
        data = f.read()
    out, off = b"", 0
    while off < len(data):
        eid, size = struct.unpack_from("<II", data, off)
        desc = data[off + 8:off + 8 + size]
        magic, ver, nf, _, flags, *offs = DESC_HEAD.unpack_from(desc)
        strs = [desc[o:desc.index(b"\0", o)] for o in offs]
        if strs[1] == old:
            strs[:2] = [provider, name]
        fixed = 32 + 48 * nf
        new = bytearray(desc[:fixed])
        offs = []
        for s in strs:
            offs.append(len(new))
            new += s + b"\0"
        new += bytes(-len(new) % 8)
        DESC_HEAD.pack_into(new, 0, magic, ver, nf, len(new), flags, *offs)
        out += struct.pack("<II", eid, len(new)) + bytes(new)
        off += 8 + size
    with open(path, "wb") as f:
        f.write(out)


def test_chrome_long_names_escaped():
    """A user event named with 300 bytes that are no UTF-8 (\\xff, each
    written \\u00ff, six bytes) in a provider of 300 more: the Chrome
    JSON still parses and names it (its escaped name overflowed a
    1,024-byte buffer, and the file lost its quotes)."""
    d = os.path.join(tmpdir(), "t")
    record(d, [BASIC, "-n", "5"])
    rename_event(d, b"seq", b"\xfe" * 300, b"\xff" * 300 + b'"</script>')
    out = os.path.join(tmpdir(), "t.json")
    tracekit("convert", "--to", "chrome", d, "-o", out)
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    named = [e for e in events if e["ph"] == "i" and e["cat"] == "\u00fe" * 300]
    assert len(named) == 5, len(named)
    assert named[0]["name"] == "\u00fe" * 300 + ":" + "\u00ff" * 99, named[0]["name"][-20:]


def test_incomplete_trace_said():
    """A trace whose recorder never finished it (killed: its manifest
    still says state=recording) converts and counts, and says so as
    report does (convert and hist were silent)."""
    d = os.path.join(tmpdir(), "t")
    record(d, [BASIC, "-n", "10"])
    man = os.path.join(d, "tracekit.manifest")
    with open(man) as f:
        text = f.read()
    assert text.startswith("tracekit version=1\n"), text[:40]
    with open(man, "w") as f:
        f.write(text.replace("tracekit version=1\n", "tracekit version=1 state=recording\n", 1))
    out = os.path.join(tmpdir(), "t.json")
    what = "tracekit: warning: '%s' is incomplete: its recorder stopped before finishing it " \
        "(killed?); %s what it wrote\n"
    p = tracekit("convert", "--to", "chrome", d, "-o", out)
    assert p.stderr == what % (d, "converting"), p.stderr
    with open(out) as f:
        assert sum(e["name"] == "test:seq" for e in json.load(f)["traceEvents"]) == 10
    p = tracekit("hist", d, "-e", "test:seq", "--key", "thread")
    assert p.stderr == what % (d, "counting"), p.stderr
    assert "Hits: 10\n" in p.stdout, p.stdout


def test_saved_cmdlines_without_last_newline():
    """A saved_cmdlines whose last line has no newline (a file cut
    short): its lines are read, the last one too (its copy wrote a byte
    past its buffer: a heap overflow in the sanitizer build)."""
    with kernlib.guard():
        d = os.path.join(tmpdir(), "t")
        record(d, [BASIC, "-n", "5"], "-e", "test:seq", "-e", "sched:sched_switch", "-q")
    path = os.path.join(d, "kernel", "saved_cmdlines")
    with open(path, "w") as f:
        f.write("1 init\n4000000 last")
    p = tracekit("report", d, "--no-header")
    assert p.stderr == "", p.stderr[-3000:]
    assert p.stdout.count("test:seq:") == 5, p.stdout[-2000:]
