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


def gate_chunks(monkeypatch, waits):
    """Make Worker.run_range record the code each chunk (one CTA here) runs,
    after waiting (60 s at most) for every ``(first, ready)`` of ``waits``
    with ``begin >= first`` until ``ready(tier)``. Returns (codes, tiers)."""
    from ptxc.backends.llvm import runtime
    used, tiers = [], []
    run_range = runtime.Worker.run_range

    def gated(self, begin, end):
        tier = self.launch.tier
        if tier not in tiers:
            tiers.append(tier)
        deadline = time.monotonic() + 60
        for first, ready in waits:
            while begin >= first and not ready(tier) and time.monotonic() < deadline:
                time.sleep(0.001)
        used.append(self.launch.warp_fn)
        return run_range(self, begin, end)

    monkeypatch.setattr(runtime.Worker, "run_range", gated)
    return used, tiers


@pytest.mark.parametrize("memory", [0, 4])
def test_long_launch_switches_to_o2_between_chunks(levels, monkeypatch, memory):
    """backends/llvm/tier_up.py: the first half of the CTAs runs level-0
    code; the chunks of the second half wait until the O2 code compiled in
    the background is in place, so both codes certainly run in one launch.
    Outputs and every counter equal those of a level-0 launch, the memory
    counters (``memory``: their bank width) included."""
    from ptxc.backends.llvm import launch_wait
    module, fn, compiled = levels
    monkeypatch.setattr(jit, "TIER_UP_MIN_S", float("inf"))
    plain = launch(module, bool(memory))                # level 0 throughout
    monkeypatch.setattr(jit, "TIER_UP_RATIO", 0.0)
    monkeypatch.setattr(jit, "TIER_UP_MIN_S", 0.0)
    monkeypatch.setattr(jit, "REVERT_BELOW", 0.0)       # never switched back (the next test)
    monkeypatch.setattr(launch_wait, "POLL", 0.001)
    used, tiers = gate_chunks(monkeypatch, [(8, lambda tier: tier.switched is not None)])
    tiered = launch(module, bool(memory))
    assert len(tiers) == 1 and tiers[0].switched is not None and compiled(2, memory)
    o0 = jit.compile_kernel(module, fn, "full", 0, memory=memory).warp_fn
    o2 = tiers[0].switched.warp_fn
    assert o0 != o2 and used == [o0] * (len(used) - used.count(o2)) + [o2] * used.count(o2), used
    assert used[:8] == [o0] * 8 and used[8:] == [o2] * 8
    assert tiered == plain and fn.attrs["jit_hot"]
    assert bool(tiered["memory"]) == bool(memory)


def test_slower_o2_code_is_switched_back(levels, monkeypatch):
    """tier_up.py measures the switch: with REVERT_BELOW = inf every O2 rate
    counts as slower, so once the O2 code has run (CTAs 8-11, gated on the
    switch; 9-11 also on the start of the O2 window, so that they count in
    it) the launch goes back to the level-0 code (CTAs 12-15, gated on the
    switch back); outputs and counters equal a level-0 launch, and the
    kernel stays at level 0 for its later launches."""
    from ptxc.backends.llvm import launch_wait, runtime
    module, fn, compiled = levels
    monkeypatch.setattr(jit, "TIER_UP_MIN_S", float("inf"))
    plain = launch(module)
    monkeypatch.setattr(jit, "TIER_UP_RATIO", 0.0)
    monkeypatch.setattr(jit, "TIER_UP_MIN_S", 0.0)
    monkeypatch.setattr(jit, "REVERT_BELOW", float("inf"))
    monkeypatch.setattr(launch_wait, "POLL", 0.001)
    run_range = runtime.Worker.run_range
    used, tiers = gate_chunks(monkeypatch, [(8, lambda tier: tier.switched is not None),
                                            (9, lambda tier: tier.since is not None),
                                            (12, lambda tier: tier.reverted)])
    tiered = launch(module)
    (tier,) = tiers
    o0 = jit.compile_kernel(module, fn, "full", 0).warp_fn
    o2 = tier.switched.warp_fn
    assert tier.reverted and used == [o0] * 8 + [o2] * 4 + [o0] * 4, used
    assert tiered == plain
    assert fn.attrs["jit_o2_slower"] and not fn.attrs["jit_hot"]
    assert jit.choose_level(fn, "full", 1) == 0
    monkeypatch.setattr(runtime.Worker, "run_range", run_range)
    assert launch(module) == plain and not fn.attrs["jit_hot"]


