"""Hybrid run == full run (METRICS.md: the definition of a sound slice) for
the nvcc slice examples, in every memory mode, with the JIT executor."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.passes.slice.slice_pass import mark_slice

launch_mod = pytest.importorskip("ptxc.launcher.launcher", reason="the JIT executor is not available")

CUDA = Path(__file__).resolve().parent / "cuda"
N = 256


def ints(lo, hi, n=N, seed=1):
    return np.random.default_rng(seed).integers(lo, hi, n).astype(np.int32)


def floats(n=N, seed=2):
    return np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32)


# file, kernel, grid, block, argument factory (fresh arrays for every run)
CASES = [
    ("slice_tid.ptx", "tid_branch", 2, 128, lambda: [floats(), np.zeros(N, np.float32), 200]),
    ("slice_data.ptx", "data_branch", 2, 128,
     lambda: [floats(), np.zeros(N, np.float32), np.zeros(N, np.float32)]),
    ("slice_loop.ptx", "loop_count", 2, 128,
     lambda: [ints(0, 9), floats(16), np.zeros(N, np.float32)]),
    ("slice_shared.ptx", "shared_flag", 2, 256,
     lambda: [ints(-3, 4, 2 * N), np.zeros(2 * N, np.float32)]),
    ("slice_call.ptx", "call_branch", 2, 128, lambda: [ints(-50, 50, N + 1), np.zeros(N, np.float32)]),
    ("slice_guard.ptx", "guarded", 1, 128, lambda: [ints(-10, 10, 128), np.zeros(128, np.float32), 4]),
    ("slice_guard.ptx", "guard_only", 1, 128, lambda: [floats(128), np.zeros(128, np.float32)]),
    ("slice_hypa.ptx", "two_writers", 2, 128,
     lambda: [ints(-5, 8), ints(-5, 8, seed=3), np.zeros(N, np.float32), 100]),
]


def run(path, kernel, grid, block, make_args, mode, memory="conservative"):
    m = ptxc.load(str(CUDA / path))
    if mode == "hybrid":
        mark_slice(m, memory=memory)
    args = dict(enumerate(make_args()))
    return launch_mod.launch(m, kernel, (grid,), (block,), args, mode=mode)


@pytest.mark.parametrize("memory", ["conservative", "refined", "noalias"])
@pytest.mark.parametrize("case", CASES, ids=[c[1] for c in CASES])
def test_hybrid_equals_full(case, memory):
    full = run(*case, mode="full")
    hybrid = run(*case, mode="hybrid", memory=memory)
    assert hybrid.counters() == full.counters()
    assert full.thread_inst_executed > 0
