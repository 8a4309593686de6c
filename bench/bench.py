#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/bench.py - tracekit side by side with LTTng-UST, USDT, uftrace
and trace-cmd, in one run.  Started by bench/run (which installs what is
missing and builds tracekit first); see bench/README.md for every row.

    bench/run [--quick] [--part LIST] [--kernel | --no-kernel] [--base REV] [REPEAT]

Parts (LIST: numbers and ranges, e.g. 3,5,10-12):
   1 disabled cost            7 kernel events vs trace-cmd  (bench/kernel.py)
   2 floor                    8 reading kernel traces       (bench/kernel.py)
   3 enabled cost             9 function tracer vs uftrace
   4 reading                 10 function-tracer burst, default settings
   5 paced, default buffers  11 recorder CPU per MB drained
   6 flood, small buffers    12 memory: 400 threads, one event each
                             13 dynamic probes, library calls, user stacks
                                (bench/probes.sh: vs perf probe, bpftrace,
                                uftrace)
Every part gives medians over REPEAT runs (default 5; --quick: 2, and
shorter runs), the targets beside the figures, and the table ends with
every target of the drain work (issue 10) and whether it is met.
With --base REV, parts 3 and 10 also run tracekit as built from git
revision REV, run for run beside this tree's: the cost of a change, in
one run.  Progress goes to stderr, the table to stdout.
"""
import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.abspath(os.environ.get("TK_BUILD", os.path.join(ROOT, "build")))
TK = os.path.join(BUILD, "cli", "tracekit")
B = os.path.join(BUILD, "bench", "bench-tracepoint")
BB = os.path.join(BUILD, "bench", "bench-tracepoint-branch")
BTHREADS = os.path.join(BUILD, "bench", "bench-threads")
BURST = os.path.join(BUILD, "tests", "progs", "prog-funcburst")
CFLAGS = ["-O2", "-g", "-std=gnu11", "-Wall", "-Wextra", "-falign-loops=64"]  # as meson's

# The recorder's CPU ms per MB drained on main before the drain work
# (95c08d6): the target of part 11 is a quarter of it.  Measured in the
# same run with --base 95c08d6; else these figures, from such a run
# (bench/run --part 11 --base 95c08d6, medians of 5 on this 2-CPU VM).
BASELINE_REV = "95c08d6"
BASELINE_DRAIN_MS_PER_MB = {"paced": 0.448, "flood": 0.362}

T0 = time.time()


def note(msg):
    print("bench: [%4.0fs] %s" % (time.time() - T0, msg), file=sys.stderr, flush=True)


class Cfg:
    """Sizes of every run; --quick makes them smaller."""

    def __init__(self, quick, repeat):
        self.quick = quick
        self.repeat = repeat or (2 if quick else 5)
        self.disabled_n = 100_000_000 if quick else 500_000_000
        self.floor_n = 5_000_000 if quick else 20_000_000
        self.buf_kb = int(os.environ.get("BENCH_BUF_KB", 4096))
        self.enabled_n = int(os.environ.get("BENCH_EVENTS", 2_000_000 if quick else 5_000_000))
        self.subbufs = 8
        self.pace = 4_000_000
        self.pace_seconds = 2 if quick else 5
        self.flood_kb = 256
        self.flood_n = 1_000_000 if quick else 2_000_000
        self.read_n = 500_000 if quick else 1_000_000
        self.func_calls = int(os.environ.get("BENCH_CALLS", 2_000_000))
        self.func_kb = int(os.environ.get("BENCH_FUNC_KB", 16384))
        self.burst_runs = 5 if quick else 11
        self.mem_threads = 400
        self.kernel_calls = 500_000 if quick else 2_000_000


# ---- small helpers ---------------------------------------------------------

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def f(v, fmt="%.2f", width=0):
    s = "n/a" if v is None else fmt % v
    return s.rjust(width) if width else s


def fpct(v, width=0):
    """A percentage of lost events: 0 exactly, <0.001, or 3 decimals."""
    s = "n/a" if v is None else "0" if v == 0 else "<0.001" if v < 0.001 else "%.3f" % v
    return s.rjust(width) if width else s


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def rng(xs, fmt="%.3f"):
    xs = [x for x in xs if x is not None]
    return (fmt + "-" + fmt) % (min(xs), max(xs)) if xs else ""


def pct(part, whole):
    return None if part is None or not whole else 100.0 * part / whole


def kv(text):
    """A program's 'key value...' lines -> {key: 'value...'} (first wins)."""
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(" ")
        out.setdefault(k, v.strip())
    return out


def num(d, key, conv=float):
    try:
        return conv(d[key].split()[0])
    except (KeyError, ValueError, IndexError):
        return None


def stream_bytes(d):
    """Bytes of the stream files under D (no metadata, no index/)."""
    total = 0
    for dirpath, _, files in os.walk(d):
        if os.sep + "index" in dirpath[len(d):]:
            continue
        for name in files:
            if name != "metadata":
                total += os.path.getsize(os.path.join(dirpath, name))
    return total


def rmtree(d):
    shutil.rmtree(d, ignore_errors=True)


def disk_inflight(path):
    """The file of /sys that counts the requests in flight on the disk
    holding PATH, or None."""
    st = os.stat(path)
    base = "/sys/dev/block/%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
    for p in (base + "/inflight", base + "/../inflight"):
        if os.path.exists(p):
            return p
    return None


def fresh(d):
    """Remove the previous run's output D before a run, sync, and wait
    until the disk has nothing in flight for 0.3 s (10 s at most): on a
    file system mounted with `discard` (ext4 here) deleting a trace of a
    GB sends the disk that many discards when the journal commits, which
    run after sync returns and otherwise fall in the next run (seen: a
    paced run's writes stalled 130-350 ms behind them).  Outside the
    measured time, the same for every tool."""
    rmtree(d)
    os.sync()
    f = disk_inflight(os.path.dirname(d) or ".")
    if not f:
        return
    quiet, t0 = 0, time.monotonic()
    while quiet < 6 and time.monotonic() - t0 < 10:
        time.sleep(0.05)
        try:
            with open(f) as fh:
                busy = sum(int(x) for x in fh.read().split())
        except (OSError, ValueError):
            return
        quiet = 0 if busy else quiet + 1


def loadavg():
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def task_cpu_ns(pid):
    """CPU time of every live thread of PID, in ns (schedstat), or 0."""
    total = 0
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return 0
    for t in tasks:
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def proc_comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as fh:
            return fh.read().strip()
    except OSError:
        return ""


def children(pid):
    out = []
    for s in os.listdir("/proc"):
        if not s.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % s) as fh:
                st = fh.read()
        except OSError:
            continue
        if int(st[st.rindex(")") + 2:].split()[1]) == pid:
            out.append(int(s))
    return out


def tree(pid):
    out = [pid]
    for c in children(pid):
        out += tree(c)
    return out


def alive(pid):
    try:
        with open("/proc/%d/status" % pid) as fh:
            return not re.search(r"^State:\s+Z", fh.read(), re.M)
    except OSError:
        return False


def smaps_sum(pid, name):
    """(Rss, Pss, mappings) in KiB of PID's mappings whose path contains NAME."""
    rss = pss = n = 0
    inside = False
    try:
        with open("/proc/%d/smaps" % pid) as fh:
            for line in fh:
                if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                    inside = name in line
                    n += inside
                elif inside and line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif inside and line.startswith("Pss:"):
                    pss += int(line.split()[1])
    except OSError:
        pass
    return rss, pss, n


def vm_rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as fh:
            m = re.search(r"^VmRSS:\s+(\d+)", fh.read(), re.M)
            return int(m.group(1)) if m else None
    except OSError:
        return None


def run_waited(args, **kw):
    """Run ARGS to its end: (returncode, stdout, stderr, wall s, CPU s of
    the process and every descendant it waited for, from wait4)."""
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    # Reading both pipes to their end, then wait4 for the rusage.
    out, err = _drain(p)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, out, err, time.monotonic() - t0, ru.ru_utime + ru.ru_stime


def _drain(p):
    import selectors
    sel = selectors.DefaultSelector()
    bufs = {p.stdout: [], p.stderr: []}
    for fh in bufs:
        sel.register(fh, selectors.EVENT_READ)
    while sel.get_map():
        for key, _ in sel.select():
            data = os.read(key.fileobj.fileno(), 65536)
            if not data:
                sel.unregister(key.fileobj)
            else:
                bufs[key.fileobj].append(data)
    return tuple(b"".join(bufs[fh]).decode(errors="replace") for fh in (p.stdout, p.stderr))


