# SPDX-License-Identifier: MIT
"""End-to-end tests of dynamic probes on code not built for tracekit:
uprobes and uretprobes (-e 'uprobe:PATH:FUNC'), USDT probes
(-e 'usdt:PATH:PROVIDER:NAME'), their fields by register, DWARF name and
note, and the kernel's uprobe_events left as found on every way out.

The traced program is prog-uprobed (tests/progs/uprobed.c): f(i, "name")
N times, returning 3 * i + 4, and two USDT probes per iteration (one
behind a semaphore).  Every test runs under kernlib.guard(): the global
tracing state, uprobe_events included, must be the same after.
"""
import os
import re
import signal
import subprocess

import kernlib
import test_cli
import tklib

PROG = tklib.prog("uprobed")
NODWARF = tklib.prog("uprobed-nodwarf")
DEBUGLINK = tklib.prog("uprobed-debuglink")
N = 200
one_error = test_cli.one_error

FIELD_RE = re.compile(r'(\w+)=("[^"]*"|\S+)')


def tk(*args, **kw):
    kw.setdefault("check", False)
    return tklib.tracekit(*args, **kw)


def need_prog():
    if not os.path.exists(PROG):
        raise tklib.Skip("prog-uprobed was not built (no <sys/sdt.h>: install systemtap-sdt-dev)")


def fields(text):
    """'(55d0) a=1 s="x"' -> {'a': '1', 's': 'x'}."""
    return {k: v.strip('"') for k, v in FIELD_RE.findall(text)}


def record(d, prog, n, *opts):
    """record -F OPTS -- PROG N under guard(); the report's events of the
    program, parsed; and record's CompletedProcess."""
    with kernlib.guard():
        p = tklib.record(d, [prog, str(n)], "-F", *opts, timeout=120)
    return kernlib.report(d), p


def of(events, name):
    return [fields(e["text"]) for e in events if e["event"] == name]


def uprobe_groups():
    """The groups of uprobe_events that are ours (tracekit_PID_KIND)."""
    with open(os.path.join(kernlib._mounted_path() or kernlib.DEFAULT_MOUNT,
                           "uprobe_events")) as f:
        return sorted({l.split()[0].split(":")[1].split("/")[0] for l in f
                       if l.strip() and "tracekit_" in l})


# ---------------------------------------------------------------- uprobes

