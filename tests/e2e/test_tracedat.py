# SPDX-License-Identifier: MIT
"""trace.dat output (export/tracedat.c): trace-cmd report and KernelShark
read what tracekit writes.

A real recording of prog-kstat-getppid with scheduling and getppid
events is written as trace.dat (prog-tracedat-write, until convert
carries the format); `trace-cmd report` must print the same kernel
events, in the same order per CPU with the same field text, as
`tracekit report`. KernelShark opens it under Xvfb; its screenshot is
kept in the build directory (tests/artifacts/kernelshark-tracedat.png).
"""
import os
import re
import shutil
import subprocess
import time

import kernlib
import tklib

GETPPID = tklib.prog("kstat-getppid")
WRITE = tklib.prog("tracedat-write")
TC_RE = re.compile(r"^\s*(?P<comm>.*)-(?P<tid>\d+)\s+\[(?P<cpu>\d+)\]\s*(?P<ts>\d+(?:\.\d+)?):"
                   r"\s+(?P<name>[^:\s]+):\s+(?P<text>.*)$")


def record_kernel():
    with kernlib.guard():
        d = os.path.join(tklib.tmpdir(), "t")
        tklib.record(d, [GETPPID, "200", "20"], "-e", "test:phase",
                     "-e", "syscalls:sys_enter_getppid", "-e", "syscalls:sys_exit_getppid",
                     "-e", "sched:sched_switch", "-e", "sched:sched_wakeup")
    return d


def write_dat(d):
    dat = os.path.join(tklib.tmpdir(), "trace.dat")
    tklib.run([WRITE, d, dat])
    return dat


def trace_cmd():
    path = shutil.which("trace-cmd")
    if not path:
        raise tklib.Skip("trace-cmd is not installed (scripts/install-deps installs it)")
    return path


def test_trace_cmd_report_same_kernel_events():
    tc = trace_cmd()
    d = record_kernel()
    dat = write_dat(d)
    p = tklib.run([tc, "report", "-i", dat])
    theirs = []
    for line in p.stdout.splitlines():
        if line.startswith("cpus=") or not line.strip():
            continue
        m = TC_RE.match(line)
        assert m, "unparsable trace-cmd line: %r" % line
        theirs.append((int(m.group("cpu")), int(m.group("tid")), m.group("name"),
                       m.group("text").rstrip()))
    ours = [(e["cpu"], e["tid"], e["name"], e["text"])
            for e in kernlib.report(d) if e["lat"] is not None]
    assert len(ours) > 400, len(ours)
    assert len(theirs) == len(ours), (len(theirs), len(ours))
    for cpu in sorted({c for c, _, _, _ in ours}):
        a = [x for x in ours if x[0] == cpu]
        b = [x for x in theirs if x[0] == cpu]
        for i, (x, y) in enumerate(zip(a, b)):
            assert x == y, "CPU %d event %d: tracekit %r, trace-cmd %r" % (cpu, i, x, y)
        assert len(a) == len(b)
    assert len([x for x in theirs if x[2] == "sys_enter_getppid"]) >= 200


def test_no_kernel_part():
    d = os.path.join(tklib.tmpdir(), "u")
    tklib.record(d, [GETPPID, "1"])
    p = tklib.run([WRITE, d, os.path.join(d, "x.dat")], check=False)
    assert p.returncode == 1 and p.stderr == (
        "tracekit: trace '%s' has no kernel events to write as trace.dat\n" % d), p.stderr
    assert not os.listdir(d).count("x.dat")


def test_kernelshark_opens_it():
    for tool in ("kernelshark", "Xvfb", "xdotool", "import"):
        if not shutil.which(tool):
            raise tklib.Skip("%s is not installed (scripts/install-deps installs it)" % tool)
    d = record_kernel()
    dat = write_dat(d)
    art = os.path.join(tklib.BUILD, "tests", "artifacts")
    os.makedirs(art, exist_ok=True)
    shot = os.path.join(art, "kernelshark-tracedat.png")
    disp = ":%d" % (90 + os.getpid() % 100)
    xvfb = subprocess.Popen(["Xvfb", disp, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = dict(os.environ, DISPLAY=disp, QT_QPA_PLATFORM="xcb",
               XDG_RUNTIME_DIR=tklib.tmpdir(), HOME=tklib.tmpdir())
    ks = None
    try:
        time.sleep(1)
        ks = subprocess.Popen(["kernelshark", dat], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        # as root it first shows a warning dialog: close it
        time.sleep(4)
        subprocess.run(["xdotool", "key", "Return"], env=env, check=False)
        time.sleep(4)
        assert ks.poll() is None, "kernelshark exited %s: %s" % (ks.returncode,
                                                                 ks.stdout.read()[-500:])
        names = subprocess.run(["xdotool", "search", "--name", "."], env=env,
                               stdout=subprocess.PIPE, text=True).stdout.split()
        titles = [subprocess.run(["xdotool", "getwindowname", w], env=env,
                                 stdout=subprocess.PIPE, text=True).stdout.strip()
                  for w in names]
        tklib.run(["import", "-display", disp, "-window", "root", shot], env=env)
        assert any("trace.dat" in t or "KernelShark" in t for t in titles), titles
        assert os.path.getsize(shot) > 1000
    finally:
        if ks and ks.poll() is None:
            ks.kill()
            ks.wait()
        xvfb.kill()
        xvfb.wait()
    out = ks.stdout.read() if ks else ""
    assert "rror" not in out, out[-500:]
