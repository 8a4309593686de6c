# SPDX-License-Identifier: MIT
"""The function tracer for user code: -p function / function_graph on
programs built with patchable entries (gcc, clang), gcc's -mfentry form
and -finstrument-functions, preloaded into programs that do not link
libtracekit (tests/progs/functree.c, funcconc.c)."""
import os
import re
import shutil
import signal
import subprocess
import time

from tklib import BUILD, TRACEKIT, Skip, prog, record, run, summary, tmpdir, tracekit

GRAPH_RE = re.compile(r"^\s*(.+)-(\d+) \[(\d+)\] (\d+\.\d+): "
                      r"(funcgraph_entry|funcgraph_exit|function|user_stack):\s?(.*)$")


def report(d, *opts):
    """Lines of `report --no-header`, parsed: list of dicts (tid, kind,
    text), and for graph lines: depth, name, leaf, open, close, us, mark;
    user stacks carry 'stack' (names without offsets)."""
    out = []
    for line in tracekit("report", d, "--no-header", *opts).stdout.splitlines():
        if line.startswith(" => "):
            out[-1]["stack"].append(line[4:].split("+")[0])
            continue
        m = GRAPH_RE.match(line)
        assert m, "unparsable line %r" % line
        e = dict(tid=int(m.group(2)), kind=m.group(5), text=m.group(6).strip(), stack=[])
        if e["kind"].startswith("funcgraph"):
            dur, body = e["text"].split("|", 1)
            dur = dur.strip()
            e["mark"] = dur[0] if dur and not dur[0].isdigit() else ""
            e["us"] = float(dur.lstrip("+!#*@$ ").split()[0]) if dur else None
            assert body.startswith("  "), line
            body = body[2:]
            e["depth"] = (len(body) - len(body.lstrip(" "))) // 2
            body = body.strip()
            e["leaf"] = body.endswith("();")
            e["open"] = body.endswith("() {")
            e["close"] = body.startswith("}")
            e["name"] = (body.split(" /* ")[1][:-3] if e["close"] else body.split("(")[0])
            e["line"] = "%s%s" % ("  " * e["depth"], body)
        out.append(e)
    return out


def by_thread(lines):
    threads = {}
    for l in lines:
        threads.setdefault(l["tid"], []).append(l)
    return threads


def leaves(name, n, depth):
    return ["%s%s();" % ("  " * depth, name)] * n


def main_transcript(tree_level=False, lib=True):
    """The main thread's graph of `functree tree`, as printed."""
    d = 1 + tree_level
    i = "  " * d
    t = ["main() {"] + (["  tree() {"] if tree_level else [])
    t += [i + "loop_leaf() {"] + leaves("leaf", 100, d + 1) + [i + "} /* loop_leaf */"]
    t += ["%srecurse() {" % ("  " * (d + k)) for k in range(4)]
    t += ["%srecurse();" % ("  " * (d + 4))]
    t += ["%s} /* recurse */" % ("  " * (d + k)) for k in range(3, -1, -1)]
    # deep3 longjmps back into jumper: deep1..3 never return
    t += [i + "jumper() {", i + "  deep1() {", i + "    deep2() {", i + "      deep3() {",
          i + "  after_jump();", i + "} /* jumper */"]
    t += [i + "waiter() {", i + "  on_signal() {", i + "    handler_work();",
          i + "  } /* on_signal */", i + "} /* waiter */"]
    t += [i + "sleeper();"]
    if lib:
        t += [i + "lib_add() {", i + "  lib_inner();", i + "} /* lib_add */"]
    if tree_level:
        t += ["  } /* tree */"]
    return t + ["} /* main */"]


THREAD_TRANSCRIPT = (["thread_main() {", "  worker() {"] + leaves("leaf", 50, 2) +
                     ["  } /* worker */", "} /* thread_main */"])


