"""Python GPU programs (numba-cuda) run under ``ptxc run`` on the driver API
replacement (docs/python-gpu.md): each program checks its own results
against numpy and prints ``OK``; for the programs with ``inputs()``, the
launch's counters in the run report equal a ``ptxc opt --pass=count`` run
of the same PTX (kept with ``--keep-ptx``) with the same arguments
(numba's array ABI: tests/numba_abi.py). ``ptxc check`` finds a numba
kernel's out-of-bounds write at its Python line.

Skipped without the ``python-gpu`` extra (numba-cuda). Each program costs a
few seconds (numba's import and JIT), so the set is small.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import subprocess
import sys

import pytest

import numba_abi

pytest.importorskip("numba_cuda", reason="numba-cuda is not installed (pip install -e '.[python-gpu]')")

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "python_gpu")
COUNTERS = ("inst_executed", "thread_inst_executed", "thread_inst_executed_pred_on", "branch",
            "cond_branch", "divergent_branch", "flop_count_sp", "flop_count_dp")
ENV = dict(os.environ, NUMBA_DISABLE_PERFORMANCE_WARNINGS="1", PYTHONWARNINGS="ignore")


def ptxc(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "ptxc.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=ENV)


def run_program(name: str, tmp_path, *options):
    report = str(tmp_path / "run.sqlite")
    keep = str(tmp_path / "ptx")
    proc = ptxc("run", "--report", report, "--keep-ptx", keep, "-o", str(tmp_path / "summary.txt"),
                *options, "--", sys.executable, os.path.join(PROGRAMS, name))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, report, keep


def launches(report: str) -> list[dict]:
    db = sqlite3.connect(report)
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("SELECT * FROM launches ORDER BY id")]
    finally:
        db.close()


def program(name: str):
    spec = importlib.util.spec_from_file_location(name[:-3], os.path.join(PROGRAMS, name))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def dims(v) -> str:
    v = v if isinstance(v, tuple) else (v,)
    return ",".join(str(x) for x in v)


@pytest.mark.parametrize("name,kernel", [("numba_vecadd.py", "vecadd"), ("numba_reduce.py", "block_sum"),
                                         ("numba_atomics.py", "histogram"),
                                         ("numba_2d.py", "transpose")])
def test_numba_program_counters_equal_opt(name, kernel, tmp_path):
    proc, report, keep = run_program(name, tmp_path)
    assert f"OK " in proc.stdout, proc.stdout + proc.stderr
    [row] = launches(report)
    mod = program(name)
    ptx = os.path.join(keep, row["module"] + ".ptx")
    opt = ptxc("opt", "--pass=count", "--format=json", "--mode", "full", "--kernel", kernel,
               "--grid", dims(mod.GRID), "--block", dims(mod.BLOCK),
               *numba_abi.args(mod.inputs(), str(tmp_path)), ptx)
    assert opt.returncode == 0, opt.stderr
    fns = json.loads(opt.stdout)["count"]["functions"]
    dynamic = fns[row["kernel"]]["dynamic"]
    assert {c: row[c] for c in COUNTERS} == {c: dynamic[c] for c in COUNTERS}


def test_numba_streams_and_events(tmp_path):
    proc, report, _ = run_program("numba_streams.py", tmp_path)
    assert "OK streams True" in proc.stdout
    [row] = launches(report)
    assert row["stream"] != 0          # launched on a created stream


def test_numba_kernel_named_as_in_python(tmp_path):
    proc, report, _ = run_program("numba_vecadd.py", tmp_path)
    text = (tmp_path / "summary.txt").read_text()
    assert "__main__::vecadd(array(float32, 1d, C), array(float32, 1d, C), " \
           "array(float32, 1d, C))" in text, text


def test_check_finds_numba_out_of_bounds_write_at_python_line():
    proc = ptxc("check", "--", sys.executable, os.path.join(PROGRAMS, "numba_oob.py"))
    line = next(i for i, t in enumerate(open(os.path.join(PROGRAMS, "numba_oob.py")), 1)
                if "out[i] = i" in t)
    assert "Invalid __global__ write of size 4 bytes" in proc.stdout + proc.stderr
    assert f"numba_oob.py:{line}" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert "__main__::fill(array(int32, 1d, C), int64)" in proc.stdout + proc.stderr
    assert proc.returncode != 0


def test_driver_api_calls_and_documented_error_codes(tmp_path):
    """cuda-bindings' driver API: every group prints OK (the return codes
    for bad handles and sizes are asserted in the program, as cuda.h
    documents them); the unsupported call is named in the report."""
    proc, report, _ = run_program("driver_api.py", tmp_path)
    for group in ("device", "module", "memory", "launch", "attributes", "sets", "copies 2D 3D",
                  "streams", "link", "entry points", "done"):
        assert f"OK {group}" in proc.stdout, proc.stdout + proc.stderr
    assert "unsupported CUDA driver call: cuMemAddressReserve" in proc.stderr
    db = sqlite3.connect(report)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
    finally:
        db.close()
    assert meta["unsupported_driver_calls"] == "cuMemAddressReserve"
    assert len(launches(report)) == 3


def test_cuda_core_cubin_runs_from_the_kept_ptx(tmp_path):
    pytest.importorskip("cuda.core")
    proc, report, _ = run_program("cuda_core_cubin.py", tmp_path)
    assert "OK cubin [0. 3. 6.]" in proc.stdout, proc.stdout + proc.stderr
    assert [r["kernel"] for r in launches(report)] == ["_Z5scaleIfEvPT_S0_i"]


def test_cuda_core_program_and_launch(tmp_path):
    pytest.importorskip("cuda.core")
    proc, report, _ = run_program("cuda_core_launch.py", tmp_path)
    assert "OK cuda.core [1. 3. 5.]" in proc.stdout, proc.stdout + proc.stderr
    assert [r["kernel"] for r in launches(report)] == ["saxpy"]


@pytest.mark.parametrize("name,line", [
    ("numba_cooperative.py", "OK cooperative"), ("numba_device_functions.py", "OK device functions"),
    ("numba_shuffle.py", "OK shuffle 499500"), ("numba_dynamic_shared.py", "OK dynamic shared"),
    ("numba_const_local.py", "OK const and local"), ("numba_managed.py", "OK managed"),
    ("numba_matmul.py", "OK matmul")])
def test_numba_program(name, line, tmp_path):
    proc, report, _ = run_program(name, tmp_path)
    assert line in proc.stdout, proc.stdout + proc.stderr
    assert launches(report)


def test_numba_kernel_print_comes_at_the_synchronisation(tmp_path):
    proc, _, _ = run_program("numba_printf.py", tmp_path)
    assert proc.stdout.splitlines() == ["before", "hello from thread 0", "hello from thread 1",
                                        "OK printf"], proc.stdout


def test_driver_api_in_a_forked_child_is_not_initialized(tmp_path):
    """CUDA is not fork-safe: a forked child's driver calls return
    CUDA_ERROR_NOT_INITIALIZED (driver.h, DRV_CHILD_GUARD), the parent's
    memory stays usable (docs/runtime.md, "fork and exec")."""
    pytest.importorskip("cuda.bindings")
    proc, _, _ = run_program("driver_fork.py", tmp_path)
    assert "OK child" in proc.stdout and "OK parent" in proc.stdout, proc.stdout + proc.stderr
