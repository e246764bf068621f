"""Conditional graph nodes under ``ptxc run`` (docs/runtime.md "Conditional
nodes"): tests/cuda_apps/graph_cond.cu, built with nvcc at test time
(skipped without nvcc), in the style of cuda-samples graphConditionalNodes.

Every number below is derived by hand from the CUDA semantics
(cudaConditionalNodeParams: IF runs body 0 when the value is non-zero, else
body 1 of two; WHILE re-reads the value before each iteration; SWITCH runs
body n for value n < size) and the app's kernels (see its comments): the
printed results, and how many times each kernel ran in each graph launch,
from the report's launches table (its ``graph`` column numbers the graph
launches of the run from 1). Full and hybrid runs must agree.
"""
from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from runtime_apps import AppBuilder, run_ptxc

N = 256
SET_ODD, SET_VALUE, BUMP = "_Z7set_oddPKiy", "_Z9set_valuePKiy", "_Z4bumpPii"
ACC, COUNTDOWN = "_Z10accumulatePii", "_Z9countdownPiy"
DEC, AFTER, OUTER = "_Z12dec_and_testPiy", "_Z10after_loopPiS_", "_Z10outer_stepPiyy"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    app = AppBuilder(tmp_path_factory.mktemp("graph_cond")).build("graph_cond")
    out = {m: run_ptxc(app, mode=m) for m in ("full", "hybrid")}
    for m, r in out.items():
        assert r.returncode == 0, (m, r.proc.stdout, r.proc.stderr)
        assert r.proc.stdout.rstrip().endswith("PASS"), (m, r.proc.stdout)
    return out


def expected_launches() -> list[Counter]:
    """The kernels each graph launch runs, in the app's order."""
    g = []
    for x in range(4):                      # IF: body when x is odd
        g.append(Counter({SET_ODD: 1, BUMP: x % 2}))
    for x in range(5):                      # IF/ELSE: one of the two bodies
        g.append(Counter({SET_ODD: 1, BUMP: 1}))
    for start in (5, 3):                    # WHILE from the default 1: `start` iterations
        g.append(Counter({ACC: start, COUNTDOWN: start}))
    for start in (0, 10):                   # captured: A, then the body while A left c != 0
        left = max(start - 1, 0)
        g.append(Counter({DEC: 1 + left, AFTER: 1}))
    for x in range(5):                      # SWITCH(4): body x when x < 4
        g.append(Counter({SET_VALUE: 1, BUMP: int(x < 4)}))
    o = [3, 2, 1, 0]                        # nested: o after each outer step from 4
    g.append(Counter({OUTER: len(o), BUMP: sum(v % 2 == 0 for v in o)}))
    g += [Counter({SET_ODD: 1, BUMP: 1})] * 2   # update: x = 1, before and after,
    g.append(Counter({SET_ODD: 1}))             # then x = 0
    return [Counter({k: v for k, v in c.items() if v}) for c in g]


def test_results(runs):
    out = runs["full"].proc.stdout
    assert "if node type 13" in out                    # cudaGraphNodeTypeConditional
    odd_so_far = np.cumsum(np.arange(4) % 2)
    for x in range(4):
        assert f"if x={x} count={odd_so_far[x]}\n" in out
    assert "if/else true=2 false=3\n" in out          # odd / even among 0..4
    i = np.arange(N)
    y = (5 + 3) * (i % 7 + 1)
    assert "while start=5 counter=0\nwhile start=3 counter=0\n" in out
    assert f"while y[0]={y[0]} y[6]={y[6]} y[255]={y[255]} sum={y.sum()}\n" in out
    assert "captured while: 3 nodes, body 1 nodes\n" in out
    for start in (0, 10):
        assert f"captured while start={start} counter=0 after=100\n" in out
    by = [1, 10, 100, 1000]
    for x in range(5):
        assert f"switch x={x} total={sum(by[:x + 1])}\n" in out
    assert "nested outer=0 inner=2\n" in out
    assert "update total=11\n" in out                  # 1 before the update, 10 after, 0 at x = 0
    assert "update mismatch result=5\n" in out         # cudaGraphExecUpdateErrorParametersChanged
    assert "errors: body nodes 0\n" in out
    assert "errors: captured graph none\n" in out


