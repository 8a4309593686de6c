# SPDX-License-Identifier: MIT
"""The recorder's drain and the buffers' memory, end to end.

Counts are exact on every way packets reach the disk (io_uring with
O_DIRECT; io_uring buffered where the file system refuses O_DIRECT;
pwritev where io_uring is refused; through the page cache when the disk
falls behind), with a pool that grows, with --block,
with a recorder that sleeps until its writers wake it; first events fired
by signal handlers that interrupt malloc; threads that fire once hold
little memory; buffers that cannot be made are counted and said.
"""
import itertools
import os
import re
import signal
import struct
import subprocess
import time

import tklib
from test_counts import (_record_starved, bt_count, kill_pid, read_pid, rows_by_tid,
                         scan_seq, stop_popen)

METHOD_RE = re.compile(r"^tracekit: buffers written with (.*)$", re.M)
POOL_RE = re.compile(r"^tracekit: buffer pool: (\d+) KiB made for the largest "
                     r"process \(limit (\d+) KiB\)$", re.M)


def _method(stderr):
    m = METHOD_RE.search(stderr)
    assert m, "no 'buffers written with' line in the summary:\n%s" % stderr
    return m.group(1)


def _exact(out, p, n, t):
    """Every thread's n test:seq events are in OUT, in order, none lost;
    the summary, report and babeltrace2 agree."""
    assert p.returncode == 0, "record exited %d:\n%s" % (p.returncode, p.stderr)
    rows, total = tklib.summary(p.stderr)
    assert total is not None, "no total row:\n%s" % p.stderr
    assert total["events"] == n * t + 2 and total["lost"] == 0, \
        "want %d events, 0 lost:\n%s" % (n * t + 2, p.stderr)
    streams, phases, nlines = scan_seq(out, contiguous_from=0)
    assert phases == ["start", "end"], phases
    assert sorted(int(st["thread"]) for st in streams.values()) == list(range(t)), streams
    byrow = rows_by_tid(rows)
    for tid, st in streams.items():
        assert st["count"] == n and byrow[tid]["events"] == n, (tid, st, byrow.get(tid))
    assert bt_count(out) == n * t


def _basic(*args):
    return [tklib.prog("basic")] + list(args)


def _fs_type(path):
    """The file system type of PATH, from /proc/self/mountinfo."""
    best, kind = "", "?"
    path = os.path.realpath(path)
    for line in open("/proc/self/mountinfo"):
        parts = line.split()
        mnt = parts[4]
        fstype = parts[parts.index("-") + 1]
        if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
            best, kind = mnt, fstype
    return kind


def _io_uring_allowed():
    try:
        return open("/proc/sys/kernel/io_uring_disabled").read().strip() == "0"
    except OSError:
        return True


def _direct_tmpdir():
    """A fresh directory where the recorder writes with O_DIRECT (a disk
    file system, io_uring allowed), or Skip."""
    d = tklib.tmpdir()
    fs = _fs_type(d)
    if fs not in ("ext4", "xfs", "btrfs"):
        raise tklib.Skip("%s is on %s, not a disk file system" % (d, fs))
    if not _io_uring_allowed():
        raise tklib.Skip("io_uring is disabled (kernel.io_uring_disabled)")
    return d


def _packets(path):
    """Each CTF packet of the user stream file PATH: a dict of its header's
    content and size (bytes), cpu, begin and end (timestamps)."""
    data = open(path, "rb").read()
    out, off = [], 0
    while off < len(data):
        magic, = struct.unpack_from("<I", data, off)
        assert magic == 0xc1fc1fc1, (path, off)
        begin, end, content, size = struct.unpack_from("<QQQQ", data, off + 16)
        cpu, = struct.unpack_from("<I", data, off + 64)
        out.append(dict(content=content // 8, size=size // 8, cpu=cpu,
                        begin=begin, end=end))
        off += size // 8
    return out


