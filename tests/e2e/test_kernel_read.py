# SPDX-License-Identifier: MIT
"""The reading side of kernel events: report (decoding DIR/kernel with
libtraceevent, merged with user events), list -e/-t/-f/-o, and stat.

The kernel traces here are made by kcapture.py (a private instance read
with trace_pipe_raw, in the layout of docs/format.md) around a real
`tracekit record` of a test program, so user and kernel events share the
TSC.  Everything that touches tracefs runs under kernlib.guard(), which
also checks that the kernel's tracing state is left as found.
"""
import os
import re
import shutil
import struct
import subprocess

import kcapture
import kernlib
import tklib

GETPPID = tklib.prog("kstat-getppid")
BASIC = tklib.prog("basic")
SYSCALLS = ["syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid"]
LAT_RE = re.compile(r"^[.dX][.Nnp][.hHsSzZ][.0-9a-f][.0-9a-f]$")


def record_with_kernel(tfs, events, cmd, buffer_kb=2048, stack=False):
    """A trace of CMD's user events (tracekit record) with kernel EVENTS
    captured around it; returns (dir, the program's stdout)."""
    d = os.path.join(tklib.tmpdir(), "t")
    p = kcapture.capture(tfs, d, events,
                         lambda: tklib.record(d, cmd), buffer_kb=buffer_kb, stack=stack)
    return d, p.stdout


def window(events, pid):
    """The events of PID strictly between its test:phase start and end."""
    marks = [i for i, e in enumerate(events) if e["event"] == "test:phase" and e["tid"] == pid]
    assert len(marks) == 2, "expected 2 test:phase events of %d, got %d" % (pid, len(marks))
    start, end = marks
    assert events[start]["text"] == "start" and events[end]["text"] == "end"
    return events[start + 1:end], events[start]["ts"], events[end]["ts"]


def prog_pid(d):
    out = tklib.tracekit("report", d, check=True).stdout
    m = re.search(r"^# process (\d+) \(", out, re.M)
    assert m, out[:500]
    return int(m.group(1))


# ------------------------------------------------------------ report

def test_getppid_between_user_events():
    n = 7
    with kernlib.guard() as tfs:
        d, out = record_with_kernel(tfs, SYSCALLS, [GETPPID, str(n)])
    ppid = int(re.search(r"ppid (\d+) calls", out).group(1))
    pid = prog_pid(d)
    events = kernlib.report(d)
    ts = [e["ts"] for e in events]
    assert ts == sorted(ts), "report is not in timestamp order"
    inside, t0, t1 = window(events, pid)
    mine = [e for e in inside if e["tid"] == pid]
    assert [e["event"] for e in mine] == SYSCALLS * n, [e["event"] for e in mine]
    for e in mine:
        assert t0 < e["ts"] < t1
        assert LAT_RE.match(e["lat"]), "bad latency columns %r" % e["lat"]
        # trace-cmd's text: nothing for the enter, "0x%lx" of the result
        assert e["text"] == ("" if e["name"] == "sys_enter_getppid" else "0x%x" % ppid), e
    users = [e for e in events if e["event"].startswith("test:")]
    assert users and all(e["lat"] is None for e in users)
    # user and kernel lines align: after "[CPU] ", five latency columns
    # (blank on user lines), a space, the timestamp
    raw = tklib.tracekit("report", d, "--no-header", "--ts", "raw").stdout.splitlines()
    for line in raw:
        m = re.match(r"^ *\S+-\d+ \[\d{3}\] (\S{5}| {5}) \d+: \S+:", line)
        assert m, "misaligned line %r" % line


