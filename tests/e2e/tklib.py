# SPDX-License-Identifier: MIT
"""Helpers for tracekit's end-to-end tests.

Each test file tests/e2e/test_*.py defines functions named test_*; the
runner (run.py) calls each, in file order.  A test fails by raising
(assert), skips by raising Skip("reason").  Tests run the real tool on the
programs built in tests/progs, in a fresh temporary directory each.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

BUILD = os.environ.get("TK_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
BUILD = os.path.abspath(BUILD)
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRACEKIT = os.path.join(BUILD, "cli", "tracekit")


class Skip(Exception):
    """Raised by a test that cannot run here; the message says why."""


def prog(name):
    """Path of a test program built from tests/progs/NAME.c."""
    path = os.path.join(BUILD, "tests", "progs", "prog-" + name)
    if not os.path.exists(path):
        path = os.path.join(BUILD, "tests", "progs", name)
    return path


def tmpdir():
    """A fresh directory, removed when the test process ends."""
    d = tempfile.mkdtemp(prefix="tk-e2e-")
    _tmpdirs.append(d)
    return d


_tmpdirs = []


def cleanup():
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)
    _tmpdirs.clear()


def run(args, timeout=120, check=True, env=None, **kw):
    """Run a command; returns CompletedProcess with text stdout/stderr."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout, env=full_env, **kw)
    if check and p.returncode != 0:
        raise AssertionError("%s exited %d\nstdout: %s\nstderr: %s" % (
            " ".join(args), p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return p


def tracekit(*args, **kw):
    return run([TRACEKIT] + list(args), **kw)


def record(outdir, cmd, *opts, **kw):
    """tracekit record -o OUTDIR OPTS -- CMD; returns the CompletedProcess."""
    return tracekit("record", "-o", outdir, *opts, "--", *cmd, **kw)


SUMMARY_RE = re.compile(r"^(\S+)-(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$")


def summary(stderr):
    """Per-stream rows of record's summary (NAME-TID PID EVENTS LOST BYTES):
    list of dicts (name, tid, pid, events, lost, bytes) and the totals row
    as a dict."""
    rows, total = [], None
    for line in stderr.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "total":
            total = dict(events=int(parts[1]), lost=int(parts[2]), bytes=int(parts[3]))
            continue
        m = SUMMARY_RE.match(line.strip())
        if m:
            rows.append(dict(name=m.group(1), tid=int(m.group(2)), pid=int(m.group(3)),
                             events=int(m.group(4)), lost=int(m.group(5)),
                             bytes=int(m.group(6))))
    return rows, total


LOST_RE = re.compile(r"^(.+)-(\d+) \[(\d+) EVENTS DROPPED\]$")
LINE_RE = re.compile(r"^\s*(.+)-(\d+) \[(\d+)\] (\d+(?:\.\d+)?): ([^:]+:[^:]+): ?(.*)$")


def report_lines(outdir, *opts):
    """Event lines of `tracekit report --no-header`, parsed: list of dicts
    (comm, tid, cpu, ts (string: seconds, or ticks with --ts raw), event,
    text); the lines that mark a user stream's losses
    ("COMM-TID [N EVENTS DROPPED]") are left out."""
    p = tracekit("report", outdir, "--no-header", *opts, timeout=300)
    out = []
    for line in p.stdout.splitlines():
        if LOST_RE.match(line):
            continue
        m = LINE_RE.match(line)
        assert m, "unparsable report line: %r" % line
        out.append(dict(comm=m.group(1), tid=int(m.group(2)), cpu=int(m.group(3)),
                        ts=m.group(4), event=m.group(5), text=m.group(6)))
    return out


def secs_text(ns):
    """Nanoseconds as report prints them: seconds and whole microseconds,
    rounded half up as trace-cmd report does (1.0000005 is 1.000001)."""
    return "%d.%06d" % divmod((ns + 500) // 1000, 10**6)


def fields(text):
    """'a=1 b=x' -> {'a': '1', 'b': 'x'} (values without spaces)."""
    return dict(kv.split("=", 1) for kv in text.split() if "=" in kv)


def babeltrace2():
    path = shutil.which("babeltrace2")
    if not path:
        raise Skip("babeltrace2 is not installed")
    return path


def babeltrace_lines(outdir, *opts):
    """babeltrace2's text output of OUTDIR/user, as lines."""
    p = run([babeltrace2()] + list(opts) + [os.path.join(outdir, "user")], timeout=600)
    return p.stdout.splitlines()


def wait_for_file(path, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return open(path).read()
        time.sleep(0.01)
    raise AssertionError("%s did not appear" % path)


def default_sigint():
    """preexec_fn: SIGINT at its default, as a terminal's foreground job has
    it (a background job, which tests/run may be, ignores it, and so would
    the command that record starts)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def kill_quietly(proc, sig=signal.SIGKILL):
    try:
        proc.send_signal(sig)
    except ProcessLookupError:
        pass