SUMMARY_RE = re.compile(r"^\S+-\d+\s+\d+\s+\d+\s+\d+\s+\d+$")


def tk_summary(err):
    """(recorded, lost, streams) from tracekit record's summary, or None."""
    streams = 0
    for line in err.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "total":
            return int(parts[1]), int(parts[2]), streams
        if SUMMARY_RE.match(line.strip()):
            streams += 1
    return None


# ---- the machine's state ------------------------------------------------------

class Bench:
    def __init__(self, cfg, parts, base=None):
        self.cfg = cfg
        self.parts = parts
        self.base_rev = base      # --base REV: its build's paths in self.base
        self.base = None
        self.tmp = tempfile.mkdtemp(prefix="tracekit-bench.", dir=os.environ.get("TMPDIR", "/tmp"))
        os.makedirs(os.path.join(self.tmp, "bin"))
        self.memo = {}            # the runs of each part, made once
        self.res = {}             # parts 1-2: key -> ns per event of each run
        self.lt_seq = 0
        self.sd = None            # lttng-sessiond we started
        self.sd_pids = set()      # it and what it started
        self.sd_checked = False
        self.lt_quirk = 0
        self.lt_disagree = []
        self.loader = None
        self.loads = []           # (what, 1-min load average at its start)
        self.loaded_load = []     # load averages seen during the loaded runs
        self.targets = []         # (label, figure, target, verdict)
        self.tk_sites = ""
        os.environ["LTTNG_HOME"] = os.path.join(self.tmp, "lttng-home")
        os.makedirs(os.environ["LTTNG_HOME"])

    def path(self, *p):
        return os.path.join(self.tmp, *p)

    def close(self):
        try:
            self.stop_loader()
        finally:
            try:
                self.stop_sessiond()
            finally:
                if os.environ.get("BENCH_KEEP") == "1":
                    note("kept " + self.tmp)
                else:
                    rmtree(self.tmp)

    def once(self, key, fn):
        if key not in self.memo:
            self.memo[key] = fn()
        return self.memo[key]

    def phase(self, what):
        self.loads.append((what, float(loadavg().split()[0])))

    def target(self, label, figure, target, ok):
        verdict = "n/a" if ok is None else ("met" if ok else "MISSED")
        self.targets.append((label, figure, target, verdict))
        return verdict

    # ---- programs built here ----

    def build_others(self):
        def cc(out, srcs, libs=()):
            subprocess.run(["cc"] + CFLAGS + ["-I" + os.path.join(ROOT, "bench"), "-o",
                                              self.path("bin", out)]
                           + [os.path.join(ROOT, "bench", s) for s in srcs] + list(libs),
                           check=True)
            return self.path("bin", out)
        note("building the LTTng-UST, USDT and floor programs")
        self.LB = cc("bench-lttng", ["bench-lttng.c", "bench-lttng-tp.c"],
                     ["-llttng-ust", "-ldl", "-lpthread"])
        self.UB = cc("bench-usdt", ["bench-usdt.c"], ["-lpthread"])
        self.FB = cc("bench-floor", ["bench-floor.c"], ["-lpthread"])

    def build_base(self):
        """--base REV: tracekit as of REV (git archive), built here with the
        programs parts 3, 10 and 11 run; self.base names them as TK, B, BURST,
        and the CPU where the writer-alone runs stay (cpu)."""
        rev = self.base_rev
        src, bld = self.path("base-src"), self.path("base-build")
        note("building tracekit as of %s (--base)" % rev)
        os.makedirs(src)
        arch = subprocess.Popen(["git", "-C", ROOT, "archive", rev], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", src], stdin=arch.stdout, check=True)
        if arch.wait():
            raise RuntimeError("git archive %s failed" % rev)
        # the measuring loop is this tree's (REV's may lack process_cpu_ns,
        # which part 11 needs); the tracer is REV's
        shutil.copy2(os.path.join(ROOT, "bench", "bench-harness.h"),
                     os.path.join(src, "bench", "bench-harness.h"))
        subprocess.run(["meson", "setup", bld, src], stdout=subprocess.DEVNULL, check=True)
        targets = ["cli/tracekit", "bench/bench-tracepoint"]
        if os.path.exists(os.path.join(src, "tests", "progs", "funcburst.c")):
            targets.append("tests/progs/prog-funcburst")
        subprocess.run(["ninja", "-C", bld, "-j2"] + targets, stdout=subprocess.DEVNULL,
                       check=True)
        sha = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", rev],
                             stdout=subprocess.PIPE, text=True).stdout.strip()
        self.base = dict(rev=sha or rev, cpu=max(os.sched_getaffinity(0)),
                         TK=os.path.join(bld, "cli", "tracekit"),
                         B=os.path.join(bld, "bench", "bench-tracepoint"),
                         BURST=os.path.join(bld, "tests", "progs", "prog-funcburst"))

    # ---- LTTng's session daemon ----

    def lt(self, *args, check=True):
        """lttng, never spawning a session daemon by itself."""
        p = subprocess.run(["lttng", "--no-sessiond"] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if check and p.returncode:
            raise RuntimeError("lttng %s: %s" % (" ".join(args), p.stdout.strip()))
        return p.stdout

    def sessiond(self):
        if self.sd_checked:
            return
        self.sd_checked = True
        if subprocess.run(["lttng", "--no-sessiond", "list"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            note("an lttng-sessiond is already running: using it (it is not ours to stop)")
            return
        log = open(self.path("sessiond.log"), "w")
        # In a session of its own, so that Ctrl-C reaches the benchmark and
        # not the daemon: close() stops it in order.
        self.sd = subprocess.Popen(["lttng-sessiond", "--no-kernel", "--quiet"], stdout=log,
                                   stderr=log, start_new_session=True)
        for _ in range(100):
            if subprocess.run(["lttng", "--no-sessiond", "list"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
                return
            if self.sd.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("lttng-sessiond did not start: " + open(self.path("sessiond.log")).read())

    def remember_sessiond(self):
        if self.sd:
            self.sd_pids.update(tree(self.sd.pid))

    def consumerd_pids(self):
        if self.sd:
            self.remember_sessiond()
            return [p for p in self.sd_pids if proc_comm(p).startswith("lttng-consumer")]
        return [int(p) for p in os.listdir("/proc")
                if p.isdigit() and proc_comm(int(p)).startswith("lttng-consumer")]

    def stop_sessiond(self):
        if not self.sd:
            return
        self.remember_sessiond()
        self.lt("destroy", "--all", check=False)
        self.sd.terminate()
        ours = [p for p in self.sd_pids if p != self.sd.pid]
        end = time.time() + 5
        while time.time() < end and (self.sd.poll() is None or any(
                alive(p) and proc_comm(p).startswith("lttng") for p in ours)):
            time.sleep(0.1)
        for p in ours + [self.sd.pid]:
            if alive(p) and proc_comm(p).startswith("lttng"):
                note("lttng process %d still running: stopping it" % p)
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
        try:
            self.sd.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self.sd = None

    # ---- the load: building tracekit in a copy, over and over ----

    def start_loader(self):
        if self.loader:
            return
        src, bld = self.path("load-src"), self.path("load-build")
        note("load: copying the source and configuring a build of it")
        files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                                "--exclude-standard"], stdout=subprocess.PIPE,
                               check=True).stdout.decode().split("\0")
        for name in files:
            if name and os.path.isfile(os.path.join(ROOT, name)):
                os.makedirs(os.path.dirname(os.path.join(src, name)), exist_ok=True)
                shutil.copy2(os.path.join(ROOT, name), os.path.join(src, name))
        subprocess.run(["meson", "setup", bld, src], stdout=subprocess.DEVNULL, check=True)
        self.loader = subprocess.Popen(
            ["sh", "-c", "while :; do ninja -C '%s' -j2 >/dev/null 2>&1; "
             "ninja -C '%s' -t clean >/dev/null 2>&1; done" % (bld, bld)],
            start_new_session=True)
        time.sleep(3)

    def stop_loader(self):
        if not self.loader:
            return
        try:
            os.killpg(self.loader.pid, signal.SIGTERM)
        except OSError:
            pass
        self.loader.wait()
        self.loader = None
        time.sleep(1)  # ninja stops the compilers it started

    # ---- one recording ----

    def tk_run(self, prog, opts=(), out="tk", tk=TK, pin=None):
        """`tracekit record -o TMP/OUT OPTS -- PROG...` (TK: that tracekit;
        PIN: a CPU it and PROG stay on): a dict with the
        program's output (prog), rec, lost, streams, bytes (stream files),
        rec_cpu_s (the recorder: its rusage minus the program's own
        process_cpu_ns when the program prints it), wall_s; None on failure."""
        d = self.path(out)
        fresh(d)
        args = [tk, "record", "-o", d] + list(opts) + ["--"] + prog
        if pin is not None:
            args = ["taskset", "-c", str(pin)] + args
        rc, o, e, wall, cpu = run_waited(args)
        s = tk_summary(e)
        if rc != 0 or s is None:
            note("tracekit record %s failed (exit %d): %s" % (" ".join(opts), rc,
                                                               e.strip()[-400:]))
            return None
        if not self.tk_sites:
            m = re.search(r"^tracekit: .*: (call sites are .*)$", e, re.M)
            self.tk_sites = m.group(1) if m else ""
        pv = kv(o)
        pcpu = num(pv, "process_cpu_ns")
        return dict(prog=pv, stdout=o, rec=s[0], lost=s[1], streams=s[2], dir=d,
                    bytes=stream_bytes(os.path.join(d, "user")), wall_s=wall,
                    rec_cpu_s=None if pcpu is None else cpu - pcpu / 1e9, err=e)

    def bt2_count(self, d):
        p = subprocess.run(["babeltrace2", d, "-c", "sink.utils.counter", "-p", "step=+0"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        n = 0
        for line in p.stdout.splitlines():
            m = re.match(r"^\s*(\d+)\s+Event messages?$", line)
            if m:
                n = int(m.group(1))
        return n

    def lt_run(self, prog, channel=None):
        """An LTTng-UST session around PROG: create, (channel), enable
        bench:event, start, PROG, stop, destroy.  Same dict as tk_run, with
        rec_cpu_s the consumer daemons' CPU time from start to stop."""
        self.sessiond()
        self.lt_seq += 1
        s = "tkbench-%d-%d" % (os.getpid(), self.lt_seq)
        d = self.path("lt")
        fresh(d)
        self.lt("create", s, "--output", d)
        ch = []
        if channel:
            self.lt("enable-channel", "-u", "-s", s, "--subbuf-size", channel[0],
                    "--num-subbuf", str(channel[1]), "ch")
            ch = ["-c", "ch"]
        self.lt("enable-event", "-u", "-s", s, *ch, "bench:event")
        self.remember_sessiond()
        c0 = {p: task_cpu_ns(p) for p in self.consumerd_pids()}
        self.lt("start", s)
        t0 = time.monotonic()
        p = subprocess.run(prog, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stop = self.lt("stop", s, check=False)
        wall = time.monotonic() - t0
        c1 = {p_: task_cpu_ns(p_) for p_ in self.consumerd_pids()}
        self.lt("destroy", s, check=False)
        if p.returncode:
            note("bench-lttng failed: " + p.stderr.strip()[-300:])
            return None
        pv = kv(p.stdout)
        emitted = num(pv, "events", int)
        rec = self.bt2_count(d)
        lost = emitted - rec
        # Checked against the discarded count `lttng stop` prints, which
        # lttng-tools 2.13 sometimes prints as 2^63 + the count.
        m = re.search(r"Warning: (\d+) events were discarded", stop)
        said = int(m.group(1)) if m else 0
        if said != lost:
            if said == lost + 2 ** 63:
                self.lt_quirk += 1
            else:
                self.lt_disagree.append("lttng stop: %d discarded, babeltrace2: %d of %d "
                                        "recorded" % (said, rec, emitted))
        cpu = sum(c1[q] - c0.get(q, 0) for q in c1) / 1e9
        return dict(prog=pv, rec=rec, lost=lost, bytes=stream_bytes(os.path.join(d, "ust")),
                    wall_s=wall, rec_cpu_s=cpu, dir=d)

    # ---- 1, 2: disabled cost and floor (no session daemon running) ----

    def plain(self, key, prog, site, n, threads):
        p = subprocess.run([prog, site, str(n), str(threads)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        v = num(kv(p.stdout), "ns_per_event")
        if p.returncode or v is None:
            note("%s %s failed: %s" % (prog, site, p.stderr.strip()[-200:]))
        self.res.setdefault(key, []).append(v)

    def disabled(self):
        c = self.cfg
        for r in range(1, c.repeat + 1):
            note("[%d/%d] 1. disabled sites" % (r, c.repeat))
            self.plain("empty", B, "empty", c.disabled_n, 1)
            self.plain("tk_site", B, "site", c.disabled_n, 1)
            self.plain("tk_branch", BB, "site", c.disabled_n, 1)
            self.plain("lttng_off", self.LB, "site", c.disabled_n, 1)
            self.plain("usdt", self.UB, "site", c.disabled_n, 1)

    def floors(self):
        c = self.cfg
        for r in range(1, c.repeat + 1):
            note("[%d/%d] 2. floor" % (r, c.repeat))
            self.plain("rdtsc", self.FB, "rdtsc", c.floor_n, 1)
            self.plain("clock", self.FB, "clock", c.floor_n, 1)
            self.plain("floor1", self.FB, "floor", c.floor_n, 1)
            self.plain("floor2", self.FB, "floor", c.floor_n, 2)

    # ---- 3: enabled cost, draining to disk ----

    @staticmethod
    def summarize(x, threads):
        """Per-run figures of a harness run under a tracer."""
        pv = x["prog"]
        emitted = num(pv, "events", int)
        rate = num(pv, "rate")
        loop_s = emitted / threads / rate if rate else None
        return dict(ns=num(pv, "ns_per_event"), cpu=num(pv, "cpu_ns_per_event"),
                    emitted=emitted, rec=x["rec"], lost=x["lost"], rate=rate,
                    lostpct=pct(x["lost"], emitted),
                    bpe=x["bytes"] / x["rec"] if x["rec"] else None,
                    bytes=x["bytes"], loop_s=loop_s, rec_cpu_s=x["rec_cpu_s"])

    def enabled(self):
        c = self.cfg
        sub_kb = c.buf_kb // c.subbufs
        out = {"tk1": [], "tk2": [], "lt1": [], "lt2": [], "base1": [], "base2": [],
               "tkw": [], "basew": []}
        for r in range(1, c.repeat + 1):
            for t in (1, 2):
                note("[%d/%d] 3. enabled, %d thread(s)" % (r, c.repeat, t))
                x = self.tk_run([B, "site", str(c.enabled_n), str(t)],
                                ["-b", str(c.buf_kb), "--subbufs", str(c.subbufs)])
                if x:
                    out["tk%d" % t].append(self.summarize(x, t))
                if self.base:
                    x = self.tk_run([self.base["B"], "site", str(c.enabled_n), str(t)],
                                    ["-b", str(c.buf_kb), "--subbufs", str(c.subbufs)],
                                    tk=self.base["TK"])
                    if x:
                        out["base%d" % t].append(self.summarize(x, t))
                x = self.lt_run([self.LB, "site", str(c.enabled_n), str(t)],
                                ("%dK" % sub_kb, c.subbufs))
                if x:
                    out["lt%d" % t].append(self.summarize(x, t))
            if self.base:
                # the writer alone, both builds: nothing drained while
                # recording (--overwrite), everything on one CPU
                for who, tk, prog in (("tkw", TK, B), ("basew", self.base["TK"], self.base["B"])):
                    x = self.tk_run([prog, "site", str(c.enabled_n), "1"],
                                    ["--overwrite", "-b", str(c.buf_kb), "--subbufs",
                                     str(c.subbufs)], tk=tk, pin=self.base["cpu"])
                    out[who].append(x and self.summarize(x, 1))
        return out

    # ---- 5: paced ----

    def paced(self, mode, loaded):
        """REPEAT pairs of runs (tracekit, then LTTng-UST) of 2 threads x
        PACE events/s x PACE_SECONDS, default buffers."""
        c = self.cfg
        n = c.pace * c.pace_seconds
        pace = str(c.pace) + (":sleep" if mode == "sleep" else "")
        if loaded:
            self.start_loader()
        out = {"tk": [], "lt": [], "base": []}
        for r in range(1, c.repeat + 1):
            what = "5. paced, threads %s%s" % (mode, ", machine loaded" if loaded else "")
            note("[%d/%d] %s: tracekit, LTTng-UST" % (r, c.repeat, what))
            x = self.tk_run([B, "site", str(n), "2", pace])
            out["tk"].append(x and self.summarize(x, 2))
            if self.base and mode == "sleep" and not loaded and 11 in self.parts:
                x = self.tk_run([self.base["B"], "site", str(n), "2", pace], tk=self.base["TK"])
                out["base"].append(x and self.summarize(x, 2))
            x = self.lt_run([self.LB, "site", str(n), "2", pace])
            out["lt"].append(x and self.summarize(x, 2))
            if loaded:
                self.loaded_load.append(float(loadavg().split()[0]))
        return out

    # ---- 11: what a recording costs the recorder whatever it drains ----

    def fixed_costs(self):
        """The recorder's CPU time for a recording of one event per thread
        (2 threads), with the options of the paced and of the flood runs:
        start, the program's start and end, the index, the last sync.  Part
        11 takes it from each run's, so that its figure is per MB drained
        (as LTTng's consumer daemon's, measured from start to stop)."""
        c = self.cfg
        opts = {"paced": [], "flood": ["-b", str(c.buf_kb), "--subbufs", str(c.subbufs)]}
        out = {}
        for r in range(1, c.repeat + 1):
            note("[%d/%d] 11. recordings of one event per thread" % (r, c.repeat))
            for who in ("tk", "base") if self.base else ("tk",):
                tk, prog = (self.base["TK"], self.base["B"]) if who == "base" else (TK, B)
                for k, o in opts.items():
                    x = self.tk_run([prog, "site", "1", "2"], o, tk=tk)
                    if x and x["rec_cpu_s"] is not None:
                        out.setdefault((who, k), []).append(x["rec_cpu_s"])
        return {key: med(v) for key, v in out.items()}

    # ---- 6: flood ----

    def flood(self):
        c = self.cfg
        fsub = c.flood_kb // c.subbufs
        out = {"tk": [], "lt": [], "check": [], "runs": 0}
        for r in range(1, c.repeat + 1):
            note("[%d/%d] 6. flood, 2 threads, small buffers" % (r, c.repeat))
            x = self.tk_run([B, "site", str(c.flood_n), "2"],
                            ["-b", str(c.flood_kb), "--subbufs", str(c.subbufs)])
            if x:
                y = self.summarize(x, 2)
                out["tk"].append(y)
                out["runs"] += 1
                if y["rec"] + y["lost"] != y["emitted"]:
                    out["check"].append("run %d: %d + %d != %d" % (r, y["rec"], y["lost"],
                                                                    y["emitted"]))
                n = self.bt2_count(os.path.join(x["dir"], "user"))
                if n != y["rec"]:
                    out["check"].append("run %d: babeltrace2 decodes %d, summary says %d"
                                        % (r, n, y["rec"]))
            x = self.lt_run([self.LB, "site", str(c.flood_n), "2"], ("%dK" % fsub, c.subbufs))
            if x:
                out["lt"].append(self.summarize(x, 2))
        return out

    # ---- 4: reading ----

    def reading(self):
        c = self.cfg
        note("4. recording the trace to read")
        x = self.tk_run([B, "site", str(c.read_n), "2"], ["-b", "65536"], out="rd")
        out = {"events": None}
        if not x:
            return out
        out.update(events=x["rec"], lost=x["lost"], mb=x["bytes"] / 1e6)
        has_count = "--count" in subprocess.run([TK, "report", "--help"], stdout=subprocess.PIPE,
                                                stderr=subprocess.STDOUT, text=True).stdout
        cmds = {"tk": [TK, "report", x["dir"]],
                "tkc": [TK, "report", "--count", x["dir"]] if has_count else None,
                "bt": ["babeltrace2", os.path.join(x["dir"], "user")],
                "btd": ["babeltrace2", "-o", "dummy", os.path.join(x["dir"], "user")]}
        for r in range(1, c.repeat + 1):
            note("[%d/%d] 4. reading" % (r, c.repeat))
            for k, cmd in cmds.items():
                if not cmd:
                    continue
                t0 = time.monotonic()
                p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True)
                dt = time.monotonic() - t0
                if p.returncode:
                    note("%s failed: %s" % (" ".join(cmd), p.stderr.strip()[-200:]))
                    continue
                out.setdefault(k, []).append(x["rec"] / dt)
        return out

    # ---- 9: function tracer vs uftrace ----

    def functrace(self):
        c = self.cfg
        src = os.path.join(ROOT, "bench", "bench-func.c")
        progs = {}
        for name, extra in (("plain", []), ("patch", ["-fpatchable-function-entry=5"]),
                            ("pg", ["-pg"])):
            progs[name] = self.path("bin", "func-" + name)
            subprocess.run(["cc", "-O2", "-falign-loops=64"] + extra + [src, "-o", progs[name]],
                           check=True)
        uf = shutil.which("uftrace")
        n = str(c.func_calls)
        out = {}

        def ns(text):
            m = re.search(r"^([0-9.]+) ns/call", text, re.M)
            return float(m.group(1)) if m else None

        def put(k, v):
            out.setdefault(k, []).append(v)

        for r in range(1, c.repeat + 1):
            note("[%d/%d] 9. function tracer, tracekit and uftrace" % (r, c.repeat))
            for k in ("plain", "patch"):
                put(k, ns(subprocess.run([progs[k], n], stdout=subprocess.PIPE,
                                         text=True).stdout))
            for t in ("function", "function_graph"):
                x = self.tk_run([progs["patch"], n], ["-b", str(c.func_kb), "-p", t,
                                                      "-l", "bench_leaf"], out="ft-" + t)
                if not x:
                    continue
                put(t, ns(x["stdout"]))
                put(t + ".lost", x["lost"])
                if t == "function_graph":
                    t0 = time.monotonic()
                    subprocess.run([TK, "report", x["dir"]], stdout=subprocess.DEVNULL)
                    put("tkread", x["rec"] / (time.monotonic() - t0))
            if uf:
                for k, prog, extra in (("ufP", progs["patch"], ["-P", "bench_leaf"]),
                                       ("ufpg", progs["pg"], [])):
                    d = self.path("uf-" + k)
                    fresh(d)
                    p = subprocess.run([uf, "record", "-d", d] + extra + [prog, n],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, cwd=self.tmp)
                    put(k, ns(p.stdout))
                t0 = time.monotonic()
                subprocess.run([uf, "replay", "-d", self.path("uf-ufP")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                # two records (entry, exit) per call
                put("ufread", 2 * c.func_calls / (time.monotonic() - t0))
        out["uftrace"] = uf and " ".join(subprocess.run(
            [uf, "--version"], stdout=subprocess.PIPE, text=True).stdout.split()[:2])
        return out

    # ---- 10: function-tracer burst at default settings ----

    def burst(self):
        c = self.cfg
        out = {"untraced": []}
        for r in range(1, c.burst_runs + 1):
            p = subprocess.run([BURST], stdout=subprocess.PIPE, text=True)
            out["untraced"].append(num(kv(p.stdout), "rate"))
        for r in range(1, c.burst_runs + 1):
            note("[%d/%d] 10. function-tracer burst, default settings" % (r, c.burst_runs))
            for t, who in (("function", ""), ("function_graph", ""),
                           ("function", "base"), ("function_graph", "base")):
                if who and not self.base:
                    continue
                x = self.tk_run([self.base["BURST"] if who else BURST], ["-p", t], out="burst",
                                tk=self.base["TK"] if who else TK)
                if self.base:
                    # the tracer alone: nothing drained meanwhile, one CPU
                    y = self.tk_run([self.base["BURST"] if who else BURST],
                                    ["-p", t, "--overwrite"], out="burst",
                                    tk=self.base["TK"] if who else TK, pin=self.base["cpu"])
                    rate = y and num(y["prog"], "rate")
                    out.setdefault("w" + who + t, []).append(
                        dict(ns=1e9 / rate) if rate else None)
                if not x:
                    out.setdefault(who + t, []).append(None)
                    continue
                pv = x["prog"]
                calls = num(pv, "total_calls", int) + 1   # main is traced too
                # the library calls it made are recorded too (default: no
                # --no-libcall); a base tree's program may not count them
                calls += num(pv, "library_calls", int) or 0
                expected = calls * (2 if t == "function_graph" else 1)
                out.setdefault(who + t, []).append(dict(
                    rate=num(pv, "rate"), seconds=num(pv, "seconds"), calls=calls,
                    ns=1e9 / num(pv, "rate") if num(pv, "rate") else None,
                    expected=expected, rec=x["rec"], lost=x["lost"],
                    lostpct=pct(x["lost"], expected),
                    exact=x["rec"] + x["lost"] == expected))
        return out

    # ---- 12: memory of many threads ----

    def mem_run(self, traced):
        c = self.cfg
        d = self.path("mem")
        fresh(d)
        args = [BTHREADS, str(c.mem_threads)]
        if traced:
            args = [TK, "record", "-o", d, "--"] + args
        errf = open(self.path("mem.err"), "w+")
        p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errf,
                             text=True)
        res = None
        try:
            line = p.stdout.readline().split()
            if len(line) != 2 or line[0] != "ready":
                note("bench-threads did not start")
                return None
            pid = int(line[1])
            res = dict(prog_rss=vm_rss_kb(pid))
            if traced:
                # The recorder maps each buffer when it receives it.
                end = time.time() + 15
                while time.time() < end and smaps_sum(p.pid, "/memfd:tracekit")[2] < \
                        smaps_sum(pid, "/memfd:tracekit")[2]:
                    time.sleep(0.2)
                time.sleep(0.5)
                res["prog_rss"] = vm_rss_kb(pid)
                res["prog_buf"] = smaps_sum(pid, "/memfd:tracekit")
                res["rec_buf"] = smaps_sum(p.pid, "/memfd:tracekit")
                res["rec_rss"] = vm_rss_kb(p.pid)
        finally:
            p.stdin.close()
            p.stdout.read()
            p.wait()
            errf.seek(0)
            err = errf.read()
            errf.close()
        if p.returncode and not traced:
            note("bench-threads failed: " + err.strip()[-300:])
            return None
        if traced and res:
            s = tk_summary(err)
            if p.returncode or not s:
                note("tracekit record of bench-threads failed: " + err.strip()[-300:])
                return None
            res["summary"] = s
        return res

    def memory(self):
        c = self.cfg
        out = {"tk": [], "plain": []}
        for r in range(1, c.repeat + 1):
            note("[%d/%d] 12. memory, %d threads" % (r, c.repeat, c.mem_threads))
            out["plain"].append(self.mem_run(False))
            out["tk"].append(self.mem_run(True))
        return out

    # ---- the tables ----

    def col(self, runs, key):
        return [x[key] for x in runs if x and x.get(key) is not None]

    def print_header(self, load0):
        c = self.cfg
        site_kind = kv(subprocess.run([B, "empty", "1"], stdout=subprocess.PIPE,
                                      text=True).stdout).get("site_kind", "?")
        rev = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                             stdout=subprocess.PIPE, text=True).stdout.strip() or "unknown"
        cpu = "?"
        with open("/proc/cpuinfo") as fh:
            m = re.search(r"^model name\s*: (.*)$", fh.read(), re.M)
            cpu = m.group(1) if m else cpu

        def version(cmd, pat=r"[0-9][0-9.]*[0-9]"):
            try:
                out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True).stdout
            except OSError:
                return "n/a"
            m = re.search(pat, out)
            return m.group(0) if m else "?"
        print("tracekit benchmark: median of %d runs%s" % (c.repeat, ", --quick" if c.quick else ""))
        print("machine   %d CPUs, %s, Linux %s" % (os.cpu_count(), cpu, os.uname().release))
        print("load      %s at start, %s at end (1/5/15 min averages; at the end they include"
              % (load0, loadavg()))
        print("          this benchmark's own threads; other work skews every number)")
        if self.loads:
            lo = min(l for _, l in self.loads)
            hi = max(self.loads, key=lambda x: x[1])
            print("          1-min load at the start of each part: %.2f-%.2f (highest before %s)"
                  % (lo, hi[1], hi[0]))
        print("tracekit  %s; default site: %s%s" % (rev, site_kind,
                                                    " (record: %s)" % self.tk_sites
                                                    if self.tk_sites else ""))
        print("others    lttng-ust %s, lttng-tools %s, babeltrace2 %s, uftrace %s, sys/sdt.h"
              % (version(["pkg-config", "--modversion", "lttng-ust"]),
                 version(["lttng", "--version"]), version(["babeltrace2", "--version"]),
                 version(["uftrace", "--version"])))
        print('event     bench:event, two int64 and the 12-character string "hello world!"')
        print()

    def table_1(self):
        c = self.cfg
        e = med(self.res.get("empty", []))
        site_kind = kv(subprocess.run([B, "empty", "1"], stdout=subprocess.PIPE,
                                      text=True).stdout).get("site_kind")
        print("1. Disabled cost (%d iterations, 1 thread)" % c.disabled_n)
        print("                                                 ns/iter  vs empty minus empty   range of runs")

        def row(label, key):
            m = med(self.res.get(key, []))
            print("  %-46s %9s %8s %+9s   %s" % (label, f(m, "%.3f"), f(ratio(m, e), "%.2fx"),
                                              f(None if m is None or e is None else m - e,
                                                "%+.3f"), rng(self.res.get(key, []))))
        row("empty loop", "empty")
        if site_kind == "static-key":
            row("tracekit site, static key (5-byte NOP)", "tk_site")
            row("tracekit site, branch (-DTK_NO_STATIC_KEYS)", "tk_branch")
        else:
            row("tracekit site, static key [n/a: same branch binary]", "tk_site")
            row("tracekit site, branch on the enabled byte", "tk_branch")
        row("LTTng-UST tracepoint, no session", "lttng_off")
        row("USDT probe (sys/sdt.h), not attached", "usdt")
        print()

    def table_2(self):
        c = self.cfg
        f1 = med(self.res.get("floor1", []))
        print("2. Floor (%d iterations per thread)" % c.floor_n)
        print("                                                ns/event  vs floor                range of runs")
        for label, key in (("rdtsc alone", "rdtsc"),
                           ("clock_gettime(CLOCK_MONOTONIC) alone", "clock"),
                           ("floor: rdtsc + 24-byte store + release store", "floor1"),
                           ("floor, 2 threads (per thread)", "floor2")):
            m = med(self.res.get(key, []))
            print("  %-46s %9s %8s             %s" % (label, f(m, "%.3f"), f(ratio(m, f1), "%.2fx"),
                                                      rng(self.res.get(key, []))))
        print()

    def table_3(self):
        c = self.cfg
        en = self.memo["enabled"]
        f1, f2 = med(self.res.get("floor1", [])), med(self.res.get("floor2", []))
        sub_kb = c.buf_kb // c.subbufs
        print("3. Enabled cost, recorder/consumer draining to disk, %d events per thread" % c.enabled_n)
        print("   buffers: tracekit -b %d (%d x %d KiB per thread);" % (c.buf_kb, c.subbufs, sub_kb))
        print("            LTTng per-UID, --subbuf-size %dK --num-subbuf %d (%d KiB per CPU)"
              % (sub_kb, c.subbufs, c.buf_kb))
        print("   = the same bytes per writer (LTTng holds %d such buffers, one per CPU, whatever the threads)"
              % os.cpu_count())
        print("                               ns/event    vs   cpu ns       lost   lost% B/event  ns range")
        print("                                         floor  /event      (med)")

        def row(label, key, fl):
            runs = en[key]
            m = med(self.col(runs, "ns"))
            print("  %-27s %8s %6s %7s %10s %7s %7s  %s" % (
                label, f(m), f(ratio(m, fl), "%.2fx"), f(med(self.col(runs, "cpu"))),
                f(med(self.col(runs, "lost")), "%.0f"), f(med(self.col(runs, "lostpct"))) + "%",
                f(med(self.col(runs, "bpe"))), rng(self.col(runs, "ns"), "%.1f")))

        def vs(label, a, b):
            print("  %-27s %9s" % (label, f(ratio(med(self.col(en[b], "ns")),
                                                  med(self.col(en[a], "ns"))), "%.2fx")))
        row("tracekit, 1 thread", "tk1", f1)
        if self.base:
            row("tracekit %s, 1 thread" % self.base["rev"], "base1", f1)
        row("LTTng-UST, 1 thread", "lt1", f1)
        vs("LTTng / tracekit, 1 thr", "tk1", "lt1")
        row("tracekit, 2 threads", "tk2", f2)
        if self.base:
            row("tracekit %s, 2 threads" % self.base["rev"], "base2", f2)
        row("LTTng-UST, 2 threads", "lt2", f2)
        vs("LTTng / tracekit, 2 thr", "tk2", "lt2")
        print("   (ns/event: wall time of the median thread's loop; cpu ns/event: its own CPU time, without")
        print("    the time the recorder or other threads took its CPU; 2-thread rows vs the 2-thread floor)")
        if self.base:
            self.base_vs("ns/event", (
                ("1 thread", en["tk1"], en["base1"]),
                ("2 threads", en["tk2"], en["base2"]),
                ("writer alone, 1 thread", en["tkw"], en["basew"])))
            print("   (writer alone: --overwrite, nothing drained while recording, the recorder and")
            print("    the program on CPU %d: what the event's own code costs)" % self.base["cpu"])
        t1, t2 = med(self.col(en["tk1"], "ns")), med(self.col(en["tk2"], "ns"))
        c1, c2 = med(self.col(en["tk1"], "cpu")), med(self.col(en["tk2"], "cpu"))
        r21, r1f = ratio(t2, t1), ratio(t1, f1)
        print("   per-event cost ratios                       wall     cpu   target")
        v = self.target("3. per event, 2 threads / 1 thread", f(r21, "%.2fx"),
                        "<= 1.15x", r21 <= 1.15 if r21 else None)
        print("  %-43s %7s %7s   <= 1.15x  %s" % ("tracekit 2 threads / 1 thread", f(r21, "%.2fx"),
                                                 f(ratio(c2, c1), "%.2fx"), v))
        v = self.target("3. per event, 1 thread / floor", f(r1f, "%.2fx"),
                        "<= 1.25x", r1f <= 1.25 if r1f else None)
        print("  %-43s %7s %7s   <= 1.25x  %s" % ("tracekit 1 thread / floor", f(r1f, "%.2fx"),
                                                 f(ratio(c1, f1), "%.2fx"), v))
        print("   (wall: ns/event ratios, the targets; cpu: the same with the threads' own CPU time;")
        print("    the floor of a thread is part 2's 1-thread floor)")
        print()

    def base_vs(self, unit, rows):
        """--base: this tree's "ns" against REV's, for each row (label,
        this tree's runs, REV's runs: made one after the other)."""
        rev = self.base["rev"]
        print("   this tree vs %s (--base), %s, run for run:" % (rev, unit))
        print("                                  this    %7s    diff  ratio   diff of each pair of runs"
              % rev)
        for label, this, base in rows:
            a, b = med(self.col(this, "ns")), med(self.col(base, "ns"))
            pair = [x["ns"] - y["ns"] for x, y in zip(this, base)
                    if x and y and x["ns"] is not None and y["ns"] is not None]
            print("  %-29s %7s %10s %7s %6s   %s" % (
                label, f(a), f(b), f(None if a is None or b is None else a - b, "%+.2f"),
                f(ratio(a, b), "%.3fx"), " ".join("%+.2f" % d for d in pair) or "n/a"))
        print()

    def table_4(self):
        rd = self.memo["reading"]
        if rd["events"] is None:
            print("4. Reading: n/a (the trace to read could not be recorded)\n")
            return
        print("4. Reading one tracekit trace: %d events (%d lost), %.0f MB, 2 streams"
              % (rd["events"], rd["lost"], rd["mb"]))
        print("                                                    events/s  vs babeltrace2 text")
        bt = med(rd.get("bt", []))
        for label, k in (("tracekit report DIR > /dev/null", "tk"),
                         ("tracekit report --count DIR (decode only)", "tkc"),
                         ("babeltrace2 DIR/user > /dev/null (text)", "bt"),
                         ("babeltrace2 -o dummy DIR/user (decode only)", "btd")):
            m = med(rd.get(k, []))
            print("  %-46s %12s %9s" % (label, f(m, "%.0f"), f(ratio(m, bt), "%.2fx")))
        print()

    def table_5(self):
        c = self.cfg
        print("5. Paced: 2 threads x %d events/s x %ds, default buffers, draining to disk, %d runs each"
              % (c.pace, c.pace_seconds, c.repeat))
        print("   tracekit: its defaults (no -b); LTTng: its default channel (4 x 512 KiB per CPU)")
        print("   target: tracekit 0 lost in every run; machine loaded: tracekit lost <= LTTng's in each run")
        print("                                   emitted    lost    lost%  worst lost%  runs  ev/s/thr   target")
        print("                                     /run     (med)   (med)               lost    (med)")
        for loaded in (False, True):
            for mode in ("sleep", "spin"):
                key = ("paced", mode, loaded)
                if key not in self.memo:
                    continue
                runs = self.memo[key]
                name = "%s%s" % (mode, ", loaded" if loaded else "")
                failed = {w: sum(1 for x in runs[w] if not x) for w in runs}
                for who, label in (("tk", "tracekit"), ("lt", "LTTng-UST")):
                    rs = [x for x in runs[who] if x]
                    lost = self.col(rs, "lost")
                    worst = max(self.col(rs, "lostpct"), default=None)
                    verdict = ""
                    if who == "tk" and not loaded:
                        ok = all(l == 0 for l in lost) and not failed["tk"] if lost else None
                        verdict = "0 lost      " + self.target(
                            "5. paced, threads %s: lost (worst run)" % name,
                            fpct(worst) + "%" + (" (%d runs failed)" % failed["tk"]
                                                 if failed["tk"] else ""),
                            "0 in every run", ok)
                    elif who == "tk":
                        pairs = [(a["lost"], b["lost"]) for a, b in zip(runs["tk"], runs["lt"])
                                 if a and b]
                        ok = all(a <= b for a, b in pairs) and not failed["tk"] \
                            if pairs else None
                        verdict = "<= LTTng's  " + self.target(
                            "5. paced, threads %s: lost vs LTTng's" % name,
                            "%s%% vs %s%%, <= in %d/%d runs" % (
                                fpct(med(self.col(rs, "lostpct"))),
                                fpct(med(self.col([x for x in runs["lt"] if x], "lostpct"))),
                                sum(a <= b for a, b in pairs), len(runs["tk"])),
                            "<= LTTng's in every run", ok)
                    rate = med(self.col(rs, "rate"))
                    print("  %-31s %9s %7s %8s %11s %5s %9s   %s" % (
                        label + ", " + name, f(med(self.col(rs, "emitted")), "%.0f"),
                        f(med(lost), "%.0f"), fpct(med(self.col(rs, "lostpct"))),
                        fpct(worst), "%d/%d" % (sum(1 for l in lost if l), len(rs)),
                        f(rate and rate / 1e6, "%.2fM"), verdict))
                    if failed[who]:
                        print("  %-31s %d of %d runs failed (see stderr)"
                              % ("", failed[who], len(runs[who])))
        print("   (sleep: 1 ms batches, then the thread sleeps until the next is due; spin: 64-event")
        print("    batches, then the thread spins on the clock: both CPUs busy, the recorder competes;")
        if self.loaded_load:
            print("    loaded: a copy of tracekit built again and again with ninja -j2 meanwhile;")
            print("    1-min load average during the loaded runs: %.2f-%.2f)"
                  % (min(self.loaded_load), max(self.loaded_load)))
        else:
            print("    loaded: a copy of tracekit built again and again with ninja -j2 meanwhile)")
        print()

    def table_6(self):
        c = self.cfg
        fl = self.memo["flood"]
        fsub = c.flood_kb // c.subbufs
        print("6. Flood: 2 threads x %d events unpaced, small buffers: tracekit -b %d (%d x %d KiB"
              % (c.flood_n, c.flood_kb, c.subbufs, fsub))
        print("   per thread), LTTng --subbuf-size %dK --num-subbuf %d (%d KiB per CPU)"
              % (fsub, c.subbufs, c.flood_kb))
        print("                                       recorded       lost    lost%")
        for who, label in (("tk", "tracekit"), ("lt", "LTTng-UST")):
            rs = fl[who]
            print("  %-34s %10s %10s %7s%%" % (label, f(med(self.col(rs, "rec")), "%.0f"),
                                              f(med(self.col(rs, "lost")), "%.0f"),
                                              f(med(self.col(rs, "lostpct")))))
        ok = not fl["check"] and fl["runs"] > 0
        check = ("OK in %d of %d runs" % (fl["runs"], c.repeat)) if ok else (
            "; ".join(fl["check"]) or "no run")
        v = self.target("6. flood: recorded + lost == emitted", check.split(";")[0],
                        "exact in every run", ok if fl["runs"] else None)
        print("  %-34s %s   target: exact  %s" % ("recorded + lost == emitted", check, v))
        r = ratio(med(self.col(fl["tk"], "lostpct")), med(self.col(fl["lt"], "lostpct")))
        v = self.target("6. flood: lost fraction / LTTng's", f(r, "%.2fx"), "<= 1x",
                        r <= 1 if r is not None else None)
        print("  %-34s %9s   target: <= 1x   %s" % ("lost fraction tracekit / LTTng", f(r, "%.2fx"), v))
        print("   (tracekit: recorded and lost from the record summary, recorded checked against what")
        print("    babeltrace2 decodes from the trace; LTTng: lost = emitted - what babeltrace2 decodes)")
        print()

    def table_9(self):
        c = self.cfg
        ft = self.memo["functrace"]
        P = med(ft.get("plain", []))

        def added(v):
            return None if v is None or P is None else v - P
        up = med(ft.get("ufP", []))
        print("9. Function tracer for user code: %d calls of a small function, median of %d"
              % (c.func_calls, c.repeat))
        print("   (tracekit -b %d -l bench_leaf, recorder draining to disk; %s)"
              % (c.func_kb, ft.get("uftrace") or "uftrace missing"))
        print("                                        ns/call   added ns/call  vs uftrace -P   lost (med/max)")
        print("  %-36s %8s" % ("plain build", f(P)))
        pt = med(ft.get("patch", []))
        print("  %-36s %8s %12s" % ("patchable build, not traced", f(pt), f(added(pt))))
        for label, k in (("tracekit -p function", "function"),
                         ("tracekit -p function_graph", "function_graph")):
            m = med(ft.get(k, []))
            lost = ft.get(k + ".lost", [])
            print("  %-36s %8s %12s %14s %10s" % (
                label, f(m), f(added(m)), f(ratio(added(m), added(up)), "%.2fx"),
                "%s/%s" % (f(med(lost), "%.0f"), f(max(lost, default=None), "%d"))))
        print("  %-36s %8s %12s" % ("uftrace record -P (patchable build)", f(up), f(added(up))))
        ug = med(ft.get("ufpg", []))
        print("  %-36s %8s %12s" % ("uftrace record (-pg build)", f(ug), f(added(ug))))
        print("   reading                             records/s")
        tr, ur = med(ft.get("tkread", [])), med(ft.get("ufread", []))
        print("  %-36s %10s" % ("tracekit report (function_graph)", f(tr, "%.0f")))
        print("  %-36s %10s   %s" % ("uftrace replay", f(ur, "%.0f"), f(ratio(tr, ur), "%.2fx")))
        print()

    def table_10(self):
        c = self.cfg
        bu = self.memo["burst"]
        un = med(bu["untraced"])
        print("10. Function-tracer burst at default settings: tests/progs/funcburst.c (-O2,")
        print("    -fpatchable-function-entry=5), one thread, ~450,000 calls of 27 functions, then exit;")
        print("    `tracekit record -p TRACER -- prog-funcburst` (no other option), %d runs each"
              % c.burst_runs)
        print("    untraced: %s M calls/s (median)" % f(un and un / 1e6))
        print("                          M calls/s  burst ms    lost    lost%  worst lost  worst%  runs    target")
        print("                           (traced)    (med)    (med)    (med)                    lost")
        for t in ("function", "function_graph"):
            rs = [x for x in bu.get(t, []) if x]
            failed = len(bu.get(t, [])) - len(rs)
            lost = self.col(rs, "lost")
            exact = all(x["exact"] for x in rs)
            ok = all(l == 0 for l in lost) and not failed if lost else None
            worst = max(lost, default=None)
            v = self.target("10. burst -p %s: lost (worst run)" % t,
                            "%s (%s%%)" % (f(worst, "%d"),
                                           fpct(max(self.col(rs, "lostpct"), default=None))),
                            "0 in every run", ok)
            rate = med(self.col(rs, "rate"))
            print("  -p %-20s %9s %9s %8s %8s %11s %7s %5s   0 lost  %s" % (
                t, f(rate and rate / 1e6), f(med(self.col(rs, "seconds")) and
                                             med(self.col(rs, "seconds")) * 1e3, "%.1f"),
                f(med(lost), "%.0f"), fpct(med(self.col(rs, "lostpct"))), f(worst, "%d"),
                fpct(max(self.col(rs, "lostpct"), default=None)),
                "%d/%d" % (sum(1 for l in lost if l), len(rs)), v))
            if failed:
                print("     %d of %d runs failed (see stderr)" % (failed, len(bu.get(t, []))))
            if not exact:
                bad = [x for x in rs if not x["exact"]][0]
                print("     recorded + lost != events the program made: %d + %d != %d"
                      % (bad["rec"], bad["lost"], bad["expected"]))
        print("   (events: one per call with -p function, two with -p function_graph, of the")
        print("    program's functions and of the library functions it calls; recorded + lost")
        print("    == the calls the program counted, checked in every run: %s)"
              % ("OK" if all(x["exact"] for t in ("function", "function_graph")
                             for x in bu.get(t, []) if x) else "MISMATCH"))
        print()
        if self.base:
            rows = []
            for t in ("function", "function_graph"):
                rows.append(("-p " + t, bu.get(t, []), bu.get("base" + t, [])))
                rows.append(("-p %s, alone" % t, bu.get("w" + t, []), bu.get("wbase" + t, [])))
            self.base_vs("ns/call", rows)
            print("   (alone: --overwrite, nothing drained while recording, the recorder and the")
            print("    program on CPU %d: what the tracer's own code costs)" % self.base["cpu"])

    def table_11(self):
        en = self.memo["enabled"]
        pc = self.memo[("paced", "sleep", False)]
        fixed = self.memo.get("fixed", {})
        rev = self.base["rev"] if self.base else None
        print("11. Recorder CPU per MB drained: tracekit record (all its threads: rusage minus the")
        print("    program's own, minus what a recording of one event per thread costs it with the")
        print("    same options: 'fixed') and LTTng's consumer daemon (schedstat of its threads, start")
        print("    to stop)")
        print("                                             MB    MB/s  CPU ms   fixed  CPU ms/MB  whole   target")
        print("                                                                      drained  ms/MB")
        rows = [("tracekit, paced sleep (part 5)", pc["tk"], ("tk", "paced")),
                ("LTTng consumerd, paced sleep", pc["lt"], None),
                ("tracekit, flood 2 thr (part 3)", en["tk2"], ("tk", "flood")),
                ("LTTng consumerd, flood 2 thr", en["lt2"], None)]
        if self.base:
            rows.insert(1, ("tracekit %s, paced sleep" % rev, pc.get("base", []), ("base", "paced")))
            rows.insert(4, ("tracekit %s, flood 2 thr" % rev, en["base2"], ("base", "flood")))
        drained, figs = {}, []
        for label, runs, who in rows:
            rs = [x for x in runs if x and x.get("rec_cpu_s") is not None and x["bytes"]]
            fx = fixed.get(who) if who else 0.0
            per = None if fx is None else \
                med([(x["rec_cpu_s"] - fx) * 1e3 / (x["bytes"] / 1e6) for x in rs])
            if who:
                drained[who] = per
            figs.append((rs, fx, per))
        for (label, runs, who), (rs, fx, per) in zip(rows, figs):
            mb = med([x["bytes"] / 1e6 for x in rs])
            mbs = med([x["bytes"] / 1e6 / x["loop_s"] for x in rs if x["loop_s"]])
            cpu = med([x["rec_cpu_s"] * 1e3 for x in rs])
            whole = med([x["rec_cpu_s"] * 1e3 / (x["bytes"] / 1e6) for x in rs])
            tgt = ""
            if who and who[0] == "tk":
                # a quarter of the baseline: measured in this run with
                # --base BASELINE_REV, else the figure measured so
                b = drained.get(("base", who[1])) if rev and \
                    BASELINE_REV.startswith(rev[:7]) else BASELINE_DRAIN_MS_PER_MB.get(who[1])
                goal = b / 4 if b else None
                tgt = "<= %s (1/4 of %s)  " % (f(goal, "%.3f"), BASELINE_REV)
                tgt += self.target("11. recorder CPU/MB drained, " + label.split(", ")[1],
                                   f(per, "%.3f ms/MB"), "<= %s ms/MB" % f(goal, "%.3f"),
                                   per <= goal if goal and per is not None else None)
            print("  %-38s %8s %7s %7s %7s %9s %6s   %s" % (
                label, f(mb, "%.0f"), f(mbs, "%.0f"), f(cpu, "%.0f"),
                f(fx * 1e3 if fx else (0 if who else None), "%.0f") if who else "-",
                f(per if who else whole, "%.3f"), f(whole, "%.3f"), tgt))
        print("   (MB: stream bytes written, 10^6; MB/s: over the time the program wrote; fixed: the")
        print("    median recorder CPU ms of %d recordings of one event per thread; whole ms/MB: CPU ms"
              % self.cfg.repeat)
        print("    over MB, the fixed part included)")
        print()

    def table_12(self):
        c = self.cfg
        mem = self.memo["memory"]
        tk = [x for x in mem["tk"] if x]
        pl = [x for x in mem["plain"] if x]
        mib = 1024.0

        def m(vals):
            v = med(vals)
            return None if v is None else v / mib
        held = m([x["prog_buf"][1] + x["rec_buf"][1] for x in tk])
        print("12. Memory: %d threads that each fire one event, then wait (bench-threads), default settings"
              % c.mem_threads)
        print("                                                         MiB   target")
        v = self.target("12. buffers held, %d threads x 1 event" % c.mem_threads,
                        f(held, "%.1f MiB"), "<= 64 MiB", held <= 64 if held is not None else None)
        print("  %-52s %8s   <= 64   %s" % ("buffers held (program + recorder, Pss)", f(held, "%.1f"), v))
        print("  %-52s %8s" % ("buffers mapped in the program (Rss)",
                               f(m([x["prog_buf"][0] for x in tk]), "%.1f")))
        print("  %-52s %8s" % ("buffers mapped in the recorder (Rss)",
                               f(m([x["rec_buf"][0] for x in tk]), "%.1f")))
        print("  %-52s %8s" % ("program RSS, recorded", f(m([x["prog_rss"] for x in tk]), "%.1f")))
        print("  %-52s %8s" % ("program RSS, not recorded", f(m([x["prog_rss"] for x in pl]), "%.1f")))
        print("  %-52s %8s" % ("recorder RSS", f(m([x["rec_rss"] for x in tk]), "%.1f")))
        if tk:
            s = tk[-1]["summary"]
            print("   (last run: %d streams, %d events recorded, %d lost; buffers: the mappings of"
                  % (s[2], s[0], s[1]))
            print("    /memfd:tracekit* in /proc/PID/smaps; Pss shares a page between the two processes)")
        print()

    def print_targets(self):
        if not self.targets:
            return
        print("Targets of the drain work (issue 10), this run")
        print("  %-50s %-31s %-24s %s" % ("", "figure", "target", ""))
        for label, fig, tgt, verdict in self.targets:
            print("  %-50s %-31s %-24s %s" % (label, fig, tgt, verdict))
        print()

    def lt_footer(self):
        print("LTTng's events recorded are counted by babeltrace2 in every LTTng run, lost = emitted - recorded.")
        if not self.lt_disagree:
            print("  lttng stop's discarded count agreed in every run%s." % (
                " (in %d, printed as 2^63 + the count)" % self.lt_quirk if self.lt_quirk else ""))
        else:
            print("  lttng stop's discarded count disagreed: " + "; ".join(self.lt_disagree))
        print()

    # ---- the whole run ----

    def run(self):
        parts, c = self.parts, self.cfg
        load0 = loadavg()
        if {1, 2, 3, 5, 6, 11} & parts:
            self.build_others()
        # Before any session daemon runs: LTTng's "no session" row.
        if 1 in parts:
            self.phase("part 1")
            self.disabled()
        if {2, 3} & parts:
            self.phase("part 2")
            self.floors()
        if self.base_rev and {3, 10, 11} & parts:
            self.build_base()
        if {3, 11} & parts:
            self.phase("part 3")
            self.once("enabled", self.enabled)
        if {5, 11} & parts:
            self.phase("part 5")
            self.once(("paced", "sleep", False), lambda: self.paced("sleep", False))
        if 11 in parts:
            self.once("fixed", self.fixed_costs)
        if 5 in parts:
            self.once(("paced", "spin", False), lambda: self.paced("spin", False))
            self.phase("part 5, loaded")
            self.once(("paced", "sleep", True), lambda: self.paced("sleep", True))
            self.once(("paced", "spin", True), lambda: self.paced("spin", True))
            self.stop_loader()
        if 6 in parts:
            self.phase("part 6")
            self.once("flood", self.flood)
        self.stop_sessiond()
        if 4 in parts:
            self.phase("part 4")
            self.once("reading", self.reading)
        if 9 in parts:
            self.phase("part 9")
            self.once("functrace", self.functrace)
        if 10 in parts:
            self.phase("part 10")
            self.once("burst", self.burst)
        if 12 in parts:
            self.phase("part 12")
            self.once("memory", self.memory)
        kernel_out = None
        if {7, 8} & parts:
            self.phase("parts 7-8")
            note("7-8. kernel events (bench/kernel.py)")
            p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "kernel.py"),
                                "-r", str(c.repeat), "-m", str(c.kernel_calls)],
                               stdout=subprocess.PIPE, text=True)
            kernel_out = p.stdout + ("" if p.returncode == 0 else
                                     "bench: kernel part failed (exit %d)\n" % p.returncode)

        probes_out = None
        if 13 in parts:
            self.phase("part 13")
            note("13. dynamic probes, library calls, user stacks (bench/probes.sh)")
            p = subprocess.run([os.path.join(ROOT, "bench", "probes.sh"), str(c.repeat)],
                               stdout=subprocess.PIPE, text=True,
                               env=dict(os.environ, TK_BUILD=BUILD))
            probes_out = p.stdout + ("" if p.returncode == 0 else
                                     "bench: part 13 failed (exit %d)\n" % p.returncode)

        self.print_header(load0)
        for n in range(1, 14):
            if n not in parts:
                continue
            if n in (7, 8):
                if kernel_out is not None:
                    sys.stdout.write(kernel_out + "\n")
                    kernel_out = None
                continue
            if n == 13:
                sys.stdout.write(probes_out + "\n")
                continue
            getattr(self, "table_%d" % n)()
        if {1, 3, 5, 6, 11} & parts:
            self.lt_footer()
        self.print_targets()


def parse_parts(text):
    parts = set()
    for item in text.split(","):
        lo, _, hi = item.partition("-")
        try:
            lo, hi = int(lo), int(hi or lo)
        except ValueError:
            raise argparse.ArgumentTypeError("bad part list '%s'" % text)
        if not 1 <= lo <= hi <= 13:
            raise argparse.ArgumentTypeError("parts are 1 to 13: '%s'" % text)
        parts.update(range(lo, hi + 1))
    return parts


def main():
    paras = __doc__.split("\n\n")
    ap = argparse.ArgumentParser(prog="bench/run", description=paras[0].split(" - ", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=paras[2])
    ap.add_argument("repeat", nargs="?", type=int, help="runs of each measurement "
                    "(default 5, --quick 2)")
    ap.add_argument("--quick", action="store_true", help="fewer and shorter runs: a look "
                    "in a few minutes")
    ap.add_argument("--part", type=parse_parts, help="only these parts, e.g. 5 or 3,10-12")
    ap.add_argument("--kernel", action="store_true", help="parts 7-8 and 13 only")
    ap.add_argument("--no-kernel", action="store_true", help="every part but 7-8 and 13")
    ap.add_argument("--base", metavar="REV", help="parts 3 and 10: also tracekit as of git "
                    "revision REV, run for run beside this tree's")
    a = ap.parse_args()
    if a.repeat is not None and a.repeat < 1:
        ap.error("REPEAT must be >= 1")
    parts = set(range(1, 14))
    if a.part:
        parts = a.part
    if a.kernel:
        parts &= {7, 8, 13}
    if a.no_kernel:
        parts -= {7, 8, 13}
    if not parts:
        ap.error("no part left to run")
    if os.geteuid() != 0:
        note("not root: the LTTng rows need a session daemon of this user, parts 7-8 need root")
    for path in (TK, B, BB, BTHREADS, BURST):
        if not os.access(path, os.X_OK):
            sys.exit("bench: %s was not built (run scripts/build)" % path)

    def stop(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    if a.base and subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", "-q",
                                  a.base + "^{commit}"], stdout=subprocess.DEVNULL).returncode:
        ap.error("--base: '%s' is no git revision of %s" % (a.base, ROOT))
    bench = Bench(Cfg(a.quick, a.repeat), parts, a.base)
    try:
        bench.run()
    finally:
        bench.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
