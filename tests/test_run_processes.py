"""``ptxc run`` and the processes around it (issue 27, "Signals and
processes" and "fork"):

* the run's work directory (``ptxc-run-PID-*``, the shim's libcudart link)
  goes on SIGTERM also when the signal comes before the application runs,
  or a second time while ptxc stops an application that ignores SIGTERM
  (which is then killed, not left behind);
* an application that dies while a kernel runs (a host thread segfaults,
  SIGKILL, exit(3)) ends the run within a second or so, not at the step
  budget, and ptxc names the death, not a false "no termination";
* a forked child of the application gets cudaErrorInitializationError (3)
  from every CUDA call while its parent keeps computing right values, and
  a program it execs cannot use CUDA and says why (exit status 88).

The applications (tests/cuda_apps/dies_app.cu, fork_app.cu) are built with
nvcc at test time (skipped without it). Expected values: dies_app's first
kernel is one launch; fork_app's children print their six error codes
(3 each), its parent sums 64 values i*r + 1 (2016 r + 64; 6112 for r = 3).
"""
from __future__ import annotations

import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from runtime_apps import AppBuilder

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPIN = "spin(int volatile*, int volatile*, int*)"


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("process_apps"))


def ptxc_run(args, tmp_path, timeout=60):
    """``ptxc run ARGS`` with TMPDIR=tmp_path: (status, stdout, stderr, seconds)."""
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "ptxc.cli", "run", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


# ------------------------------------------------------- the work directory
SETUP_SIGTERM = """
import os, signal, sys
from ptxc.gpus import devices
from ptxc.runtime import app, shim
from ptxc.runtime.server import Options
real = shim.library_dir

def library_dir(work, majors=()):
    os.kill(os.getpid(), signal.SIGTERM)    # as if it came while the directory is made
    return real(work, majors)

shim.library_dir = library_dir
try:
    app.run_app(["/bin/true"], Options(gpu=devices.model("h100")))
except KeyboardInterrupt:
    sys.exit(130)
sys.exit(0)
"""


def test_sigterm_while_the_work_directory_is_made(tmp_path):
    proc = subprocess.run([sys.executable, "-c", SETUP_SIGTERM], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.returncode == 130, proc.stderr
    assert glob.glob(str(tmp_path / "ptxc-run-*")) == []


def test_second_sigterm_while_stopping_the_application(apps, tmp_path):
    """The application ignores SIGTERM: ptxc's first SIGTERM makes it stop the
    application (SIGTERM, SIGKILL after two seconds); a second SIGTERM
    meanwhile ends ptxc at once, killing the application and removing the
    work directory."""
    app = apps.build("dies_app")
    proc = subprocess.Popen([sys.executable, "-m", "ptxc.cli", "run", "--", app, "stubborn"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "TMPDIR": str(tmp_path)}, start_new_session=True)
    app_pid = None
    try:
        line = proc.stdout.readline().decode()
        assert line.startswith("ready "), line
        app_pid = int(line.split()[1])
        assert len(glob.glob(str(tmp_path / "ptxc-run-*"))) == 1
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)                     # ptxc waits for the application to go
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        seconds = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        if app_pid and alive(app_pid):
            os.kill(app_pid, signal.SIGKILL)
    err = err.decode()
    assert proc.returncode == 130 and seconds < 1.5, err
    assert err.strip().splitlines()[-1] == "ptxc: interrupted" and "Traceback" not in err
    assert glob.glob(str(tmp_path / "ptxc-run-*")) == []
    time.sleep(0.2)
    assert not alive(app_pid)


