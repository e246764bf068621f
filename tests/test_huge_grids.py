"""Every grid CUDA accepts (CUDA C++ Programming Guide, "Technical
Specifications": gridDim.x < 2**31, gridDim.y and .z <= 65535) is accepted,
also grids of more than 2**31 CTAs (65535 x 65535 was refused: "at most
2**31 per launch"). A hybrid run of a huge grid whose CTAs are one class
(CTA equivalence: nothing depends on %ctaid) runs one CTA at once; a full
run shows its progress and stops on Ctrl-C; CTAs past 2**32 have their own
linear index (layout.CTA_LINEAR_HI)."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

import ptxc
from test_interrupt import interrupt, start, wait_for_progress

HDR = ".version 8.0\n.target sm_90\n.address_size 64\n"
# Threads 16..31 of every CTA store their %tid.x into out[tid]: 6 warp
# instructions for every warp (mov, setp, bra, then ld.param, mul, add, st, ret
# for the lanes that stay: the branch diverges), nothing depends on %ctaid.
UNIFORM = HDR + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .pred %p;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p, %r1, 16;
  @%p bra DONE;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
DONE:
  ret;
}
"""
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("grid", [(65535, 65535, 1), (2**31 - 1, 1, 1), (2**31 - 1, 65535, 65535)])
def test_a_hybrid_run_of_a_huge_grid_of_one_class(grid):
    m = ptxc.parse(UNIFORM, "k.ptx")
    one = ptxc.launch(m, "k", 1, 32, [np.zeros(32, np.int32)], mode="hybrid")
    n = grid[0] * grid[1] * grid[2]
    t0 = time.monotonic()
    prof = ptxc.launch(m, "k", grid, 32, [np.zeros(32, np.int32)], mode="hybrid")
    assert time.monotonic() - t0 < 30                 # one CTA runs; nothing per CTA is kept
    assert (prof.ctas_launched, prof.ctas_run, prof.cta_equivalence) == (n, 1, "1 classes")
    if n < 2**40:                                     # counters are 64-bit: the largest grid overflows them
        assert prof.inst_executed == n * one.inst_executed
        assert prof.thread_inst_executed == n * one.thread_inst_executed


def test_grids_over_the_limits_are_refused():
    m = ptxc.parse(UNIFORM, "k.ptx")
    for grid, axis in (((2**31, 1, 1), "x"), ((1, 65536, 1), "y"), ((1, 1, 65536), "z")):
        with pytest.raises(ptxc.PtxcError, match=f"gridDim.{axis} = .* is over CUDA's limit"):
            ptxc.launch(m, "k", grid, 32, [np.zeros(32, np.int32)], mode="hybrid")


def test_ctas_past_2_to_the_32_have_their_own_index():
    # The CTA loop keeps the linear index's high half (CTA_LINEAR_HI): a
    # callback reads CTA 2**32 + 5 of a (2**31 - 1, 4, 1) grid, not CTA 5.
    import ctypes
    import struct
    from ptxc.backends.llvm import callbacks
    from ptxc.backends.llvm import layout as Lo
    cta = (ctypes.c_char * Lo.CTA_SIZE)()
    struct.pack_into("<I", cta, Lo.CTA_LINEAR, 5)
    struct.pack_into("<I", cta, Lo.CTA_LINEAR_HI, 1)
    assert callbacks.cta_linear(ctypes.addressof(cta)) == 2**32 + 5


def test_a_full_run_shows_progress_and_stops_on_ctrl_c(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(UNIFORM)
    proc = start(["opt", "--pass=count", "--kernel", "k", "--grid", "65535,65535", "--block", "32",
                  "--mode", "full", "--arg", "0=zeros:i32:32", str(path)])
    first = wait_for_progress(proc)
    assert b"ptxc: kernel k: " in first and b"/4294836225 CTAs" in first
    status, seconds, err = interrupt(proc)
    assert status == 130 and seconds < 10, err
    assert "ptxc: interrupted" in err and "Traceback" not in err
