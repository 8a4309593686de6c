# SPDX-License-Identifier: MIT
"""End-to-end tests of the tracekit command line: record, report, list.

Errors (one 'tracekit: ' line, what and where, non-zero exit, nothing
recorded destroyed), agreement with babeltrace2, report options, record
filters, attaching, list's format, file modes, and the demo program.
"""
import glob
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import time

import tklib

BASIC = tklib.prog("basic")
DEMO = os.path.join(tklib.BUILD, "examples", "tracekit-demo")
MSGS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]

# The values prog-basic -k gives test:kinds (tests/progs/basic.c).
KINDS = dict(a=-8, b=-1600, c=-320000, d=-6400000000, e=200, f=65000, g=4000000000,
             h=18000000000000000000, p=0x1234abcd, x=2.5, comm="abcdefgh",
             s="hello world")
KINDS_BYTES = [0xde, 0xad, 0xbe, 0xef]


# ---------------------------------------------------------------- helpers

def one_error(p, exact=None, contains=(), pattern=None, rc=None):
    """p failed with exactly one stderr line 'tracekit: ...'; returns it."""
    lines = p.stderr.splitlines()
    assert p.returncode != 0, "exit status 0 (expected an error); stderr: %r" % p.stderr
    if rc is not None:
        assert p.returncode == rc, "exit status %d, expected %d; stderr: %r" % (
            p.returncode, rc, p.stderr)
    assert len(lines) == 1, "expected one stderr line, got %d: %r" % (len(lines), p.stderr)
    line = lines[0]
    assert line.startswith("tracekit: "), "error line lacks 'tracekit: ': %r" % line
    if exact is not None:
        assert line == exact, "error line\n  got:      %r\n  expected: %r" % (line, exact)
    for c in contains:
        assert c in line, "error line %r does not mention %r" % (line, c)
    if pattern is not None:
        assert re.search(pattern, line, re.I), "error line %r does not match /%s/" % (
            line, pattern)
    return line


def tk(*args, **kw):
    kw.setdefault("check", False)
    return tklib.tracekit(*args, **kw)


def record_basic(outdir, *args, opts=()):
    p = tklib.record(outdir, [BASIC] + list(args), *opts)
    rows, total = tklib.summary(p.stderr)
    assert total is not None, "no summary: %r" % p.stderr
    return p, rows, total


def seq_fields(text):
    m = re.match(r"^thread=(\d+) seq=(\d+) msg=(\S+)$", text)
    assert m, "bad test:seq text %r" % text
    return int(m.group(1)), int(m.group(2)), m.group(3)


KINDS_RE = re.compile(
    r"^a=(-?\d+) b=(-?\d+) c=(-?\d+) d=(-?\d+) e=(\d+) f=(\d+) g=(\d+) h=(\d+) "
    r"p=(0x[0-9a-fA-F]+) x=(\S+) comm=(\S*) s=(.*)$")


def kinds_fields(text):
    m = KINDS_RE.match(text)
    assert m, "bad test:kinds text %r" % text
    g = m.groups()
    return dict(a=int(g[0]), b=int(g[1]), c=int(g[2]), d=int(g[3]), e=int(g[4]),
                f=int(g[5]), g=int(g[6]), h=int(g[7]), p=int(g[8], 16), x=float(g[9]),
                comm=g[10], s=g[11])


def header_lines(outdir, *opts):
    p = tk("report", outdir, *opts, check=True)
    return [line for line in p.stdout.splitlines() if line.startswith("#")]


