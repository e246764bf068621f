"""A crash of the ptxc process in native code is a reported internal error
naming the kernel and launch it ran (backends/llvm/crash.py), never a silent
loss: for ``ptxc opt`` and ``ptxc profile``, the Python ``ptxc.launch``, and
``ptxc run``, whose application is told by the fatal reply it waits for
(exit status 89, protocol.h PTXC_EXIT_CRASHED) instead of "lost the
connection to the ptxc process".

The crash comes from the documented test-only trigger: with
``PTXC_TEST_CRASH=SIGSEGV`` (or SIGBUS, SIGILL, SIGFPE, SIGABRT) every
executor thread raises that signal before it runs CTAs (SIGSEGV is a real
read of address 16). Expected: ptxc's exit status 70 (an internal error,
docs/user-guide.md) and exactly one line naming the signal and the kernel.
Also: a stack the system refuses to reserve is a one-line error naming the
kernel (stacks.py).
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from runtime_apps import AppBuilder

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BRANCHY = os.path.join(ROOT, "examples", "branchy.ptx")
LAUNCH = ["--kernel", "vecadd_branchy", "--grid", "4", "--block", "128",
          "--arg", "0=arange:f32:512", "--arg", "1=random:f32:512:2",
          "--arg", "2=zeros:f32:512", "--arg", "3=500"]


def run(cmd, signal_name, **kw):
    env = {**os.environ, "PTXC_TEST_CRASH": signal_name}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env, **kw)


def crash_lines(stderr: str) -> list:
    return [ln for ln in stderr.splitlines() if "the ptxc process crashed" in ln]


@pytest.mark.parametrize("sig", ["SIGSEGV", "SIGABRT", "SIGFPE", "SIGBUS", "SIGILL"])
def test_ptxc_opt_crash_is_reported(sig):
    p = run([sys.executable, "-m", "ptxc.cli", "opt", "--pass=count", *LAUNCH, BRANCHY], sig)
    assert p.returncode == 70, p.stderr
    lines = crash_lines(p.stderr)
    assert lines == [f"ptxc: internal error: the ptxc process crashed ({sig}) while running kernel "
                     f"vecadd_branchy (grid (4, 1, 1), block (128, 1, 1)); ptxc exits with status "
                     f"70 (please report this bug)"], p.stderr
    assert "Traceback" not in p.stderr and "Fatal Python error" not in p.stderr


def test_ptxc_profile_crash_is_reported():
    p = run([sys.executable, "-m", "ptxc.cli", "profile", "--zero-fill",
             "--arg", "vecadd_branchy:param_3=500", "--arg", "collatz_steps:param_2=4", BRANCHY],
            "SIGSEGV")
    assert p.returncode == 70, p.stderr
    assert len(crash_lines(p.stderr)) == 1, p.stderr
    assert "kernel vecadd_branchy" in p.stderr


def test_python_launch_crash_is_reported():
    code = ("import numpy as np, ptxc\n"
            f"m = ptxc.load({BRANCHY!r})\n"
            "a = np.arange(512, dtype=np.float32); c = np.zeros(512, np.float32)\n"
            "ptxc.launch(m, 'vecadd_branchy', grid=4, block=128, args=[a, a, c, 500], mode='full')\n"
            "print('not reached')\n")
    p = run([sys.executable, "-c", code], "SIGSEGV")
    assert p.returncode == 70, p.stderr
    assert "not reached" not in p.stdout
    assert crash_lines(p.stderr) == [
        "ptxc: internal error: the ptxc process crashed (SIGSEGV) while running kernel "
        "vecadd_branchy (grid (4, 1, 1), block (128, 1, 1)); ptxc exits with status 70 "
        "(please report this bug)"], p.stderr


def test_crash_outside_a_launch_is_the_default_action():
    """The handler is armed only while a launch runs: a fault elsewhere after
    one has run keeps the default action (killed by SIGSEGV)."""
    code = ("import ctypes, numpy as np, ptxc\n"
            f"m = ptxc.load({BRANCHY!r})\n"
            "a = np.arange(512, dtype=np.float32); c = np.zeros(512, np.float32)\n"
            "ptxc.launch(m, 'vecadd_branchy', grid=4, block=128, args=[a, a, c, 500], mode='full')\n"
            "ctypes.string_at(16, 1)\n")
    p = run([sys.executable, "-c", code], "")
    assert p.returncode == -11, p.stderr
    assert crash_lines(p.stderr) == []


def test_ptxc_run_tells_the_application(tmp_path):
    """The application waits for its launch's reply: it gets the fatal reply
    (exit status 89) and prints nothing about a lost connection; ptxc prints
    the one line (launch 1 of the application) and exits with 70."""
    app = AppBuilder(tmp_path).build("crash_app")
    script = tmp_path / "wrap.sh"
    script.write_text(f'#!/bin/sh\n"{app}"\necho "app_status=$?"\n')
    script.chmod(0o755)
    p = run([sys.executable, "-m", "ptxc.cli", "run", "--mode", "full", "--", str(script)],
            "SIGSEGV")
    assert p.returncode == 70, p.stderr
    assert "app_status=89" in p.stdout, p.stdout
    assert "crash_app:" not in p.stdout
    assert "lost the connection" not in p.stderr, p.stderr
    assert crash_lines(p.stderr) == [
        "ptxc: internal error: the ptxc process crashed (SIGSEGV) while running launch 1 of the "
        "application: kernel scale(float const*, float*, int) (grid (2, 1, 1), block (128, 1, 1)); "
        "ptxc exits with status 70 (please report this bug)"], p.stderr


def test_ptxc_run_waits_for_its_application(tmp_path):
    """The application is ptxc's own child: ptxc waits for it to exit (it
    read the fatal reply) before it exits itself, so nothing the
    application writes comes after ptxc's status."""
    app = AppBuilder(tmp_path).build("crash_app")
    p = run([sys.executable, "-m", "ptxc.cli", "run", "--", app], "SIGSEGV")
    assert p.returncode == 70, p.stderr
    assert "lost the connection" not in p.stderr, p.stderr
    assert len(crash_lines(p.stderr)) == 1, p.stderr


def test_stack_refused_is_one_line(monkeypatch):
    """A stack the system cannot reserve (here 2**50 bytes) stops the launch
    with one line naming the kernel and the size."""
    import ptxc
    from ptxc.backends.llvm import stacks
    from ptxc.errors import PtxcError
    monkeypatch.setattr(stacks, "stack_bytes", lambda frame: 1 << 50)
    m = ptxc.load(BRANCHY)
    a = np.arange(512, dtype=np.float32)
    with pytest.raises(PtxcError) as e:
        ptxc.launch(m, "vecadd_branchy", grid=4, block=128, args=[a, a, np.zeros_like(a), 500],
                    mode="full", threads=1)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("error: kernel vecadd_branchy: its compiled code needs a native stack of "
                          "1073741824 MiB per executor thread"), msg
