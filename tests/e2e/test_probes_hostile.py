# SPDX-License-Identifier: MIT
"""Dynamic probes against hostile files: names and paths that the
kernel's probe syntax would read as something else, a file replaced
while its probe is defined, user stacks through stacks that move, and
saved traces that point at things that are no files.

Every file here is made by the test from a program of tests/progs: a
parameter name rewritten in place in the DWARF, symbolic links and
directories with '#', newlines and spaces in their names.  Every test
that touches tracefs runs under kernlib.guard(): uprobe_events must be
as it was after it.
"""
import os
import re
import subprocess

import kernlib
import test_cli
import tklib

PROG = tklib.prog("uprobed")
DWARFNAME = tklib.prog("dwarfname")
one_error = test_cli.one_error


def tk(*args, **kw):
    kw.setdefault("check", False)
    return tklib.tracekit(*args, **kw)


def need(path):
    if not os.path.exists(path):
        raise tklib.Skip("%s was not built" % os.path.basename(path))


def copy(dst, src):
    with open(src, "rb") as f, open(dst, "wb") as g:
        g.write(f.read())
    os.chmod(dst, 0o755)


def visible(raw, size):
    """RAW (bytes, ASCII but for what is escaped) as tracekit prints it in
    a buffer of SIZE bytes: control bytes and bytes that are no UTF-8 as
    \\xNN, cut before an escape that does not fit."""
    out = ""
    for b in raw:
        c = chr(b) if 0x20 <= b < 0x7f and b != 0x5c else \
            "\\\\" if b == 0x5c else "\\x%02x" % b
        if len(out) + len(c) >= size:
            break
        out += c
    return out


def probe_error(spec, prog, exact=None, contains=()):
    """record -e SPEC -- PROG 1 fails with one line; nothing is left."""
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p = tk("record", "-o", d, "-e", spec, "--", prog, "1")
    line = one_error(p, exact=exact, contains=contains)
    assert not os.path.exists(d), "a failed record left %s behind" % d
    return line


# ------------------------------------------------------- names and paths

def test_dwarf_name_defines_no_second_probe():
    """A parameter whose DWARF name holds '=', newlines and '#' (written
    into the probe as it is, it would end the line and define a probe
    of its own): the field is arg0, a note says why, nothing else is
    defined, and the program computes what it computes untraced."""
    need(DWARFNAME)
    base = tklib.tmpdir()
    prog = os.path.join(base, "d")
    with open(DWARFNAME, "rb") as f:
        data = f.read()
    name = b"Q" * 250
    assert data.count(name) == 1, "the parameter's name is not once in the file"
    g = [l.split()[0] for l in tklib.run(["nm", DWARFNAME]).stdout.splitlines()
         if l.endswith(" T g")][0]
    # what the DWARF reader keeps of a name: 63 bytes
    payload = ("q=%%di:u64\np:tkh/p %s:0x%x\n#" % (prog, int(g, 16))).encode()
    if len(payload) > 63:
        raise tklib.Skip("the temporary directory's path is too long for the payload")
    payload += b"Q" * (len(name) - len(payload))
    with open(prog, "wb") as f:
        f.write(data.replace(name, payload))
    os.chmod(prog, 0o755)
    d = os.path.join(base, "t")
    with kernlib.guard():
        p = tklib.record(d, [prog, "5"], "-F", "-e", "uprobe:%s:g" % prog)
    assert p.stderr.splitlines()[0] == (
        "tracekit: 'uprobe:%s:g': parameter 0 of 'g' is named '%s' in its DWARF, which "
        "is no field name: it is arg0" % (prog, visible(payload[:63], 80))), p.stderr
    assert "sum 20" in p.stdout, p.stdout
    ev = kernlib.report(d)
    assert [e["event"] for e in ev] == ["uprobe:g"] * 5, ev
    args = [dict(kv.split("=", 1) for kv in e["text"].split()[1:]) for e in ev]
    assert [a["arg0"] for a in args] == [str(i) for i in range(5)], args
    assert sorted(args[0]) == ["arg%d" % i for i in range(6)], args[0]


