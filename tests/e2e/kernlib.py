# SPDX-License-Identifier: MIT
"""Helpers for end-to-end tests that touch the kernel's tracing (tracefs).

Several people run kernel tests on one machine at once, and tracefs is
machine-wide state, so everything here runs under one machine-wide lock
(flock on LOCK_PATH).  A kernel test wraps its body in guard():

    with kernlib.guard() as tfs:       # lock, mount if needed, snapshot
        ... run tracekit ...
    # here: the tracing state is exactly as before, or AssertionError

guard() also asserts that no instance named tracekit-* was left behind.
run_unmounted(args) runs a command where tracefs is not mounted, in a
private mount namespace (the machine's mounts stay as they are), and says
what it left mounted.

snapshot(path) reads the global state into a flat dict {key: value};
diff(a, b) lists the keys that differ.  Reading is plain open/read, a few
thousand small files in well under a second.
"""
import contextlib
import errno
import fcntl
import os
import re
import subprocess
import time

import tklib

LOCK_PATH = "/tmp/tracekit-tracefs.lock"
DEFAULT_MOUNT = "/sys/kernel/tracing"

# Top-level files whose contents are global settings.  Reading none of
# them changes anything (unlike "trace", "trace_pipe" or "free_buffer").
TOP_FILES = (
    "tracing_on", "current_tracer", "trace_clock", "set_event",
    "set_event_pid", "set_event_notrace_pid", "buffer_size_kb",
    "buffer_total_size_kb", "buffer_subbuf_size_kb", "buffer_percent",
    "tracing_cpumask", "trace_options", "saved_cmdlines_size",
    "tracing_thresh", "timestamp_mode", "tracing_max_latency",
    "kprobe_events", "uprobe_events", "dynamic_events",
    "set_ftrace_filter", "set_ftrace_notrace", "set_ftrace_pid",
    "set_ftrace_notrace_pid", "set_graph_function", "set_graph_notrace",
    "max_graph_depth", "stack_trace_filter", "stack_max_size",
)

# Files that exist on some kernels only: absent is recorded as "absent".
ABSENT = "absent"


