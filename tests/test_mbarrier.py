"""Arrive-wait barriers (mbarrier, backends/llvm/ops/mbarrier.py) on
tests/cuda/mbarrier.cu (cuda::barrier, nvcc -arch=sm_90 -O3): outputs
against numpy, hybrid == full, and the waits derived by hand from the
SIMT model (docs/executor.md, "mbarrier")."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc

PTX = Path(__file__).parent / "cuda" / "mbarrier.sm90.ptx"


@pytest.fixture(scope="module")
def module():
    return ptxc.load(PTX)


def test_neighbour_through_an_arrive_wait_barrier(module):
    grid, block = 2, 128
    rng = np.random.default_rng(5)
    inp = rng.random(grid * block, dtype=np.float32)
    out = np.zeros_like(inp)
    full = ptxc.launch(module, "neighbour", grid, block, [out, inp], mode="full")
    hybrid = ptxc.launch(module, "neighbour", grid, block, [np.zeros_like(inp), inp],
                         mode="hybrid")
    assert full.counters() == hybrid.counters()
    want = np.roll((2 * inp).reshape(grid, block), -1, axis=1).ravel()
    assert (out == want).all()
    # Per CTA, after block.sync() warps run in order 0..3: warps 0-2 arrive,
    # find the phase open at their first try_wait ($L__BB0_3) and yield;
    # warp 3's arrive completes the phase, its try_wait succeeds and it
    # finishes; warps 0-2 resume, go round the retry loop once ($L__BB0_5,
    # $L__BB0_10) and succeed. Per CTA: 4 + 3 entries of $L__BB0_3, 3 of each
    # retry block.
    blocks = full.per_block
    assert blocks["neighbour:$L__BB0_3"]["warp_execs"] == grid * 7
    assert blocks["neighbour:$L__BB0_5"]["warp_execs"] == grid * 3
    assert blocks["neighbour:$L__BB0_10"]["warp_execs"] == grid * 3


@pytest.mark.parametrize("active", [96, 40, 1])
def test_phases_and_arrive_and_drop(module, active):
    grid, block, rounds = 3, 96, 4
    out = np.full(grid * block, -1, np.int32)
    full = ptxc.launch(module, "phases", grid, block, [out, rounds, active], mode="full")
    hybrid = ptxc.launch(module, "phases", grid, block,
                         [np.zeros_like(out), rounds, active], mode="hybrid")
    assert full.counters() == hybrid.counters()
    # Thread t < active reads, in round r, val[(t + r) % active] after r
    # increments of every val: (t + r) % active + r. Threads >= active leave.
    t = np.arange(block)
    want = np.where(t < active,
                    sum((t + r) % active + r for r in range(rounds)), -1)
    assert (out.reshape(grid, block) == want).all()