def test_sched_switch_around_sleep():
    """The program leaves its CPU (state S) for its 30 ms sleep, is woken
    30 ms or more later, and comes back, all between its two user events.
    (Coming back can go unrecorded when the wakeup lands on the CPU that
    is switching to it; the wakeup cannot.)"""
    with kernlib.guard() as tfs:
        d, _ = record_with_kernel(tfs, ["sched:sched_switch", "sched:sched_wakeup"],
                                  [GETPPID, "1", "30"])
    pid = prog_pid(d)
    inside, _, _ = window(kernlib.report(d), pid)
    away = [e for e in inside if e["name"] == "sched_switch"
            and kernlib.sched_switch(e["text"])[:2] == (pid, "S")]
    woken = [e for e in inside if e["name"] == "sched_wakeup"
             and re.match(r"^\S+:%d \[\d+\]( success=\d+)? CPU:\d{3}$" % pid, e["text"])]
    assert len(away) == 1 and woken, "no sleep and wakeup seen"
    assert woken[0]["ts"] > away[0]["ts"]
    clock = re.search(r"at (\d+) Hz", tklib.tracekit("report", d, check=True).stdout)
    assert (woken[0]["ts"] - away[0]["ts"]) * 1000 >= 30 * int(clock.group(1)) * 0.99
    back = [e for e in inside if e["name"] == "sched_switch"
            and kernlib.sched_switch(e["text"])[2] == pid and e["ts"] > away[0]["ts"]]
    assert all(e["ts"] >= woken[0]["ts"] for e in back)
    # trace-cmd's sched_switch text: COMM:PID [PRIO] STATE ==> COMM:PID [PRIO]
    assert re.match(r"^\S+:%d \[\d+\] S ==> \S+:\d+ \[\d+\]$" % pid, away[0]["text"]), away[0]


TC_LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+(?P<cpu>\d+)(?P<lat>\S{5})\s*"
                     r"(?P<ts>[\d.]+): (?P<name>[^:\s]+):\s*(?P<text>.*)$")


# Kernel events whose field text the fast printers make (compiled print
# fmts, mirrored plugins) and that a busy command surely produces.
FAST_KINDS = {
    "sched_switch", "sched_wakeup", "sched_waking", "sched_stat_runtime",   # plugin, %s/%d
    "kmem_cache_alloc", "kmem_cache_free", "kmalloc", "kfree",              # kmem plugin, %pS, flags
    "mm_page_alloc", "mm_page_free",                                        # ?:, vmemmap_base, flags
    "page_fault_user",                                                      # %ps
    "hrtimer_start", "hrtimer_cancel",                                      # hrtimer plugin, %p
    "sys_enter_getppid", "sys_exit_getppid", "sys_enter_openat",
}
BUSY = ("ls -lR /usr/include/linux >/dev/null; cat /proc/self/stat >/dev/null; sleep 0.02; "
        "%s 40 1" % GETPPID)


DROPPED = re.compile(r"^CPU:\d+ \[(\d+ )?EVENTS DROPPED\]$")


def trace_cmd_report(tfs, d):
    """Field text of trace-cmd report -l on d's pages packed by trace-cmd
    restore: {cpu: [(pid, latency, event, text)]} (caller holds the lock)."""
    tc = shutil.which("trace-cmd")
    dat = os.path.join(tklib.tmpdir(), "restore.dat")
    raws = sorted(f for f in os.listdir(os.path.join(d, "kernel")) if f.endswith(".raw"))
    tklib.run([tc, "restore", "-t", tfs, "-k", os.path.join(d, "kernel", "kallsyms"),
               "-o", dat] + [os.path.join(d, "kernel", f) for f in raws])
    theirs = {}
    for line in tklib.run([tc, "report", "-l", dat], timeout=300).stdout.splitlines():
        m = TC_LINE.match(line)
        if m:
            theirs.setdefault(int(m.group("cpu")), []).append(
                (int(m.group("pid")), m.group("lat"), m.group("name"), m.group("text").strip()))
    return theirs