@contextlib.contextmanager
def lock():
    """Exclusive machine-wide lock for anything that touches tracefs."""
    fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            os.fchmod(fd, 0o666)  # so that unprivileged users can take it too
        except OSError:
            pass
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def mounts(types=("tracefs",)):
    """Mount points of the file systems TYPES, from /proc/self/mounts."""
    out = []
    with open("/proc/self/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] in types:
                out.append(parts[1].replace("\\040", " "))
    return out


def _mount(path=DEFAULT_MOUNT):
    """Mount tracefs at PATH; raises tklib.Skip if the kernel refuses."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise tklib.Skip("cannot create %s: %s" % (path, e.strerror))
    p = subprocess.run(["mount", "-t", "tracefs", "nodev", path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise tklib.Skip("cannot mount tracefs at %s: %s" % (path, p.stdout.strip()))


def _umount(path):
    """Unmount PATH; lazily if something still holds it open (that holder
    is then a leak the caller reports)."""
    p = subprocess.run(["umount", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        subprocess.run(["umount", "-l", path], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return False
    return True


def _mounted_path():
    """The preferred mount point of tracefs, or None."""
    m = mounts()
    if not m:
        return None
    return DEFAULT_MOUNT if DEFAULT_MOUNT in m else m[0]


@contextlib.contextmanager
def _tracefs_locked():
    path = _mounted_path()
    mounted_here = False
    if path is None:
        _mount(DEFAULT_MOUNT)
        path, mounted_here = DEFAULT_MOUNT, True
    try:
        yield path
    finally:
        if mounted_here and path in mounts():
            _umount(path)


@contextlib.contextmanager
def tracefs():
    """Under lock(), tracefs mounted (mounted here if it was mounted
    nowhere, unmounted again on exit); yields its path.  Raises
    tklib.Skip if it cannot be mounted."""
    with lock():
        with _tracefs_locked() as path:
            yield path


def _read(path):
    """Contents of a file, 'absent' if it does not exist, or
    'unreadable: ERRNAME' if reading it fails."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        if e.errno == errno.ENOENT:
            return ABSENT
        return "unreadable: " + errno.errorcode.get(e.errno, str(e.errno))
    try:
        chunks = []
        while True:
            b = os.read(fd, 65536)
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks).decode("utf-8", "replace")
    except OSError as e:
        return "unreadable: " + errno.errorcode.get(e.errno, str(e.errno))
    finally:
        os.close(fd)


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def snapshot(path):
    """The global tracing state under tracefs PATH, as a flat dict.

    Keys: top-level settings by file name, "options/NAME", "events/enable",
    "events/SYS/enable", "events/SYS/filter", "events/SYS/EV/enable|filter|
    trigger", "instances" (sorted names, space-separated), "top_buffer"
    (entries and overruns of the top-level buffer, per CPU), "mounted"
    (tracefs and debugfs mount points),
    "ftrace_enabled" (/proc/sys/kernel/ftrace_enabled)."""
    s = {}
    for name in TOP_FILES:
        s[name] = _read(os.path.join(path, name))
    opts = os.path.join(path, "options")
    for name in _listdir(opts):
        s["options/" + name] = _read(os.path.join(opts, name))
    ev = os.path.join(path, "events")
    s["events/enable"] = _read(os.path.join(ev, "enable"))
    for system in _listdir(ev):
        sdir = os.path.join(ev, system)
        if not os.path.isdir(sdir):
            continue
        for f in ("enable", "filter"):
            s["events/%s/%s" % (system, f)] = _read(os.path.join(sdir, f))
        for event in _listdir(sdir):
            edir = os.path.join(sdir, event)
            if event in ("enable", "filter") or not os.path.isdir(edir):
                continue
            for f in ("enable", "filter", "trigger"):
                s["events/%s/%s/%s" % (system, event, f)] = _read(os.path.join(edir, f))
    s["instances"] = " ".join(_listdir(os.path.join(path, "instances")))
    s["top_buffer"] = _top_buffer(path, s)
    s["ftrace_enabled"] = _read("/proc/sys/kernel/ftrace_enabled")
    s["mounted"] = " ".join(sorted(mounts(("tracefs", "debugfs"))))
    return s


def _top_buffer(path, s):
    """What the top-level ring buffer holds (entries and overruns per CPU),
    so that events written there show; only while nothing at the top level
    is enabled (else it moves by itself)."""
    if s.get("set_event", "").strip() or s.get("current_tracer", "").strip() != "nop":
        return "n/a: the top level is tracing"
    out = []
    for cpu in _listdir(os.path.join(path, "per_cpu")):
        stats = _read(os.path.join(path, "per_cpu", cpu, "stats"))
        for line in stats.splitlines():
            if line.startswith(("entries:", "overrun:")):
                out.append("%s %s" % (cpu, line))
    return "\n".join(out)


def diff(before, after):
    """Lines 'KEY: BEFORE -> AFTER' for every key that differs."""
    out = []
    for k in sorted(set(before) | set(after)):
        a, b = before.get(k, "<missing>"), after.get(k, "<missing>")
        if a == b:
            continue
        la, lb = a.splitlines(), b.splitlines()
        if len(la) > 1 or len(lb) > 1:
            # why: show just the lines that changed in a long file
            gone = [l for l in la if l not in lb]
            new = [l for l in lb if l not in la]
            out.append("%s: %r -> %r" % (k, _short(" ".join(gone)), _short(" ".join(new))))
        else:
            out.append("%s: %r -> %r" % (k, _short(a), _short(b)))
    return out


def _short(v, n=200):
    v = v.strip() if isinstance(v, str) else v
    return v if len(v) <= n else v[:n] + "..."


