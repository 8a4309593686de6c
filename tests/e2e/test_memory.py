# SPDX-License-Identifier: MIT
"""The memory a recorded process holds: little until it writes, then what
its bursts take.

A process of the recording other than the command itself (a child, a
process that joins) that fires nothing holds what README and record -h
state (the pool's first 512 KiB, its rings and first descriptors: ~0.6
MiB), in its own mapping and in the recorder's; the recorded command has
its first 16 MiB made before its main(); a program that bursts as soon
as it starts still loses nothing.
"""
import os
import shlex
import signal
import subprocess
import time

import tklib
from test_counts import kill_pid, read_pid, stop_popen
from test_drain import _basic, _exact

# README, record -h and tracekit-record(1): the pool's part made when a
# process starts, and the rest of what a process that fires nothing holds
POOL_AT_REST_KIB = 512
COMMAND_POOL_KIB = 16384
CONTROL_AT_REST_KIB = 128
AT_REST_KIB = 640  # "~0.6 MiB"


def _memfd_rss(pid):
    """{mapping size in KiB: Rss in KiB} of PID's tracekit buffers (the
    memfds lib/arena.c makes, mapped by the process and by the recorder)."""
    got, size = {}, None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 6:
                size = None
                if head[5] == "/memfd:tracekit-buffer":
                    lo, hi = (int(x, 16) for x in head[0].split("-"))
                    size = (hi - lo) >> 10
            elif size is not None and head[0] == "Rss:":
                got[size] = got.get(size, 0) + int(head[1])
    return got


def _settled(pid):
    """_memfd_rss(PID) once its buffers are made: the control thread makes
    them with the CONFIG, which main() may not wait for; what it makes at
    once is all of it (unchanged over 0.2 s)."""
    last, deadline = None, time.monotonic() + 10
    while time.monotonic() < deadline:
        got = _memfd_rss(pid)
        if len(got) == 2 and min(got.values()) > 0 and got == last:
            return got
        last = got
        time.sleep(0.2)
    return last


def _rss_shmem(pid):
    """PID's resident shared memory in KiB (RssShmem, /proc/PID/status)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("RssShmem:"):
                return int(line.split()[1])
    raise AssertionError("no RssShmem in /proc/%d/status" % pid)


def _at_rest(command):
    """Record a program that waits for SIGUSR1 before it fires, as the
    command itself or (@command false) as a child of sh; return its
    memfd Rss {size: KiB}, RssShmem, the recorder's memfd Rss, and check
    that its events are all there once it fired."""
    n, t = 2000, 2
    out = os.path.join(tklib.tmpdir(), "t")
    ready = out + ".ready"
    prog = _basic("-n", str(n), "-t", str(t), "-r", ready, "-w")
    if not command:  # "; true": sh forks it rather than exec it
        prog = ["sh", "-c", shlex.join(prog) + "; true"]
    rec = subprocess.Popen([tklib.TRACEKIT, "record", "-o", out, "--"] + prog,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = None
    try:
        pid = read_pid(ready)
        ours = _settled(pid)
        shmem = _rss_shmem(pid)
        # the recorder's view: it maps every process's buffers
        theirs = _memfd_rss(rec.pid)
        os.kill(pid, signal.SIGUSR1)
        stdout, stderr = rec.communicate(timeout=60)
        pid = None
    finally:
        if pid is not None:
            kill_pid(pid)
        stop_popen(rec)
    _exact(out, subprocess.CompletedProcess([], rec.returncode, stdout, stderr), n, t)
    return ours, shmem, theirs


def test_process_at_rest_holds_little():
    """A process of the recording, not the command, that has fired nothing
    yet (its events are on, it waits for SIGUSR1) holds the stated
    memory, in its RssShmem and in the recorder's mapping of its buffers:
    the pool's first 512 KiB, and its rings and first descriptors, 640
    KiB in all at most (it held 16.5 MiB, the first 16 MiB of its pool).
    Then it fires, and every event is there."""
    ours, shmem, theirs = _at_rest(command=False)
    assert len(ours) == 2, ours  # the control memfd and the pool memfd
    pool_kib = max(ours)
    assert pool_kib == 262144, ours  # --pool's default: sized, not made
    assert ours[pool_kib] == POOL_AT_REST_KIB, ours
    control = [v for k, v in ours.items() if k != pool_kib][0]
    assert 0 < control <= CONTROL_AT_REST_KIB, ours
    assert POOL_AT_REST_KIB < shmem <= AT_REST_KIB, (shmem, ours)
    assert theirs.get(pool_kib) == POOL_AT_REST_KIB, theirs
    assert sum(theirs.values()) <= AT_REST_KIB, theirs


def test_command_pool_made_before_main():
    """The recorded command itself has its pool's first 16 MiB made
    before its main() (a burst at its start must not make its pages by
    faults in its stores), in its mapping and the recorder's."""
    ours, shmem, theirs = _at_rest(command=True)
    assert len(ours) == 2, ours
    pool_kib = max(ours)
    assert ours[pool_kib] == COMMAND_POOL_KIB, ours
    assert shmem > COMMAND_POOL_KIB, (shmem, ours)
    assert theirs.get(pool_kib) == COMMAND_POOL_KIB, theirs


def test_burst_at_start_loses_nothing():
    """Eight threads fire 7.5 MB each as soon as the program starts (60
    MB, more than a hundred times what the process made at the start), at
    default settings: the pool is made while they write (by the recorder
    ahead of them, or by the writers' own stores when they outrun it), and
    recorded == emitted, 0 lost."""
    n, t = 330000, 8  # 23 bytes each
    out = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(out, _basic("-n", str(n), "-t", str(t)), "-v",
                     check=False, timeout=300)
    _exact(out, p, n, t)


def test_forked_child_of_command_holds_little():
    """A child the recorded command forks, at rest after its first event,
    holds the pool's first 512 KiB, not the 16 MiB its parent made at
    its start (children inherited them: 40 idle workers held 658 MB);
    then it fires the rest, and every event is there."""
    c = 2
    ready = os.path.join(tklib.tmpdir(), "fork.ready")
    out = os.path.join(tklib.tmpdir(), "t")
    rec = subprocess.Popen([tklib.TRACEKIT, "record", "-o", out, "--", tklib.prog("fork"),
                            "-k", "1", "-c", str(c), "-a", "1", "-b", "1", "-w", ready],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = child = None
    done = False
    try:
        pid = read_pid(ready)
        parent = _settled(pid)
        os.kill(pid, signal.SIGUSR1)
        child = int(tklib.wait_for_file(ready + ".half", 20).split()[1])
        ours = _settled(child)
        os.unlink(ready + ".half")
        stdout, stderr = rec.communicate(timeout=60)
        done = True
    finally:
        for waiting in (child, pid):  # else left waiting for good
            if not done and waiting is not None:
                kill_pid(waiting)
        stop_popen(rec)
    assert rec.returncode == 0, stderr
    assert parent[max(parent)] == COMMAND_POOL_KIB, parent
    assert ours[max(ours)] == POOL_AT_REST_KIB, ours
    rows, _ = tklib.summary(stderr)
    assert sorted((r["pid"], r["events"], r["lost"]) for r in rows) == \
        [(pid, 2, 0), (child, c, 0)], stderr
