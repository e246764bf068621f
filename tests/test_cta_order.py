"""CTAs that read what other CTAs of the same launch wrote run in linear CTA
order (METRICS.md), also on several worker threads.

tests/cuda/cta_order.cu, block of 32 threads (one warp), grid G. In linear
order CTA 0 goes on, and CTA b >= 1 reads flags[b-1], which CTA b-1 has set,
so every CTA goes on. Per CTA (blocks of cta_order.sm90.ptx `relay`):
entry 6 instructions on 32 lanes; lane 0 alone: the `b == 0` test 6, the
flag test 3 (CTAs b >= 1 only), the stores 7; `ret` 1 on 32 lanes. So
inst_executed = G*(6+6+7+1) + 3*(G-1) = 23G - 3, thread_inst_executed =
G*(192+6+7+32) + 3*(G-1) = 240G - 3; branches: the three `bra`s, 3G - 1,
of which the `tid != 0` one diverges in every warp: G divergent. A CTA that
read its flag before the predecessor's store would skip the 7 stores.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.launcher.compile import ctas_in_order

PTX = Path(__file__).parent / "cuda" / "cta_order.sm90.ptx"
G = 96


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_relay_runs_in_linear_order_on_two_threads(mode):
    m = ptxc.load(PTX)
    for _ in range(3):
        flags, out = np.zeros(G, np.int32), np.zeros(G, np.int32)
        prof = ptxc.launch(m, "relay", G, 32, [flags, out], mode=mode, threads=2)
        assert ctas_in_order(m, m.function("relay"))
        assert prof.inst_executed == 23 * G - 3
        assert prof.thread_inst_executed == 240 * G - 3
        assert (prof.branch, prof.divergent_branch) == (3 * G - 1, G)
        if mode == "full":
            assert flags.tolist() == [1] * G
            assert out.tolist() == list(range(1, G + 1))


def test_reads_of_memory_no_cta_writes_leave_ctas_parallel():
    m = ptxc.load(PTX)
    flags, out = np.ones(G, np.int32), np.zeros(G, np.int32)
    ptxc.launch(m, "relay_readonly", G, 32, [flags, out], mode="full", threads=2)
    assert not ctas_in_order(m, m.function("relay_readonly"))
    assert out.tolist() == list(range(1, G + 1))


def test_one_buffer_for_both_parameters_orders_the_ctas():
    """The same kernel with flags and out in one allocation: the store to
    `out` may now reach the flag read, so the launch runs in order."""
    m = ptxc.load(PTX)
    both = np.ones(G, np.int32)
    ptxc.launch(m, "relay_readonly", G, 32, [both, both], mode="full", threads=2)
    assert ctas_in_order(m, m.function("relay_readonly"))