def test_launch_counts(runs):
    """Each body ran as often as its condition says, inside its graph launch."""
    rows = runs["full"].rows("SELECT kernel, graph FROM launches ORDER BY id")
    got = [Counter() for _ in expected_launches()]
    for r in rows:
        assert r["graph"] >= 1, r                      # every kernel ran in a graph
        got[r["graph"] - 1][r["kernel"]] += 1
    assert got == expected_launches()


def test_full_and_hybrid_agree(runs):
    cols = "kernel, graph, grid_x, block_x"
    full, hybrid = (runs[m].rows(f"SELECT {cols} FROM launches ORDER BY id") for m in runs)
    assert full == hybrid
    assert runs["full"].proc.stdout == runs["hybrid"].proc.stdout


def test_ptx_option_gets_the_device_function(runs, tmp_path):
    """``--ptx`` PTX (nvcc -ptx of the same source) declares
    cudaGraphSetConditional too; ptxc provides it there as well."""
    import subprocess
    from runtime_apps import APPS, nvcc
    ptx = tmp_path / "graph_cond.ptx"
    subprocess.run([nvcc(), "-ptx", "-arch=sm_90", f"{APPS}/graph_cond.cu", "-o", str(ptx)],
                   check=True, capture_output=True, timeout=180)
    app = runs["full"].proc.args[-1]
    r = run_ptxc(app, mode="full", options=("--ptx", str(ptx)), workdir=str(tmp_path))
    assert r.returncode == 0, r.proc.stderr
    assert r.proc.stdout == runs["full"].proc.stdout


def test_cuda12_application(runs, tmp_path):
    """Built as CUDA 12 calls it (graph_cond.cu with -DAS_CUDA12: the
    5-argument cudaGraphAddNode, cudaGraphAddNode_v2 where it passes edge
    data) and linked against ptxc's libcudart.so.12: the same output."""
    from test_runtime_printf import link_cuda12
    app = link_cuda12(tmp_path, "graph_cond", flags=("-DAS_CUDA12",))
    r = run_ptxc(app, mode="full", workdir=str(tmp_path))
    assert r.returncode == 0, (r.proc.stdout, r.proc.stderr)
    assert r.proc.stdout == runs["full"].proc.stdout


def test_driver_api_module_gets_the_device_function(tmp_path):
    """cuModuleLoadData of PTX that declares cudaGraphSetConditional
    (driver_set_conditional.cu loads tests/cuda/graph_set_conditional.sm90.ptx):
    countdown from 1 clears the handle, from 3 leaves it (7)."""
    from pathlib import Path
    app = AppBuilder(tmp_path).build("driver_set_conditional")
    ptx = Path(__file__).parent / "cuda" / "graph_set_conditional.sm90.ptx"
    r = run_ptxc(app, str(ptx), mode="full")
    assert r.returncode == 0, (r.proc.stdout, r.proc.stderr)
    assert r.proc.stdout == "start 1: counter 0 handle 0\nstart 3: counter 2 handle 7\n"


def test_rdc_build(runs, tmp_path):
    """nvcc -rdc=true leaves cudaGraphSetConditional external as well (the
    driver provides it, not libcudadevrt): the same output once ptxc links
    relocatable device code (ptxc/runtime/rdc.py)."""
    app = AppBuilder(tmp_path).build("graph_cond", flags=("-rdc=true", "-cudart", "shared",
                                                          "-arch=sm_90"))
    r = run_ptxc(app, mode="full", workdir=str(tmp_path))
    assert r.returncode == 0, (r.proc.stdout, r.proc.stderr)
    assert r.proc.stdout == runs["full"].proc.stdout
