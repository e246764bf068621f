"""Long launches (issue 18): a progress line with an estimate, Ctrl-C stops
``ptxc opt`` and ``ptxc run`` at once (exit 130, one line), and the
temporary libcudart directory of a SIGKILLed ``ptxc run`` is removed by
the next one.

tests/cuda/spin.sm90.ptx is nvcc's PTX of tests/cuda/spin.cu
(``nvcc -ptx -arch=sm_90 spin.cu -o spin.sm90.ptx``): a kernel that waits
for a flag nobody sets, so it runs until its step budget (10**12 steps
here: hours). tests/cuda_apps/spin_app.cu is the same kernel in an
application, built with nvcc at test time (skipped without it).
"""
from __future__ import annotations

import glob
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import launch_wait
from ptxc.runtime import workdir

from runtime_apps import AppBuilder

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPIN = os.path.join(ROOT, "tests", "cuda", "spin.sm90.ptx")


def start(args, env_extra=None, **kw):
    env = {**os.environ, "PTXC_PROGRESS": "1", **(env_extra or {})}
    return subprocess.Popen([sys.executable, "-m", "ptxc.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=ROOT, start_new_session=True, **kw)


def wait_for_progress(proc, timeout=120.0) -> bytes:
    """stderr up to the first progress line: the kernel is running then."""
    seen = b""
    deadline = time.monotonic() + timeout
    os.set_blocking(proc.stderr.fileno(), False)
    while b"CTAs" not in seen:
        assert time.monotonic() < deadline and proc.poll() is None, seen.decode(errors="replace")
        chunk = proc.stderr.read()
        seen += chunk or b""
        time.sleep(0.1)
    return seen


def interrupt(proc) -> tuple[int, float, str]:
    """SIGINT to the process group (what Ctrl-C does): (status, seconds to exit, stderr)."""
    os.killpg(proc.pid, signal.SIGINT)
    t0 = time.monotonic()
    try:
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    os.set_blocking(proc.stderr.fileno(), True)
    return proc.returncode, time.monotonic() - t0, proc.stderr.read().decode(errors="replace")


SPIN_ARGS = ["--kernel", "_Z4spinPViPi", "--grid", "1", "--block", "32", "--mode", "full",
             "--max-steps", str(10**12), "--arg", "0=zeros:i32:1", "--arg", "1=zeros:i32:32"]


def test_ctrl_c_stops_ptxc_opt_while_a_kernel_runs():
    proc = start(["opt", "--pass=count", *SPIN_ARGS, SPIN])
    first = wait_for_progress(proc)
    assert b"ptxc: kernel spin(int volatile*, int*): 0/1 CTAs" in first
    status, seconds, err = interrupt(proc)
    assert status == 130 and seconds < 10
    lines = err.replace("\r\033[K", "\n").strip().splitlines()   # progress lines are erased
    assert lines[-1] == "ptxc: interrupted" and "Traceback" not in err


def test_progress_line_and_estimate(monkeypatch, capfd):
    monkeypatch.setenv("PTXC_PROGRESS", "1")
    monkeypatch.setattr(launch_wait, "DELAY", 0.0)
    monkeypatch.setattr(launch_wait, "EVERY", 0.0)
    monkeypatch.setattr(launch_wait, "POLL", 0.001)
    module = ptxc.load(os.path.join(ROOT, "examples", "branchy.ptx"))
    n = 1 << 21
    a, b, c = np.arange(n, dtype=np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
    ptxc.launch(module, "vecadd_branchy", n // 128, 128, [a, b, c, n], mode="full", threads=1)
    err = capfd.readouterr().err
    # when the first line comes depends on the machine: any count of the 16384 CTAs
    assert re.search(rf"ptxc: kernel vecadd_branchy: \d+/{n // 128} CTAs \(\d+\.\d%\), ", err), err
    assert err.endswith("\r\033[K")              # the line is erased at the end


@pytest.mark.parametrize("seconds,text", [(3.25, "3.2 s"), (245, "4 min 5 s"), (7500, "2 h 5 min"),
                                          (3 * 86400 + 4 * 3600, "3 d 4 h")])
def test_durations(seconds, text):
    assert launch_wait.duration(seconds) == text


def test_estimate_from_the_rate_so_far():
    # 1000 of 4000 CTAs in 10 s: 3000 more at 100 CTAs/s = 30 s
    assert launch_wait.line("kernel k", 1000, 4000, 10.0) == \
        "ptxc: kernel k: 1000/4000 CTAs (25.0%), 10.0 s, about 30.0 s left (Ctrl-C stops)"


def test_stale_work_directories_are_removed(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()                                   # a pid whose process has ended
    stale = tmp_path / f"ptxc-run-{gone.pid}-abc"
    live = tmp_path / f"ptxc-run-{os.getpid()}-def"
    other = tmp_path / "ptxc-run-xyz"             # not ours to judge: no pid in the name
    for d in (stale, live, other):
        d.mkdir()
        (d / "libcudart.so.13").write_text("x")
    assert workdir.remove_stale(str(tmp_path)) == [str(stale)]
    assert not stale.exists() and live.exists() and other.exists()


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("spin_app"))


def test_ptxc_run_sigkill_leaves_nothing_and_ctrl_c_stops(apps, tmp_path):
    app = apps.build("spin_app")
    env = {"TMPDIR": str(tmp_path)}
    args = ["run", "--max-steps", str(10**12), "--", app]
    killed = start(args, env)
    wait_for_progress(killed)
    left = glob.glob(str(tmp_path / "ptxc-run-*"))
    assert len(left) == 1
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    assert os.path.isdir(left[0])                 # SIGKILL: nothing could remove it
    proc = start(args, env)
    wait_for_progress(proc)
    assert not os.path.exists(left[0])            # the next ptxc run removed it
    status, seconds, err = interrupt(proc)
    assert status == 130 and seconds < 10, err
    assert "ptxc: interrupted" in err and "Traceback" not in err
    assert glob.glob(str(tmp_path / "ptxc-run-*")) == []