def test_field_text_same_as_trace_cmd():
    """trace-cmd restore packs our raw pages into a trace.dat; trace-cmd
    report -l of it and our report must agree on every kernel line's pid,
    latency columns, event and field text, CPU by CPU; so must --tep-print
    (libtraceevent's own printing, plugins loaded); and the common kinds
    must not have gone through libtraceevent (--tep-stats)."""
    if not shutil.which("trace-cmd"):
        raise tklib.Skip("trace-cmd is not installed")
    evs = ["sched", "kmem", "irq", "timer", "exceptions", "block",
           "syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid",
           "syscalls:sys_enter_openat", "syscalls:sys_exit_openat", "syscalls:sys_enter_read"]
    with kernlib.guard() as tfs:
        d, _ = record_with_kernel(tfs, evs, ["sh", "-c", BUSY], buffer_kb=8192)
        theirs = trace_cmd_report(tfs, d)
    p = tklib.tracekit("report", d, "--no-header", "--ts", "raw", "--tep-stats", timeout=300)
    ours = {}
    lines = [l for l in p.stdout.splitlines() if not DROPPED.match(l)]
    for e in kernlib.parse_report("\n".join(lines)):
        if e["lat"] is not None:
            ours.setdefault(e["cpu"], []).append((e["tid"], e["lat"], e["name"], e["text"].strip()))
    assert sum(len(v) for v in ours.values()) > 1000
    assert sorted(ours) == sorted(theirs)
    for cpu in ours:
        assert len(ours[cpu]) == len(theirs[cpu]), (cpu, len(ours[cpu]), len(theirs[cpu]))
        for a, b in zip(ours[cpu], theirs[cpu]):
            assert a == b, "cpu %d:\n ours   %r\n theirs %r" % (cpu, a, b)
    names = {x[2] for v in ours.values() for x in v}
    assert FAST_KINDS <= names, FAST_KINDS - names
    slow = {m.group(1).split(":")[1] for m in re.finditer(
        r"^tracekit: libtraceevent printed \d+ (\S+)$", p.stderr, re.M)}
    assert not slow & FAST_KINDS, "printed by libtraceevent: %s" % (slow & FAST_KINDS)
    slow_text = tklib.tracekit("report", d, "--no-header", "--ts", "raw", "--tep-print",
                               timeout=300).stdout
    if p.stdout != slow_text:
        for a, b in zip(p.stdout.splitlines(), slow_text.splitlines()):
            assert a == b, "\n fast %r\n tep  %r" % (a, b)
    assert p.stdout == slow_text


def test_sched_switch_plugin_text():
    """sched_switch, sched_wakeup(_new) in the sched_switch plugin's words,
    and the comms it names show in the COMM column of later lines."""
    with kernlib.guard() as tfs:
        d, _ = record_with_kernel(tfs, ["sched:sched_switch", "sched:sched_wakeup",
                                        "sched:sched_wakeup_new", "sched:sched_process_fork"],
                                  ["sh", "-c", "sleep 0.01 & wait"])
    events = kernlib.report(d)
    sw = [e for e in events if e["name"] == "sched_switch"]
    wk = [e for e in events if e["name"] in ("sched_wakeup", "sched_wakeup_new")]
    assert sw and wk
    for e in sw:
        assert re.match(r"^.+:\d+ \[\d+\] (R|[SDTtZXxW](\|[SDTtZXxW])*) ==> .+:\d+ \[\d+\]$",
                        e["text"]), e
    for e in wk:
        assert re.match(r"^.+:\d+ \[\d+\]( success=\d+)? CPU:\d{3}$", e["text"]), e
    new = [e for e in events if e["name"] == "sched_wakeup_new"]
    assert any(re.match(r"^sh:\d+ ", e["text"]) for e in new), new


def plugins_hidden(args):
    """Run ARGS where libtraceevent finds no plugin: an empty tmpfs over
    its plugin directory, in a private mount namespace (the machine's
    mounts stay as they are).  Returns the CompletedProcess, or Skip."""
    libdir = tklib.run(["pkg-config", "--variable=libdir", "libtraceevent"]).stdout.strip()
    plugins = os.path.join(libdir, "traceevent", "plugins")
    if not os.path.isdir(plugins) or not shutil.which("unshare"):
        raise tklib.Skip("no %s, or no unshare" % plugins)
    p = tklib.run(["unshare", "-m", "sh", "-c",
                   'mount -t tmpfs none "$0" || exit 97; ls -A "$0" | grep -q . && exit 97; '
                   'exec "$@"', plugins] + args, check=False, timeout=300)
    if p.returncode == 97:
        raise tklib.Skip("cannot hide %s in a mount namespace: %s" % (plugins, p.stderr.strip()))
    return p