def check_tree(variant, tree_level=False, lib=True):
    path = prog(variant)
    if not os.path.exists(path):
        raise Skip("%s was not built (no clang?)" % variant)
    d = os.path.join(tmpdir(), "t")
    # the program's own functions (library calls: test_libcalls.py)
    p = record(d, [path, "tree"], "-p", "function_graph", "--no-libcall")
    assert "tree ok" in p.stdout, p.stdout
    rows, total = summary(p.stderr)
    assert total["lost"] == 0, p.stderr
    assert len(rows) == 3, p.stderr
    threads = by_thread(report(d))
    main_tid = rows[0]["pid"]
    got = [l["line"] for l in threads.pop(main_tid)]
    assert got == main_transcript(tree_level, lib), "\n".join(got)
    assert len(threads) == 2, threads.keys()
    for lines in threads.values():
        assert [l["line"] for l in lines] == THREAD_TRANSCRIPT
    sleeper = [l for l in report(d) if l.get("name") == "sleeper"][0]
    # 20 ms asked; allow a loaded machine some slack
    assert 20000 <= sleeper["us"] < 60000 and sleeper["mark"] == "*", sleeper
    return d


def test_graph_gcc_patchable():
    """gcc's five one-byte NOPs, PIE program, a patchable shared library
    (its own stub area); the program does not link libtracekit."""
    ldd = run(["ldd", prog("functree")]).stdout
    assert "libtracekit" not in ldd, ldd
    check_tree("functree")


def test_graph_clang_patchable():
    """clang's one five-byte NOP."""
    check_tree("functree-clang", lib=False)


def test_graph_mfentry():
    """gcc -pg -mfentry -mnop-mcount -mrecord-mcount (non-PIE)."""
    check_tree("functree-mcount")


def test_graph_instrument_functions():
    """-finstrument-functions: the static tree() is a function there."""
    check_tree("functree-cyg", tree_level=True, lib=False)


def test_profile():
    d = check_tree("functree")
    out = tracekit("report", d, "--profile").stdout.splitlines()
    assert out[0].split() == ["Function", "Calls", "Total", "(us)", "Self", "(us)",
                              "Avg", "(us)", "Max", "(us)"], out[0]
    rows = {r.split()[0]: r.split()[1:] for r in out[2:]}
    calls = {k: int(v[0]) for k, v in rows.items()}
    assert calls == {"main": 1, "loop_leaf": 1, "leaf": 200, "recurse": 5, "jumper": 1,
                     "deep1": 1, "deep2": 1, "deep3": 1, "after_jump": 1, "waiter": 1,
                     "on_signal": 1, "handler_work": 1, "sleeper": 1, "lib_add": 1,
                     "lib_inner": 1, "thread_main": 2, "worker": 2}, calls
    assert rows["deep3"][1:] == ["-", "-", "-", "-"]  # never returned
    order = [r.split()[0] for r in out[2:]]
    assert order[:2] == ["main", "sleeper"], order
    total, self_ = float(rows["main"][1]), float(rows["main"][2])
    assert self_ < total


def test_runtime_functions_never_traced():
    """A program with tracekit events built for the function tracer
    (patchable entries, gcc's -pg form, -finstrument-functions):
    function_graph and --profile show its own functions only, never the
    runtime's code generated into it (tk__emit_*, tk__module_ctor/dtor,
    inline helpers), nor that code's calls into libtracekit: of the calls
    through the PLT, only the program's own printf; its events are
    recorded beside."""
    for name in ("functk", "functk-mcount", "functk-cyg"):
        d = os.path.join(tmpdir(), name)
        p = record(d, [prog(name)], "-p", "function_graph", "-e", "ft:*")
        assert p.stdout == "sum 5\n", p.stdout
        rows = tracekit("report", d, "--profile").stdout.splitlines()[2:]
        assert {r.split()[0]: int(r.split()[1]) for r in rows} == \
            {"main": 1, "work": 3, "printf": 1}, (name, rows)
        counts = tracekit("report", d, "--count", "--events", "ft:*").stdout.split()
        assert counts == ["3", "ft:mark", "3", "ft:step", "6", "total"], (name, counts)
        names = {l["name"] for l in report(d, "--events", "ftrace:*") if "name" in l}
        assert names == {"main", "work", "printf"}, (name, names)