def _split(pkts, i):
    """Whether packet I was ended inside its chunk by its writer
    (lib/stream.c packet_split): its thread moved to another CPU, or 2^32
    ticks passed since its last event (more than an event's compact
    header holds).  It is padded to 8 bytes only, and the next packet
    begins where it ended."""
    if i + 1 >= len(pkts):
        return False
    p, q = pkts[i], pkts[i + 1]
    return p["size"] == (p["content"] + 7) & ~7 and q["begin"] == p["end"] and \
        (q["cpu"] != p["cpu"] or q["begin"] - p["begin"] >= 1 << 32)


def _misplaced(path, direct):
    """The packets of the stream file PATH that are not laid out as
    docs/design-notes.md ("Draining") says: each one either ended inside
    its chunk by a split (_split), or the last of its chunk, which takes
    the chunk up to the next 4 KiB (its writer sealed it, or the recorder
    padded it); or, on a buffered file, one written as it is (content ==
    size: the stream's last packets copied at the end, an empty packet
    that counts losses, a packet closed before the recorder had the
    process's buffers).  With O_DIRECT every file offset is a multiple of
    4 KiB.  Returns (index, the packets around it) of each bad one."""
    pkts = _packets(path)
    bad, chunk, off = [], 0, 0
    for i, p in enumerate(pkts):
        chunk += p["size"]
        off += p["size"]
        if _split(pkts, i):
            continue
        ok = p["content"] <= p["size"] and chunk % 4096 == 0
        if direct:
            ok = ok and off % 4096 == 0
        else:
            ok = ok or p["content"] == p["size"]
        if not ok:
            bad.append((i, pkts[max(i - 1, 0):i + 2]))
        chunk = 0
    return bad


def _laid_out(out, direct):
    for name in os.listdir(os.path.join(out, "user")):
        if name != "metadata":
            bad = _misplaced(os.path.join(out, "user", name), direct)
            assert not bad, (name, bad[:3])


def test_direct():
    """On a disk file system the packets go from the shared buffers to the
    files with io_uring and O_DIRECT: every sub-buffer padded to 4 KiB
    (its last packet: one ended where its thread moved to another CPU is
    followed by the next, test_cpu.py), every event there."""
    d = _direct_tmpdir()
    out = os.path.join(d, "t")
    p = tklib.record(out, _basic("-n", "200000", "-t", "2"), check=False)
    _exact(out, p, 200000, 2)
    assert _method(p.stderr) == "io_uring, O_DIRECT", p.stderr
    _laid_out(out, True)


def _ramfs():
    """A fresh ramfs mount (it refuses O_DIRECT), or Skip."""
    mnt = os.path.join(tklib.tmpdir(), "ramfs")
    os.mkdir(mnt)
    m = tklib.run(["mount", "-t", "ramfs", "ramfs", mnt], check=False)
    if m.returncode != 0:
        raise tklib.Skip("cannot mount a ramfs: %s" % m.stderr.strip())
    return mnt


def test_buffered_when_direct_refused():
    """A file system that refuses O_DIRECT (ramfs): io_uring writes
    buffered, every event there; the summary says why.  Packets are
    padded to 4 KiB all the same (their writers seal them so), but those
    copied at the end, which are not."""
    mnt = _ramfs()
    try:
        if not _io_uring_allowed():
            raise tklib.Skip("io_uring is disabled (kernel.io_uring_disabled)")
        out = os.path.join(mnt, "t")
        p = tklib.record(out, _basic("-n", "100000", "-t", "2"), check=False)
        _exact(out, p, 100000, 2)
        assert _method(p.stderr) == \
            "io_uring, buffered (O_DIRECT: refused by the file system)", p.stderr
        _laid_out(out, False)
    finally:
        tklib.run(["umount", mnt], check=False)