def test_plugin_text_without_plugin_files():
    """The sched_switch plugin's text, and the other mirrored plugins',
    do not depend on libtraceevent's plugin files being installed (they
    are a package of their own, that trace-cmd depends on and tracekit
    did not): report printed the print fmt where they were missing."""
    with kernlib.guard() as tfs:
        d, _ = record_with_kernel(tfs, ["sched:sched_switch", "sched:sched_wakeup",
                                        "sched:sched_wakeup_new", "kmem:kfree",
                                        "kmem:kmalloc", "timer:hrtimer_start"],
                                  ["sh", "-c", "sleep 0.01 & wait"])
    with_plugins = tklib.tracekit("report", d, "--no-header", check=True).stdout
    p = plugins_hidden([tklib.TRACEKIT, "report", d, "--no-header"])
    assert (p.returncode, p.stderr) == (0, ""), p.stderr
    assert p.stdout == with_plugins
    sw = [e for e in kernlib.parse_report(p.stdout) if e.get("name") == "sched_switch"]
    assert sw and all(re.match(r"^.+:\d+ \[\d+\] \S+ ==> .+:\d+ \[\d+\]$", e["text"])
                      for e in sw), sw[:3]


def test_report_options_on_kernel_events():
    n = 6
    with kernlib.guard() as tfs:
        d, _ = record_with_kernel(tfs, SYSCALLS + ["sched:sched_switch"], [GETPPID, str(n)])
    pid = prog_pid(d)
    p = tklib.tracekit("report", d, "--count", "--events", "syscalls:*",
                       "-F", "common_pid == %d" % pid, check=True)
    counts = {l.split()[1]: int(l.split()[0]) for l in p.stdout.splitlines()}
    # exactly n: the runtime makes no getppid() of its own
    assert counts["syscalls:sys_enter_getppid"] == n, counts
    assert counts["syscalls:sys_exit_getppid"] == counts["syscalls:sys_enter_getppid"]
    assert "sched:sched_switch" not in counts
    events = kernlib.report(d, "--events", "syscalls:sys_exit_*", "-F", "common_pid == %d" % pid)
    assert {e["event"] for e in events} == {"syscalls:sys_exit_getppid"}
    assert all(e["tid"] == pid for e in events)
    # --tid, --pid and --comm select kernel events by their thread too
    for opts in (("--tid", str(pid)), ("--pid", str(pid)), ("--comm", "prog-kstat*")):
        p = tklib.tracekit("report", d, "--count", "--events", "syscalls:*", *opts,
                           check=True)
        got = {l.split()[1]: int(l.split()[0]) for l in p.stdout.splitlines()}
        assert got == counts, (opts, got, counts)
    # common_cpu and common_comm, on kernel and user lines alike
    every = kernlib.report(d)
    for cpu in {e["cpu"] for e in every}:
        got = kernlib.report(d, "-F", "common_cpu == %d" % cpu)
        assert got == [e for e in every if e["cpu"] == cpu], cpu
    got = kernlib.report(d, "-F", 'common_comm ~ "prog-kstat*"')
    assert got == [e for e in every if e["comm"].startswith("prog-kstat")]
    assert {e["event"] for e in got} >= {"test:phase", "syscalls:sys_enter_getppid"}
    # a kernel event's own fields: the switches away from the program,
    # and only those (the other events have no prev_pid: left out)
    switches = [e for e in every if e["event"] == "sched:sched_switch"]
    want = [e for e in switches if kernlib.sched_switch(e["text"])[0] == pid]
    assert want and len(want) < len(switches), (len(want), len(switches))
    assert kernlib.report(d, "-F", "prev_pid == %d" % pid) == want
    assert kernlib.report(d, "-F", "prev_pid == %d || next_pid == %d" % (pid, pid)) == \
        [e for e in switches if pid in kernlib.sched_switch(e["text"])[::2]]
    p = tklib.tracekit("report", d, "-F", "nosuchfield == 1", check=False)
    assert p.returncode != 0 and p.stderr.startswith("tracekit: bad filter"), p.stderr


