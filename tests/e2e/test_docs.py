# SPDX-License-Identifier: MIT
"""Documentation that must stay in step with the code: a kernel-doc
comment on every public function, function-like macro, struct and enum
of include/tracekit/, with every parameter and member named; a manual
page for every command, with the options of its --help, built and
installed."""
import json
import os
import re
import shutil

import tklib

INCLUDE = os.path.join(tklib.SRC, "include", "tracekit")

FUNC_RE = re.compile(r"^[A-Za-z_][\w \*]*?\b(tk_[a-z]\w*)\(([^)]*)\)\s*;", re.M)
MACRO_RE = re.compile(r"^#define (tk_[a-z]\w*|TK_[A-Z]\w*)\(([^)]*)\)", re.M)
AGGR_RE = re.compile(r"^(struct|enum) (tk_[a-z]\w*) \{(.*?)^\};", re.M | re.S)
DOC_RE = re.compile(r"/\*\*\n(.*?)\*/", re.S)


def public_headers():
    for top, _dirs, files in os.walk(INCLUDE):
        for f in sorted(files):
            if f.endswith(".h"):
                yield os.path.join(top, f)


def doc_before(text, pos):
    """The kernel-doc block that ends just before @pos, as lines without
    their " * ", or None."""
    head = text[:pos].rstrip()
    if not head.endswith("*/"):
        return None
    start = head.rfind("/**")
    if start < 0 or "*/" in head[start:-2]:
        return None
    body = head[start + 3:-2]
    return [re.sub(r"^\s*\* ?", "", line) for line in body.strip("\n").split("\n")]


def params_of(arglist):
    names = []
    for a in arglist.split(","):
        a = a.strip()
        if not a or a == "void":
            continue
        if a == "...":
            names.append("...")
            continue
        m = re.search(r"(\w+)\s*$", a)
        names.append(m.group(1))
    return names


def members_of(kind, body):
    if kind == "enum":
        return re.findall(r"^\s*(TK_\w+)", body, re.M)
    names = []
    for line in body.split("\n"):
        code = re.sub(r"/\*.*?\*/", "", line).strip()
        m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*;$", code)
        if m and code != "};":
            names.append(m.group(1))
    return names


def check(errors, path, text, pos, title, what, names):
    doc = doc_before(text, pos)
    where = "%s: %s" % (os.path.relpath(path, tklib.SRC), what)
    if doc is None:
        errors.append(where + ": no kernel-doc comment (/** ... */) before it")
        return
    if not doc[0].startswith(title + " - "):
        errors.append("%s: its comment starts %r, not %r" % (where, doc[0], title + " - ..."))
    for n in names:
        if not any(line.startswith("@%s:" % n) for line in doc):
            errors.append("%s: @%s is not described" % (where, n))


def test_public_api_has_kernel_doc():
    errors, seen = [], set()
    for path in public_headers():
        with open(path) as f:
            text = f.read()
        for m in FUNC_RE.finditer(text):
            seen.add(m.group(1) + "()")
            check(errors, path, text, m.start(), m.group(1) + "()", m.group(1) + "()",
                  params_of(m.group(2)))
        for m in MACRO_RE.finditer(text):
            seen.add(m.group(1) + "()")
            check(errors, path, text, m.start(), m.group(1) + "()", m.group(1) + "()",
                  params_of(m.group(2)))
        for m in AGGR_RE.finditer(text):
            title = "%s %s" % (m.group(1), m.group(2))
            seen.add(title)
            check(errors, path, text, m.start(), title, title, members_of(m.group(1), m.group(3)))
    want = {"tk_enable()", "tk_disable()", "tk_version()", "tk_functrace_enable()",
            "tk_functrace_disable()", "tk_probe_connect_raw()", "tk_probe_disconnect_raw()",
            "TK_EVENT()", "TK_PROTO()", "TK_ARGS()", "TK_FIELDS()", "TK_PRINT()",
            "tk_trace()", "tk_enabled()", "tk_probe_connect()", "tk_probe_disconnect()",
            "tk_mark()", "tk_field_int()", "tk_field_string()", "tk_field_bytes()",
            "struct tk_value", "struct tk_event", "struct tk_field_desc",
            "struct tk_desc_head", "enum tk_field_kind"}
    assert want <= seen, "not found by the patterns: %s" % sorted(want - seen)
    assert not errors, "\n".join(errors)


# ------------------------------------------------------------ man pages

MAN_SRC = os.path.join(tklib.SRC, "docs", "man")
OPT_RE = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def commands():
    """The commands `tracekit --help` lists."""
    out = tklib.tracekit("--help").stdout
    names = re.findall(r"^  (\w+) ", out.split("commands:")[1], re.M)
    assert "record" in names and "report" in names, out
    return names


