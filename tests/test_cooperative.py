"""Cooperative launches and grid-wide synchronisation (backends/llvm/ops/coop.py),
on tests/cuda/coop.cu (nvcc -arch=sm_90 -O3): outputs against numpy, hybrid
== full, and the spin count derived by hand from the baton rule."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.ops import coop

PTX = Path(__file__).parent / "cuda" / "coop.sm90.ptx"


@pytest.fixture(scope="module")
def module():
    return ptxc.load(PTX)


def both(module, kernel, grid, block, make_args):
    """Full and hybrid cooperative runs; the full run's arguments."""
    args = make_args()
    full = ptxc.launch(module, kernel, grid, block, args, mode="full", cooperative=True)
    hybrid = ptxc.launch(module, kernel, grid, block, make_args(), mode="hybrid",
                         cooperative=True)
    assert full.counters() == hybrid.counters()
    return full, args


def test_neighbour_values_written_by_other_ctas(module):
    n = 1000
    full, (data, out, _) = both(module, "neighbour", 8, 128,
                                lambda: [np.zeros(n, np.int32), np.zeros(n, np.int32), n])
    assert (data == 2 * np.arange(n)).all()
    assert (out == 2 * ((np.arange(n) + 1) % n)).all()
    # The spin loop $L__BB0_6 (ld.acquire, xor, setp, bra) runs in one warp
    # per CTA. CTAs arrive in order 0..7, each loads the counter once before
    # handing the baton on; CTA 7's arrival flips it, so CTA 7 leaves after
    # one iteration and CTAs 0..6, resumed after their first load, need a
    # second one: 7 * 2 + 1 = 15 warp executions.
    assert full.per_block["neighbour:$L__BB0_6"]["warp_execs"] == 15


def test_grid_sum_in_the_style_of_reduction_multi_block_cg(module):
    n, grid, block = 5000, 6, 96
    rng = np.random.default_rng(3)
    values = rng.integers(-100, 100, n).astype(np.int32)
    full, (_, partial, total, seen, _) = both(
        module, "grid_sum", grid, block,
        lambda: [values, np.zeros(grid, np.int32), np.zeros(1, np.int32),
                 np.zeros(grid, np.int32), n])
    stride = grid * block
    want = [sum(int(values[i]) for b0 in range(b * block, (b + 1) * block)
                for i in range(b0, n, stride)) for b in range(grid)]
    assert partial.tolist() == want
    assert total[0] == values.sum() and (seen == values.sum()).all()


def test_grid_sync_without_a_cooperative_launch_traps(module):
    """cooperative groups trap when the grid workspace is missing (%envreg1:2 = 0)."""
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(module, "neighbour", 2, 32, [np.zeros(64, np.int32), np.zeros(64, np.int32),
                                                 64], mode="full")
    assert "trap" in str(e.value)


def test_a_wait_that_never_ends_is_an_error(module, monkeypatch):
    monkeypatch.setattr(coop, "MAX_YIELDS", 300)
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(module, "wait_forever", 3, 32, [np.zeros(1, np.int32)], mode="full",
                    cooperative=True)
    assert "no CTA made progress" in str(e.value)