def test_path_the_kernel_would_misread():
    """A program reached through a symbolic link to a directory whose name
    holds '#' (the kernel would take the rest of the line as a comment
    and probe another file, at another offset), a newline, a tab or the
    byte 0xa0 (a space to the kernel): refused in one line naming the
    path as it is and the character, before anything is defined."""
    need(PROG)
    base = tklib.tmpdir()
    for dirname, flaw, what in ((b"v:0x1149#", 8, "'#' (a comment to the kernel)"),
                                (b"a\nb", 1, "a newline"), (b"a\tb", 1, "a tab"),
                                (b"a\xa0b", 1, "byte 0xa0 (a space to the kernel)"),
                                (b"a=b", 1, "'='")):
        real = os.path.join(base.encode(), dirname)
        os.mkdir(real)
        target = os.path.join(real, b"prog")
        copy(target, PROG)
        link = os.path.join(base, "app")
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link.encode())
        probe_error("uprobe:%s:f" % link, os.fsdecode(target), exact=(
            "tracekit: 'uprobe:%s:f': cannot probe '%s': it holds %s at byte %d, which a "
            "probe definition cannot carry" % (link, visible(target, 4096), what,
                                                len(base) + 1 + flaw)))


def test_argument_name_too_long_for_the_kernel():
    """A field name of 33 characters (the kernel takes 32) is refused when
    the probe is read, not by the kernel half way through a recording."""
    need(PROG)
    name = "a" * 33
    probe_error("uprobe:%s:f(%s:u64)" % (PROG, name), PROG, exact=(
        "tracekit: 'uprobe:%s:f(%s:u64)': argument name '%s...' is too long (the kernel "
        "takes at most 32 characters)" % (PROG, name, name[:20])))


# ------------------------------------------------------- a file replaced

def test_file_replaced_while_probe_is_defined():
    """DIR/app (a copy of prog-uprobed) is replaced by a symbolic link to
    another copy right after record has read it (inotify: its first
    close), before the probe is defined: the kernel would look the path
    up again and probe the other file.  record refuses in one line and
    defines nothing.  (When the swap comes after the probe is defined,
    the recording is of DIR/app and the program, the other copy, gives
    no event: that attempt is run again, up to 5 times.)"""
    need(PROG)
    swap = tklib.prog("pathswap")
    need(swap)
    for attempt in range(5):
        base = tklib.tmpdir()
        app, other = os.path.join(base, "app"), os.path.join(base, "other")
        copy(app, PROG)
        copy(other, PROG)
        racer = subprocess.Popen([swap, app, other, "1"], stdout=subprocess.PIPE, text=True)
        try:
            assert racer.stdout.readline() == "ready\n"
            d = os.path.join(base, "t")
            with kernlib.guard():
                p = tk("record", "-q", "-o", d, "-F", "-e", "uprobe:%s:f" % app,
                       "--", other, "5")
        finally:
            racer.kill()
            racer.wait()
        if p.returncode == 0 and not [e for e in kernlib.report(d)
                                      if e["event"] == "uprobe:f"]:
            continue  # swapped too late: the probe was on app, as asked
        # (replaced between the two comparisons: the second one says so)
        one_error(p, pattern=r"^tracekit: 'uprobe:%s:f': '%s' is no longer the file that "
                             r"was read \(it was replaced or removed\)( while its probe was "
                             r"being defined: the probe is removed)?$"
                             % (re.escape(app), re.escape(app)))
        assert not os.path.exists(d)
        return
    raise tklib.Skip("the file was never replaced in time in 5 attempts")


# ------------------------------------------------------- user stacks

USTACK_HOSTILE = tklib.prog("ustack-hostile")


def stacks_of(d):
    """[(i, frames without offsets)] of the stk:hit events of trace D."""
    out = []
    for e in kernlib.report(d):
        if e["name"] == "user_stack":
            out[-1] = (out[-1][0], [re.sub(r"\+0x[0-9a-f]+ ", " ", f) for f in e["stack"]])
        else:
            assert e["event"] == "stk:hit", e
            out.append((int(e["text"].split("=")[1]), None))
    return out


