# SPDX-License-Identifier: MIT
"""Hostile and broken input: what a user, a corrupt trace or the traced
program itself can hand tracekit that must end in one clear error line,
or in a readable trace, never in a crash, a hang or a change of global
state.

tests/run runs this file twice: with the normal build, and with the
sanitizer build (build-san, ASan and UBSan; TK_BUILD points there), where
an out-of-bounds read or undefined behaviour fails the test even when
the normal build survives it.
"""
import os
import re
import shutil

import kernlib
import test_cli
import test_kernel_read
import tklib

one_error = test_cli.one_error
tk = test_cli.tk


def test_printk_formats_checked():
    """kernel/printk_formats lines that are not '0xADDR : "TEXT"', or
    whose TEXT is shorter than two bytes, made libtraceevent read outside
    its buffers (ASan); report checks each line before handing the file
    over, and keeps the good ones."""
    d = test_kernel_read._kernel_trace_copy()
    path = os.path.join(d, "kernel", "printk_formats")
    good = tk("report", d, check=True)
    with open(path, "w") as f:
        f.write('0xffffffff8281ba68 : "NQ"\n'
                '0xffffffff8281ba69 : "a"\n'
                '0xffffffff8281ba6a : ""\n'
                '0xffffffff8281ba6b\n'
                'abc:\n'
                '0xffffffff8281ba6c : "\n'
                ': "x"\n'
                '0xffffffff8281ba6d : "end"')
    p = tk("report", d)
    assert (p.returncode, p.stderr) == (0, ""), (p.returncode, p.stderr[-3000:])
    assert p.stdout == good.stdout
