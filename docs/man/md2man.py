#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""md2man.py SOURCE.md OUTPUT.1 VERSION: a manual page in roff (man(7))
from the small markdown the pages in docs/man are written in:

    # tracekit-record(1)            the title: name and section
    ## NAME                         a section
    text                            a paragraph (blank lines end it)
    `-o` *DIR*                      a term; the lines after it that start
    :   what it does                with ":   " describe it
    - item                          a list item
    ```                             an example, shown as written
    `code`, *word*                  bold, italic (\\* is an asterisk)

Nothing else is markdown here: other characters are printed as they are.
"""
import re
import sys


def inline(text):
    """Escape for roff, then `code` in bold and *word* in italic; \\* is
    an asterisk."""
    text = text.replace("\\*", "\0")
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = re.sub(r"`([^`]+)`", r"\\fB\1\\fR", text)
    text = re.sub(r"\*([^*\s][^*]*)\*", r"\\fI\1\\fR", text)
    return text.replace("\0", "*")


def line_out(text):
    """A text line: roff takes a leading . or ' as a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


def convert(src, version):
    out = []
    lines = src.split("\n")
    m = re.match(r"^# ([\w-]+)\((\d)\)$", lines[0])
    if not m:
        raise SystemExit("md2man: the first line must be '# NAME(SECTION)'")
    name, section = m.groups()
    out.append('.TH "%s" "%s" "" "tracekit %s" "tracekit manual"' % (name.upper(), section, version))
    i, para = 1, False
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            out.append(".PP")
            out.append(".nf")
            out.append(".RS 4")
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                out.append(line_out(lines[i].replace("\\", "\\e").replace("-", "\\-")))
                i += 1
            out.append(".RE")
            out.append(".fi")
            para = False
        elif line.startswith("## "):
            out.append(".SH " + line[3:].strip())
            para = False
        elif not line.strip():
            para = False
        elif i + 1 < len(lines) and lines[i + 1].startswith(":   "):
            out.append(".TP")
            out.append(line_out(inline(line.strip())))
            i += 1
            while i < len(lines) and (lines[i].startswith(":   ") or lines[i].startswith("    ")):
                out.append(line_out(inline(lines[i][4:].strip())))
                i += 1
            para = False
            continue
        elif line.startswith("- "):
            out.append(".IP \\(bu 2")
            out.append(line_out(inline(line[2:].strip())))
            para = True
        else:
            if not para:
                out.append(".PP")
                para = True
            out.append(line_out(inline(line.strip())))
        i += 1
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 4:
        raise SystemExit("usage: md2man.py SOURCE.md OUTPUT.1 VERSION")
    with open(sys.argv[1]) as f:
        text = convert(f.read(), sys.argv[3])
    with open(sys.argv[2], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