class _Compiled:
    def __init__(self, level):
        self.level, self.timings = level, {"codegen": 0.0, "llvm": 0.0}


@pytest.mark.parametrize("o2_rate, slower", [(0.5e9, True), (0.89e9, True), (0.91e9, False),
                                             (2e9, False)])
def test_note_run_compares_the_levels_rates(monkeypatch, o2_rate, slower):
    """jit.note_run: once O2 launches ran TIER_UP_MIN_S seconds, an O2 rate
    (thread instructions per second) under REVERT_BELOW (0.9) of level 0's
    (1e9 here) keeps the kernel at level 0; launches' sizes do not matter."""
    monkeypatch.setattr(jit, "ENV_LEVEL", None)
    monkeypatch.setattr(jit, "TIER_UP_MIN_S", 0.25)
    monkeypatch.setattr(jit, "REVERT_BELOW", 0.9)
    fn = ptxc.load(PTX).function("matmul_tiled")
    jit.note_run(fn, _Compiled(0), 0.3, int(0.3e9))             # 1e9 per second
    assert fn.attrs["jit_hot"] and jit.choose_level(fn, "full", 1) == 2
    jit.note_run(fn, _Compiled(2), 0.1, int(0.1 * o2_rate))      # not yet TIER_UP_MIN_S at O2
    assert not fn.attrs.get("jit_o2_slower")
    jit.note_run(fn, _Compiled(2), 0.2, int(0.2 * o2_rate))
    assert bool(fn.attrs.get("jit_o2_slower")) == slower
    assert jit.choose_level(fn, "full", 1) == (0 if slower else 2)


@pytest.mark.parametrize("o2_work, reverted", [(10**9, False), (8 * 10**8, True)])
def test_in_launch_rates_compared_once(monkeypatch, o2_work, reverted):
    """TierUp._judge: level 0 ran 10**9 thread instructions in its 2.0 s
    before the compile; after the switch the O2 code is judged once it has
    run as long (2.0 s): 10**9 more (the same rate) stays, 8 * 10**8 (0.8x,
    under REVERT_BELOW = 0.9) goes back to the level-0 code."""
    from types import SimpleNamespace
    from ptxc.backends.llvm import tier_up
    monkeypatch.setattr(jit, "REVERT_BELOW", 0.9)
    now = [100.0]
    monkeypatch.setattr(tier_up.time, "monotonic", lambda: now[0])
    per_cta = np.zeros(4, np.int64)
    launch_ = SimpleNamespace(per_cta=per_cta, c=SimpleNamespace(warp_fn=111), warp_fn=222)
    slower = []
    tier = tier_up.TierUp(launch_, None, 0.0, on_slower=lambda: slower.append(1))
    tier.switched, tier.rate0 = object(), (10**9, 2.0)
    per_cta[1] = 10**9
    tier.tick(1, 2)                          # the switch is seen: the O2 window starts
    now[0] += 1.0
    per_cta[3] = o2_work // 2
    tier.tick(1, 2)                          # 1.0 s: too early to judge
    assert not tier.judged
    now[0] += 1.0
    per_cta[3] = o2_work
    tier.tick(2, 2)
    assert tier.judged and tier.reverted == reverted and len(slower) == int(reverted)
    assert launch_.warp_fn == (111 if reverted else 222)
    now[0] += 10.0
    per_cta[3] = 1
    tier.tick(2, 2)                          # judged once
    assert launch_.warp_fn == (111 if reverted else 222)
