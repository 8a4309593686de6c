# SPDX-License-Identifier: MIT
"""Static keys: call sites are patched to a NOP while their event is off and
to a jump while it is on, safely while other threads run them."""
from tklib import prog, run, Skip
import platform


def need_x86():
    if platform.machine() != "x86_64":
        raise Skip("static keys are patched on x86-64 only (%s here)" % platform.machine())


def test_sites_patched_on_and_off():
    need_x86()
    out = run([prog("keys"), "bytes"]).stdout.splitlines()
    # three sites: the spinning thread's and two in main
    assert out == ["off: nop nop nop", "probe: on on on", "again: nop nop nop",
                   "calls 1"], out


def test_toggle_while_running():
    """10,000 probe connects and disconnects (60,000 patches of the three
    sites, each with its core-serializing membarriers) while two threads
    run the sites.  Each costs ~1.2 ms on this machine's VMs, all of it
    in membarrier: 100,000 took 125-214 s, 30,000 took 40 s of the
    suite's 10 minutes, 10,000 take ~13."""
    need_x86()
    out = run([prog("keys"), "stress", "10000"], timeout=240).stdout.splitlines()
    calls = int(out[0].split()[1])
    assert out[0].startswith("calls ") and calls > 0, out
    # once disconnected for good, no thread may reach the probe again
    assert out[1] == "after 0", out
    assert out[2] == "end: nop nop nop", out


def test_branch_fallback():
    out = run([prog("keys"), "bytes"], env={"TRACEKIT_STATIC_KEYS": "0"}).stdout.splitlines()
    # as compiled: each site jumps to the test of the enabled byte, and the
    # probe still sees exactly the one hit made while it was connected
    assert out == ["off: test test test", "probe: test test test",
                   "again: test test test", "calls 1"], out


def test_mode_reported():
    import os
    from tklib import record, tmpdir
    d = os.path.join(tmpdir(), "t")
    p = record(d, [prog("basic"), "-n", "10"])
    assert "tracekit: prog-basic-" in p.stderr and ": call sites are static keys" in p.stderr, p.stderr
    p = record(d, [prog("basic"), "-n", "10"], env={"TRACEKIT_STATIC_KEYS": "0"})
    assert ": call sites test a byte (no static keys: turned off by TRACEKIT_STATIC_KEYS=0)" in p.stderr, p.stderr