def test_ustack_coroutine_stack_replaced():
    """--ustack: an event on coroutine stack A (1 MiB), A unmapped and a
    64 KiB stack B mapped at its address, an event on B with rbp in the
    old A past B's end: the program runs to its end (it faulted when the
    bounds kept for A were used on B), each event has its stack, and the
    second one ends at the hole."""
    need(USTACK_HOSTILE)
    d = os.path.join(tklib.tmpdir(), "t")
    p = tklib.record(d, [USTACK_HOSTILE, "coro"], "-q", "--ustack")
    assert p.stdout == "survived\n", (p.stdout, p.stderr)
    real = os.path.realpath(USTACK_HOSTILE)
    st = stacks_of(d)
    assert [i for i, _ in st] == [1, 2], st
    assert st[0][1][0] == "on_a (%s)" % real, st
    assert st[1][1] == ["with_bad_fp (%s)" % real], st


FAKE_RANGE = "0000000000000000-7ffffffffff0"


def long_maps_line_file(base):
    """A file whose line in /proc/PID/maps, once mapped, is over 4096 bytes
    long with FAKE_RANGE at byte 4096 (where a reader that drops a full
    buffer would take up the line again), or None where the kernel lays
    the line out otherwise."""
    import mmap
    at = 4096 - 73  # the path starts at column 73 of a 64-bit maps line
    path = base
    while at - len(path) - 1 > 255 - len(FAKE_RANGE):
        path = os.path.join(path, "d" * min(250, at - len(path) - 3))
        os.mkdir(path)
    path = os.path.join(path, "e" * (at - len(path) - 1) + FAKE_RANGE)
    with open(path, "wb") as f:
        f.write(b"\0" * 4096)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ):
        with open("/proc/self/maps") as m:
            line = [l for l in m if FAKE_RANGE in l][0]
    return path if line.index(FAKE_RANGE) == 4096 else None


def test_ustack_long_maps_line():
    """--ustack: an event in a signal handler on an alternate stack, rbp
    in a hole, with a file mapped below the stack whose maps line is
    over 4096 bytes and reads '0000000000000000-7ffffffffff0' from byte
    4096 on: the stack's bounds come from its own line (they came from
    that tail, the whole address space, and the walk faulted)."""
    need(USTACK_HOSTILE)
    base = tklib.tmpdir()
    path = long_maps_line_file(base)
    if not path:
        raise tklib.Skip("this kernel lays out /proc/PID/maps lines otherwise")
    d = os.path.join(base, "t")
    p = tklib.record(d, [USTACK_HOSTILE, "alt", path], "-q", "--ustack")
    assert p.stdout == "survived\n", (p.stdout, p.stderr)
    real = os.path.realpath(USTACK_HOSTILE)
    st = stacks_of(d)
    assert [i for i, _ in st] == [1, 2], st
    assert st[1][1] == ["with_bad_fp (%s)" % real], st


# ------------------------------------------------------- hostile traces

def test_saved_object_is_a_fifo():
    """A trace whose symbols/maps names a FIFO as the program's object,
    and whose symbol file for it is a FIFO too: report and convert open
    neither (they waited forever for a writer), and print the stacks
    with what they can still name."""
    evstack = tklib.prog("evstack")
    need(evstack)
    base = tklib.tmpdir()
    d = os.path.join(base, "t")
    tklib.record(d, [evstack, "fp", "3"], "-q", "--ustack")
    fifo = os.path.join(base, "fifo")
    os.mkfifo(fifo)
    real = os.path.realpath(evstack)
    maps = os.path.join(d, "symbols", "maps")
    with open(maps) as f:
        lines = f.read().splitlines()
    ours = [l for l in lines if l.endswith(" " + real)]
    assert ours, lines
    sym = os.path.join(d, ours[0].split()[5])
    os.unlink(sym)
    os.mkfifo(sym)
    with open(maps, "w") as f:
        f.write("".join((l[:-len(real)] + fifo if l in ours else l) + "\n" for l in lines))
    p = tk("report", d, timeout=30)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("stk:hit") == 3, p.stdout
    assert p.stdout.count("<user stack trace>") == 6, p.stdout
    p = tk("convert", "--to", "folded", "--stacks", d, "-o", "-", timeout=30)
    assert p.returncode == 0, p.stderr
    assert sum(int(l.split()[-1]) for l in p.stdout.splitlines()) == 6, p.stdout


