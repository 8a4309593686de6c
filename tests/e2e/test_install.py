# SPDX-License-Identifier: MIT
"""The installed library, headers and pkg-config file build a program, as
`cc app.c $(pkg-config --cflags --libs tracekit)`, shared and static; the
installed tools and demo run from their prefix as they are."""
import os
import glob

from tklib import BUILD, SRC, run, tmpdir, record, report_lines, Skip


def install():
    dest = tmpdir()
    run(["meson", "install", "-C", BUILD, "--destdir", dest, "--quiet"], timeout=300)
    pcs = glob.glob(os.path.join(dest, "**", "tracekit.pc"), recursive=True)
    assert len(pcs) == 1, pcs
    env = {"PKG_CONFIG_PATH": os.path.dirname(pcs[0]), "PKG_CONFIG_SYSROOT_DIR": dest}
    libdir = os.path.dirname(os.path.dirname(pcs[0]))
    return dest, env, libdir


def build_app(env, static):
    out = os.path.join(tmpdir(), "app")
    flags = run(["pkg-config", "--cflags", "--libs"] + (["--static"] if static else []) +
                ["tracekit"], env=env).stdout.split()
    if static:
        # the static library, the rest (urcu-bp, pthread) shared
        flags = [f for f in flags if f != "-ltracekit"]
        libdir = [f[2:] for f in flags if f.startswith("-L")][0]
        flags = [os.path.join(libdir, "libtracekit.a")] + flags
    run(["cc", "-Wall", "-Wextra", "-Werror", os.path.join(SRC, "examples", "readme-app.c"),
         "-o", out] + flags)
    return out


def check_records(app, libdir):
    d = os.path.join(tmpdir(), "t")
    record(d, [app], env={"LD_LIBRARY_PATH": libdir})
    lines = report_lines(d)
    assert [(l["event"], l["text"]) for l in lines] == [
        ("app:request", "id=42 path=/index.html len=1024"),
        ("app:tick", "tick 3 of main")], lines


def test_pkg_config_shared():
    dest, env, libdir = install()
    app = build_app(env, static=False)
    check_records(app, libdir)


def test_pkg_config_static():
    dest, env, libdir = install()
    if not os.path.exists(os.path.join(libdir, "libtracekit.a")):
        raise Skip("no static library installed")
    app = build_app(env, static=True)
    deps = run(["ldd", app], check=False).stdout
    assert "libtracekit" not in deps, deps
    check_records(app, libdir)


def test_installed_programs_find_the_library():
    """tracekit-demo, installed under a prefix the loader does not search,
    runs without LD_LIBRARY_PATH (its rpath is relative to it), and the
    installed tracekit records it."""
    dest, env, libdir = install()
    demo = glob.glob(os.path.join(dest, "**", "bin", "tracekit-demo"), recursive=True)
    assert len(demo) == 1, demo
    demo = demo[0]
    tk = os.path.join(os.path.dirname(demo), "tracekit")
    clean = {"LD_LIBRARY_PATH": ""}
    found = [l.split("=>")[1].split()[0] for l in run(["ldd", demo], env=clean).stdout
             .splitlines() if "libtracekit.so" in l]
    assert len(found) == 1 and os.path.realpath(found[0]).startswith(os.path.realpath(dest)), \
        found  # the installed copy, not one the loader finds elsewhere
    p = run([demo, "5", "1"], env=clean)
    assert p.stderr == "", p.stderr
    d = os.path.join(tmpdir(), "t")
    p = run([tk, "record", "-q", "-o", d, "--", demo, "5", "1"], env=clean)
    assert p.stderr == "", p.stderr
    events = [l["event"] for l in report_lines(d)]
    assert events.count("demo:request_start") == 5, events