def test_comm_column_same_whatever_is_selected():
    """A pid the trace's saved_cmdlines does not name takes the comm of
    the first sched_switch line that names it (the plugin's way): lines
    skipped by a filter, a window or --events did not count, so the same
    event printed another COMM (tracekit, then sh, then sleep: the pid of
    the command, before and after its execs)."""
    with kernlib.guard() as tfs:
        d, _ = record_with_kernel(tfs, ["sched:sched_switch", "sched:sched_process_exec"],
                                  ["sh", "-c", "sleep 0.02; exec sleep 0.02"])
    open(os.path.join(d, "kernel", "saved_cmdlines"), "w").close()
    every = kernlib.report(d)
    names = {}
    for e in every:
        for comm, pid in re.findall(r"(\S+):(\d+) \[\d+\]", e["text"]):
            names.setdefault(int(pid), set()).add(comm)
    sleeper = [e for e in every if e["event"] == "sched:sched_process_exec" and
               re.search(r"filename=\S*/sleep ", e["text"]) and
               len(names.get(e["tid"], ())) > 1]
    assert sleeper, "no pid of the command is named by two comms: %s" % [
        e["text"] for e in every if e["event"] == "sched:sched_process_exec"]
    for cpu in {e["cpu"] for e in every}:
        assert kernlib.report(d, "-F", "common_cpu == %d" % cpu) == \
            [e for e in every if e["cpu"] == cpu], "-F common_cpu == %d" % cpu
    start = sleeper[-1]["ts"]
    assert kernlib.report(d, "--from", str(start)) == \
        [e for e in every if e["ts"] >= start], "--from"
    assert kernlib.report(d, "--events", "sched:sched_switch") == \
        [e for e in every if e["event"] == "sched:sched_switch"], "--events"


def test_lost_kernel_events_shown():
    with kernlib.guard() as tfs:
        d, _ = record_with_kernel(tfs, SYSCALLS, [GETPPID, "200000"], buffer_kb=16)
    man = open(os.path.join(d, "tracekit.manifest")).read()
    lost = {int(m.group(1)): int(m.group(2)) + int(m.group(3)) for m in re.finditer(
        r"^kcpu cpu=(\d+) .* overrun=(\d+) dropped=(\d+)$", man, re.M)}
    assert sum(lost.values()) > 0, "a 16 KB buffer kept 400000 events?"
    out = tklib.tracekit("report", d, check=True).stdout
    for cpu, n in lost.items():
        assert re.search(r"^# kernel cpu %d: \d+ pages, %d lost" % (cpu, n), out, re.M), out[:800]
    # the page header says events were lost before it, with their count
    # when the kernel had room to store it: trace-cmd's words
    lines = re.findall(r"^CPU:(\d+) \[(?:(\d+) )?EVENTS DROPPED\]$", out, re.M)
    assert lines, "no lost-events line"
    for cpu, m in lines:
        assert lost[int(cpu)] > 0 and (not m or 0 < int(m) <= lost[int(cpu)])


def test_kernel_stack_traces():
    with kernlib.guard() as tfs:
        refused = kernlib.probe_refused(tfs)
        if "stacktrace" in refused:
            raise tklib.Skip(refused["stacktrace"])
        d, _ = record_with_kernel(tfs, ["syscalls:sys_enter_getppid"], [GETPPID, "3"], stack=True)
    syms = set()
    with open(os.path.join(d, "kernel", "kallsyms")) as f:
        for line in f:
            syms.add(line.split()[2])
    stacks = [e for e in kernlib.report(d) if e["name"] == "kernel_stack"]
    assert stacks, "no kernel_stack events"
    for e in stacks:
        assert e["text"] == "<stack trace>" and e.get("stack"), e
        for frame in e["stack"]:
            m = re.match(r"^(\S+)\+0x[0-9a-f]+/0x[0-9a-f]+$", frame)
            assert m and m.group(1) in syms, frame


def _kernel_trace_copy():
    with kernlib.guard() as tfs:
        d, _ = record_with_kernel(tfs, SYSCALLS, [GETPPID, "3"])
    return d


