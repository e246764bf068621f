"""The tiered JIT (backends/llvm/jit.py choose_level / note_run): a kernel
starts at level 0; once its launches have run for TIER_UP_RATIO times its
compile time (TIER_UP_MIN_S at least) its next launch is compiled at O2, with
the same outputs and counters. The thresholds are set here so that the first
launch makes the kernel hot (or never does): no timing is asserted.
tests/cuda/parallel_ctas.cu's tiled matrix multiply, checked against numpy.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import jit

PTX = Path(__file__).parent / "cuda" / "parallel_ctas.sm90.ptx"


def launch(module):
    n = 32
    a = np.arange(n * n, dtype=np.float32).reshape(n, n) % 5
    b = np.arange(n * n, dtype=np.float32).reshape(n, n) % 3
    c = np.zeros((n, n), np.float32)
    prof = ptxc.launch(module, "matmul_tiled", (2, 2, 1), (16, 16, 1), [a, b, c, n], mode="full")
    np.testing.assert_array_equal(c, a @ b)
    out = asdict(prof)
    out.pop("timings")
    return out


@pytest.fixture
def levels(monkeypatch):
    monkeypatch.setattr(jit, "ENV_LEVEL", None)
    module = ptxc.load(PTX)
    fn = module.function("matmul_tiled")
    return module, fn, lambda lvl: jit.is_compiled(module, fn, "full", lvl)


def test_hot_kernel_recompiled_at_o2(levels, monkeypatch):
    module, fn, compiled = levels
    monkeypatch.setattr(jit, "TIER_UP_RATIO", 0.0)
    monkeypatch.setattr(jit, "TIER_UP_MIN_S", 0.0)
    first = launch(module)
    assert compiled(0) and not compiled(2) and fn.attrs["jit_hot"]
    second = launch(module)
    assert compiled(2)
    assert first == second


def test_cold_kernel_stays_at_level_0(levels, monkeypatch):
    module, fn, compiled = levels
    monkeypatch.setattr(jit, "TIER_UP_MIN_S", float("inf"))
    assert launch(module) == launch(module)
    assert compiled(0) and not compiled(2) and not fn.attrs.get("jit_hot")
    assert fn.attrs["jit_run_s"] > 0


def test_env_level_wins(levels, monkeypatch):
    module, fn, compiled = levels
    monkeypatch.setattr(jit, "ENV_LEVEL", "1")
    launch(module)
    assert compiled(1) and not compiled(0)