def tracekit_instances(path):
    """Names of instances called tracekit-* under tracefs PATH."""
    return [n for n in _listdir(os.path.join(path, "instances"))
            if n.startswith("tracekit-")]


def no_tracekit_instances(path):
    """Assert that no instance named tracekit-* exists under PATH."""
    left = tracekit_instances(path)
    assert not left, "instances left behind: %s" % " ".join(left)


# What restore() writes back, so that one failing test does not poison the
# next ones (the failure itself has been reported already).
_RESTORE_TOP = ("tracing_on", "current_tracer", "trace_clock", "set_event_pid",
                "set_event_notrace_pid", "buffer_size_kb", "tracing_cpumask",
                "saved_cmdlines_size")


def _write(path, value):
    try:
        with open(path, "w") as f:
            f.write(value)
    except OSError:
        pass


def _recorder_alive(name):
    """Whether NAME (an instance "tracekit-PID" or a probe group
    "tracekit_PID_...") belongs to a recorder still running: one that
    someone else on the machine started meanwhile, not ours to remove."""
    m = re.match(r"tracekit[-_](\d+)(?:$|_)", name)
    if not m or int(m.group(1)) == os.getpid():
        return False
    try:
        with open("/proc/%s/comm" % m.group(1)) as f:
            return f.read().strip() == "tracekit"
    except OSError:
        return False