def test_function_filters():
    """-l globs select, -n removes; call sites are resolved."""
    d = os.path.join(tmpdir(), "t")
    record(d, [prog("functree"), "tree"], "-p", "function", "-l", "rec*",
           "-l", "deep?", "-n", "deep2")
    assert [l["text"] for l in report(d)] == (
        ["recurse <-main"] + ["recurse <-recurse"] * 4 +
        ["deep1 <-jumper", "deep3 <-deep2"])


def test_graph_g():
    """-g: only the functions named and what they call."""
    d = os.path.join(tmpdir(), "t")
    record(d, [prog("functree"), "tree"], "-p", "function_graph", "-g", "jumper",
           "-g", "waiter", "--no-libcall")
    assert [l["line"] for l in report(d)] == [
        "jumper() {", "  deep1() {", "    deep2() {", "      deep3() {", "  after_jump();",
        "} /* jumper */", "waiter() {", "  on_signal() {", "    handler_work();",
        "  } /* on_signal */", "} /* waiter */"]


def test_graph_depth_and_filters():
    """--max-graph-depth 2 cuts below the second level; -n cuts a function
    (its callees still show)."""
    d = os.path.join(tmpdir(), "t")
    record(d, [prog("functree"), "tree"], "-p", "function_graph",
           "--max-graph-depth", "2", "-n", "lib_add", "--no-libcall")
    lines = report(d)
    main = [l["line"] for l in lines if l["tid"] == lines[0]["tid"]]
    assert main == ["main() {", "  loop_leaf();", "  recurse();", "  jumper();",
                    "  waiter();", "  sleeper();", "  lib_inner();", "} /* main */"], main
    threads = by_thread(l for l in lines if l["tid"] != lines[0]["tid"])
    assert len(threads) == 2
    for t in threads.values():
        assert [l["line"] for l in t] == ["thread_main() {", "  worker();",
                                          "} /* thread_main */"], t


def test_func_stack():
    """--func-stack: the traced callers of each call, innermost first."""
    d = os.path.join(tmpdir(), "t")
    record(d, [prog("functree"), "tree"], "-p", "function_graph", "--func-stack",
           "-l", "recurse", "-l", "main")
    stacks = [l["stack"] for l in report(d) if l["kind"] == "user_stack"]
    assert len(stacks) == 6, stacks
    # the libc caller of main is not traced: its address has no symbol
    assert [s[:-1] for s in stacks] == [
        [], ["main"], ["recurse", "main"], ["recurse", "recurse", "main"],
        ["recurse", "recurse", "recurse", "main"],
        ["recurse", "recurse", "recurse", "recurse", "main"]], stacks


def test_func_stack_instrument_functions():
    """--func-stack on a -finstrument-functions build: the call sites of the
    traced callers (tree() is a function there, untraced here)."""
    d = os.path.join(tmpdir(), "t")
    record(d, [prog("functree-cyg"), "tree"], "-p", "function_graph", "--func-stack",
           "-l", "recurse", "-l", "main")
    stacks = [l["stack"] for l in report(d) if l["kind"] == "user_stack"]
    assert [s[:-1] for s in stacks] == [
        [], ["tree"], ["recurse", "tree"], ["recurse", "recurse", "tree"],
        ["recurse", "recurse", "recurse", "tree"],
        ["recurse", "recurse", "recurse", "recurse", "tree"]], stacks
    # main's caller in libc has no symbol: its address alone, no offset
    assert all(re.fullmatch(r"0x[0-9a-f]+", s[-1]) for s in stacks), stacks


