"""The tiered JIT (backends/llvm/jit.py choose_level / note_run): a kernel
starts at level 0; once its launches have run for TIER_UP_RATIO times its
compile time (TIER_UP_MIN_S at least) its next launch is compiled at O2, with
the same outputs and counters. The thresholds are set here so that the first
launch makes the kernel hot (or never does): no timing is asserted.
tests/cuda/parallel_ctas.cu's tiled matrix multiply, checked against numpy.
"""
from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import jit

PTX = Path(__file__).parent / "cuda" / "parallel_ctas.sm90.ptx"


def launch(module, memory_counters=False):
    n = 64                          # 16 CTAs: chunks of one CTA on one worker
    a = np.arange(n * n, dtype=np.float32).reshape(n, n) % 5
    b = np.arange(n * n, dtype=np.float32).reshape(n, n) % 3
    c = np.zeros((n, n), np.float32)
    prof = ptxc.launch(module, "matmul_tiled", (n // 16, n // 16, 1), (16, 16, 1), [a, b, c, n],
                       mode="full", threads=1, memory_counters=memory_counters)
    np.testing.assert_array_equal(c, a @ b)
    out = asdict(prof)
    out.pop("timings")
    return out


@pytest.fixture
def levels(monkeypatch):
    monkeypatch.setattr(jit, "ENV_LEVEL", None)
    module = ptxc.load(PTX)
    fn = module.function("matmul_tiled")
    return module, fn, lambda lvl, memory=0: jit.is_compiled(module, fn, "full", lvl, memory)


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


@pytest.mark.parametrize("memory", [0, 4])
def test_long_launch_switches_to_o2_between_chunks(levels, monkeypatch, memory):
    """backends/llvm/tier_up.py: the first half of the CTAs runs level-0
    code; the chunks of the second half wait until the O2 code compiled in
    the background is in place, so both codes certainly run in one launch.
    Outputs and every counter equal those of a level-0 launch, the memory
    counters (``memory``: their bank width) included."""
    from ptxc.backends.llvm import launch_wait, runtime
    module, fn, compiled = levels
    monkeypatch.setattr(jit, "TIER_UP_MIN_S", float("inf"))
    plain = launch(module, bool(memory))                # level 0 throughout
    monkeypatch.setattr(jit, "TIER_UP_RATIO", 0.0)
    monkeypatch.setattr(jit, "TIER_UP_MIN_S", 0.0)
    monkeypatch.setattr(launch_wait, "POLL", 0.001)
    used, tiers = [], []
    run_range = runtime.Worker.run_range

    def gated(self, begin, end):
        tier = self.launch.tier
        if tier not in tiers:
            tiers.append(tier)
        deadline = time.monotonic() + 60
        while begin >= self.launch.nctas // 2 and tier.switched is None and time.monotonic() < deadline:
            time.sleep(0.001)
        used.append(self.launch.warp_fn)
        return run_range(self, begin, end)

    monkeypatch.setattr(runtime.Worker, "run_range", gated)
    tiered = launch(module, bool(memory))
    assert len(tiers) == 1 and tiers[0].switched is not None and compiled(2, memory)
    o0 = jit.compile_kernel(module, fn, "full", 0, memory=memory).warp_fn
    o2 = tiers[0].switched.warp_fn
    assert o0 != o2 and used == [o0] * (len(used) - used.count(o2)) + [o2] * used.count(o2), used
    assert used[:8] == [o0] * 8 and used[8:] == [o2] * 8
    assert tiered == plain and fn.attrs["jit_hot"]
    assert bool(tiered["memory"]) == bool(memory)
