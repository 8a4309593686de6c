# SPDX-License-Identifier: MIT
"""Library calls through the PLT, recorded by the function tracers as
functions (tests/progs/libcalls.c: N x work() { strlen(); malloc();
free(); }, then setjmp/longjmp and printf), lazily bound and with full
RELRO; exact counts, -l/-n, --no-libcall."""
import os
import re

from test_functrace import report
from tklib import prog, record, tmpdir, tracekit

N = 300
VARIANTS = ("libcalls", "libcalls-now")


def profile(d):
    """report --profile: {function: calls}."""
    out = tracekit("report", d, "--profile").stdout.splitlines()
    return {r.split()[0]: int(r.split()[1]) for r in out[2:]}


def test_graph_counts_and_returns():
    """Each work() holds exactly strlen(), malloc(), free(), timed; the
    whole run's counts are exact; setjmp (which returns twice) is not
    hooked and the program runs as untraced."""
    for v in VARIANTS:
        d = os.path.join(tmpdir(), "t")
        p = record(d, [prog(v), str(N)], "-p", "function_graph")
        assert p.stdout == "sum %d\n" % (7 * N), p.stdout
        m = re.search(r"(\d+) library calls hooked", p.stderr)
        assert m and int(m.group(1)) >= 6, p.stderr
        calls = profile(d)
        assert {k: calls.get(k) for k in ("work", "strlen", "malloc", "free", "printf",
                                          "longjmp", "jump_back")} == \
            dict(work=N, strlen=N, malloc=N, free=N, printf=1, longjmp=1, jump_back=1), calls
        assert not [k for k in calls if "setjmp" in k], calls
        lines = [l for l in report(d)]
        works = [i for i, l in enumerate(lines) if l["line"] == "  work() {"]
        assert len(works) == N
        for i in works:
            body = [l["line"] for l in lines[i + 1:i + 5]]
            assert body == ["    strlen();", "    malloc();", "    free();",
                            "  } /* work */"], (v, body)
            assert all(l["us"] is not None and l["us"] >= 0 for l in lines[i + 1:i + 5])


def test_function_and_filters():
    """-p function names the caller; -l and -n select library calls as
    they select functions; --no-libcall leaves them out."""
    d = os.path.join(tmpdir(), "t")
    record(d, [prog("libcalls"), str(N)], "-p", "function", "-l", "str*", "-l", "free")
    texts = [l["text"] for l in report(d)]
    assert texts == ["strtol <-main"] + ["strlen <-work", "free <-work"] * N, texts[:4]
    d = os.path.join(tmpdir(), "t")
    record(d, [prog("libcalls"), str(N)], "-p", "function_graph", "-n", "malloc")
    calls = profile(d)
    assert "malloc" not in calls and calls["strlen"] == N and calls["free"] == N, calls
    d = os.path.join(tmpdir(), "t")
    p = record(d, [prog("libcalls-now"), str(N)], "-p", "function_graph", "--no-libcall")
    assert "0 library calls hooked" in p.stderr, p.stderr
    assert profile(d) == dict(main=1, work=N, jump_back=1), profile(d)


def test_no_libcall_with_a_library_call_filter():
    """-l naming only a library call with --no-libcall: that call is not
    traced, so nothing matches; record says so (it recorded 0 events and
    said nothing) and records what it can."""
    d = os.path.join(tmpdir(), "t")
    p = record(d, [prog("libcalls"), str(N)], "-q", "-p", "function", "-l", "malloc",
               "--no-libcall")
    assert p.stderr == (
        "tracekit: warning: -l 'malloc' names only library calls of '%s', which "
        "--no-libcall leaves out: it matches nothing that is traced\n" % prog("libcalls")), \
        p.stderr
    d = os.path.join(tmpdir(), "t")
    p = record(d, [prog("libcalls"), str(N)], "-q", "-p", "function", "-l", "malloc")
    assert p.stderr == "", p.stderr