def restore(path, before):
    """Best effort: put back what differs from BEFORE and remove instances
    that were not there (but those of recorders still running)."""
    had = set(before.get("instances", "").split())
    for name in _listdir(os.path.join(path, "instances")):
        if name not in had and not _recorder_alive(name):
            try:
                os.rmdir(os.path.join(path, "instances", name))
            except OSError:
                pass
    # dynamic probes a tool defined (the instances that enabled them are
    # gone now): "-:GROUP/EVENT" removes one
    had_probes = set(before.get("uprobe_events", "").splitlines())
    for line in _read(os.path.join(path, "uprobe_events")).splitlines():
        if line.strip() and line not in had_probes and ":" in line.split()[0] and \
                not _recorder_alive(line.split()[0].split(":", 1)[1].split("/")[0]):
            # O_APPEND, without O_TRUNC (that clears every probe) and
            # without the seek Python's "a" mode makes (tracefs refuses it)
            with contextlib.suppress(OSError):
                fd = os.open(os.path.join(path, "uprobe_events"), os.O_WRONLY | os.O_APPEND)
                try:
                    os.write(fd, ("-:" + line.split()[0].split(":", 1)[1] + "\n").encode())
                finally:
                    os.close(fd)
    now = snapshot(path)
    # mounts a tool added (trace-cmd mounts debugfs), innermost first;
    # lazily, as something may still hold them
    had = set(before.get("mounted", "").split())
    for m in sorted(set(now.get("mounted", "").split()) - had, key=len, reverse=True):
        subprocess.run(["umount", "-l", m], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    now = snapshot(path)
    for k in sorted(now):
        if k not in before or now[k] == before[k]:
            continue
        old = before[k]
        if old == ABSENT or old.startswith("unreadable"):
            continue
        full = os.path.join(path, k)
        if k.endswith("/enable"):
            _write(full, old.strip() or "0")
        elif k.endswith("/filter"):
            _write(full, "0" if old.strip() == "none" else old)
        elif k.startswith("options/"):
            _write(full, old.strip())
        elif k == "current_tracer":
            _write(full, old.strip())
        elif k == "trace_clock":
            cur = [w for w in old.split() if w.startswith("[")]
            if cur:
                _write(full, cur[0].strip("[]"))
        elif k in _RESTORE_TOP:
            _write(full, old.strip() or "\n")
        elif k == "set_event":
            _write(full, "\n")  # truncating clears it; re-enable what was on
            with contextlib.suppress(OSError), open(full, "a") as f:
                for line in old.split():
                    f.write(line + "\n")


@contextlib.contextmanager
def guard():
    """Lock; mount tracefs if needed; take a snapshot; run the body; take
    another; raise AssertionError listing every difference (and any
    tracekit-* instance left).  Yields tracefs's path.  On a difference
    the state is restored as far as possible, after the report, so that
    later tests start clean.  (To run something where tracefs is not
    mounted, use run_unmounted() inside the guard.)"""
    with lock():
        with _tracefs_locked() as path:
            before = snapshot(path)
            yield from _check(path, before, lambda: snapshot(path))


def _check(path, before, take_after):
    """The common body of guard(): yield PATH, then compare."""
    failure = None
    try:
        yield path
    except BaseException as e:
        failure = e
    after = take_after()
    problems = diff(before, after)
    left = [n for n in tracekit_instances(path)
            if n not in before.get("instances", "").split()]
    if left and not any(p.startswith("instances:") for p in problems):
        problems.append("instances left behind: " + " ".join(left))
    if problems:
        restore(path, before)
    msg = "tracing state changed:\n  " + "\n  ".join(problems) if problems else None
    if failure is not None:
        if msg and not isinstance(failure, tklib.Skip):
            failure.add_note(msg)
        raise failure
    if msg:
        raise AssertionError(msg)


# Run in a private mount namespace: unmount every tracefs and debugfs
# there (the rest of the machine keeps its mounts), run the command, then
# write the tracefs/debugfs mount points still there to $KERNLIB_LEFT.
_UNMOUNTED_SH = r"""
mnt() { grep -E '^[^ ]+ [^ ]+ (tracefs|debugfs) ' /proc/self/mounts | cut -d' ' -f2 | sort -r; }
for m in $(mnt); do umount -l "$m" || exit 97; done
[ -z "$(mnt)" ] || exit 97
"$@"
rc=$?
mnt > "$KERNLIB_LEFT"
exit $rc
"""


def run_unmounted(args, timeout=60):
    """Run ARGS where neither tracefs nor debugfs is mounted (a private
    mount namespace: other processes keep theirs).  Returns the
    CompletedProcess and the tracefs/debugfs mount points left in that
    namespace when ARGS ended.  Raises tklib.Skip if no such namespace
    can be made here."""
    left = os.path.join(tklib.tmpdir(), "mounts-left")
    try:
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", "--",
                            "sh", "-c", _UNMOUNTED_SH, "sh"] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, env=dict(os.environ, KERNLIB_LEFT=left))
    except FileNotFoundError:
        raise tklib.Skip("unshare(1) is not installed: cannot unmount tracefs privately")
    if p.returncode == 97 or not os.path.exists(left):
        raise tklib.Skip("cannot unmount tracefs in a private mount namespace: %s"
                         % (p.stderr.strip() or "exit %d" % p.returncode))
    with open(left) as f:
        return p, f.read().split()


def wait_gone(pid, timeout=10):
    """Wait until process PID has exited (it is not our child)."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False


# ---------------------------------------------------------------- reading

# A line of `tracekit report` for user or kernel events:
#   COMM-TID [CPU] LAT TS: EVENT: TEXT
# LAT (trace-cmd's latency columns: irqs-off, need-resched, hard/softirq,
# preempt depth...) is on kernel lines only and never starts with a digit;
# EVENT is "provider:event" for user events and "event" or "system:event"
# for kernel events.
KLINE_RE = re.compile(
    r"^\s*(?P<comm>.*?)-(?P<tid>\d+)\s+\[(?P<cpu>\d+)\]\s+"
    r"(?:(?P<lat>[^\s\d]\S{2,6})\s+)?"
    r"(?P<ts>\d+(?:\.\d+)?):\s+(?P<event>[^\s:]+(?::[^\s:]+)?):(?:\s+(?P<text>.*))?$")


def parse_report(text):
    """Event lines of report output, parsed: dicts comm, tid, cpu, lat
    (None on user lines), ts (int when raw ticks, else float), event (as
    printed), name (event without its system), text.  Lines starting with
    '#' are skipped; lines starting with '=>' (stack entries) are attached
    to the previous event as 'stack'.  Any other line fails the test."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.strip().startswith("=>") and out:
            out[-1].setdefault("stack", []).append(line.strip()[2:].strip())
            continue
        m = KLINE_RE.match(line)
        assert m, "unparsable report line: %r" % line
        ts = m.group("ts")
        out.append(dict(comm=m.group("comm"), tid=int(m.group("tid")),
                        cpu=int(m.group("cpu")), lat=m.group("lat"),
                        ts=int(ts) if "." not in ts else float(ts),
                        event=m.group("event"), name=m.group("event").split(":")[-1],
                        text=(m.group("text") or "").rstrip()))
    return out