def test_bad_kernel_input():
    d = _kernel_trace_copy()
    raw = next(os.path.join(d, "kernel", f) for f in sorted(os.listdir(os.path.join(d, "kernel")))
               if f.endswith(".raw") and os.path.getsize(os.path.join(d, "kernel", f)))
    good = open(raw, "rb").read()
    # a commit size past the page
    with open(raw, "wb") as f:
        f.write(good[:8] + struct.pack("<Q", 5000) + good[16:])
    p = tklib.tracekit("report", d, check=False)
    assert p.returncode == 1
    assert p.stderr == "tracekit: '%s' offset 0: page commit size past the page\n" % raw, p.stderr
    # a file cut inside a page's data (cut after the data, it is the
    # partial last page a recording ends with, which is good)
    data = struct.unpack("<Q", good[8:16])[0] & 0x3fffffff
    with open(raw, "wb") as f:
        f.write(good[:16 + data - 1])
    p = tklib.tracekit("report", d, check=False)
    assert p.returncode == 1
    assert p.stderr == "tracekit: '%s' offset 0: the file ends inside a page (truncated)\n" % raw
    # garbage pages: an error or nothing, never a crash
    with open(raw, "wb") as f:
        f.write(bytes((i * 131 + 7) & 0xff for i in range(8192)))
    p = tklib.tracekit("report", d, check=False)
    assert p.returncode in (0, 1) and p.stderr.count("\n") <= 1, p.stderr
    with open(raw, "wb") as f:
        f.write(good)
    # no header_page
    os.remove(os.path.join(d, "kernel", "header_page"))
    p = tklib.tracekit("report", d, check=False)
    assert p.returncode == 1
    assert p.stderr == "tracekit: cannot read '%s/kernel/header_page': No such file or directory\n" % d


# -------------------------------------------------------------- stat

def stat_counts(stderr):
    return {m.group(2): int(m.group(1))
            for m in re.finditer(r"^ +(\d+) +(\S+)$", stderr, re.M)}


def test_stat_kernel_event_exact():
    with kernlib.guard():
        p = tklib.tracekit("stat", "-e", "syscalls:sys_enter_getppid", "-e", "syscalls:sys_exit_getpp*",
                           "--", GETPPID, "25", check=True)
    assert stat_counts(p.stderr) == {"syscalls:sys_enter_getppid": 25,
                                     "syscalls:sys_exit_getppid": 25}, p.stderr
    assert re.search(r"^ +\d+\.\d{9} seconds time elapsed$", p.stderr, re.M)
    assert "ppid" in p.stdout  # the command's output is its own


def test_stat_glob_lists_zero_counts():
    with kernlib.guard():
        p = tklib.tracekit("stat", "-e", "syscalls:sys_enter_getpp*", "-e", "syscalls:sys_enter_getpgid",
                           "--", GETPPID, "4", check=True)
    assert stat_counts(p.stderr) == {"syscalls:sys_enter_getppid": 4,
                                     "syscalls:sys_enter_getpgid": 0}, p.stderr


def test_stat_user_events():
    p = tklib.tracekit("stat", "-e", "test:*", "--", BASIC, "-n", "9", "-t", "2", check=True)
    assert stat_counts(p.stderr) == {"test:seq": 18, "test:phase": 2, "test:kinds": 0}, p.stderr
    assert "were lost" not in p.stderr, p.stderr
    assert not [f for f in os.listdir("/tmp") if f.startswith("tracekit-stat.")]
    # a command that fails still has its counts, and stat exits with its
    # status, as for kernel events (a script: record has no ELF file to
    # check the events against)
    script = os.path.join(tklib.tmpdir(), "fails.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n%s -n 7\nexit 3\n" % BASIC)
    os.chmod(script, 0o755)
    p = tklib.tracekit("stat", "-e", "test:*", "--", script, check=False)
    assert p.returncode == 3, p.stderr
    assert p.stderr.startswith("tracekit: '%s' exited with status 3\n" % script), p.stderr
    assert stat_counts(p.stderr) == {"test:seq": 7, "test:phase": 2, "test:kinds": 0}, p.stderr


