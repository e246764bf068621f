"""Long launches (issue 18): a progress line with an estimate, Ctrl-C stops
``ptxc opt`` and ``ptxc run`` at once (exit 130, one line), and the
temporary libcudart directory of a SIGKILLed ``ptxc run`` is removed by
the next one. Ctrl-C and SIGTERM during ``ptxc run`` or ``ptxc check``
keep what finished (issue 26): the summary and reports of the completed
launches are written, marked as interrupted, the application is stopped
and ptxc exits 130.

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
                            stderr=subprocess.PIPE, env=env, cwd=ROOT, start_new_session=True,
                            preexec_fn=interruptible, **kw)


def interruptible() -> None:
    """SIGINT as a terminal's Ctrl-C finds it: a test run started in the
    background by a non-interactive shell inherits SIGINT ignored, which
    Python then keeps (it installs its KeyboardInterrupt handler only over
    the default disposition), and no Ctrl-C would reach ptxc."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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


# ------------------------------------------------- what finished is kept (issue 26, item 5)
# tests/cuda_apps/interrupt_app.cu: 3 launches of `fill`, then `spin`, which
# never ends; the run is interrupted in launch 4.
SPIN_NAME = "spin(int volatile*, int*)"
INTERRUPTED = ("interrupted ({signal}) during launch 4 (kernel {kernel}), which is not counted; "
               "3 earlier launches completed")


def spin_kernel() -> str:
    """The demangled name as this machine prints it (c++filt, when installed)."""
    from ptxc.report.kernel_names import demangle
    return demangle(["_Z4spinPViPi"])["_Z4spinPViPi"]


def stop_ptxc(proc, how: str) -> tuple[int, str, str]:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) or
    SIGTERM to ptxc alone: (status, stdout, stderr)."""
    if how == "SIGINT":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    os.set_blocking(proc.stderr.fileno(), True)
    return proc.returncode, proc.stdout.read().decode(), proc.stderr.read().decode(errors="replace")


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM"])
def test_interrupted_run_keeps_the_completed_launches(apps, tmp_path, how):
    import json
    import sqlite3
    app = apps.build("interrupt_app")
    args = ["run", "--max-steps", str(10**12), "--report", str(tmp_path / "r.sqlite"),
            "--format", "json", "-o", str(tmp_path / "s.json"), "--html", str(tmp_path / "r.html"),
            "--", app]
    proc = start(args)
    wait_for_progress(proc)
    status, out, err = stop_ptxc(proc, how)
    assert status == 130, err
    line = "ptxc: " + INTERRUPTED.format(signal=how, kernel=spin_kernel()) + \
        "; the application was stopped"
    assert line in err.replace("\r\033[K", "\n").splitlines(), err
    assert "Traceback" not in err
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["meta"]["interrupted"] == how
    assert doc["meta"]["interrupted_kernel"] == "_Z4spinPViPi"
    assert [r["kernel"] for r in doc["launches"]] == ["_Z4fillPii"] * 3
    assert [(k["kernel"], k["launches"]) for k in doc["kernels"]] == [("_Z4fillPii", 3)]
    db = sqlite3.connect(tmp_path / "r.sqlite")
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        assert (meta["interrupted"], meta["launches"]) == (how, "3")
        assert db.execute("SELECT count(*) FROM launches").fetchone() == (3,)
    finally:
        db.close()
    assert f"(interrupted: {how})" in (tmp_path / "r.html").read_text()
    if how == "SIGTERM":
        # ptxc stopped the application itself (it was waiting for the launch):
        # it exited with 130, flushing what it had printed into the pipe
        assert out == "3 launches done\n"
        assert doc["meta"]["exit_status"] == 130


def test_interrupted_text_summary_and_check_report(apps, tmp_path):
    app = apps.build("interrupt_app")
    proc = start(["run", "--max-steps", str(10**12), "-o", str(tmp_path / "s.txt"), "--", app])
    wait_for_progress(proc)
    status, _, _ = stop_ptxc(proc, "SIGTERM")
    assert status == 130
    text = (tmp_path / "s.txt").read_text().splitlines()
    tag = text[0].split()[0]
    assert text[1] == f"{tag} " + INTERRUPTED.format(signal="SIGTERM", kernel=spin_kernel()) + \
        ", reported below"
    from ptxc.report.kernel_names import demangle
    assert f"Kernel: {demangle(['_Z4fillPii'])['_Z4fillPii']}" in text     # 3 launches
    assert text[0].endswith(", 3 launches)")
    proc = start(["check", "--max-steps", str(10**12), "-o", str(tmp_path / "c.txt"), "--", app])
    wait_for_progress(proc)
    status, _, _ = stop_ptxc(proc, "SIGTERM")
    assert status == 130
    report = (tmp_path / "c.txt").read_text().splitlines()
    assert report == [
        "========= COMPUTE-SANITIZER (ptxc memcheck)",
        "========= Interrupted (SIGTERM) during launch 4 (kernel " + spin_kernel() + "), which is "
        "not counted; 3 earlier launches completed; the errors of those are reported",
        "========= ERROR SUMMARY: 0 errors"]