# --------------------------------------------- the application dies in a launch
@pytest.mark.parametrize("how,status,death", [
    (["segv"], 128 + signal.SIGSEGV, "was killed by SIGSEGV"),
    (["kill"], 128 + signal.SIGKILL, "was killed by SIGKILL"),
    (["exit", "3"], 3, "exited with status 3"),
])
def test_application_dies_while_a_kernel_runs(apps, tmp_path, how, status, death):
    app = apps.build("dies_app")
    # a step budget of 10**11: the kernel alone would run for hours
    code, out, err, seconds = ptxc_run(["--max-steps", 10**11, "--format", "json",
                                        "-o", tmp_path / "s.json", "--", app, *how], tmp_path)
    assert code == status, err
    assert seconds < 20, err
    assert out == "1 launch done\n"
    assert (f"ptxc: the application {death} during launch 2 (kernel {SPIN}), which ptxc "
            f"abandoned and does not count; 1 earlier launch completed") in err.splitlines()
    assert "no termination" not in err and "Traceback" not in err
    meta = json.loads((tmp_path / "s.json").read_text())["meta"]
    assert (meta["launches"], meta["exit_status"], meta["abandoned_kernel"], meta["stopped"]) == \
        (1, status, "_Z4spinPViS0_Pi", None)
    assert glob.glob(str(tmp_path / "ptxc-run-*")) == []


# ----------------------------------------------------------------- fork, exec
CHILD = "child {k}: malloc 3 launch 3 memcpy 3 sync 3 count 3 last 3 (cudaErrorInitializationError)"


@pytest.mark.parametrize("attempt", [1, 2])
def test_forked_children_get_initialization_error(apps, tmp_path, attempt):
    app = apps.build("fork_app")
    code, out, err, _ = ptxc_run(["--format", "json", "-o", tmp_path / "s.json", "--", app],
                                 tmp_path)
    assert code == 0, err
    assert out.splitlines() == [CHILD.format(k=k) for k in range(6)] + [
        "exec child: exit status 88", "parent: rounds ok, wrong 0",
        "parent after the children: 6112"]
    assert re.search(r"^ptxc: error: this program \(pid \d+\) was started by the application "
                     r"that `ptxc run` serves \(pid \d+\) and uses the CUDA runtime too; ptxc "
                     r"serves the CUDA calls of one process per run", err, re.M), err
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["meta"]["exit_status"] == 0 and doc["meta"]["stopped"] is None
    assert {k["kernel"] for k in doc["kernels"]} == {"_Z5scalePii"}


# A function that needs no device may answer in a forked child as anywhere.
NO_GUARD = {"cudaDriverGetVersion", "cudaRuntimeGetVersion"}
# Driver functions that need no device: versions, error names, entry points.
NO_DRIVER_GUARD = {"cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString",
                   "cuGetProcAddress", "cuGetProcAddress_v2"}


def unguarded(files: str, returns: str, guard: str, exempt: set) -> tuple[int, list[str]]:
    """(functions checked, those not exempt whose first statement is not
    ``guard``) over the shim's exported functions returning ``returns`` in
    the native sources matching ``files``."""
    from ptxc.runtime import shim
    checked, missing = 0, []
    for path in sorted(glob.glob(os.path.join(shim.NATIVE, files))):
        text = open(path).read()
        for m in re.finditer(rf"^EXPORT {returns} (\w+)\(", text, re.M):
            depth, i = 1, m.end()
            while depth:
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            body = text[i:].lstrip()
            if not body.startswith("{"):
                continue                         # a declaration
            checked += 1
            first = body[1:].split(";", 1)[0].strip()
            if first != guard and m.group(1) not in exempt:
                missing.append(f"{os.path.basename(path)}: {m.group(1)}")
    return checked, missing


def test_every_api_function_refuses_a_forked_child_first():
    """Each exported function returning cudaError_t begins with CHILD_GUARD()
    (shim.h): in a forked child it returns cudaErrorInitializationError
    before it takes the lock or touches the connection (no nvcc needed)."""
    checked, missing = unguarded("*.c", "cudaError_t", "CHILD_GUARD()", NO_GUARD)
    assert missing == [] and checked > 150


def test_every_driver_function_refuses_a_forked_child_first():
    """Each exported driver function (libcuda.so.1, drv_*.c) begins with
    DRV_CHILD_GUARD() (driver.h): in a forked child it returns
    CUDA_ERROR_NOT_INITIALIZED before it takes the lock or touches the
    connection (no nvcc needed)."""
    checked, missing = unguarded("drv_*.c", "CUresult", "DRV_CHILD_GUARD()", NO_DRIVER_GUARD)
    assert missing == [] and checked > 140