def test_buffered_packets_before_the_arena_was_taken():
    """A forked child fires half its events while the recorder is stopped,
    before the recorder has taken its buffers: its writers cannot seal
    those packets (no stream class yet) and the recorder writes them
    unpadded on a buffered file; its packets after are sealed, padded
    in their chunk.  Each is where the design says, every event there
    (the layout check took the file's offsets for the chunks' and
    failed a CI run so)."""
    n = 40000
    mnt = _ramfs()
    rec = None
    try:
        out = os.path.join(mnt, "t")
        ready = os.path.join(tklib.tmpdir(), "fork.ready")
        rec = subprocess.Popen([tklib.TRACEKIT, "record", "-o", out, "--",
                                tklib.prog("fork"), "-k", "1", "-c", str(n), "-a", "1",
                                "-b", "1", "-w", ready],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        pid = read_pid(ready)
        os.kill(rec.pid, signal.SIGSTOP)
        try:
            os.kill(pid, signal.SIGUSR1)
            child = int(tklib.wait_for_file(ready + ".half", 20).split()[1])
        finally:
            os.kill(rec.pid, signal.SIGCONT)
        time.sleep(0.5)  # the recorder takes the child's buffers
        os.unlink(ready + ".half")
        stdout, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        rows, total = tklib.summary(stderr)
        mine = [r for r in rows if r["pid"] == child]
        assert [(r["events"], r["lost"]) for r in mine] == [(n, 0)], stderr
        name = "%d-%d" % (child, child)
        pkts = _packets(os.path.join(out, "user", name))
        assert any(p["content"] == p["size"] for p in pkts[:-1]), \
            "no unsealed packet before the last: %r" % pkts[:4]
        _laid_out(out, False)
    finally:
        if rec is not None:
            stop_popen(rec)
        tklib.run(["umount", mnt], check=False)


def test_pwrite_when_io_uring_refused():
    """The recorder under a seccomp filter that refuses io_uring_setup:
    plain pwritev, said in the summary, every event there."""
    out = os.path.join(tklib.tmpdir(), "t")
    p = tklib.run([tklib.prog("deny"), "io_uring_setup", tklib.TRACEKIT, "record",
                   "-o", out, "--"] + _basic("-n", "100000", "-t", "2"), check=False)
    if p.returncode == 77:
        raise tklib.Skip("seccomp refused: %s" % p.stderr.strip())
    _exact(out, p, 100000, 2)
    assert _method(p.stderr) == \
        "pwrite, buffered (io_uring: Operation not permitted)", p.stderr


def test_memfd_refused():
    """A program that cannot make its buffers (memfd_create refused, as a
    container's seccomp may): it runs on at full speed, every event it
    fires is counted lost, the summary says why, report's header too."""
    out = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(out, [tklib.prog("deny"), "memfd_create"] + _basic("-n", "1000", "-t", "2"),
                     check=False)
    if "seccomp refused" in p.stderr:
        raise tklib.Skip(p.stderr.strip())
    assert p.returncode == 0, p.stderr
    assert sorted(l for l in p.stdout.splitlines() if l.startswith("emitted")) == \
        ["emitted 0 1000", "emitted 1 1000"], p.stdout
    rows, total = tklib.summary(p.stderr)
    assert total == dict(events=0, lost=2002, bytes=0), p.stderr
    pid = int(re.search(r"prog-basic-(\d+)", p.stderr).group(1))
    line = "tracekit: prog-basic-%d: 2002 events lost: its buffers could not be " \
        "made (memfd_create: Operation not permitted)" % pid
    assert line in p.stderr.splitlines(), p.stderr
    head = tklib.tracekit("report", out).stdout
    assert re.search(r"^# process %d \(prog-basic\) .*, 2002 lost with no buffer$" % pid,
                     head, re.M), head


def test_block():
    """--block with a buffer of two 4 KiB sub-buffers: writers wait for the
    recorder and lose nothing; without it the same run loses, and what is
    recorded plus what is lost is what was fired."""
    out = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(out, _basic("-n", "200000", "-t", "2"), "-b", "8", "--block",
                     check=False)
    _exact(out, p, 200000, 2)
    p = tklib.record(out, _basic("-n", "200000", "-t", "2"), "-b", "8")
    rows, total = tklib.summary(p.stderr)
    assert total["lost"] > 0 and total["events"] + total["lost"] == 400002, p.stderr
    # the summary says why, and what keeps them
    assert ("tracekit: %d events lost for want of room: the recorder fell behind "
            "and a thread's buffer (-b 8 KiB) or its process's pool (--pool 262144 "
            "KiB) was full; larger ones keep more, --block keeps all (writers wait)\n"
            % total["lost"]) in p.stderr, p.stderr
    p = tklib.tracekit("record", "-o", out, "--block", "5", "--", tklib.prog("basic"),
                       check=False)
    assert p.returncode == 2 and p.stderr == "tracekit: --block takes its time as " \
        "--block=5, not as the next argument\n", p.stderr
    p = tklib.tracekit("record", "-o", out, "--block=0", "--", tklib.prog("basic"), check=False)
    assert p.returncode == 2 and p.stderr == \
        "tracekit: --block='0': must be a number of ms, from 1 to 60000\n", p.stderr
    p = tklib.tracekit("record", "-o", out, "--block", "--overwrite", "--",
                       tklib.prog("basic"), check=False)
    assert p.returncode == 2 and p.stderr == "tracekit: --block is for discard mode: " \
        "with --overwrite a writer never lacks room\n", p.stderr


def test_stat_buffers():
    """stat counts user events by recording them, with record's buffer
    options: -b 8 loses (and says the counts are lower bounds), -b 8
    --block counts every event; the options are refused as record
    refuses them, and where no user event is counted.  stat -h lists
    them, without record's --overwrite, which stat has not."""
    text = " ".join(tklib.tracekit("stat", "-h").stdout.split())
    assert "--subbufs N sub-buffers per thread buffer" in text and \
        "--block[=MS]" in text and "overwrite" not in text, text

    def counts(err):
        return {m.group(2): int(m.group(1))
                for m in re.finditer(r"^ +(\d+) +(\S+)$", err, re.M)}

    cmd = ["--"] + _basic("-n", "200000", "-t", "2")
    p = tklib.tracekit("stat", "-e", "test:seq", "-b", "8", "--subbufs", "2", *cmd,
                       check=True)
    m = re.search(r"^ (\d+) user events were lost: their counts are lower bounds$",
                  p.stderr, re.M)
    assert m and counts(p.stderr)["test:seq"] + int(m.group(1)) == 400000, p.stderr
    p = tklib.tracekit("stat", "-e", "test:seq", "-b", "8", "--pool", "64", "--block",
                       *cmd, check=True)
    assert counts(p.stderr) == {"test:seq": 400000} and "were lost" not in p.stderr, p.stderr
    for opts, err in ((["--block", "5"], "--block takes its time as --block=5, not as "
                       "the next argument"),
                      (["--pool", "4"], "--pool '4': must be a number of KiB, from 8 to "
                       "67108864"),
                      (["-b", "64", "--pool", "32"], "--pool 32: less than one thread's "
                       "buffer (-b 64)")):
        p = tklib.tracekit("stat", "-e", "test:seq", *opts, "--", tklib.prog("basic"),
                           check=False)
        assert p.returncode == 2 and p.stderr == "tracekit: %s\n" % err, (opts, p.stderr)
    p = tklib.tracekit("stat", "-a", "-d", "0.01", "-e", "sched:sched_switch", "-b", "64",
                       check=False)
    assert p.returncode == 2 and p.stderr == (
        "tracekit: -b, --subbufs, --pool and --block size user events' buffers; "
        "no -e here names a user event\n"), p.stderr


def test_pool_grows():
    """Four threads writing 70 MB as fast as they can, with --block (up to
    a minute: longer than the recorder, starved, may take to give space
    back), and a recorder that hardly runs (so that the writers outrun it
    whatever else the machine does): the pool grows past what the recorder
    makes when the process begins writing (-b, 16 MiB), and every event is
    there."""
    out = os.path.join(tklib.tmpdir(), "t")
    rc, stdout, stderr = _record_starved(out, _basic("-n", "500000", "-t", "4"),
                                         "--block=60000", timeout=300)
    p = subprocess.CompletedProcess([], rc, stdout, stderr)
    _exact(out, p, 500000, 4)
    m = POOL_RE.search(p.stderr)
    assert m and int(m.group(1)) > 16384 and int(m.group(2)) == 262144, p.stderr


def _wait_zombie(pid, timeout=120):
    """Wait until PID has exited (a zombie: its parent does not reap it)."""
    end = time.time() + timeout
    while time.time() < end:
        state = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            return
        time.sleep(0.01)
    raise AssertionError("process %d still running after %d s" % (pid, timeout))


def test_burst_while_recorder_stopped():
    """Four threads fire 12 MB each (48 MB: far more than the 512 KiB of
    pool the process makes at the start, each under its -b) while the recorder is
    stopped (SIGSTOP), at default settings: with no chunk given back and
    none made, the writers take the pool's chunks never used yet
    themselves, and every event is there once the recorder runs again
    (before, what did not fit in the first 16 MiB was lost)."""
    n, t = 520000, 4  # 23 bytes each
    out = os.path.join(tklib.tmpdir(), "t")
    ready = out + ".ready"
    rec = subprocess.Popen([tklib.TRACEKIT, "record", "-v", "-o", out, "--",
                            tklib.prog("basic"), "-n", str(n), "-t", str(t),
                            "-r", ready, "-w"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = None
    try:
        pid = read_pid(ready)
        os.kill(rec.pid, signal.SIGSTOP)
        try:
            os.kill(pid, signal.SIGUSR1)
            _wait_zombie(pid)
        finally:
            os.kill(rec.pid, signal.SIGCONT)
        stdout, stderr = rec.communicate(timeout=120)
        pid = None
    finally:
        if pid is not None:
            kill_pid(pid)
        stop_popen(rec)
    p = subprocess.CompletedProcess([], rec.returncode, stdout, stderr)
    _exact(out, p, n, t)
    assert sum(os.path.getsize(os.path.join(out, "user", f))
               for f in os.listdir(os.path.join(out, "user"))) > 40 << 20
    # record -v says how much the writers took themselves
    m = re.search(r"^tracekit: (\d+) KiB of pool taken by writers that found none free "
                  r"\(a burst faster than the recorder made it\)$", p.stderr, re.M)
    assert m and int(m.group(1)) >= 8 << 10 and int(m.group(1)) % 64 == 0, p.stderr


SPILL_RE = re.compile(r"^tracekit: (\d+) KiB written through the page cache while "
                      r"the disk was behind$", re.M)


def _blkio_throttled(path, bps):
    """A cgroup (v1 blkio) whose tasks' writes to the disk holding PATH go
    at BPS bytes/s at most, as its direct path; buffered writes only dirty
    the page cache there.  Returns its directory, or raises Skip."""
    root = "/sys/fs/cgroup/blkio"
    if not os.path.exists(os.path.join(root, "blkio.throttle.write_bps_device")):
        raise tklib.Skip("no cgroup v1 blkio controller with throttling at %s" % root)
    st = os.stat(path)
    dev = "/sys/dev/block/%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
    if not os.path.exists(dev):
        raise tklib.Skip("%s is on no block device" % path)
    if os.path.exists(os.path.join(dev, "partition")):
        dev = os.path.join(dev, "..")
    majmin = open(os.path.join(dev, "dev")).read().strip()
    cg = os.path.join(root, "tk-e2e-%d" % os.getpid())
    os.mkdir(cg)
    try:
        with open(os.path.join(cg, "blkio.throttle.write_bps_device"), "w") as f:
            f.write("%s %d\n" % (majmin, bps))
    except OSError as e:
        os.rmdir(cg)
        raise tklib.Skip("cannot throttle %s: %s" % (majmin, e))
    return cg


def test_spill_when_disk_behind():
    """A disk slower than the writers (the recorder's direct writes held
    to 4 MB/s by a blkio cgroup): with its writes in flight at their bound,
    what waits in the writers' rings goes through the page cache (record
    -v says how much), and with --block every event is there; without it,
    recorded + lost is what was fired."""
    d = _direct_tmpdir()
    cg = _blkio_throttled(d, 4 << 20)
    try:
        for block in (True, False):
            out = os.path.join(d, "t%d" % block)
            args = [tklib.TRACEKIT, "record", "-o", out, "-v", "-b", "512", "--subbufs", "8",
                    "--pool", "2048"] + (["--block=60000"] if block else []) + \
                ["--"] + _basic("-n", "300000", "-t", "2")
            p = tklib.run(["sh", "-c", 'echo $$ > "$0"/cgroup.procs && exec "$@"', cg] + args,
                          check=False, timeout=300)
            assert _method(p.stderr) == "io_uring, O_DIRECT", p.stderr
            rows, total = tklib.summary(p.stderr)
            m = SPILL_RE.search(p.stderr)
            # at 4 MB/s the disk takes a few MB in the second the run
            # lasts at most: with --block (every event written) most of
            # it went through the page cache; without, writers lose what
            # finds no room, and how much is spilled is the timing's
            assert m and int(m.group(1)) > 0, p.stderr
            if block:
                assert int(m.group(1)) * 1024 > total["bytes"] // 2, p.stderr
                _exact(out, p, 300000, 2)
            else:
                assert p.returncode == 0 and total["events"] + total["lost"] == 600002, \
                    p.stderr
                assert bt_count(out) == total["events"] - 2, p.stderr
    finally:
        os.rmdir(cg)


WORK_RE = re.compile(r"^tracekit: the recorder wrote (\d+) packets, slept (\d+) times, "
                     r"was woken (\d+) times by writers$", re.M)


def test_wakeup():
    """Bursts of 120 events 50 ms apart with two 4 KiB sub-buffers: each
    burst closes about a sub-buffer, which must be written before the next
    but one.  The recorder sleeps between bursts (it would look again only
    after a second): only a writer that wakes it keeps every event.  It is
    woken once per sub-buffer at most (a writer wakes it when it closes
    one, or its stream), and only while it sleeps (record -v counts)."""
    out = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(out, _basic("-n", "3000", "-s", "120,50000"), "-b", "8", "-v",
                     check=False)
    _exact(out, p, 3000, 1)
    m = WORK_RE.search(p.stderr)
    assert m, p.stderr
    packets, sleeps, woken = (int(x) for x in m.groups())
    rows, total = tklib.summary(p.stderr)
    assert 1 <= woken <= packets + len(rows) and woken <= sleeps, p.stderr
    # 25 bursts: a wake-up per event would be thousands, one per sub-buffer
    # a few dozen
    assert packets < 100, p.stderr


def test_signal_first_event_in_malloc():
    """Four threads malloc and free without pause; a 20 us timer per thread
    fires an event from a signal handler, so each thread's first event (its
    stream opened) most likely interrupts malloc: the program ends, and
    each thread's events are all there, in order."""
    out = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(out, [tklib.prog("sigmalloc"), "-t", "4", "-n", "300000"],
                     check=False, timeout=120)
    assert p.returncode == 0 and "done" in p.stdout.splitlines(), (p.stdout, p.stderr)
    fired = {int(a): int(b) for _, a, b in
             (l.split() for l in p.stdout.splitlines() if l.startswith("fired"))}
    assert len(fired) == 4 and all(n > 0 for n in fired.values()), fired
    rows, total = tklib.summary(p.stderr)
    assert total["events"] == sum(fired.values()) and total["lost"] == 0, \
        (fired, p.stderr)
    got = {}
    for line in tklib.report_lines(out):
        f = tklib.fields(line["text"])
        got.setdefault(int(f["worker"]), []).append(int(f["n"]))
    assert {w: len(v) for w, v in got.items()} == fired, (fired, p.stderr)
    assert all(v == list(range(len(v))) for v in got.values()), "events out of order"


def test_many_threads_little_memory():
    """400 threads that fire one event each hold little shared memory
    (64 MiB at most: the pool the process made and a descriptor with its
    page per thread); 1000 threads one after the other too (descriptors
    are recycled).  Every event is there."""
    for opts, n in (([], 400), (["-s"], 1000)):
        out = os.path.join(tklib.tmpdir(), "t")
        p = tklib.record(out, [tklib.prog("many")] + opts, "-v", check=False, timeout=120)
        assert p.returncode == 0, p.stderr
        shmem = int(re.search(r"^shmem (\d+)$", p.stdout, re.M).group(1))
        assert shmem <= 64 << 10, "%s: %d KiB of shared memory" % (opts, shmem)
        rows, total = tklib.summary(p.stderr)
        assert total["events"] == n and total["lost"] == 0 and len(rows) == n, \
            (opts, total, len(rows))
        threads = sorted(int(tklib.fields(l["text"])["thread"])
                         for l in tklib.report_lines(out))
        assert threads == list(range(n)), (opts, threads[:10])


def test_help_states_buffer_limits():
    """record -h gives the buffers' defaults and limits: per thread, the
    pool, sub-buffers, the largest event, threads, --block; and the
    clock's choice."""
    p = tklib.tracekit("record", "-h")
    text = " ".join(p.stdout.split())
    for want in ("holds at most -b of them (default 16384 KiB)",
                 "a thread at rest holds 8 KiB",
                 "512 KiB by the process when it starts (with ~100 KiB of descriptors and "
                 "rings, all that a process that fires no event holds; the recorded command "
                 "makes 16384 KiB, before its main()), up to -b (at least "
                 "16384, at most 262144 KiB) by the recorder once a thread writes past its "
                 "first packet",
                 "the pool keeps its largest size until the process ends or the recording "
                 "stops",
                 "up to --pool (default 262144 KiB, or -b if larger)",
                 "Limits: -b and --pool 8 to 67108864 KiB, --pool at least -b; sub-buffers "
                 "of 4 to 16384 KiB, 2 to 4096 per thread; an event at most a sub-buffer "
                 "(less its 80-byte header; larger ones are lost, counted); --block 1 to "
                 "60000 ms; 4096 threads recording at once per process",
                 "TRACEKIT_CLOCK=mono or tsc in the environment chooses",
                 "--subbufs N sub-buffers per thread buffer (default: -b in sub-buffers "
                 "of 64 KiB)",
                 "--block[=MS] a writer that finds no room waits up to MS ms (default 1000)"):
        assert want in text, "record -h lacks %r:\n%s" % (want, p.stdout)


def test_scribbled_stream_class_restamped():
    """A program sets its arena's class_id (the stream class its writers
    stamp in each sealed packet's header) to 77 while a child it forked
    fires 100,000 events in its own arena: babeltrace2 read none of the
    trace (no stream class 77).  The recorder checks each sealed
    packet's header and writes those it does not recognise with its own
    numbers: babeltrace2 reads both processes' events exactly, and the
    summary says which stream had its headers written over."""
    n = 100000
    out = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(out, [tklib.prog("hostile"), "scribble-class", str(n)], check=False)
    assert p.returncode == 0, p.stderr[-1500:]
    tid, child = [int(w) for w in p.stdout.split()[1:3]]
    rows, total = tklib.summary(p.stderr)
    assert sorted((r["pid"], r["events"], r["lost"]) for r in rows) == \
        sorted([(tid, n + 1, 0), (child, n, 0)]), p.stderr
    m = re.search(r"^tracekit: prog-hostile-%d: stream %d: (\d+) packets whose headers the "
                  r"program wrote over \(stream class, instance or sizes\) written with the "
                  r"recorder's$" % (tid, tid), p.stderr, re.M)
    assert m and int(m.group(1)) > 0, p.stderr
    assert bt_count(out, "pid = %d, tid = %d," % (child, child)) == n
    assert bt_count(out, "pid = %d, tid = %d," % (tid, tid)) == n + 1