def attach_functk(env, *opts):
    """prog-functk -f started with ENV (added to ours), then record -P -p
    function_graph OPTS, stopped with SIGINT after 0.5 s unless it ends
    first; returns (record's exit status, stderr, trace dir)."""
    d = os.path.join(tmpdir(), "t")
    app = subprocess.Popen([prog("functk"), "-f"], stdout=subprocess.PIPE, text=True,
                           env=dict(os.environ, **env))
    try:
        assert app.stdout.readline() == "ready %d\n" % app.pid
        rec = subprocess.Popen([TRACEKIT, "record", "-q", "-o", d, "-P", str(app.pid),
                                "-p", "function_graph"] + list(opts),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            rec.wait(timeout=0.5 + 1)
        except subprocess.TimeoutExpired:
            rec.send_signal(signal.SIGINT)
        err = rec.communicate(timeout=30)[1]
    finally:
        app.kill()
        app.wait()
    return rec.returncode, err, d, app.pid


def test_attach_gcc_nops_need_the_start():
    """record -P -p on a gcc -fpatchable-function-entry build started
    without TRACEKIT_FUNCTRACE=1: its single-byte NOPs were never made
    patchable, so nothing can be traced: one line says the whole way (the
    variable, LD_PRELOAD, or recording from the start) and record stops
    with nothing left behind, unless --force; started with the variable,
    its functions are traced."""
    rc, err, d, pid = attach_functk({})
    path = os.path.realpath(prog("functk"))
    why = ("process %d: none of the 2 function entries of '%s' can be patched: gcc's "
           "single-byte NOPs become patchable only before the program's threads run; "
           "start it with TRACEKIT_FUNCTRACE=1 in its environment (and "
           "LD_PRELOAD=libtracekit.so.0 if it does not link libtracekit), or record it "
           "from its start: tracekit record -p function_graph -- CMD")
    assert (rc, err) == (1, "tracekit: %s (--force records anyway)\n" % (why % (pid, path))), err
    assert not os.path.exists(d)
    rc, err, d, pid = attach_functk({}, "--force")
    assert (rc, err) == (0, "tracekit: warning: %s\n" % (why % (pid, path))), err
    assert os.path.exists(os.path.join(d, "tracekit.manifest"))
    rc, err, d, pid = attach_functk({"TRACEKIT_FUNCTRACE": "1"})
    assert (rc, err) == (0, ""), err
    names = {l["name"] for l in report(d, "--events", "ftrace:*") if "name" in l}
    # main is in its loop, not entered again; work's calls and its usleep
    assert names == {"work", "usleep"}, names


def check_bytes(variant, expect):
    """Attach (record -P) to the program started with the runtime
    preloaded, stop recording with SIGINT (the program is not signalled)."""
    path = prog(variant)
    if not os.path.exists(path):
        raise Skip("%s was not built" % variant)
    d = os.path.join(tmpdir(), "t")
    env = dict(os.environ, LD_PRELOAD=os.path.join(BUILD, "lib", "libtracekit.so.0"),
               TRACEKIT_FUNCTRACE="1")
    app = subprocess.Popen([path, "bytes"], stdout=subprocess.PIPE, text=True, env=env)
    rec = None
    try:
        # the runtime's control socket appears once it runs
        for _ in range(500):
            if ("@tracekit-%d" % app.pid) in open("/proc/net/unix").read():
                break
            time.sleep(0.01)
        rec = subprocess.Popen([TRACEKIT, "record", "-q", "-o", d, "-p", "function", "-l",
                                "leaf", "-P", str(app.pid)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        first = app.stdout.readline()
        assert first == "patched\n", first
        time.sleep(0.2)  # leaf is called every ms: some calls recorded
        rec.send_signal(signal.SIGINT)
        assert rec.wait(timeout=30) == 0, rec.stderr.read()
        rest = app.stdout.read()
        assert app.wait(timeout=30) == 0
    finally:
        for p in (app, rec):
            if p and p.poll() is None:
                p.kill()
    assert rest == "restored %s\nleaf 42\n" % expect, rest
    got = [l["text"] for l in report(d)]
    assert got[:1] == ["leaf <-main"], got[:3]


def test_code_bytes_restored():
    """Recording stops: each patched entry is a NOP again and the program
    runs on (gcc's single-byte NOPs became one NOP at start-up, which
    lets record -P patch them later)."""
    check_bytes("functree", "0f 1f 44 00 00")
    check_bytes("functree-mcount", "0f 1f 44 00 00")
    check_bytes("functree-clang", "0f 1f 44 00 08")


def test_patch_while_running():
    """10,000 times unpatched and patched again while a thread calls the
    functions: no crash, no wrong result."""
    d = os.path.join(tmpdir(), "t")
    p = record(d, [prog("funcconc"), "10000"], "-p", "function_graph", "-b", "256")
    m = re.search(r"toggles (\d+) calls (\d+) errors (\d+) enable (\d+)", p.stdout)
    assert "killed" not in p.stderr, p.stderr
    assert m and m.group(1) == "10000" and m.group(3) == "0", p.stdout
    # main, work, compute, helper, helper_leaf
    assert int(m.group(2)) > 0 and int(m.group(4)) == 5, p.stdout
    counts = tracekit("report", d, "--count").stdout
    assert "ftrace:funcgraph_entry" in counts, counts


def test_exit_inside_traced_functions():
    """pthread_exit and exit from inside traced functions."""
    d = os.path.join(tmpdir(), "t")
    p = record(d, [prog("functree"), "exit"], "-p", "function_graph", "--no-libcall",
               check=False)
    assert p.stdout == "thread 5\n", p.stdout
    assert "exited with status 3" in p.stderr, p.stderr
    assert p.returncode == 3, p.returncode  # the command's status
    lines = report(d)
    assert [l["line"] for l in lines if l["tid"] != lines[0]["tid"]] == [
        "texit_main() {", "  texit_outer() {", "    texit_inner() {"]
    assert [l["line"] for l in lines if l["tid"] == lines[0]["tid"]] == [
        "main() {", "  exit_outer() {", "    exit_inner() {"]


REGS_OUT = ("d8 68\n"
            "dd 0.1111111111111111 0.47619047619047616\n"
            "ll 54321 87600000\n"
            "va 12345.5\n"
            "calls 2.333333333333333\n") * 3


def test_registers_kept():
    """Arguments in every argument register, on the stack and as varargs,
    results in rax:rdx and xmm0:xmm1 go through the trampolines intact:
    their fast path (main thread, later calls), their full handler (each
    thread's first call; -g roots' exits) and -p function."""
    for variant in ("functree", "functree-clang"):
        path = prog(variant)
        if not os.path.exists(path):
            raise Skip("%s was not built" % variant)
        assert run([path, "regs"]).stdout == REGS_OUT
        for opts in (["-p", "function_graph", "-l", "reg_*"],
                     ["-p", "function_graph", "-g", "reg_calls"],
                     ["-p", "function", "-l", "reg_*"]):
            d = os.path.join(tmpdir(), "t")
            p = record(d, [path, "regs"], *opts)
            assert p.stdout == REGS_OUT, (variant, opts, p.stdout)
            names = [l["name"] if "name" in l else l["text"].split()[0]
                     for l in report(d) if not l.get("close")]
            # under the -g root, its library calls (printf, through the
            # PLT: doubles in xmm registers, varargs count in al) too
            assert sorted(names) == sorted(
                ["reg_calls", "reg_d8", "reg_dd", "reg_ll", "reg_va"] * 3 +
                ["printf"] * 12 * ("-g" in opts)), names


def test_dlopen():
    """An object dlopen'd while recording is patched too."""
    d = os.path.join(tmpdir(), "t")
    lib = os.path.join(BUILD, "tests", "progs", "libfuncplug.so")
    # not in the program's libraries: --force lets -l name it
    p = record(d, [prog("functree"), "dlopen", lib], "-p", "function_graph",
               "-l", "plug_*", "--force")
    assert p.stdout == "plug 10\n"
    assert [l["line"] for l in report(d)] == (
        ["plug_work() {"] + leaves("plug_leaf", 5, 1) + ["} /* plug_work */"])


def test_dlopen_again():
    """An object loaded and unloaded 20 times is traced each time, its
    stub area reused: one executable anonymous mapping is left."""
    d = os.path.join(tmpdir(), "t")
    lib = os.path.join(BUILD, "tests", "progs", "libfuncplug.so")
    p = record(d, [prog("functree"), "dlopen", lib, "20"], "-p", "function_graph",
               "-l", "plug_*", "--force")
    assert p.stdout == "plug 10\n" * 20 + "exec maps 1\n", p.stdout
    assert [l["line"] for l in report(d)] == (
        ["plug_work() {"] + leaves("plug_leaf", 5, 1) + ["} /* plug_work */"]) * 20


def test_symbols_outlive_the_program():
    """The report resolves names from the trace alone."""
    work = tmpdir()
    exe = os.path.join(work, "copy")
    shutil.copy(prog("functree"), exe)
    d = os.path.join(work, "t")
    record(d, [exe, "tree"], "-p", "function", "-l", "recurse",
           env={"LD_LIBRARY_PATH": os.path.dirname(prog("functree"))})
    os.unlink(exe)
    moved = os.path.join(tmpdir(), "moved")
    shutil.move(d, moved)
    assert [l["text"] for l in report(moved)] == (
        ["recurse <-main"] + ["recurse <-recurse"] * 4)


def test_bad_input():
    d = os.path.join(tmpdir(), "t")
    p = record(d, [prog("functree"), "tree"], "-p", "function", "-l", "nosuch*",
               check=False)
    assert p.returncode != 0
    assert p.stderr == ("tracekit: -l 'nosuch*' matches no function of '%s' that can "
                        "be traced (--force records anyway)\n" % prog("functree")), p.stderr
    assert not os.path.exists(d)
    p = record(d, [prog("basic")], "-p", "user:function_graph", check=False)
    assert p.returncode != 0
    assert p.stderr == (
        "tracekit: '%s' is not built for function tracing: compile it with "
        "-fpatchable-function-entry=5 (gcc, clang), -pg -mfentry -mnop-mcount "
        "-mrecord-mcount with -fno-pie -no-pie (gcc) or -finstrument-functions\n"
        % prog("basic")), p.stderr
    assert not os.path.exists(d)
    p = record(d, [prog("functree"), "tree"], "-p", "function", "-g", "main", check=False)
    assert p.returncode != 0 and p.stderr == "tracekit: -g needs -p function_graph\n", p.stderr


def test_unaligned_entries():
    """At -O1 gcc does not align functions: entries at odd addresses are
    traced too (only an entry whose first two bytes straddle a cache line
    cannot be patched safely)."""
    work = tmpdir()
    src = os.path.join(work, "odd.c")
    with open(src, "w") as f:
        f.write("static int __attribute__((noinline)) a(int x) { return x + 1; }\n"
                "static int __attribute__((noinline)) b(int x) { return a(x) * 3; }\n"
                "int main(void) { int s = 0; for (int i = 0; i < 7; i++) s += b(i);"
                " return s == 84 ? 0 : 1; }\n")
    exe = os.path.join(work, "odd")
    run(["gcc", "-O1", "-fpatchable-function-entry=5", src, "-o", exe])
    syms = run(["nm", exe]).stdout.split()
    addr = {syms[i + 2]: int(syms[i], 16) for i in range(0, len(syms) - 2)
            if syms[i + 1] in "tT" and syms[i + 2] in ("a", "b", "main")}
    assert sorted(addr) == ["a", "b", "main"], addr
    if all(v % 2 == 0 for v in addr.values()):
        raise Skip("gcc aligned every function here: %s" % addr)
    d = os.path.join(work, "t")
    record(d, [exe], "-p", "function")
    names = [l["text"].split()[0] for l in report(d)]
    assert names.count("main") == 1 and names.count("b") == 7 and names.count("a") == 7, \
        (addr, names)
    # The thread's buffer (64 MiB here, tens of ms to make) is made before
    # the first traced call's clock is read: main's time is its own.
    record(d, [exe], "-p", "function_graph", "-b", "65536")
    last = report(d)[-1]
    assert last["close"] and last["name"] == "main" and last["us"] < 10000, last
