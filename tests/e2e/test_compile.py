# SPDX-License-Identifier: MIT
"""Compile tests of the public header (tests/compile): definitions the
compiler must refuse, with the diagnostic each file names in its
"expect-COMPILER:" lines, and one that must compile without a warning, in
C and C++, with gcc and clang."""
import os
import re
import shutil

from tklib import BUILD, SRC, Skip, run

DIR = os.path.join(SRC, "tests", "compile")
FLAGS = ["-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", os.path.join(SRC, "include")]


def compiler(name):
    path = shutil.which(name)
    if not path:
        raise Skip("%s is not installed" % name)
    return path


def compile_file(cc, src, *extra):
    return run([compiler(cc)] + FLAGS + list(extra) + [os.path.join(DIR, src)],
               check=False, timeout=120)


def plain(text):
    """Diagnostics with typographic quotes as ASCII ones, and 'char *' as
    g++ writes it, 'char*'."""
    return re.sub("[\u2018\u2019]", "'", text).replace(" *'", "*'")


def test_bad_definitions_do_not_compile():
    bad = sorted(f for f in os.listdir(DIR) if f.endswith(".c") and f != "good.c")
    assert bad == ["mark-format.c", "print-expression.c", "print-unknown-field.c"], bad
    for src in bad:
        text = open(os.path.join(DIR, src)).read()
        for cc, kind, lang in (("gcc", "gcc", ()), ("g++", "gcc", ("-x", "c++")),
                               ("clang", "clang", ())):
            want = re.findall(r"^ \* expect-%s: (.*)$" % kind, text, re.M)
            assert want, "%s has no expect-%s line" % (src, kind)
            p = compile_file(cc, src, *lang)
            assert p.returncode != 0, "%s %s compiled" % (cc, src)
            for w in want:
                assert plain(w) in plain(p.stderr), "%s %s: %r not in:\n%s" % (
                    cc, src, w, p.stderr[:1500])


def test_good_definitions_compile_clean():
    for cc, extra in (("gcc", ("-std=c11",)), ("gcc", ("-std=gnu11",)),
                      ("g++", ("-x", "c++", "-std=c++17")), ("clang", ("-std=c11",))):
        p = compile_file(cc, "good.c", *extra)
        assert p.returncode == 0 and p.stderr == "", "%s %s: %s" % (cc, extra, p.stderr[:1500])


def test_api_doc_example():
    """docs/api.md's probe example is examples/probe-app.c as built, and
    does what the page says: 3 errors counted, none after disconnect,
    without a recorder."""
    doc = open(os.path.join(SRC, "docs", "api.md")).read()
    src = open(os.path.join(SRC, "examples", "probe-app.c")).read()
    body = src.split("\n", 2)[2].rstrip("\n")
    assert "```c\n" + body + "\n```" in doc, "docs/api.md's example differs from probe-app.c"
    p = run([os.path.join(BUILD, "examples", "probe-app")])
    assert p.stdout == "errors 3\n" and "it prints `errors 3`" in doc, p.stdout
