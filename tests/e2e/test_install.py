# SPDX-License-Identifier: MIT
"""The installed library, headers and pkg-config file build a program, as
`cc app.c $(pkg-config --cflags --libs tracekit)`, shared and static."""
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
