# SPDX-License-Identifier: MIT
"""Open a trace.dat in KernelShark on a virtual X display and take a
screenshot (tests/e2e/test_tracedat.py, scripts/viewing-pictures).

    python3 tests/e2e/kernelshark.py DAT PNG [WIDTHxHEIGHT]

Needs kernelshark, Xvfb, xdotool and ImageMagick's import (Debian
packages kernelshark, xvfb, xdotool, imagemagick: scripts/install-deps).
As root KernelShark first shows a warning dialog: it is closed with
Return. The main window, titled "Kernel Shark (PATH)" once the file is
loaded, is resized and drawn, then the screen is taken.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

TOOLS = ("kernelshark", "Xvfb", "xdotool", "import")


def missing():
    """The first tool that is not installed, or None."""
    for tool in TOOLS:
        if not shutil.which(tool):
            return tool
    return None


def _main_window(env):
    """KernelShark's main window once it has loaded a file: (id, title)."""
    p = subprocess.run(["xdotool", "search", "--name", "^Kernel Shark \\("], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for w in p.stdout.split():
        t = subprocess.run(["xdotool", "getwindowname", w], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True).stdout.strip()
        if t.startswith("Kernel Shark ("):
            return w, t
    return None


def _until(cond, timeout, what, ks):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        if ks.poll() is not None:
            raise RuntimeError("kernelshark exited %s before %s: %s"
                               % (ks.returncode, what, ks.stdout.read()[-500:]))
        time.sleep(0.1)
    raise RuntimeError("kernelshark showed no %s in %d s" % (what, timeout))


def shot(dat, png, size=(1000, 600), timeout=30):
    """Open @dat, take the screen into @png (the window at the top left,
    @size). Returns the main window's title ("Kernel Shark (PATH)") and
    KernelShark's output (stdout and stderr)."""
    home = tempfile.mkdtemp(prefix="tracekit-ks.")
    os.chmod(home, 0o700)
    # Xvfb picks a free display itself and writes its number on a pipe
    # once it listens (-displayfd): two runs side by side cannot take the
    # same number (a display chosen here by its lock file could be taken
    # by another run's Xvfb before ours started, ours then failing while
    # the other answered for it)
    rfd, wfd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(wfd), "-screen", "0",
                             "%dx%dx24" % size, "-nolisten", "tcp"], pass_fds=(wfd,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(wfd)
    ks = None
    try:
        with os.fdopen(rfd) as f:
            number = f.readline().strip()
        if not number.isdigit() or xvfb.poll() is not None:
            raise RuntimeError("Xvfb did not start (display %r)" % number)
        disp = ":" + number
        env = dict(os.environ, DISPLAY=disp, QT_QPA_PLATFORM="xcb", XDG_RUNTIME_DIR=home,
                   HOME=home)
        end = time.monotonic() + timeout
        while subprocess.run(["xdotool", "getdisplaygeometry"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
            if time.monotonic() > end or xvfb.poll() is not None:
                raise RuntimeError("Xvfb did not start on %s" % disp)
            time.sleep(0.1)
        ks = subprocess.Popen(["kernelshark", dat], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)

        pressed = [time.monotonic()]

        def main_window():
            found = _main_window(env)
            # as root, a warning dialog comes first: Return closes it (it
            # may not take keys yet: again each second)
            if not found and os.geteuid() == 0 and time.monotonic() > pressed[0] + 1:
                subprocess.run(["xdotool", "key", "Return"], env=env)
                pressed[0] = time.monotonic()
            return found
        w, title = _until(main_window, timeout, "main window", ks)
        subprocess.run(["xdotool", "windowmove", w, "0", "0", "windowsize", w,
                        str(size[0]), str(size[1])], env=env, check=True)
        time.sleep(1.5)  # the plots are drawn after the resize
        if ks.poll() is not None:
            raise RuntimeError("kernelshark exited %s: %s" % (ks.returncode, ks.stdout.read()))
        subprocess.run(["import", "-display", disp, "-window", "root", png], env=env,
                       check=True)
    finally:
        if ks and ks.poll() is None:
            ks.kill()
            ks.wait()
        xvfb.terminate()
        xvfb.wait()
        shutil.rmtree(home, ignore_errors=True)
    return title, ks.stdout.read()


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: kernelshark.py DAT PNG [WIDTHxHEIGHT]")
    size = tuple(int(v) for v in sys.argv[3].split("x")) if len(sys.argv) == 4 else (1000, 600)
    title, out = shot(sys.argv[1], sys.argv[2], size)
    print(title)
    sys.stdout.write(out)


if __name__ == "__main__":
    main()