def test_uprobe_uretprobe_by_register():
    """N entries with arg0 = i, N returns with retval = 3 i + 4, in call
    order; DWARF adds i and name (a string) by name."""
    need_prog()
    d = os.path.join(tklib.tmpdir(), "t")
    ev, p = record(d, PROG, N, "-e", "uprobe:%s:f" % PROG, "-e", "uretprobe:%s:f" % PROG)
    assert "guarded 0" in p.stdout, p.stdout
    ent, ret = of(ev, "uprobe:f"), of(ev, "uretprobe:f")
    assert len(ent) == N and len(ret) == N, "%d entries, %d returns, want %d each" % (
        len(ent), len(ret), N)
    assert [int(e["arg0"]) for e in ent] == list(range(N))
    assert [int(e["i"]) for e in ent] == list(range(N))
    assert {e["name"] for e in ent} == {"name"}
    assert sorted(ent[0]) == ["arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "i", "name"]
    assert [int(r["retval"]) for r in ret] == [3 * i + 4 for i in range(N)]
    seq = [e["event"] for e in ev if e["event"] in ("uprobe:f", "uretprobe:f")]
    assert seq == ["uprobe:f", "uretprobe:f"] * N, "entries and returns out of order"
    assert {e["comm"] for e in ev} == {"prog-uprobed"}


def test_uprobe_named_arguments():
    """(ARGS): DWARF names take their place and type from DWARF (in the
    file, or through .gnu_debuglink); typed names without DWARF are the
    arguments in order; a uretprobe names its return value."""
    need_prog()
    for prog in (PROG, DEBUGLINK):
        d = os.path.join(tklib.tmpdir(), "t")
        ev, _ = record(d, prog, N, "-e", "uprobe:%s:f(name, i)" % prog,
                       "-e", "uretprobe:%s:f(r)" % prog)
        ent, ret = of(ev, "uprobe:f"), of(ev, "uretprobe:f")
        assert ent == [{"name": "name", "i": str(i)} for i in range(N)], ent[:3]
        assert ret == [{"r": str(3 * i + 4)} for i in range(N)], ret[:3]
    d = os.path.join(tklib.tmpdir(), "t")
    ev, _ = record(d, NODWARF, N, "-e", "uprobe:%s:f(n:s32, s:string)" % NODWARF,
                   "-e", "uretprobe:%s:f(r:s32)" % NODWARF)
    assert of(ev, "uprobe:f") == [{"n": str(i), "s": "name"} for i in range(N)]
    assert of(ev, "uretprobe:f") == [{"r": str(3 * i + 4)} for i in range(N)]


def test_uprobe_dwarf_by_build_id():
    """A stripped program whose DWARF is a file named by its build id, in
    a debug directory (TRACEKIT_DEBUGINFO_PATH, as /usr/lib/debug would
    be): its parameters by name; without the directory, one line says
    there is no DWARF."""
    need_prog()
    base = tklib.tmpdir()
    stripped = os.path.join(base, "stripped")
    tklib.run(["objcopy", "--strip-debug", PROG, stripped])
    bid = re.search(r"Build ID: ([0-9a-f]+)", tklib.run(["readelf", "-n", PROG]).stdout).group(1)
    dbg = os.path.join(base, "dbg", ".build-id", bid[:2])
    os.makedirs(dbg)
    tklib.run(["objcopy", "--only-keep-debug", PROG, os.path.join(dbg, bid[2:] + ".debug")])
    spec = "uprobe:%s:f(name, i)" % stripped
    probe_error(spec, prog=stripped, contains=(
        "no DWARF for argument 'name': '%s' has no DWARF" % stripped,))
    d = os.path.join(base, "t")
    with kernlib.guard():
        tklib.record(d, [stripped, str(N)], "-F", "-e", spec,
                     env=dict(TRACEKIT_DEBUGINFO_PATH=os.path.join(base, "dbg")))
    assert of(kernlib.report(d), "uprobe:f") == [{"name": "name", "i": str(i)}
                                                 for i in range(N)]


def test_uprobe_filter_and_address():
    """-f filters a probe's events in the kernel; PATH:0xADDR and FUNC+OFF
    place a probe where the symbol table says f is."""
    need_prog()
    addr = None
    for line in tklib.run(["nm", PROG]).stdout.splitlines():
        if line.endswith(" T f"):
            addr = int(line.split()[0], 16)
    assert addr, "nm finds no f in %s" % PROG
    d = os.path.join(tklib.tmpdir(), "t")
    ev, _ = record(d, PROG, N, "-e", "uprobe:%s:f" % PROG, "-f", "i >= 150",
                   "-e", "uprobe:%s:0x%x(a:s32)" % (PROG, addr))
    assert [int(e["i"]) for e in of(ev, "uprobe:f")] == list(range(150, N))
    base = os.path.basename(PROG).replace("-", "_")
    assert [int(e["a"]) for e in of(ev, "uprobe:%s_0x%x" % (base, addr))] == list(range(N))


def test_uprobe_path_names():
    """PATH as a command in $PATH and a library as ld.so finds it; a glob
    says how many functions it matched."""
    need_prog()
    d = os.path.join(tklib.tmpdir(), "t")
    env = dict(PATH=os.path.dirname(PROG) + ":" + os.environ.get("PATH", ""))
    with kernlib.guard():
        p = tklib.record(d, [PROG, "5"], "-F", "-e", "uprobe:prog-uprobed:fire_gua*",
                         "-e", "uprobe:libc:getenv", env=env)
    assert "tracekit: 'uprobe:prog-uprobed:fire_gua*' matched 1 function in '%s'" \
        % os.path.realpath(PROG) in p.stderr, p.stderr
    ev = kernlib.report(d)
    assert len(of(ev, "uprobe:fire_guarded")) == 5


def test_only_command_from_its_exec():
    """-F records the command from its exec on: before it, the forked
    child runs the recorder's code (it sets the session's variable with
    setenv, which mallocs), which must not be recorded; prog-uprobed
    itself never calls setenv.  Exactly 0 setenv and N f."""
    need_prog()
    d = os.path.join(tklib.tmpdir(), "t")
    ev, _ = record(d, PROG, N, "-e", "uprobe:libc:setenv", "-e", "uprobe:%s:f" % PROG)
    assert [e["event"] for e in ev] == ["uprobe:f"] * N, [e for e in ev
                                                          if e["event"] != "uprobe:f"]


# ---------------------------------------------------------------- USDT

def test_usdt_typed_arguments():
    """A USDT probe's arguments typed from its note (s32, u64, s64), named
    and typed by (ARGS): name:string reads the string."""
    need_prog()
    d = os.path.join(tklib.tmpdir(), "t")
    ev, _ = record(d, PROG, N, "-e", "usdt:%s:tkprog:tick" % PROG,
                   "-e", "usdt:%s:tkprog:tick(i, name:string, neg)" % PROG)
    plain = of(ev, "usdt:tkprog_tick")
    named = of(ev, "usdt:tkprog_tick_2")
    assert [(int(e["arg0"]), int(e["arg2"])) for e in plain] == [(i, -i) for i in range(N)]
    assert len({e["arg1"] for e in plain}) == 1 and int(plain[0]["arg1"]) > 0
    assert named == [{"i": str(i), "name": "name", "neg": str(-i)} for i in range(N)]


def test_usdt_semaphore():
    """usdt:PROVIDER:NAME found in the program: its semaphore is raised
    through ref_ctr_offset, so the guarded probe fires N times (and 0
    times when nobody traces it)."""
    need_prog()
    p = tklib.run([PROG, str(N)])
    assert "guarded 0" in p.stdout, p.stdout
    d = os.path.join(tklib.tmpdir(), "t")
    ev, p = record(d, PROG, N, "-e", "usdt:tkprog:guarded")
    assert "guarded %d" % N in p.stdout, p.stdout
    assert [int(e["arg0"]) for e in of(ev, "usdt:tkprog_guarded")] == list(range(N))


def test_list_usdt():
    """list PROGRAM: its USDT probes spelt as -e takes them, typed from
    the notes; they are no tracekit events, and stderr says so."""
    need_prog()
    p = tk("list", PROG, check=True)
    assert p.stderr == "tracekit: '%s' defines no tracekit events\n" % PROG, p.stderr
    assert "usdt:tkprog:tick(arg0:s32, arg1:u64, arg2:s64)\n\tfile: %s\n" \
        % os.path.realpath(PROG) in p.stdout, p.stdout
    assert "usdt:tkprog:guarded(arg0:s32)" in p.stdout, p.stdout
    p = tk("list", "--names", PROG, check=True)
    assert p.stdout.split() == ["usdt:tkprog:tick", "usdt:tkprog:guarded"] or \
        p.stdout.split() == ["usdt:tkprog:guarded", "usdt:tkprog:tick"], p.stdout


def test_list_usdt_as_record_finds_them():
    """list names a program as record does (a command in $PATH: it said
    "cannot open 'prog-uprobed'"), says which probes a semaphore guards,
    and list -e lists USDT probes with the events (it said no event
    matches 'usdt:*')."""
    need_prog()
    real = os.path.realpath(PROG)
    env = dict(PATH=os.path.dirname(PROG) + ":" + os.environ.get("PATH", ""))
    p = tk("list", os.path.basename(PROG), env=env, check=True)
    assert "usdt:tkprog:guarded(arg0:s32)\n\tfile: %s\n\tsemaphore: yes (raised while it " \
        "is traced)\n\n" % real in p.stdout, p.stdout
    assert "usdt:tkprog:tick(arg0:s32, arg1:u64, arg2:s64)\n\tfile: %s\n\n" % real \
        in p.stdout, p.stdout
    with kernlib.guard():  # no recording's probes meanwhile
        p = tk("list", "-e", "usdt:*", os.path.basename(PROG), env=env, check=True)
        q = tk("list", "-e", PROG, check=True)
    assert p.stdout == "usdt:tkprog:guarded\nusdt:tkprog:tick\n", p.stdout
    assert "usdt:tkprog:tick\n" in q.stdout and "sched:sched_switch\n" in q.stdout, q.stdout


def test_duplicate_probe_names_said():
    """Two -e of one function get f and f_2: record says which -e became
    f_2 (it did silently)."""
    need_prog()
    d = os.path.join(tklib.tmpdir(), "t")
    spec = "uprobe:%s:f(i)" % PROG
    ev, p = record(d, PROG, 3, "-e", "uprobe:%s:f" % PROG, "-e", spec)
    assert "tracekit: '%s' records as uprobe:f_2 (uprobe:f is another probe's)\n" % spec \
        in p.stderr, p.stderr
    assert of(ev, "uprobe:f_2") == [{"i": str(i)} for i in range(3)]


# ---------------------------------------------------------------- bad input

def probe_error(spec, prog=None, exact=None, contains=()):
    """record -e SPEC -- PROG 1 fails with one line; nothing is left."""
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p = tk("record", "-o", d, "-e", spec, "--", prog or PROG, "1")
    line = one_error(p, exact=exact, contains=contains)
    assert not os.path.exists(d), "a failed record left %s behind" % d
    return line


def test_errors():
    need_prog()
    real = os.path.realpath(PROG)
    probe_error("uprobe:%s:ff" % PROG,
                exact="tracekit: 'uprobe:%s:ff': no function 'ff' in '%s' (did you mean 'f'?)"
                % (PROG, real))
    probe_error("uprobe:%s:f(count)" % NODWARF, contains=(
        "no DWARF for argument 'count'", "give its type (count:u64)"))
    probe_error("uprobe:%s:f(count)" % PROG, exact=(
        "tracekit: 'uprobe:%s:f(count)': 'f' has no parameter 'count' (its parameters: i, "
        "name); give a type to take the argument in that position" % PROG))
    probe_error("uprobe:%s:f(i:int)" % PROG, contains=("unknown type 'int' for 'i'",))
    # messages name what the user knows: the registers argN can name,
    # why a DWARF name is not taken past the entry, the event as -e and
    # report spell it (not its group in uprobe_events)
    for args in ("arg9", "arg6:u64"):
        probe_error("uprobe:%s:f(%s)" % (PROG, args), exact=(
            "tracekit: 'uprobe:%s:f(%s)': there is no '%s': arg0..arg5 are the argument "
            "registers (%%rdi %%rsi %%rdx %%rcx %%r8 %%r9)" % (PROG, args, args.split(":")[0])))
    starts, _ = insn_starts(PROG, "f")
    probe_error("uprobe:%s:f+%d(i)" % (PROG, starts[1]), exact=(
        "tracekit: 'uprobe:%s:f+%d(i)': argument names come from DWARF at a function's entry "
        "only, and this probe is past it; give 'i' a type to read the register of its "
        "position (i:u64)" % (PROG, starts[1])))
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        p = tk("record", "-o", d, "-e", "uprobe:%s:f" % PROG, "-f", "nosuch == 2", "--",
               PROG, "1")
    one_error(p, exact="tracekit: bad filter 'nosuch == 2' for 'uprobe:f' at column 8: "
                       "Field not found")
    probe_error("uprobe:/no/such/prog:f", exact=(
        "tracekit: 'uprobe:/no/such/prog:f': no file '/no/such/prog'"))
    probe_error("usdt:tkprog:nosuch", exact=(
        "tracekit: 'usdt:tkprog:nosuch': no USDT probe tkprog:nosuch in '%s' or the "
        "libraries it loads" % PROG))
    probe_error("uprobe:libc:*", contains=("at most 512 can be probed at once",))
    # long names are quoted whole, the reason after them; past 2048
    # characters the probe is refused as such
    name = "b" * 1500
    probe_error("uprobe:%s:%s" % (PROG, name), exact=(
        "tracekit: 'uprobe:%s:%s': no function '%s' in '%s'" % (PROG, name, name, real)))
    probe_error("uprobe:%s:%s" % (PROG, "c" * 100000), exact=(
        "tracekit: '%s...': a probe of %d characters; at most 2048"
        % (("uprobe:%s:%s" % (PROG, "c" * 100))[:40], 100008 + len(PROG))))


def insn_starts(path, func):
    """Offsets of the instructions of @func in @path, from objdump."""
    out = tklib.run(["objdump", "-d", "--no-show-raw-insn", path]).stdout
    body = out.split("<%s>:\n" % func, 1)[1].split("\n\n", 1)[0]
    addrs = [int(l.split(":")[0], 16) for l in body.splitlines() if l.strip()]
    return [a - addrs[0] for a in addrs], addrs[0]


def test_error_inside_instruction():
    """FUNC+OFF or 0xADDR in the middle of an instruction (which the kernel
    would copy and run from there, changing what the program does), or
    outside the code, is refused naming the instruction; in a stripped
    copy, decoded from the start of .text; on an instruction it records."""
    need_prog()
    starts, base = insn_starts(PROG, "f")
    mid = next(o for o in range(1, starts[-1]) if o not in starts)
    at = max(o for o in starts if o < mid)
    line = probe_error("uprobe:%s:f+%d" % (PROG, mid))
    assert re.fullmatch(r"tracekit: 'uprobe:%s:f\+%d': 0x%x is inside the instruction at "
                        r"f\+0x%x \('[^']+', \d+ bytes\): a probe goes on an instruction's "
                        r"first byte" % (re.escape(PROG), mid, base + mid, at), line), line
    stripped = os.path.join(tklib.tmpdir(), "stripped")
    tklib.run(["strip", "-o", stripped, PROG])
    line = probe_error("uprobe:%s:0x%x" % (stripped, base + mid), prog=stripped)
    assert "0x%x is inside the instruction at .text+0x" % (base + mid) in line, line
    data = int([l.split()[3] for l in tklib.run(["readelf", "-SW", PROG]).stdout.splitlines()
                if " .data " in l][0], 16)
    probe_error("uprobe:%s:0x%x" % (PROG, data), exact=(
        "tracekit: 'uprobe:%s:0x%x': address 0x%x is not in the code of '%s' (no "
        "executable section holds it)" % (PROG, data, data, os.path.realpath(PROG))))
    d = os.path.join(tklib.tmpdir(), "t")
    ev, _ = record(d, stripped, 5, "-e", "uprobe:%s:0x%x(i:s32)" % (stripped, base + at))
    assert len(ev) == 5 and all(e["event"] == "uprobe:stripped_0x%x" % (base + at)
                                for e in ev), ev


def test_error_kernel_refuses():
    """A probe the kernel refuses (a field name it reserves): its own
    reason from error_log, in one line."""
    need_prog()
    line = probe_error("uprobe:%s:f(common_pid:s32)" % PROG,
                       contains=("the kernel refuses probe 'uprobe:%s:f(common_pid:s32)'"
                                 % PROG,))
    assert "argument name" in line, line


# ---------------------------------------------------------------- ways out

SLOW_CALLS = 20


def start_slow(d, *opts):
    """record -F -e uprobe:...f OPTS -- prog-uprobed 100000 5 (5 ms per
    iteration), returned once the probes are in uprobe_events and the
    program has made SLOW_CALLS calls of f; (Popen of record, the
    program's pid)."""
    rec = subprocess.Popen([tklib.TRACEKIT, "record", "-q", "-o", d, "-F",
                            "-e", "uprobe:%s:f" % PROG, "-e", "usdt:tkprog:guarded", *opts,
                            "--", PROG, "100000", "5"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = rec.stdout.readline()
    assert line.startswith("pid "), "the program did not start: %r %r" % (
        line, rec.stderr.read() if rec.poll() is not None else "")
    assert "tracekit_%d_uprobe" % rec.pid in uprobe_groups()
    # SLOW_CALLS calls of f made while recording
    for k in range(SLOW_CALLS):
        line2 = rec.stdout.readline()
        assert line2 == "done %d\n" % k, line2
    return rec, int(line.split()[1])


def test_recorder_signals_remove_probes():
    """SIGINT or SIGTERM to the recorder (passed on to the program), SIGKILL
    to the program: the recording ends with the program's status (128 +
    the signal), its trace is whole and the probes are gone (guard())."""
    need_prog()
    for target, sig in (("recorder", signal.SIGINT), ("recorder", signal.SIGTERM),
                        ("program", signal.SIGKILL)):
        d = os.path.join(tklib.tmpdir(), "t")
        with kernlib.guard():
            rec, pid = start_slow(d)
            os.kill(rec.pid if target == "recorder" else pid, sig)
            out, err = rec.communicate(timeout=30)
            kernlib.wait_gone(pid)
        assert rec.returncode == 128 + sig, "record exited %d after %s to the %s: %s" % (
            rec.returncode, sig.name, target, err)
        assert err == "", err  # -q: the status says how it ended
        n = len(of(kernlib.report(d), "uprobe:f"))
        assert n >= SLOW_CALLS, "%d uprobe:f events, the program made %d calls or more" % (
            n, SLOW_CALLS)


def test_list_recording_probes():
    """list -e names a running recording's probes as -e and report do
    (uprobe:f, usdt:tkprog_guarded), not by their groups in
    uprobe_events."""
    need_prog()
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        rec, pid = start_slow(d)
        try:
            up = tk("list", "-e", "uprobe:*", check=True).stdout
            usdt = tk("list", "-e", "usdt:*", check=True).stdout
            ours = tk("list", "-e", "tracekit_*", check=False)
        finally:
            rec.send_signal(signal.SIGINT)
            rec.communicate(timeout=30)
            kernlib.wait_gone(pid)
    assert up == "uprobe:f\n" and usdt == "usdt:tkprog_guarded\n", (up, usdt)
    assert ours.stdout == "", ours.stdout


def test_recorder_sigkill_then_reset():
    """A recorder killed with SIGKILL leaves its instance and probes,
    enabled; the next recording with probes warns and works; 'tracekit
    reset' removes both (guard() compares with before)."""
    need_prog()
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        rec, pid = start_slow(d)
        rec.kill()
        rec.wait()
        os.kill(pid, signal.SIGKILL)
        kernlib.wait_gone(pid)
        left = uprobe_groups()
        assert "tracekit_%d_uprobe" % rec.pid in left and \
            "tracekit_%d_usdt" % rec.pid in left, left
        # still enabled, they raise the semaphore: guarded code runs
        # untraced; the next recording of a probe says so, and works
        assert "guarded 3" in tklib.run([PROG, "3"]).stdout
        p = tk("record", "-q", "-o", d + "2", "-F", "-e", "usdt:tkprog:guarded", "--", PROG, "7")
        assert p.returncode == 0 and p.stderr == (
            "tracekit: warning: the probes of recorder %d, which was killed, are still "
            "defined (groups 'tracekit_%d_*'): 'tracekit reset' removes them\n"
            % (rec.pid, rec.pid)), p.stderr
        assert len(of(kernlib.report(d + "2"), "usdt:tkprog_guarded")) == 7
        p = tk("reset")
        assert p.returncode == 0, p.stderr
        assert not [g for g in uprobe_groups() if g.startswith("tracekit_%d_" % rec.pid)]
        assert "guarded 0" in tklib.run([PROG, "3"]).stdout


# ---------------------------------------------------------------- user stacks

USTACK = tklib.prog("ustack")


def test_ustack_kernel_events():
    """--ustack: every getppid of main -> chain_a -> chain_b -> chain_c
    (the system call) carries its user stack, named from the maps the
    kernel reported and the program's symbols: exactly those frames."""
    n = 50
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        tklib.record(d, [USTACK, str(n)], "-q", "-F", "--ustack",
                     "-e", "syscalls:sys_enter_getppid")
    ev = kernlib.report(d)
    real = os.path.realpath(USTACK)
    calls = [e for e in ev if e["name"] == "sys_enter_getppid"]
    stacks = [e for e in ev if e["event"] == "ftrace:user_stack"]
    assert len(calls) == n and len(stacks) == n, "%d getppid, %d user stacks, want %d" % (
        len(calls), len(stacks), n)
    for s in stacks:
        frames = [re.sub(r"\+0x[0-9a-f]+ ", " ", f) for f in s["stack"][:4]]
        assert frames == ["%s (%s)" % (fn, real)
                          for fn in ("chain_c", "chain_b", "chain_a", "main")], s["stack"]
    assert len({tuple(s["stack"][:4]) for s in stacks}) == 1, "the offsets differ"
    # folded: one stack, n samples (the C library's frames below main
    # have no symbol: addresses)
    folded = tklib.tracekit("convert", "--to", "folded", "--stacks", d, "-o", "-").stdout
    assert len(folded.splitlines()) == 1, folded
    assert folded.rstrip().endswith(";main;chain_a;chain_b;chain_c %d" % n), folded


def test_ustack_kernel_cut_at_no_frame_pointer():
    """getppid through the C library's syscall(), which keeps no frame
    pointer: the kernel's walk goes on from chain_c's frame and would name
    chain_b as syscall's caller; the stack is cut after syscall instead."""
    n = 20
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        tklib.record(d, [USTACK, str(n), "libc"], "-q", "-F", "--ustack",
                     "-e", "syscalls:sys_enter_getppid")
    stacks = [e["stack"] for e in kernlib.report(d) if e["event"] == "ftrace:user_stack"]
    assert len(stacks) == n, stacks[:3]
    libc = [s for s in stacks if len(s) == 1 and re.fullmatch(
        r"syscall\+0x[0-9a-f]+ \(.*/libc\.so\.6\)", s[0])]
    assert len(libc) == n, stacks[:3]


def test_ustack_needs_events():
    p = tk("record", "-o", os.path.join(tklib.tmpdir(), "t"), "--ustack", "--", USTACK, "1")
    one_error(p, exact="tracekit: --ustack applies to events: '%s' defines no tracekit "
                       "events; give a kernel event (-e SYSTEM:EVENT) or a kernel tracer "
                       "(-p)" % USTACK)


EVSTACK = tklib.prog("evstack")


def event_stacks(d):
    """(event, frames without offsets) of each user event of the trace, its
    stack the user_stack line after it."""
    out = []
    for e in kernlib.report(d):
        if e["name"] == "user_stack":
            assert out and out[-1][1] is None, "a stack after no event: %r" % e
            out[-1] = (out[-1][0], [re.sub(r"\+0x[0-9a-f]+ ", " ", f) for f in e["stack"]])
        else:
            out.append((e["event"], None))
    return out


def test_ustack_user_events():
    """--ustack with user events: after each stk:hit and stk:mark (a
    marker), its user stack from the runtime's frame-pointer walk,
    exactly main -> ev_a -> ev_b -> ev_c and the C library's caller of
    main, where the walk stops being sure; folded, one stack."""
    n = 50
    d = os.path.join(tklib.tmpdir(), "t")
    tklib.record(d, [EVSTACK, "fp", str(n)], "-q", "--ustack")
    real = os.path.realpath(EVSTACK)
    ev = event_stacks(d)
    assert [e for e, _ in ev] == ["stk:hit", "stk:mark"] * n, ev[:4]
    for _, frames in ev:
        assert frames[:4] == ["%s (%s)" % (f, real) for f in ("ev_c", "ev_b", "ev_a", "main")] \
            and len(frames) == 5 and frames[4].endswith("/libc.so.6)"), frames
    folded = tklib.tracekit("convert", "--to", "folded", "--stacks", d, "-o", "-").stdout
    assert len(folded.splitlines()) == 1, folded
    assert folded.rstrip().endswith(";main;ev_a;ev_b;ev_c %d" % (2 * n)), folded
    # counts per stack, as report --stacks prints them
    assert tklib.tracekit("report", d, "--stacks").stdout == folded


def test_probes_merged_with_user_events():
    """A uprobe on ev_c and the tracekit events ev_c fires are on one
    clock: each call reads uprobe:ev_c, then stk:hit and stk:mark."""
    n = 30
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        tklib.record(d, [EVSTACK, "fp", str(n)], "-q", "-F", "-e", "stk:*",
                     "-e", "uprobe:%s:ev_c(i:s32)" % EVSTACK)
    ev = [(e["event"], e["text"]) for e in kernlib.report(d)]
    want = []
    for i in range(n):
        want += [("uprobe:ev_c", "i=%d" % i), ("stk:hit", "i=%d" % i), ("stk:mark", "i=%d" % i)]
    assert [(e, re.sub(r"^\(\w+\) ", "", t)) for e, t in ev] == want, ev[:6]


def test_ustack_user_events_no_frame_pointer():
    """main -> outer -> nofp_mid (no frame pointer) -> inner -> stk:hit:
    the walk through nofp_mid goes on from outer's frame, so its next
    address is main, not outer; the stack is cut after nofp_mid, never
    wrong, in report and in folded stacks."""
    n = 20
    d = os.path.join(tklib.tmpdir(), "t")
    tklib.record(d, [EVSTACK, "nofp", str(n)], "-q", "--ustack")
    real = os.path.realpath(EVSTACK)
    ev = event_stacks(d)
    assert ev == [("stk:hit", ["inner (%s)" % real, "nofp_mid (%s)" % real])] * n, ev[:2]
    folded = tklib.tracekit("convert", "--to", "folded", "--stacks", d, "-o", "-").stdout
    assert folded == "nofp_mid;inner %d\n" % n, folded


def test_ustack_probe_at_function_entry_named():
    """--ustack with a uprobe on chain_c's first byte: the kernel's stack
    starts at that pc, which folded stacks name chain_c, as report does
    (chain_c+0x0), not by the byte before it (another function, or a
    bare address); and rbp is still chain_b's there, so the kernel's walk
    skips chain_b: the probe reads the return address from the stack
    (__caller) and the readers put it back, main -> chain_a -> chain_b ->
    chain_c exactly (the stack was chain_c alone)."""
    n = 7
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        tklib.record(d, [USTACK, str(n)], "-q", "-F", "--ustack",
                     "-e", "uprobe:%s:chain_c" % USTACK)
    real = os.path.realpath(USTACK)
    ev = kernlib.report(d)
    assert [e["event"] for e in ev] == ["uprobe:chain_c", "ftrace:user_stack"] * n, ev[:2]
    assert "__caller=0x" in ev[0]["text"], ev[0]
    for e in ev[1::2]:
        frames = [re.sub(r"\+0x[0-9a-f]+ ", " ", f) for f in e["stack"][:4]]
        assert e["stack"][0].startswith("chain_c+0x0 ") and frames == [
            "%s (%s)" % (f, real) for f in ("chain_c", "chain_b", "chain_a", "main")], e["stack"]
    for args in (("report", d, "--stacks"), ("convert", "--to", "folded", "--stacks", d,
                                              "-o", "-")):
        out = tklib.tracekit(*args).stdout
        assert len(out.splitlines()) == 1 and \
            out.endswith(";main;chain_a;chain_b;chain_c %d\n" % n), (args, out)
    # without --ustack, no such field
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        tklib.record(d, [USTACK, "1"], "-q", "-F", "-e", "uprobe:%s:chain_c" % USTACK)
    assert "__caller" not in kernlib.report(d)[0]["text"]


def test_ustack_usdt_sites_alike():
    """--ustack with USDT probes: every site of an event has the same
    fields, __caller among them (the kernel refuses sites that differ),
    and each event its stack."""
    need_prog()
    d = os.path.join(tklib.tmpdir(), "t")
    ev, _ = record(d, PROG, 5, "--ustack", "-e", "usdt:%s:tkprog:*" % PROG)
    ticks = [e for e in ev if e["event"] == "usdt:tkprog_tick"]
    assert len(ticks) == 5 and all("__caller=" in e["text"] for e in ticks), ticks[:1]
    assert len([e for e in ev if e["event"] == "ftrace:user_stack"]) == 10, len(ev)


def test_ustack_follows_selected_events():
    """--events keeps each stack with the event it follows: report
    --events 'syscalls:*' prints every getppid with its user stack, not
    the getppid alone, and convert --to folded --events 'syscalls:*'
    folds those stacks (it printed nothing, with status 0); an event left
    out takes its stack with it.  A folded output with no stack says
    why it is empty."""
    n = 10
    d = os.path.join(tklib.tmpdir(), "t")
    with kernlib.guard():
        tklib.record(d, [USTACK, str(n)], "-q", "-F", "--ustack",
                     "-e", "syscalls:sys_enter_getppid", "-e", "uprobe:%s:chain_c" % USTACK)
    ev = kernlib.report(d, "--events", "syscalls:*")
    assert [e["event"] for e in ev] == ["syscalls:sys_enter_getppid", "ftrace:user_stack"] * n, \
        [e["event"] for e in ev][:6]
    assert all(e["stack"][0].startswith("chain_c+") for e in ev[1::2]), ev[:2]
    p = tklib.tracekit("convert", "--to", "folded", "--stacks", "--events", "syscalls:*",
                       d, "-o", "-")
    assert p.stdout.endswith(";main;chain_a;chain_b;chain_c %d\n" % n) and \
        len(p.stdout.splitlines()) == 1 and p.stderr == "", (p.stdout, p.stderr)
    ev = kernlib.report(d, "--events", "uprobe:*")
    assert [e["event"] for e in ev] == ["uprobe:chain_c", "ftrace:user_stack"] * n, ev[:4]
    plain = os.path.join(tklib.tmpdir(), "plain")
    with kernlib.guard():
        tklib.record(plain, [USTACK, "1"], "-q", "-F", "-e", "syscalls:sys_enter_getppid")
    p = tklib.tracekit("convert", "--to", "folded", "--stacks", plain, "-o", "-")
    assert p.stdout == "" and p.stderr == (
        "tracekit: warning: nothing to fold: no stack was recorded with the events read "
        "(record --ustack, --stack or --func-stack)\n"), p.stderr


def test_path_name_past_a_wrapper_script():
    """A command found in $PATH as a wrapper script first (a version
    manager's shim) and as the program in a later directory: the probe's
    PATH by name is the program (it was the script, refused as 'not an
    x86-64 program or library'), and the script's exec of it records; a
    note says that a script may run another program."""
    need_prog()
    base = tklib.tmpdir()
    shims, bins = os.path.join(base, "shims"), os.path.join(base, "bin")
    os.mkdir(shims)
    os.mkdir(bins)
    real = os.path.join(bins, "tkprog")
    with open(PROG, "rb") as f, open(real, "wb") as g:
        g.write(f.read())
    os.chmod(real, 0o755)
    with open(os.path.join(shims, "tkprog"), "w") as f:
        f.write("#!/bin/sh\nexec %s \"$@\"\n" % real)
    os.chmod(os.path.join(shims, "tkprog"), 0o755)
    d = os.path.join(base, "t")
    env = dict(PATH=shims + ":" + bins + ":" + os.environ.get("PATH", ""))
    with kernlib.guard():
        p = tklib.record(d, ["tkprog", "5"], "-F", "-e", "uprobe:tkprog:f(i)", env=env)
    assert of(kernlib.report(d), "uprobe:f") == [{"i": str(i)} for i in range(5)]
    # the script could run another program: said
    assert p.stderr.startswith(
        "tracekit: 'uprobe:tkprog:f(i)': '%s' is a script: the probe is on '%s', the first "
        "program 'tkprog' in $PATH, which may not be the one the script runs (give that "
        "one's path)\n" % (os.path.join(shims, "tkprog"), real)), p.stderr
