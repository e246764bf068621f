"""racecheck and synccheck report nothing on correct kernels of the test
corpus (docs/check.md): cp.async staging through shared memory
(tests/cuda/cp_async.cu) and warp collectives whose lanes pass their own
cooperative-groups partition masks (tests/cuda/warp_masks.cu, issue 17),
where each mask names only lanes that execute the collective. The one kernel
there that passes masks leaving the executing lane out (``outside_mask``,
undefined in the ISA) is reported.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc

CUDA = Path(__file__).parent / "cuda"
CHECK = "racecheck+synccheck"


def clean(prof) -> bool:
    return prof.race_hazards == [] and prof.sync_errors == []


@pytest.mark.parametrize("kernel", ["cp4", "cp8", "cp16"])
def test_cp_async(kernel):
    rng = np.random.default_rng(1)
    src = rng.integers(1, 256, 16 * 128, dtype=np.uint8)
    keep = rng.integers(0, 5, 128).astype(np.uint32)
    prof = ptxc.launch(ptxc.load(CUDA / "cp_async.sm90.ptx"), kernel, 1, 128,
                       [src, np.zeros(16 * 128, np.uint8), keep], mode="full", check=CHECK)
    assert clean(prof)


def warp_args(kernel, n, rng):
    key = rng.integers(-1, 5, n).astype(np.int32)
    val = rng.integers(0, 16, n).astype(np.uint32)
    return {"repro_max": [key, val.astype(np.int32), np.zeros(n, np.int32)],
            "group_ops": [key, val, np.zeros(n * 24, np.uint32)],
            "branch_on_groups": [key, val, np.zeros(n * 6, np.uint32)],
            "tile_shfl": [val, rng.integers(0, 64, n).astype(np.uint32), np.zeros(n * 6, np.uint32)],
            "outside_mask": [val, np.zeros(n * 6, np.uint32)]}[kernel]


@pytest.mark.parametrize("kernel", ["repro_max", "group_ops", "branch_on_groups", "tile_shfl"])
def test_partition_masks(kernel):
    prof = ptxc.launch(ptxc.load(CUDA / "warp_masks.sm90.ptx"), kernel, 2, 64,
                       warp_args(kernel, 128, np.random.default_rng(2)), mode="full", check=CHECK)
    assert clean(prof)


def test_masks_leaving_the_lane_out_are_reported():
    prof = ptxc.launch(ptxc.load(CUDA / "warp_masks.sm90.ptx"), "outside_mask", 1, 96,
                       warp_args("outside_mask", 96, np.random.default_rng(3)), mode="full",
                       check=CHECK)
    # m = 0 (v % 5 == 0) or the 4 lanes after lane (funnelshift of 0xf by
    # lane + 1): every one of the 96 lanes (3 full warps, all executing)
    # leaves itself out, at each of the 6 collectives; no mask names an idle lane.
    assert prof.race_hazards == []
    assert [(e.error, e.count) for e in prof.sync_errors] == [("invalid-mask", 96)] * 6
    assert all(e.detail.endswith("leaves out the executing lane") and "names" not in e.detail
               for e in prof.sync_errors)