def start_basic(*args, binary=BASIC):
    """prog-basic (or @binary, built from basic.c) running until killed,
    with -r READY; returns (proc, pid)."""
    d = tklib.tmpdir()
    ready = os.path.join(d, "ready")
    proc = subprocess.Popen([binary, "-f", "-r", ready] + list(args),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        text = tklib.wait_for_file(ready)
    except Exception:
        tklib.kill_quietly(proc)
        proc.wait()
        raise
    pid = int(text.split()[1])
    assert pid == proc.pid
    return proc, pid


def stop(proc):
    tklib.kill_quietly(proc)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def as_nobody():
    """Command prefix running as user nobody, or Skip."""
    if os.geteuid() != 0:
        raise tklib.Skip("needs root to switch to user nobody")
    for prefix in (["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"],
                   ["runuser", "-u", "nobody", "--"]):
        if not shutil.which(prefix[0]):
            continue
        try:
            p = subprocess.run(prefix + [tklib.TRACEKIT, "--version"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=10)
        except OSError:
            continue
        if p.returncode == 0 and p.stdout.startswith("tracekit"):
            return prefix
    raise tklib.Skip("cannot run tracekit as nobody (neither setpriv nor runuser works)")


def run_as(prefix, *args, **kw):
    return tklib.run(prefix + [tklib.TRACEKIT] + list(args), check=False, **kw)


def find_event(data, thread, seq):
    """Offset of the compact 6-byte header (u16 id, u32 time) of test:seq
    (thread, seq) in a stream file's bytes (payload: u32 thread, u64 seq,
    msg string, packed)."""
    payload = struct.pack("<IQ", thread, seq) + MSGS[seq % 10].encode() + b"\0"
    at = data.find(payload)
    assert at >= 6, "event thread=%d seq=%d not found in the stream" % (thread, seq)
    return at - 6


def stream_of_thread0(outdir):
    for f in sorted(glob.glob(os.path.join(outdir, "user", "*-*"))):
        data = open(f, "rb").read()
        if data.find(struct.pack("<IQ", 0, 0) + b"zero\0") >= 0:
            return f, data
    raise AssertionError("no stream of thread 0 in %s" % outdir)


# ---------------------------------------------------------------- 1. errors

def test_error_unknown_event():
    d = os.path.join(tklib.tmpdir(), "t")
    p = tk("record", "-o", d, "-e", "test:sq", "--", BASIC)
    one_error(p, exact="tracekit: unknown event 'test:sq' (did you mean 'test:seq'?) "
                       "(--force records anyway)")
    assert not os.path.exists(d), "a failed record left %s behind" % d


def test_error_bad_filter_unknown_field():
    d = os.path.join(tklib.tmpdir(), "t")
    flt = 'seq > 10 && mgs == "x"'
    col = flt.index("mgs") + 1
    assert col == 13
    p = tk("record", "-o", d, "-e", "test:seq", "-f", flt, "--", BASIC)
    one_error(p, exact="tracekit: bad filter '%s' for 'test:seq' at column %d: "
                       "unknown field 'mgs' (did you mean 'msg'?)" % (flt, col))
    assert not os.path.exists(d)


def test_error_bad_filter_syntax():
    d = os.path.join(tklib.tmpdir(), "t")
    cases = [
        # (filter, column, message)
        ("seq >", len("seq >") + 1, "expected a value after '>'"),
        ("seq > 10 thread == 1", "seq > 10 thread == 1".index("thread") + 1,
         "expected '&&' or '||', got 'thread'"),
        ("seq > abc", "seq > abc".index("abc") + 1, "invalid integer 'abc'"),
        ("(seq > 1", 1, "unbalanced '('"),
    ]
    for flt, col, msg in cases:
        p = tk("record", "-o", d, "-e", "test:seq", "-f", flt, "--", BASIC)
        one_error(p, exact="tracekit: bad filter '%s' for 'test:seq' at column %d: %s"
                  % (flt, col, msg))
        assert not os.path.exists(d)


def test_bad_filter_one_rule_for_record_report_hist():
    """record -f, report -F and hist -f give the same line and exit 1 for
    the same bad filter, whether the events it applies to all have its
    fields (-e test:seq) or only some (-e 'test:*': test:kinds and
    test:phase lack them): the error is the one that got furthest into
    the expression, for the event it names."""
    d = os.path.join(tklib.tmpdir(), "t")
    record_basic(d, "-n", "20", "-k")
    cases = [
        ("seq >", len("seq >") + 1, "expected a value after '>'"),
        ("seq == 4 &&", len("seq == 4 &&") + 1, "expected a field name after '&&'"),
        ("seq > 10 thread == 1", "seq > 10 thread == 1".index("thread") + 1,
         "expected '&&' or '||', got 'thread'"),
        ("thread == 1 && name == 3", "thread == 1 && name == 3".index("name") + 1,
         "unknown field 'name'"),
        ("seq > abc", "seq > abc".index("abc") + 1, "invalid integer 'abc'"),
        ('seq == "x', len("seq == ") + 1, "expected a number for 'seq', got a string"),
    ]
    r = os.path.join(tklib.tmpdir(), "r")
    for flt, col, msg in cases:
        want = "tracekit: bad filter '%s' for 'test:seq' at column %d: %s" % (flt, col, msg)
        for pattern in ("test:seq", "test:*"):
            one_error(tk("record", "-o", r, "-e", pattern, "-f", flt, "--", BASIC),
                      exact=want, rc=1)
        one_error(tk("report", d, "-F", flt), exact=want, rc=1)
        one_error(tk("hist", d, "-e", "test:seq", "--key", "thread", "-f", flt),
                  exact=want, rc=1)
    assert not os.path.exists(r)
    # a field no event has: no event to blame where several failed alike
    want = "tracekit: bad filter 'bogus > 1' at column 1: unknown field 'bogus'"
    one_error(tk("report", d, "-F", "bogus > 1"), rc=1, exact=want)
    one_error(tk("record", "-o", r, "-e", "test:*", "-f", "bogus > 1", "--", BASIC),
              rc=1, exact=want)
    # a field of some events: those without it are left out, by record
    # as by report
    tklib.record(r, [BASIC, "-n", "20", "-k"], "-e", "test:*", "-f", "seq >= 15")
    want = [(e["event"], e["text"]) for e in tklib.report_lines(d, "-F", "seq >= 15")]
    assert [(e["event"], e["text"]) for e in tklib.report_lines(r)] == want
    assert [n for n, _ in want] == ["test:seq"] * 5, want


def test_error_bad_options():
    d = os.path.join(tklib.tmpdir(), "t")
    one_error(tk("record", "--bogus"), rc=2,
              exact="tracekit: unknown option '--bogus' (see 'tracekit record --help')")
    one_error(tk("record", "-o", d, "-b", "abc", "--", BASIC), rc=2,
              exact="tracekit: -b 'abc': buffer size must be a number of KiB, from 8 to 67108864")
    one_error(tk("report", "--ts", "foo", d), rc=2,
              exact="tracekit: --ts 'foo': use mono, real, raw, start or delta")
    one_error(tk("record"), rc=2,
              exact="tracekit: nothing to record: give a command after '--' or -P PID")
    one_error(tk("record", "-o", d, "-f", "seq > 1", "-e", "test:seq", "--", BASIC), rc=2,
              exact="tracekit: -f 'seq > 1' must follow the -e it filters")
    one_error(tk("record", "-o", d, "-P", "abc"), rc=2,
              exact="tracekit: -P 'abc': not a process id")
    one_error(tk("frobnicate"), rc=2,
              exact="tracekit: unknown command 'frobnicate' (see 'tracekit --help')")
    one_error(tk("recrod", "--", "true"), rc=2,
              exact="tracekit: unknown command 'recrod' (did you mean 'record'?)")
    one_error(tk("hsit"), rc=2, exact="tracekit: unknown command 'hsit' (did you mean 'hist'?)")
    assert not os.path.exists(d)


def test_error_stray_operands():
    # the first operand too many is named; the verbs whose options end
    # at their first operand point to their --help
    for args, extra in ((("report", "a", "b", "c"), "b"),
                        (("convert", "--to", "chrome", "a", "b"), "b"),
                        (("hist", "a", "b", "-e", "x", "--key", "y"), "b"),
                        (("list", "-e", "a", "b", "c"), "c"),
                        (("list", "-t", "b", "c"), "b"),
                        (("list", "-f", "a", "b"), "b"),
                        (("list", "/bin/true", "extra"), "extra")):
        one_error(tk(*args), rc=2, exact="tracekit: unexpected argument '%s'" % extra)
    for verb in ("start", "stop", "show", "extract", "reset"):
        one_error(tk(verb, "b", "c"), rc=2,
                  exact="tracekit: unexpected argument 'b' (see 'tracekit %s --help')" % verb)
    one_error(tk("reset", "-a", "-B", "x", "b"), rc=2,
              exact="tracekit: give -B NAME or -a, not both")


def test_error_program_not_found():
    """A command that is not there exits 127, one that is there but
    cannot be executed 126, as a shell says them; one line, no trace."""
    base = tklib.tmpdir()
    d = os.path.join(base, "t")
    one_error(tk("record", "-o", d, "--", "/nonexistent/prog"), rc=127,
              exact="tracekit: cannot run '/nonexistent/prog': No such file or directory")
    one_error(tk("record", "-o", d, "--", "no-such-command-xyz"), rc=127,
              exact="tracekit: cannot run 'no-such-command-xyz': command not found")
    noexec = os.path.join(base, "noexec")
    open(noexec, "w").write("#!/bin/sh\n")
    os.chmod(noexec, 0o644)
    adir = os.path.join(base, "adir")
    os.mkdir(adir)
    one_error(tk("record", "-o", d, "--", noexec), rc=126,
              exact="tracekit: cannot run '%s': Permission denied" % noexec)
    # found executable (a directory passes access(X_OK)): the exec fails
    one_error(tk("record", "-o", d, "--", adir), rc=126,
              exact="tracekit: cannot run '%s': Permission denied" % adir)
    assert not os.path.exists(d)


def test_error_output_not_usable():
    base = tklib.tmpdir()
    f = os.path.join(base, "file")
    open(f, "w").write("precious\n")
    one_error(tk("record", "-o", f, "--", BASIC, "-n", "3"),
              exact="tracekit: output '%s' exists and is not a directory" % f)
    assert open(f).read() == "precious\n"
    other = os.path.join(base, "other")
    os.mkdir(other)
    open(os.path.join(other, "keep"), "w").write("keep\n")
    one_error(tk("record", "-o", other, "--", BASIC, "-n", "3"),
              exact="tracekit: output directory '%s' exists and is not a tracekit trace"
              % other)
    assert os.listdir(other) == ["keep"]
    nested = os.path.join(base, "no", "such", "dir")
    one_error(tk("record", "-o", nested, "--", BASIC, "-n", "3"),
              exact="tracekit: cannot create output directory '%s': No such file or directory"
              % nested)


def test_error_attach_not_instrumented():
    d = os.path.join(tklib.tmpdir(), "t")
    sleeper = subprocess.Popen(["sleep", "10"])
    try:
        pid = sleeper.pid
        one_error(tk("record", "-o", d, "-P", str(pid)),
                  exact="tracekit: process %d is not instrumented with tracekit "
                        "(no control socket @tracekit-%d: Connection refused)" % (pid, pid))
        one_error(tk("list", str(pid)),
                  exact="tracekit: process %d is not instrumented with tracekit "
                        "(no control socket @tracekit-%d: Connection refused)" % (pid, pid))
    finally:
        stop(sleeper)
    one_error(tk("record", "-o", d, "-P", "999999"),
              exact="tracekit: no process with pid 999999")
    one_error(tk("list", "999999"), exact="tracekit: no process with pid 999999")
    assert not os.path.exists(d)


def test_error_attach_unknown_event():
    d = os.path.join(tklib.tmpdir(), "t")
    proc, pid = start_basic("-p", "200000")
    try:
        p = tk("record", "-o", d, "-P", str(pid), "-e", "test:sq", timeout=30)
        one_error(p, exact="tracekit: unknown event 'test:sq' in process %d "
                           "(did you mean 'test:seq'?)" % pid)
        assert not os.path.exists(d)
        assert proc.poll() is None, "the program died"
    finally:
        stop(proc)


def test_error_attach_other_user():
    nobody = as_nobody()
    out = tklib.tmpdir()
    os.chmod(out, 0o777)
    d = os.path.join(out, "att")
    proc, pid = start_basic("-p", "200000")
    try:
        p = run_as(nobody, "record", "-o", d, "-P", str(pid), timeout=30)
        one_error(p, exact="tracekit: process %d refused the connection (its control "
                           "socket answers only root and the user it runs as, and only "
                           "root if it is not dumpable, as setuid programs are not)" % pid)
        assert not os.path.exists(d), "a refused attach left a trace in %s" % d
        assert proc.poll() is None, "the program died"
    finally:
        stop(proc)


def test_error_list_other_user():
    nobody = as_nobody()
    proc, pid = start_basic("-p", "200000")
    problems = []
    try:
        p = run_as(nobody, "list", str(pid), timeout=30)
        try:
            one_error(p, contains=(str(pid),),
                      pattern=r"permission|denied|refus|another user|not allowed|only")
        except AssertionError as e:
            problems.append("list PID: %s" % e)
        # "list" alone shows this user's processes only (cmd-list.c)
        p = run_as(nobody, "list", timeout=30)
        if any(line.split()[:1] == [str(pid)] for line in p.stdout.splitlines()):
            problems.append("'list' as nobody shows root's process %d: %r" % (pid, p.stdout))
    finally:
        stop(proc)
    assert not problems, "\n".join(problems)


def test_error_output_not_writable():
    nobody = as_nobody()
    problems = []
    targets = []
    if not os.stat("/root").st_mode & 0o002:
        targets.append("/root/x")
    base = tklib.tmpdir()
    os.chmod(base, 0o755)  # root's, not writable by nobody
    targets.append(os.path.join(base, "x"))
    for d in targets:
        p = run_as(nobody, "record", "-o", d, "--", BASIC, "-n", "3", timeout=30)
        try:
            one_error(p, exact="tracekit: cannot create output directory '%s': "
                               "Permission denied" % d)
        except AssertionError as e:
            problems.append(str(e))
    assert not problems, "\n".join(problems)


def test_error_report_not_a_trace():
    base = tklib.tmpdir()
    empty = os.path.join(base, "empty")
    os.mkdir(empty)
    one_error(tk("report", empty), contains=(empty,),
              exact="tracekit: '%s' is not a tracekit trace (no tracekit.manifest)"
              % empty)
    # what record makes first, killed before its first manifest
    started = os.path.join(base, "started")
    for sub in ("", "events", "user"):
        os.mkdir(os.path.join(started, sub))
    one_error(tk("report", started), contains=(started,),
              exact="tracekit: '%s' holds no trace: its recorder stopped while it started,"
              " before it wrote tracekit.manifest" % started)
    afile = os.path.join(base, "afile")
    open(afile, "w").write("x\n")
    one_error(tk("report", afile), contains=(afile,),
              exact="tracekit: '%s' is not a tracekit trace (not a directory)" % afile)
    missing = os.path.join(base, "missing")
    one_error(tk("report", missing), contains=(missing,),
              exact="tracekit: cannot open '%s': No such file or directory" % missing)


def test_error_report_corrupt_manifest():
    base = tklib.tmpdir()
    good = os.path.join(base, "good")
    record_basic(good, "-n", "100", "-t", "2")
    bad = os.path.join(base, "bad")
    shutil.copytree(good, bad)
    manifest = os.path.join(bad, "tracekit.manifest")
    with open(manifest, "w") as f:
        f.write("garbage \x01\x02 not a manifest\n")
    p = tk("report", bad)
    one_error(p, exact="tracekit: '%s' line 1 is malformed" % manifest)
    assert p.stdout == ""
    # cut in the middle of the process line
    text = open(os.path.join(good, "tracekit.manifest")).read()
    lines = text.splitlines(True)
    pline = next(i for i, l in enumerate(lines) if l.startswith("process "))
    cut = sum(len(l) for l in lines[:pline]) + len(lines[pline]) // 2
    with open(manifest, "w") as f:
        f.write(text[:cut])
    one_error(tk("report", bad),
              exact="tracekit: '%s' line %d is malformed" % (manifest, pline + 1))
    # empty
    open(manifest, "w").close()
    one_error(tk("report", bad),
              exact="tracekit: '%s' is not a tracekit manifest (empty)" % manifest)
    # the events descriptor file is gone
    shutil.rmtree(bad)
    shutil.copytree(good, bad)
    for desc in glob.glob(os.path.join(bad, "events", "*")):
        os.remove(desc)
    one_error(tk("report", bad), contains=(os.path.join(bad, "events"),))


def test_error_report_corrupt_stream():
    base = tklib.tmpdir()
    good = os.path.join(base, "good")
    record_basic(good, "-n", "1000", "-t", "2")
    path, data = stream_of_thread0(good)
    rel = os.path.relpath(path, good)
    bad = os.path.join(base, "bad")
    shutil.copytree(good, bad)
    bpath = os.path.join(bad, rel)
    at = find_event(data, 0, 400)
    def event_id(off):
        return struct.unpack_from("<H", data, off)[0]
    assert event_id(at) == event_id(find_event(data, 0, 399)) < 0xfffe
    with open(bpath, "r+b") as f:  # event id 0xfffe in the header of seq 400
        f.seek(at)
        f.write(b"\xfe\xff")
    p = tk("report", bad, "--no-header")
    one_error(p, exact="tracekit: '%s' offset %d: event of unknown id" % (bpath, at))
    ev = [tklib.LINE_RE.match(l) for l in p.stdout.splitlines()]
    assert all(ev), "unparsable report output"
    seqs = {0: [], 1: []}
    for m in ev:
        if m.group(5) == "test:seq":
            t, s, _ = seq_fields(m.group(6))
            seqs[t].append(s)
    assert seqs[0] == list(range(400)), "thread 0: %d events before the damage, expected " \
        "seq 0..399" % len(seqs[0])
    assert seqs[1] == list(range(1000)), "thread 1 lost events to thread 0's damage"


def test_error_report_truncated_stream():
    base = tklib.tmpdir()
    good = os.path.join(base, "good")
    record_basic(good, "-n", "1000", "-t", "2")
    path, data = stream_of_thread0(good)
    rel = os.path.relpath(path, good)
    bad = os.path.join(base, "bad")
    shutil.copytree(good, bad)
    bpath = os.path.join(bad, rel)
    at = find_event(data, 0, 500)
    cut = at + 13  # in the middle of seq 500's record
    os.truncate(bpath, cut)
    p = tk("report", bad, "--no-header")
    line = one_error(p, contains=("'%s'" % bpath, "offset"))
    off = int(re.search(r"offset (\d+)", line).group(1))
    assert at <= off <= cut, "error at offset %d, but the damage is at %d..%d: %r" % (
        off, at, cut, line)
    seqs = {0: [], 1: []}
    for l in p.stdout.splitlines():
        m = tklib.LINE_RE.match(l)
        assert m, "unparsable report line %r" % l
        if m.group(5) == "test:seq":
            t, s, _ = seq_fields(m.group(6))
            seqs[t].append(s)
    assert seqs[1] == list(range(1000)), "thread 1 lost events to thread 0's truncation"
    assert seqs[0] == list(range(500)), "thread 0: %d events printed, expected the 500 " \
        "before the truncation (seq 0..499)" % len(seqs[0])


def test_error_keeps_existing_trace():
    base = tklib.tmpdir()
    d = os.path.join(base, "D")
    record_basic(d, "-n", "50", "-t", "2")
    before = tk("report", d, check=True).stdout
    assert before.count("test:seq:") == 100
    one_error(tk("record", "-o", d, "-e", "test:nope", "--", BASIC),
              contains=("'test:nope'",))
    one_error(tk("record", "-o", d, "--", "/nonexistent"),
              exact="tracekit: cannot run '/nonexistent': No such file or directory")
    one_error(tk("record", "-o", d, "-P", "999999"),
              exact="tracekit: no process with pid 999999")
    one_error(tk("record", "-o", d, "-e", "test:seq", "-f", "mgs == 1", "--", BASIC),
              contains=("'mgs'",))
    # fails after the output directory was prepared (attach, unknown event)
    proc, pid = start_basic("-p", "200000")
    try:
        one_error(tk("record", "-o", d, "-P", str(pid), "-e", "test:sq", timeout=30),
                  exact="tracekit: unknown event 'test:sq' in process %d "
                        "(did you mean 'test:seq'?)" % pid)
    finally:
        stop(proc)
    after = tk("report", d, check=True).stdout
    assert after == before, "a failed record changed the trace in %s" % d
    assert sorted(os.listdir(base)) == ["D"], "leftovers: %s" % os.listdir(base)
    # a successful record replaces it
    p, rows, total = record_basic(d, "-n", "7")
    new = tk("report", d, check=True).stdout
    assert new.count("test:seq:") == 7, new
    assert new != before
    pid = rows[0]["pid"]
    assert "# process %d (prog-basic)" % pid in new
    assert sorted(os.listdir(base)) == ["D"], "leftovers: %s" % os.listdir(base)
    last = p.stderr.splitlines()[-1]
    assert last == "tracekit: 2 streams of 1 process recorded in '%s'" % d, \
        "summary names another directory than the trace's: %r" % last


# ---------------------------------------------------------------- 2. babeltrace2

def bt_value(s, i):
    """Parse one babeltrace2 value at s[i]; returns (value, next index)."""
    if s[i] == '"':
        out, i = [], i + 1
        while s[i] != '"':
            if s[i] == "\\":
                i += 1
            out.append(s[i])
            i += 1
        return "".join(out), i + 1
    if s[i] == "{":
        return bt_struct(s, i)
    if s[i] == "[":
        items, i = [], i + 1
        while True:
            while s[i] == " ":
                i += 1
            if s[i] == "]":
                return items, i + 1
            m = re.compile(r"\[(\d+)\] = ").match(s, i)
            assert m and int(m.group(1)) == len(items), "bad array at %r" % s[i:]
            v, i = bt_value(s, m.end())
            items.append(v)
            if s[i] == ",":
                i += 1
    m = re.compile(r"[^,}\] ]+").match(s, i)
    tok = m.group(0)
    try:
        v = int(tok, 0)
    except ValueError:
        v = float(tok)
    return v, m.end()


def bt_struct(s, i):
    assert s[i] == "{"
    out, i = {}, i + 1
    while True:
        while s[i] == " ":
            i += 1
        if s[i] == "}":
            return out, i + 1
        m = re.compile(r"(\w+) = ").match(s, i)
        assert m, "bad struct at %r" % s[i:]
        v, i = bt_value(s, m.end())
        out[m.group(1)] = v
        if s[i] == ",":
            i += 1


RAW_LINE_RE = re.compile(r"^\s*(.+)-(\d+) \[(\d+)\] (\d+): ([^:]+:[^:]+): ?(.*)$")


def report_raw(outdir):
    """report --ts raw --no-header, parsed (raw timestamps have no dot)."""
    out = []
    for line in tk("report", outdir, "--no-header", "--ts", "raw", check=True).stdout.splitlines():
        m = RAW_LINE_RE.match(line)
        assert m, "unparsable report line: %r" % line
        out.append(dict(comm=m.group(1), tid=int(m.group(2)), cpu=int(m.group(3)),
                        raw=int(m.group(4)), event=m.group(5), text=m.group(6)))
    return out


BT_RE = re.compile(r"^\[(\d+)(?:\.(\d{9}))?\] \(\+[?.\d]+\) (\S+) (\S+): ")


def bt_events(outdir, *opts):
    out = []
    for line in tklib.babeltrace_lines(outdir, *opts):
        m = BT_RE.match(line)
        assert m, "unparsable babeltrace2 line %r" % line
        ctx, i = bt_struct(line, m.end())
        assert line[i:i + 2] == ", ", line
        payload, i = bt_struct(line, i + 2)
        assert i == len(line), "trailing text in %r" % line
        ts = int(m.group(1)) * 1000000000 + int(m.group(2)) if m.group(2) else int(m.group(1))
        out.append(dict(ts=ts, event=m.group(4), ctx=ctx, payload=payload))
    return out


def test_babeltrace2_agrees():
    tklib.babeltrace2()
    d = os.path.join(tklib.tmpdir(), "t")
    p, rows, total = record_basic(d, "-n", "1000", "-t", "2", "-k")
    assert total["events"] == 2003 and total["lost"] == 0, p.stderr
    pid = [r for r in rows if r["tid"] == r["pid"]][0]["pid"]
    rep = report_raw(d)
    bt = bt_events(d, "--clock-cycles")
    assert len(rep) == 2003, "report: %d events" % len(rep)
    assert len(bt) == len(rep), "babeltrace2: %d events, report: %d" % (len(bt), len(rep))
    assert [e["raw"] for e in rep] == sorted(e["raw"] for e in rep), \
        "report is not in time order"
    rep.sort(key=lambda e: (e["raw"], e["tid"]))
    bt.sort(key=lambda e: (e["ts"], e["ctx"]["tid"]))
    kinds_seen = 0
    for n, (r, b) in enumerate(zip(rep, bt)):
        where = "event %d: report %r / babeltrace2 %r" % (n, r, b)
        assert r["raw"] == b["ts"], "timestamps differ: " + where
        assert r["event"] == b["event"], where
        assert r["tid"] == b["ctx"]["tid"] and b["ctx"]["pid"] == pid, where
        assert r["cpu"] == b["ctx"]["cpu_id"], where
        pl = b["payload"]
        if r["event"] == "test:seq":
            t, s, msg = seq_fields(r["text"])
            assert (t, s, msg) == (pl["thread"], pl["seq"], pl["msg"]), where
            assert msg == MSGS[s % 10], where
        elif r["event"] == "test:phase":
            assert r["text"] == pl["name"] and pl["name"] in ("start", "end"), where
        elif r["event"] == "test:kinds":
            kinds_seen += 1
            assert kinds_fields(r["text"]) == KINDS, "report: " + where
            bvals = {k: pl[k] for k in KINDS}
            assert bvals == KINDS, "babeltrace2: " + where
            assert pl["bytes"] == KINDS_BYTES, where
            assert pl.get("_bytes_length", 4) == 4, where
        else:
            raise AssertionError("unexpected event: " + where)
    assert kinds_seen == 1
    # the same wall-clock conversion (report truncates to microseconds)
    rreal = tklib.report_lines(d, "--ts", "real")
    breal = bt_events(d, "--clock-seconds")
    for r, b in zip(sorted(rreal, key=lambda e: (e["ts"], e["tid"])),
                    sorted(breal, key=lambda e: (e["ts"], e["ctx"]["tid"]))):
        sec, usec = r["ts"].split(".")
        rn = int(sec) * 1000000000 + int(usec) * 1000
        bn = b["ts"]
        assert abs(rn - bn) < 5000, "real time: report %s, babeltrace2 %d" % (r["ts"], bn)


# ---------------------------------------------------------------- 3. report options

def test_report_options():
    d = os.path.join(tklib.tmpdir(), "t")
    mono0, real0 = time.monotonic(), time.time()
    p, rows, total = record_basic(d, "-n", "200", "-t", "2")
    mono1, real1 = time.monotonic(), time.time()
    pid = [r for r in rows if r["tid"] == r["pid"]][0]["pid"]
    everything = tklib.report_lines(d)
    assert len(everything) == 402
    # -F
    lines = tklib.report_lines(d, "-F", "seq < 5")
    got = sorted(seq_fields(e["text"])[:2] for e in lines)
    assert got == [(t, s) for t in (0, 1) for s in range(5)], got
    assert all(e["event"] == "test:seq" for e in lines)
    # --events
    lines = tklib.report_lines(d, "--events", "test:phase")
    assert [(e["event"], e["text"], e["tid"]) for e in lines] == \
        [("test:phase", "start", pid), ("test:phase", "end", pid)], lines
    lines = tklib.report_lines(d, "--events", "test:ph*", "--events", "test:seq",
                               "-F", "seq == 7")
    assert sorted(e["text"] for e in lines) == ["thread=0 seq=7 msg=seven",
                                                "thread=1 seq=7 msg=seven"], lines
    # string filters
    lines = tklib.report_lines(d, "-F", 'msg ~ "t*"')
    msgs = [seq_fields(e["text"])[2] for e in lines]
    assert len(msgs) == 2 * 200 * 2 // 10 and set(msgs) == {"two", "three"}, len(msgs)
    lines = tklib.report_lines(d, "-F", 'msg == "nine" && thread == 1')
    assert [seq_fields(e["text"])[1] for e in lines] == list(range(9, 200, 10))
    lines = tklib.report_lines(d, "-F", 'name != "start"')
    assert [e["text"] for e in lines] == ["end"]
    one_error(tk("report", d, "-F", "bogus > 1"), rc=1,
              exact="tracekit: bad filter 'bogus > 1' at column 1: unknown field 'bogus'")
    # timestamps: mono and real near the clocks at recording time
    slack = 0.01
    for opt, lo, hi in (("mono", mono0, mono1), ("real", real0, real1)):
        lines = tklib.report_lines(d, "--ts", opt)
        ts = [float(e["ts"]) for e in lines]
        assert lo - slack <= min(ts) and max(ts) <= hi + slack, \
            "--ts %s: events at %.6f..%.6f, recording ran %.6f..%.6f" % (
                opt, min(ts), max(ts), lo, hi)
        assert ts == sorted(ts)
    assert [e["ts"] for e in tklib.report_lines(d, "--ts", "mono")] == \
        [e["ts"] for e in everything], "--ts mono is not the default"


def test_report_select_threads():
    """--tid, --pid, --comm select user events by thread and process; -F
    knows common_pid (the thread), common_comm and common_cpu on user
    events as on kernel ones."""
    d = os.path.join(tklib.tmpdir(), "t")
    p, rows, total = record_basic(d, "-n", "50", "-t", "3")
    pid = rows[0]["pid"]
    every = tklib.report_lines(d)
    assert len(every) == 152
    tids = sorted({e["tid"] for e in every if e["event"] == "test:seq"})
    assert len(tids) == 3

    def sel(*opts):
        return [(e["tid"], e["text"]) for e in tklib.report_lines(d, *opts)]

    def of(*threads):
        return [(e["tid"], e["text"]) for e in every if e["tid"] in threads]

    assert sel("--tid", str(tids[0])) == of(tids[0]) and len(of(tids[0])) == 50
    assert sel("--tid", "%d,%d" % (tids[0], tids[2])) == of(tids[0], tids[2])
    assert sel("--tid", str(tids[0]), "--tid", str(tids[2])) == of(tids[0], tids[2])
    assert sel("--tid", str(pid)) == [(pid, "start"), (pid, "end")]
    assert sel("--pid", str(pid)) == of(pid, *tids)
    assert sel("--comm", "prog-b*") == of(pid, *tids)
    assert sel("--comm", "prog-b*", "--tid", str(tids[1])) == of(tids[1])
    assert sel("-F", "common_pid == %d" % tids[1]) == of(tids[1])
    assert sel("-F", 'common_comm == "prog-basic" && seq < 2') == \
        [(e["tid"], e["text"]) for e in every if re.search(r" seq=[01] ", e["text"])]
    for cpu in {e["cpu"] for e in every}:
        got = tklib.report_lines(d, "-F", "common_cpu == %d" % cpu)
        assert [(e["tid"], e["text"]) for e in got] == \
            [(e["tid"], e["text"]) for e in every if e["cpu"] == cpu]
    one_error(tk("report", d, "--tid", "12x"), rc=2,
              exact="tracekit: --tid '12x': not a list of ids (as 12,34)")
    one_error(tk("report", d, "--pid", "0"), rc=2,
              exact="tracekit: --pid '0': not a list of ids (as 12,34)")


def trace_freq(outdir):
    """The clock rate the report header gives."""
    m = re.search(r" at (\d+) Hz,", "\n".join(header_lines(outdir)))
    assert m, header_lines(outdir)
    return int(m.group(1))


def secs(ticks, freq):
    """Ticks as report prints seconds."""
    return tklib.secs_text(ticks * 10**9 // freq)


def test_report_relative_times():
    """--ts start: seconds since the trace's first event; --ts delta: since
    the line before (0 on the first); both exact from the raw ticks, also
    when the lines are a selection."""
    d = os.path.join(tklib.tmpdir(), "t")
    record_basic(d, "-n", "100", "-t", "2")
    freq = trace_freq(d)
    raw = [int(e["ts"]) for e in tklib.report_lines(d, "--ts", "raw")]
    assert len(raw) == 202
    got = [e["ts"] for e in tklib.report_lines(d, "--ts", "start")]
    assert got == [secs(t - raw[0], freq) for t in raw]
    got = [e["ts"] for e in tklib.report_lines(d, "--ts", "delta")]
    assert got == [secs(t - p, freq) for t, p in zip(raw, raw[:1] + raw)]
    # a selection: start still counts from the first event, delta between
    # the lines shown
    sel = [int(e["ts"]) for e in tklib.report_lines(d, "--ts", "raw", "-F", "seq > 90")]
    assert len(sel) == 18
    got = [e["ts"] for e in tklib.report_lines(d, "--ts", "start", "-F", "seq > 90")]
    assert got == [secs(t - raw[0], freq) for t in sel]
    got = [e["ts"] for e in tklib.report_lines(d, "--ts", "delta", "-F", "seq > 90")]
    assert got == [secs(t - p, freq) for t, p in zip(sel, raw[:1] + sel)]


def test_report_time_window():
    """--from/--to keep the events printed at those times, both included:
    relative (+S after the first event, or --ts start), absolute in the
    --ts clock (mono, real, raw ticks); a bad time is one error line."""
    d = os.path.join(tklib.tmpdir(), "t")
    record_basic(d, "-n", "100", "-t", "2")

    def us(t):
        whole, frac = t.split(".")
        return int(whole) * 10**6 + int(frac)

    for ts in ("start", "mono", "real", "raw"):
        every = tklib.report_lines(d, "--ts", ts)
        assert len(every) == 202
        lo, hi = every[50]["ts"], every[150]["ts"]
        val = int if ts == "raw" else us
        want = [e for e in every if val(lo) <= val(e["ts"]) <= val(hi)]
        assert 101 <= len(want) < 202
        got = tklib.report_lines(d, "--ts", ts, "--from", lo, "--to", hi)
        assert got == want, (ts, len(got), len(want))
        # one side only
        assert tklib.report_lines(d, "--ts", ts, "--from", lo) == \
            [e for e in every if val(lo) <= val(e["ts"])]
        assert tklib.report_lines(d, "--ts", ts, "--to", hi) == \
            [e for e in every if val(e["ts"]) <= val(hi)]
    start = tklib.report_lines(d, "--ts", "start")
    lo, hi = start[20]["ts"], start[120]["ts"]
    want = [e["text"] for e in start if us(lo) <= us(e["ts"]) <= us(hi)]
    assert [e["text"] for e in tklib.report_lines(d, "--from", "+" + lo, "--to", "+" + hi)] == want
    # --until, convert's name for --to, is the same option here
    assert [e["text"] for e in tklib.report_lines(d, "--from", "+" + lo, "--until", "+" + hi)] \
        == want
    # with a selection, and counted; -f is -F's other name (record's and
    # hist's name for a filter)
    sel = [e for e in start if us(lo) <= us(e["ts"]) <= us(hi) and "thread=1" in e["text"]]
    for flag in ("-F", "-f"):
        p = tk("report", d, "--count", "--from", "+" + lo, "--to", "+" + hi, flag,
               "thread == 1", check=True)
        assert p.stdout.splitlines() == ["%12d test:seq" % len(sel), "%12d total" % len(sel)]
    one_error(tk("report", d, "-f", "thread > 5"), rc=1,
              exact="tracekit: no event matched -f 'thread > 5' (202 events read)")
    one_error(tk("report", d, "--from", "1.2.3"), rc=2,
              exact="tracekit: --from '1.2.3': not a time (seconds as report prints them, "
                    "or +SECONDS after the first event)")
    one_error(tk("report", d, "--ts", "raw", "--to", "+x"), rc=2,
              exact="tracekit: --to '+x': not a time (seconds as report prints them, "
                    "clock ticks with --ts raw, or +SECONDS after the first event)")
    one_error(tk("report", d, "--from", "+2", "--to", "+1"), rc=2,
              exact="tracekit: --from '+2' is after --to '+1'")
    one_error(tk("report", d, "--from", "+2", "--until", "+1"), rc=2,
              exact="tracekit: --from '+2' is after --until '+1'")


def test_report_empty_selection():
    """A selection that matches nothing is said on stderr with exit 1: an
    --events pattern that names no event of the trace, and any selection
    (-F, --tid, --from, --profile) under which no event is left.  A
    pattern that names nothing beside others that do is a warning."""
    d = os.path.join(tklib.tmpdir(), "t")
    record_basic(d, "-n", "100", "-t", "2")
    p = one_error(tk("report", d, "--events", "nosuch:*"), rc=1,
                  exact="tracekit: --events 'nosuch:*' matches no event of the trace")
    p = tk("report", d, "--events", "nosuch:*", "--events", "test:nope")
    one_error(p, rc=1, exact="tracekit: --events 'nosuch:*', 'test:nope' match no event "
                             "of the trace")
    assert p.stdout == ""
    p = tk("report", d, "--no-header", "--events", "nosuch:*", "--events", "test:phase")
    assert p.returncode == 0 and len(p.stdout.splitlines()) == 2, p
    assert p.stderr == "tracekit: warning: --events 'nosuch:*' matches no event of the trace\n"
    for opts, said in ((("-F", "seq > 1000"), "-F 'seq > 1000'"),
                       (("--count", "-F", "seq > 1000"), "-F 'seq > 1000'"),
                       (("--tid", "1", "--events", "test:seq"), "--tid '1' --events 'test:seq'"),
                       (("--from", "+1000"), "--from '+1000'")):
        p = tk("report", d, *opts)
        one_error(p, rc=1, exact="tracekit: no event matched %s (202 events read)" % said)
    # --profile: function tracer events only
    one_error(tk("report", d, "--profile"), rc=1,
              exact="tracekit: no function tracer event in the trace (202 events read)")
    f = os.path.join(tklib.tmpdir(), "f")
    tklib.record(f, [tklib.prog("functree"), "tree"], "-p", "function_graph")
    p = tk("report", f, "--profile", "--tid", "1")
    one_error(p, rc=1, exact="tracekit: no function tracer event matched --tid '1' "
                             "(%d events read)" % int(re.search(
                                 r"(\d+) total", tk("report", f, "--count").stdout).group(1)))
    assert p.stdout == ""
    # an empty trace, nothing selected: no complaint
    e = os.path.join(tklib.tmpdir(), "e")
    record_basic(e, "-n", "10", opts=("-e", "test:seq", "-f", "seq > 100"))
    p = tk("report", e, "--no-header", check=True)
    assert p.stdout == "" and p.stderr == ""


def test_report_overwrite_cut():
    """Overwrite mode: the report starts where every stream is complete,
    the first event kept by the stream that lost older ones (the main
    thread's 'start' comes before it and is left out), and says so in the
    header; --no-cut shows everything kept."""
    d = os.path.join(tklib.tmpdir(), "t")
    p, rows, total = record_basic(d, "-n", "20000", opts=("-b", "8", "--overwrite"))
    pid = rows[0]["pid"]
    worker = [r for r in rows if r["tid"] != pid][0]
    assert worker["lost"] > 0 and [r["lost"] for r in rows if r["tid"] == pid] == [0]
    kept = tklib.report_lines(d, "--no-cut", "--ts", "raw")
    assert [e["text"] for e in kept if e["tid"] == pid] == ["start", "end"]
    cut = min(int(e["ts"]) for e in kept if e["tid"] == worker["tid"])
    assert tklib.report_lines(d, "--ts", "raw") == [e for e in kept if int(e["ts"]) >= cut]
    mono = [e["ts"] for e in tklib.report_lines(d) if e["tid"] == worker["tid"]][0]
    head = header_lines(d)
    assert head[-2] == ("# overwrite mode: every stream is complete from %s, where stream "
                        "prog-basic-%d begins; older events are left out (--no-cut shows "
                        "them)" % (mono, worker["tid"])), head
    assert header_lines(d, "--no-cut")[-2].endswith("(--no-cut: older events shown)")
    # nothing to cut in discard mode
    record_basic(d, "-n", "20000", opts=("-b", "8"))
    assert not any("overwrite mode:" in l for l in header_lines(d))


def test_stream_names_one_convention():
    """record's summary and report's header name each stream NAME-TID, the
    way report's lines name who fired: the same names on both sides."""
    d = os.path.join(tklib.tmpdir(), "t")
    p, rows, total = record_basic(d, "-n", "3", "-t", "2")
    pid = rows[0]["pid"]
    summary_names = sorted("%s-%d" % (r["name"], r["tid"]) for r in rows)
    header_names = sorted(re.match(r"^# stream (\S+):", l).group(1)
                          for l in header_lines(d) if l.startswith("# stream "))
    line_names = sorted({"%s-%d" % (e["comm"].strip(), e["tid"]) for e in tklib.report_lines(d)})
    assert summary_names == header_names == line_names, (summary_names, header_names,
                                                        line_names)
    assert all(r["pid"] == pid for r in rows) and len(rows) == 3, rows
    assert p.stderr.splitlines()[1].split() == ["STREAM", "PID", "EVENTS", "LOST", "BYTES"]


def test_renamed_threads():
    """Threads renamed after their first event (pthread_setname_np, prctl)
    go by their new names in the summary, report's header and its lines."""
    d = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(d, [tklib.prog("rename")])
    out = dict(l.split() for l in p.stdout.splitlines())
    tid, pid = int(out["thread"]), int(out["main"])
    rows, _ = tklib.summary(p.stderr)
    assert sorted((r["name"], r["tid"]) for r in rows) == \
        sorted([("after-main", pid), ("after-thread", tid)]), p.stderr
    assert sorted(l for l in header_lines(d) if l.startswith("# stream")) == \
        sorted(["# stream after-main-%d: 2 events, 0 lost" % pid,
                "# stream after-thread-%d: 2 events, 0 lost" % tid])
    got = sorted((e["comm"].strip(), e["tid"], e["text"]) for e in tklib.report_lines(d))
    assert got == sorted([("after-main", pid, "main-first"), ("after-main", pid, "main-second"),
                          ("after-thread", tid, "first"), ("after-thread", tid, "second")])


def test_report_header():
    d = os.path.join(tklib.tmpdir(), "t")
    p, rows, total = record_basic(d, "-n", "300", "-t", "3")
    pid = [r for r in rows if r["tid"] == r["pid"]][0]["pid"]
    head = header_lines(d)
    assert head[0] == "# tracekit trace '%s'" % d, head
    assert re.match(r"^# host \S+, started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, "
                    r"clock (tsc|mono) at \d+ Hz, discard mode$", head[1]), head[1]
    assert head[2] == "# process %d (prog-basic) %s, 3 events defined" % (
        pid, os.path.realpath(BASIC)), head[2]
    streams = {}
    for line in head[3:-1]:
        m = re.match(r"^# stream prog-basic-(\d+): (\d+) events, (\d+) lost$", line)
        assert m, "bad header line %r" % line
        streams[int(m.group(1))] = int(m.group(2))
        assert m.group(3) == "0"
    assert head[-1] == "#"
    assert len(streams) == 4, head
    counts = {}
    for e in tklib.report_lines(d):
        counts[e["tid"]] = counts.get(e["tid"], 0) + 1
    assert counts == streams, "header %r, events %r" % (streams, counts)
    assert streams[pid] == 2
    assert {r["tid"]: r["events"] for r in rows} == streams
    out = tk("report", d, "--no-header", check=True).stdout
    assert not any(l.startswith("#") for l in out.splitlines())


# ---------------------------------------------------------------- 4. record filters

def test_record_filter():
    d = os.path.join(tklib.tmpdir(), "t")
    p, rows, total = record_basic(d, "-n", "1000", "-t", "2",
                                  opts=("-e", "test:seq", "-f", "seq < 100"))
    assert total == dict(events=200, lost=0, bytes=total["bytes"]), p.stderr
    assert sorted(r["events"] for r in rows) == [100, 100]
    lines = tklib.report_lines(d)
    assert sorted(seq_fields(e["text"])[:2] for e in lines) == \
        [(t, s) for t in (0, 1) for s in range(100)]
    assert all(e["event"] == "test:seq" for e in lines)


def test_record_two_filters():
    d = os.path.join(tklib.tmpdir(), "t")
    p, rows, total = record_basic(
        d, "-n", "1000", "-t", "2",
        opts=("-e", "test:seq", "-f", "thread == 1 && seq >= 990",
              "-e", "test:phase", "-f", 'name == "end"'))
    assert total["events"] == 11 and total["lost"] == 0, p.stderr
    assert all(r["lost"] == 0 for r in rows)
    lines = tklib.report_lines(d)
    assert [e["text"] for e in lines if e["event"] == "test:seq"] == \
        ["thread=1 seq=%d msg=%s" % (s, MSGS[s % 10]) for s in range(990, 1000)]
    assert [e["text"] for e in lines if e["event"] == "test:phase"] == ["end"]
    assert lines[-1]["event"] == "test:phase"
    # a glob with a string filter
    d2 = os.path.join(tklib.tmpdir(), "t2")
    p, rows, total = record_basic(d2, "-n", "100", opts=("-e", "test:s*", "-f", 'msg ~ "*e"'))
    assert total["events"] == 40 and total["lost"] == 0, p.stderr
    msgs = [seq_fields(e["text"])[2] for e in tklib.report_lines(d2)]
    assert sorted(set(msgs)) == ["five", "nine", "one", "three"] and len(msgs) == 40


# ---------------------------------------------------------------- 5. attach

def attach_once(pid, outdir, sig):
    rec = subprocess.Popen([tklib.TRACEKIT, "record", "-P", str(pid), "-o", outdir],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # attached once it says so (however busy the machine); then 0.5 s
        first = rec.stderr.readline()
        assert first.startswith("tracekit: recording process %d" % pid), \
            (first, rec.communicate())
        time.sleep(0.5)
        assert rec.poll() is None, "record -P exited early: %r" % (rec.communicate(),)
        rec.send_signal(sig)
        out, err = rec.communicate(timeout=20)
        err = first + err
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    assert rec.returncode == 0, "record -P exited %d after %s: %r" % (
        rec.returncode, sig.name, err)
    rows, total = tklib.summary(err)
    assert total and total["events"] > 0 and total["lost"] == 0, err
    assert len(rows) == 1 and rows[0]["pid"] == pid, err
    lines = tklib.report_lines(outdir)
    seqs = [seq_fields(e["text"]) for e in lines]
    assert all(e["event"] == "test:seq" for e in lines)
    assert all(t == 0 and msg == MSGS[s % 10] for t, s, msg in seqs)
    nums = [s for _, s, _ in seqs]
    assert nums == list(range(nums[0], nums[0] + len(nums))), \
        "thread 0's seq numbers are not contiguous"
    assert len(nums) == total["events"]
    head = header_lines(outdir)
    assert "# stream prog-basic-%d: %d events, 0 lost" % (rows[0]["tid"], len(nums)) in head, head
    return nums, head


def test_attach():
    proc, pid = start_basic("-p", "200000")
    try:
        base = tklib.tmpdir()
        first, head1 = attach_once(pid, os.path.join(base, "a1"), signal.SIGINT)
        assert proc.poll() is None, "the program died after the first session"
        second, head2 = attach_once(pid, os.path.join(base, "a2"), signal.SIGINT)
        assert second[0] > first[-1]
        assert proc.poll() is None, "the program died after the second session"
        third, head3 = attach_once(pid, os.path.join(base, "a3"), signal.SIGTERM)
        assert third[0] > second[-1]
        time.sleep(0.1)
        assert proc.poll() is None, "the program died after SIGTERM to the recorder"
        os.kill(pid, 0)
        # the process is prog-basic, not its control thread
        for head in (head1, head2, head3):
            procs = [l for l in head if l.startswith("# process ")]
            assert procs == ["# process %d (prog-basic) %s, 3 events defined" % (
                pid, os.path.realpath(BASIC))], procs
    finally:
        stop(proc)


def test_attach_interrupted_at_any_point():
    """SIGINT to record -P at any point of its start (0, 10, 20 ms... after
    it was started, until 6 runs got past loading: preparing, the
    handshake, the first packets): record either dies of it before it has
    made anything (nothing left behind) or stops at once with exit 0,
    nothing lost and a readable trace, never 'no answer' nor a hang; the
    program lives on, and the next session's counts are its own (nothing
    lost)."""
    proc, pid = start_basic("-p", "200000")
    try:
        base = tklib.tmpdir()
        made = set()
        for i in range(200):
            if len(made) == 6:
                break
            out = os.path.join(base, "i%d" % i)
            rec = subprocess.Popen([tklib.TRACEKIT, "record", "-P", str(pid), "-o", out],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(i * 0.01)
            rec.send_signal(signal.SIGINT)
            _, err = rec.communicate(timeout=20)
            if rec.returncode == -signal.SIGINT:
                # before record took its signals: nothing made yet
                assert err == "" and set(os.listdir(base)) == made, \
                    (i, err, os.listdir(base))
                continue
            assert rec.returncode == 0, (i, rec.returncode, err)
            assert "answer" not in err.replace("stopped before process %d answered" % pid, ""), \
                (i, err)
            made.add("i%d" % i)
            rows, total = tklib.summary(err)
            assert total is not None and total["lost"] == 0, (i, err)
            p = tklib.tracekit("report", out, check=False)
            assert p.returncode == 0 and p.stderr == "", (i, p.stderr)
            assert proc.poll() is None, "the program ended (%d) at %d" % (proc.returncode, i)
        assert len(made) == 6 and set(os.listdir(base)) == made, (made, os.listdir(base))
        attach_once(pid, os.path.join(base, "after"), signal.SIGINT)
        assert proc.poll() is None
    finally:
        stop(proc)


def test_record_exit_status_is_the_commands():
    """record exits with its command's status, 128 + N when signal N
    killed it, as time and strace do, and says how it ended unless -q;
    the trace is complete either way."""
    for cmd, rc, said in ((["sh", "-c", "exit 127"], 127, "'sh' exited with status 127"),
                          (["sh", "-c", "exit 3"], 3, "'sh' exited with status 3"),
                          (["sh", "-c", "kill -SEGV $$"], 128 + 11,
                           "'sh' was killed by signal 11 (Segmentation fault)"),
                          ([BASIC, "-n", "5"], 0, None)):
        for quiet in (True, False):
            d = os.path.join(tklib.tmpdir(), "t")
            p = tk("record", *(["-q"] if quiet else []), "-o", d, "--", *cmd)
            assert p.returncode == rc, (cmd, p.returncode, p.stderr)
            ended = [l for l in p.stderr.splitlines() if "exited with" in l or "killed by" in l]
            assert ended == ([] if quiet or not said else ["tracekit: " + said]), p.stderr
            if quiet:
                assert p.stderr == "", p.stderr
            assert os.path.exists(os.path.join(d, "tracekit.manifest"))
    # Ctrl-C: passed on to the command, which dies of it (SIGINT as a
    # terminal leaves it: not ignored, as it is for a background job)
    d = os.path.join(tklib.tmpdir(), "t")
    rec = subprocess.Popen([tklib.TRACEKIT, "record", "-q", "-o", d, "--", "sleep", "30"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=tklib.default_sigint)
    time.sleep(0.5)
    rec.send_signal(signal.SIGINT)
    err = rec.communicate(timeout=20)[1]
    assert rec.returncode == 128 + 2, (rec.returncode, err)


def test_record_says_it_runs():
    """One line once recording runs: the command and its pid, or the
    process attached to, and where the trace goes; none with -q."""
    d = os.path.join(tklib.tmpdir(), "t")
    p = tk("record", "-o", d, "--", BASIC, "-n", "3", check=True)
    lines = p.stderr.splitlines()
    rows, _ = tklib.summary(p.stderr)
    assert lines[0] == "tracekit: recording '%s' (pid %d) to '%s'; Ctrl-C to stop" % (
        BASIC, rows[0]["pid"], d), lines
    assert sum("Ctrl-C" in l for l in lines) == 1, lines
    p = tk("record", "-q", "-o", d, "--", BASIC, "-n", "3", check=True)
    assert p.stderr == "", p.stderr
    proc, pid = start_basic("-p", "200000")
    try:
        rec = subprocess.Popen([tklib.TRACEKIT, "record", "-P", str(pid), "-o", d],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = rec.stderr.readline()
        rec.send_signal(signal.SIGINT)
        rest = rec.communicate(timeout=20)[1]
        assert rec.returncode == 0, rest
    finally:
        stop(proc)
    assert first == "tracekit: recording process %d (prog-basic) to '%s'; Ctrl-C to stop\n" % (
        pid, d), first
    assert "Ctrl-C" not in rest


def run_on_pty(args, timeout=60):
    """Run ARGS with stdin, stdout and stderr on a pseudo-terminal; returns
    (exit status, everything written, as bytes)."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    out, end = b"", time.time() + timeout
    try:
        while time.time() < end:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every slave end closed
                break
            if not data:
                break
            out += data
    finally:
        os.close(master)
        if p.poll() is None:
            p.kill()
    return p.wait(), out


LIVE_RE = re.compile(rb"\rtracekit: (\d+) events/s, [\d.]+ (?:B|KiB|MiB|GiB)/s, (\d+) lost/s "
                     rb"\((\d+) events, [\d.]+ (?:B|KiB|MiB|GiB), (\d+) lost in all"
                     rb"(?:; kernel (\d+) events, [\d.]+ (?:B|KiB|MiB|GiB))?\)\x1b\[K")


def test_record_live_line_on_terminal():
    """On a terminal, record rewrites one line every second: events,
    bytes and lost per second, and in all; each second's events add up to
    the total so far, and the line is erased before the summary.  Not on
    a pipe."""
    d = os.path.join(tklib.tmpdir(), "t")
    rc, out = run_on_pty([tklib.TRACEKIT, "record", "-o", d, "--", BASIC, "-n", "25000",
                          "-p", "100000"])
    assert rc == 0, out[-2000:]
    lines = [tuple(int(x) for x in m.groups()[:4]) for m in LIVE_RE.finditer(out)]
    assert len(lines) >= 2, out[:2000]
    assert sum(l[0] for l in lines) == lines[-1][2], lines
    assert sum(l[1] for l in lines) == lines[-1][3] == 0, lines
    assert lines[-1][2] <= 25000 + 2
    assert b"\r\x1b[KSTREAM " in out, out[-800:]
    assert out.count(b"Ctrl-C to stop") == 1
    p = tk("record", "-o", d, "--", BASIC, "-n", "25000", "-p", "100000", check=True)
    assert "events/s" not in p.stderr and "\r" not in p.stderr


def test_record_live_line_counts_from_the_start():
    """The live line counts the events of sub-buffers not yet full, and
    the kernel's: prog-ksys fires kb:begin, makes 500 getppid() calls (and
    its main thread one), fires kb:end and kb:sleep, then sleeps 2.5 s:
    the first line, a second in, says 3 + 501 events in all, 501 of them
    kernel events (it said 0 events until a user sub-buffer filled, and
    nothing of the kernel)."""
    import kernlib
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        rc, out = run_on_pty([tklib.TRACEKIT, "record", "-o", d, "-e", "kb:*", "-e",
                              "syscalls:sys_enter_getppid", "-F", "--", tklib.prog("ksys"),
                              "-n", "500", "-s", "2500"])
    assert rc == 0, out[-2000:]
    first = LIVE_RE.search(out)
    assert first, out[:2000]
    assert (int(first.group(3)), int(first.group(4)), first.group(5)) == (504, 0, b"501"), \
        first.group(0)
    assert int(first.group(1)) == 504, first.group(0)


def test_attach_big_static_tls():
    """Programs with 256 KiB, 1 MiB and 16 MiB of static TLS (which glibc
    takes out of every thread's stack) still get their control thread:
    list PID lists their events, record -P records them."""
    for name in ("tls256k", "tls1m", "tls16m"):
        proc, pid = start_basic("-p", "200000", binary=tklib.prog(name))
        try:
            p = tk("list", "--names", str(pid), timeout=30)
            assert (p.returncode, p.stdout.split(), p.stderr) == (
                0, ["test:kinds", "test:phase", "test:seq"], ""), (name, p)
            out = os.path.join(tklib.tmpdir(), name)
            rec = subprocess.Popen([tklib.TRACEKIT, "record", "-P", str(pid), "-o", out,
                                    "-e", "test:seq"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
            # attached once it says so; then ~2,500 events in 0.5 s
            first = rec.stderr.readline()
            assert first.startswith("tracekit: recording process %d" % pid), (name, first)
            time.sleep(0.5)
            rec.send_signal(signal.SIGINT)
            _, err = rec.communicate(timeout=20)
            err = first + err
            assert rec.returncode == 0, (name, rec.returncode, err)
            rows, total = tklib.summary(err)
            seqs = [seq_fields(e["text"])[1] for e in tklib.report_lines(out)]
            assert len(rows) == 1 and total["lost"] == 0 and total["events"] == len(seqs) > 0, \
                (name, err)
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), name
            assert proc.poll() is None, "%s died" % name
        finally:
            stop(proc)


# A control socket that never answers, or closes every connection at
# once: @tracekit-PID bound by a script, not by the runtime.
SILENT_SOCKET = """
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind("\\0tracekit-%d" % os.getpid())
s.listen(4)
print("ready", flush=True)
while True:
    if sys.argv[1] == "close":
        s.accept()[0].close()
    else:
        time.sleep(1)
"""


def test_attach_silent_control_socket():
    """list PID and record -P give up after 3 s on a control socket that
    says nothing, and say so; one that closes at once is not called a
    refusal of our user when we are root."""
    for mode, msg in (("silent", "process %d did not answer on its control socket "
                                 "@tracekit-%d within 3 s"),
                      ("close", "process %d closed the connection without answering")):
        proc = subprocess.Popen(["python3", "-c", SILENT_SOCKET, mode],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline() == "ready\n"
            pid = proc.pid
            want = "tracekit: " + (msg % (pid, pid) if mode == "silent" else msg % pid)
            one_error(tk("list", str(pid), timeout=30), exact=want, rc=1)
            d = os.path.join(tklib.tmpdir(), "t")
            one_error(tk("record", "-o", d, "-P", str(pid), timeout=30), exact=want, rc=1)
            assert not os.path.exists(d), "record -P left %s" % d
        finally:
            stop(proc)


def test_attach_stopped_process():
    """A process stopped by SIGSTOP answers nothing: list PID and record
    -P give up after 3 s as for a silent socket, and say it is stopped
    and how to resume it."""
    proc, pid = start_basic("-p", "200000")
    try:
        os.kill(pid, signal.SIGSTOP)
        want = ("tracekit: process %d did not answer on its control socket @tracekit-%d "
                "within 3 s: it is stopped (SIGSTOP or Ctrl-Z; 'kill -CONT %d' resumes it)"
                % (pid, pid, pid))
        one_error(tk("list", str(pid), timeout=30), exact=want, rc=1)
        d = os.path.join(tklib.tmpdir(), "t")
        one_error(tk("record", "-o", d, "-P", str(pid), timeout=30), exact=want, rc=1)
        assert not os.path.exists(d), "record -P left %s" % d
        os.kill(pid, signal.SIGCONT)
        # running again, it answers
        assert "test:seq" in tk("list", str(pid), check=True, timeout=30).stdout
    finally:
        os.kill(pid, signal.SIGCONT)
        stop(proc)


# ---------------------------------------------------------------- 6. list

SEQ_FORMAT = [
    "test:seq",
    "\tID: 2",
    "\tfield:uint32_t thread;\toffset:0;\tsize:4;\tsigned:0;",
    "\tfield:uint64_t seq;\toffset:4;\tsize:8;\tsigned:0;",
    "\tfield:__data_loc char[] msg;\toffset:12;\tsize:var;\tsigned:0;",
    '\tprint fmt: "thread=%u seq=%lu msg=%s", thread, seq, msg',
]


def list_blocks(text):
    blocks, cur = {}, None
    for line in text.splitlines():
        if line and not line.startswith("\t"):
            cur = line
            blocks[cur] = [line]
        elif line and cur:
            blocks[cur].append(line)
    return blocks


def check_list_output(text):
    blocks = list_blocks(text)
    assert sorted(blocks) == ["test:kinds", "test:phase", "test:seq"], blocks.keys()
    seq = blocks["test:seq"]
    assert seq[0] == "test:seq" and re.match(r"^\tID: \d+$", seq[1]), seq
    assert seq[2:] == SEQ_FORMAT[2:], "test:seq:\n%s" % "\n".join(seq)
    phase = blocks["test:phase"]
    assert phase[2:] == ["\tfield:__data_loc char[] name;\toffset:0;\tsize:var;\tsigned:0;",
                         '\tprint fmt: "%s", name'], phase
    kinds = blocks["test:kinds"]
    assert kinds[2:] == [
        "\tfield:int8_t a;\toffset:0;\tsize:1;\tsigned:1;",
        "\tfield:int16_t b;\toffset:1;\tsize:2;\tsigned:1;",
        "\tfield:int32_t c;\toffset:3;\tsize:4;\tsigned:1;",
        "\tfield:int64_t d;\toffset:7;\tsize:8;\tsigned:1;",
        "\tfield:uint8_t e;\toffset:15;\tsize:1;\tsigned:0;",
        "\tfield:uint16_t f;\toffset:16;\tsize:2;\tsigned:0;",
        "\tfield:uint32_t g;\toffset:18;\tsize:4;\tsigned:0;",
        "\tfield:uint64_t h;\toffset:22;\tsize:8;\tsigned:0;",
        "\tfield:void * p;\toffset:30;\tsize:8;\tsigned:0;",
        "\tfield:double x;\toffset:38;\tsize:8;\tsigned:1;",
        "\tfield:char comm[8];\toffset:46;\tsize:8;\tsigned:0;",
        "\tfield:__data_loc char[] s;\toffset:54;\tsize:var;\tsigned:0;",
        "\tfield:__data_loc uint8_t[] bytes;\toffset:var;\tsize:var;\tsigned:0;",
        '\tprint fmt: "a=%d b=%d c=%d d=%ld e=%u f=%u g=%u h=%lu p=%p x=%g comm=%s s=%s", '
        "a, b, c, d, e, f, g, h, p, x, comm, s",
    ], "\n".join(kinds)
    return blocks


def test_list_program():
    p = tk("list", BASIC, check=True)
    assert p.stderr == ""
    check_list_output(p.stdout)
    p = tk("list", "--names", BASIC, check=True)
    assert p.stdout == "test:kinds\ntest:phase\ntest:seq\n", p.stdout
    one_error(tk("list", "/nonexistent"),
              exact="tracekit: cannot open '/nonexistent': No such file or directory")


def test_list_process():
    proc, pid = start_basic("-p", "200000")
    try:
        p = tk("list", str(pid), check=True)
        assert p.stderr == ""
        first, rest = p.stdout.split("\n", 1)
        assert re.match(r"^# process %d: static keys, \d+ call sites patched$" % pid, first) or \
            first.startswith("# process %d: call sites test a byte (no static keys: " % pid), first
        blocks = check_list_output(rest)
        assert sorted(blocks) == sorted(check_list_output(tk("list", BASIC, check=True).stdout))
        p = tk("list", "--names", str(pid), check=True)
        assert p.stdout == "test:kinds\ntest:phase\ntest:seq\n", p.stdout
        p = tk("list", check=True)
        assert "%d prog-basic" % pid in p.stdout.splitlines(), p.stdout
        # listing enabled nothing and did not disturb the program
        assert proc.poll() is None
    finally:
        stop(proc)


# ---------------------------------------------------------------- 7. security

def test_trace_modes():
    base = tklib.tmpdir()
    d = os.path.join(base, "t")
    # with umask 0 too: the modes must not come from the umask
    p = subprocess.run([tklib.TRACEKIT, "record", "-o", d, "--", BASIC, "-n", "100", "-t", "2"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=60, preexec_fn=lambda: os.umask(0))
    assert p.returncode == 0, p.stderr
    # and a trace that replaced another one
    p = subprocess.run([tklib.TRACEKIT, "record", "-o", d, "--", BASIC, "-n", "50"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=60, preexec_fn=lambda: os.umask(0))
    assert p.returncode == 0, p.stderr
    bad = []
    nfiles = 0
    for root, dirs, files in os.walk(d):
        mode = stat.S_IMODE(os.lstat(root).st_mode)
        if mode != 0o700:
            bad.append("%s: dir mode %o" % (root, mode))
        for f in files:
            st = os.lstat(os.path.join(root, f))
            nfiles += 1
            if not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o600:
                bad.append("%s: mode %o" % (os.path.join(root, f), st.st_mode))
    assert nfiles >= 4
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------- 8. demo

def test_demo():
    if not os.path.exists(DEMO):
        raise tklib.Skip("%s is not built" % DEMO)
    d = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(d, [DEMO, "50", "3"])
    rows, total = tklib.summary(p.stderr)
    assert total and total["lost"] == 0, p.stderr
    lines = tklib.report_lines(d)
    assert len(lines) == total["events"]
    starts, dones = [], []
    for e in lines:
        f = tklib.fields(e["text"])
        if e["event"] == "demo:request_start":
            starts.append(int(f["id"]))
            assert f["path"] == "/item/%d" % (int(f["id"]) % 40), e
            assert re.match(r"^worker-[0-2]$", e["comm"]), e
        elif e["event"] == "demo:request_done":
            dones.append(int(f["id"]))
            assert f["status"] == ("404" if int(f["id"]) % 10 == 0 else "200"), e
    assert sorted(starts) == list(range(1, 51)), sorted(starts)
    assert sorted(dones) == list(range(1, 51)), sorted(dones)
    marks = [(e["event"], e["text"]) for e in lines if e["event"] in ("demo:start", "demo:stop")]
    assert marks == [("demo:start", "serving 50 requests with 3 workers"),
                     ("demo:stop", "served 50 requests")], marks
    assert lines[0]["event"] == "demo:start" and lines[-1]["event"] == "demo:stop"


def test_report_count():
    d = os.path.join(tklib.tmpdir(), "t")
    record_basic(d, "-n", "1500", "-t", "3", "-k")
    p = tk("report", "--count", d)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("\n") == [
        "           1 test:kinds",
        "           2 test:phase",
        "        4500 test:seq",
        "        4503 total",
        ""], p.stdout
    p = tk("report", "--count", "--events", "test:seq", "-F", "seq < 10", d)
    assert p.stdout.split("\n")[-2:] == ["          30 total", ""], p.stdout


def packets(stream, cpu=False):
    """(content_size, packet_size) in bytes of each packet of a user stream
    file; with CPU, (content_size, packet_size, cpu_id)."""
    data = open(stream, "rb").read()
    out, off = [], 0
    while off < len(data):
        magic, = struct.unpack_from("<I", data, off)
        assert magic == 0xc1fc1fc1, (stream, off)
        content, size = struct.unpack_from("<QQ", data, off + 32)
        cpu_id, = struct.unpack_from("<I", data, off + 64)
        out.append((content // 8, size // 8) + ((cpu_id,) if cpu else ()))
        off += size // 8
    return out


def packet_sizes(stream):
    """The packet_size (bytes) of each packet of a user stream file."""
    return [size for _, size in packets(stream)]


def test_subbuffer_sizes():
    # A thread's first packet is its 4 KiB inline page; then sub-buffers of
    # 64 KiB (fewer than 2 in -b: half of -b), or -b / --subbufs.  On disk
    # each packet is padded to 4 KiB (O_DIRECT) or not (buffered writes).
    # The program stays on one CPU, so that each sub-buffer is one packet.
    d = os.path.join(tklib.tmpdir(), "t")
    cpu = min(os.sched_getaffinity(0))
    for opts, most in ((["-b", "4096"], 64 << 10),
                       (["-b", "4096", "--subbufs", "2"], 2 << 20),
                       (["-b", "64"], 32 << 10)):
        p = tklib.record(d, ["taskset", "-c", str(cpu), BASIC, "-n", "40000"], *opts)
        rows, total = tklib.summary(p.stderr)
        row = max(rows, key=lambda r: r["events"])  # the thread writing
        sizes = packet_sizes(os.path.join(d, "user", "%d-%d" % (row["pid"], row["tid"])))
        assert sum(sizes) == row["bytes"], (opts, sum(sizes), row)
        assert 4096 - 256 < sizes[0] <= 4096, (opts, sizes[:3])
        # each packet but the first and last was closed when the next event
        # did not fit
        assert all(most - 256 < n <= most for n in sizes[1:-1]), (opts, sizes[:5])
        assert 0 < sizes[-1] <= most, (opts, sizes[-1])
        if opts != ["-b", "64"]:  # 2 sub-buffers of 32 KiB: a flood loses
            assert total["lost"] == 0, (opts, p.stderr)
            assert len(sizes) == 1 + -(-(row["bytes"] - sizes[0]) // most), \
                (opts, len(sizes), row)
    p = tk("record", "-o", d, "--subbufs", "4097", "--", BASIC, "1")
    assert p.returncode == 2 and p.stderr == \
        "tracekit: --subbufs '4097': must be from 2 to 4096\n", p.stderr


def test_bare_function_tracer_on_plain_program():
    # A bare -p function_graph on a program not built for function tracing
    # goes to the kernel; where the kernel cannot do it either, the one line
    # says both, so the user learns how to build the program.
    import kernlib
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p = tklib.record(d, [BASIC, "1"], "-p", "function_graph", check=False)
    if p.returncode == 0:
        raise tklib.Skip("this kernel runs function_graph in an instance")
    m = re.fullmatch(r"tracekit: (.*); and '(.*)' is not built for function tracing: "
                     r"compile it with -fpatchable-function-entry=5 \(gcc, clang\), "
                     r"-pg -mfentry -mnop-mcount -mrecord-mcount with -fno-pie -no-pie "
                     r"\(gcc\) or -finstrument-functions\n", p.stderr)
    assert m, p.stderr
    assert m.group(2) == BASIC
    assert m.group(1) in ("the kernel does not permit the function_graph tracer here "
                          "(current_tracer: Operation not permitted)",) or \
        m.group(1).startswith("tracer 'function_graph' is not available (available: "), p.stderr
    assert not os.path.exists(d)
