"""A plain Triton program (no PyTorch) runs under ``ptxc run``
(docs/python-gpu.md, runtime/cubin_ptx.py): its output equals numpy's, the
kernel has its Python name, and the launch's counters in the run report
equal a ``ptxc opt --pass=count`` run of the PTX that Triton keeps in its
cache, with the same arguments. The PTX comes from ptxc's ptxas wrapper on
a first run, from Triton's cache on a later one; without either, the load
fails with ptxc's one-line error. A row softmax (reductions across the
CTA) checks its output against numpy.

Skipped where Triton (a separate extra: ``pip install -e '.[triton]'``),
cuda-bindings or a C compiler (Triton builds its launcher) is missing.
"""
from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("triton", reason="Triton is not installed (pip install -e '.[triton]')")
pytest.importorskip("cuda.bindings")
if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
    pytest.skip("no C compiler (Triton compiles its launcher)", allow_module_level=True)

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_gpu")
APP = os.path.join(PROGRAMS, "triton_vecadd.py")
COUNTERS = ("inst_executed", "thread_inst_executed", "thread_inst_executed_pred_on", "branch",
            "cond_branch", "divergent_branch", "flop_count_sp", "flop_count_dp")


def ptxc(*args, server_cache):
    """ptxc with ``TRITON_CACHE_DIR`` = ``server_cache`` (where ptxc looks
    for Triton's cache); the program gets its own cache dir on its command line."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", TRITON_CACHE_DIR=str(server_cache))
    env.pop("TRITON_PTXAS_PATH", None)
    env.pop("TRITON_PTXAS_BLACKWELL_PATH", None)
    return subprocess.run([sys.executable, "-m", "ptxc.cli", *args], capture_output=True,
                          text=True, timeout=600, env=env)


def run_app(tmp_path, name: str, app_cache, server_cache):
    report = str(tmp_path / f"{name}.sqlite")
    keep = str(tmp_path / f"{name}-ptx")
    proc = ptxc("run", "--report", report, "--keep-ptx", keep, "--", "env",
                f"TRITON_CACHE_DIR={app_cache}", sys.executable, APP, server_cache=server_cache)
    return proc, report, keep


def launches(report: str) -> list[dict]:
    db = sqlite3.connect(report)
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("SELECT * FROM launches ORDER BY id")]
    finally:
        db.close()


def opt_counters(ptx: str, tmp_path) -> dict:
    spec = importlib.util.spec_from_file_location("triton_vecadd", APP)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x, y = mod.inputs()
    for name, a in (("x", x), ("y", y), ("out", np.zeros_like(x))):
        np.save(tmp_path / f"{name}.npy", a)
    grid = -(-mod.N // mod.BLOCK_SIZE)
    args = [f"0=@{tmp_path / 'x.npy'}", f"1=@{tmp_path / 'y.npy'}", f"2=@{tmp_path / 'out.npy'}",
            f"3={mod.N}", "4=0", "5=0"]     # Triton's global and profile scratch: none
    proc = ptxc("opt", "--pass=count", "--format=json", "--mode", "full", "--kernel", "add_kernel",
                "--grid", str(grid), "--block", "128",
                *[a for v in args for a in ("--arg", v)], ptx, server_cache=tmp_path)
    assert proc.returncode == 0, proc.stderr
    dynamic = json.loads(proc.stdout)["count"]["functions"]["add_kernel"]["dynamic"]
    return {c: dynamic[c] for c in COUNTERS}


def test_triton_vecadd_from_ptxas_then_from_cache(tmp_path):
    app_cache, elsewhere = tmp_path / "app-cache", tmp_path / "empty"
    elsewhere.mkdir()
    # first run: ptxc does not see the program's cache; the PTX comes from ptxc's ptxas
    proc, report, keep = run_app(tmp_path, "first", app_cache, elsewhere)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK triton" in proc.stdout, proc.stdout + proc.stderr
    [row] = launches(report)
    assert row["kernel"] == "add_kernel"
    assert (row["grid_x"], row["block_x"]) == (3, 128)
    [cached] = glob.glob(str(app_cache / "*" / "add_kernel.ptx"))
    kept = os.path.join(keep, row["module"] + ".ptx")
    assert open(kept).read() == open(cached).read()      # the PTX of that cubin
    first = {c: row[c] for c in COUNTERS}
    assert first == opt_counters(cached, tmp_path)
    # second run: Triton loads the cubin from its cache (no ptxas); ptxc finds the PTX there
    proc, report, _ = run_app(tmp_path, "second", app_cache, app_cache)
    assert "OK triton" in proc.stdout, proc.stdout + proc.stderr
    [row] = launches(report)
    assert {c: row[c] for c in COUNTERS} == first
    # neither: ptxc's one-line error, and the program's own exception
    proc, _, _ = run_app(tmp_path, "third", app_cache, elsewhere)
    assert proc.returncode != 0
    lines = [t for t in proc.stderr.splitlines() if t.startswith("ptxc: ")]
    assert any("is a cubin without PTX (SASS only)" in t and "Triton" in t for t in lines), proc.stderr
    assert "OK triton" not in proc.stdout


def test_triton_softmax_reductions(tmp_path):
    """tl.max and tl.sum across a CTA (Triton's shuffles and shared memory)."""
    report = str(tmp_path / "run.sqlite")
    proc = ptxc("run", "--report", report, "--", "env", f"TRITON_CACHE_DIR={tmp_path / 'cache'}",
                sys.executable, os.path.join(PROGRAMS, "triton_softmax.py"), server_cache=tmp_path)
    assert "OK triton softmax" in proc.stdout, proc.stdout + proc.stderr
    [row] = launches(report)
    assert (row["kernel"], row["grid_x"]) == ("softmax_rows", 8)