# ------------------------------------------------------- reset

def test_reset_spares_a_recorder_of_another_name():
    """A recorder run as a copy named tkcopy (its comm is not
    'tracekit'), with a probe and an instance: reset leaves both alone
    (it took the recorder for dead, and only EBUSY saved them).  Once the
    recorder is killed with SIGKILL, extract makes a trace of what its
    instance holds, and reset removes both and says so on standard
    output, a line each."""
    need(PROG)
    base = tklib.tmpdir()
    tkcopy = os.path.join(base, "tkcopy")
    copy(tkcopy, tklib.TRACEKIT)
    d = os.path.join(base, "t")
    with kernlib.guard() as fs:
        rec = subprocess.Popen([tkcopy, "record", "-q", "-o", d, "-F",
                                "-e", "uprobe:%s:f" % PROG, "--", PROG, "100000", "5"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            pid = int(rec.stdout.readline().split()[1])
            assert rec.stdout.readline() == "done 0\n"
            p = tk("reset")
            assert (p.returncode, p.stdout, p.stderr) == (
                0, "nothing to reset: no instance 'tracekit' and nothing a killed"
                " recorder left\n", ""), p
            assert os.path.isdir(os.path.join(fs, "instances", "tracekit-%d" % rec.pid))
        finally:
            rec.kill()
            rec.wait()
            os.kill(pid, 9)
            kernlib.wait_gone(pid)
        # what the killed recorder's instance holds, as docs/probes.md says
        x = os.path.join(base, "x")
        tklib.tracekit("extract", "-B", "tracekit-%d" % rec.pid, "-o", x)
        assert [e["event"] for e in kernlib.report(x)][:1] == ["uprobe:f"]
        p = tk("reset")
        assert (p.returncode, p.stderr) == (0, ""), p.stderr
        assert p.stdout == ("removed instance 'tracekit-%d' (recorder %d is gone)\n"
                            "removed probes 'tracekit_%d_*' (recorder %d is gone)\n"
                            % ((rec.pid,) * 4)), p.stdout


def test_reset_without_permission():
    """reset as a user who cannot read tracefs: one line naming the
    directory and the reason (it said there was no instance)."""
    if os.getuid() != 0:
        raise tklib.Skip("needs root to run reset as another user")
    p = tklib.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                   tklib.TRACEKIT, "reset"], check=False, cwd="/")
    fs = kernlib._mounted_path() or kernlib.DEFAULT_MOUNT
    if os.stat(fs).st_mode & 0o005:
        raise tklib.Skip("tracefs at %s is readable by others here" % fs)
    if p.stderr.startswith("setpriv") or p.returncode in (126, 127):
        raise tklib.Skip("nobody cannot run %s: %s" % (tklib.TRACEKIT, p.stderr.strip()))
    one_error(p, rc=1, exact="tracekit: cannot read '%s/instances': Permission denied" % fs)


# ------------------------------------------------------- list

def test_list_escapes_names_from_files():
    """A program whose USDT note names its provider with terminal escape
    sequences (ESC [31m ESC): list prints them escaped, so the terminal
    is left as it was and the listing as many lines as it has."""
    need(PROG)
    base = tklib.tmpdir()
    prog = os.path.join(base, "esc")
    with open(PROG, "rb") as f:
        data = f.read()
    note = b"tkprog\0tick\0"
    assert data.count(note) == 1, "tkprog:tick is not once in %s" % PROG
    with open(prog, "wb") as f:
        f.write(data.replace(note, b"\x1b[31m\x1b\0tick\0"))
    os.chmod(prog, 0o755)
    for args, want in ((("list", prog), "usdt:\\x1b[31m\\x1b:tick(arg0:s32, arg1:u64, "
                                          "arg2:s64)\n\tfile: %s\n\n" % prog),
                       (("list", "--names", prog), "usdt:\\x1b[31m\\x1b:tick\n")):
        p = tk(*args)
        assert p.returncode == 0 and want in p.stdout and "\x1b" not in p.stdout, p.stdout