def test_stat_errors():
    with kernlib.guard():
        p = tklib.tracekit("stat", "-e", "sched:sched_swich", "--", "true", check=False)
        assert (p.returncode, p.stderr) == (
            1, "tracekit: unknown event 'sched:sched_swich' (did you mean 'sched:sched_switch'?)\n")
        # an unknown name after one that matched (the matched names were
        # freed twice: abort, status 134)
        p = tklib.tracekit("stat", "-e", "sched:sched_switch", "-e", "sched:bogus", "--", "true",
                           check=False)
        assert (p.returncode, p.stderr) == (1, "tracekit: unknown event 'sched:bogus'\n")
        # as record and a shell: 127 not there, 126 not executable, with
        # kernel counters, system-wide (-a) and user events alike
        noexec = os.path.join(tklib.tmpdir(), "noexec")
        open(noexec, "w").write("#!/bin/sh\n")
        os.chmod(noexec, 0o644)
        for opts, cmd, rc, why in (
                ([], "/nonexistent/cmd", 127, "No such file or directory"),
                ([], "no-such-command-xyz", 127, "command not found"),
                (["-a"], "no-such-command-xyz", 127, "command not found"),
                ([], noexec, 126, "Permission denied")):
            p = tklib.tracekit("stat", *opts, "-e", "sched:sched_switch", "--", cmd, check=False)
            assert (p.returncode, p.stderr) == (
                rc, "tracekit: cannot run '%s': %s\n" % (cmd, why)), (opts, cmd, p)
    p = tklib.tracekit("stat", "-e", "app:*", "--", "no-such-command-xyz", check=False)
    assert (p.returncode, p.stderr) == (
        127, "tracekit: cannot run 'no-such-command-xyz': command not found\n"), p
    p = tklib.tracekit("stat", "--", "true", check=False)
    assert (p.returncode, p.stderr) == (2, "tracekit: stat needs an event to count (-e SYSTEM:EVENT)\n")
    p = tklib.tracekit("stat", "-e", "sched:sched_switch", check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1


# -------------------------------------------------------------- list

def test_list_kernel():
    with kernlib.guard():
        names = tklib.tracekit("list", "-e", "sched:*", check=True).stdout.split("\n")
        assert "sched:sched_switch" in names and all(n.startswith("sched:") for n in names if n)
        both = tklib.tracekit("list", "-e", BASIC, check=True).stdout.split()
        assert {"test:seq", "test:phase", "test:kinds", "sched:sched_switch"} <= set(both)
        assert both == sorted(both)
        p = tklib.tracekit("list", "-t", check=True)
        tracers = p.stdout.split()
        assert tracers[0] == "nop" and len(p.stdout.splitlines()) == 1, p.stdout
        # what list -t says is what a tracer that is not there is told
        refused = re.fullmatch(r"(?:tracekit: the kernel refuses here: (.*)\n)?", p.stderr)
        assert refused, p.stderr
        e = tklib.tracekit("record", "-o", os.path.join(tklib.tmpdir(), "t"), "-p",
                           "kernel:nosuch", "--", "true", check=False)
        assert e.stderr == "tracekit: tracer 'nosuch' is not available (available: %s%s)\n" % (
            " ".join(tracers), "; refused here: " + refused.group(1) if refused.group(1)
            else ""), (e.stderr, p.stdout, p.stderr)
        # and a tracer list -t offers, record takes
        for t in tracers[1:]:
            r = tklib.tracekit("record", "-q", "-o", os.path.join(tklib.tmpdir(), t), "-p",
                               "kernel:" + t, "--", "true", check=False)
            assert r.returncode == 0, (t, r.stderr)
        opts = tklib.tracekit("list", "-o", check=True).stdout.splitlines()
        assert opts and all(re.match(r"^(no)?[a-z0-9_-]+$", o) for o in opts), opts
        p = tklib.tracekit("list", "-f", check=False)
    if p.returncode == 0:
        raise tklib.Skip("this kernel lets tracing list its functions: no refusal to check")
    m = re.match(r"^tracekit: cannot read '(.*/available_filter_functions)': "
                 r"Operation not permitted \(the kernel does not let tracing list its functions\)\n$",
                 p.stderr)
    assert p.returncode == 1 and m, p.stderr