def report(outdir, *opts):
    """`tracekit report DIR --no-header --ts raw OPTS`, parsed.  With
    TK_REPORT=PATH in the environment, PATH is the tracekit that reads
    (e.g. a reader built elsewhere, on traces recorded by this build)."""
    p = tklib.run([os.environ.get("TK_REPORT") or tklib.TRACEKIT, "report", outdir,
                   "--no-header", "--ts", "raw"] + list(opts), timeout=300)
    return parse_report(p.stdout)


SCHED_SWITCH_RE = (
    # the kernel's own print format
    re.compile(r"prev_comm=(?P<pc>.*) prev_pid=(?P<pp>\d+) prev_prio=\d+ "
               r"prev_state=(?P<ps>\S+) ==> next_comm=(?P<nc>.*) next_pid=(?P<np>\d+) "
               r"next_prio=\d+$"),
    # trace-cmd's sched_switch plugin
    re.compile(r"(?P<pc>.*):(?P<pp>\d+) \[\d+\] (?P<ps>\S+) ==> (?P<nc>.*):(?P<np>\d+) \[\d+\]$"),
)


def sched_switch(text):
    """(prev_pid, prev_state, next_pid) of a sched_switch line's text."""
    for r in SCHED_SWITCH_RE:
        m = r.match(text)
        if m:
            return int(m.group("pp")), m.group("ps"), int(m.group("np"))
    raise AssertionError("unparsable sched_switch text: %r" % text)


def probe_refused(path):
    """What this kernel refuses, as {feature: reason}, probed in a scratch
    instance (removed again) under tracefs PATH; the caller holds lock().
    Features: 'function' (current_tracer function), 'ftrace_filter'
    (set_ftrace_filter), 'stacktrace' (options/stacktrace)."""
    inst = os.path.join(path, "instances", "tkprobe-%d" % os.getpid())
    refused = {}
    try:
        os.mkdir(inst)
    except OSError as e:
        return {f: "cannot create an instance: %s" % e.strerror
                for f in ("function", "ftrace_filter", "stacktrace")}
    try:
        tracers = _read(os.path.join(inst, "available_tracers")).split()
        if "function" not in tracers:
            refused["function"] = "the function tracer is not in this kernel's instances"
        else:
            try:
                with open(os.path.join(inst, "current_tracer"), "w") as f:
                    f.write("function")
            except OSError as e:
                refused["function"] = ("the kernel refuses current_tracer=function: %s"
                                       % e.strerror)
        try:
            with open(os.path.join(inst, "set_ftrace_filter"), "r"):
                pass
        except OSError as e:
            refused["ftrace_filter"] = "the kernel refuses set_ftrace_filter: %s" % e.strerror
        try:
            with open(os.path.join(inst, "options", "stacktrace"), "w") as f:
                f.write("1")
        except OSError as e:
            refused["stacktrace"] = "the kernel refuses options/stacktrace: %s" % e.strerror
    finally:
        for f, v in (("current_tracer", "nop"), ("options/stacktrace", "0")):
            with contextlib.suppress(OSError), open(os.path.join(inst, f), "w") as fh:
                fh.write(v)
        os.rmdir(inst)
    return refused
