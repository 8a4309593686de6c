# SPDX-License-Identifier: MIT
"""The CPU of user events: each is recorded with the CPU it ran on, not the
CPU where its packet began.

prog-cpuhop (tests/progs/cpuhop.c) pins each of its threads to one CPU,
then the other, round after round, with hop:before, a getppid() system
call and hop:after in each round.  The kernel records the system call on
the CPU it ran on: every user event's CPU must be its neighbouring kernel
event's, in report, in babeltrace2's reading of the CTF (its cpu_id) and
in convert --to chrome (the arg common_cpu).  Kernel tests: each runs
under kernlib.guard().
"""
import json
import os
import re

import kernlib
import tklib

HOP = tklib.prog("cpuhop")
GETPPID = ("-e", "syscalls:sys_enter_getppid", "-e", "syscalls:sys_exit_getppid")
ROUNDS = 100
THREADS = 2


def two_cpus():
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise tklib.Skip("needs 2 CPUs to move a thread between, this process may use %d"
                         % len(cpus))
    return cpus[:2]


def record(*opts, env=None):
    """prog-cpuhop recorded with OPTS and getppid's events (-F); returns
    (trace directory, record's CompletedProcess, the threads' tids)."""
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p = tklib.record(d, [HOP, "-n", str(ROUNDS), "-t", str(THREADS)], *opts, *GETPPID,
                         "-F", timeout=120, env=env)
    tids = [int(t) for t in re.findall(r"^tid (\d+)$", p.stdout, re.M)]
    assert len(tids) == THREADS, p.stdout
    rows, total = tklib.summary(p.stderr)
    assert total and total["lost"] == 0, p.stderr
    return d, p, tids


def neighbour(kernel, i, n):
    """Of the indexes KERNEL (in time order), the neighbour of user event
    N (at index I) of a round: the first of the round is before the
    system call (the next kernel event), the second after it."""
    if n % 2 == 0:
        return min(k for k in kernel if k > i)
    return max(k for k in kernel if k < i)


def check_report(d, tids, cpus, user):
    """In report, per thread: ROUNDS rounds of (USER[0], enter, exit,
    USER[1]) in which every user event's CPU is its neighbouring kernel
    event's, and the CPU the round pinned the thread to."""
    events = kernlib.report(d)
    for tid in tids:
        mine = [e for e in events if e["tid"] == tid]
        kernel = [i for i, e in enumerate(mine) if e["lat"] is not None]
        names = [e["name"] for e in mine if e["lat"] is not None]
        assert names == ["sys_enter_getppid", "sys_exit_getppid"] * ROUNDS, \
            "tid %d: kernel events %r..." % (tid, names[:6])
        users = [i for i, e in enumerate(mine) if e["lat"] is None]
        assert [mine[i]["event"] for i in users] == user * ROUNDS, \
            "tid %d: user events %r..." % (tid, [mine[i]["event"] for i in users[:6]])
        for n, i in enumerate(users):
            near = neighbour(kernel, i, n)
            want = cpus[n // 2 % 2]
            assert mine[i]["cpu"] == mine[near]["cpu"] == want, \
                "tid %d: %r on CPU %d, its neighbour %r on CPU %d, pinned to %d" % (
                    tid, mine[i]["text"], mine[i]["cpu"], mine[near]["name"],
                    mine[near]["cpu"], want)


BT_RE = re.compile(r"^\[[^]]+\] \(\S+\) \S+ hop:(before|after): "
                   r"\{ cpu_id = (\d+), pid = \d+, tid = (\d+), pad = 0 \}, "
                   r"\{ i = (\d+), want = (\d+), seen = -?\d+ \}$")


def check_babeltrace2(d, tids, cpus):
    """babeltrace2 reads every hop event with cpu_id the CPU of its
    round, and nothing on stderr."""
    p = tklib.run([tklib.babeltrace2(), os.path.join(d, "user")], timeout=120)
    assert p.stderr == "", p.stderr
    seen = {t: 0 for t in tids}
    for line in p.stdout.splitlines():
        m = BT_RE.match(line)
        assert m, "babeltrace2 line: %r" % line
        cpu, tid, i, want = (int(m.group(k)) for k in (2, 3, 4, 5))
        assert want == cpus[i % 2] and cpu == want, \
            "babeltrace2: tid %d round %d on cpu_id %d, pinned to %d: %r" % (
                tid, i, cpu, want, line)
        seen[tid] += 1
    assert seen == {t: 2 * ROUNDS for t in tids}, seen


def check_chrome(d, tids, cpus, user):
    """convert --to chrome: each user instant's common_cpu is that of the
    getppid slice next to it, and of its round."""
    out = os.path.join(tklib.tmpdir(), "c.json")
    tklib.tracekit("convert", "--to", "chrome", "-q", "-o", out, d)
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    for tid in tids:
        mine = sorted((e for e in events if e.get("tid") == tid and e["ph"] in "iX"),
                      key=lambda e: e["ts"])
        calls = [i for i, e in enumerate(mine) if e["name"] == "getppid"]
        users = [i for i, e in enumerate(mine) if e["name"] in user]
        assert len(calls) == ROUNDS and len(users) == len(user) * ROUNDS, \
            "tid %d: %d getppid slices, %d user events" % (tid, len(calls), len(users))
        for n, i in enumerate(users):
            near = neighbour(calls, i, n)
            want = cpus[n // 2 % 2]
            assert mine[i]["args"]["common_cpu"] == mine[near]["args"]["common_cpu"] == want, \
                "tid %d: %r, its neighbour %r, pinned to %d" % (tid, mine[i], mine[near], want)


def test_cpu_user_events():
    """Events read their CPU from rseq: report, babeltrace2 and chrome give
    each event the CPU it ran on."""
    cpus = two_cpus()
    d, p, tids = record("-e", "hop:*")
    assert "rseq" not in p.stderr, p.stderr
    check_report(d, tids, cpus, ["hop:before", "hop:after"])
    check_babeltrace2(d, tids, cpus)
    check_chrome(d, tids, cpus, ["hop:before", "hop:after"])


def test_cpu_overwrite():
    """The same in overwrite mode (packets copied out of the ring at the
    end)."""
    cpus = two_cpus()
    d, p, tids = record("-e", "hop:*", "--overwrite")
    check_report(d, tids, cpus, ["hop:before", "hop:after"])
    check_babeltrace2(d, tids, cpus)


def test_cpu_without_rseq():
    """With glibc's rseq off, each event asks sched_getcpu(): the CPUs are
    still right, and record says how they were read."""
    cpus = two_cpus()
    d, p, tids = record("-e", "hop:*", env={"GLIBC_TUNABLES": "glibc.pthread.rseq=0"})
    assert re.search(r"^tracekit: prog-cpuhop-\d+: no rseq area: each event asks "
                     r"sched_getcpu\(\) for its CPU \(slower\)$", p.stderr, re.M), p.stderr
    check_report(d, tids, cpus, ["hop:before", "hop:after"])
    check_babeltrace2(d, tids, cpus)


def test_cpu_function_tracer():
    """The function tracer's entries, written by its own fast path, carry
    their CPU too."""
    cpus = two_cpus()
    d, p, tids = record("-p", "function", "-l", "hop_mark")
    check_report(d, tids, cpus, ["function", "function"])
    check_chrome(d, tids, cpus, ["hop_mark"] * 2)