def help_options(text):
    """The options a --help text offers: those of its usage lines and
    those that start its option lines, indented by two spaces ("-l/-n
    FUNC": both; "--from T, --to T": both), not the deeper indented
    lines that continue a description."""
    opts = set()
    for line in text.splitlines():
        if line.startswith("usage:") or line.startswith("       tracekit"):
            opts |= set(OPT_RE.findall(line))
        elif re.match(r"^  -", line):
            term = re.split(r"\s{2,}", line.strip())[0]
            for t in term.split(", "):
                opts |= set(OPT_RE.findall(t.split()[0]))
    return opts


def page_sections(cmd):
    with open(os.path.join(MAN_SRC, cmd + ".md")) as f:
        text = f.read()
    return dict(re.findall(r"^## (\w[\w ]*)\n(.*?)(?=^## |\Z)", text, re.M | re.S))


def page_options(cmd):
    """The options the page's OPTIONS section describes (its terms)."""
    terms = re.findall(r"^(.+)\n:   ", page_sections(cmd).get("OPTIONS", ""), re.M)
    return {o for t in terms for o in re.findall(r"`(-[^`]+)`", t)}


def test_man_page_per_command():
    pages = {f[:-3] for f in os.listdir(MAN_SRC) if f.endswith(".md")}
    cmds = commands()
    missing = ["tracekit-" + c for c in cmds if "tracekit-" + c not in pages]
    assert not missing, "no page in docs/man for: %s" % ", ".join(missing)
    assert pages == {"tracekit"} | {"tracekit-" + c for c in cmds}, \
        "pages of no command: %s" % sorted(pages - {"tracekit"} - {"tracekit-" + c for c in cmds})
    overview = page_sections("tracekit")["COMMANDS"]
    assert re.findall(r"^`(\w+)`$", overview, re.M) == cmds, overview
    for c in cmds:
        sec = page_sections("tracekit-" + c)
        assert {"NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "SEE ALSO"} <= set(sec), (c, sorted(sec))
        assert sec["NAME"].strip().startswith("tracekit-%s - " % c), sec["NAME"]


def test_man_options_are_the_help_options():
    wrong = []
    for c in commands():
        want = help_options(tklib.tracekit(c, "--help").stdout)
        have = page_options("tracekit-" + c)
        assert want, "no option found in 'tracekit %s --help'" % c
        if want != have:
            wrong.append("tracekit-%s.md: missing %s, not in --help %s" % (
                c, sorted(want - have), sorted(have - want)))
    assert not wrong, "\n".join(wrong)


def test_man_pages_built_and_installed():
    cmds = commands()
    built = os.path.join(tklib.BUILD, "docs", "man")
    groff = shutil.which("groff")
    for page in ["tracekit"] + ["tracekit-" + c for c in cmds]:
        path = os.path.join(built, page + ".1")
        assert os.path.exists(path), path
        if groff:
            p = tklib.run([groff, "-man", "-Tutf8", "-ww", "-z", path])
            assert p.stderr == "", (page, p.stderr)
    plan = json.loads(tklib.run(["meson", "introspect", "--installed", tklib.BUILD]).stdout)
    installed = {os.path.basename(d) for d in plan.values() if "/man1/" in d}
    assert installed == {"tracekit.1"} | {"tracekit-%s.1" % c for c in cmds}, sorted(installed)
    if not groff:
        raise tklib.Skip("groff is not installed: the pages were not rendered")


# -------------------------------------------------------- references

LINK_RE = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")


def markdown_files():
    yield os.path.join(tklib.SRC, "README.md")
    yield os.path.join(tklib.SRC, "CONTRIBUTING.md")
    yield os.path.join(tklib.SRC, "bench", "README.md")
    for d in ("docs", os.path.join("docs", "man")):
        for f in sorted(os.listdir(os.path.join(tklib.SRC, d))):
            if f.endswith(".md"):
                yield os.path.join(tklib.SRC, d, f)


def test_doc_links_resolve():
    """Every relative link of the documentation names a file or folder of
    the tree, and the design notes are linked from the README."""
    dangling = []
    for path in markdown_files():
        with open(path) as f:
            text = f.read()
        for m in LINK_RE.finditer(text):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):
                continue
            if not os.path.exists(os.path.join(os.path.dirname(path), target)):
                dangling.append("%s: %s" % (os.path.relpath(path, tklib.SRC), target))
    assert not dangling, "links to nothing:\n" + "\n".join(dangling)
    with open(os.path.join(tklib.SRC, "README.md")) as f:
        assert "(docs/design-notes.md)" in f.read()
