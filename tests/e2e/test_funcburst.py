# SPDX-License-Identifier: MIT
"""A burst of function calls from one thread (tests/progs/funcburst.c:
~450,000 calls of 27 functions in a few tens of ms, then exit), recorded
by -p function and -p function_graph: every call the program counted is in
the trace, once.  The buffer is large enough to hold the whole burst, so
the counts are exact whatever the recorder's speed (bench/run part 10
measures the loss at default settings)."""
from tklib import prog, record, summary, tmpdir, tracekit

BUF_KB = "65536"  # the whole burst: ~10 MB (function), ~22 MB (function_graph)


def program_counts(stdout):
    """The program's own count of each function's calls, and the total."""
    calls, total = {}, None
    for line in stdout.splitlines():
        f = line.split()
        if f[0] == "calls":
            calls[f[1]] = int(f[2])
        elif f[0] == "total_calls":
            total = int(f[1])
    assert calls and total == sum(calls.values()), stdout
    calls["main"] = 1  # traced too, not counted by the program
    return calls, total + 1


def burst(tracer):
    d = tmpdir() + "/t"
    p = record(d, [prog("funcburst")], "-p", tracer, "-b", BUF_KB, "--no-libcall")
    calls, total = program_counts(p.stdout)
    rows, tot = summary(p.stderr)
    assert len(rows) == 1 and tot["lost"] == 0, p.stderr
    per_call = 2 if tracer == "function_graph" else 1
    assert tot["events"] == per_call * total, (tot, total)
    return d, calls


def test_burst_function():
    d, calls = burst("function")
    seen = {}
    for line in tracekit("report", d, "--no-header").stdout.splitlines():
        f = line.split()
        assert f[3] == "function:", line
        seen[f[4]] = seen.get(f[4], 0) + 1
    assert seen == calls, (seen, calls)


def test_burst_function_graph():
    d, calls = burst("function_graph")
    out = tracekit("report", d, "--profile").stdout.splitlines()
    seen = {r.split()[0]: int(r.split()[1]) for r in out[2:] if r.strip()}
    assert seen == calls, (seen, calls)
