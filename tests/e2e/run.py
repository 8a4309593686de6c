#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run tracekit's end-to-end tests: every test_* function of every
tests/e2e/test_*.py (or of the files named on the command line).

Prints one line per test (PASS, FAIL with the reason, SKIP with the
reason) and, last, "N passed, N failed, N skipped".  Exit status 1 if any
test failed.
"""
import importlib.util
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tklib  # noqa: E402


def load(path):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    files = sys.argv[1:] or sorted(
        os.path.join(HERE, f) for f in os.listdir(HERE)
        if f.startswith("test_") and f.endswith(".py"))
    only = os.environ.get("TK_TEST")
    passed = failed = skipped = 0
    for path in files:
        mod = load(path)
        names = [n for n in vars(mod) if n.startswith("test_") and callable(getattr(mod, n))]
        names.sort(key=lambda n: getattr(mod, n).__code__.co_firstlineno)
        for n in names:
            if only and only not in n:
                continue
            label = "%s.%s" % (mod.__name__, n)
            start = time.time()
            try:
                getattr(mod, n)()
            except tklib.Skip as e:
                skipped += 1
                print("SKIP %s: %s" % (label, e), flush=True)
            except Exception:
                failed += 1
                print("FAIL %s (%.1fs)" % (label, time.time() - start), flush=True)
                for line in traceback.format_exc().rstrip().splitlines()[-12:]:
                    print("     " + line, flush=True)
            else:
                passed += 1
                print("PASS %s (%.1fs)" % (label, time.time() - start), flush=True)
            finally:
                tklib.cleanup()
    print("e2e: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
