"""%clock64 advances with the CTA's executed warp instructions (docs/launch.md,
"Clock"), so a busy-wait for N cycles costs about N instructions.

tests/cuda/clock_spin.cu (nvcc -ptx -arch=sm_90 -O3): every thread reads
clock64() once (``start``), then loops ``while (clock64() - start < cycles)
++n;`` and stores n. Its PTX, counted by hand:

  entry block, 5 instructions: ld.param, ld.param, cvta, mov %clock64 (4th:
      3 executed before it, so start = base + 3), mov %r8 0;
  loop block, 6 instructions: mov, mov %clock64 (2nd), sub, setp, add, @p bra;
  exit block, 8 instructions: mov x3, mad, mul.wide, add, st, ret.

For one warp alone in its CTA (base 0), in loop iteration i (from 0) the
clock read has 5 + 6 i + 1 instructions before it, so clock - start = 3 + 6 i.
The loop leaves at the first i with 3 + 6 i >= cycles and stores that i:
n = ceil((cycles - 3) / 6) (0 when cycles <= 3), and the warp executes
5 + 6 (n + 1) + 8 instructions.

With two warps in a CTA and no barrier, warp 0 runs to its end before warp 1
starts (docs/executor.md): warp 1 sees the clock start at warp 0's count, and
its differences are the same, so both warps store the same n.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc

PTX = Path(__file__).parent / "cuda" / "clock_spin.sm90.ptx"


def expected_iterations(cycles: int) -> int:
    return max(0, -(-(cycles - 3) // 6))


@pytest.mark.parametrize("cycles", [0, 3, 4, 9, 10, 1000, 123457])
def test_busy_wait_costs_cycles_instructions(cycles):
    module = ptxc.load(PTX)
    n = expected_iterations(cycles)
    for mode in ("full", "hybrid"):
        out = np.full(32, -1, np.int32)
        prof = ptxc.launch(module, "clock_spin", 1, 32, [cycles, out], mode=mode)
        assert prof.inst_executed == 5 + 6 * (n + 1) + 8
        if mode == "full":
            assert (out == n).all()


def test_warps_of_a_cta_share_one_clock():
    module = ptxc.load(PTX)
    cycles = 1000
    out = np.full(128, -1, np.int32)
    prof = ptxc.launch(module, "clock_spin", 2, 64, [cycles, out], mode="full")
    n = expected_iterations(cycles)
    assert (out == n).all()
    assert prof.inst_executed == 4 * (5 + 6 * (n + 1) + 8)
