# SPDX-License-Identifier: MIT
"""Kernel-event fixtures for the reader's tests, made without tracekit's
recorder: a private tracefs instance with trace_clock x86-tsc, the given
events enabled while a function runs, then every CPU's trace_pipe_raw
read into DIR/kernel/cpuN.raw and the files needed to decode them copied
beside, in the layout of docs/format.md ("Kernel events"), with the
manifest's `kernel` and `kcpu` records appended.

The caller holds the machine-wide tracefs lock with tracefs mounted
(kernlib.guard()) and passes its path; the instance is removed on every
path.
"""
import contextlib
import os
import shutil
import time

def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _read_pages(path, out):
    """Copy what trace_pipe_raw holds, without blocking; returns bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    total = 0
    try:
        with open(out, "wb") as f:
            while True:
                try:
                    b = os.read(fd, 4096)
                except BlockingIOError:
                    break
                if not b:
                    break
                f.write(b)
                total += len(b)
    finally:
        os.close(fd)
    return total


def _stats(text):
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        try:
            out[k.strip()] = int(v.split()[0])
        except (ValueError, IndexError):
            pass
    return out


def capture(fs, outdir, events, run, buffer_kb=2048, stack=False):
    """Record kernel EVENTS ("sys:evt", or "sys" for all of a system) into OUTDIR while run() runs.
    OUTDIR must hold a tracekit trace (manifest) already, or None to make
    a kernel-only one.  Returns run()'s result."""
    inst = os.path.join(fs, "instances", "tk-kcapture-%d" % os.getpid())
    os.mkdir(inst)
    try:
        _write(os.path.join(inst, "trace_clock"), "x86-tsc")
        _write(os.path.join(inst, "buffer_size_kb"), str(buffer_kb))
        if stack:
            _write(os.path.join(inst, "options", "stacktrace"), "1")
        for ev in events:
            _write(os.path.join(inst, "events", *ev.split(":"), "enable"), "1")
        result = run()
        _write(os.path.join(inst, "tracing_on"), "0")
        _save(outdir, fs, inst, events, buffer_kb, stack)
    finally:
        with contextlib.suppress(OSError):
            _write(os.path.join(inst, "tracing_on"), "0")
            _write(os.path.join(inst, "events", "enable"), "0")
            if stack:
                _write(os.path.join(inst, "options", "stacktrace"), "0")
        os.rmdir(inst)
    return result


def _save(outdir, fs, inst, events, buffer_kb, stack):
    kdir = os.path.join(outdir, "kernel")
    os.makedirs(os.path.join(kdir, "formats"), exist_ok=True)
    os.makedirs(os.path.join(kdir, "stats"), exist_ok=True)
    for f in ("header_page", "header_event"):
        shutil.copyfile(os.path.join(fs, "events", f), os.path.join(kdir, f))
    systems = set(ev.split(":")[0] for ev in events) | {"ftrace"}
    for sysname in systems:
        sdir = os.path.join(fs, "events", sysname)
        for evt in os.listdir(sdir):
            fmt = os.path.join(sdir, evt, "format")
            if not os.path.exists(fmt):
                continue
            if (sysname != "ftrace" and sysname not in events
                    and "%s:%s" % (sysname, evt) not in events):
                continue
            os.makedirs(os.path.join(kdir, "formats", sysname), exist_ok=True)
            with open(fmt, "rb") as src:
                data = src.read()
            with open(os.path.join(kdir, "formats", sysname, evt), "wb") as dst:
                dst.write(data)
    shutil.copyfile("/proc/kallsyms", os.path.join(kdir, "kallsyms"))
    for f in ("printk_formats", "saved_cmdlines"):
        with open(os.path.join(fs, f), "rb") as src, \
                open(os.path.join(kdir, f), "wb") as dst:
            dst.write(src.read())
    cpus = sorted(int(d[3:]) for d in os.listdir(os.path.join(inst, "per_cpu")))
    records = ["kernel instance=%s clock=x86-tsc page_size=4096 cpus=%d buffer_kb=%d "
               "tracer=nop events=%s pid_filter=%% event_fork=0 stack=%d"
               % (os.path.basename(inst), len(cpus), buffer_kb,
                  ",".join(events), int(stack))]
    for cpu in cpus:
        pdir = os.path.join(inst, "per_cpu", "cpu%d" % cpu)
        raw = "kernel/cpu%d.raw" % cpu
        n = _read_pages(os.path.join(pdir, "trace_pipe_raw"), os.path.join(outdir, raw))
        with open(os.path.join(pdir, "stats")) as f:
            text = f.read()
        with open(os.path.join(kdir, "stats", "cpu%d" % cpu), "w") as f:
            f.write(text)
        st = _stats(text)
        records.append("kcpu cpu=%d file=%s bytes=%d pages=%d entries=%d overrun=%d dropped=%d"
                       % (cpu, raw, n, n // 4096, st.get("entries", 0),
                          st.get("overrun", 0), st.get("dropped events", 0)))
    manifest = os.path.join(outdir, "tracekit.manifest")
    if not os.path.exists(manifest):
        mono = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        real = time.time_ns()
        # a kernel-only fixture: a clock line good enough for display
        with open(manifest, "w") as f:
            f.write("tracekit version=1\nhost name=%s mode=discard\n" % os.uname().nodename)
            f.write("clock source=tsc freq=%d tsc_start=%d mono_start=%d real_start=%d\n"
                    % (_tsc_freq(), _rdtsc_guess(), mono, real))
    with open(manifest, "a") as f:
        for r in records:
            f.write(r + "\n")


def _tsc_freq():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz"):
                return int(float(line.split(":")[1]) * 1e6)
    return 1000000000


def _rdtsc_guess():
    return 0
